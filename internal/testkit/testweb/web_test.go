package testweb

import (
	"bytes"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// small is a web small enough for unit tests.
func small(seed int64) Options {
	return Options{Seed: seed, Hosts: 24, BigHosts: 1, BigPages: 12, MinPages: 3, MaxPages: 6,
		MinPageBytes: 2 << 10, MaxPageBytes: 4 << 10, Latency: -1}
}

func TestGenerateDeterministic(t *testing.T) {
	for _, o := range []Options{small(1), {Seed: 7, Hostile: true, MinPageBytes: 1000, MaxPageBytes: 2000}} {
		a, b := Generate(o), Generate(o)
		if !reflect.DeepEqual(a.Pages(), b.Pages()) {
			t.Fatalf("Generate(%+v) twice: Pages differ", o)
		}
		if !reflect.DeepEqual(a.Hosts(), b.Hosts()) {
			t.Fatalf("Generate(%+v) twice: Hosts differ", o)
		}
		for i, h := range a.hosts {
			for j, r := range h.res {
				if r.kind != kindHTML {
					continue
				}
				if x, y := a.renderHTML(r), b.renderHTML(b.hosts[i].res[j]); !bytes.Equal(x, y) {
					t.Fatalf("Generate(%+v) twice: %s renders differently", o, r.url(a))
				}
			}
		}
	}
	if reflect.DeepEqual(Generate(small(1)).Pages(), Generate(small(2)).Pages()) {
		t.Errorf("Generate with seeds 1 and 2 gave the same pages")
	}
}

func TestOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		o    Options
		want string // substring of the error; "" for none
	}{
		{Options{}, ""},
		{Options{Hosts: 5, BigHosts: 1}, ""},
		{Options{Hosts: -1}, "Hosts"},
		{Options{Hosts: 2, BigHosts: 3}, "BigHosts"},
		{Options{MinPages: 9, MaxPages: 3}, "MaxPages"},
		{Options{MinPageBytes: 100, MaxPageBytes: 10}, "MaxPageBytes"},
		{Options{Latency: 5e6, MaxLatency: 1e6}, "MaxLatency"},
		{Options{Port: 70000}, "Port"},
		{Options{Domain: "a/b"}, "Domain"},
	} {
		err := tc.o.Validate()
		got := ""
		if err != nil {
			got = err.Error()
		}
		if tc.want == "" && err != nil || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("Validate(%+v) = %q, want mention of %q", tc.o, got, tc.want)
		}
	}
}

// checkCanonical reports why u is not in canonical form, or "".
func checkCanonical(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return err.Error()
	}
	switch {
	case p.Scheme != "http":
		return "scheme not lower-case http"
	case p.Host != strings.ToLower(p.Host):
		return "host not lower case"
	case strings.HasSuffix(p.Host, ":80") || strings.HasSuffix(p.Host, ":"):
		return "default or empty port"
	case strings.Contains(u, "#"):
		return "fragment"
	case p.User != nil:
		return "userinfo"
	}
	path := p.EscapedPath()
	for _, seg := range strings.Split(path, "/") {
		if seg == "." || seg == ".." {
			return "dot segment"
		}
	}
	raw := path + "?" + p.RawQuery
	for i := 0; i < len(raw); i++ {
		if raw[i] != '%' {
			continue
		}
		if i+2 >= len(raw) {
			return "truncated escape"
		}
		hex := raw[i+1 : i+3]
		if hex != strings.ToUpper(hex) {
			return "lower-case escape " + hex
		}
		var c byte
		fmt.Sscanf(hex, "%02X", &c)
		if isUnreserved(c) {
			return "escaped unreserved " + hex
		}
	}
	if p.RawQuery != "" {
		var prev string
		for _, kv := range strings.Split(p.RawQuery, "&") {
			k, _, _ := strings.Cut(kv, "=")
			if k == "" {
				return "empty pair"
			}
			if strings.HasPrefix(k, "utm_") || k == "gclid" || k == "fbclid" {
				return "tracking parameter " + k
			}
			if k < prev {
				return "query keys not sorted"
			}
			prev = k
		}
	}
	return ""
}

func TestPagesCanonical(t *testing.T) {
	w := Generate(Options{Seed: 3, Hostile: true, Port: 8123})
	for _, p := range w.Pages() {
		if why := checkCanonical(p.URL); why != "" {
			t.Errorf("page %q is not canonical: %s", p.URL, why)
		}
		_, port, pq, err := canonAbsolute(p.URL)
		if err != nil || port != 8123 || w.urlOf(w.byName[strings.Split(strings.TrimPrefix(p.URL, "http://"), ":")[0]], pq) != p.URL {
			t.Errorf("canonAbsolute(%q) = %d, %q, %v; want a fixed point", p.URL, port, pq, err)
		}
	}
	for _, u := range []string{"http://a.test/x?b=1&a=2", "http://A.test/", "http://a.test/%7e", "http://a.test/a/../b", "http://a.test/#f", "http://a.test/?utm_source=x"} {
		if checkCanonical(u) == "" {
			t.Errorf("checkCanonical(%q) = ok, want a complaint", u)
		}
	}
}

