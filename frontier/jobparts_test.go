package frontier

import (
	"context"
	"testing"
	"time"
)

// checkJobParts checks the counters per job and partition: the store's
// last written ones agree with the items it holds in each partition; the
// frontier's are the store's for the partitions loaded and zero for the
// others; a job's totals are their sum.
func checkJobParts(t *testing.T, name string, f *Frontier, s *MemStore) {
	t.Helper()
	settle(t, f)
	f.mu.Lock()
	defer f.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	queued, held := map[jobPart]int{}, map[jobPart]int{}
	for host, levels := range s.queues {
		for _, q := range levels {
			for _, it := range q {
				queued[jobPart{it.Job, partOf(host)}]++
			}
		}
	}
	for _, it := range s.held {
		held[jobPart{it.Job, partOf(it.Host)}]++
	}
	keys := map[jobPart]bool{}
	for k := range queued {
		keys[k] = true
	}
	for k := range held {
		keys[k] = true
	}
	for k := range s.jobs {
		keys[k] = true
	}
	for k := range keys {
		if js := s.jobs[k]; js.Stored != queued[k] || js.Held != held[k] {
			t.Errorf("%s: job %d partition %d: stored counters %+v, the store holds %d queued, %d held", name, k.job, k.part, js, queued[k], held[k])
		}
	}
	for id, j := range f.jobs {
		var sum partCounts
		for p := range Partition(partCount) {
			var c partCounts
			if j.parts != nil {
				c = j.parts[p]
			}
			var want partCounts
			if f.parts == nil || f.parts[p] != nil {
				js := s.jobs[jobPart{id, p}]
				want = partCounts{stored: js.Stored, held: js.Held, dropped: js.Dropped}
			}
			if c.touched || c != want {
				t.Errorf("%s: job %d partition %d: frontier's counters %+v, want %+v", name, id, p, c, want)
			}
			sum.stored += c.stored
			sum.held += c.held
			sum.dropped += c.dropped
		}
		if j.queued+j.inFlight != sum.stored || j.held != sum.held || j.dropped != sum.dropped {
			t.Errorf("%s: job %d: %d queued + %d in flight, %d held, %d dropped; its partitions sum to %+v", name, id, j.queued, j.inFlight, j.held, j.dropped, sum)
		}
	}
}

// movePartition copies partition p's items, held items, host states and
// job counters from one MemStore to another, replacing what the other
// held of p, as a checkpoint does (cluster/checkpoint); from keeps its
// copy, as a giver's store does.
func movePartition(from, to *MemStore, p Partition) {
	from.mu.Lock()
	defer from.mu.Unlock()
	to.mu.Lock()
	defer to.mu.Unlock()
	if to.queues == nil {
		to.queues = make(map[string][][]Item)
		to.hosts = make(map[string]HostState)
		to.held = make(map[heldRef]Item)
		to.jobs = make(map[jobPart]JobState)
	}
	for h := range to.queues {
		if partOf(h) == p {
			delete(to.queues, h)
		}
	}
	for h := range to.hosts {
		if partOf(h) == p {
			delete(to.hosts, h)
		}
	}
	for r := range to.held {
		if partOf(r.host) == p {
			delete(to.held, r)
		}
	}
	for k := range to.jobs {
		if k.part == p {
			delete(to.jobs, k)
		}
	}
	for h, levels := range from.queues {
		if partOf(h) == p {
			c := make([][]Item, len(levels))
			for l, q := range levels {
				c[l] = append([]Item(nil), q...)
			}
			to.queues[h] = c
		}
	}
	for h, st := range from.hosts {
		if partOf(h) == p {
			to.hosts[h] = st
		}
	}
	for r, it := range from.held {
		if partOf(r.host) == p {
			to.held[r] = it
		}
	}
	for k, js := range from.jobs {
		if k.part == p {
			to.jobs[k] = js
		}
	}
}

