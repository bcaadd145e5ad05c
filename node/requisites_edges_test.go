package node

// Edge cases of page requisites: frames that are also pages, redirects,
// two jobs sharing a fetch, routing, recrawls.

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/internal/outbox"
	"github.com/trawl-crawler/trawl/job"
)

// edgeSite serves files and redirects on two loopback hosts ("a", "b").
type edgeSite struct {
	mu    sync.Mutex
	log   []string
	files map[string]string // "a/path" -> HTML body (text/html) or "REDIR <target>"
	url   map[string]string
}

func startEdgeSite(t *testing.T, files func(s *edgeSite) map[string]string) *edgeSite {
	t.Helper()
	s := &edgeSite{url: map[string]string{}}
	for _, host := range []string{"a", "b"} {
		ip := map[string]string{"a": "127.0.0.1", "b": "127.0.0.2"}[host]
		ln, err := net.Listen("tcp", ip+":0")
		if err != nil {
			t.Skipf("no loopback %s: %v", ip, err)
		}
		s.url[host] = "http://" + ln.Addr().String()
		h := host
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			s.mu.Lock()
			if r.URL.Path != "/robots.txt" {
				s.log = append(s.log, h+r.URL.Path)
			}
			body, ok := s.files[h+r.URL.Path]
			s.mu.Unlock()
			switch {
			case !ok:
				http.NotFound(w, r)
			case strings.HasPrefix(body, "REDIR "):
				http.Redirect(w, r, strings.TrimPrefix(body, "REDIR "), http.StatusMovedPermanently)
			case strings.HasSuffix(r.URL.Path, ".png"):
				w.Header().Set("Content-Type", "image/png")
				w.Write([]byte(body))
			default:
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				w.Write([]byte(strings.ReplaceAll(body, "{NOW}", time.Now().String())))
			}
		})}
		go srv.Serve(ln)
		t.Cleanup(func() { srv.Close() })
	}
	s.files = files(s)
	return s
}

func (s *edgeSite) fetched() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := slices.Clone(s.log)
	sort.Strings(out)
	return slices.Compact(out)
}

func runEdgeJobs(t *testing.T, s *edgeSite, specs ...job.Spec) {
	t.Helper()
	dir := t.TempDir()
	n, err := Open(Options{DataDir: dir, MinDelay: 5 * time.Millisecond, Concurrency: 4, AllowNets: loopback, NoSitemaps: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	var jobs []*job.Job
	for _, sp := range specs {
		j, err := n.Submit(sp)
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, j)
	}
	n.Start()
	for _, j := range jobs {
		select {
		case <-j.Ended():
		case <-time.After(time.Minute):
			t.Fatal("the crawl did not end")
		}
	}
}

// A page that is both framed and linked is a page: turning requisites on
// must not stop the crawl at it.
func TestRequisitesFramedAndLinkedPageStillFollowed(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: crawls of a small site; the full suite runs it")
	}
	t.Parallel()
	for _, reach := range []string{"", job.RequisitesAny} {
		s := startEdgeSite(t, func(s *edgeSite) map[string]string {
			return map[string]string{
				"a/index.html":      `<!doctype html><title>i</title><iframe src="/frame.html"></iframe><a href="/frame.html">the frame as a page</a>`,
				"a/frame.html":      `<!doctype html><title>f</title><a href="/from-frame.html">next</a>`,
				"a/from-frame.html": `<!doctype html><title>n</title><p>reachable only through frame.html</p>`,
			}
		})
		runEdgeJobs(t, s, job.Spec{Seeds: []string{s.url["a"] + "/index.html"}, Requisites: reach})
		got := s.fetched()
		if !slices.Contains(got, "a/from-frame.html") {
			t.Errorf("requisites %q: fetched %q; a/from-frame.html (linked from a page that is also <a href>-linked) not reached", reach, got)
		}
	}
}

// A frameset site: every page is reached through <frame src>.
func TestRequisitesFramesetSite(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: crawls of a small site; the full suite runs it")
	}
	t.Parallel()
	for _, reach := range []string{"", job.RequisitesHost} {
		s := startEdgeSite(t, func(s *edgeSite) map[string]string {
			return map[string]string{
				"a/index.html": `<!doctype html><frameset cols="20%,80%"><frame src="/menu.html"><frame src="/main.html"></frameset>`,
				"a/menu.html":  `<!doctype html><a href="/about.html" target="main">About</a>`,
				"a/main.html":  `<!doctype html><p>main</p>`,
				"a/about.html": `<!doctype html><p>about</p>`,
			}
		})
		runEdgeJobs(t, s, job.Spec{Seeds: []string{s.url["a"] + "/index.html"}, Requisites: reach})
		got := s.fetched()
		if !slices.Contains(got, "a/about.html") {
			t.Errorf("requisites %q: fetched %q; a/about.html not reached", reach, got)
		}
	}
}

