// Package scope decides whether a candidate URL belongs to a crawl: its
// scheme, its domain, its depth from the seed, and the trap limits on URL
// length, path segments, repeated segments, query parameters and shape
// runs. It also names what the caller counts and strips for traps: a
// URL's Pattern (for a per-host budget) and its session IDs
// (StripSession).
//
// Rules is a plain value: its methods do not modify it and are safe for
// concurrent use. They expect URLs in canonical form (urlnorm.Normalize).
package scope

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/trawl-crawler/trawl/urlnorm"
)

// Default trap limits, used by WithDefaults and Check for zero fields.
const (
	DefaultMaxURLLength       = 2048
	DefaultMaxPathSegments    = 32
	DefaultMaxRepeatedSegment = 3
	DefaultMaxQueryParams     = 32
)

// Rules says which URLs a crawl may visit. The zero value admits every
// http(s) URL at any depth within the default trap limits.
type Rules struct {
	// Domains limits the crawl to these hosts and their subdomains
	// ("example.com" admits "example.com" and "www.example.com", not
	// "badexample.com"). Compared case-insensitively, in IDNA (Punycode)
	// form; an IPv6 address is written in brackets. If empty, every domain
	// is in scope.
	Domains []string
	// MaxDepth is the largest crawl depth from the seed (seeds have depth
	// 0). If zero, depth is unlimited.
	MaxDepth int
	// MaxURLLength is the longest URL, in bytes of its string form. If
	// zero, DefaultMaxURLLength is used; if negative, length is unlimited.
	MaxURLLength int
	// MaxPathSegments is the most '/'-separated path segments ("/a/b/"
	// has 3). If zero, DefaultMaxPathSegments is used; if negative, the
	// count is unlimited.
	MaxPathSegments int
	// MaxRepeatedSegment is how often one non-empty path segment may occur
	// in a path; more is a trap (/a/b/a/b/a/b/a/). If zero,
	// DefaultMaxRepeatedSegment is used; if negative, repeats are not
	// checked.
	MaxRepeatedSegment int
	// MaxQueryParams is the most non-empty '&'-separated query parameters.
	// If zero, DefaultMaxQueryParams is used; if negative, the count is
	// unlimited.
	MaxQueryParams int
	// MaxShapeRun is the most pages of one Shape in a row that yield
	// nothing new before a URL of that shape (see NextShapeRun and
	// CheckShapeRun). If zero, DefaultMaxShapeRun is used; if negative,
	// runs are not checked.
	MaxShapeRun int
	// MaxURLsPerPattern is the URLs a job queues per host and Pattern
	// (query values and names dropped, digits folded) before the
	// pattern's pages must earn more room, PatternRoomPerYield per page
	// that yielded something new: it stops faceted listings, soft-404
	// directories and other families that a site generates without end
	// and whose pages yield nothing. The node counts them in a fixed-size
	// sketch that may overcount, never undercount. If zero,
	// DefaultMaxURLsPerPattern is used; if negative, there is no budget.
	MaxURLsPerPattern int
	// SessionParams are the query and path parameter names StripSession
	// removes before the URL-seen check. If nil, DefaultSessionParams is
	// used; if empty but not nil, nothing is stripped.
	SessionParams []string
}

// WithDefaults returns a copy of r with zero trap limits set to their
// defaults and Domains in canonical form (lower case, IDNA, no leading or
// trailing dot). Check applies the same defaults itself.
func (r Rules) WithDefaults() Rules {
	if r.MaxURLLength == 0 {
		r.MaxURLLength = DefaultMaxURLLength
	}
	if r.MaxPathSegments == 0 {
		r.MaxPathSegments = DefaultMaxPathSegments
	}
	if r.MaxRepeatedSegment == 0 {
		r.MaxRepeatedSegment = DefaultMaxRepeatedSegment
	}
	if r.MaxQueryParams == 0 {
		r.MaxQueryParams = DefaultMaxQueryParams
	}
	if r.MaxShapeRun == 0 {
		r.MaxShapeRun = DefaultMaxShapeRun
	}
	if r.MaxURLsPerPattern == 0 {
		r.MaxURLsPerPattern = DefaultMaxURLsPerPattern
	}
	if r.SessionParams == nil {
		r.SessionParams = DefaultSessionParams
	}
	if r.Domains != nil {
		ds := make([]string, len(r.Domains))
		for i, d := range r.Domains {
			ds[i] = canonicalDomain(d)
		}
		r.Domains = ds
	}
	return r
}

// Validate reports every bad field: a negative MaxDepth, a domain that is
// empty or not a valid host name, or an empty session parameter name.
func (r Rules) Validate() error {
	var errs []error
	if r.MaxDepth < 0 {
		errs = append(errs, fmt.Errorf("scope: MaxDepth %d is negative", r.MaxDepth))
	}
	for i, d := range r.Domains {
		c := canonicalDomain(d)
		if c == "" || strings.ContainsAny(c, "/:?#@[] \t") {
			errs = append(errs, fmt.Errorf("scope: Domains[%d] %q is not a host name", i, d))
		}
	}
	for i, p := range r.SessionParams {
		if p == "" || strings.ContainsAny(p, "=&;/?# ") {
			errs = append(errs, fmt.Errorf("scope: SessionParams[%d] %q is not a parameter name", i, p))
		}
	}
	return errors.Join(errs...)
}

