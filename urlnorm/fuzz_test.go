package urlnorm

import (
	"net/url"
	"reflect"
	"testing"
)

var fuzzSeeds = []string{
	"http://example.com/",
	"HTTPS://User:Pw@Bücher.Example:443/a/./b/../%7Ec?utm_source=x&b=2&a=1#f",
	"http://[2001:db8::1]:8080/%2F%zz?q='x'&&r",
	"http://0x7f.1/a b|c^d",
	"//cdn.example.net/x.js?z&a=%41",
	"../../up?x=1#y",
	"http://a.b.c.xn--pokxncvks/",
	"javascript:alert(1)",
}

func addSeeds(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	c := loadWHATWG(f)
	for _, tc := range c.OK {
		f.Add(tc.Input)
	}
	for _, tc := range c.Failures {
		f.Add(tc.Input)
	}
}

// FuzzParse checks that Parse never panics, returns only http(s) URLs, and
// that its result's String is a fixed point of Parse.
func FuzzParse(f *testing.F) {
	addSeeds(f)
	base, _ := url.Parse("http://example.org/foo/bar?q#f")
	f.Fuzz(func(t *testing.T, s string) {
		u, err := Parse(s, base)
		if err != nil {
			return
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			t.Fatalf("Parse(%q) = %q: scheme %q", s, u, u.Scheme)
		}
		s1 := u.String()
		p, err := Parse(s1, nil)
		if err != nil {
			t.Fatalf("Parse(%q) = %q, which does not re-parse: %v", s, s1, err)
		}
		if s2 := p.String(); s2 != s1 {
			t.Fatalf("Parse(%q) = %q, which re-parses to %q", s, s1, s2)
		}
	})
}

// shared is one Resolver every FuzzResolver input goes through, so that a
// parse that changed the parsed base would show in a later one.
var shared = NewResolver(mustParse("http://example.org/a/b/c?q#f"))

// FuzzResolver checks that a Resolver reused for many refs gives what
// Parse gives for each alone: resolving never changes the base.
func FuzzResolver(f *testing.F) {
	addSeeds(f)
	base := mustParse("http://example.org/a/b/c?q#f")
	f.Fuzz(func(t *testing.T, s string) {
		for _, ref := range []string{s, "..", "x", "?y", "#z", "/", "../../d"} {
			want, wantErr := Parse(ref, base)
			got, err := shared.Parse(ref)
			if (err != nil) != (wantErr != nil) || (err == nil && got.String() != want.String()) {
				t.Fatalf("Resolver.Parse(%q) after %q = %v, %v; Parse = %v, %v", ref, s, got, err, want, wantErr)
			}
		}
	})
}

func mustParse(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return u
}

// FuzzNormalize checks that Normalize never panics, is idempotent, and that
// its output re-parses to itself, both for URLs from Parse and from net/url.
func FuzzNormalize(f *testing.F) {
	addSeeds(f)
	base, _ := url.Parse("https://example.org/foo/bar")
	f.Fuzz(func(t *testing.T, s string) {
		if u, err := Parse(s, base); err == nil {
			checkCanonical(t, u)
		}
		if u, err := url.Parse(s); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.Opaque == "" {
			n := Normalize(u)
			if again := Normalize(n).String(); again != n.String() {
				t.Fatalf("Normalize(Normalize(%q)) = %q, want %q", s, again, n)
			}
		}
	})
}

// BenchmarkResolver is a page's links resolved as the node does: one
// Resolver for the page, Parse and Normalize for each link.
func BenchmarkResolver(b *testing.B) {
	base := mustParse("https://www.example.com/news/2024/today.html?page=2")
	refs := []string{"/", "/news/", "../sport/article.html?id=7", "today.html?page=3", "https://other.example/x", "#top", "/people/a-b?ref=1&pos=2"}
	b.ReportAllocs()
	for b.Loop() {
		r := NewResolver(base)
		for _, ref := range refs {
			u, err := r.Parse(ref)
			if err != nil {
				b.Fatal(err)
			}
			Normalize(u)
		}
	}
}

func BenchmarkCanonical(b *testing.B) {
	base, _ := url.Parse("https://www.example.com/news/2024/today.html?page=2")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Canonical("../sport/article.html?id=7&utm_source=feed#comments", base); err != nil {
			b.Fatal(err)
		}
	}
}