// TestPartitionJobCountsMove: two frontiers, A serving partitions p and q,
// B serving r; partition p moves from A to B and back. After every step
// each frontier's job counters are those of the partitions it serves
// (checkJobParts), and Job says what they hold.
func TestPartitionJobCountsMove(t *testing.T) {
	p, q, r := Partition(5), Partition(6), Partition(7)
	a, b, c := hostIn(p, 0), hostIn(q, 0), hostIn(r, 0)
	sA, sB := &MemStore{}, &MemStore{}
	fA, cA := newPartitioned(t, sA, Options{MinDelay: time.Millisecond}, p, q)
	fB, cB := newPartitioned(t, sB, Options{MinDelay: time.Millisecond}, r)
	ctx := context.Background()
	ok := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	type counts struct{ stored, held, dropped int } // of a job on a frontier
	steps := []struct {
		name string
		do   func()
		// A's job 1, A's job 2, B's job 1, B's job 2.
		a1, a2, b1, b2 counts
	}{
		{"add", func() {
			ok(<-fA.Add(nil, jobItem(1, a, 1), jobItem(1, a, 2), jobItem(1, b, 1), jobItem(2, a, 3), jobItem(2, b, 2), jobItem(2, b, 3)))
			ok(<-fB.Add(nil, jobItem(1, c, 1)))
		}, counts{3, 0, 0}, counts{3, 0, 0}, counts{1, 0, 0}, counts{}},
		{"job 2 paused, A drained: job 1 fetched, job 2 held", func() {
			ok(fA.SetJobState(2, JobPaused))
			drain(t, fA, cA)
		}, counts{0, 0, 0}, counts{0, 3, 0}, counts{1, 0, 0}, counts{}},
		{"more of job 1 on A", func() {
			ok(<-fA.Add(nil, jobItem(1, a, 4), jobItem(1, b, 4)))
		}, counts{2, 0, 0}, counts{0, 3, 0}, counts{1, 0, 0}, counts{}},
		{"A releases p", func() {
			ok(fA.ReleasePartition(ctx, p))
		}, counts{1, 0, 0}, counts{0, 2, 0}, counts{1, 0, 0}, counts{}},
		{"p moved to B", func() {
			movePartition(sA, sB, p)
			ok(fB.ServePartition(p, time.Time{}))
		}, counts{1, 0, 0}, counts{0, 2, 0}, counts{2, 0, 0}, counts{0, 1, 0}},
		{"job 2 cancelled on B, B drained", func() {
			ok(fB.SetJobState(2, JobCancelled))
			drain(t, fB, cB)
		}, counts{1, 0, 0}, counts{0, 2, 0}, counts{0, 0, 0}, counts{0, 0, 1}},
		{"B releases p, p moved back to A", func() {
			ok(fB.ReleasePartition(ctx, p))
			movePartition(sB, sA, p)
			ok(fA.ServePartition(p, time.Time{}))
		}, counts{1, 0, 0}, counts{0, 2, 1}, counts{0, 0, 0}, counts{}},
		{"job 2 cancelled on A", func() {
			ok(fA.SetJobState(2, JobCancelled))
		}, counts{1, 0, 0}, counts{0, 0, 3}, counts{0, 0, 0}, counts{}},
	}
	for _, st := range steps {
		st.do()
		checkJobParts(t, st.name+": A", fA, sA)
		checkJobParts(t, st.name+": B", fB, sB)
		for _, x := range []struct {
			f    *Frontier
			name string
			job  uint32
			want counts
		}{{fA, "A", 1, st.a1}, {fA, "A", 2, st.a2}, {fB, "B", 1, st.b1}, {fB, "B", 2, st.b2}} {
			js := x.f.Job(x.job)
			if got := (counts{js.Queued + js.InFlight, js.Held, js.Dropped}); got != x.want {
				t.Errorf("%s: %s's job %d: %+v, want %+v", st.name, x.name, x.job, got, x.want)
			}
		}
	}
}