// TestLinksResolve checks that every link the generator writes, resolved
// the RFC 3986 way by net/url and canonicalised, leads to the resource the
// ground truth says it does.
func TestLinksResolve(t *testing.T) {
	w := Generate(Options{Seed: 4, Hostile: true, Port: 8124})
	checked := 0
	for _, h := range w.hosts {
		for _, r := range h.res {
			if r.body == nil {
				continue
			}
			base, err := url.Parse(r.url(w))
			if err != nil {
				t.Fatal(err)
			}
			if r.body.base != "" {
				if base, err = url.Parse(w.withPort(r.body.base)); err != nil {
					t.Fatal(err)
				}
			}
			for _, l := range r.body.links {
				if l.to == nil {
					continue
				}
				ref, err := url.Parse(w.withPort(l.raw))
				if err != nil {
					t.Errorf("%s: link %q: %v", r.url(w), l.raw, err)
					continue
				}
				abs := base.ResolveReference(ref)
				name, port, pq, err := canonAbsolute(abs.String())
				got := fmt.Sprintf("http://%s:%d%s", name, port, pq)
				if want := l.to.url(w); err != nil || got != want {
					t.Errorf("on %s, link %q resolves to %q (%v), want %q", r.url(w), l.raw, got, err, want)
				}
				checked++
			}
		}
	}
	if checked < 1000 {
		t.Errorf("checked %d links, want a web with at least 1000", checked)
	}
}

func TestCanonRequestURI(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"/", "/"},
		{"", "/"},
		{"/a/./b/../c", "/a/c"},
		{"/a/%2E%2E/c", "/c"},
		{"/../x", "/x"},
		{"/%7Euser/", "/~user/"},
		{"/%7euser/%41", "/~user/A"},
		{"/caf%c3%a9", "/caf%C3%A9"},
		{"/café", "/caf%C3%A9"},
		{"/a b", "/a%20b"},
		{"/100%", "/100%25"},
		{"/s?b=2&a=1", "/s?a=1&b=2"},
		{"/s?b=2&a=1&b=1", "/s?a=1&b=2&b=1"},
		{"/s?utm_source=x&utm_medium=y", "/s"},
		{"/s?gclid=1&q=x&fbclid=2&UTM_Campaign=z", "/s?q=x"},
		{"/s?&&a=1&", "/s?a=1"},
		{"/p#frag", "/p"},
	} {
		if got := canonRequestURI(tc.in); got != tc.want {
			t.Errorf("canonRequestURI(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestRelativeRef(t *testing.T) {
	for _, tc := range []struct{ dir, pq, want string }{
		{"/", "/page1.html", "page1.html"},
		{"/", "/", "./"},
		{"/docs/", "/docs/", "./"},
		{"/docs/", "/page1.html", "../page1.html"},
		{"/a/b/", "/a/c/x.html", "../c/x.html"},
		{"/", "/a/b/x.html", "a/b/x.html"},
		{"/docs/", "/search?a=1&b=x", "../search?a=1&b=x"},
		{"/blog/2024/", "/blog/", "../"},
	} {
		if got := relativeRef(tc.dir, tc.pq); got != tc.want {
			t.Errorf("relativeRef(%q, %q) = %q, want %q", tc.dir, tc.pq, got, tc.want)
		}
	}
}

func TestTrapNeverReachable(t *testing.T) {
	w := Generate(Options{Seed: 5})
	traps := 0
	for _, h := range w.hosts {
		if h.trap {
			traps++
		}
	}
	if traps == 0 {
		t.Fatal("default web has no trap host")
	}
	for u := range w.Reachable(w.Seeds(), "trawl", 0) {
		if strings.Contains(u, "/calendar/") {
			t.Errorf("Reachable contains trap page %s", u)
		}
	}
}

// TestGolden lists the URLs of a small web so that generator changes show
// in review. Regenerate with go test -run Golden -update.
func TestGolden(t *testing.T) {
	w := Generate(Options{Seed: 1, Hosts: 5, BigHosts: 1, BigPages: 8, MaxPages: 6})
	var b strings.Builder
	for _, h := range w.Hosts() {
		fmt.Fprintf(&b, "host %s ip=%s big=%v shared=%v robots=%s delay=%v latency=%v trap=%v\n",
			h.Name, h.IP, h.Big, h.SharedIP, h.Robots, h.CrawlDelay, h.Latency, h.Trap)
	}
	b.WriteString("----\n")
	for _, p := range w.Pages() {
		fmt.Fprintf(&b, "%d %s", p.Status, p.URL)
		if p.Location != "" {
			fmt.Fprintf(&b, " -> %s", p.Location)
		}
		if p.Note != "" {
			fmt.Fprintf(&b, " (%s)", p.Note)
		}
		b.WriteString("\n")
	}
	b.WriteString("----\nreachable for trawl from " + strings.Join(w.Seeds(), " ") + "\n")
	for _, u := range sortedKeys(w.Reachable(w.Seeds(), "trawl", 0)) {
		b.WriteString(u + "\n")
	}
	golden := filepath.Join("testdata", "web5.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("read golden file (run with -update to create it): %v", err)
	}
	if got := b.String(); got != string(want) {
		t.Errorf("generated web differs from %s (run with -update and review the diff):\n%s", golden, got)
	}
}

func FuzzCanonRequestURI(f *testing.F) {
	for _, s := range []string{"/", "/a/../b?x=1&a=2", "/%7e%zz%", "/caf\xc3\xa9?utm_x=1#f", "/./%2e/..", "?&=&"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := canonRequestURI(s)
		if !strings.HasPrefix(c, "/") {
			t.Errorf("canonRequestURI(%q) = %q, want a path starting with /", s, c)
		}
		if again := canonRequestURI(c); again != c {
			t.Errorf("canonRequestURI(%q) = %q, then %q: not idempotent", s, c, again)
		}
	})
}
