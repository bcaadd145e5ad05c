package frontier

import (
	"context"
	"testing"
	"time"
)

// TestNewHostWhileStopping: a host of partition p that first
// appears while p is being released (a completing lease's link, accepted
// in partStopping) is not fenced: Lease hands it out although p is
// stopped, and ReleasePartition does not wait for that lease.
func TestNewHostWhileStopping(t *testing.T) {
	p := Partition(9)
	hs := hostsIn(p, 3)
	a1, a2, b := hs[0], hs[1], hs[2]
	s := &MemStore{}
	f, _ := newPartitioned(t, s, Options{MinDelay: time.Millisecond}, p)
	if err := <-f.Add(nil, jobItem(1, a1, 1), jobItem(1, a2, 2)); err != nil {
		t.Fatal(err)
	}
	l1, _ := tryLease(t, f)
	l2, _ := tryLease(t, f)
	if l1 == nil || l2 == nil {
		t.Fatal("two leases expected")
	}
	released := make(chan any, 1)
	go func() {
		defer func() { released <- recover() }()
		if err := f.ReleasePartition(context.Background(), p); err != nil {
			released <- err
		}
	}()
	// Wait until p is stopped.
	for {
		f.mu.Lock()
		ph := f.parts[p].phase
		f.mu.Unlock()
		if ph == partStopping {
			break
		}
		time.Sleep(time.Millisecond)
	}
	// l1 completes with a link to b, a host of p never seen: accepted.
	if err := <-must(f.Complete(l1, Outcome{Status: 200}, nil, jobItem(1, b, 3))); err != nil {
		t.Fatal(err)
	}
	settle(t, f)
	l3, _ := tryLease(t, f)
	if l3 != nil {
		t.Errorf("leased %s of partition %d while it is being released", l3.Item.URL, p)
	}
	// The last lease of the hosts fenced at the start completes: the
	// release goes on, with l3 still out.
	if err := <-must(f.Complete(l2, Outcome{Status: 200}, nil)); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-released:
		if r != nil {
			t.Fatalf("ReleasePartition: %v", r)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("release did not end")
	}
	// b's item stays queued in the store (the next owner's), and the
	// job's counters say so.
	got, err := s.Read(b, 0, 0, 10)
	if err != nil || len(got) != 1 || got[0].URL != jobItem(1, b, 3).URL {
		t.Errorf("the store holds %v (%v) for %s after the release, want its one item", got, err, b)
	}
	if c := s.Counters(1)[p]; c.Stored != 1 {
		t.Errorf("job 1's counters over partition %d after the release: %+v, want 1 stored", p, c)
	}
}
