package frontier

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// restart builds a new Frontier on the store of f, as a crashed crawler
// restarting on its data directory would.
func restart(t *testing.T, store *MemStore, c *clock, o Options) *Frontier {
	t.Helper()
	o.Store, o.Now = store, c.now
	f, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestRestoreReoffersLeasedAndKeepsClocks(t *testing.T) {
	store := &MemStore{}
	c := &clock{t: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)}
	o := Options{MinDelay: time.Second, HostBudget: 10}
	f := restart(t, store, c, o)
	<-f.Add(nil, item("a.test", 1), item("a.test", 2), item("b.test", 1))

	la := mustLease(t, f)
	lb := mustLease(t, f)
	if la.Item.Host == lb.Item.Host {
		t.Fatal("two leases of one host")
	}
	c.advance(50 * time.Millisecond)
	done, err := f.Complete(la, Outcome{Status: 200, ResponseTime: 50 * time.Millisecond}, nil, item("c.test", 1))
	if err != nil || <-done != nil {
		t.Fatalf("Complete: %v", err)
	}
	wantNext := nextAllowedOf(f, la.Item.Host)
	// Crash with lb in flight.
	settle(t, f)
	f = restart(t, store, c, o)
	if got := nextAllowedOf(f, la.Item.Host); !got.Equal(wantNext) {
		t.Errorf("%s next allowed after restart = %v, want %v", la.Item.Host, got, wantNext)
	}
	if s := f.Stats(); s.Queued != 3 || s.InFlight != 0 {
		t.Fatalf("after restart Stats = %+v, want 3 queued (a2, b1 re-offered, c1)", s)
	}
	got := map[string]bool{}
	for _, it := range drain(t, f, c) {
		got[it.URL] = true
	}
	for _, u := range []string{"http://a.test/p2", "http://b.test/p1", "http://c.test/p1"} {
		if !got[u] {
			t.Errorf("%s not offered after restart (got %v)", u, got)
		}
	}
	if got["http://a.test/p1"] {
		t.Error("a completed item was offered again after restart")
	}
	if store.Len() != 0 || !f.Done() {
		t.Errorf("store holds %d items after all completed", store.Len())
	}
}

// drain leases and completes everything f offers, moving the clock over
// the gaps, and returns the items in lease order.
func drain(t testing.TB, f *Frontier, c *clock) []Item {
	var out []Item
	for {
		l, wait := tryLease(t, f)
		if l == nil {
			if wait < 0 {
				return out
			}
			c.advance(wait)
			continue
		}
		out = append(out, l.Item)
		<-must(f.Complete(l, Outcome{Status: 200}, nil))
	}
}

func must(ch <-chan error, err error) <-chan error {
	if err != nil {
		panic(err)
	}
	return ch
}

func TestRestoreKeepsDeadHostsAndBudget(t *testing.T) {
	store := &MemStore{}
	c := &clock{t: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)}
	o := Options{MinDelay: time.Millisecond, HostBudget: 2}
	f := restart(t, store, c, o)
	<-f.Add(nil, item("a.test", 1), item("a.test", 2), item("a.test", 3), item("b.test", 1), item("b.test", 2))
	for range 2 {
		l, wait := tryLease(t, f)
		for l == nil {
			c.advance(wait)
			l, wait = tryLease(t, f)
		}
		o := Outcome{Status: 200}
		if l.Item.Host == "b.test" {
			o = Outcome{Status: 500, DropHost: true}
		}
		<-must(f.Complete(l, o, nil))
	}
	settle(t, f)
	f = restart(t, store, c, o)
	leased := map[string]int{}
	for _, it := range drain(t, f, c) {
		leased[it.Host]++
	}
	if leased["b.test"] != 0 {
		t.Errorf("dropped host b.test leased %d times after restart", leased["b.test"])
	}
	if leased["a.test"] != 1 {
		t.Errorf("a.test leased %d times after restart, want 1 (budget 2, one spent before)", leased["a.test"])
	}
}

