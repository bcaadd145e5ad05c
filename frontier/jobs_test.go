package frontier

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

func jobItem(job uint32, host string, n int) Item {
	it := item(host, n)
	it.Job = job
	return it
}

func wantJob(t *testing.T, f *Frontier, id uint32, want JobStats) {
	t.Helper()
	if got := f.Job(id); got != want {
		t.Errorf("Job(%d) = %+v, want %+v", id, got, want)
	}
}

// checkJobs compares every job's counters with what the store holds.
func checkJobs(t *testing.T, f *Frontier, s *MemStore) {
	t.Helper()
	// Refillers write too (dead hosts' items): read the store under f.mu.
	f.mu.Lock()
	defer f.mu.Unlock()
	queued, held := s.Contents()
	for id, j := range f.jobs {
		if j.queued+j.inFlight != queued[id] || j.held != held[id] {
			t.Fatalf("job %d: %d queued + %d in flight, %d held; store holds %d queued, %d held",
				id, j.queued, j.inFlight, j.held, queued[id], held[id])
		}
	}
	s.mu.Lock()
	for name, levels := range s.queues {
		h := f.hosts.find(name)
		if h == nil || h.refilling {
			continue
		}
		for l, q := range levels {
			inStore := map[uint64]bool{}
			for _, it := range q {
				inStore[it.Seq] = true
			}
			seen := map[uint64]bool{}
			for _, it := range f.win(h, l) {
				if seen[it.Seq] || !inStore[it.Seq] || it.Seq > h.readSeq[l] {
					s.mu.Unlock()
					t.Fatalf("host %s level %d: window %v, readSeq %d, store %v", name, l, f.win(h, l), h.readSeq[l], q)
				}
				seen[it.Seq] = true
			}
			n := 0
			for _, it := range q {
				if it.Seq > h.readSeq[l] {
					n++
				}
			}
			if n != int(h.unread[l]) && !h.dead {
				s.mu.Unlock()
				t.Fatalf("host %s level %d: unread %d, store holds %d after readSeq %d (window %v)", name, l, h.unread[l], n, h.readSeq[l], f.win(h, l))
			}
		}
	}
	s.mu.Unlock()
	for id, n := range queued {
		if n > 0 && f.jobs[id] == nil {
			t.Fatalf("store holds %d items of unknown job %d", n, id)
		}
	}
}

func TestJobCounters(t *testing.T) {
	f, c := newTest(t, Options{MinDelay: time.Second})
	f.Add(nil, jobItem(1, "a.test", 1), jobItem(1, "a.test", 2), jobItem(2, "a.test", 3), jobItem(2, "b.test", 1))
	wantJob(t, f, 1, JobStats{Queued: 2})
	wantJob(t, f, 2, JobStats{Queued: 2})
	l := mustLease(t, f)
	wantJob(t, f, l.Item.Job, JobStats{Queued: 1, InFlight: 1})
	if f.JobDone(1) || f.JobDone(2) {
		t.Error("JobDone with items queued")
	}
	c.advance(time.Second)
	f.Complete(l, Outcome{Status: 200}, nil)
	if got := f.Job(3); got != (JobStats{}) {
		t.Errorf("Job(unknown) = %+v, want zero", got)
	}
}

