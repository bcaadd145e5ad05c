package sitemap

import (
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Kind is the format of a sitemap file.
type Kind uint8

// The kinds of sitemap file.
const (
	KindUnknown Kind = iota // nothing was read that says
	KindURLSet              // <urlset>: pages
	KindIndex               // <sitemapindex>: other sitemaps
	KindText                // plain text, one page URL a line
)

var kindNames = [...]string{"unknown", "urlset", "sitemapindex", "text"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// MarshalText writes the kind's name, so JSON shows "urlset".
func (k Kind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// ChangeFreq is a <changefreq> hint: how often the site says a page
// changes. sitemaps.org calls it a hint, not a command; the zero value
// means none was given (or the value was not one of the seven).
type ChangeFreq uint8

// The seven values sitemaps.org defines, in increasing interval.
const (
	FreqNone ChangeFreq = iota
	FreqAlways
	FreqHourly
	FreqDaily
	FreqWeekly
	FreqMonthly
	FreqYearly
	FreqNever
)

var freqNames = [...]string{"", "always", "hourly", "daily", "weekly", "monthly", "yearly", "never"}

func (f ChangeFreq) String() string {
	if int(f) < len(freqNames) {
		return freqNames[f]
	}
	return "ChangeFreq(" + strconv.Itoa(int(f)) + ")"
}

// MarshalText writes the value as sitemaps.org spells it ("" for FreqNone).
func (f ChangeFreq) MarshalText() ([]byte, error) { return []byte(f.String()), nil }

// Interval is the period the hint names: an hour for FreqHourly, 24 hours,
// 7 days, 30 days and 365 days for the next ones. FreqAlways, FreqNever
// and FreqNone have no period and return 0.
func (f ChangeFreq) Interval() time.Duration {
	const day = 24 * time.Hour
	switch f {
	case FreqHourly:
		return time.Hour
	case FreqDaily:
		return day
	case FreqWeekly:
		return 7 * day
	case FreqMonthly:
		return 30 * day
	case FreqYearly:
		return 365 * day
	}
	return 0
}

// parseFreq maps a <changefreq> value (surrounding space and ASCII case
// ignored) to its ChangeFreq; anything else is FreqNone.
func parseFreq(s string) ChangeFreq {
	for i, n := range freqNames[1:] {
		if len(s) == len(n) && asciiEqualFold(s, n) {
			return ChangeFreq(i + 1)
		}
	}
	return FreqNone
}

func asciiEqualFold(s, lower string) bool {
	for i := range len(s) {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// DefaultPriority is the <priority> of a page that gives none
// (sitemaps.org: "The default priority of a page is 0.5").
const DefaultPriority = 0.5

// Entry is one URL a sitemap lists: a page in a urlset or text file, a
// child sitemap in an index.
type Entry struct {
	// Loc is the listed URL, parsed as an absolute http or https URL and
	// normalised (urlnorm.Normalize), as a string.
	Loc string `json:"loc"`
	// LastMod is the <lastmod> time in UTC; zero if absent or not a W3C
	// Datetime (see parseW3C).
	LastMod time.Time `json:"lastmod,omitzero"`
	// ChangeFreq is the <changefreq> hint; FreqNone in an index, a text
	// file, or if absent or unknown.
	ChangeFreq ChangeFreq `json:"changefreq,omitzero"`
	// Priority is the <priority> hint in 0.0..1.0. DefaultPriority if
	// absent, not a number or out of range (such a value is ignored, not
	// clamped: a generator that writes 7 meant no scale we know); zero in
	// an index.
	Priority float64 `json:"priority,omitzero"`
}

// Limits of the sitemaps.org protocol (https://www.sitemaps.org/protocol.html,
// "Sitemap file location" and the <loc> tag): "no more than 50,000 URLs
// and must be no larger than 50MB (52,428,800 bytes)" uncompressed, and a
// URL "must be less than 2,048 characters".
const (
	DefaultMaxURLs      = 50_000
	DefaultMaxBytes     = 52_428_800
	DefaultMaxLocLength = 2048
)

// Options bound what Read does with one file. The zero value of every
// field means its sitemaps.org default.
type Options struct {
	// MaxURLs is how many entries (<url>, <sitemap> or non-empty text
	// lines, skipped ones included) a file may hold; the next one stops
	// Read with a *LimitError. Zero means DefaultMaxURLs.
	MaxURLs int
	// MaxBytes bounds the file's uncompressed size; a byte past it stops
	// Read with a *LimitError. Zero means DefaultMaxBytes.
	MaxBytes int64
	// MaxLocLength is the longest <loc> (in bytes, as written, space
	// trimmed) kept; a longer one is skipped. Zero means
	// DefaultMaxLocLength.
	MaxLocLength int
}

func (o Options) withDefaults() Options {
	if o.MaxURLs == 0 {
		o.MaxURLs = DefaultMaxURLs
	}
	if o.MaxBytes == 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.MaxLocLength == 0 {
		o.MaxLocLength = DefaultMaxLocLength
	}
	return o
}

// Validate reports every bad field of o by name.
func (o Options) Validate() error {
	var errs []error
	if o.MaxURLs < 0 {
		errs = append(errs, fmt.Errorf("sitemap: options: MaxURLs: %d < 0", o.MaxURLs))
	}
	if o.MaxBytes < 0 {
		errs = append(errs, fmt.Errorf("sitemap: options: MaxBytes: %d < 0", o.MaxBytes))
	}
	if o.MaxLocLength < 0 {
		errs = append(errs, fmt.Errorf("sitemap: options: MaxLocLength: %d < 0", o.MaxLocLength))
	}
	return errors.Join(errs...)
}

// LimitError reports a file that went past a limit: Read stopped there,
// after handing over every entry before it.
type LimitError struct {
	Limit string // "MaxURLs", "MaxBytes" or "token" (one XML token over maxToken bytes)
	Value int64  // the limit's value
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("sitemap: over the %s limit of %d", e.Limit, e.Value)
}

// SyntaxError reports a file that is not a sitemap: malformed XML, a root
// element other than <urlset> or <sitemapindex>, or bytes that are not
// UTF-8 text. Line (1-based, 0 if unknown) and Offset (in uncompressed
// bytes) say where Read stopped.
type SyntaxError struct {
	Line   int
	Offset int64
	Err    error
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("sitemap: malformed at line %d (byte %d): %v", e.Line, e.Offset, e.Err)
}

func (e *SyntaxError) Unwrap() error { return e.Err }

// Summary is what Read found besides the entries.
type Summary struct {
	Kind    Kind  `json:"kind"`
	Entries int   `json:"entries"` // entries handed to the callback
	Skipped int   `json:"skipped"` // listed URLs dropped: no <loc>, too long, not an absolute http(s) URL
	Bytes   int64 `json:"bytes"`   // uncompressed bytes read
	Gzip    bool  `json:"gzip"`    // the input was gzip-compressed
}

// Sitemap is a whole file as Parse collects it.
type Sitemap struct {
	Summary
	Entries []Entry
}
