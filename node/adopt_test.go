package node

import (
	"bytes"
	"context"
	"errors"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/cluster/checkpoint"
	"github.com/trawl-crawler/trawl/frontier"
	"github.com/trawl-crawler/trawl/hostpolicy"
	"github.com/trawl-crawler/trawl/internal/outbox"
	"github.com/trawl-crawler/trawl/internal/store"
	"github.com/trawl-crawler/trawl/internal/store/partition"
	"github.com/trawl-crawler/trawl/internal/store/urlstate"
	"github.com/trawl-crawler/trawl/internal/testkit/storetest"
	"github.com/trawl-crawler/trawl/internal/testkit/testweb"
	"github.com/trawl-crawler/trawl/job"
)

// openAdoptNode opens a node that is never started (nothing is fetched:
// these tests look at the jobs' records and states only) and closes it
// when the test ends.
func openAdoptNode(t *testing.T) (*Node, *harness) {
	t.Helper()
	h := newHarness(t, testweb.Options{Seed: 5, Hosts: 4}, 30*time.Millisecond)
	n, err := Open(h.opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n, h
}

var adoptCreated = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// openPartitioned opens a partitioned node over a small web, never
// started, serving nothing yet, closed when the test ends; it returns the
// web's first seed and that seed's partition.
func openPartitioned(t *testing.T) (*Node, *harness, *url.URL, partition.ID) {
	t.Helper()
	h := newHarness(t, testweb.Options{Seed: 5, Hosts: 4}, 30*time.Millisecond)
	h.opts.Partitioned = true
	n, err := Open(h.opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	pu, err := url.Parse(h.spec.Seeds[0])
	if err != nil {
		t.Fatal(err)
	}
	return n, h, pu, partition.Of(pu.Hostname())
}

// TestAdoptThenSubmit: a job adopted from the catalog keeps its ID, spec
// and creation time, and the node's own next ID moves past it (an
// adopted ID below it leaves it be).
func TestAdoptThenSubmit(t *testing.T) {
	n, h := openAdoptNode(t)
	spec := h.spec
	spec.Name = "fleet"
	j, err := n.Adopt(job.Record{ID: 7, Spec: spec, Created: adoptCreated, State: job.Running})
	if err != nil {
		t.Fatal(err)
	}
	if j.ID != 7 || !j.Created.Equal(adoptCreated) || j.Spec.Name != "fleet" {
		t.Fatalf("adopted job: id %d, created %v, name %q; want 7, %v, fleet", j.ID, j.Created, j.Spec.Name, adoptCreated)
	}
	if st, _ := j.State(); st != job.Running {
		t.Fatalf("adopted running job is %s", st)
	}
	if got := n.Job(7); got != j {
		t.Fatalf("Job(7) = %v, want the adopted job", got)
	}
	local := h.spec
	local.Name = "local"
	lj, err := n.Submit(local)
	if err != nil {
		t.Fatal(err)
	}
	if lj.ID != 8 {
		t.Errorf("Submit after adopting job 7 got id %d, want 8", lj.ID)
	}
	if _, err := n.Adopt(job.Record{ID: 3, Spec: spec, Created: adoptCreated, State: job.Running}); err != nil {
		t.Fatal(err)
	}
	local.Name = "local-2"
	if lj, err = n.Submit(local); err != nil {
		t.Fatal(err)
	} else if lj.ID != 9 {
		t.Errorf("Submit after adopting job 3 (below 8) got id %d, want 9", lj.ID)
	}
}

// TestAdoptTwiceChangesNothing: the same record applied again returns the
// same job, in the same state, its seeds not queued again.
func TestAdoptTwiceChangesNothing(t *testing.T) {
	for _, st := range []job.State{job.Running, job.Paused, job.Cancelled} {
		t.Run(string(st), func(t *testing.T) {
			n, h := openAdoptNode(t)
			r := job.Record{ID: 4, Spec: h.spec, Created: adoptCreated, State: st}
			first, err := n.Adopt(r)
			if err != nil {
				t.Fatal(err)
			}
			discovered := first.Stats.Discovered.Load()
			again, err := n.Adopt(r)
			if err != nil {
				t.Fatal(err)
			}
			if again != first {
				t.Fatal("the second Adopt returned another job")
			}
			if got, _ := again.State(); got != st {
				t.Errorf("state after adopting twice: %s, want %s", got, st)
			}
			if d := again.Stats.Discovered.Load(); d != discovered {
				t.Errorf("discovered %d after the second Adopt, %d after the first", d, discovered)
			}
			if len(n.Jobs()) != 1 {
				t.Errorf("the node holds %d jobs, want 1", len(n.Jobs()))
			}
		})
	}
}

// TestAdoptStates applies a record and then the same job in another state:
// the node's job follows, except that an ended job stays ended.
func TestAdoptStates(t *testing.T) {
	for _, c := range []struct {
		first, then job.State // then "": adopt once
		want        job.State
	}{
		{job.Running, "", job.Running},
		{job.Paused, "", job.Paused},
		{job.Cancelled, "", job.Cancelled},
		{job.Finished, "", job.Finished},
		{job.Running, job.Paused, job.Paused},
		{job.Paused, job.Running, job.Running},
		{job.Running, job.Cancelled, job.Cancelled},
		{job.Paused, job.Cancelled, job.Cancelled},
		{job.Cancelled, job.Running, job.Cancelled},
		{job.Cancelled, job.Paused, job.Cancelled},
		{job.Running, job.Running, job.Running},
	} {
		name := string(c.first)
		if c.then != "" {
			name += "-then-" + string(c.then)
		}
		t.Run(name, func(t *testing.T) {
			n, h := openAdoptNode(t)
			r := job.Record{ID: 2, Spec: h.spec, Created: adoptCreated, State: c.first}
			j, err := n.Adopt(r)
			if err != nil {
				t.Fatal(err)
			}
			if c.then != "" {
				r.State = c.then
				if j, err = n.Adopt(r); err != nil {
					t.Fatal(err)
				}
			}
			if got, _ := j.State(); got != c.want {
				t.Errorf("Adopt(%s) then Adopt(%q): job is %s, want %s", c.first, c.then, got, c.want)
			}
			if got := n.Job(2).Record().State; got != c.want {
				t.Errorf("the node's record says %s, want %s", got, c.want)
			}
			if got := n.running.Load(); (got == 1) != (c.want == job.Running) || got > 1 {
				t.Errorf("running jobs counted: %d with the job %s", got, c.want)
			}
		})
	}
}

// TestAdoptRefuses: a record the node cannot hold is an error naming the
// job, and adds nothing.
func TestAdoptRefuses(t *testing.T) {
	n, h := openAdoptNode(t)
	if _, err := n.Adopt(job.Record{ID: 1, Spec: h.spec, Created: adoptCreated, State: job.Running}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		r    job.Record
		want string
	}{
		{"no seeds", job.Record{ID: 5, Spec: job.Spec{Name: "x"}, Created: adoptCreated, State: job.Running}, "job 5"},
		{"unknown state", job.Record{ID: 6, Spec: h.spec, Created: adoptCreated, State: "sleeping"}, "job 6"},
		{"another job of the id", job.Record{ID: 1, Spec: h.spec, Created: adoptCreated.Add(time.Hour), State: job.Running}, "holds another job 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := n.Adopt(c.r)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Adopt: %v, want an error with %q", err, c.want)
			}
		})
	}
	var fe *job.FieldError
	if _, err := n.Adopt(job.Record{ID: 5, Spec: job.Spec{}, State: job.Running}); !errors.As(err, &fe) || fe.Field != "Seeds" {
		t.Errorf("Adopt of a spec without seeds: %v, want a *job.FieldError for Seeds", err)
	}
	if len(n.Jobs()) != 1 {
		t.Errorf("the node holds %d jobs after the refusals, want 1", len(n.Jobs()))
	}
}