// TestPartitionJobsQuietIndependently: two jobs in one partitioned
// frontier, each with work in its own partition: one is done (JobDone)
// while the other has work; a job whose partitions are all released is
// done here, and has work again once one is served back.
func TestPartitionJobsQuietIndependently(t *testing.T) {
	p, q := Partition(11), Partition(12)
	a, b := hostIn(p, 0), hostIn(q, 0)
	s := &MemStore{}
	f, c := newPartitioned(t, s, Options{MinDelay: time.Millisecond}, p, q)
	if err := <-f.Add(nil, jobItem(1, a, 1), jobItem(2, b, 1), jobItem(2, b, 2)); err != nil {
		t.Fatal(err)
	}
	l := mustLease(t, f) // one of them; the other host's comes next
	l2 := mustLease(t, f)
	if l.Item.Job != 1 {
		l, l2 = l2, l
	}
	if f.JobDone(1) || f.JobDone(2) {
		t.Fatalf("a job done with its URLs in flight: %+v, %+v", f.Job(1), f.Job(2))
	}
	<-must(f.Complete(l, Outcome{Status: 200}, nil))
	if !f.JobDone(1) || f.JobDone(2) {
		t.Fatalf("job 1 fetched, job 2 not: done %v, %v; want true, false", f.JobDone(1), f.JobDone(2))
	}
	<-must(f.Complete(l2, Outcome{Status: 200}, nil))
	if err := f.ReleasePartition(context.Background(), q); err != nil {
		t.Fatal(err)
	}
	if !f.JobDone(2) {
		t.Fatalf("job 2 with its partition released: %+v, want done here", f.Job(2))
	}
	checkJobParts(t, "q released", f, s)
	if err := f.ServePartition(q, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if f.JobDone(2) || !f.JobDone(1) {
		t.Fatalf("q served again: job 1 %+v, job 2 %+v; want job 2's last URL back", f.Job(1), f.Job(2))
	}
	if got := drain(t, f, c); len(got) != 1 || got[0].Job != 2 {
		t.Fatalf("drained %v, want job 2's last URL", got)
	}
	if !f.JobDone(2) {
		t.Fatalf("job 2 drained: %+v", f.Job(2))
	}
	checkJobParts(t, "drained", f, s)
}

// TestPartitionUnholdServedCancelled: a job's items held in partition p,
// p released, the job cancelled (which drops only what the served
// partitions hold), p served again: UnholdServed drops p's held items.
func TestPartitionUnholdServedCancelled(t *testing.T) {
	p, q := Partition(1), Partition(2)
	s := &MemStore{}
	f, _ := newPartitioned(t, s, Options{MinDelay: time.Millisecond}, p, q)
	a, b := hostIn(p, 0), hostIn(q, 0)
	<-f.Add(nil, jobItem(1, a, 1), jobItem(1, a, 2), jobItem(1, b, 1))
	if err := f.SetJobState(1, JobPaused); err != nil {
		t.Fatal(err)
	}
	noLease(t, f, -1)
	if err := f.ReleasePartition(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if err := f.SetJobState(1, JobCancelled); err != nil {
		t.Fatal(err)
	}
	if err := f.ServePartition(p, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if js := f.Job(1); js.Held != 2 || js.Dropped != 1 {
		t.Fatalf("p served again: %+v, want p's 2 held, q's 1 dropped", js)
	}
	if err := f.UnholdServed(1); err != nil {
		t.Fatal(err)
	}
	if js := f.Job(1); js.Held != 0 || js.Dropped != 3 {
		t.Fatalf("after UnholdServed: %+v, want all 3 dropped", js)
	}
	if _, held := s.Contents(); held[1] != 0 {
		t.Errorf("store holds %d held items", held[1])
	}
	checkJobParts(t, "after UnholdServed", f, s)
}
