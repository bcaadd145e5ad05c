package frontier

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// checkHeaps fails t unless the ready, runnable and later heaps hold
// their hosts where the hosts say, with their keys as the hosts have them,
// in heap order, and the due counts agree with the ready heap.
func checkHeaps(t *testing.T, f *Frontier) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, e := range f.ready.es {
		h := f.hosts.at(e.id)
		if int(h.heapIdx) != i || e.key != h.key() || h.runIdx >= 0 {
			t.Fatalf("ready[%d]: host %d at heapIdx %d runIdx %d, key %d want %d", i, e.id, h.heapIdx, h.runIdx, e.key, h.key())
		}
		if i > 0 && f.ready.Less(i, (i-1)/2) {
			t.Fatalf("ready[%d] sorts before its parent", i)
		}
	}
	for i, e := range f.runnable.es {
		h := f.hosts.at(e.id)
		if int(h.runIdx) != i || e.key != h.runKey || h.heapIdx >= 0 {
			t.Fatalf("runnable[%d]: host %d at runIdx %d heapIdx %d, key %d want %d", i, e.id, h.runIdx, h.heapIdx, e.key, h.runKey)
		}
		if i > 0 && f.runnable.Less(i, (i-1)/2) {
			t.Fatalf("runnable[%d] sorts before its parent", i)
		}
	}
	for i, id := range f.due.later.ids {
		if h := f.hosts.at(id); int(h.due) != i+1 || h.heapIdx < 0 {
			t.Fatalf("later[%d]: host %d with due %d, heapIdx %d", i, id, h.due, h.heapIdx)
		}
		if i > 0 && f.due.later.Less(i, (i-1)/2) {
			t.Fatalf("later[%d] sorts before its parent", i)
		}
	}
	counted, dead := 0, 0
	f.hosts.each(func(h *hostState) {
		if h.due < 0 {
			if h.heapIdx < 0 {
				t.Fatalf("host %d counted due out of the ready heap", h.id)
			}
			counted++
			if h.due == dueDead {
				dead++
			}
		}
		if h.due == dueNone && h.heapIdx >= 0 {
			t.Fatalf("host %d in the ready heap, neither counted nor later", h.id)
		}
	})
	if counted != f.due.due || dead != f.due.dead {
		t.Fatalf("due counts %d (%d dead), want %d (%d dead)", f.due.due, f.due.dead, counted, dead)
	}
}

// bulkStore is a store as a crawl of 3,000 hosts leaves it at a crash:
// hosts of 1 to 6 URLs, some with a Crawl-delay, one dead, a few leased
// and completed (their clocks later than the others').
func bulkStore(t *testing.T, c *clock) *MemStore {
	t.Helper()
	store := &MemStore{}
	f := restart(t, store, c, Options{MinDelay: time.Second})
	r := rand.New(rand.NewPCG(1, 2))
	var items []Item
	for h := range 3000 {
		host := fmt.Sprintf("h%04d.test", h)
		for i := range 1 + r.IntN(6) {
			items = append(items, Item{URL: fmt.Sprintf("http://%s/%d", host, i), Host: host, Level: r.IntN(2)})
		}
		if h%500 == 0 {
			f.SetCrawlDelay(host, 3*time.Second)
		}
	}
	<-f.Add(nil, items...)
	for i := range 40 {
		l := mustLease(t, f)
		o := Outcome{Status: 200, ResponseTime: time.Duration(i) * 10 * time.Millisecond}
		if i == 7 {
			o.DropHost = true
		}
		<-must(f.Complete(l, o, nil))
	}
	return store
}

// TestBulkMoveKeepsLeaseOrder: after a restart every host is due at once
// and moveDue moves them to runnable together; the leases come out in the
// order that moving them one by one gives, through the whole crawl (in
// which hosts come due together again), with new hosts met on the way.
func TestBulkMoveKeepsLeaseOrder(t *testing.T) {
	var runs [2][]string
	for k, bulkMin := range []int{bulkMove, math.MaxInt} {
		c := &clock{t: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)}
		store := bulkStore(t, c)
		c.advance(time.Minute)
		f := restart(t, store, c, Options{MinDelay: time.Second})
		f.bulkMin = bulkMin
		<-f.Add(nil, item("new1.test", 1), item("new2.test", 1))
		for i := 0; ; i++ {
			// Windows are read by goroutines: the leases follow the
			// same order only if each Lease sees every read queued
			// before it done.
			settle(t, f)
			l, wait := tryLease(t, f)
			if i%97 == 0 {
				checkHeaps(t, f)
			}
			if l == nil {
				if wait < 0 {
					break
				}
				c.advance(wait)
				continue
			}
			runs[k] = append(runs[k], l.Item.URL)
			<-must(f.Complete(l, Outcome{Status: 200}, nil))
		}
		checkHeaps(t, f)
		if !f.Done() {
			t.Fatalf("bulkMin %d: not done: %+v", bulkMin, f.Stats())
		}
	}
	if len(runs[0]) < 3000 {
		t.Fatalf("%d leases, want every queued URL", len(runs[0]))
	}
	if !slices.Equal(runs[0], runs[1]) {
		for i := range min(len(runs[0]), len(runs[1])) {
			if runs[0][i] != runs[1][i] {
				t.Fatalf("lease %d: %s moved in bulk, %s one by one (%d and %d leases)", i, runs[0][i], runs[1][i], len(runs[0]), len(runs[1]))
			}
		}
		t.Fatalf("%d leases moved in bulk, %d one by one", len(runs[0]), len(runs[1]))
	}
}

