package frontier

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// statsAndRecount returns Stats and a recount by walking every host, as
// Stats once did, both under one hold of the lock (refillers run).
func statsAndRecount(f *Frontier) (got, want Stats) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.statsLocked(), recount(f)
}

// recount computes Stats by walking every host. f.mu is held.
func recount(f *Frontier) Stats {
	s := Stats{Hosts: f.hosts.len(), Dropped: f.dropped}
	now := f.clock.mono(f.opts.Now())
	f.hosts.each(func(h *hostState) {
		p := f.pending(h)
		s.Queued += p
		s.InFlight += int(h.inFlight)
		if p > 0 || h.inFlight > 0 {
			s.Active++
		}
		if h.backoff > 0 {
			s.Backoff++
		}
		if h.refilling {
			s.Refilling++
		}
		if h.runIdx >= 0 {
			s.Ready++
		}
		if h.heapIdx >= 0 && !h.dead {
			if h.nextAllowed > now {
				s.Waiting++
			} else {
				s.Ready++
			}
		}
	})
	for _, hs := range f.ipParked {
		s.Parked += len(hs)
	}
	return s
}

// TestStatsMatchRecount: under a random workload (adds, leases, successes,
// 503s, requeues, dropped hosts, an IP cap, a budget, restarts), the counts
// Stats keeps stay equal to a recount over every host.
func TestStatsMatchRecount(t *testing.T) {
	for seed := range seeds(10) {
		rng := rand.New(rand.NewPCG(seed, 11))
		s := &MemStore{}
		c := &clock{t: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)}
		o := Options{MinDelay: 50 * time.Millisecond, MaxParallel: 1 + rng.IntN(2), IPMaxParallel: 2, Window: 1 + rng.IntN(3), HostBudget: rng.IntN(2) * 40}
		f := restart(t, s, c, o)
		var out []*Lease
		next := 0
		add := func(n int) []Item {
			var items []Item
			for range n {
				next++
				items = append(items, item(fmt.Sprintf("h%d.test", rng.IntN(15)), next))
			}
			return items
		}
		f.Add(nil, add(40)...)
		for step := range 4000 {
			switch r := rng.IntN(50); {
			case r == 0:
				out = nil
				settle(t, f)
				f = restart(t, s, c, o)
			case r < 4:
				f.Add(nil, add(1+rng.IntN(5))...)
			case r < 6:
				c.advance(time.Duration(rng.IntN(3000)) * time.Millisecond)
			case r < 28:
				l, wait := tryLease(t, f)
				if l == nil {
					c.advance(max(0, min(wait, 500*time.Millisecond)))
					break
				}
				if !f.SetIP(l, fmt.Sprintf("10.0.0.%d", len(l.Item.Host)%3)) {
					f.Complete(l, Outcome{NotStarted: true, Requeue: true}, nil)
					break
				}
				out = append(out, l)
			default:
				if len(out) == 0 {
					break
				}
				i := rng.IntN(len(out))
				l := out[i]
				out = append(out[:i], out[i+1:]...)
				c.advance(time.Duration(rng.IntN(30)) * time.Millisecond)
				o := Outcome{Status: 200, ResponseTime: time.Duration(rng.IntN(20)) * time.Millisecond}
				switch rng.IntN(20) {
				case 0, 1, 2:
					o = Outcome{Status: 503, Requeue: rng.IntN(2) == 0}
				case 3:
					o = Outcome{Status: 500, Requeue: true, DropHost: true}
				case 4:
					o = Outcome{Timeout: true}
				}
				var more []Item
				if next < 600 {
					more = add(rng.IntN(4))
				}
				f.Complete(l, o, nil, more...)
			}
			checkHeap(t, f)
			if step%3 != 0 {
				continue // hosts come due meanwhile, unseen by Stats
			}
			if got, want := statsAndRecount(f); got != want {
				t.Fatalf("seed %d step %d: Stats() = %+v, recount %+v", seed, step, got, want)
			}
		}
	}
}

