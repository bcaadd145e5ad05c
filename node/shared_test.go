package node

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/internal/store/urlstate"
	"github.com/trawl-crawler/trawl/internal/testkit/testweb"
	"github.com/trawl-crawler/trawl/job"
)

func TestSharedPagesKeepsTheLastMax(t *testing.T) {
	s := newSharedPages(3)
	for i := range 5 {
		s.put(fmt.Sprint("u", i), &sharedPage{status: 200 + i})
	}
	for i, want := range []int{0, 0, 202, 203, 204} {
		p := s.get(fmt.Sprint("u", i))
		if (p == nil) != (want == 0) || (p != nil && p.status != want) {
			t.Errorf("get(u%d) = %+v, want status %d (0: gone)", i, p, want)
		}
	}
	s.put("u3", &sharedPage{status: 404, at: time.Unix(1, 0)}) // replaced in place: nothing evicted
	if p := s.get("u3"); p == nil || p.status != 404 {
		t.Errorf("get(u3) after a second put = %+v, want the new page", p)
	}
	if s.get("u2") == nil || len(s.pages) != 3 {
		t.Errorf("a second put of a held URL evicted another: %d held", len(s.pages))
	}
	off := newSharedPages(0)
	off.put("u", &sharedPage{})
	if off.get("u") != nil {
		t.Error("a table of size 0 held a page")
	}
}

// pageFetches counts the web's page requests by canonical URL: robots.txt
// files and sitemaps aside (sitemaps separately, in the second map).
func pageFetches(t *testing.T, srv *testweb.Server) (pages, sitemaps map[string]int) {
	t.Helper()
	pages, sitemaps = map[string]int{}, map[string]int{}
	for _, r := range srv.Log() {
		u := canonicalOf(t, fmt.Sprintf("http://%s:%d%s", r.Host, srv.Port(), r.Path))
		switch {
		case strings.HasPrefix(r.Path, "/robots"):
		case strings.Contains(r.Path, "sitemap"):
			sitemaps[u]++
		default:
			pages[u]++
		}
	}
	return pages, sitemaps
}

// TestSharingSurvivesPauseAndRestart runs two crawls of the same web in
// one node. Crawl a is paused after a few pages while b crawls the whole
// web (and, in the second case, the node is closed and opened again on
// the same data directory); then a resumes. The web's log must show each
// URL fetched once: a takes b's fetches from the per-URL records, counted
// as its pages, its links through its own scope and seen gate.
func TestSharingSurvivesPauseAndRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: shared crawls through pauses and restarts; the full suite runs it")
	}
	t.Parallel()
	for _, tc := range []struct {
		name    string
		restart bool
	}{{"pause", false}, {"pause and restart", true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, testweb.Options{Seed: 31, Hosts: 30, BigPages: 20, Latency: -1}, 10*time.Millisecond)
			a, b := h.spec, h.spec
			a.Name, b.Name = "a", "b"
			// Takes are not paced by the host's gap, so a taking crawl may
			// follow a chain far ahead and reach a page deeper than a
			// fetching crawl did: no depth limit cuts either crawl here.
			a.MaxDepth, b.MaxDepth = 60, 60
			n, err := Open(h.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { n.Close() }()
			ja, err := n.Submit(a)
			if err != nil {
				t.Fatal(err)
			}
			jb, err := n.Submit(b)
			if err != nil {
				t.Fatal(err)
			}
			n.Start()
			pages := func(j *job.Job) int64 { p, _ := n.Progress(j.ID); return p.Pages }
			waitFor(t, time.Minute, "3 pages of crawl a", func() bool { return pages(ja) >= 3 })
			if err := n.Pause(ja.ID); err != nil {
				t.Fatal(err)
			}
			select {
			case <-jb.Ended():
			case <-time.After(2 * time.Minute):
				t.Fatal("crawl b did not end")
			}
			if tc.restart {
				if err := n.Close(); err != nil {
					t.Fatal(err)
				}
				if n, err = Open(h.opts); err != nil {
					t.Fatal(err)
				}
				if ja, jb = n.Job(ja.ID), n.Job(jb.ID); ja == nil || jb == nil {
					t.Fatal("a crawl is gone after the restart")
				}
				n.Start()
			}
			if err := n.Resume(ja.ID); err != nil {
				t.Fatal(err)
			}
			select {
			case <-ja.Ended():
			case <-time.After(2 * time.Minute):
				t.Fatal("crawl a did not end")
			}
			pa, pb := ja.Stats.Total(), jb.Stats.Total() // over both runs
			if st, why := ja.State(); st != job.Finished || why != job.ReasonExhausted {
				t.Errorf("crawl a: %s (%s), want finished (exhausted)", st, why)
			}

			fetched, sitemaps := pageFetches(t, h.srv)
			for u, c := range fetched {
				if c > 1 {
					t.Errorf("%s fetched %d times, want once", u, c)
				}
			}
			for u, c := range sitemaps {
				if c > 1 && !tc.restart { // sitemaps are shared in memory only (see docs/design/overview.md, "Nodes and jobs")
					t.Errorf("sitemap %s fetched %d times, want once", u, c)
				}
			}
			if got := pa.Pages - pa.Shared + pb.Pages - pb.Shared; got != int64(len(fetched)) {
				t.Errorf("crawls fetched %d + %d pages themselves; the web answered %d page URLs",
					pa.Pages-pa.Shared, pb.Pages-pb.Shared, len(fetched))
			}
			// Both crawls want the whole web: each counts every page.
			for name, p := range map[string]job.Tally{"a": pa, "b": pb} {
				if p.Pages != int64(len(fetched)) {
					t.Errorf("crawl %s counted %d pages (%d taken from the other), want the %d the web served",
						name, p.Pages, p.Shared, len(fetched))
				}
			}
			if pa.Shared == 0 {
				t.Error("crawl a took no page from b")
			}
			t.Logf("a: %d pages (%d taken), b: %d pages (%d taken); %d page URLs served", pa.Pages, pa.Shared, pb.Pages, pb.Shared, len(fetched))
		})
	}
}

