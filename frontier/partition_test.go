package frontier

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/hostpolicy"
	"github.com/trawl-crawler/trawl/internal/store/partition"
	"github.com/trawl-crawler/trawl/internal/testkit/clustertest"
)

// hostIn is the i-th test host of partition p (clustertest.HostIn).
func hostIn(p Partition, i int) string { return clustertest.HostIn(partition.ID(p), i) }

// hostsIn is the first n test hosts of partition p (clustertest.HostsIn).
func hostsIn(p Partition, n int) []string { return clustertest.HostsIn(partition.ID(p), n) }

func newPartitioned(t *testing.T, s *MemStore, o Options, parts ...Partition) (*Frontier, *clock) {
	t.Helper()
	o.Partitioned, o.Store = true, s
	f, c := newTest(t, o)
	for _, p := range parts {
		if err := f.ServePartition(p, time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	return f, c
}

// checkCounts compares Stats with a recount over the hosts in memory,
// and checks that every host in memory is of a loaded partition and
// listed by it.
func checkCounts(t *testing.T, f *Frontier) {
	t.Helper()
	settle(t, f)
	got, want := statsAndRecount(f)
	got.Ready, got.Waiting, got.Paused, want.Ready, want.Waiting = 0, 0, 0, 0, 0 // recount counts neither
	if got != want {
		t.Errorf("Stats = %+v, recount %+v", got, want)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	listed := 0
	for p, ps := range f.parts {
		if ps == nil {
			continue
		}
		for _, id := range ps.hosts {
			if h := f.hosts.at(id); h.free || h.part != Partition(p) {
				t.Errorf("partition %d lists host %d (free %v, partition %d)", p, id, h.free, h.part)
			}
		}
		listed += len(ps.hosts)
	}
	if listed != f.hosts.len() {
		t.Errorf("partitions list %d hosts, the table holds %d", listed, f.hosts.len())
	}
	w := 0
	f.hosts.each(func(h *hostState) {
		for l := range maxLevels {
			w += len(f.win(h, l))
		}
	})
	if w != f.windowed {
		t.Errorf("windowed = %d, windows hold %d", f.windowed, w)
	}
}

func TestPartitionRules(t *testing.T) {
	p, q := Partition(3), Partition(200)
	tests := []struct {
		name string
		do   func(f *Frontier) error
		want string // substring of the error; "" for none
	}{
		{"add served", func(f *Frontier) error { return <-f.Add(nil, item(hostIn(p, 0), 1)) }, ""},
		{"add unserved", func(f *Frontier) error {
			return <-f.Add(nil, item(hostIn(p, 0), 1), item(hostIn(q, 0), 1))
		}, "partition 200, which this frontier does not serve"},
		{"serve twice", func(f *Frontier) error { return f.ServePartition(p, time.Time{}) }, "already served"},
		{"serve out of range", func(f *Frontier) error { return f.ServePartition(partCount, time.Time{}) }, "out of range"},
		{"release unserved", func(f *Frontier) error { return f.ReleasePartition(context.Background(), q) }, "not served"},
		{"release served", func(f *Frontier) error { return f.ReleasePartition(context.Background(), p) }, ""},
		{"serve other", func(f *Frontier) error { return f.ServePartition(q, time.Time{}) }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &MemStore{}
			f, _ := newPartitioned(t, s, Options{}, p)
			err := tt.do(f)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("err = %v, want none", err)
			case tt.want != "" && (err == nil || !contains(err.Error(), tt.want)):
				t.Fatalf("err = %v, want one saying %q", err, tt.want)
			}
			checkCounts(t, f)
		})
	}
	// Not partitioned: serving is an error, every item accepted.
	f, _ := newTest(t, Options{})
	if err := f.ServePartition(p, time.Time{}); err == nil {
		t.Error("ServePartition on an unpartitioned frontier: no error")
	}
	if !f.Serves(hostIn(q, 0)) {
		t.Error("unpartitioned frontier does not serve a host")
	}
}

// TestPartitionRefusesUnserved: an Add or a Complete with an item of a
// partition not served changes nothing; the lease stays out.
func TestPartitionRefusesUnserved(t *testing.T) {
	p, q := Partition(7), Partition(8)
	s := &MemStore{}
	f, _ := newPartitioned(t, s, Options{}, p)
	a, b := hostIn(p, 0), hostIn(q, 0)
	err := <-f.Add(nil, item(a, 1), item(b, 1))
	var ns *NotServedError
	if !errors.As(err, &ns) || !errors.Is(err, ErrNotServed) || ns.Host != b || ns.Partition != q {
		t.Fatalf("Add of an unserved host: err = %v", err)
	}
	if st := f.Stats(); st.Queued != 0 || st.Hosts != 0 || s.Len() != 0 {
		t.Fatalf("a refused Add queued something: %+v, store %d", st, s.Len())
	}
	if f.Serves(b) || !f.Serves(a) {
		t.Fatal("Serves wrong")
	}
	<-f.Add(nil, item(a, 1))
	l := mustLease(t, f)
	if _, err := f.Complete(l, Outcome{Status: 200}, nil, item(a, 2), item(b, 2)); !errors.Is(err, ErrNotServed) {
		t.Fatalf("Complete with an unserved link: err = %v", err)
	}
	if st := f.Stats(); st.InFlight != 1 || s.Len() != 1 {
		t.Fatalf("a refused Complete changed something: %+v, store %d", st, s.Len())
	}
	if err := <-must(f.Complete(l, Outcome{Status: 200}, nil, item(a, 2))); err != nil {
		t.Fatal(err)
	}
	// A policy of an unserved host is kept until its partition is served.
	f.SetHostPolicy(b, hostpolicy.Policy{Paused: true})
	if _, ok := f.Host(b); ok {
		t.Fatal("SetHostPolicy made a host of an unserved partition")
	}
	if err := f.ServePartition(q, time.Time{}); err != nil {
		t.Fatal(err)
	}
	<-f.Add(nil, item(b, 3))
	if hi, _ := f.Host(b); hi.State != HostPaused {
		t.Fatalf("kept policy not applied: %+v", hi)
	}
	checkCounts(t, f)
}

// TestPartitionReleaseWaitsAndServesBack: a release waits for the lease
// in flight (whose links into the partition are still taken), forgets the
// partition's hosts, and serving it again brings back the same queues and
// clocks; the hold is honoured.
func TestPartitionReleaseWaitsAndServesBack(t *testing.T) {
	p, q := Partition(1), Partition(2)
	s := &MemStore{}
	f, c := newPartitioned(t, s, Options{MinDelay: time.Second, IPMaxParallel: 1}, p, q)
	a, a2, b := hostIn(p, 0), hostIn(p, 1), hostIn(q, 0)
	<-f.Add(nil, item(a, 1), item(a, 2), item(a, 3), item(a2, 1), item(a2, 2), item(b, 1), item(b, 2))
	la := mustLease(t, f)
	if la.Item.Host != a {
		t.Fatalf("first lease of %s, want %s", la.Item.Host, a)
	}
	f.SetIP(la, "10.0.0.1")
	la2 := mustLease(t, f) // a2, the same IP: parked once resolved
	if la2.Item.Host != a2 || f.SetIP(la2, "10.0.0.1") {
		t.Fatalf("second lease %s, want %s parked by its IP", la2.Item.Host, a2)
	}
	<-must(f.Complete(la2, Outcome{Status: 200, NotStarted: true, Requeue: true}, nil))
	c.advance(100 * time.Millisecond)

	released := make(chan error, 1)
	go func() { released <- f.ReleasePartition(context.Background(), p) }()
	select {
	case err := <-released:
		t.Fatalf("release returned %v with a lease in flight", err)
	case <-time.After(50 * time.Millisecond):
	}
	// Stopped: nothing of p is leased, q still is.
	lb := mustLease(t, f)
	if lb.Item.Host != b {
		t.Fatalf("leased %s while its partition is being released", lb.Item.Host)
	}
	<-must(f.Complete(lb, Outcome{Status: 200}, nil))
	// The lease of a completes, with a link of its own host.
	<-must(f.Complete(la, Outcome{Status: 200, ResponseTime: 10 * time.Millisecond}, nil, item(a, 4)))
	if err := <-released; err != nil {
		t.Fatal(err)
	}
	wantNext := c.t.Add(time.Second)
	if _, ok := f.Host(a); ok || f.Serves(a) {
		t.Fatal("released host still known")
	}
	if st := f.Stats(); st.Hosts != 1 || st.Queued != 1 || st.Parked != 0 || st.InFlight != 0 {
		t.Fatalf("after release Stats = %+v, want q's host and item only", st)
	}
	checkCounts(t, f)
	if err := <-f.Add(nil, item(a, 5)); !errors.Is(err, ErrNotServed) {
		t.Fatalf("Add to a released partition: %v", err)
	}

	// Serve p again with a hold 1m ahead: nothing of p before it.
	hold := c.t.Add(time.Minute)
	if err := f.ServePartition(p, hold); err != nil {
		t.Fatal(err)
	}
	if hi, _ := f.Host(a); hi.Queued != 3 || !hi.NextAllowed.Equal(hold) {
		t.Fatalf("host %s back as %+v, want 3 queued, next allowed %v", a, hi, hold)
	}
	if hi, _ := f.Host(a2); hi.Queued != 2 {
		t.Fatalf("host %s back as %+v, want 2 queued", a2, hi)
	}
	checkCounts(t, f)
	c.advance(time.Second)
	lb = mustLease(t, f)
	if lb.Item.Host != b {
		t.Fatalf("leased %s before the hold", lb.Item.Host)
	}
	<-must(f.Complete(lb, Outcome{Status: 200}, nil))
	if l, _ := f.Lease(); l != nil {
		t.Fatalf("leased %s before the hold", l.Item.URL)
	}
	c.t = hold
	got := map[string]bool{}
	for _, it := range drain(t, f, c) {
		got[it.URL] = true
	}
	for _, u := range []string{item(a, 2).URL, item(a, 3).URL, item(a, 4).URL, item(a2, 1).URL, item(a2, 2).URL} {
		if !got[u] {
			t.Errorf("%s not offered after serving again (got %v)", u, got)
		}
	}
	if len(got) != 5 || s.Len() != 0 {
		t.Errorf("offered %d items, store holds %d", len(got), s.Len())
	}

	// With no hold, the stored clock comes back as it was.
	<-f.Add(nil, item(a, 6))
	c.advance(time.Second)
	l := mustLease(t, f)
	c.advance(10 * time.Millisecond)
	<-must(f.Complete(l, Outcome{Status: 200}, nil, item(a, 7)))
	wantNext = c.t.Add(time.Second)
	if err := f.ReleasePartition(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if err := f.ServePartition(p, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if hi, _ := f.Host(a); !hi.NextAllowed.Equal(wantNext) || hi.Queued != 1 {
		t.Fatalf("host back as %+v, want next allowed %v and 1 queued", hi, wantNext)
	}
	noLease(t, f, time.Second)
	checkCounts(t, f)
}

// TestPartitionReleaseCancelled: a release whose context ends with a
// lease in flight returns the context's error and leaves the partition
// stopped; a second release finishes it.
func TestPartitionReleaseCancelled(t *testing.T) {
	p := Partition(5)
	s := &MemStore{}
	f, c := newPartitioned(t, s, Options{MinDelay: time.Second}, p)
	a, a2 := hostIn(p, 0), hostIn(p, 1)
	<-f.Add(nil, item(a, 1), item(a2, 1))
	l := mustLease(t, f)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := f.ReleasePartition(ctx, p); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("release with a lease out: err = %v, want the deadline", err)
	}
	if l2, _ := f.Lease(); l2 != nil {
		t.Fatalf("leased %s from a stopped partition", l2.Item.URL)
	}
	if err := f.ServePartition(p, time.Time{}); err == nil {
		t.Fatal("served a partition being released")
	}
	c.advance(time.Second)
	<-must(f.Complete(l, Outcome{Status: 200}, nil, item(a, 2)))
	if err := f.ReleasePartition(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if st := f.Stats(); st.Hosts != 0 || st.Queued != 0 {
		t.Fatalf("after release: %+v", st)
	}
	checkCounts(t, f)
	if err := f.ServePartition(p, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if got := len(drain(t, f, c)); got != 2 {
		t.Fatalf("served back %d items, want 2", got)
	}
}

// TestPartitionReleaseExpiredLease: a lease that is never completed does
// not hold a release past its deadline.
func TestPartitionReleaseExpiredLease(t *testing.T) {
	p := Partition(9)
	s := &MemStore{}
	f, c := newPartitioned(t, s, Options{LeaseTimeout: time.Minute}, p)
	<-f.Add(nil, item(hostIn(p, 0), 1))
	l := mustLease(t, f)
	c.advance(time.Minute)
	if err := f.ReleasePartition(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Complete(l, Outcome{Status: 200}, nil); !errors.Is(err, ErrLeaseExpired) {
		t.Fatalf("Complete of the expired lease: %v", err)
	}
	if f.SetIP(l, "10.0.0.1") {
		t.Fatal("SetIP of a released host's lease")
	}
	if s.Len() != 1 {
		t.Fatalf("store holds %d items, want the expired one", s.Len())
	}
	checkCounts(t, f)
}

// TestPartitionUnholdServed: items of a paused job held in partition p;
// p released; the job resumed, which moves only what the served
// partitions hold; p served again: its items stay held until UnholdServed
// puts them back (a fleet would otherwise finish the crawl without them).
func TestPartitionUnholdServed(t *testing.T) {
	p, q := Partition(1), Partition(2)
	s := &MemStore{}
	f, c := newPartitioned(t, s, Options{MinDelay: time.Millisecond}, p, q)
	a, b := hostIn(p, 0), hostIn(q, 0)
	<-f.Add(nil, jobItem(1, a, 1), jobItem(1, a, 2), jobItem(1, b, 1))
	if err := f.SetJobState(1, JobPaused); err != nil {
		t.Fatal(err)
	}
	noLease(t, f, -1) // every item held on its way to a lease
	if got := f.Job(1).Held; got != 3 {
		t.Fatalf("held %d, want 3", got)
	}
	if err := f.ReleasePartition(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if err := f.ResumeJob(1); err != nil {
		t.Fatal(err)
	}
	if err := f.ServePartition(p, time.Time{}); err != nil {
		t.Fatal(err)
	}
	c.advance(time.Second)
	got := drain(t, f, c)
	if len(got) != 1 || got[0].Host != b {
		t.Fatalf("after resume and serving p again: offered %v, want only %s's item", got, b)
	}
	if err := f.UnholdServed(1); err != nil {
		t.Fatal(err)
	}
	c.advance(time.Second)
	got = drain(t, f, c)
	if len(got) != 2 || got[0].Host != a || got[1].Host != a {
		t.Fatalf("after UnholdServed: offered %v, want %s's two items", got, a)
	}
	if s.Len() != 0 {
		t.Errorf("store holds %d items", s.Len())
	}
}

// TestPartitionHoldCoversNewHosts: a partition taken with a hold holds
// every host of it, those its store had and those first met later (a
// routed URL, a link): the dead owner may have been fetching a host it had
// not yet recorded. A partition served without a hold holds none.
func TestPartitionHoldCoversNewHosts(t *testing.T) {
	p, q := Partition(1), Partition(2)
	s := &MemStore{}
	f, c := newPartitioned(t, s, Options{MinDelay: time.Second}, q)
	hold := c.t.Add(time.Minute)
	if err := f.ServePartition(p, hold); err != nil {
		t.Fatal(err)
	}
	n, m := hostIn(p, 3), hostIn(q, 3)
	<-f.Add(nil, item(n, 1), item(m, 1))
	if hi, _ := f.Host(n); !hi.NextAllowed.Equal(hold) {
		t.Fatalf("new host %s of the taken partition: %+v, want next allowed %v (the hold)", n, hi, hold)
	}
	l := mustLease(t, f)
	if l.Item.Host != m {
		t.Fatalf("leased %s, want %s: the other partition holds nothing", l.Item.Host, m)
	}
	<-must(f.Complete(l, Outcome{Status: 200}, nil))
	c.advance(30 * time.Second)
	if l, _ := f.Lease(); l != nil {
		t.Fatalf("leased %s before the hold", l.Item.URL)
	}
	c.t = hold
	if l := mustLease(t, f); l.Item.Host != n {
		t.Fatalf("at the hold leased %s, want %s", l.Item.Host, n)
	}
	// A host first met once the hold has passed is not held, nor said
	// to wait for it.
	c.advance(time.Second)
	late := hostIn(p, 4)
	<-f.Add(nil, item(late, 1))
	if hi, _ := f.Host(late); hi.Reason == GapHold || hi.NextAllowed.After(c.t) {
		t.Fatalf("host %s met after the hold: %+v, want no hold", late, hi)
	}
}