// An image on another host (reach any) that redirects on that host.
func TestRequisiteRedirects(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: crawls of a small site; the full suite runs it")
	}
	t.Parallel()
	s := startEdgeSite(t, func(s *edgeSite) map[string]string {
		return map[string]string{
			"a/index.html":    fmt.Sprintf(`<!doctype html><title>i</title><img src="%s/cdn/old.png"><img src="/img/moved.png">`, s.url["b"]),
			"b/cdn/old.png":   "REDIR /cdn/new.png",
			"b/cdn/new.png":   "PNG",
			"a/img/moved.png": "REDIR /img/new.png",
			"a/img/new.png":   "PNG",
		}
	})
	runEdgeJobs(t, s, job.Spec{Seeds: []string{s.url["a"] + "/index.html"}, Requisites: job.RequisitesAny})
	got := s.fetched()
	for _, want := range []string{"b/cdn/new.png", "a/img/new.png"} {
		if !slices.Contains(got, want) {
			t.Errorf("fetched %q; the redirect target %s of a requisite was not fetched", got, want)
		}
	}
}

// Two jobs on one node: A fetches requisites, B does not. For B the
// iframe's page is a page whose links it follows.
func TestRequisitesSharedFetchKeepsLinks(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: crawls of a small site; the full suite runs it")
	}
	t.Parallel()
	s := startEdgeSite(t, func(s *edgeSite) map[string]string {
		return map[string]string{
			"a/index.html":      `<!doctype html><title>i</title><iframe src="/frame.html"></iframe>`,
			"a/frame.html":      `<!doctype html><title>f</title><a href="/from-frame.html">next</a>`,
			"a/from-frame.html": `<!doctype html><title>n</title><p>x</p>`,
		}
	})
	seed := []string{s.url["a"] + "/index.html"}
	runEdgeJobs(t, s, job.Spec{Name: "A", Seeds: seed, Requisites: job.RequisitesAny}, job.Spec{Name: "B", Seeds: seed})
	got := s.fetched()
	if !slices.Contains(got, "a/from-frame.html") {
		t.Errorf("fetched %q; job B (no requisites) never reached a/from-frame.html: it took job A's requisite fetch of frame.html, which kept no links", got)
	}
}

// A requisite routed to its host's owner (a fleet, or another partition
// of this node) keeps its hops.
func TestRoutedRequisiteKeepsHops(t *testing.T) {
	n, err := Open(Options{DataDir: t.TempDir(), AllowNets: loopback, Partitioned: true, NoSitemaps: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	j, err := n.Submit(job.Spec{Seeds: []string{"http://a.test/"}, Requisites: job.RequisitesAny})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse("http://cdn.test/frame.html")
	b := n.db.NewBatch()
	if _, err := n.admit(b, j, []candidate{{u: u, via: "http://a.test/", requisite: 2}}, false, "a.test"); err != nil {
		t.Fatal(err)
	}
	if err := n.db.Commit(b); err != nil {
		t.Fatal(err)
	}
	found := false
	n.Outbox().Range(func(e outbox.Entry) error {
		if e.Item.URL == u.String() {
			found = true
			if e.Item.Requisite != 2 {
				t.Errorf("routed item %+v: Requisite %d, want 2", e.Item, e.Item.Requisite)
			}
		}
		return nil
	})
	if !found {
		t.Fatal("not routed")
	}
}

// In a continuous crawl a recrawled requisite is still one: its links
// are not followed, nor its own requisites past the hop limit.
func TestRecrawledRequisiteIsNoPage(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: crawls of a small site; the full suite runs it")
	}
	t.Parallel()
	s := startEdgeSite(t, func(s *edgeSite) map[string]string {
		return map[string]string{
			// A frame on another host, outside the crawl's domains: a
			// requisite, not a page.
			"a/index.html":      fmt.Sprintf(`<!doctype html><title>i</title><iframe src="%s/frame.html"></iframe>`, s.url["b"]),
			"b/frame.html":      `<!doctype html><title>f</title><img src="/img/deep.png"><a href="/from-frame.html">next</a><p>{NOW}</p>`,
			"b/img/deep.png":    "PNG",
			"b/from-frame.html": `<!doctype html><title>n</title><p>x</p>`,
		}
	})
	dir := t.TempDir()
	n, err := Open(Options{DataDir: dir, MinDelay: 5 * time.Millisecond, Concurrency: 4, AllowNets: loopback, NoSitemaps: true,
		RecrawlTick: 50 * time.Millisecond, FreshnessEvery: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if _, err := n.Submit(job.Spec{Seeds: []string{s.url["a"] + "/index.html"}, Requisites: job.RequisitesAny, RequisiteHops: 1,
		Continuous: true, RecrawlMin: time.Second, RecrawlMax: 2 * time.Second}); err != nil {
		t.Fatal(err)
	}
	n.Start()
	time.Sleep(1500 * time.Millisecond)
	first := s.fetched()
	time.Sleep(6 * time.Second)
	later := s.fetched()
	t.Logf("first round: %q", first)
	t.Logf("after recrawls: %q", later)
	if !slices.Contains(later, "b/frame.html") || countOf(s, "b/frame.html") < 2 {
		t.Errorf("the frame fetched %d times: want it recrawled (the test shows nothing otherwise)", countOf(s, "b/frame.html"))
	}
	for _, bad := range []string{"b/img/deep.png", "b/from-frame.html"} {
		if slices.Contains(later, bad) {
			t.Errorf("%s fetched: the frame (a hop-1 requisite, hops 1) was followed, or recrawled as a page", bad)
		}
	}
}

// countOf is how many times s was asked for hostPath ("b/frame.html").
func countOf(s *edgeSite, hostPath string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, p := range s.log {
		if p == hostPath {
			n++
		}
	}
	return n
}
