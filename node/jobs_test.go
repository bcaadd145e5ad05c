package node

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/internal/store"
	"github.com/trawl-crawler/trawl/internal/testkit/storetest"
	"github.com/trawl-crawler/trawl/internal/testkit/testweb"
	"github.com/trawl-crawler/trawl/job"
	"github.com/trawl-crawler/trawl/urlnorm"
)

// waitFor polls cond every few milliseconds until it holds or d passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", d, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestTwoJobsShareHostsAndPages runs two jobs over the same hosts of one
// synthetic web in one node at once. The web's log must show one host's
// rate (no gap shorter than the rule), no robots.txt violation and no URL
// fetched twice; the jobs' counters must add up to what the web served;
// and a URL both jobs wanted is fetched once and counted by both.
func TestTwoJobsShareHostsAndPages(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a crawl of a synthetic web; the full suite runs it")
	}
	t.Parallel()
	h := newHarness(t, testweb.Options{Seed: 17, Hosts: 120, BigPages: 15}, 30*time.Millisecond)
	seeds := h.srv.Seeds()
	if len(seeds) < 2 {
		t.Fatalf("the web has %d seeds, want 2 or more", len(seeds))
	}
	// The jobs overlap without being equal: a wants the pages near the
	// first seed, b the whole web, starting from the last seed.
	a, b := h.spec, h.spec
	a.Name, a.Seeds, a.MaxDepth = "a", seeds[:1], 3
	b.Name, b.Seeds = "b", append([]string{seeds[len(seeds)-1]}, seeds...)

	n, err := Open(h.opts)
	if err != nil {
		t.Fatal(err)
	}
	ja, err := n.Submit(a)
	if err != nil {
		t.Fatal(err)
	}
	jb, err := n.Submit(b)
	if err != nil {
		t.Fatal(err)
	}
	if ja.ID == jb.ID {
		t.Fatalf("both jobs have ID %d", ja.ID)
	}
	n.Start()
	for _, j := range []*job.Job{ja, jb} {
		select {
		case <-j.Ended():
		case <-time.After(2 * time.Minute):
			t.Fatalf("job %d did not end", j.ID)
		}
	}
	pa, _ := n.Progress(ja.ID)
	pb, _ := n.Progress(jb.ID)
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	for _, j := range []*job.Job{ja, jb} {
		if st, why := j.State(); st != job.Finished || why != job.ReasonExhausted {
			t.Errorf("job %d: %s (%s), want finished (exhausted)", j.ID, st, why)
		}
	}

	rep := h.analyze(0.99)
	if p := rep.Problems(); len(p) > 0 {
		explainMissing(t, h.srv, rep)
		t.Fatalf("the web's log shows %d problems:\n%s\n%s", len(p), strings.Join(p, "\n"), rep)
	}
	log := h.srv.Log()
	responses := 0
	for _, r := range log {
		if r.Status != 0 && !strings.HasPrefix(r.Path, "/robots") && r.Path != "/sitemap.xml" { // robots.txt and sitemaps are no pages
			responses++
		}
	}
	if got := pa.Requests + pb.Requests; got != int64(len(log)) {
		t.Errorf("jobs sent %d + %d = %d requests; the web served %d", pa.Requests, pb.Requests, got, len(log))
	}
	if got := pa.Pages - pa.Shared + pb.Pages - pb.Shared; got != int64(responses) {
		t.Errorf("jobs fetched %d + %d pages themselves; the web answered %d page requests",
			pa.Pages-pa.Shared, pb.Pages-pb.Shared, responses)
	}
	if pa.Shared == 0 || pb.Shared == 0 || pa.Pages == pa.Shared || pb.Pages == pb.Shared {
		t.Errorf("job a got %d pages (%d shared), b %d (%d shared); want each to fetch some and share some",
			pa.Pages, pa.Shared, pb.Pages, pb.Shared)
	}

	// The first seed is wanted by both jobs: fetched once, counted by both.
	db := storetest.OpenDir(t, filepath.Join(h.opts.DataDir, "state"), store.Options{})
	defer db.Close()
	fetched := map[string]int{}
	for _, r := range log {
		fetched[canonicalOf(t, fmt.Sprintf("http://%s:%d%s", r.Host, h.srv.Port(), r.Path))]++
	}
	for _, s := range seeds[:1] {
		u := canonicalOf(t, s)
		if fetched[u] != 1 {
			t.Errorf("seed %s fetched %d times, want once", u, fetched[u])
		}
		host := hostOf(t, u)
		for _, j := range []*job.Job{ja, jb} {
			if ok, err := db.Has(store.SeenKey(j.ID, host, u)); !ok || err != nil {
				t.Errorf("seed %s: job %d has no seen key (%v)", u, j.ID, err)
			}
		}
	}
	t.Logf("job a: %d pages (%d shared), job b: %d pages (%d shared); the web answered %d page requests",
		pa.Pages, pa.Shared, pb.Pages, pb.Shared, responses)
}

func canonicalOf(t *testing.T, raw string) string {
	t.Helper()
	u, err := urlnorm.Parse(raw, nil)
	if err != nil {
		t.Fatalf("urlnorm.Parse(%q): %v", raw, err)
	}
	return urlnorm.Normalize(u).String()
}

func hostOf(t *testing.T, canonical string) string {
	t.Helper()
	u, err := urlnorm.Parse(canonical, nil)
	if err != nil {
		t.Fatal(err)
	}
	return urlnorm.HostKey(u)
}

