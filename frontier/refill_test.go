package frontier

import (
	"sync"
	"testing"
	"time"
)

// blockingStore is a MemStore whose Read, once armed, waits until released.
type blockingStore struct {
	*MemStore
	mu      sync.Mutex
	gate    chan struct{} // nil: Read does not wait
	entered chan string   // the host of every Read that waits
}

func (s *blockingStore) arm() {
	s.mu.Lock()
	s.gate = make(chan struct{})
	s.mu.Unlock()
}

func (s *blockingStore) release() {
	s.mu.Lock()
	close(s.gate)
	s.gate = nil
	s.mu.Unlock()
}

func (s *blockingStore) Read(host string, level int, after uint64, n int) ([]Item, error) {
	s.mu.Lock()
	gate := s.gate
	s.mu.Unlock()
	if gate != nil {
		s.entered <- host
		<-gate
	}
	return s.MemStore.Read(host, level, after, n)
}

// within fails the test if fn does not return within 5s (wall clock: it
// guards against a deadlock, it does not time the frontier).
func within(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("%s waited on a blocked Store.Read", what)
	}
}

// TestRefillOffTheLock: while a window refill is blocked in Store.Read,
// Lease, Complete, Stats, Job and Add go on for other hosts; Done does not
// report exhaustion; the host being refilled is not leased; once the read
// returns, its items are leased in order and its gap holds.
func TestRefillOffTheLock(t *testing.T) {
	s := &blockingStore{MemStore: &MemStore{}, entered: make(chan string, 16)}
	f, c := newTest(t, Options{MinDelay: time.Second, Window: 2, Store: s, MaxHeadStart: -1}) // hosts in the order they became due
	var items []Item
	for i := 1; i <= 5; i++ {
		items = append(items, item("a.test", i))
	}
	<-f.Add(nil, items...) // p1, p2 in the window; p3..p5 in the store
	<-f.Add(nil, item("b.test", 1), item("b.test", 2))
	for range 2 { // empty a.test's window (and lease b.test once)
		l := mustLease(t, f)
		<-must(f.Complete(l, Outcome{Status: 200}, nil))
		if l.Item.Host == "b.test" {
			l = mustLease(t, f)
			<-must(f.Complete(l, Outcome{Status: 200}, nil))
		}
		c.advance(time.Second)
	}
	s.arm()
	var l *Lease
	within(t, "Lease", func() { l, _ = f.Lease() })
	if got := <-s.entered; got != "a.test" {
		t.Fatalf("blocked read of %s, want a.test", got)
	}
	if l == nil || l.Item.Host != "b.test" {
		t.Fatalf("Lease during a.test's refill = %v, want b.test's item", l)
	}
	within(t, "Stats", func() {
		if st := f.Stats(); st.Refilling != 1 || st.Queued != 3 || st.InFlight != 1 {
			t.Errorf("Stats() during the refill = %+v, want 1 refilling, 3 queued, 1 in flight", st)
		}
	})
	within(t, "Complete", func() { <-must(f.Complete(l, Outcome{Status: 200}, nil, item("c.test", 1))) })
	within(t, "Add", func() { <-f.Add(nil, item("a.test", 6)) })
	within(t, "Lease", func() {
		if l, _ := f.Lease(); l == nil || l.Item.Host != "c.test" {
			t.Errorf("second Lease during the refill = %v, want c.test's item", l)
		} else {
			<-must(f.Complete(l, Outcome{Status: 200}, nil))
		}
	})
	within(t, "Job", func() {
		if st := f.Job(0); st.Queued != 4 || st.InFlight != 0 {
			t.Errorf("Job(0) during the refill = %+v, want 4 queued", st)
		}
	})
	c.advance(time.Hour)
	within(t, "Lease", func() {
		if l, wait := f.Lease(); l != nil || wait >= 0 {
			t.Errorf("Lease with only a.test left, being read = %v, %v; want none, wait < 0", l, wait)
		}
	})
	within(t, "Done", func() {
		if f.Done() {
			t.Error("Done() = true while a.test's window is being read")
		}
	})
	s.release()
	settle(t, f)
	var got []string
	for _, it := range drain(t, f, c) {
		got = append(got, it.URL)
	}
	want := []string{"http://a.test/p3", "http://a.test/p4", "http://a.test/p5", "http://a.test/p6"}
	if len(got) != len(want) {
		t.Fatalf("after the refill leased %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("after the refill leased %v, want %v", got, want)
		}
	}
	if !f.Done() || s.Len() != 0 {
		t.Errorf("not done: %+v, store holds %d", f.Stats(), s.Len())
	}
}

// TestDeadHostDrainsOffTheLock: a dropped host's queue is read and deleted
// by the refillers; a blocked read holds up neither Lease nor Done's
// answer (false until the drain ends).
func TestDeadHostDrainsOffTheLock(t *testing.T) {
	s := &blockingStore{MemStore: &MemStore{}, entered: make(chan string, 16)}
	f, _ := newTest(t, Options{MinDelay: time.Second, Window: 1, Store: s})
	<-f.Add(nil, item("a.test", 1), item("a.test", 2), item("a.test", 3), item("b.test", 1))
	l := mustLease(t, f)
	if l.Item.Host != "a.test" {
		t.Fatalf("leased %s first, want a.test", l.Item.URL)
	}
	s.arm()
	within(t, "Complete", func() { <-must(f.Complete(l, Outcome{Status: 500, DropHost: true}, nil)) })
	<-s.entered
	within(t, "Lease", func() {
		if l, _ := f.Lease(); l == nil || l.Item.Host != "b.test" {
			t.Errorf("Lease while a.test drains = %v, want b.test's item", l)
		} else {
			<-must(f.Complete(l, Outcome{Status: 200}, nil))
		}
	})
	within(t, "Done", func() {
		if f.Done() {
			t.Error("Done() = true while a.test drains")
		}
	})
	s.release()
	settle(t, f)
	if st := f.Stats(); !f.Done() || st.Dropped != 2 || st.Queued != 0 {
		t.Errorf("after the drain Stats() = %+v, want done, 2 dropped", st)
	}
	if s.Len() != 0 {
		t.Errorf("store holds %d items", s.Len())
	}
}
