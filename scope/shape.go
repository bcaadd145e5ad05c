package scope

import (
	"fmt"
	"net/url"
)

// DefaultMaxShapeRun is the default of Rules.MaxShapeRun.
const DefaultMaxShapeRun = 3

// Shape is a URL with every run of decimal digits in its host, path and
// query replaced by '#': /calendar/2025/06 and /calendar/2031/11 share
// the shape /calendar/#/#. Pages generated without end (calendars,
// counters, session paging) link to URLs of their own shape.
func Shape(u *url.URL) string {
	s := u.Host + u.EscapedPath()
	if u.RawQuery != "" {
		s += "?" + u.RawQuery
	}
	b := make([]byte, 0, len(s))
	inDigits := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= '0' && c <= '9' {
			if !inDigits {
				b = append(b, '#')
			}
			inDigits = true
			continue
		}
		inDigits = false
		b = append(b, c)
	}
	return string(b)
}

// ShapeRun is the run length of a link from a page (whose own run was
// fromRun) to target: one more than fromRun if target has the page's
// shape, 0 otherwise. A seed's run is 0.
func ShapeRun(from *url.URL, fromRun int, target *url.URL) int {
	if from != nil && Shape(from) == Shape(target) {
		return fromRun + 1
	}
	return 0
}

// CheckShapeRun rejects a URL reached by more than MaxShapeRun
// consecutive links between URLs of one shape: the next month of a
// calendar's next month's next month. A finite family of pages that link
// to each other (page1 … page40) is reached in few such hops from the
// pages that list it; an endless one is cut after MaxShapeRun steps in
// each direction.
func (r Rules) CheckShapeRun(u *url.URL, run int) error {
	if max := limit(r.MaxShapeRun, DefaultMaxShapeRun); max > 0 && run > max {
		return &Rejection{Reason: ReasonShapeRun, URL: u.String(),
			Detail: fmt.Sprintf("%d consecutive links within shape %q, over %d", run, Shape(u), max)}
	}
	return nil
}