// TestPauseResumeCancel steers three jobs on disjoint hosts while the node
// runs: a paused job sends nothing until it is resumed and then finishes
// without fetching anything twice; a cancelled job sends nothing more and
// its queued URLs are dropped.
func TestPauseResumeCancel(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a crawl of a synthetic web; the full suite runs it")
	}
	t.Parallel()
	h := newHarness(t, testweb.Options{Seed: 23, Hosts: 120, BigPages: 30, BigHosts: 3}, 30*time.Millisecond)
	seeds := h.srv.Seeds()
	if len(seeds) < 3 {
		t.Fatalf("the web has %d seeds, want 3", len(seeds))
	}
	n, err := Open(h.opts)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	var jobs [3]*job.Job
	var hosts [3]string
	for i := range jobs {
		spec := h.spec
		hosts[i] = hostOf(t, canonicalOf(t, seeds[i]))
		spec.Name, spec.Seeds, spec.Domains = fmt.Sprint("job", i), seeds[i:i+1], []string{hosts[i]}
		if jobs[i], err = n.Submit(spec); err != nil {
			t.Fatal(err)
		}
	}
	paused, running, cancelled := jobs[0], jobs[1], jobs[2]
	n.Start()
	pages := func(j *job.Job) int64 { p, _ := n.Progress(j.ID); return p.Pages }
	served := func(host string, after time.Time) int {
		c := 0
		for _, r := range h.srv.Log() {
			if r.Host == host && r.Start.After(after) {
				c++
			}
		}
		return c
	}

	waitFor(t, time.Minute, "3 pages of the job to pause", func() bool { return pages(paused) >= 3 })
	if err := n.Pause(paused.ID); err != nil {
		t.Fatal(err)
	}
	pausedAt := time.Now()
	waitFor(t, time.Minute, "3 pages of the job to cancel", func() bool { return pages(cancelled) >= 3 })
	if err := n.Cancel(cancelled.ID); err != nil {
		t.Fatal(err)
	}
	cancelledAt := time.Now()
	select {
	case <-running.Ended():
	case <-time.After(time.Minute):
		t.Fatal("the running job did not end")
	}
	waitFor(t, time.Minute, "the cancelled job's queue to be dropped", func() bool {
		p, _ := n.Progress(cancelled.ID)
		return p.Queued == 0 && p.InFlight == 0
	})
	// A fetch in flight at the pause or the cancel may still arrive.
	if c := served(hosts[0], pausedAt); c > 1 {
		t.Errorf("the paused job's host got %d requests after the pause, want at most the one in flight", c)
	}
	if c := served(hosts[2], cancelledAt); c > 1 {
		t.Errorf("the cancelled job's host got %d requests after the cancel, want at most the one in flight", c)
	}
	p, _ := n.Progress(paused.ID)
	if st, _ := paused.State(); st != job.Paused || p.Queued+p.Held == 0 {
		t.Errorf("paused job: %s, %d queued, %d held; want paused with URLs waiting", st, p.Queued, p.Held)
	}
	if st, why := cancelled.State(); st != job.Cancelled || why != job.ReasonCancelled {
		t.Errorf("cancelled job: %s (%s)", st, why)
	}
	if p, _ := n.Progress(cancelled.ID); p.Dropped == 0 {
		t.Errorf("cancelled job dropped nothing: %+v", p)
	}
	if err := n.Resume(paused.ID); err != nil {
		t.Fatal(err)
	}
	select {
	case <-paused.Ended():
	case <-time.After(time.Minute):
		t.Fatal("the resumed job did not end")
	}
	if st, why := paused.State(); st != job.Finished || why != job.ReasonExhausted {
		t.Errorf("resumed job: %s (%s), want finished (exhausted)", st, why)
	}
	if err := n.Cancel(paused.ID); err != nil {
		t.Errorf("Cancel of an ended job: %v, want nil (nothing to do)", err)
	}
	if err := n.Pause(999); err == nil {
		t.Error("Pause(999) of an unknown job: nil error")
	}
	rep := h.analyze(0)
	if p := rep.Problems(); len(p) > 0 {
		t.Errorf("the web's log shows %d problems:\n%s", len(p), strings.Join(p, "\n"))
	}
}

// TestJobsSurviveRestart checks that a node reopened on the same data
// directory knows its jobs and their states.
func TestJobsSurviveRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	n, err := Open(Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	a, err := n.Submit(job.Spec{Name: "a", Seeds: []string{"http://a.test/"}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := n.Submit(job.Spec{Name: "b", Seeds: []string{"http://b.test/"}, Priority: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Pause(b.ID); err != nil {
		t.Fatal(err)
	}
	c, err := n.Submit(job.Spec{Seeds: []string{"http://c.test/"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Cancel(c.ID); err != nil {
		t.Fatal(err)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}

	n, err = Open(Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	want := map[job.ID]job.State{a.ID: job.Running, b.ID: job.Paused, c.ID: job.Cancelled}
	got := n.Jobs()
	if len(got) != len(want) {
		t.Fatalf("reopened node has %d jobs, want %d", len(got), len(want))
	}
	for _, j := range got {
		if st, _ := j.State(); st != want[j.ID] {
			t.Errorf("job %d (%s): %s, want %s", j.ID, j.Spec.Name, st, want[j.ID])
		}
	}
	if p, _ := n.Progress(a.ID); p.Queued != 1 {
		t.Errorf("job a: %d queued after the restart, want its seed", p.Queued)
	}
	if n.Job(b.ID).Spec.Priority != 1 {
		t.Errorf("job b lost its priority")
	}
	d, err := n.Submit(job.Spec{Seeds: []string{"http://d.test/"}})
	if err != nil {
		t.Fatal(err)
	}
	if d.ID <= c.ID {
		t.Errorf("new job after restart got ID %d, not above the earlier %d", d.ID, c.ID)
	}
}
