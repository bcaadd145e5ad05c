package robots

import (
	"net/url"
	"time"
)

// MaxRedirects is how many consecutive redirects are followed when
// fetching /robots.txt (RFC 9309 2.3.1.2: "at least five"). A longer chain
// means the file is unavailable, as the RFC allows ("crawlers MAY assume
// that the robots.txt file is unavailable"), and unavailable is defined
// by 2.3.1.3: no restrictions. A redirect that cannot be followed (no
// Location, or not http or https) is treated the same way.
const MaxRedirects = 5

// FetchResult is the outcome of fetching one origin's /robots.txt, after the
// crawler has followed up to MaxRedirects redirects.
type FetchResult struct {
	Status int       // final HTTP status; ignored when Err is set
	Body   []byte    // response body; only read for a 2xx status
	Err    error     // network or protocol error; non-nil means unreachable
	At     time.Time // when the fetch finished
}

// kind is what a Policy does.
type kind int

const (
	kindRules       kind = iota // a parsed robots.txt decides
	kindAllowAll                // no restrictions (4xx, or long outage without a copy)
	kindDisallowAll             // robots.txt unreachable: nothing may be fetched
)

// Policy is what one origin's robots.txt allows now. It is immutable and
// safe for concurrent use. A nil *Policy allows everything.
type Policy struct {
	kind   kind
	robots *Robots
	status int
	at     time.Time
}

// FromResult applies RFC 9309 2.3.1 to a fetch: a 2xx status parses the
// body; a 4xx status other than 429 means there are no restrictions
// ("unavailable" in the RFC), and so does a 3xx, which reaches FromResult
// only when the redirect chain was too long or could not be followed
// (2.3.1.2, see MaxRedirects); 429, 5xx, any other status and a network
// error mean the file is unreachable and everything is disallowed.
func FromResult(r FetchResult) *Policy {
	if r.Err != nil {
		return &Policy{kind: kindDisallowAll, at: r.At}
	}
	return policyFor(r.Status, r.Body, r.At)
}

// policyFor is FromResult for an answer that came (no network error).
func policyFor(status int, body []byte, at time.Time) *Policy {
	p := &Policy{status: status, at: at}
	switch {
	case status >= 200 && status <= 299:
		p.kind, p.robots = kindRules, Parse(body)
	case GoodStatus(status):
		p.kind = kindAllowAll
	default:
		p.kind = kindDisallowAll
	}
	return p
}

// AllowAll is the policy used when no robots.txt applies: no
// restrictions, as of at, with no HTTP status.
func AllowAll(at time.Time) *Policy { return &Policy{kind: kindAllowAll, at: at} }

// GoodStatus reports whether an answer with status settles the policy
// (RFC 9309 2.3.1.1-2.3.1.3): 2xx is parsed, 3xx (reaching a cache only
// at the end of a redirect chain that cannot be followed) and 4xx other
// than 429 mean no restrictions.
func GoodStatus(status int) bool {
	return status >= 200 && status <= 499 && status != 429
}

// Allowed reports whether agent (a product token) may fetch u. Only u's path
// and query are looked at; the caller picks the policy of u's origin.
// /robots.txt is always allowed, even while the origin is unreachable.
func (p *Policy) Allowed(agent string, u *url.URL) bool {
	if p == nil {
		return true
	}
	switch p.kind {
	case kindAllowAll:
		return true
	case kindDisallowAll:
		return normalizePath(pathQueryOf(u)) == "/robots.txt"
	}
	return p.robots.AllowedURL(agent, u)
}

// CrawlDelay returns the Crawl-delay that applies to agent, if any.
func (p *Policy) CrawlDelay(agent string) (time.Duration, bool) {
	if p == nil || p.kind != kindRules {
		return 0, false
	}
	return p.robots.CrawlDelay(agent)
}

// Unavailable reports whether the policy disallows everything because
// robots.txt could not be fetched (RFC 9309 2.3.1.4 calls this
// "unreachable": 429, 5xx, network errors). The crawler must retry later.
func (p *Policy) Unavailable() bool {
	return p != nil && p.kind == kindDisallowAll
}

// Sitemaps returns the Sitemap URLs listed in the robots.txt, if any.
func (p *Policy) Sitemaps() []string {
	if p == nil || p.kind != kindRules {
		return nil
	}
	return p.robots.Sitemaps()
}

// Robots returns the parsed file behind the policy, or nil when the policy
// did not come from a 2xx response. Use it for Warnings.
func (p *Policy) Robots() *Robots {
	if p == nil {
		return nil
	}
	return p.robots
}

// Status returns the HTTP status of the fetch the policy came from; 0 when
// the fetch failed or the policy was made up (a keeper of robots.txt, as
// package robotscache, makes one up).
func (p *Policy) Status() int {
	if p == nil {
		return 0
	}
	return p.status
}

// FetchedAt returns the FetchResult.At of the fetch the policy came from.
func (p *Policy) FetchedAt() time.Time {
	if p == nil {
		return time.Time{}
	}
	return p.at
}
