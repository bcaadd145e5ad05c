package scope

import (
	"fmt"
	"net/url"
	"strings"
)

// DefaultMaxURLsPerPattern is the default of Rules.MaxURLsPerPattern.
//
// It is chosen against the synthetic web (internal/testweb), whose
// largest legitimate family of one pattern is a big host's pages of one
// template (at most 40 with the default 40 pages) and a shop's products
// (12): 64 leaves that family half as much room again, while a faceted
// listing (900 filter combinations on the web), a soft-404 directory or a
// session-ID copy of a site stops after 64 URLs. Crawls of large sites
// with long families (/article/NNNN) should raise it.
const DefaultMaxURLsPerPattern = 64

// Pattern returns the URL pattern a per-host budget counts u under: its
// host, then its path with every path parameter (";jsessionid=...")
// dropped and every run of decimal digits replaced by '#', then "?" if it
// has a query. Query names are dropped with the values: a faceted
// listing that adds filters one at a time makes 2^k sets of names, and
// counting each set apart would multiply the budget by as much.
//
//	http://shop.test/list?color=red&size=m   → shop.test/list?
//	http://a.test/page12.html;jsessionid=9F  → a.test/page#.html
//	http://a.test/calendar/2025/06           → a.test/calendar/#/#
func Pattern(u *url.URL) string {
	p := u.EscapedPath()
	var b strings.Builder
	b.Grow(len(u.Host) + len(p) + 1)
	b.WriteString(u.Host)
	inDigits, inParam := false, false
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '/':
			inParam = false
		case inParam:
			continue
		case c == ';':
			inParam = true
			continue
		}
		if c >= '0' && c <= '9' {
			if !inDigits {
				b.WriteByte('#')
			}
			inDigits = true
			continue
		}
		inDigits = false
		b.WriteByte(c)
	}
	if u.RawQuery != "" || u.ForceQuery {
		b.WriteByte('?')
	}
	return b.String()
}

// PatternLimit is the most URLs one job may queue per host and Pattern
// (Rules.MaxURLsPerPattern after its default); 0 means no limit.
func (r Rules) PatternLimit() int {
	return max(limit(r.MaxURLsPerPattern, DefaultMaxURLsPerPattern), 0)
}

// PatternRejection is the Rejection for u, whose pattern is over its
// budget of max URLs.
func PatternRejection(u *url.URL, max int) error {
	return &Rejection{Reason: ReasonPatternBudget, URL: u.String(),
		Detail: fmt.Sprintf("more than %d URLs of pattern %q", max, Pattern(u))}
}
