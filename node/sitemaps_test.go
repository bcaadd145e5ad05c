package node

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/crawllog"
	"github.com/trawl-crawler/trawl/internal/testkit/testweb"
	"github.com/trawl-crawler/trawl/job"
	"github.com/trawl-crawler/trawl/robots"
)

func TestSitemapRecordRoundTrip(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 8, time.UTC)
	cases := []sitemapRecord{
		{},
		{started: at, pageDepth: 1, files: []sitemapFile{{url: "http://a.test/sitemap.xml"}}},
		{started: at, finished: at.Add(time.Minute), pageDepth: 3, files: []sitemapFile{
			{url: "http://a.test/sitemap_index.xml", robots: true, done: true},
			{url: "http://a.test/sitemaps/1.xml.gz", robots: true, depth: 1, done: true},
			{url: "http://a.test/sitemap.xml", done: true},
		}},
	}
	for _, c := range cases {
		got, err := decodeSitemapRecord(c.encode())
		if err != nil || !reflect.DeepEqual(got, c) {
			t.Errorf("decode(encode(%+v)) = %+v, %v", c, got, err)
		}
	}
	good := cases[2].encode()
	if got, err := decodeSitemapRecord(append(good, 0xff, 0x01)); err != nil || !reflect.DeepEqual(got, cases[2]) {
		t.Errorf("trailing bytes: %+v, %v; want them ignored", got, err)
	}
	bad := map[string][]byte{
		"empty":         nil,
		"version 2":     {0x02, 0, 0, 0, 0},
		"cut in header": good[:3],
		"cut in a URL":  good[:len(good)-3],
		"too many files": func() []byte {
			r := sitemapRecord{}
			for range maxSitemapFiles + 1 {
				r.files = append(r.files, sitemapFile{url: "x"})
			}
			return r.encode()
		}(),
	}
	for name, b := range bad {
		if _, err := decodeSitemapRecord(b); !errors.Is(err, errBadSitemapRecord) {
			t.Errorf("%s: decodeSitemapRecord(%x) error %v, want errBadSitemapRecord", name, b, err)
		}
	}
}

// sitemapWeb has every kind of sitemap testweb serves (hosts 5 to 20 past
// the big ones): urlsets with sitemap-only pages, an index named in
// robots.txt with a gzipped child, a malformed file, a bomb and a
// cross-host file.
var sitemapWeb = testweb.Options{Seed: 7, Hosts: 40, Latency: -1, MinPageBytes: 2000, MaxPageBytes: 4000, Sitemaps: true}

// runSitemapCrawl is harness.run with Options.Sitemaps, calling check
// with the node and job before the node closes.
func runSitemapCrawl(t *testing.T, h *harness, ctx context.Context, check func(*Node, *job.Job)) *Summary {
	t.Helper()
	n, j := h.start(t)
	select {
	case <-j.Ended():
	case <-ctx.Done():
	}
	if check != nil {
		check(n, j)
	}
	if err := n.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := j.Err(); err != nil {
		t.Fatalf("job: %v", err)
	}
	sum := n.Summary(j.ID)
	if err := n.WriteSummary(sum); err != nil {
		t.Fatal(err)
	}
	return sum
}

// analyzeSitemaps judges a crawl that reads sitemaps from the web's log:
// sitemap-only pages count as reachable, sitemap files are no extra.
func analyzeSitemaps(h *harness) *testweb.Report {
	return testweb.Analyze(h.srv.Web(), h.srv.Log(), testweb.AnalyzeOptions{
		Seeds: h.spec.Seeds, Agent: "trawl", Gap: h.opts.MinDelay, MaxDepth: h.spec.MaxDepth,
		Domain: h.spec.Domains[0], MaxParallel: 1, MaxParallelPerIP: 2, MinCoverage: 0.99, Sitemaps: true,
	})
}

// webURL is the URL of a request the web served, as the web spells it.
func webURL(h *harness, r testweb.Request) string {
	return fmt.Sprintf("http://%s:%d%s", r.Host, h.srv.Port(), r.Path)
}

// sitemapRequests counts the web's requests of each sitemap file.
func sitemapRequests(h *harness) map[string]int {
	files := map[string]bool{}
	for _, f := range h.srv.Web().Sitemaps() {
		files[f.URL] = true
	}
	out := map[string]int{}
	for _, r := range h.srv.Log() {
		if u := webURL(h, r); files[u] {
			out[u]++
		}
	}
	return out
}

