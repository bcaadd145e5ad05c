package testweb

import (
	"errors"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/trawl-crawler/trawl/robots"
	"github.com/trawl-crawler/trawl/sitemap"
)

func sitemapOptions() Options {
	return Options{Seed: 7, Hosts: 40, Latency: -1, MinPageBytes: 2000, MaxPageBytes: 4000, Sitemaps: true}
}

// TestSitemapsServed fetches every sitemap file of a web over loopback,
// parses it with package sitemap and checks it against Web.Sitemaps: each
// lists exactly the pages the web says, an index is named in robots.txt,
// the malformed file errors after its good entries, the bomb stops at the
// 50 MiB limit, and the host rule refuses the cross-host file's pages.
func TestSitemapsServed(t *testing.T) {
	srv := serve(t, sitemapOptions())
	c := client(t, srv)
	files := srv.Web().Sitemaps()
	kinds := map[string]int{}
	for _, f := range files {
		kinds[f.Kind]++
	}
	for _, k := range []string{"urlset", "index", "malformed", "bomb", "cross-host"} {
		if kinds[k] == 0 {
			t.Fatalf("no %s sitemap among %d files: %v", k, len(files), kinds)
		}
	}
	for _, f := range files {
		t.Run(strings.TrimPrefix(f.URL, "http://"), func(t *testing.T) {
			status, _, body := get(t, c, f.URL)
			if status != 200 {
				t.Fatalf("GET %s: status %d", f.URL, status)
			}
			if got := strings.HasPrefix(body, "\x1f\x8b"); got != f.Gzip {
				t.Errorf("GET %s: gzip %v, want %v", f.URL, got, f.Gzip)
			}
			s, err := sitemap.Parse(strings.NewReader(body), sitemap.Options{})
			var le *sitemap.LimitError
			var se *sitemap.SyntaxError
			switch f.Kind {
			case "malformed":
				if !errors.As(err, &se) {
					t.Errorf("Parse(%s): error %v, want a *SyntaxError", f.URL, err)
				}
			case "bomb":
				if !errors.As(err, &le) || le.Limit != "MaxBytes" || s.Bytes != sitemap.DefaultMaxBytes {
					t.Errorf("Parse(%s): error %v after %d bytes, want the MaxBytes limit at %d", f.URL, err, s.Bytes, sitemap.DefaultMaxBytes)
				}
				if len(body) > 1<<20 {
					t.Errorf("bomb body is %d bytes compressed, want it small", len(body))
				}
			default:
				if err != nil {
					t.Errorf("Parse(%s): %v", f.URL, err)
				}
			}
			var got []SitemapEntry
			for _, e := range s.Entries {
				got = append(got, SitemapEntry{URL: e.Loc, LastMod: e.LastMod})
			}
			if !slices.Equal(got, f.Entries) {
				t.Errorf("Parse(%s) lists\n%v\nthe web says\n%v", f.URL, got, f.Entries)
			}
			at, _ := url.Parse(f.URL)
			var robotsURL *url.URL
			if f.ViaRobots {
				robotsURL, _ = url.Parse("http://" + f.Host + ":" + strconv.Itoa(srv.Port()) + "/robots.txt")
			}
			for _, e := range s.Entries {
				loc, _ := url.Parse(e.Loc)
				if ok := sitemap.Allowed(at, loc, robotsURL); ok != (f.Kind != "cross-host") {
					t.Errorf("Allowed(%s, %s) = %v for a %s file", f.URL, e.Loc, ok, f.Kind)
				}
			}
			if f.InRobots {
				_, _, rb := get(t, c, "http://"+f.Host+":"+strconv.Itoa(srv.Port())+"/robots.txt")
				if named := robots.Parse([]byte(rb)).Sitemaps(); !slices.Contains(named, f.URL) {
					t.Errorf("robots.txt of %s names sitemaps %v, want %s", f.Host, named, f.URL)
				}
			}
		})
	}
}

// TestSitemapOnlyReachability: sitemap-only pages are listed by a sitemap
// and linked from nowhere, so only a crawler that reads sitemaps reaches
// them; with sitemaps off the web is the one it always was.
func TestSitemapOnlyReachability(t *testing.T) {
	o := sitemapOptions()
	w := Generate(o)
	var only []string
	for _, p := range w.Pages() {
		if p.SitemapOnly {
			only = append(only, p.URL)
			if p.Note != "sitemap-only" || p.Status != 200 {
				t.Errorf("sitemap-only page %s: note %q status %d", p.URL, p.Note, p.Status)
			}
		}
	}
	if len(only) == 0 {
		t.Fatal("no sitemap-only pages")
	}
	listed := map[string]bool{}
	for _, f := range w.Sitemaps() {
		for _, e := range f.Entries {
			listed[e.URL] = true
		}
	}
	plain := w.Reachable(w.Seeds(), "trawl", 0)
	with := w.ReachableWithSitemaps(w.Seeds(), "trawl", 0)
	for _, u := range only {
		if !listed[u] {
			t.Errorf("sitemap-only page %s is in no sitemap", u)
		}
		if plain[u] {
			t.Errorf("sitemap-only page %s reachable without sitemaps: something links to it", u)
		}
		if !with[u] && !w.Disallowed(u, "trawl") {
			t.Errorf("sitemap-only page %s not reachable with sitemaps", u)
		}
	}
	for u := range plain {
		if !with[u] {
			t.Errorf("%s reachable without sitemaps but not with them", u)
		}
	}
	if len(with) <= len(plain) {
		t.Errorf("sitemaps add nothing: %d reachable with, %d without", len(with), len(plain))
	}
	// The cross-host file's pages come from elsewhere, never through it:
	// reading sitemaps adds only sitemap-only pages here.
	for u := range with {
		if !plain[u] && !slices.Contains(only, u) {
			t.Errorf("%s reachable only with sitemaps but not sitemap-only", u)
		}
	}

	o.Sitemaps = false
	off := Generate(o)
	if len(off.Sitemaps()) != 0 {
		t.Errorf("Sitemaps off: %d sitemap files", len(off.Sitemaps()))
	}
	for _, p := range off.Pages() {
		if p.SitemapOnly {
			t.Errorf("Sitemaps off: sitemap-only page %s", p.URL)
		}
	}
}
