package urlnorm

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
)

// whatwgCases is testdata/url_whatwg_subset.json.
type whatwgCases struct {
	OK []struct {
		Input string  `json:"input"`
		Base  *string `json:"base"`
		Href  string  `json:"href"`
	} `json:"ok"`
	Failures []struct {
		Input string  `json:"input"`
		Base  *string `json:"base"`
	} `json:"failures"`
}

func loadWHATWG(t testing.TB) whatwgCases {
	t.Helper()
	b, err := os.ReadFile("testdata/url_whatwg_subset.json")
	if err != nil {
		t.Fatal(err)
	}
	var c whatwgCases
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// whatwgDifferences lists the conformance cases whose String differs from
// the WHATWG href, keyed by input, with what net/url gives instead. Every
// one is a limit of net/url's representation, not of the parse: the parsed
// components are the browser's, but net/url re-encodes them when
// serialising (or, for an empty fragment, cannot hold them).
var whatwgDifferences = map[string]struct{ got, reason string }{
	":#":                                 {"http://example.org/foo/:", "net/url cannot hold an empty fragment"},
	"#":                                  {"http://example.org/foo/bar", "net/url cannot hold an empty fragment"},
	"http://www.google.com/foo?bar=baz#": {"http://www.google.com/foo?bar=baz", "net/url cannot hold an empty fragment"},
	"http://example.org/test?#":          {"http://example.org/test?", "net/url cannot hold an empty fragment"},
	"#\\":                                {"http://example.org/foo/bar#%5C", "net/url encodes '\\' in a fragment"},
	"http://foo/path;a??e#f#g":           {"http://foo/path;a??e#f%23g", "net/url encodes '#' in a fragment"},
	"http://example.org/test?a#%GH":      {"http://example.org/test?a#%25GH", "net/url encodes a '%' that starts no valid escape"},
	"http://example.com/foo/%2e%2":       {"http://example.com/foo/%2e%252", "net/url encodes a '%' that starts no valid escape"},
	"http://example.com/foo%":            {"http://example.com/foo%25", "net/url encodes a '%' that starts no valid escape"},
	"http://example.com/foo%2":           {"http://example.com/foo%252", "net/url encodes a '%' that starts no valid escape"},
	"http://example.com/foo%2zbar":       {"http://example.com/foo%252zbar", "net/url encodes a '%' that starts no valid escape"},
	"http://example.com/foo%2\u00c2\u00a9zbar": {"http://example.com/foo%252%C3%82%C2%A9zbar",
		"net/url encodes a '%' that starts no valid escape"},
	"http://&a:foo(b]c@d:2/":       {"http://&a:foo%28b%5Dc@d:2/", "net/url encodes '(' in user info"},
	"http://!\"$&'()*+,-.;=_`{}~/": {"http://!\"$&'()*+,-.;=_%60%7B%7D~/", "net/url encodes '`', '{' and '}' in a host"},
}

// TestParseWHATWG checks Parse against every http(s) case of the WHATWG URL
// Standard's tests (see testdata/README.md).
func TestParseWHATWG(t *testing.T) {
	c := loadWHATWG(t)
	if len(c.OK) != 247 || len(c.Failures) != 198 {
		t.Fatalf("testdata has %d ok and %d failure cases, want 247 and 198", len(c.OK), len(c.Failures))
	}
	used := map[string]bool{}
	for _, tc := range c.OK {
		base := mustBase(t, tc.Base)
		u, err := Parse(tc.Input, base)
		if err != nil {
			t.Errorf("Parse(%q, %v) error: %v, want %q", tc.Input, ptrStr(tc.Base), err, tc.Href)
			continue
		}
		got := u.String()
		want := tc.Href
		if d, ok := whatwgDifferences[tc.Input]; ok {
			used[tc.Input] = true
			want = d.got
		}
		if got != want {
			t.Errorf("Parse(%q, %v) = %q, want %q", tc.Input, ptrStr(tc.Base), got, want)
		}
	}
	for in := range whatwgDifferences {
		if !used[in] {
			t.Errorf("difference listed for %q, which is not an ok case", in)
		}
	}
	for _, tc := range c.Failures {
		base := mustBase(t, tc.Base)
		if u, err := Parse(tc.Input, base); err == nil {
			t.Errorf("Parse(%q, %v) = %q, want an error", tc.Input, ptrStr(tc.Base), u)
		}
	}
}

func mustBase(t testing.TB, s *string) *url.URL {
	t.Helper()
	if s == nil {
		return nil
	}
	b, err := Parse(*s, nil)
	if err != nil {
		t.Fatalf("Parse(%q, nil) (a base): %v", *s, err)
	}
	return b
}

func ptrStr(s *string) string {
	if s == nil {
		return "nil"
	}
	return *s
}

func TestParse(t *testing.T) {
	base, _ := url.Parse("https://example.com/dir/page.html?q=1")
	tests := []struct {
		ref  string
		base *url.URL
		want string
	}{
		{"other.html", base, "https://example.com/dir/other.html"},
		{"../up", base, "https://example.com/up"},
		{"//cdn.example.net/x.js", base, "https://cdn.example.net/x.js"},
		{"?q=2", base, "https://example.com/dir/page.html?q=2"},
		{"#top", base, "https://example.com/dir/page.html?q=1#top"},
		{"", base, "https://example.com/dir/page.html?q=1"},
		{"  /a b\t\n ", base, "https://example.com/a%20b"},
		{"\\\\other.test\\p", base, "https://other.test/p"},
		{"HTTP://EXAMPLE.COM:80/", nil, "http://example.com/"},
		{"http://Bücher.example/", nil, "http://xn--bcher-kva.example/"},
		{"http://0x7f.1/", nil, "http://127.0.0.1/"},
	}
	for _, tt := range tests {
		u, err := Parse(tt.ref, tt.base)
		if err != nil {
			t.Errorf("Parse(%q) error: %v", tt.ref, err)
			continue
		}
		if got := u.String(); got != tt.want {
			t.Errorf("Parse(%q) = %q, want %q", tt.ref, got, tt.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	base, _ := url.Parse("https://example.com/")
	tests := []struct {
		ref     string
		base    *url.URL
		wantMsg string // a substring of the error message
	}{
		{"mailto:a@example.com", base, `scheme "mailto" is not http or https`},
		{"javascript:void(0)", base, `scheme "javascript"`},
		{"data:text/plain,hi", nil, `scheme "data"`},
		{"ftp://example.com/f", nil, `scheme "ftp"`},
		{"tel:+123", base, `scheme "tel"`},
		{"relative/path", nil, "missing scheme"},
		{"http://exa mple.com/", nil, "forbidden domain code point"},
		{"http://example.com:99999/", nil, "outside the range"},
		{"http://[::1/", nil, "IPv6"},
	}
	for _, tt := range tests {
		u, err := Parse(tt.ref, tt.base)
		if err == nil {
			t.Errorf("Parse(%q) = %q, want an error containing %q", tt.ref, u, tt.wantMsg)
			continue
		}
		var ue *Error
		if !errors.As(err, &ue) || ue.Op != "parse" || ue.URL != tt.ref {
			t.Errorf("Parse(%q) error %#v, want *Error{Op: parse, URL: %q}", tt.ref, err, tt.ref)
		}
		prefix := `urlnorm: parse "` // message form: urlnorm: parse "ref": reason
		if msg := err.Error(); !strings.HasPrefix(msg, prefix) || !strings.Contains(msg, tt.wantMsg) {
			t.Errorf("Parse(%q) error = %q, want prefix %q and %q in it", tt.ref, msg, prefix, tt.wantMsg)
		}
	}
}

// TestParseConcurrent lets the race detector check that the shared parser
// is safe for concurrent use.
func TestParseConcurrent(t *testing.T) {
	base, _ := url.Parse("https://example.com/a/b")
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				ref := fmt.Sprintf("../c%d/d?x=%d#f", g, i)
				want := fmt.Sprintf("https://example.com/c%d/d?x=%d", g, i)
				if got, err := Canonical(ref, base); err != nil || got != want {
					errs <- fmt.Errorf("Canonical(%q) = %q, %v, want %q", ref, got, err, want)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
