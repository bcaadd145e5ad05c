package node

import (
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/internal/testkit/testweb"
	"github.com/trawl-crawler/trawl/job"
)

// TestContinuousJobWaitsForRecrawls crawls a small synthetic web with a
// continuous job and a one-off twin of it. Once every page is fetched the
// twin ends (exhausted) while the continuous job keeps running, waiting
// for recrawls, through the dispatcher's checks and a pause and resume;
// Cancel then ends it for good.
func TestContinuousJobWaitsForRecrawls(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a continuous crawl waits for its recrawls; the full suite runs it")
	}
	t.Parallel()
	h := newHarness(t, testweb.Options{Seed: 3, Hosts: 10, BigHosts: -1, MaxPages: 6}, 20*time.Millisecond)
	n, err := Open(h.opts)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	spec := h.spec
	spec.Name, spec.Continuous = "continuous", true
	cj, err := n.Submit(spec)
	if err != nil {
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
		t.Fatal("the one-off job did not end")
	}
	if st, why := oj.State(); st != job.Finished || why != job.ReasonExhausted {
		t.Fatalf("one-off job: %s (%s), want finished (exhausted)", st, why)
	}
	// Everything fetched: nothing queued or in flight, and as many pages as
	// the one-off job got. (Nothing queued alone can hold for a moment
	// before the last shared pages count: a loaded CI run met 63 of 68.)
	waitFor(t, time.Minute, "the continuous job to fetch everything", func() bool {
		p, _ := n.Progress(cj.ID)
		po, _ := n.Progress(oj.ID)
		return p.WaitingForRecrawls() && p.Pages >= po.Pages
	})
	n.checkJobs() // as the dispatcher does, once more now that nothing is queued
	p, _ := n.Progress(cj.ID)
	if st, why := cj.State(); st != job.Running || !p.Continuous || p.Pages == 0 {
		t.Fatalf("continuous job with every page fetched: %s (%s), continuous %v, %d pages; want running, continuous, pages",
			st, why, p.Continuous, p.Pages)
	}
	if po, _ := n.Progress(oj.ID); p.Pages < po.Pages {
		t.Errorf("continuous job got %d pages, the one-off %d: it stopped early", p.Pages, po.Pages)
	}
	select {
	case <-cj.Ended():
		t.Fatal("the continuous job's Ended channel is closed while it runs")
	default:
	}

	for _, step := range []struct {
		name string
		do   func(job.ID) error
		want job.State
	}{{"pause", n.Pause, job.Paused}, {"resume", n.Resume, job.Running}} {
		if err := step.do(cj.ID); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		n.checkJobs()
		if st, _ := cj.State(); st != step.want {
			t.Fatalf("after %s: %s, want %s", step.name, st, step.want)
		}
	}
	if err := n.Cancel(cj.ID); err != nil {
		t.Fatal(err)
	}
	select {
	case <-cj.Ended():
	case <-time.After(10 * time.Second):
		t.Fatal("the cancelled continuous job did not end")
	}
	if st, why := cj.State(); st != job.Cancelled || why != job.ReasonCancelled {
		t.Errorf("cancelled continuous job: %s (%s), want cancelled (cancelled)", st, why)
	}
}

// TestContinuousJobStopsAndResumes: a node stopped while its continuous
// job waits for recrawls ends the job for this run only (signal); the
// node reopened on its data directory has it running again, continuous,
// with nothing fetched twice.
func TestContinuousJobStopsAndResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a continuous crawl stopped and resumed; the full suite runs it")
	}
	t.Parallel()
	h := newHarness(t, testweb.Options{Seed: 5, Hosts: 8, BigHosts: -1, MaxPages: 6}, 20*time.Millisecond)
	h.spec.Continuous = true
	n, j := h.start(t)
	waitFor(t, time.Minute, "the continuous job to fetch everything", func() bool {
		p, _ := n.Progress(j.ID)
		return p.WaitingForRecrawls() && p.Pages > 0
	})
	first, _ := n.Progress(j.ID)
	if err := n.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if st, why := j.State(); st != job.Finished || why != job.ReasonSignal || j.Err() != nil {
		t.Fatalf("continuous job after Close: %s (%s, %v), want finished (signal)", st, why, j.Err())
	}

	n, err := Open(h.opts)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	again := n.Job(j.ID)
	if again == nil {
		t.Fatalf("reopened node lost job %d", j.ID)
	}
	n.Start()
	n.checkJobs()
	p, _ := n.Progress(j.ID)
	if st, _ := again.State(); st != job.Running || !again.Spec.Continuous || !p.WaitingForRecrawls() {
		t.Errorf("reopened continuous job: %s, continuous %v, waiting %v (queued %d); want running and waiting for recrawls",
			st, again.Spec.Continuous, p.WaitingForRecrawls(), p.Queued)
	}
	if p.Total.Pages != first.Pages {
		t.Errorf("reopened job's total pages = %d, want the first run's %d", p.Total.Pages, first.Pages)
	}
}
