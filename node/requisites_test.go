package node

import (
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/job"
)

// requisiteSite is a site whose pages embed resources of every kind
// (stylesheets that @import and use fonts and images, srcset, <picture>,
// scripts, a frame, an inline <style>), some on a second host, one
// disallowed by robots.txt; it logs every request with its time.
type requisiteSite struct {
	mu    sync.Mutex
	log   []siteRequest
	files map[string]siteFile // by host ("a" or "b") and path: "a/index.html"
	url   map[string]string   // "a", "b" -> http://IP:port
}

type siteRequest struct {
	host, path string
	at         time.Time
}

type siteFile struct {
	ctype string
	body  []byte
}

func startRequisiteSite(t *testing.T) *requisiteSite {
	t.Helper()
	s := &requisiteSite{files: map[string]siteFile{}, url: map[string]string{}}
	rng := rand.New(rand.NewPCG(7, 8))
	bin := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		return b
	}
	for _, host := range []string{"a", "b"} {
		ip := map[string]string{"a": "127.0.0.1", "b": "127.0.0.2"}[host]
		ln, err := net.Listen("tcp", ip+":0")
		if err != nil {
			t.Skipf("no loopback address %s: %v", ip, err)
		}
		s.url[host] = "http://" + ln.Addr().String()
		srv := &http.Server{Handler: s.handler(host)}
		go srv.Serve(ln)
		t.Cleanup(func() { srv.Close() })
	}
	html := func(b string) siteFile { return siteFile{"text/html; charset=utf-8", []byte(b)} }
	cssf := func(b string) siteFile { return siteFile{"text/css", []byte(b)} }
	img := func(n int) siteFile { return siteFile{"image/png", bin(n)} }
	s.files["a/robots.txt"] = siteFile{"text/plain", []byte("User-agent: *\nDisallow: /private/\n")}
	s.files["a/index.html"] = html(fmt.Sprintf(`<!doctype html><html><head><title>home</title>
<link rel="stylesheet" href="/css/site.css"><link rel="icon" href="/favicon.ico">
<script src="/js/app.js"></script>
<style>@import url(/css/inline-import.css); h1 { background: url("/img/h1.png") }</style>
</head><body>
<h1>Home</h1><p>Some words about the home page of this site, enough to read as text.</p>
<img src="/img/a.png" srcset="/img/a-480.png 480w, /img/a-960.png 960w">
<picture><source srcset="/img/p.webp 1x, /img/p-2x.webp 2x" type="image/webp"><img src="/img/p.png"></picture>
<img src="%s/cdn/logo.png"><img src="/private/secret.png">
<iframe src="/frame.html"></iframe>
<a href="/page2.html">next</a>
</body></html>`, s.url["b"]))
	s.files["a/page2.html"] = html(`<!doctype html><title>two</title><p>The second page shares an image.</p><img src="/img/a.png"><img src="/img/two.png">`)
	s.files["a/frame.html"] = html(`<!doctype html><title>frame</title><img src="/img/frame.png"><a href="/from-frame.html">a link in a frame</a>`)
	s.files["a/from-frame.html"] = html(`<!doctype html><p>linked from a frame</p>`)
	s.files["a/css/site.css"] = cssf(`@import "base.css"; body { background: url(../img/bg.png) }
@font-face { font-family: F; src: url(/fonts/f.woff2) format("woff2"), url("/fonts/f.woff") format("woff") }`)
	s.files["a/css/base.css"] = cssf(`p { background-image: url(/img/base-bg.png) }`)
	s.files["a/css/inline-import.css"] = cssf(`em { background: url(/img/imported.png) }`)
	s.files["a/js/app.js"] = siteFile{"application/javascript", []byte(`console.log("app");`)}
	s.files["a/fonts/f.woff2"] = siteFile{"font/woff2", bin(3000)}
	s.files["a/fonts/f.woff"] = siteFile{"font/woff", bin(3500)}
	s.files["a/favicon.ico"] = siteFile{"image/x-icon", bin(300)}
	for _, p := range []string{"h1", "a", "a-480", "a-960", "p", "bg", "base-bg", "imported", "frame", "two"} {
		s.files["a/img/"+p+".png"] = img(1000 + len(p)*100)
	}
	s.files["a/img/p.webp"], s.files["a/img/p-2x.webp"] = img(900), img(1800)
	s.files["a/private/secret.png"] = img(500)
	s.files["b/cdn/logo.png"] = img(1200)
	s.files["b/robots.txt"] = siteFile{"text/plain", []byte("User-agent: *\nAllow: /\n")}
	return s
}

func (s *requisiteSite) handler(host string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.log = append(s.log, siteRequest{host: host, path: r.URL.Path, at: time.Now()})
		f, ok := s.files[host+r.URL.Path]
		s.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", f.ctype)
		w.Write(f.body)
	})
}

