package sitemap

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"testing"
	"time"
)

// urlset writes a urlset of n entries https://example.test/p/0 ... .
func urlset(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n")
	for i := range n {
		fmt.Fprintf(&b, "<url><loc>https://example.test/p/%d</loc><lastmod>2025-01-02</lastmod><changefreq>daily</changefreq><priority>0.7</priority></url>\n", i)
	}
	b.WriteString("</urlset>\n")
	return b.Bytes()
}

func gz(b []byte) []byte {
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	_, _ = zw.Write(b)
	_ = zw.Close()
	return out.Bytes()
}

// padded is a urlset with one entry, then comments until the whole is at
// least size bytes, then one more entry.
func padded(size int) []byte {
	var b bytes.Buffer
	b.WriteString(`<urlset><url><loc>https://example.test/first</loc></url>`)
	pad := "<!--" + strings.Repeat("x", 1000) + "-->\n"
	for b.Len() < size {
		b.WriteString(pad)
	}
	b.WriteString(`<url><loc>https://example.test/last</loc></url></urlset>`)
	return b.Bytes()
}

func TestLimits(t *testing.T) {
	long := "https://example.test/" + strings.Repeat("a", 2100)
	tests := []struct {
		name      string
		in        []byte
		opts      Options
		entries   int
		skipped   int
		limit     string // "" for no *LimitError
		syntaxErr bool
	}{
		{"at MaxURLs", urlset(10), Options{MaxURLs: 10}, 10, 0, "", false},
		{"past MaxURLs", urlset(11), Options{MaxURLs: 10}, 10, 0, "MaxURLs", false},
		{"default MaxURLs", urlset(DefaultMaxURLs + 1), Options{}, DefaultMaxURLs, 0, "MaxURLs", false},
		{"text past MaxURLs", []byte("https://a.test/1\nhttps://a.test/2\nhttps://a.test/3\n"), Options{MaxURLs: 2}, 2, 0, "MaxURLs", false},
		{"past MaxBytes", padded(20_000), Options{MaxBytes: 10_000}, 1, 0, "MaxBytes", false},
		{"at MaxBytes", padded(5_000), Options{MaxBytes: int64(len(padded(5_000)))}, 2, 0, "", false},
		{"gzip bomb past MaxBytes", gz(padded(3 << 20)), Options{MaxBytes: 1 << 20}, 1, 0, "MaxBytes", false},
		{"gzip bomb past the default MaxBytes", gz(padded(DefaultMaxBytes + 1000)), Options{}, 1, 0, "MaxBytes", false},
		{"one huge text node", []byte("<urlset><url><loc>https://x.test/" + strings.Repeat("a", 3<<20) + "</loc></url></urlset>"), Options{}, 0, 0, "token", false},
		{"huge whitespace", []byte("<urlset>" + strings.Repeat(" ", 3<<20) + "</urlset>"), Options{}, 0, 0, "token", false},
		{"loc too long", []byte("<urlset><url><loc>" + long + "</loc></url><url><loc>https://x.test/ok</loc></url></urlset>"), Options{}, 1, 1, "", false},
		{"text line too long", []byte("https://x.test/ok\n" + long + "\nhttps://x.test/ok2\n"), Options{}, 2, 1, "", false},
		{"MaxLocLength", []byte("<urlset><url><loc>https://x.test/abc</loc></url></urlset>"), Options{MaxLocLength: 10}, 0, 1, "", false},
		{"deep nesting", []byte("<urlset>" + strings.Repeat("<a>", 10_000)), Options{}, 0, 0, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse(bytes.NewReader(tt.in), tt.opts)
			if s == nil {
				t.Fatalf("Parse = nil, %v", err)
			}
			if len(s.Entries) != tt.entries || s.Skipped != tt.skipped {
				t.Errorf("Parse: %d entries, %d skipped, want %d and %d (err %v)", len(s.Entries), s.Skipped, tt.entries, tt.skipped, err)
			}
			var le *LimitError
			switch {
			case tt.limit != "" && (!errors.As(err, &le) || le.Limit != tt.limit):
				t.Errorf("Parse: error %v, want a *LimitError for %s", err, tt.limit)
			case tt.syntaxErr:
				var se *SyntaxError
				if !errors.As(err, &se) {
					t.Errorf("Parse: error %v, want a *SyntaxError", err)
				}
			case tt.limit == "" && err != nil:
				t.Errorf("Parse: error %v, want none", err)
			}
			if max := tt.opts.withDefaults().MaxBytes; s.Bytes > max {
				t.Errorf("Parse read %d bytes, past MaxBytes %d", s.Bytes, max)
			}
		})
	}
}