// TestPausedJobIsHeld: items of a paused job that reach the head of their
// host's queue are set aside, never leased and never charge the gap; on
// resume they come back at the tail of their hosts' queues.
func TestPausedJobIsHeld(t *testing.T) {
	s := &MemStore{}
	f, c := newTest(t, Options{MinDelay: time.Second, Store: s})
	<-f.Add(nil, jobItem(1, "a.test", 1), jobItem(1, "a.test", 2), jobItem(2, "a.test", 3), jobItem(1, "b.test", 1))
	if err := f.SetJobState(1, JobPaused); err != nil {
		t.Fatal(err)
	}
	l := mustLease(t, f)
	if l.Item.Job != 2 {
		t.Fatalf("leased %+v of a paused job", l.Item)
	}
	noLease(t, f, 5*time.Minute) // b.test's only item is held on the way
	wantJob(t, f, 1, JobStats{Mode: JobPaused, Held: 3})
	wantJob(t, f, 2, JobStats{InFlight: 1})
	checkJobs(t, f, s)
	if !f.JobDone(1) {
		t.Error("JobDone(paused, all held) = false")
	}
	<-must(f.Complete(l, Outcome{Status: 200}, nil, jobItem(2, "a.test", 4)))
	c.advance(time.Second)
	if err := f.ResumeJob(1); err != nil {
		t.Fatal(err)
	}
	wantJob(t, f, 1, JobStats{Queued: 3})
	checkJobs(t, f, s)
	// a.test: p4 (queued before the resume), then p1 and p2 at the tail.
	var got []string
	for _, it := range drain(t, f, c) {
		if it.Host == "a.test" {
			got = append(got, it.URL)
		}
	}
	want := fmt.Sprint([]string{"http://a.test/p4", "http://a.test/p1", "http://a.test/p2"})
	if fmt.Sprint(got) != want {
		t.Errorf("after resume leased %v from a.test, want %v", got, want)
	}
	wantJob(t, f, 1, JobStats{})
	checkJobs(t, f, s)
	if s.Len() != 0 {
		t.Errorf("store holds %d items", s.Len())
	}
}

func TestCancelledJobIsDropped(t *testing.T) {
	s := &MemStore{}
	f, c := newTest(t, Options{MinDelay: time.Second, Store: s})
	<-f.Add(nil, jobItem(1, "a.test", 1), jobItem(1, "a.test", 2), jobItem(2, "a.test", 3), jobItem(1, "b.test", 1))
	l := mustLease(t, f) // a.test p1, job 1
	if err := f.SetJobState(1, JobPaused); err != nil {
		t.Fatal(err)
	}
	noLease(t, f, 5*time.Minute) // b.test p1 is held on the way; a.test is busy
	wantJob(t, f, 1, JobStats{Mode: JobPaused, Queued: 1, InFlight: 1, Held: 1})
	checkJobs(t, f, s)
	if err := f.SetJobState(1, JobCancelled); err != nil {
		t.Fatal(err)
	}
	checkJobs(t, f, s)
	<-must(f.Complete(l, Outcome{Status: 200}, nil, jobItem(1, "c.test", 1)))
	c.advance(time.Second)
	for _, it := range drain(t, f, c) {
		if it.Job == 1 {
			t.Errorf("leased %+v of a cancelled job", it)
		}
	}
	st := f.Job(1)
	if st.Queued != 0 || st.InFlight != 0 || st.Held != 0 || st.Dropped != 2+1 || st.Mode != JobCancelled {
		t.Errorf("Job(1) = %+v, want 3 dropped (a.test p2, b.test p1, c.test p1)", st)
	}
	checkJobs(t, f, s)
	if s.Len() != 0 {
		t.Errorf("store holds %d items", s.Len())
	}
}

// TestDeadHostDrainsPerJob: a dropped host's queue is deleted item by item,
// a window at a time, and counted for each item's job.
func TestDeadHostDrainsPerJob(t *testing.T) {
	s := &MemStore{}
	f, c := newTest(t, Options{MinDelay: time.Second, Window: 2, Store: s})
	var items []Item
	for i := range 9 {
		items = append(items, jobItem(uint32(1+i%3), "a.test", i))
	}
	<-f.Add(nil, items...)
	l := mustLease(t, f)
	<-must(f.Complete(l, Outcome{Status: 503, Requeue: true, DropHost: true}, nil))
	c.advance(time.Hour)
	if l, _ := tryLease(t, f); l != nil {
		t.Fatalf("leased %s of a dead host", l.Item.URL)
	}
	for id := uint32(1); id <= 3; id++ {
		wantJob(t, f, id, JobStats{Dropped: 3})
	}
	if st := f.Stats(); st.Dropped != 9 || st.Queued != 0 || !f.Done() {
		t.Errorf("Stats() = %+v, want 9 dropped", st)
	}
	checkJobs(t, f, s)
	if s.Len() != 0 {
		t.Errorf("store holds %d items of a dead host", s.Len())
	}
}