// checkHeap checks the ready heap's order: no entry sorts before its
// parent. (An entry whose key changed without heap.Fix, while others moved,
// once broke it: Complete changed the host's clock and then queued items.)
// It checks the due count beside it too (dueCount's invariant): every
// host of the ready heap counted due (its key at or before the mark) or
// in the later heap (after the mark), in that heap's order; no other host
// in either.
func checkHeap(t *testing.T, f *Frontier) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	q := &f.ready
	for i := range q.es {
		// An entry holds its host's key and name as they are now.
		if h := q.t.at(q.es[i].id); q.es[i] != q.t.entry(h, h.key()) || h.heapIdx != int32(i) {
			t.Fatalf("ready entry %d: %+v, host %s with key %d at %d", i, q.es[i], q.t.name(h), h.key(), h.heapIdx)
		}
		if p := (i - 1) / 2; i > 0 && q.Less(i, p) {
			a, b := q.t.at(q.es[i].id), q.t.at(q.es[p].id)
			t.Fatalf("heap order broken at %d: %s (key %d) under %s (key %d)", i, q.t.name(a), a.key(), q.t.name(b), b.key())
		}
	}
	r := &f.runnable
	for i := range r.es {
		h := r.t.at(r.es[i].id)
		if r.es[i] != r.t.entry(h, h.runKey) {
			t.Fatalf("runnable entry %d: %+v, host %s with key %d", i, r.es[i], r.t.name(h), h.runKey)
		}
		if p := (i - 1) / 2; i > 0 && r.Less(i, p) {
			t.Fatalf("runnable order broken at %d: %s (key %d)", i, r.t.name(h), h.runKey)
		}
		if h.runIdx != int32(i) || h.heapIdx >= 0 || h.dead {
			t.Fatalf("host %s in runnable at %d: runIdx %d, heapIdx %d, dead %v", r.t.name(h), i, h.runIdx, h.heapIdx, h.dead)
		}
	}
	d := &f.due
	due, dead := 0, 0
	f.hosts.each(func(h *hostState) {
		name := f.hosts.name(h)
		switch {
		case h.heapIdx < 0:
			if h.due != dueNone {
				t.Fatalf("host %s out of the ready heap is held by the due count (%d)", name, h.due)
			}
		case h.due > 0:
			if h.key() <= d.mark || d.later.ids[h.due-1] != h.id {
				t.Fatalf("host %s in the later heap at %d: key %d, mark %d", name, h.due-1, h.key(), d.mark)
			}
		case h.due == dueNone:
			t.Fatalf("host %s of the ready heap neither counted nor in the later heap", name)
		default:
			if h.key() > d.mark || (h.due == dueDead) != h.dead {
				t.Fatalf("host %s counted %d (dead %v) with key %d after the mark %d", name, h.due, h.dead, h.key(), d.mark)
			}
			due++
			if h.dead {
				dead++
			}
		}
	})
	if due != d.due || dead != d.dead || due+d.later.Len() != q.Len() {
		t.Fatalf("due count %d (%d dead), later %d; the hosts say %d (%d dead) of %d in the ready heap", d.due, d.dead, d.later.Len(), due, dead, q.Len())
	}
	for i := 1; i < d.later.Len(); i++ {
		if p := (i - 1) / 2; d.later.Less(i, p) {
			t.Fatalf("later heap order broken at %d", i)
		}
	}
}

// TestStatsClockBack: Stats after the clock went back (a test's clock, a
// wall clock stepped back) counts by walking the ready heap, and is right;
// once the clock passes the mark again the kept count takes over.
func TestStatsClockBack(t *testing.T) {
	c := &clock{t: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)}
	f, err := New(Options{MinDelay: time.Second, Now: c.now})
	if err != nil {
		t.Fatal(err)
	}
	for h := range 20 {
		host := fmt.Sprintf("h%d.test", h)
		<-f.Add(nil, item(host, 1), item(host, 2))
	}
	// Lease and complete ten hosts a tenth of a second apart: they wait
	// until 1.0 to 1.9 s from now.
	for range 10 {
		l, _ := tryLease(t, f)
		f.Complete(l, Outcome{Status: 200}, nil)
		c.advance(100 * time.Millisecond)
	}
	for _, step := range []time.Duration{500 * time.Millisecond, -800 * time.Millisecond, 1200 * time.Millisecond, -50 * time.Millisecond, time.Second} {
		c.advance(step)
		checkHeap(t, f)
		if got, want := statsAndRecount(f); got != want {
			t.Fatalf("after %v: Stats() = %+v, recount %+v", step, got, want)
		}
	}
}

// seeds is how many random runs a randomised test makes: n, or 2 under
// -short (the quick loop still runs the same checks on fewer histories).
func seeds(n uint64) uint64 {
	if testing.Short() {
		return min(n, 2)
	}
	return n
}
