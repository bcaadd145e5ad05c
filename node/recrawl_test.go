package node

import (
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/frontier"
	"github.com/trawl-crawler/trawl/internal/store/partition"
	"github.com/trawl-crawler/trawl/internal/store/schedule"
	"github.com/trawl-crawler/trawl/internal/store/urlstate"
	"github.com/trawl-crawler/trawl/internal/testkit/testweb"
	"github.com/trawl-crawler/trawl/internal/testkit/warccheck"
	"github.com/trawl-crawler/trawl/job"
	"github.com/trawl-crawler/trawl/warc"
)

// validateWARCs reads every finished WARC file of a harness run with
// warcio (warccheck.Validate).
func validateWARCs(t *testing.T, h *harness) *warccheck.Report {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(h.opts.DataDir, "warc", "*.warc.gz"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := warccheck.Validate(files...)
	if err != nil {
		t.Fatal(err)
	}
	checkPayloads(t, h.srv.Web(), rep)
	return rep
}

// changingHarness is a harness over a changing synthetic web whose clock
// runs scale times faster than real time, and webTime maps a request's
// real start to the web's time (Web.Version's).
func changingHarness(t *testing.T, web testweb.Options, scale float64, gap time.Duration) (*harness, func(time.Time) time.Time) {
	t.Helper()
	web.Changing = true
	web = web.SmallPages()
	start := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	origin := time.Now()
	webTime := func(real time.Time) time.Time { return start.Add(time.Duration(float64(real.Sub(origin)) * scale)) }
	srv, err := testweb.Serve(testweb.Generate(web), testweb.ServeOptions{ChangeClock: func() time.Time { return webTime(time.Now()) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	h := newHarness(t, testweb.Options{Hosts: 1}, gap) // options and spec; its own web is replaced
	h.srv, h.opts.Hosts = srv, srv.Resolver()
	h.spec.Seeds = srv.Seeds()
	h.spec.Domains = []string{srv.Web().Options().Domain}
	return h, webTime
}

// problemsBut returns rep's problems except repeats: a continuous crawl
// requests its pages again by design.
func problemsBut(rep *testweb.Report) []string {
	var out []string
	for _, p := range rep.Problems() {
		if !strings.HasPrefix(p, "repeat: ") {
			out = append(out, p)
		}
	}
	return out
}

// TestRecrawlChangingWeb runs a continuous job over a changing web (its
// clock 3600 times real time: an hourly page changes about every second)
// with recrawl intervals of 1 to 8 seconds, and judges it from the web's
// log and the web's ground truth: every host stays polite; every refetch
// of a page on a host with honest validators whose content had not changed
// is a 304 (the recrawl was conditional), and every 304 is a page that had
// not changed; 304s are archived as server-not-modified revisits that
// warcio reads; the job's counters and freshness figures say so; and the
// schedule holds one entry per page fetched.
func TestRecrawlChangingWeb(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: recrawls of a changing web; the full suite runs it")
	}
	t.Parallel()
	h, webTime := changingHarness(t, testweb.Options{Seed: 11, Hosts: 12, BigHosts: -1, MaxPages: 6, Latency: -1}, 3600, 20*time.Millisecond)
	h.spec.Continuous = true
	h.spec.RecrawlMin, h.spec.RecrawlMax = time.Second, 8*time.Second
	h.opts.RecrawlTick, h.opts.FreshnessEvery = 50*time.Millisecond, 300*time.Millisecond
	n, j := h.start(t)
	waitFor(t, 90*time.Second, "recrawls, 304s and changes", func() bool {
		return j.Stats.NotModified.Load() >= 20 && j.Stats.Changed.Load() >= 10 && j.Stats.Recrawls.Load() >= 60
	})
	time.Sleep(500 * time.Millisecond) // a freshness scan after the last counts
	fresh, ok := j.Stats.Freshness()
	scheduled := 0
	for p := range partition.Count {
		if err := schedule.All(n.db, partition.ID(p), func(schedule.Entry) bool { scheduled++; return true }, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := n.Cancel(j.ID); err != nil {
		t.Fatal(err)
	}
	// The summary after Close, as `trawl crawl` takes it: fetches in
	// flight at the cancel are still archived and counted while the node
	// closes, and the counters must match the archive.
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	sum := n.Summary(j.ID)
	if err := n.WriteSummary(sum); err != nil {
		t.Fatal(err)
	}
	if !ok || fresh.Scheduled == 0 || fresh.Freshness <= 0 || fresh.Freshness > 1 {
		t.Errorf("freshness figures %+v (set %v): want pages scheduled and a freshness in (0, 1]", fresh, ok)
	}
	t.Logf("recrawls %d, 304 %d, changed %d; schedule %d entries; freshness %+v",
		sum.Total.Recrawls, sum.Total.NotModified, sum.Total.Changed, scheduled, fresh)

	rep := h.analyze(0.99)
	if p := problemsBut(rep); len(p) > 0 {
		t.Fatalf("the web's log shows %d problems:\n%s", len(p), strings.Join(p, "\n"))
	}
	// Every page fetched with an answer has its entry (the job was
	// running when they were counted).
	fetched := map[string]bool{}
	for _, r := range h.srv.Log() {
		if r.Status != 0 && !strings.HasSuffix(r.Path, "/robots.txt") {
			fetched[r.Host+r.Path] = true
		}
	}
	if scheduled < len(fetched)*9/10 || scheduled > len(fetched) {
		t.Errorf("schedule holds %d entries for %d pages fetched", scheduled, len(fetched))
	}
	checkConditional(t, h, webTime)
	checkNotModifiedRecords(t, h, sum.Total.NotModified)
}

// checkConditional judges each refetch on the web's honest hosts against
// the web's versions: unchanged since the fetch before means a 304,
// changed means a 200. An unconditional refetch is a check of the host's
// validators (validatorChecks): it must follow a 304 of the same page,
// and be rare.
func checkConditional(t *testing.T, h *harness, webTime func(time.Time) time.Time) {
	t.Helper()
	web := h.srv.Web()
	honest := map[string]bool{}
	for _, hi := range web.Hosts() {
		honest[hi.Name] = hi.Validators == testweb.ValidatorsHonest
	}
	port := h.srv.Port()
	last := map[string]time.Time{} // page → web time of its last answered fetch
	lastStatus := map[string]int{}
	var wasted, wrong, good304, good200, checks, refetches int
	for _, r := range h.srv.Log() {
		u := fmt.Sprintf("http://%s:%d%s", r.Host, port, r.Path)
		if r.Status == 0 || !honest[r.Host] || !web.Versioned(u) {
			continue
		}
		at := webTime(r.Start)
		prev, seen := last[u]
		prevStatus := lastStatus[u]
		last[u], lastStatus[u] = at, r.Status
		if !seen || (r.Status != http.StatusOK && r.Status != http.StatusNotModified) {
			continue
		}
		refetches++
		changed := web.Changes(u, prev, at) > 0
		switch {
		case !r.Conditional:
			checks++
			if prevStatus != http.StatusNotModified {
				t.Errorf("%s fetched without validators at web time %s after a %d: not a check of a 304", u, at, prevStatus)
			}
		case !changed && r.Status == http.StatusNotModified:
			good304++
		case changed && r.Status == http.StatusOK:
			good200++
		case !changed:
			wasted++
			if wasted <= 5 {
				t.Errorf("%s fetched in full at web time %s, unchanged since %s: the recrawl was not conditional", u, at, prev)
			}
		default:
			wrong++
			if wrong <= 5 {
				t.Errorf("%s answered 304 at %s though it changed since %s", u, at, prev)
			}
		}
	}
	t.Logf("honest hosts' refetches: %d unchanged and 304, %d changed and 200, %d unchanged in full, %d changed but 304; %d checks", good304, good200, wasted, wrong, checks)
	if checks > refetches/4+len(honest) {
		t.Errorf("%d of %d refetches were validator checks: too many", checks, refetches)
	}
	if good304 == 0 || good200 == 0 {
		t.Errorf("want both 304s for unchanged pages and 200s for changed ones")
	}
}

// checkNotModifiedRecords reads the WARC files with warcio: as many
// server-not-modified revisits as the job counted 304s, every one naming
// a response record (of the page's earlier capture) that exists.
func checkNotModifiedRecords(t *testing.T, h *harness, want int64) {
	t.Helper()
	rep := validateWARCs(t, h)
	if len(rep.Errors) > 0 {
		t.Fatalf("warcio found %d errors: %v", len(rep.Errors), rep.Errors)
	}
	snm := 0
	for _, r := range rep.Revisits {
		if r.Profile == warc.ProfileServerNotModified {
			snm++
		}
	}
	if int64(snm) != want {
		t.Errorf("%d server-not-modified revisit records, the job counted %d 304s", snm, want)
	}
	captures := map[string]bool{}
	for _, x := range rep.Responses {
		captures[x.URI+" "+x.Date] = true
	}
	referring := 0
	for _, r := range rep.Revisits {
		if r.Profile != warc.ProfileServerNotModified || r.RefersToURI == "" {
			continue
		}
		referring++
		if !captures[r.RefersToURI+" "+r.RefersToDate] || r.RefersToURI != r.URI {
			t.Errorf("304 revisit of %s refers to %s at %s: no response record of that page", r.URI, r.RefersToURI, r.RefersToDate)
		}
	}
	if referring < snm*9/10 {
		t.Errorf("%d of %d server-not-modified revisits name their capture; identity-encoded pages all should", referring, snm)
	}
}

// lastmodSite is a site of three pages whose sitemap gives each a lastmod
// the test moves, served on loopback; it counts requests per path.
type lastmodSite struct {
	mu         sync.Mutex
	lastmod    map[string]time.Time
	changefreq map[string]string // a page's <changefreq>, none if absent
	version    map[string]int
	requests   map[string]int
	srv        *http.Server
	url        string
}

func startLastmodSite(t *testing.T) *lastmodSite {
	t.Helper()
	old := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := &lastmodSite{lastmod: map[string]time.Time{"/a.html": old, "/b.html": old, "/c.html": old},
		version: map[string]int{}, requests: map[string]int{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.url = "http://" + ln.Addr().String()
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve)}
	go s.srv.Serve(ln)
	t.Cleanup(func() { s.srv.Close() })
	return s
}

func (s *lastmodSite) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests[r.URL.Path]++
	switch r.URL.Path {
	case "/robots.txt":
		fmt.Fprintf(w, "User-agent: *\nAllow: /\nSitemap: %s/sitemap.xml\n", s.url)
	case "/sitemap.xml":
		w.Header().Set("Content-Type", "application/xml")
		fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
		for _, p := range []string{"/a.html", "/b.html", "/c.html"} {
			freq := ""
			if f := s.changefreq[p]; f != "" {
				freq = "<changefreq>" + f + "</changefreq>"
			}
			fmt.Fprintf(w, "<url><loc>%s%s</loc><lastmod>%s</lastmod>%s</url>", s.url, p, s.lastmod[p].Format(time.RFC3339), freq)
		}
		fmt.Fprint(w, "</urlset>")
	case "/a.html", "/b.html", "/c.html":
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<!doctype html><title>%s</title><p>version %d of %s</p>", r.URL.Path, s.version[r.URL.Path], r.URL.Path)
	default:
		http.NotFound(w, r)
	}
}

// TestSitemapLastmodBringsRecrawlForward: a continuous job whose pages
// are not due for a minute reads its sitemap again every two seconds (a
// host task, since no page of the host is due); when the sitemap gives
// one page a lastmod after its fetch, that page alone is fetched again
// at once.
func TestSitemapLastmodBringsRecrawlForward(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: waits for a recrawl; the full suite runs it")
	}
	t.Parallel()
	site := startLastmodSite(t)
	n, err := Open(Options{DataDir: t.TempDir(), MinDelay: 20 * time.Millisecond, Concurrency: 4, AllowNets: loopback,
		RecrawlTick: 50 * time.Millisecond, FreshnessEvery: time.Second, SitemapEvery: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	j, err := n.Submit(job.Spec{Seeds: []string{site.url + "/a.html"}, Continuous: true, RecrawlMin: time.Minute, RecrawlMax: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	n.Start()
	count := func(p string) int {
		site.mu.Lock()
		defer site.mu.Unlock()
		return site.requests[p]
	}
	waitFor(t, 30*time.Second, "every listed page fetched", func() bool {
		return count("/a.html") == 1 && count("/b.html") == 1 && count("/c.html") == 1
	})
	// b.html changes after its fetch, and the sitemap says so.
	site.mu.Lock()
	site.version["/b.html"]++
	site.lastmod["/b.html"] = time.Now().Add(time.Second).UTC()
	sitemapReads := site.requests["/sitemap.xml"]
	site.mu.Unlock()
	waitFor(t, 30*time.Second, "b.html fetched again", func() bool { return count("/b.html") == 2 })
	if a, c := count("/a.html"), count("/c.html"); a != 1 || c != 1 {
		t.Errorf("a.html fetched %d times, c.html %d: want once each (not due for a minute, unchanged)", a, c)
	}
	if got := count("/sitemap.xml"); got <= sitemapReads {
		t.Errorf("sitemap read %d times in all, %d before the change: want a read after it", got, sitemapReads)
	}
	if got := j.Stats.BroughtForward.Load(); got != 1 {
		t.Errorf("BroughtForward = %d, want 1", got)
	}
	// The web answered; the node records the fetch right after.
	waitFor(t, 10*time.Second, "the refetch recorded as a change", func() bool { return j.Stats.Changed.Load() >= 1 })
	if got := j.Stats.Changed.Load(); got != 1 {
		t.Errorf("Changed = %d, want 1 (b.html)", got)
	}
}

// TestSitemapChangefreqStatesTheFirstInterval: a continuous job keeps
// the interval each page's <changefreq> states in its record, before the
// page's first fetch and through it, and the page's first recrawl
// interval follows the statement: a page said to change hourly is due
// before one that says nothing, which is due before one said to change
// yearly. A later listing that states nothing keeps the statement; one
// that states another interval replaces it.
func TestSitemapChangefreqStatesTheFirstInterval(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a continuous crawl; the full suite runs it")
	}
	t.Parallel()
	site := startLastmodSite(t)
	site.changefreq = map[string]string{"/a.html": "hourly", "/b.html": "yearly"}
	n, err := Open(Options{DataDir: t.TempDir(), MinDelay: 20 * time.Millisecond, Concurrency: 4, AllowNets: loopback,
		RecrawlTick: 50 * time.Millisecond, FreshnessEvery: time.Second, SitemapEvery: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if _, err := n.Submit(job.Spec{Seeds: []string{site.url + "/a.html"}, Continuous: true, RecrawlMin: time.Minute, RecrawlMax: 30 * 24 * time.Hour}); err != nil {
		t.Fatal(err)
	}
	n.Start()
	entries := func() map[string]schedule.Entry {
		m := map[string]schedule.Entry{}
		for p := range schedule.Partitions {
			if err := schedule.All(n.db, partition.ID(p), func(e schedule.Entry) bool {
				m[strings.TrimPrefix(e.URL, site.url)] = e
				return true
			}, func(key []byte, err error) { t.Errorf("schedule entry %q: %v", key, err) }); err != nil {
				t.Fatal(err)
			}
		}
		return m
	}
	var got map[string]schedule.Entry
	waitFor(t, 30*time.Second, "every listed page scheduled for a recrawl", func() bool {
		got = entries()
		_, a := got["/a.html"]
		_, b := got["/b.html"]
		_, c := got["/c.html"]
		return a && b && c
	})
	a, b, c := got["/a.html"], got["/b.html"], got["/c.html"]
	if a.Stated != time.Hour || b.Stated != 365*24*time.Hour || c.Stated != 0 {
		t.Errorf("stated intervals a %v, b %v, c %v; want 1h, 8760h and none", a.Stated, b.Stated, c.Stated)
	}
	t.Logf("first intervals: a (hourly) %v, c (nothing stated) %v, b (yearly) %v", a.Interval, c.Interval, b.Interval)
	if !(a.Interval < c.Interval && c.Interval < b.Interval) {
		t.Errorf("first intervals: a (hourly) %v, c (nothing stated) %v, b (yearly) %v; want them in that order", a.Interval, c.Interval, b.Interval)
	}
	// The site drops a's statement and says b changes daily.
	site.mu.Lock()
	site.changefreq = map[string]string{"/b.html": "daily"}
	reads := site.requests["/sitemap.xml"]
	site.mu.Unlock()
	waitFor(t, 30*time.Second, "the sitemap read twice more", func() bool {
		site.mu.Lock()
		defer site.mu.Unlock()
		return site.requests["/sitemap.xml"] >= reads+2
	})
	rec := func(p string) urlstate.Record {
		return n.loadRecord(frontier.Item{URL: site.url + p, Host: b.Host})
	}
	if ra, rb := rec("/a.html"), rec("/b.html"); ra.Stated != time.Hour || rb.Stated != 24*time.Hour {
		t.Errorf("after the site changed its sitemap: a stated %v, b %v; want a's hourly kept (nothing stated now), b daily", ra.Stated, rb.Stated)
	}
}

// TestChangedSince: what counts as a change of a page for its change
// history.
func TestChangedSince(t *testing.T) {
	d1, d2 := [32]byte{1}, [32]byte{2}
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	page := func(changed ...bool) urlstate.Record {
		r := urlstate.Record{Status: 200, Digest: d1, HasDigest: true, SimHash: 0xABCD}
		for i, c := range changed {
			r.History = append(r.History, urlstate.Event{At: at.Add(time.Duration(i) * time.Hour), Status: 200, Changed: c})
		}
		return r
	}
	obs := func(status int, d [32]byte, sim uint64) urlstate.Observation {
		return urlstate.Observation{Status: status, Digest: d, HasDigest: true, SimHash: sim, NotModified: status == 304}
	}
	for _, c := range []struct {
		name string
		prev urlstate.Record
		o    urlstate.Observation
		want bool
	}{
		{"same digest", page(), obs(200, d1, 0xABCD), false},
		{"304", page(), obs(304, [32]byte{}, 0), false},
		{"new digest, new text", page(), obs(200, d2, 0x1234), true},
		{"new digest, same text, steady page", page(false, false), obs(200, d2, 0xABCD), true},
		{"new digest, same text, one change before", page(false, true), obs(200, d2, 0xABCD), true},
		{"new digest, same text, churning page", page(true, true), obs(200, d2, 0xABCD), false},
		{"new digest, new text, churning page", page(true, true), obs(200, d2, 0x1234), true},
		{"200 then 404", page(), obs(404, d2, 0), true},
		{"304 then 200 same digest", urlstate.Record{Status: 304, Digest: d1, HasDigest: true}, obs(200, d1, 0), false},
		{"failed before, same digest", urlstate.Record{Digest: d1, HasDigest: true}, obs(200, d1, 0), false},
	} {
		if got := changedSince(c.prev, c.o); got != c.want {
			t.Errorf("%s: changedSince = %v, want %v", c.name, got, c.want)
		}
	}
}
