// Package cdxj indexes WARC files as CDXJ, the index format pywb and
// warcio.js write: one line per capture, "SURT TIMESTAMP {json}", sorted
// bytewise, so that a replay tool finds a URL's captures by binary search.
// Which records are indexed, and every field, follow `warcio cdx-index`
// (npm package warcio, the version in tools/warcvalidate) so that the two
// indexes of a file are the same lines. A finished WARC file has an index
// of its own beside it (NAME.warc.gz.cdxj, see files.go), written from
// what the warc.Writer reports as it finishes the file (FromCaptures,
// WriteIndex) or by reading the file (IndexMissing); LoadDir merges them.
// Functions hold no state: they are pure, or read and write only the
// files they are given; all are safe for concurrent use.
//
// # Format
//
// This is part of the on-disk format (CDXJ as pywb reads it):
//
//	SURT " " TIMESTAMP " " JSON LF
//	JSON: {"url":…,"mime":…,"status":"200","digest":…,"length":"N","offset":"N","filename":…}
//
// mime and status are left out when the record has none; status, length
// and offset are strings, as warcio writes them.
//
// # Where it differs from warcio 2.4
//
// Tests compare both on files trawl writes (gzip, GET exchanges) and find
// them identical. Beyond those:
//   - a response whose request is not a GET: warcio rewrites its key with
//     the method and body (__wb_method=...) and adds "method" and
//     "requestBody"; this package does not (trawl only sends GET);
//   - header bytes beyond ASCII: see Line.String;
//   - uncompressed files: the offsets agree, but warcio's length leaves
//     out the CRLF CRLF after some records' blocks and not others; here
//     it always includes them, so offset+length is the next record.
package cdxj

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/trawl-crawler/trawl/urlnorm"
	"github.com/trawl-crawler/trawl/warc"
)

// Line is one capture in a CDXJ index.
type Line struct {
	SURT      string // the URL's SURT key (see SURT)
	Timestamp string // WARC-Date as 14 digits, YYYYMMDDhhmmss
	URL       string // WARC-Target-URI
	// Mime is the HTTP Content-Type's media type (before any ';') of a
	// response, "warc/revisit" for a revisit, the record's Content-Type for
	// other records; "" when there is none (left out of the JSON).
	Mime string
	// Status is the HTTP status code of a response or revisit; "" when the
	// record has none (left out of the JSON).
	Status string
	// Digest is WARC-Payload-Digest without its algorithm ("BASE32"); ""
	// when there is none (left out of the JSON).
	Digest   string
	Length   int64  // length of the record's gzip member
	Offset   int64  // offset of that member in the file
	Filename string // the WARC file's base name
}

// String returns the line as written in a CDXJ file, without the LF.
// The JSON object's keys are in warcio's order, and it is written as
// JavaScript's JSON.stringify writes it (see writeJSONString).
//
// Header bytes beyond ASCII are taken as UTF-8 (WARC 1.1, section 4), so
// only there may a line differ from warcio 2.4's, which writes each such
// byte as the ISO-8859-1 character of that value ("é" as "Ã©"), in the
// JSON and in the SURT. trawl's own records have ASCII target URIs (URLs
// are written normalised, percent-encoded).
func (l Line) String() string {
	var b bytes.Buffer
	b.WriteString(l.SURT)
	b.WriteByte(' ')
	b.WriteString(l.Timestamp)
	b.WriteByte(' ')
	b.WriteString(`{"url":`)
	writeJSONString(&b, l.URL)
	for _, f := range [...]struct{ name, value string }{
		{"mime", l.Mime}, {"status", l.Status}, {"digest", l.Digest},
	} {
		if f.value != "" {
			b.WriteString(`,"` + f.name + `":`)
			writeJSONString(&b, f.value)
		}
	}
	b.WriteString(`,"length":"` + strconv.FormatInt(l.Length, 10) + `","offset":"` + strconv.FormatInt(l.Offset, 10) + `","filename":`)
	writeJSONString(&b, l.Filename)
	b.WriteByte('}')
	return b.String()
}

// writeJSONString writes s as JavaScript's JSON.stringify writes a string
// (ECMA-262, QuoteJSONString): '"' and '\\' escaped, \b \f \n \r \t, other
// control characters as \u00xx, everything else as is (no escaping of
// '<', '>', '&', U+2028 or U+2029, unlike encoding/json). A byte that is
// not UTF-8 becomes U+FFFD, as warcio's UTF-8 decoding of headers does.
func writeJSONString(b *bytes.Buffer, s string) {
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte(hex[r>>4])
			b.WriteByte(hex[r&0xf])
		default:
			b.WriteRune(r) // utf8.RuneError for an invalid byte: U+FFFD
		}
	}
	b.WriteByte('"')
}

// wwwPrefix is the host prefix SURT drops; like warcio's, it is matched
// before lower-casing, so "WWW." stays.
var wwwPrefix = regexp.MustCompile(`^(https?://)www\d*\.`)