// TestOnlyCopiesSinceCreation: a crawl takes another crawl's fetch only if
// it began at or after the taking crawl was created. Crawl x, paused from
// the start, and crawl b, created once crawl a has crawled the whole web,
// both want every page: x takes them all, b fetches them all again.
func TestOnlyCopiesSinceCreation(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a crawl of a synthetic web; the full suite runs it")
	}
	t.Parallel()
	h := newHarness(t, testweb.Options{Seed: 37, Hosts: 12, BigHosts: 1, BigPages: 20, Latency: -1}, 5*time.Millisecond)
	n, err := Open(h.opts)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	submit := func(name string) *job.Job {
		t.Helper()
		s := h.spec
		s.Name = name
		j, err := n.Submit(s)
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	wait := func(j *job.Job) {
		t.Helper()
		select {
		case <-j.Ended():
		case <-time.After(2 * time.Minute):
			t.Fatalf("crawl %s did not end", j.Spec.Name)
		}
		if st, why := j.State(); st != job.Finished || why != job.ReasonExhausted {
			t.Errorf("crawl %s: %s (%s), want finished (exhausted)", j.Spec.Name, st, why)
		}
	}
	x := submit("x")
	if err := n.Pause(x.ID); err != nil {
		t.Fatal(err)
	}
	a := submit("a")
	n.Start()
	wait(a)
	b := submit("b")
	if err := n.Resume(x.ID); err != nil {
		t.Fatal(err)
	}
	wait(b)
	wait(x)

	fetched, _ := pageFetches(t, h.srv)
	for u, c := range fetched {
		if c != 2 {
			t.Errorf("%s fetched %d times, want twice (crawls a and b)", u, c)
		}
	}
	pa, pb, px := a.Stats.Total(), b.Stats.Total(), x.Stats.Total()
	if pb.Shared != 0 || pb.Pages != int64(len(fetched)) {
		t.Errorf("crawl b: %d pages, %d taken from a; want all %d fetched itself", pb.Pages, pb.Shared, len(fetched))
	}
	if px.Shared != px.Pages || px.Pages != int64(len(fetched)) {
		t.Errorf("crawl x: %d pages, %d taken; want all %d taken", px.Pages, px.Shared, len(fetched))
	}
	t.Logf("a: %d pages, b: %d (%d taken), x: %d (%d taken); %d page URLs", pa.Pages, pb.Pages, pb.Shared, px.Pages, px.Shared, len(fetched))
}

