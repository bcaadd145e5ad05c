package scope

import (
	"bytes"
	"fmt"
	"net/url"
)

// DefaultMaxShapeRun is the default of Rules.MaxShapeRun.
const DefaultMaxShapeRun = 3

// Shape is a URL with every run of decimal digits in its host, path and
// query replaced by '#': /calendar/2025/06 and /calendar/2031/11 share
// the shape /calendar/#/#, and so do /blog/page/2/ and /blog/page/30/.
// Pages generated without end (calendars, counters, empty listings)
// link to URLs of their own shape; so do the pages of a paginated
// listing, which end.
func Shape(u *url.URL) string {
	var buf [256]byte
	return string(appendShape(buf[:0], u))
}

// SameShape reports whether a and b have one Shape, without building
// either (a page's links are each compared with it).
func SameShape(a, b *url.URL) bool {
	var ba, bb [256]byte
	return bytes.Equal(appendShape(ba[:0], a), appendShape(bb[:0], b))
}

// appendShape appends u's Shape to dst.
func appendShape(dst []byte, u *url.URL) []byte {
	inDigits := false
	add := func(s string) {
		for i := 0; i < len(s); i++ {
			c := s[i]
			if c >= '0' && c <= '9' {
				if !inDigits {
					dst = append(dst, '#')
				}
				inDigits = true
				continue
			}
			inDigits = false
			dst = append(dst, c)
		}
	}
	add(u.Host)
	add(u.EscapedPath())
	if u.RawQuery != "" {
		add("?")
		add(u.RawQuery)
	}
	return dst
}

// A shape run is a chain of links between pages of one Shape: the months
// of a calendar, the pages of a blog's listing or of a forum thread. What
// tells an endless run from a finite one is what its pages yield: a
// listing page leads to posts, a thread page brings posts of its own, while
// a calendar's next month is the month before with another date, leading
// only to the month after. The run value a queued URL carries
// (frontier.Item.ShapeRun) counts the pages of its run that yielded
// nothing new, in a row up to the page that linked it:
//
//   - 0: the URL is not in a run: a seed, a sitemap's URL, or a link from
//     a page of another shape;
//   - k ≥ 1: the URL was linked from a page of its own shape, and the
//     k-1 pages of the run before it (ending with that page) yielded
//     nothing new.
//
// The page a run starts at (value 0) is new to its run: its same-shape
// links get 1. Whether a page in a run (value ≥ 1) yielded something new
// is the crawler's judgement once it has fetched it (new links outside
// the run, or text unlike the page before it); NextShapeRun carries it on.
// CheckShapeRun cuts a run after MaxShapeRun barren pages in a row: an
// endless run of barren pages costs at most MaxShapeRun+1 fetches in
// each direction it is walked, past the page it was entered at, and a
// finite one that yields is walked to its end (depth and the per-host
// budget still bound it). A run value stored by an older trawl, which
// counted every same-shape link, reads as that many barren pages: never
// laxer.

// NextShapeRun is the run value of a link to a URL of the same shape as
// the page it is on, whose own run value was fromRun: 1 if the page
// started its run (fromRun 0) or yielded something new, else fromRun+1.
// A link to a URL of another shape has run value 0.
func NextShapeRun(fromRun int, yielded bool) int {
	if fromRun <= 0 || yielded {
		return 1
	}
	return fromRun + 1
}

// ShapeRun is the run value of a link from a page (URL from, run value
// fromRun, yielded as NextShapeRun takes it) to target: 0 if from is nil
// (a seed) or target's shape differs from the page's.
func ShapeRun(from *url.URL, fromRun int, target *url.URL, yielded bool) int {
	if from != nil && SameShape(from, target) {
		return NextShapeRun(fromRun, yielded)
	}
	return 0
}

// Barren is the number of pages in a row that yielded nothing new before
// a URL of run value run: run-1, or 0 for a URL not in a run.
func Barren(run int) int { return max(run-1, 0) }

// CheckShapeRun rejects a URL of run value run reached through more than
// MaxShapeRun pages of its shape in a row that yielded nothing new: the
// next month of a calendar's next month's next month, the empty page after
// an empty listing page. See NextShapeRun.
func (r Rules) CheckShapeRun(u *url.URL, run int) error {
	if max := limit(r.MaxShapeRun, DefaultMaxShapeRun); max > 0 && Barren(run) > max {
		return &Rejection{Reason: ReasonShapeRun, URL: u.String(),
			Detail: fmt.Sprintf("%d pages of shape %q in a row yielded nothing new, over %d", Barren(run), Shape(u), max)}
	}
	return nil
}