// TestAdoptedJobSurvivesRestart: an adopted job is kept like a submitted
// one, and comes back with its ID and state.
func TestAdoptedJobSurvivesRestart(t *testing.T) {
	h := newHarness(t, testweb.Options{Seed: 5, Hosts: 4}, 30*time.Millisecond)
	n, err := Open(h.opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.Adopt(job.Record{ID: 12, Spec: h.spec, Created: adoptCreated, State: job.Paused}); err != nil {
		n.Close()
		t.Fatal(err)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	n, err = Open(h.opts)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	j := n.Job(12)
	if j == nil {
		t.Fatal("job 12 not restored")
	}
	if st, _ := j.State(); st != job.Paused || !j.Created.Equal(adoptCreated) {
		t.Errorf("restored job 12: %s, created %v; want paused, %v", st, j.Created, adoptCreated)
	}
	spec := h.spec
	spec.Name = "next"
	if lj, err := n.Submit(spec); err != nil {
		t.Fatal(err)
	} else if lj.ID != 13 {
		t.Errorf("Submit after restoring adopted job 12 got id %d, want 13", lj.ID)
	}
}

// TestFoldWaitsForUnknownJob: URLs routed for a crawl the node has not
// learnt yet (the fleet's catalog reaches members a little apart) are not
// dropped: Fold commits nothing, not even the route sequence, and says
// why; once the crawl is adopted the same fold queues them.
func TestFoldWaitsForUnknownJob(t *testing.T) {
	n, h, pu, p := openPartitioned(t)
	u := pu.String()
	if err := n.ServePartition(p, time.Time{}); err != nil {
		t.Fatal(err)
	}
	items := []frontier.Item{{Job: 7, URL: u, Host: pu.Hostname()}}
	if err := n.Fold(p, 5, items); !errors.Is(err, ErrUnknownJob) {
		t.Fatalf("Fold for unknown job 7 = %v, want ErrUnknownJob", err)
	}
	if seq, err := outbox.RouteSeq(n.DB(), p); err != nil || seq != 0 {
		t.Fatalf("route sequence after a refused fold = %d (%v), want 0", seq, err)
	}
	if _, err := n.Adopt(job.Record{ID: 7, Spec: h.spec, Created: adoptCreated, State: job.Paused}); err != nil {
		t.Fatal(err)
	}
	if err := n.Fold(p, 5, items); err != nil {
		t.Fatalf("Fold once job 7 is known: %v", err)
	}
	if seq, err := outbox.RouteSeq(n.DB(), p); err != nil || seq != 5 {
		t.Errorf("route sequence after the fold = %d (%v), want 5", seq, err)
	}
}

// TestQuiet: a partitioned node serving no partition holds a new job's
// seeds in its outbox, so it is not quiet; one serving every partition
// crawls a small web: not quiet while hosts have work, then quiet with
// the job listed, the job running on (a partitioned node's job ends when
// the fleet finishes it: cluster/finish).
func TestQuiet(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a crawl of a synthetic web; the full suite runs it")
	}
	t.Parallel()
	h := newHarness(t, testweb.Options{Seed: 5, Hosts: 4}, 10*time.Millisecond)
	h.opts.Partitioned = true
	idle, err := Open(h.opts)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	if q, running := idle.Quiet(); !q || len(running) != 0 {
		t.Fatalf("Quiet of a node without jobs = %v, %v; want true, none", q, running)
	}
	ij, err := idle.Submit(h.spec)
	if err != nil {
		t.Fatal(err)
	}
	if k, _ := idle.Outbox().Len(); k == 0 {
		t.Fatal("a node serving no partition queued the seeds itself")
	}
	if q, _ := idle.Quiet(); q {
		t.Error("Quiet with the seeds in the outbox")
	}
	if idle.JobQuiet(ij.ID) || !idle.JobQuiet(ij.ID+1) {
		t.Errorf("JobQuiet with the job's seeds in the outbox = %v, of another job %v; want false, true", idle.JobQuiet(ij.ID), idle.JobQuiet(ij.ID+1))
	}

	h.opts.DataDir = t.TempDir()
	n, err := Open(h.opts)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	for p := range partition.Count {
		if err := n.ServePartition(partition.ID(p), time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	j, err := n.Submit(h.spec)
	if err != nil {
		t.Fatal(err)
	}
	if q, _ := n.Quiet(); q {
		t.Error("Quiet with the seeds queued")
	}
	defer routeHere(t, n)() // links between partitions go through the outbox
	if got := n.IdleJobs([]job.ID{j.ID, j.ID + 1}); !slices.Equal(got, []job.ID{j.ID + 1}) {
		t.Errorf("IdleJobs with job %d's seeds queued = %v, want only the other job", j.ID, got)
	}
	n.Start()
	deadline := time.Now().Add(time.Minute)
	for {
		q, running := n.Quiet()
		if q {
			if !slices.Equal(running, []job.ID{j.ID}) {
				t.Errorf("Quiet lists %v, want job %d", running, j.ID)
			}
			if got := n.IdleJobs(running); !slices.Equal(got, running) {
				t.Errorf("IdleJobs(%v) of a quiet node = %v", running, got)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not quiet after a minute: %+v, %d pages", n.FrontierStats(), j.Stats.Pages.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
	rep := testweb.Analyze(h.srv.Web(), h.srv.Log(), testweb.AnalyzeOptions{Seeds: h.spec.Seeds, Agent: "trawl", MaxDepth: h.spec.MaxDepth, Domain: h.spec.Domains[0]})
	if rep.Coverage < 1 {
		t.Errorf("quiet at coverage %.3f, want every page fetched", rep.Coverage)
	}
	if st, _ := j.State(); st != job.Running {
		t.Errorf("job %s once quiet; want running", st)
	}
}

// TestIdleJobsIndependent: a partitioned node serving every partition runs
// two crawls, the second with its only URL on a host paused by policy:
// the first crawl becomes idle (IdleJobs) once its web is fetched, while
// the second still has work, so the node as a whole is not quiet.
func TestIdleJobsIndependent(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a crawl of a synthetic web; the full suite runs it")
	}
	t.Parallel()
	h := newHarness(t, testweb.Options{Seed: 6, Hosts: 3}, 10*time.Millisecond)
	h.opts.Partitioned = true
	n, err := Open(h.opts)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	for p := range partition.Count {
		if err := n.ServePartition(partition.ID(p), time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	held := "held." + h.spec.Domains[0]
	if _, err := n.SetHostPolicy(held, hostpolicy.Policy{Paused: true}); err != nil {
		t.Fatal(err)
	}
	a, err := n.Submit(h.spec)
	if err != nil {
		t.Fatal(err)
	}
	spec := h.spec
	spec.Name, spec.Seeds = "held", []string{"http://" + held + "/"}
	b, err := n.Submit(spec)
	if err != nil {
		t.Fatal(err)
	}
	both := []job.ID{a.ID, b.ID}
	if got := n.IdleJobs(both); len(got) != 0 {
		t.Fatalf("IdleJobs with both crawls' seeds queued = %v", got)
	}
	defer routeHere(t, n)() // links between partitions go through the outbox
	n.Start()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if got := n.IdleJobs(both); len(got) > 0 {
			if !slices.Equal(got, []job.ID{a.ID}) {
				t.Fatalf("IdleJobs = %v, want only crawl %d", got, a.ID)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("crawl %d not idle after a minute: %+v", a.ID, n.FrontierStats())
		}
	}
	rep := testweb.Analyze(h.srv.Web(), h.srv.Log(), testweb.AnalyzeOptions{Seeds: h.spec.Seeds, Agent: "trawl", MaxDepth: h.spec.MaxDepth, Domain: h.spec.Domains[0]})
	if rep.Coverage < 1 {
		t.Errorf("crawl %d idle at coverage %.3f, want every page fetched", a.ID, rep.Coverage)
	}
	if q, _ := n.Quiet(); q || n.JobQuiet(b.ID) {
		t.Errorf("Quiet = %v, JobQuiet(%d) = %v with the held crawl's URL queued; want false, false", q, b.ID, n.JobQuiet(b.ID))
	}
}

// semGate is an IPGate of one slot per address, in memory.
type semGate struct {
	mu       sync.Mutex
	slots    map[string]chan struct{}
	acquired atomic.Int64
}

func (g *semGate) Acquire(ctx context.Context, ip string) (func(), error) {
	g.mu.Lock()
	ch := g.slots[ip]
	if ch == nil {
		ch = make(chan struct{}, 1)
		g.slots[ip] = ch
	}
	g.mu.Unlock()
	select {
	case ch <- struct{}{}:
		g.acquired.Add(1)
		return func() { <-ch }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// TestIPGate: with an IPGate of one slot per address set, every request
// (robots.txt and pages) waits for it: the web's log never shows two at
// once on an address its hosts share, though the node's own cap is 2.
func TestIPGate(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a crawl of a synthetic web; the full suite runs it")
	}
	t.Parallel()
	h := newHarness(t, testweb.Options{Seed: 3, Hosts: 12}, 10*time.Millisecond)
	g := &semGate{slots: map[string]chan struct{}{}}
	n, err := Open(h.opts)
	if err != nil {
		t.Fatal(err)
	}
	n.SetIPGate(g)
	j, err := n.Submit(h.spec)
	if err != nil {
		t.Fatal(err)
	}
	n.Start()
	select {
	case <-j.Ended():
	case <-time.After(2 * time.Minute):
		t.Fatal("crawl not done in 2 minutes")
	}
	n.Close()
	rep := testweb.Analyze(h.srv.Web(), h.srv.Log(), testweb.AnalyzeOptions{
		Seeds: h.spec.Seeds, Agent: "trawl", Gap: h.opts.MinDelay, MaxDepth: h.spec.MaxDepth,
		Domain: h.spec.Domains[0], MaxParallel: 1, MaxParallelPerIP: 1, MinCoverage: 0.99,
	})
	for _, p := range rep.Problems() {
		t.Error(p)
	}
	if len(rep.SharedIPs) == 0 {
		t.Fatal("the web has no shared address: nothing was tested")
	}
	if got := g.acquired.Load(); got < int64(rep.Requests) {
		t.Errorf("%d slots taken for %d requests", got, rep.Requests)
	}
	t.Logf("%d requests, %d slots taken, %d shared addresses", rep.Requests, g.acquired.Load(), len(rep.SharedIPs))
}

// TestServedPartitionsRecordsRead: a partition restored from another
// node's checkpoint brings its URLs' records (validators, change
// history), and once served, the node reads them: a refetch then sends
// the validators and continues the record, not a new one.
func TestServedPartitionsRecordsRead(t *testing.T) {
	n, _, pu, p := openPartitioned(t)
	u := pu.String()
	host := pu.Hostname()
	it := frontier.Item{Job: 1, URL: u, Host: host}
	at := time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC)
	rec := urlstate.Record{}.Observe(urlstate.Observation{At: at, Status: 200, ETag: `"v1"`, Digest: [32]byte{1}, HasDigest: true, Job: 1})

	// The old owner: its store holds p's record; its checkpoint of p.
	src := storetest.Open(t)
	defer src.Close()
	b := src.NewBatch()
	if err := b.Set(store.URLKey(host, u), urlstate.Encode(rec)); err != nil {
		t.Fatal(err)
	}
	if err := src.Commit(b); err != nil {
		t.Fatal(err)
	}
	var ckpt bytes.Buffer
	if _, _, err := checkpoint.Write(&ckpt, src, p, at); err != nil {
		t.Fatal(err)
	}

	// The new owner restores it and serves p.
	if got := n.loadRecord(it); got.Fetches != 0 {
		t.Fatalf("record before the restore: %+v", got)
	}
	if _, _, err := checkpoint.Read(&ckpt, n.DB(), p); err != nil {
		t.Fatal(err)
	}
	if err := n.ServePartition(p, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if got := n.loadRecord(it); got.Fetches != 1 || got.ETag != `"v1"` || !got.LastFetch.Equal(at) {
		t.Errorf("record of %s once p is served: %+v, want the restored one (1 fetch, ETag \"v1\")", u, got)
	}
}

// TestFoldExpandsShorterPath: a routed URL the seen gate calls a
// duplicate is queued again when it was fetched at the crawl's depth
// limit (its links cut) and comes at a depth whose links are in scope;
// its record then holds the new depth and no validators (the refetch must
// bring the body). A copy no shallower, or of a page whose links were not
// cut, is a duplicate as before.
func TestFoldExpandsShorterPath(t *testing.T) {
	n, h, pu, p := openPartitioned(t)
	spec := h.spec
	spec.MaxDepth = 3
	if _, err := n.Adopt(job.Record{ID: 1, Spec: spec, Created: adoptCreated, State: job.Paused}); err != nil {
		t.Fatal(err)
	}
	host := pu.Hostname()
	if err := n.ServePartition(p, time.Time{}); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC)
	fetched := func(path string, depth int) frontier.Item {
		it := frontier.Item{Job: 1, URL: "http://" + pu.Host + path, Host: host, Depth: depth}
		rec := urlstate.Record{}.Observe(urlstate.Observation{At: at, Status: 200, ETag: `"v1"`, Job: 1})
		rec.Depth, rec.HasDepth = depth, true
		b := n.DB().NewBatch()
		if _, err := n.seen.AddTo(b, 1, it.URL); err != nil {
			t.Fatal(err)
		}
		key := store.URLKey(host, it.URL)
		n.state.Fetched.Add(key)
		if err := b.Set(key, urlstate.Encode(rec)); err != nil {
			t.Fatal(err)
		}
		if err := n.DB().Commit(b); err != nil {
			t.Fatal(err)
		}
		return it
	}
	cut := fetched("/cut", 3)  // at the limit: its links were out of scope
	inner := fetched("/in", 2) // below it: its links were followed
	queued := func() int { return n.frontier.Job(1).Queued }
	seq := uint64(0)
	fold := func(it frontier.Item, depth int) {
		t.Helper()
		it.Depth = depth
		seq++
		if err := n.Fold(p, seq, []frontier.Item{it}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name  string
		it    frontier.Item
		depth int
		again bool
	}{
		{"as deep", cut, 3, false},
		{"links cut, a shorter path", cut, 1, true},
		{"the next copy, no shallower", cut, 2, false},
		{"links followed before", inner, 0, false},
	} {
		before := queued()
		fold(c.it, c.depth)
		if got := queued() - before; got != map[bool]int{true: 1, false: 0}[c.again] {
			t.Errorf("%s: %d queued, want again = %v", c.name, got, c.again)
		}
	}
	rec := n.loadRecord(cut)
	if rec.Depth != 1 || rec.ETag != "" || rec.Fetches != 1 {
		t.Errorf("record of %s after the shorter path: depth %d, ETag %q, %d fetches; want depth 1, no ETag, 1 fetch", cut.URL, rec.Depth, rec.ETag, rec.Fetches)
	}
}

// routeHere stands in for the route stream of a fleet of one: until stop
// is called, it folds what n's outbox holds back into n, by partition, as
// the stream would bring it to the partitions' owner (n), and deletes it.
func routeHere(t *testing.T, n *Node) (stop func()) {
	t.Helper()
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		seq := map[partition.ID]uint64{}
		for {
			select {
			case <-quit:
				return
			case <-time.After(10 * time.Millisecond):
			}
			byPart := map[partition.ID][]frontier.Item{}
			var keys [][]byte
			err := n.Outbox().Range(func(e outbox.Entry) error {
				if e.Err == nil {
					p := partition.Of(e.Item.Host)
					byPart[p] = append(byPart[p], e.Item)
				}
				keys = append(keys, e.Key)
				return nil
			})
			for p, items := range byPart {
				seq[p]++
				err = errors.Join(err, n.Fold(p, seq[p], items))
			}
			if err == nil && len(keys) > 0 {
				err = n.Outbox().Delete(keys...)
			}
			if err != nil {
				t.Errorf("route here: %v", err)
				return
			}
		}
	}()
	return func() { close(quit); <-done }
}

// TestLinksToAnotherServedPartitionAreRouted: in a fleet, a page's links
// to a partition other than its own go through the outbox even when this
// node serves that partition too: a fleet replicates each partition's
// share of a batch on its own, and links written beside the page's
// completion could be lost with a member killed between the two while the
// completion was kept. Links within the page's partition are queued here.
func TestLinksToAnotherServedPartitionAreRouted(t *testing.T) {
	n, h, _, _ := openPartitioned(t)
	parts := map[partition.ID]bool{}
	for _, host := range h.srv.Web().Hosts() {
		p := partition.Of(host.Name)
		if !parts[p] {
			parts[p] = true
			if err := n.ServePartition(p, time.Time{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(parts) < 2 {
		t.Skipf("the web's %d hosts fall in one partition", len(h.srv.Web().Hosts()))
	}
	if _, err := n.Adopt(job.Record{ID: 1, Spec: h.spec, Created: adoptCreated, State: job.Running}); err != nil {
		t.Fatal(err)
	}
	n.Start()
	var routed []outbox.Entry
	for deadline := time.Now().Add(20 * time.Second); len(routed) == 0 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		routed = routed[:0]
		if err := n.Outbox().Range(func(e outbox.Entry) error { routed = append(routed, e); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	if len(routed) == 0 {
		t.Fatal("no link routed in 20 s, though every partition of the web is served here and its hosts link to each other")
	}
	for _, e := range routed {
		if !parts[partition.Of(e.Item.Host)] {
			t.Errorf("routed %s, of a partition not served here", e.Item.URL)
		}
		if e.Item.Via == "" {
			t.Errorf("routed %s with no page it was found on", e.Item.URL)
			continue
		}
		via, err := url.Parse(e.Item.Via)
		if err != nil {
			t.Fatal(err)
		}
		if partition.Of(via.Hostname()) == partition.Of(e.Item.Host) {
			t.Errorf("routed %s, found on %s of the same partition: it belongs in the frontier here", e.Item.URL, e.Item.Via)
		}
	}
	t.Logf("%d links routed between partitions served here", len(routed))
}