func TestGzipDetected(t *testing.T) {
	plain := urlset(3)
	for _, in := range [][]byte{plain, gz(plain), gz([]byte("https://a.test/1\nhttps://a.test/2\nhttps://a.test/3"))} {
		s, err := Parse(bytes.NewReader(in), Options{})
		if err != nil || len(s.Entries) != 3 {
			t.Fatalf("Parse(%.10q) = %d entries, %v; want 3", in, len(s.Entries), err)
		}
		if gzipped := bytes.HasPrefix(in, gzipMagic); s.Gzip != gzipped {
			t.Errorf("Parse(%.10q).Gzip = %v, want %v", in, s.Gzip, gzipped)
		}
	}
	// A gzip header over bytes that are not deflate.
	bad := append(gz(nil)[:10], "not deflate at all"...)
	if _, err := Parse(bytes.NewReader(bad), Options{}); err == nil || !strings.Contains(err.Error(), "gzip") {
		t.Errorf("Parse(broken gzip) error = %v, want one naming gzip", err)
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		in   string
		want string // in the error text
	}{
		{"", "empty file"},
		{"  \n\t", "empty file"},
		{"<rss version=\"2.0\"></rss>", "root element <rss>"},
		{`<?xml version="1.0" encoding="ISO-8859-1"?><urlset></urlset>`, "requires UTF-8"},
		{"<urlset><url><loc>https://a.test/</loc></url>", "unexpected EOF"},
		{"<urlset><url><loc>https://a.test/\xff</loc></url></urlset>", "UTF-8"},
		{"\x00\x01binary", "first line is not an absolute"},
	}
	for _, tt := range tests {
		_, err := Parse(strings.NewReader(tt.in), Options{})
		var se *SyntaxError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%q) error = %v, want a *SyntaxError containing %q", tt.in, err, tt.want)
		}
	}
	if _, err := Parse(strings.NewReader("x"), Options{MaxURLs: -1, MaxBytes: -1}); err == nil ||
		!strings.Contains(err.Error(), "MaxURLs") || !strings.Contains(err.Error(), "MaxBytes") {
		t.Errorf("Parse with bad options: error %v, want both fields named", err)
	}
}

func TestReadStopsAtCallbackError(t *testing.T) {
	stop := errors.New("enough")
	n := 0
	sum, err := Read(bytes.NewReader(urlset(10)), Options{}, func(Entry) error {
		if n++; n == 3 {
			return stop
		}
		return nil
	})
	if err != stop || n != 3 || sum.Entries != 3 {
		t.Errorf("Read with a callback failing on the 3rd entry: %d calls, summary %+v, error %v", n, sum, err)
	}
}

// errReader fails after its bytes.
type errReader struct {
	r   io.Reader
	err error
}

func (e *errReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err == io.EOF {
		err = e.err
	}
	return n, err
}

func TestReaderErrorIsWrapped(t *testing.T) {
	cut := errors.New("connection reset")
	in := urlset(5)
	_, err := Read(&errReader{bytes.NewReader(in[:len(in)/2]), cut}, Options{}, func(Entry) error { return nil })
	if !errors.Is(err, cut) {
		t.Errorf("Read over a failing reader: error %v, want it to wrap %v", err, cut)
	}
}