// TestCrawlWithSitemaps crawls a web with every kind of sitemap and
// judges it from the web's log: every sitemap-only page found (coverage
// with sitemaps), the host gaps kept with the sitemap requests among the
// pages, nothing fetched twice, the malformed file and the bomb logged
// with what they held before the fault, every sitemap response archived.
// The "saturated Bloom filter" run sizes the URL-seen filter for one URL
// and lets it not grow, so that nearly every check is a "maybe seen": sitemap URLs must still
// all be found (the exact check settles every maybe).
func TestCrawlWithSitemaps(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: crawls of a web with sitemaps; the full suite runs it")
	}
	t.Parallel()
	for _, c := range []struct {
		name         string
		expectedURLs uint
	}{
		{"default", 0},
		{"saturated Bloom filter", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, sitemapWeb, 20*time.Millisecond)
			h.opts.ExpectedURLs = c.expectedURLs
			if c.expectedURLs == 1 {
				h.opts.MaxSeenFilterBytes = 1
			}
			sum := runSitemapCrawl(t, h, context.Background(), func(n *Node, j *job.Job) {
				if c.expectedURLs == 1 && !n.seen.MaybeSeen(uint32(j.ID), "http://never.test/queued") {
					t.Errorf("the URL-seen filter is not saturated; the run proves nothing about false positives")
				}
			})
			if sum.StopReason != job.ReasonExhausted {
				t.Errorf("StopReason = %q, want exhausted", sum.StopReason)
			}
			rep := analyzeSitemaps(h)
			if p := rep.Problems(); len(p) > 0 {
				explainMissing(t, h.srv, rep)
				t.Fatalf("the web's log shows %d problems:\n%s\n%s", len(p), strings.Join(p, "\n"), rep)
			}
			fetched := map[string]bool{}
			for _, r := range h.srv.Log() {
				fetched[webURL(h, r)] = true
			}
			only := 0
			for _, p := range h.srv.Web().Pages() {
				if p.SitemapOnly {
					only++
					if !fetched[p.URL] {
						t.Errorf("sitemap-only page %s not fetched", p.URL)
					}
				}
			}
			if only == 0 {
				t.Fatal("the web has no sitemap-only page; the test proves nothing")
			}
			for u, n := range sitemapRequests(h) {
				if n > 1 {
					t.Errorf("sitemap %s requested %d times", u, n)
				}
			}
			tot := sum.Total
			if tot.SitemapURLs < int64(only) {
				t.Errorf("%d URLs queued from sitemaps, fewer than the %d sitemap-only pages", tot.SitemapURLs, only)
			}
			if tot.SitemapKnown == 0 {
				t.Errorf("no sitemap entry handed to sitemapSeen; the sitemaps list pages linked from the home pages too")
			}
			entries := checkCrawlLog(t, h, sum)
			checkSitemapLog(t, h, entries, tot.Sitemaps)
			checkWARC(t, h, sum)
			t.Logf("coverage %.3f of %d reachable; %d sitemap files, %d URLs queued from them, %d known already; %d sitemap-only pages",
				rep.Coverage, len(rep.Reachable), tot.Sitemaps, tot.SitemapURLs, tot.SitemapKnown, only)
		})
	}
}

// checkSitemapLog checks the crawl log's lines of sitemap files: one per
// file the web served (counted as the job's Sitemaps), the malformed one
// and the bomb marked with what they kept.
func checkSitemapLog(t *testing.T, h *harness, entries []crawllog.Entry, counted int64) {
	t.Helper()
	byURL := map[string]crawllog.Entry{}
	for _, e := range entries {
		byURL[e.URL] = e
	}
	want := map[string]string{"malformed": logSitemapMalformed, "bomb": logSitemapLimit}
	served := 0
	for _, f := range h.srv.Web().Sitemaps() {
		e, ok := byURL[f.URL]
		if !ok {
			if f.Kind != "cross-host" || !strings.Contains(f.URL, "/sitemap.xml") {
				t.Errorf("%s sitemap %s: no crawl log line", f.Kind, f.URL)
			}
			continue
		}
		served++
		if e.Error != want[f.Kind] {
			t.Errorf("%s sitemap %s: crawl log error %q, want %q (detail %q)", f.Kind, f.URL, e.Error, want[f.Kind], e.Detail)
		}
		if w := want[f.Kind]; w != "" && !strings.Contains(e.Detail, "2 entries kept") {
			t.Errorf("%s sitemap %s: detail %q, want the 2 entries before the fault kept", f.Kind, f.URL, e.Detail)
		}
		if f.Kind == "bomb" && !strings.Contains(e.Detail, "MaxBytes") {
			t.Errorf("bomb %s: detail %q, want the MaxBytes limit", f.URL, e.Detail)
		}
	}
	if served == 0 {
		t.Fatal("no sitemap file in the crawl log")
	}
	// Every host is asked for /sitemap.xml: most answer 404.
	if counted < int64(served) {
		t.Errorf("the job counted %d sitemap files, the crawl log has %d of the web's", counted, served)
	}
}

