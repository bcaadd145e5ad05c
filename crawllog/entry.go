// Package crawllog writes and reads the crawl log: one JSON line per fetch
// attempt, and per URL dropped without a fetch, in DATA/logs/crawl.log,
// rotated by size into crawl-YYYYMMDDTHHMMSSZ-NNNN.log beside it.
//
// A Writer is safe for concurrent use; it buffers lines in memory and only
// ever writes whole lines, so a reader (Scan, Follow) sees at most one
// partial line, the last one of crawl.log, while a crawl runs. Entries,
// Filters and the reading functions hold no shared state.
package crawllog

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Entry is one line of the crawl log.
type Entry struct {
	Time     time.Time     `json:"time"` // when the attempt ended or the drop was decided (UTC, RFC 3339 with milliseconds)
	Job      uint32        `json:"job"`
	URL      string        `json:"url"`
	Robots   bool          `json:"robots,omitempty"` // a robots.txt fetch
	Status   int           `json:"status,omitempty"` // HTTP status; 0 if no response
	Error    string        `json:"error,omitempty"`  // error class (fetch.Class, or "body"/"too-large"/"body-timeout"/"decode") when the fetch failed, was cut or could not be decoded
	Bytes    int64         `json:"bytes"`            // body bytes as transferred
	MIME     string        `json:"mime,omitempty"`   // media type without parameters
	Duration time.Duration `json:"duration_ms"`      // encoded as milliseconds with 3 decimals, e.g. 12.345
	Depth    int           `json:"depth"`
	Via      string        `json:"via,omitempty"`      // the URL whose link or redirect led here; "" for seeds
	Digest   string        `json:"digest,omitempty"`   // payload digest as in WARC-Payload-Digest, "sha256:BASE32"
	Dedup    string        `json:"dedup,omitempty"`    // "exact" or "near"
	Original string        `json:"original,omitempty"` // for exact/near: the original's URL
	WARC     string        `json:"warc,omitempty"`     // WARC file name (base name)
	Offset   int64         `json:"offset"`             // record offset in WARC; written only when WARC != "" (custom encoding)
	Dropped  string        `json:"dropped,omitempty"`  // reason a URL was dropped without a fetch: "robots", "scope", "trap", "budget", "excluded", "unreachable", "robots-unavailable"
	Detail   string        `json:"detail,omitempty"`   // a short human reason (e.g. the trap rule), optional
	// Usage is what the capture's site says of the use of its content
	// (usagepref.Summary), as "category=allow|deny" pairs of the
	// categories it states, comma-separated, e.g.
	// "ai-train=deny,search=allow"; "" when it states nothing.
	Usage string `json:"usage,omitempty"`
	// Denied is the crawl's purpose (job.Spec.Purpose) when the site
	// denies it for this capture; such a capture is not archived (no
	// WARC) when the crawl skips them.
	Denied string `json:"denied,omitempty"`
}

// Dedup verdicts (Entry.Dedup). "" means the payload was archived as new,
// or was not checked.
const (
	DedupExact = "exact" // the payload's digest matched an archived original: a revisit record
	DedupNear  = "near"  // its SimHash is near an archived page's
	// DedupNotModified: a 304 to a conditional recrawl, archived as a
	// server-not-modified revisit of the capture named in Original (if known)
	DedupNotModified = "not-modified"
)

// Drop reasons (Entry.Dropped): why a URL was never fetched.
const (
	DropRobots            = "robots"             // robots.txt disallows it
	DropScope             = "scope"              // outside the job's domains or depth
	DropTrap              = "trap"               // a crawler-trap rule (Detail names it)
	DropBudget            = "budget"             // the job's or host's budget was spent
	DropExcluded          = "excluded"           // an operator's exclusion pattern
	DropUnreachable       = "unreachable"        // its host was given up (DNS, refused connections)
	DropRobotsUnavailable = "robots-unavailable" // its host's robots.txt stayed unavailable
	DropWait              = "wait"               // its host asked the crawl to wait past its --max-wait (Detail: why)
)

// DropReasons lists every drop reason, in the order the docs give them.
var DropReasons = []string{DropRobots, DropScope, DropTrap, DropBudget, DropExcluded, DropUnreachable, DropRobotsUnavailable, DropWait}

// Error classes of a fetch that got a response but was cut (Entry.Error),
// beside the fetch.Class values of failed fetches.
const (
	ErrTooLarge    = "too-large"    // the body passed the size cap
	ErrBodyTimeout = "body-timeout" // the body took longer than allowed
	ErrBodyCut     = "body"         // the connection ended or failed before the body did
	// ErrDecode: the Content-Encoding could not be undone (corrupt, or a
	// coding never asked for): archived as sent, its links not read
	ErrDecode = "decode"
)