// SURT returns the SURT key of a URL as warcio.js computes it (getSurt in
// warcio's src/lib/utils.ts, read in node_modules/warcio/dist/utils.js,
// version 2.4): a URL not starting with "http:" or "https:" is returned
// as is; otherwise a leading "www.", "www1." etc. is dropped from the
// host, the whole URL is lower-cased and parsed (WHATWG), and the key is
// the host's labels reversed and joined with ',', ":PORT" if the port is
// not the scheme's default, ')', the path, and '?' with the query's
// '&'-separated parts sorted, if there is a query. The fragment is
// dropped. A URL that does not parse is returned as is, less its "www.".
//
// One difference remains: a '%' that starts no escape ("/a%zz") is kept
// by WHATWG but written "%25" here (net/url cannot hold it; see
// urlnorm.Parse). trawl writes its URLs normalised, with "%25" already.
func SURT(rawURL string) string {
	if !strings.HasPrefix(rawURL, "https:") && !strings.HasPrefix(rawURL, "http:") {
		return rawURL
	}
	stripped := wwwPrefix.ReplaceAllString(rawURL, "$1")
	u, err := urlnorm.Parse(strings.ToLower(stripped), nil)
	if err != nil {
		return stripped // as warcio does: "www." gone, case kept
	}
	host := u.Hostname()
	if strings.Contains(host, ":") {
		host = "[" + host + "]" // IPv6: WHATWG's hostname keeps the brackets
	}
	labels := strings.Split(host, ".")
	slices.Reverse(labels)
	var b strings.Builder
	b.WriteString(strings.Join(labels, ","))
	if p := u.Port(); p != "" && !(p == "80" && u.Scheme == "http" || p == "443" && u.Scheme == "https") {
		b.WriteString(":" + p)
	}
	b.WriteByte(')')
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	b.WriteString(path)
	if u.RawQuery != "" {
		parts := strings.Split(u.RawQuery, "&")
		slices.Sort(parts) // JavaScript's default sort: by UTF-16 code units; the same order for ASCII
		b.WriteString("?" + strings.Join(parts, "&"))
	}
	return b.String()
}

// Timestamp returns a WARC-Date as 14 digits, as warcio does: '-', ':'
// and 'T' removed, then the first 14 characters.
func Timestamp(date string) string {
	// A loop, not a strings.Replacer: building one per call cost more
	// than the rest of a line.
	var b [14]byte
	n := 0
	for i := 0; i < len(date) && n < len(b); i++ {
		if c := date[i]; c != '-' && c != ':' && c != 'T' {
			b[n] = c
			n++
		}
	}
	return string(b[:n])
}

// indexed reports whether warcio cdx-index indexes a record by default:
// every record but request and warcinfo records and metadata or resource
// records of application/warc-fields.
func indexed(r *warc.Record) bool {
	switch r.Type {
	case "request", "warcinfo":
		return false
	case "metadata", "resource":
		return r.ContentType != "application/warc-fields"
	}
	return true
}

// Index reads the WARC file content r and returns its lines in file order
// (not sorted), filename being the file's base name as written in them.
func Index(r io.Reader, name string) ([]Line, error) {
	rd := warc.NewReader(r, name)
	base := filepath.Base(name)
	var lines []Line
	for {
		rec, err := rd.Next()
		if err == io.EOF {
			return lines, nil
		}
		if err != nil {
			return lines, fmt.Errorf("cdxj: index: %w", err)
		}
		if _, err := rd.End(); err != nil {
			return lines, fmt.Errorf("cdxj: index: %w", err)
		}
		if !indexed(rec) {
			continue
		}
		lines = append(lines, lineOf(rec, base))
	}
}

// lineOf is the index line of rec, which lies in the file base.
func lineOf(rec *warc.Record, base string) Line {
	l := Line{
		SURT:      SURT(rec.TargetURI),
		Timestamp: Timestamp(rec.Date),
		URL:       rec.TargetURI,
		Length:    rec.Length,
		Offset:    rec.Offset,
		Filename:  base,
	}
	if _, d, ok := strings.Cut(rec.PayloadDigest, ":"); ok {
		l.Digest, _, _ = strings.Cut(d, ":")
	}
	switch rec.Type {
	case "revisit":
		l.Mime = "warc/revisit"
	case "response":
		if rec.HTTP != nil {
			mt, _, _ := strings.Cut(rec.HTTP.ContentType, ";")
			l.Mime = strings.TrimSpace(mt)
		}
	default:
		l.Mime = rec.ContentType
	}
	if rec.HTTP != nil && (rec.Type == "response" || rec.Type == "revisit") {
		l.Status = strconv.Itoa(rec.HTTP.Status)
	}
	return l
}

// IndexFile indexes the WARC file at path: its lines in file order.
func IndexFile(path string) ([]Line, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cdxj: index: %w", err)
	}
	defer f.Close()
	return Index(bufio.NewReaderSize(f, 64<<10), path)
}

// Sort sorts lines as a CDXJ file holds them: bytewise by their text, so
// by SURT, then timestamp (pywb sorts with LC_ALL=C sort).
func Sort(lines []Line) { sortText(lines) }

// sortText sorts lines as Sort does and returns their text, in order.
func sortText(lines []Line) []string {
	keys := make([]string, len(lines))
	idx := make([]int, len(lines))
	for i, l := range lines {
		keys[i], idx[i] = l.String(), i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return strings.Compare(keys[a], keys[b]) })
	sorted := make([]Line, len(lines))
	text := make([]string, len(lines))
	for i, j := range idx {
		sorted[i], text[i] = lines[j], keys[j]
	}
	copy(lines, sorted)
	return text
}

// Write sorts lines (see Sort) and writes them to w, one per line.
func Write(w io.Writer, lines []Line) error {
	bw := bufio.NewWriter(w)
	for _, s := range sortText(lines) {
		bw.WriteString(s)
		bw.WriteByte('\n')
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("cdxj: write: %w", err)
	}
	return nil
}