// TestLeaseSkipsBounded: after a restart no host has a window; the first
// Lease queues reads for at most maxSkips hosts, returns nil with no wait
// and signals Changed, and the leases that follow hand every item out once.
func TestLeaseSkipsBounded(t *testing.T) {
	c := &clock{t: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)}
	store := &MemStore{}
	o := Options{MinDelay: -1, MaxParallel: 1 << 30}
	f := restart(t, store, c, o)
	const hosts = 1000
	var items []Item
	for i := range 3 * hosts {
		items = append(items, item(fmt.Sprintf("h%d.test", i%hosts), i))
	}
	<-f.Add(nil, items...)
	f = restart(t, store, c, o)
	select {
	case <-f.Changed():
	default:
	}
	l, wait := f.Lease()
	if l != nil || wait != 0 {
		t.Fatalf("first Lease after a restart = %v, %v; want nil, 0", l, wait)
	}
	f.mu.Lock()
	refilling := f.refilling
	f.mu.Unlock()
	if refilling > maxSkips {
		t.Fatalf("%d hosts queued for a read by one Lease, want at most %d", refilling, maxSkips)
	}
	select {
	case <-f.Changed():
	default:
		t.Fatal("Changed not signalled")
	}
	seen := map[string]bool{}
	for _, it := range drain(t, f, c) {
		if seen[it.URL] {
			t.Fatalf("%s leased twice", it.URL)
		}
		seen[it.URL] = true
	}
	if len(seen) != len(items) {
		t.Fatalf("%d URLs leased, want %d", len(seen), len(items))
	}
}

// TestLeasesCompletedOutOfOrder: completions in any order take their
// leases out (f.leases stays within twice the leases out, its first lease
// out); the leases left expire and are offered again, once each, and the
// completed ones are not.
func TestLeasesCompletedOutOfOrder(t *testing.T) {
	f, c := newTest(t, Options{MinDelay: -1, MaxParallel: 1 << 30, LeaseTimeout: time.Minute})
	var items []Item
	for i := range 200 {
		items = append(items, item(fmt.Sprintf("h%d.test", i%7), i))
	}
	<-f.Add(nil, items...)
	var leases []*Lease
	for range 200 {
		leases = append(leases, mustLease(t, f))
		c.advance(time.Millisecond)
	}
	r := rand.New(rand.NewPCG(3, 4))
	r.Shuffle(len(leases), func(i, j int) { leases[i], leases[j] = leases[j], leases[i] })
	kept := map[string]bool{}
	for i, l := range leases {
		if i%3 == 0 {
			kept[l.Item.URL] = true
			continue
		}
		<-must(f.Complete(l, Outcome{Status: 200}, nil))
		f.mu.Lock()
		n, out, first := len(f.leases), f.inFlight, len(f.leases) == 0 || !f.leases[0].done
		f.mu.Unlock()
		if n > 2*out+1 || !first {
			t.Fatalf("after %d completions: %d leases held for %d out (first out: %v)", i+1, n, out, first)
		}
	}
	hi, jobs, _, err := f.HostQueue("h3.test", 100)
	if err != nil {
		t.Fatal(err)
	}
	if jobs.InFlight[0] != hi.InFlight {
		t.Fatalf("HostQueue counts %d in flight by job, %d in all", jobs.InFlight[0], hi.InFlight)
	}
	c.advance(time.Minute)
	again := drain(t, f, c)
	if len(again) != len(kept) {
		t.Fatalf("%d offered again after expiry, want %d", len(again), len(kept))
	}
	for _, it := range again {
		if !kept[it.URL] {
			t.Fatalf("%s offered again after its completion", it.URL)
		}
		delete(kept, it.URL)
	}
}