// TestRandomCrashes drives work through the frontier with restarts at
// random moments and checks: every item is completed at least once, and
// an item is offered again only if it was in flight at a crash.
func TestRandomCrashes(t *testing.T) {
	for seed := range uint64(10) {
		rng := rand.New(rand.NewPCG(seed, 7))
		store := &MemStore{}
		c := &clock{t: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)}
		o := Options{MinDelay: 10 * time.Millisecond}
		f := restart(t, store, c, o)
		var seeds []Item
		for h := range 8 {
			seeds = append(seeds, item(fmt.Sprintf("h%d.test", h), 0))
		}
		<-f.Add(nil, seeds...)
		completed := map[string]int{}
		inFlightAtCrash := map[string]int{}
		var out []*Lease
		next := 0
		for step := 0; step < 5000 && !(f.Done() && len(out) == 0); step++ {
			switch r := rng.IntN(20); {
			case r == 0: // crash
				for _, l := range out {
					inFlightAtCrash[l.Item.URL]++
				}
				out = nil
				settle(t, f)
				f = restart(t, store, c, o)
			case r < 12:
				l, wait := tryLease(t, f)
				if l == nil {
					c.advance(max(0, min(wait, time.Second)))
					continue
				}
				out = append(out, l)
			default:
				if len(out) == 0 {
					continue
				}
				i := rng.IntN(len(out))
				l := out[i]
				out = append(out[:i], out[i+1:]...)
				var add []Item
				if next < 200 {
					for range 3 {
						next++
						add = append(add, item(fmt.Sprintf("h%d.test", next%8), next))
					}
				}
				if err := <-must(f.Complete(l, Outcome{Status: 200}, nil, add...)); err != nil {
					t.Fatal(err)
				}
				completed[l.Item.URL]++
			}
		}
		if !f.Done() {
			t.Fatalf("seed %d: not done: %+v", seed, f.Stats())
		}
		if len(completed) != 8+next {
			t.Errorf("seed %d: %d URLs completed, want %d", seed, len(completed), 8+next)
		}
		for u, n := range completed {
			if n > 1+inFlightAtCrash[u] {
				t.Errorf("seed %d: %s completed %d times, in flight at %d crashes", seed, u, n, inFlightAtCrash[u])
			}
		}
	}
}

// TestRestoreWaitsOneGap: a fetch in flight at a crash left no record of
// its start, so after a restart no host is contacted before one full
// delay has passed, even if its stored clock allows it sooner.
func TestRestoreWaitsOneGap(t *testing.T) {
	store := &MemStore{}
	c := &clock{t: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)}
	o := Options{MinDelay: time.Second}
	f := restart(t, store, c, o)
	<-f.Add(nil, item("a.test", 1), item("a.test", 2))
	l := mustLease(t, f)
	<-must(f.Complete(l, Outcome{Status: 200}, nil))
	c.advance(time.Hour) // stored clock long past
	mustLease(t, f)      // in flight at the crash
	settle(t, f)
	f = restart(t, store, c, o)
	noLease(t, f, time.Second)
}

// nextAllowedOf is when host may be contacted next.
func nextAllowedOf(f *Frontier, host string) time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.clock.time(f.hosts.find(host).nextAllowed)
}

// TestRestoreKeepsWaitReason: a host parked by a Retry-After (on a page
// that answered 200, so with no backoff) or by robots.txt's Retry-After
// waits after a restart for the same reason, which GiveUp reads, and shows
// how long it still waits; a host whose stored time passed during the
// downtime waits the start-up gap.
func TestRestoreKeepsWaitReason(t *testing.T) {
	store := &MemStore{}
	c := &clock{t: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)}
	o := Options{MinDelay: time.Second}
	f := restart(t, store, c, o)
	<-f.Add(nil, item("page.test", 1), item("page.test", 2), item("robots.test", 1), item("robots.test", 2), item("quick.test", 1), item("quick.test", 2))
	outcomes := map[string]Outcome{
		"page.test":   {Status: 200, RetryAfter: time.Hour},
		"robots.test": {Status: 503, RetryAfter: time.Hour, Robots: true, Requeue: true},
		"quick.test":  {Status: 200},
	}
	for range outcomes {
		l := mustLease(t, f)
		if _, err := f.Complete(l, outcomes[l.Item.Host], nil); err != nil {
			t.Fatal(err)
		}
	}
	settle(t, f)
	c.advance(10 * time.Minute)
	f = restart(t, store, c, o)
	for _, want := range []struct {
		host, why string
		wait      time.Duration
	}{
		{"page.test", "retry-after", 50 * time.Minute},
		{"robots.test", "robots-retry-after", 50 * time.Minute},
		{"quick.test", "", time.Second},
	} {
		hi, ok := f.Host(want.host)
		if !ok || hi.DelayReason != want.why || hi.Wait != want.wait {
			t.Errorf("%s after a restart: waits %v for %q (known %v), want %v for %q", want.host, hi.Wait, hi.DelayReason, ok, want.wait, want.why)
		}
	}
}