// TestSitemapsAcrossRestart stops a crawl once the web has served some
// sitemap files, and resumes it: no sitemap file is fetched twice (a long
// StopGrace lets those in flight finish), every sitemap-only page is
// found, and the gaps hold across the restart.
func TestSitemapsAcrossRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a crawl of a synthetic web; the full suite runs it")
	}
	t.Parallel()
	h := newHarness(t, sitemapWeb, 20*time.Millisecond)
	// The web builds its bomb (56 MiB deflated) on the first request of
	// it, which under -race on a loaded machine takes longer than the
	// default 5 s: a fetch cut off by the stop is fetched again, rightly,
	// and this test is about the files read before it.
	h.opts.StopGrace = time.Minute
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for ctx.Err() == nil {
			served := 0
			for _, n := range sitemapRequests(h) {
				served += n
			}
			if served >= 12 {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	first := runSitemapCrawl(t, h, ctx, nil)
	cancel()
	if first.StopReason != job.ReasonSignal {
		t.Fatalf("first run: StopReason %q, want signal (it ended before the stop)", first.StopReason)
	}
	n1 := len(h.srv.Log())
	second := runSitemapCrawl(t, h, context.Background(), nil)
	if second.StopReason != job.ReasonExhausted {
		t.Errorf("second run: StopReason %q", second.StopReason)
	}
	again := 0
	for u, n := range sitemapRequests(h) {
		if n > 1 {
			again++
			t.Errorf("sitemap %s requested %d times across the restart", u, n)
		}
	}
	rep := analyzeSitemaps(h)
	for _, p := range rep.Problems() {
		t.Errorf("problem across the restart: %s", p)
	}
	t.Logf("first run %d requests (%d sitemap files), second %d (%d); coverage %.3f",
		n1, first.Total.Sitemaps, len(h.srv.Log())-n1, second.Total.Sitemaps-first.Total.Sitemaps, rep.Coverage)
}

// TestSitemapRound: which files a round begins with, which of them a slot
// of the host may fetch, and when a finished round is read again.
func TestSitemapRound(t *testing.T) {
	body := "User-agent: *\nDisallow: /private/\n" +
		"Sitemap: http://a.test/maps/index.xml\n" +
		"Sitemap: http://a.test/sitemap.xml\n" + // named and conventional: read once
		"Sitemap: http://b.test/sitemap.xml\n" + // another host
		"Sitemap: http://a.test/private/s.xml\n" + // disallowed
		"Sitemap: ftp://a.test/s.xml\n" // not http(s): dropped
	p := robots.FromResult(robots.FetchResult{Status: 200, Body: []byte(body)})
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	r := newSitemapRound("http://a.test", p, 2, now)
	var got []string
	for _, f := range r.files {
		got = append(got, fmt.Sprintf("%s robots=%v", f.url, f.robots))
	}
	want := []string{"http://a.test/maps/index.xml robots=true", "http://a.test/sitemap.xml robots=true",
		"http://b.test/sitemap.xml robots=true", "http://a.test/private/s.xml robots=true"}
	if !reflect.DeepEqual(got, want) || r.pageDepth != 2 || !r.started.Equal(now) {
		t.Errorf("newSitemapRound = %q (depth %d, started %v), want %q", got, r.pageDepth, r.started, want)
	}
	sr := &sitemapReader{agent: "trawl"}
	for _, c := range []struct{ url, why string }{
		{"http://a.test/maps/index.xml", ""},
		{"https://a.test:8443/sitemap.xml", ""}, // same host, another origin: the host's slot
		{"http://b.test/sitemap.xml", "on another host (fetched only in its own host's slot)"},
		{"http://a.test/private/s.xml", "disallowed by robots.txt"},
		{"ftp://a.test/s.xml", "not an http(s) URL"},
	} {
		if _, why := sr.fetchable(c.url, "a.test", p); why != c.why {
			t.Errorf("fetchable(%q) = %q, want %q", c.url, why, c.why)
		}
	}
	for _, c := range []struct {
		name       string
		p          siteProgress
		continuous bool
		idle       bool
	}{
		{"not begun", siteProgress{}, false, false},
		{"files left", siteProgress{rec: sitemapRecord{started: now}}, false, false},
		{"being fetched", siteProgress{rec: sitemapRecord{started: now}, busy: true}, false, true},
		{"finished", siteProgress{rec: sitemapRecord{started: now, finished: now}}, false, true},
		{"finished, continuous, fresh", siteProgress{rec: sitemapRecord{started: now, finished: now.Add(-time.Hour)}}, true, true},
		{"finished, continuous, TTL up", siteProgress{rec: sitemapRecord{started: now, finished: now.Add(-DefaultSitemapEvery)}}, true, false},
		{"finished, one-off, TTL up", siteProgress{rec: sitemapRecord{started: now, finished: now.Add(-DefaultSitemapEvery)}}, false, true},
	} {
		if got := c.p.idle(now, c.continuous, DefaultSitemapEvery); got != c.idle {
			t.Errorf("%s: idle = %v, want %v", c.name, got, c.idle)
		}
	}
}