func TestParseW3C(t *testing.T) {
	tests := []struct {
		in   string
		want string // RFC 3339 in UTC, "" for not a W3C Datetime
	}{
		{"1997", "1997-01-01T00:00:00Z"},
		{"1997-07", "1997-07-01T00:00:00Z"},
		{"1997-07-16", "1997-07-16T00:00:00Z"},
		{"1997-07-16T19:20+01:00", "1997-07-16T18:20:00Z"},
		{"1997-07-16T19:20:30+01:00", "1997-07-16T18:20:30Z"},
		{"1997-07-16T19:20:30.45+01:00", "1997-07-16T18:20:30.45Z"},
		{"1997-07-16T19:20:30Z", "1997-07-16T19:20:30Z"},
		{"1997-07-16T19:20:30", "1997-07-16T19:20:30Z"}, // no TZD: read as UTC
		{"1997-13", ""},
		{"1997-07-16 19:20:30", ""},
		{"16/07/1997", ""},
		{"", ""},
		{"yesterday", ""},
	}
	for _, tt := range tests {
		got, ok := parseW3C(tt.in)
		s := ""
		if ok {
			s = got.Format(time.RFC3339Nano)
		}
		if s != tt.want {
			t.Errorf("parseW3C(%q) = %q, want %q", tt.in, s, tt.want)
		}
	}
}

func TestChangeFreq(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want ChangeFreq
	}{
		{"always", FreqAlways}, {"HOURLY", FreqHourly}, {"Daily", FreqDaily}, {"weekly", FreqWeekly},
		{"monthly", FreqMonthly}, {"yearly", FreqYearly}, {"never", FreqNever},
		{"", FreqNone}, {"fortnightly", FreqNone}, {"dailyy", FreqNone},
	} {
		if got := parseFreq(tt.in); got != tt.want {
			t.Errorf("parseFreq(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
	if FreqWeekly.Interval() != 7*24*time.Hour || FreqNever.Interval() != 0 {
		t.Errorf("Interval: weekly %v, never %v", FreqWeekly.Interval(), FreqNever.Interval())
	}
}

func TestAllowed(t *testing.T) {
	tests := []struct {
		sitemap, loc, robots string // robots "" for a sitemap not named in robots.txt
		want                 bool
	}{
		// sitemaps.org "Sitemap file location": same protocol and host, under the sitemap's directory.
		{"http://example.com/catalog/sitemap.xml", "http://example.com/catalog/show?item=23", "", true},
		{"http://example.com/catalog/sitemap.xml", "http://example.com/catalog/", "", true},
		{"http://example.com/catalog/sitemap.xml", "http://example.com/images/a.png", "", false},
		{"http://example.com/catalog/sitemap.xml", "http://example.com/catalogue/x", "", false},
		{"http://example.com/catalog/sitemap.xml", "http://example.com/", "", false},
		{"http://example.com/sitemap.xml", "http://example.com/any/path", "", true},
		{"http://example.com/sitemap.xml", "https://example.com/x", "", false},
		{"http://example.com/sitemap.xml", "http://www.example.com/x", "", false},
		{"http://example.com/sitemap.xml", "http://example.com:8080/x", "", false},
		{"http://example.com:80/sitemap.xml", "http://EXAMPLE.com/x", "", true},
		{"http://example.com/a/sitemap.xml", "http://example.com/a/../b/x", "", false},
		// "Sitemaps & Cross Submits": named in a host's robots.txt, a sitemap speaks for that host.
		{"http://example.com/catalog/sitemap.xml", "http://example.com/images/a.png", "http://example.com/robots.txt", true},
		{"http://sitemaps.example.net/s/example.xml", "http://example.com/x", "http://example.com/robots.txt", true},
		{"http://sitemaps.example.net/s/example.xml", "http://sitemaps.example.net/s/y", "http://example.com/robots.txt", false},
		{"http://example.com/sitemap.xml", "http://other.example/x", "http://example.com/robots.txt", false},
		{"http://example.com/sitemap.xml", "https://example.com/x", "http://example.com/robots.txt", false},
	}
	for _, tt := range tests {
		var robots *url.URL
		if tt.robots != "" {
			robots, _ = url.Parse(tt.robots)
		}
		s, _ := url.Parse(tt.sitemap)
		l, _ := url.Parse(tt.loc)
		if got := Allowed(s, l, robots); got != tt.want {
			t.Errorf("Allowed(%q, %q, robots %q) = %v, want %v", tt.sitemap, tt.loc, tt.robots, got, tt.want)
		}
	}
	if Allowed(nil, &url.URL{}, nil) || Allowed(&url.URL{}, nil, nil) {
		t.Error("Allowed with a nil URL = true")
	}
}