// fastBases are the bases FuzzFastPath resolves against.
var fastBases = []*Resolver{
	NewResolver(mustParse("http://example.org/a/b/c?q#f")),
	NewResolver(mustParse("https://www.example.com:8443/dir/")),
	NewResolver(mustParse("http://EXAMPLE.org:80/x")),
	NewResolver(mustParse("http://127.0.0.1/")),
	NewResolver(mustParse("http://[::1]:8080/p;q/r@s")),
	NewResolver(mustParse("http://example.org")),
}

// FuzzFastPath checks that wherever the fast path takes a ref, its URL is
// the WHATWG parser's, field for field.
func FuzzFastPath(f *testing.F) {
	addSeeds(f)
	for _, s := range []string{"/a/b.html", "c.html?x=1&y=2", "?page=2", "~user/x", "a:b/c", "a/b:c", "//h/x",
		"#top", "x#f", "HTTP://A.B:80/c?d#e", "https://a.b:443", "http://a.b:0/", "http://1.2.3.4/", "http://a.0x10/",
		"http://A.xn--b.c/", "//a.b:65536/", "http://a-.b/", "http://a.b./", "http://a_b.c/",
		"a/./b", "a/../b", "..", ".", "x?", "x?a?b", "/x/y/", "A/B", "p;q", "$x(y)*+,=@!", "x'y", "x%41"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ref string) {
		for _, r := range fastBases {
			got, ok := r.fast.resolve(ref)
			if !ok {
				continue
			}
			want, err := r.parseWHATWG(ref)
			if err != nil {
				t.Fatalf("fast path took %q against %s (%v); WHATWG: %v", ref, r.base, got, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("fast path: %q against %s = %#v; WHATWG: %#v", ref, r.base, got, want)
			}
		}
	})
}

// TestFastPathTakes lists which refs the fast path takes against a plain
// base, and what it gives: FuzzFastPath proves what it takes right, this
// proves it takes the common links at all.
func TestFastPathTakes(t *testing.T) {
	r := NewResolver(mustParse("http://example.org/a/b/c.html?q"))
	for _, c := range []struct{ ref, want string }{
		{"/x/y.html", "http://example.org/x/y.html"},
		{"d.html", "http://example.org/a/b/d.html"},
		{"d/e?x=1&y=2", "http://example.org/a/b/d/e?x=1&y=2"},
		{"?page=2", "http://example.org/a/b/c.html?page=2"},
		{"~user/n.html", "http://example.org/a/b/~user/n.html"},
		{"a/b:c", "http://example.org/a/b/a/b:c"},
		{"x#f", "http://example.org/a/b/x#f"},
		{"#top", "http://example.org/a/b/c.html?q#top"},
		{"//h.test/x", "http://h.test/x"},
		{"http://h.test", "http://h.test/"},
		{"HTTP://WWW.H.Test:80/x?y=1#z", "http://www.h.test/x?y=1#z"},
		{"https://h.test:443/x", "https://h.test/x"},
		{"http://h.test:8080/x", "http://h.test:8080/x"},
		{"http://1.2.3.4/", ""}, {"http://h.123/", ""}, {"http://h.0x1f/", ""}, {"http://h:0080/", ""},
		{"http://h:99999/", ""}, {"http://h:/", ""}, {"http://xn--nxasmq6b.test/", ""}, {"http://a..b/", ""},
		{"http://u@h.test/", ""}, {"http://-h.test/", ""}, {"http:/h.test/", ""}, {"http:h", ""},
		{"./x", ""}, {"../x", ""}, {"x/..", ""}, {"http://h.test/a/../b", ""}, {"a:b", ""}, {"x#", ""},
		{"x?", ""}, {"x y", ""}, {"x%41", ""}, {"caf\u00e9", ""}, {"", ""}, {"x'y", ""}, {"x#a#b", ""},
	} {
		u, ok := r.fast.resolve(c.ref)
		switch {
		case ok != (c.want != ""):
			t.Errorf("fast path takes %q: %v, want %v", c.ref, ok, c.want != "")
		case ok && u.String() != c.want:
			t.Errorf("fast path: %q = %q, want %q", c.ref, u, c.want)
		}
	}
}