// TestTakesRule: which fetch a crawl takes from another (takes).
func TestTakesRule(t *testing.T) {
	created := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	now := created.Add(48 * time.Hour)
	j, err := job.New(2, job.Spec{Seeds: []string{"http://a.test/"}}, created)
	if err != nil {
		t.Fatal(err)
	}
	page := urlstate.Record{}.Observe(urlstate.Observation{At: created, Status: 200, Job: 1, HasLeads: true, Leads: []string{"http://a.test/x"}})
	with := func(f func(*urlstate.Record)) urlstate.Record { r := page; f(&r); return r }
	for _, c := range []struct {
		name   string
		rec    urlstate.Record
		maxAge time.Duration
		want   bool
	}{
		{"another crawl's fetch as it was created", page, 0, true},
		{"a day later", with(func(r *urlstate.Record) { r.LastFetch = created.Add(24 * time.Hour) }), 0, true},
		{"before it was created", with(func(r *urlstate.Record) { r.LastFetch = created.Add(-time.Nanosecond) }), 0, false},
		{"its own fetch", with(func(r *urlstate.Record) { r.Job = 2 }), 0, false},
		{"leads not kept", with(func(r *urlstate.Record) { r.HasLeads, r.Leads = false, nil }), 0, false},
		{"no leads on the page", with(func(r *urlstate.Record) { r.Leads = nil }), 0, true},
		{"a failed fetch", with(func(r *urlstate.Record) { r.Status = 0 }), 0, false},
		{"never fetched", urlstate.Record{}, 0, false},
		{"continuous, younger than its shortest interval", with(func(r *urlstate.Record) { r.LastFetch = now.Add(-59 * time.Minute) }), time.Hour, true},
		{"continuous, as old as its shortest interval", with(func(r *urlstate.Record) { r.LastFetch = now.Add(-time.Hour) }), time.Hour, false},
	} {
		if got := takes(j, c.rec, c.maxAge, now); got != c.want {
			t.Errorf("%s: takes = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestContinuousCrawlSchedulesWhatItTakes: a continuous crawl that takes
// its pages from another crawl's fetches schedules each one's recrawl
// from the fetch it took, as if it had fetched the page itself.
func TestContinuousCrawlSchedulesWhatItTakes(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a continuous crawl waits for its recrawls; the full suite runs it")
	}
	t.Parallel()
	h := newHarness(t, testweb.Options{Seed: 3, Hosts: 10, BigHosts: -1, MaxPages: 6, Latency: -1}, 5*time.Millisecond)
	n, err := Open(h.opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { n.Close() }()
	spec := h.spec
	spec.Name, spec.Continuous = "continuous", true
	cj, err := n.Submit(spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Pause(cj.ID); err != nil {
		t.Fatal(err)
	}
	once := h.spec
	once.Name = "once"
	oj, err := n.Submit(once)
	if err != nil {
		t.Fatal(err)
	}
	n.Start()
	select {
	case <-oj.Ended():
	case <-time.After(time.Minute):
		t.Fatal("the one-off crawl did not end")
	}
	if err := n.Resume(cj.ID); err != nil {
		t.Fatal(err)
	}
	po, _ := n.Progress(oj.ID)
	waitFor(t, time.Minute, "the continuous crawl to take every page", func() bool {
		p, _ := n.Progress(cj.ID)
		return p.WaitingForRecrawls() && p.Pages >= po.Pages
	})
	p, _ := n.Progress(cj.ID)
	if p.Shared != p.Pages {
		t.Errorf("continuous crawl: %d pages, %d taken; want all taken (the one-off crawl fetched them since it was created)", p.Pages, p.Shared)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	scheduled := 0
	for u, v := range storedURLs(t, h.opts.DataDir) {
		r, err := urlstate.Decode(v)
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		if r.Status == 0 || isHostTaskURL(u) {
			continue
		}
		if r.DueJob != cj.ID || !r.Due.After(r.LastFetch) {
			t.Errorf("%s: due %v for job %d after the fetch at %v; want a recrawl of job %d after it", u, r.Due, r.DueJob, r.LastFetch, cj.ID)
			continue
		}
		scheduled++
	}
	if int64(scheduled) < p.Shared {
		t.Errorf("%d pages scheduled, want the %d taken", scheduled, p.Shared)
	}
}