// Reason names why a URL is out of scope.
type Reason string

// The reasons a URL is rejected.
const (
	ReasonScheme          Reason = "scheme"
	ReasonDomain          Reason = "domain"
	ReasonDepth           Reason = "depth"
	ReasonURLLength       Reason = "url-length"
	ReasonPathSegments    Reason = "path-segments"
	ReasonRepeatedSegment Reason = "repeated-segment"
	ReasonQueryParams     Reason = "query-params"
	ReasonShapeRun        Reason = "shape-run"
	ReasonPatternBudget   Reason = "pattern-budget"
)

// Rejection is the error Check returns for a URL out of scope.
type Rejection struct {
	Reason Reason
	URL    string
	Detail string
}

// Error returns a message like `scope: reject "http://x.test/": domain:
// host "x.test" is not under an allowed domain`.
func (e *Rejection) Error() string {
	return fmt.Sprintf("scope: reject %q: %s: %s", e.URL, e.Reason, e.Detail)
}

// Check returns nil if u, found at the given crawl depth, is in scope, and
// a *Rejection otherwise. The checks run in a fixed order (scheme, URL
// length, domain, depth, path segments, repeated segment, query
// parameters) and the first failure is reported.
func (r Rules) Check(u *url.URL, depth int) error {
	s := u.String()
	reject := func(reason Reason, format string, args ...any) error {
		return &Rejection{Reason: reason, URL: s, Detail: fmt.Sprintf(format, args...)}
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return reject(ReasonScheme, "scheme %q is not http or https", u.Scheme)
	}
	if max := limit(r.MaxURLLength, DefaultMaxURLLength); max > 0 && len(s) > max {
		return reject(ReasonURLLength, "length %d is over %d", len(s), max)
	}
	if len(r.Domains) > 0 {
		host := strings.TrimSuffix(urlnorm.HostKey(u), ".")
		if !r.inDomains(host) {
			return reject(ReasonDomain, "host %q is not under an allowed domain", host)
		}
	}
	if r.MaxDepth > 0 && depth > r.MaxDepth {
		return reject(ReasonDepth, "depth %d is over %d", depth, r.MaxDepth)
	}
	path := u.EscapedPath()
	if max := limit(r.MaxPathSegments, DefaultMaxPathSegments); max > 0 {
		if n := strings.Count(path, "/"); n > max {
			return reject(ReasonPathSegments, "%d path segments is over %d", n, max)
		}
	}
	if max := limit(r.MaxRepeatedSegment, DefaultMaxRepeatedSegment); max > 0 {
		if seg, n := mostRepeated(path); n > max {
			return reject(ReasonRepeatedSegment, "segment %q occurs %d times, over %d", seg, n, max)
		}
	}
	if max := limit(r.MaxQueryParams, DefaultMaxQueryParams); max > 0 {
		if n := countParams(u.RawQuery); n > max {
			return reject(ReasonQueryParams, "%d query parameters is over %d", n, max)
		}
	}
	return nil
}

// limit returns v, or def if v is zero; a negative result means no limit.
func limit(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

func (r Rules) inDomains(host string) bool {
	for _, d := range r.Domains {
		d = canonicalDomain(d)
		if d == "" {
			continue
		}
		if host == d || (strings.HasSuffix(host, d) && host[len(host)-len(d)-1] == '.') {
			return true
		}
	}
	return false
}

// canonicalDomain puts d in the form urlnorm gives hosts (lower case,
// IDNA) without dots at its ends. ASCII input, the common case, only needs
// lowering.
func canonicalDomain(d string) string {
	d = strings.Trim(strings.TrimSpace(d), ".")
	for i := 0; i < len(d); i++ {
		if d[i] >= 0x80 {
			return strings.Trim(urlnorm.HostKey(&url.URL{Host: d}), ".")
		}
	}
	return strings.ToLower(d)
}

// mostRepeated returns the non-empty path segment that occurs most often
// in path, and its count (the first such segment on a tie).
func mostRepeated(path string) (string, int) {
	counts := map[string]int{}
	best, bestN := "", 0
	for seg := range strings.SplitSeq(path, "/") {
		if seg == "" {
			continue
		}
		counts[seg]++
		if n := counts[seg]; n > bestN {
			best, bestN = seg, n
		}
	}
	return best, bestN
}

func countParams(q string) int {
	n := 0
	for p := range strings.SplitSeq(q, "&") {
		if p != "" {
			n++
		}
	}
	return n
}

// LengthOK reports whether a URL of string form s is within r's
// MaxURLLength: the one trap rule that also bounds what a page embeds
// (node's requisites, which skip the others).
func (r Rules) LengthOK(s string) bool {
	max := limit(r.MaxURLLength, DefaultMaxURLLength)
	return max <= 0 || len(s) <= max
}