// MediaType returns a Content-Type header's media type, without
// parameters, lower case: "text/html; charset=utf-8" gives "text/html".
func MediaType(contentType string) string {
	if i := strings.IndexByte(contentType, ';'); i >= 0 {
		contentType = contentType[:i]
	}
	return strings.ToLower(strings.TrimSpace(contentType))
}

// The line format is part of the on-disk format, read by scripts as well
// as by Parse: fields may be added (readers ignore those they do not
// know), never renamed, retyped or given another meaning.
//
//	{"time":"2026-12-02T03:04:05.678Z","job":3,"url":"http://a.test/x","status":200,
//	 "bytes":5120,"mime":"text/html","duration_ms":12.346,"depth":2,"via":"http://a.test/",
//	 "digest":"sha256:...","warc":"trawl-1.warc.gz","offset":0}\n
//
// (one line in the file; wrapped here).

// AppendJSON appends e to dst as one line of JSON ending in '\n' and
// returns the extended slice. The fields come in Entry's order. Time is
// written in UTC with milliseconds (truncated), Duration as milliseconds
// with three decimals (rounded to the microsecond); omitempty fields are
// left out when zero, and Offset when WARC is "". Strings are escaped as
// encoding/json escapes them: control characters, '"', '\\', U+2028 and
// U+2029 as escapes, each byte of invalid UTF-8 as \ufffd. It does not
// allocate when dst has room.
func AppendJSON(dst []byte, e *Entry) []byte {
	dst = append(dst, `{"time":"`...)
	dst = appendTime(dst, e.Time)
	dst = append(dst, `","job":`...)
	dst = strconv.AppendUint(dst, uint64(e.Job), 10)
	dst = append(dst, `,"url":`...)
	dst = appendString(dst, e.URL)
	if e.Robots {
		dst = append(dst, `,"robots":true`...)
	}
	if e.Status != 0 {
		dst = append(dst, `,"status":`...)
		dst = strconv.AppendInt(dst, int64(e.Status), 10)
	}
	dst = appendField(dst, `,"error":`, e.Error)
	dst = append(dst, `,"bytes":`...)
	dst = strconv.AppendInt(dst, e.Bytes, 10)
	dst = appendField(dst, `,"mime":`, e.MIME)
	dst = append(dst, `,"duration_ms":`...)
	dst = appendMillis(dst, e.Duration)
	dst = append(dst, `,"depth":`...)
	dst = strconv.AppendInt(dst, int64(e.Depth), 10)
	dst = appendField(dst, `,"via":`, e.Via)
	dst = appendField(dst, `,"digest":`, e.Digest)
	dst = appendField(dst, `,"dedup":`, e.Dedup)
	dst = appendField(dst, `,"original":`, e.Original)
	if e.WARC != "" {
		dst = append(dst, `,"warc":`...)
		dst = appendString(dst, e.WARC)
		dst = append(dst, `,"offset":`...)
		dst = strconv.AppendInt(dst, e.Offset, 10)
	}
	dst = appendField(dst, `,"dropped":`, e.Dropped)
	dst = appendField(dst, `,"detail":`, e.Detail)
	dst = appendField(dst, `,"usage":`, e.Usage)
	dst = appendField(dst, `,"denied":`, e.Denied)
	return append(dst, "}\n"...)
}

// appendField appends key and s unless s is "".
func appendField(dst []byte, key, s string) []byte {
	if s == "" {
		return dst
	}
	return appendString(append(dst, key...), s)
}

// appendTime appends t in UTC as 2006-01-02T15:04:05.000Z. Years outside
// 0000–9999 are written as time.Format writes them, which Parse refuses.
func appendTime(dst []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return t.AppendFormat(dst, "2006-01-02T15:04:05.000Z")
	}
	hour, min, sec := t.Clock()
	ms := t.Nanosecond() / 1e6
	return append(dst,
		byte('0'+year/1000), byte('0'+year/100%10), byte('0'+year/10%10), byte('0'+year%10), '-',
		byte('0'+int(month)/10), byte('0'+int(month)%10), '-',
		byte('0'+day/10), byte('0'+day%10), 'T',
		byte('0'+hour/10), byte('0'+hour%10), ':',
		byte('0'+min/10), byte('0'+min%10), ':',
		byte('0'+sec/10), byte('0'+sec%10), '.',
		byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10), 'Z')
}

