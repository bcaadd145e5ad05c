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
	for seed := range uint64(10) {
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
			if got, want := statsAndRecount(f); got != want {
				t.Fatalf("seed %d step %d: Stats() = %+v, recount %+v", seed, step, got, want)
			}
		}
	}
}

// checkHeap checks the ready heap's order: no entry sorts before its
// parent. (An entry whose key changed without heap.Fix, while others moved,
// once broke it: Complete changed the host's clock and then queued items.)
func checkHeap(t *testing.T, f *Frontier) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	q := &f.ready
	for i := 1; i < len(q.ids); i++ {
		if p := (i - 1) / 2; q.Less(i, p) {
			a, b := q.t.at(q.ids[i]), q.t.at(q.ids[p])
			t.Fatalf("heap order broken at %d: %s (key %d) under %s (key %d)", i, q.t.name(a), a.key(), q.t.name(b), b.key())
		}
	}
}
