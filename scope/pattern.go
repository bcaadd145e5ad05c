package scope

import (
	"fmt"
	"net/url"
	"strings"
)

// DefaultMaxURLsPerPattern is the default of Rules.MaxURLsPerPattern:
// the URLs a job queues per host and Pattern before the pattern's own
// pages must earn it more room (PatternRoomPerYield). A family of one
// pattern whose pages yield (products, posts, articles, the ?page=N
// pages of a listing) earns room as it is crawled and is crawled whole,
// however long; one whose pages yield nothing (a faceted listing's
// filter combinations, a soft-404 directory, session-ID copies) stops
// after this many URLs. It is the slack a family needs before its first
// pages are fetched and judged: the URLs of one pattern a site queues at
// once (a listing page's links) before any of them yields.
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

// PatternRoomPerYield is the room a pattern earns per page of it that
// yielded (the crawler's judgement, as for shape runs: the page queued a
// new URL of its host outside its pattern, or its text is not the page's
// that linked it, and it is no duplicate): room for this many more URLs.
// So a family is crawled whole if a quarter or more of its pages yield,
// and a trap whose pages yield nothing costs PatternLimit URLs.
const PatternRoomPerYield = 4

// PatternLimit is the URLs one job may queue per host and Pattern before
// the pattern's pages must earn more room (Rules.MaxURLsPerPattern after
// its default); 0 means no limit.
func (r Rules) PatternLimit() int {
	return max(limit(r.MaxURLsPerPattern, DefaultMaxURLsPerPattern), 0)
}

// PatternRejection is the Rejection for u, whose pattern has used its
// room of room URLs: base to start with and PatternRoomPerYield for each
// of its pages that yielded.
func PatternRejection(u *url.URL, room int64, base int) error {
	return &Rejection{Reason: ReasonPatternBudget, URL: u.String(),
		Detail: fmt.Sprintf("pattern %q has used its room of %d URLs (%d, and %d per page of it that yielded)",
			Pattern(u), room, base, PatternRoomPerYield)}
}