// TestJobCountersSurviveRestart: counters are written with the changes
// and restored by New; items in flight count as queued again.
func TestJobCountersSurviveRestart(t *testing.T) {
	s := &MemStore{}
	c := &clock{t: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)}
	o := Options{MinDelay: time.Second}
	f := restart(t, s, c, o)
	<-f.Add(nil, jobItem(1, "a.test", 1), jobItem(1, "a.test", 2), jobItem(1, "b.test", 1), jobItem(2, "c.test", 1), jobItem(3, "d.test", 1))
	if err := f.SetJobState(2, JobPaused); err != nil {
		t.Fatal(err)
	}
	if err := f.SetJobState(3, JobCancelled); err != nil {
		t.Fatal(err)
	}
	var ls []*Lease
	for {
		l, _ := tryLease(t, f)
		if l == nil {
			break
		}
		ls = append(ls, l)
	}
	<-must(f.Complete(ls[0], Outcome{Status: 200}, nil))
	settle(t, f)
	f = restart(t, s, c, o)
	wantJob(t, f, 1, JobStats{Queued: 2})
	wantJob(t, f, 2, JobStats{Held: 1})
	wantJob(t, f, 3, JobStats{Dropped: 1})
	checkJobs(t, f, s)
	if err := f.ResumeJob(2); err != nil {
		t.Fatal(err)
	}
	wantJob(t, f, 2, JobStats{Queued: 1})
	checkJobs(t, f, s)
}

// TestJobsRandom drives random work of several jobs, with pauses, resumes,
// cancellations, dropped hosts and restarts, and checks after every step
// that no lease belongs to a job not active, and that each job's counters
// agree with the store.
func TestJobsRandom(t *testing.T) {
	for seed := range seeds(12) {
		rng := rand.New(rand.NewPCG(seed, 3))
		s := &MemStore{}
		c := &clock{t: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)}
		o := Options{MinDelay: 10 * time.Millisecond, Window: 1 + rng.IntN(4), MaxParallel: 1 + rng.IntN(2), HostBudget: rng.IntN(2) * 30}
		f := restart(t, s, c, o)
		modes := map[uint32]JobMode{}
		var out []*Lease
		next := 0
		add := func(n int) []Item {
			var items []Item
			for range n {
				next++
				items = append(items, jobItem(uint32(rng.IntN(4)), fmt.Sprintf("h%d.test", rng.IntN(6)), next))
			}
			return items
		}
		<-f.Add(nil, add(30)...)
		for step := range 3000 {
			switch r := rng.IntN(40); {
			case r == 0:
				out = nil
				settle(t, f)
				f = restart(t, s, c, o)
				for id, m := range modes {
					if err := f.SetJobState(id, m); err != nil {
						t.Fatal(err)
					}
				}
			case r < 4:
				id := uint32(rng.IntN(4))
				m := JobMode(rng.IntN(3))
				if modes[id] == JobCancelled {
					m = JobCancelled
				}
				modes[id] = m
				if err := f.SetJobState(id, m); err != nil {
					t.Fatal(err)
				}
			case r < 20:
				l, wait := tryLease(t, f)
				if l == nil {
					c.advance(max(0, min(wait, time.Second)))
					continue
				}
				if m := modes[l.Item.Job]; m != JobActive {
					t.Fatalf("seed %d step %d: leased %s of a %s job", seed, step, l.Item.URL, m)
				}
				out = append(out, l)
			default:
				if len(out) == 0 {
					continue
				}
				i := rng.IntN(len(out))
				l := out[i]
				out = append(out[:i], out[i+1:]...)
				var o Outcome
				switch rng.IntN(12) {
				case 0:
					o = Outcome{Status: 503, Requeue: true}
				case 1:
					o = Outcome{Status: 500, Requeue: rng.IntN(2) == 0, DropHost: true}
				default:
					o = Outcome{Status: 200}
				}
				var more []Item
				if next < 400 {
					more = add(rng.IntN(4))
				}
				if err := <-must(f.Complete(l, o, nil, more...)); err != nil {
					t.Fatal(err)
				}
			}
			checkJobs(t, f, s)
			checkHeap(t, f)
		}
		checkJobParts(t, "the end", f, s)
	}
}
