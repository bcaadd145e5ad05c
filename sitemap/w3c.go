package sitemap

import "time"

// w3cLayouts are the W3C Datetime forms (https://www.w3.org/TR/NOTE-datetime,
// which sitemaps.org names for <lastmod>), most specific first: year;
// year and month; date; date with hours and minutes; with seconds (a
// decimal fraction of a second is accepted by time.Parse after the
// seconds). TZD is "Z" or +hh:mm / -hh:mm. Forms with a time but no TZD
// are not W3C Datetime but are common; they are read as UTC.
var w3cLayouts = []string{
	"2006",
	"2006-01",
	"2006-01-02",
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04:05Z07:00",
	"2006-01-02T15:04",
	"2006-01-02T15:04:05",
}

// parseW3C parses a W3C Datetime and returns it in UTC.
func parseW3C(s string) (time.Time, bool) {
	if len(s) < 4 || len(s) > 40 {
		return time.Time{}, false
	}
	for _, l := range w3cLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}