// fetched returns "host/path" of every request, robots.txt and sitemaps
// left out, sorted, and whether any was asked twice.
func (s *requisiteSite) fetched() (paths []string, twice []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := map[string]int{}
	for _, r := range s.log {
		if r.path == "/robots.txt" || r.path == "/sitemap.xml" {
			continue
		}
		k := r.host + r.path
		if n[k]++; n[k] == 1 {
			paths = append(paths, k)
		} else if n[k] == 2 {
			twice = append(twice, k)
		}
	}
	sort.Strings(paths)
	return paths, twice
}

// minGap is the shortest time between two request starts to one host.
func (s *requisiteSite) minGap(host string) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	var last time.Time
	gap := time.Duration(1<<63 - 1)
	for _, r := range s.log {
		if r.host != host {
			continue
		}
		if !last.IsZero() {
			gap = min(gap, r.at.Sub(last))
		}
		last = r.at
	}
	return gap
}

// TestRequisites: a crawl that fetches requisites archives, once each,
// everything its pages embed within reach and hops (stylesheets, what
// they import and use, srcset and <picture> candidates, scripts, icons,
// a frame's image), each body whole as served; robots.txt and the
// per-host gap hold for them as for pages. A frame within the crawl's
// scope is a page (requisites_edges_test.go has one outside it).
func TestRequisites(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: crawls of a site with requisites; the full suite runs it")
	}
	t.Parallel()
	// The frame is in the crawl's scope: a page (links first), whose
	// image is its own requisite and whose link is followed.
	base := []string{"a/index.html", "a/page2.html", "a/frame.html", "a/from-frame.html"}
	hop1 := []string{"a/css/site.css", "a/favicon.ico", "a/js/app.js", "a/css/inline-import.css", "a/img/h1.png",
		"a/img/a.png", "a/img/a-480.png", "a/img/a-960.png", "a/img/p.webp", "a/img/p-2x.webp", "a/img/p.png",
		"a/img/two.png", "a/img/frame.png"}
	hop2 := []string{"a/css/base.css", "a/img/bg.png", "a/fonts/f.woff2", "a/fonts/f.woff", "a/img/imported.png"}
	hop3 := []string{"a/img/base-bg.png"}
	cat := func(parts ...[]string) []string {
		var out []string
		for _, p := range parts {
			out = append(out, p...)
		}
		sort.Strings(out)
		return out
	}
	for _, c := range []struct {
		name  string
		reach string
		hops  int
		want  []string
	}{
		{"any host, default hops", job.RequisitesAny, 0, cat(base, hop1, hop2, hop3, []string{"b/cdn/logo.png"})},
		{"its site, two hops", job.RequisitesSite, 2, cat(base, hop1, hop2)},
		{"none", "", 0, cat(base)},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			site := startRequisiteSite(t)
			const gap = 30 * time.Millisecond
			dir := t.TempDir()
			n, err := Open(Options{DataDir: dir, MinDelay: gap, Concurrency: 4, AllowNets: loopback, NoSitemaps: true})
			if err != nil {
				t.Fatal(err)
			}
			defer n.Close()
			j, err := n.Submit(job.Spec{Seeds: []string{site.url["a"] + "/index.html"}, Requisites: c.reach, RequisiteHops: c.hops})
			if err != nil {
				t.Fatal(err)
			}
			n.Start()
			select {
			case <-j.Ended():
			case <-time.After(time.Minute):
				t.Fatal("the crawl did not end")
			}
			got, twice := site.fetched()
			if !slices.Equal(got, c.want) {
				t.Errorf("fetched %q\nwant    %q", got, c.want)
			}
			if len(twice) > 0 {
				t.Errorf("fetched twice: %q", twice)
			}
			for _, h := range []string{"a", "b"} {
				if g := site.minGap(h); g < gap {
					t.Errorf("host %s: two requests %v apart, gap %v", h, g, gap)
				}
			}
			// Queued: what was fetched, and the one robots.txt keeps out.
			if want := int64(len(c.want) - len(base) + 1); c.reach != "" && j.Stats.Requisites.Load() != want {
				t.Errorf("requisites counted %d, want %d", j.Stats.Requisites.Load(), want)
			}
			if err := n.Close(); err != nil {
				t.Fatal(err)
			}
			checkArchivedWhole(t, dir, site)
		})
	}
}

// checkArchivedWhole reads every response record under dir's warc/ and
// checks that its payload is the bytes the site served for its URL
// (readPayloads).
func checkArchivedWhole(t *testing.T, dir string, site *requisiteSite) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "warc", "*.warc.gz"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no WARC files: %v", err)
	}
	bodies := map[string][]byte{}
	for k, f := range site.files {
		host, path, _ := strings.Cut(k, "/")
		bodies[site.url[host]+"/"+path] = f.body
	}
	checked := 0
	for u, recs := range readPayloads(t, files, bodies) {
		if _, ok := bodies[u]; ok {
			checked += len(recs)
		}
	}
	if checked == 0 {
		t.Error("no response record checked")
	}
}