// appendMillis appends d as milliseconds with three decimals: 12.345.
func appendMillis(dst []byte, d time.Duration) []byte {
	us := d.Round(time.Microsecond) / time.Microsecond
	if us < 0 {
		dst = append(dst, '-')
		us = -us
	}
	dst = strconv.AppendInt(dst, int64(us/1000), 10)
	frac := int(us % 1000)
	return append(dst, '.', byte('0'+frac/100), byte('0'+frac/10%10), byte('0'+frac%10))
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string, quoted, escaped as
// encoding/json escapes it (without its HTML escaping).
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// MarshalJSON is AppendJSON without the newline, so that encoding/json
// writes an Entry as the log does.
func (e Entry) MarshalJSON() ([]byte, error) {
	b := AppendJSON(nil, &e)
	return b[:len(b)-1], nil
}

// UnmarshalJSON is Parse.
func (e *Entry) UnmarshalJSON(b []byte) error {
	v, err := Parse(b)
	if err != nil {
		return err
	}
	*e = v
	return nil
}

// ErrMalformed wraps every error of Parse.
var ErrMalformed = errors.New("crawllog: malformed line")

// fields is Entry without its methods, for wire to embed.
type fields Entry

// wire is an Entry as the JSON decoder reads it: the fields whose encoding
// is not encoding/json's own are read as raw values.
type wire struct {
	fields
	Time     *string      `json:"time"`
	URL      *string      `json:"url"`
	Duration *json.Number `json:"duration_ms"`
}

// Parse reads one line that AppendJSON wrote (a trailing '\n' or "\r\n"
// is allowed). Fields it does not know are ignored, so that lines from a
// newer trawl still parse. time and url are required. An error wraps
// ErrMalformed and names the field that was wrong.
func Parse(line []byte) (Entry, error) {
	var w wire
	if err := json.Unmarshal(line, &w); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			if te.Field == "" {
				return Entry{}, fmt.Errorf("%w: a JSON %s, not an object", ErrMalformed, te.Value)
			}
			return Entry{}, fmt.Errorf("%w: field %s: %s value where %s was expected", ErrMalformed, strings.TrimPrefix(te.Field, "fields."), te.Value, te.Type)
		}
		return Entry{}, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	e := Entry(w.fields)
	if w.Time == nil {
		return Entry{}, fmt.Errorf("%w: field time missing", ErrMalformed)
	}
	t, err := time.Parse(time.RFC3339Nano, *w.Time)
	if err != nil {
		return Entry{}, fmt.Errorf("%w: field time: %q is not an RFC 3339 time", ErrMalformed, *w.Time)
	}
	e.Time = t.UTC()
	if w.URL == nil {
		return Entry{}, fmt.Errorf("%w: field url missing", ErrMalformed)
	}
	e.URL = *w.URL
	if w.Duration != nil {
		d, ok := parseMillis(string(*w.Duration))
		if !ok {
			return Entry{}, fmt.Errorf("%w: field duration_ms: %s is not a duration in milliseconds", ErrMalformed, *w.Duration)
		}
		e.Duration = d
	}
	if e.WARC == "" {
		e.Offset = 0
	}
	return e, nil
}

// parseMillis reads a JSON number of milliseconds as a Duration: exactly
// when written as AppendJSON writes it (digits, a point, up to six
// decimals kept), through float64 otherwise (an exponent). ok is false
// when it does not fit a Duration.
func parseMillis(s string) (d time.Duration, ok bool) {
	neg := strings.HasPrefix(s, "-")
	digits := strings.TrimPrefix(s, "-")
	whole, frac, _ := strings.Cut(digits, ".")
	if strings.ContainsAny(digits, "eE") || whole == "" {
		ms, err := strconv.ParseFloat(s, 64)
		ns := math.Round(ms * 1e6)
		if err != nil || ns >= math.MaxInt64 || ns <= math.MinInt64 {
			return 0, false
		}
		return time.Duration(ns), true
	}
	n, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || n > math.MaxInt64/int64(time.Millisecond) {
		return 0, false
	}
	ns := n * int64(time.Millisecond)
	scale := int64(time.Millisecond)
	for i := 0; i < len(frac) && i < 6; i++ {
		scale /= 10
		ns += int64(frac[i]-'0') * scale
	}
	if ns < 0 {
		return 0, false
	}
	if neg {
		ns = -ns
	}
	return time.Duration(ns), true
}
