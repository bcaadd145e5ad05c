package frontier

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// clock is a fake clock that tests move by hand.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

func newTest(t *testing.T, o Options) (*Frontier, *clock) {
	t.Helper()
	c := &clock{t: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)}
	o.Now = c.now
	f, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return f, c
}

func item(host string, n int) Item {
	return Item{URL: fmt.Sprintf("http://%s/p%d", host, n), Host: host}
}

// settle waits until no window is being read from the store. Hosts may
// still wait for room in the WindowBudget (Stats.Refilling counts them):
// only a lease makes it.
func settle(t testing.TB, f *Frontier) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		f.mu.Lock()
		n := f.refillers
		f.mu.Unlock()
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("refills still pending after 10s: %+v", f.Stats())
		}
		select {
		case <-f.Changed():
		case <-time.After(time.Millisecond):
		}
	}
}

// tryLease is Lease, waiting for the windows it has to read first.
func tryLease(t testing.TB, f *Frontier) (*Lease, time.Duration) {
	t.Helper()
	for {
		l, wait := f.Lease()
		if l != nil || !mayLease(f) {
			return l, wait
		}
		settle(t, f)
	}
}

// leaseUntilDone leases what f hands out, moving the clock to each next
// allowed time, and hands the i-th lease to done (which completes it),
// until nothing more could be leased or after tries attempts. It returns
// the number of leases.
func leaseUntilDone(t testing.TB, f *Frontier, c *clock, tries int, done func(l *Lease, i int)) int {
	t.Helper()
	got := 0
	for range tries {
		l, wait := tryLease(t, f)
		if l == nil {
			if wait < 0 {
				break
			}
			c.advance(wait)
			continue
		}
		done(l, got)
		got++
	}
	return got
}

// mayLease reports whether a Lease that found nothing may find something
// without the clock moving or a lease ending: a window is being read, or
// a host read since is due.
func mayLease(f *Frontier) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.refillers > 0 {
		return true
	}
	if f.runnable.Len() > 0 {
		return true
	}
	if f.ready.Len() == 0 {
		return false
	}
	h := f.ready.top()
	return h.dead || h.nextAllowed <= f.clock.mono(f.opts.Now())
}

func mustLease(t *testing.T, f *Frontier) *Lease {
	t.Helper()
	l, wait := tryLease(t, f)
	if l == nil {
		t.Fatalf("Lease() = nil, wait %v; want a lease", wait)
	}
	return l
}

func noLease(t *testing.T, f *Frontier, wantWait time.Duration) {
	t.Helper()
	l, wait := tryLease(t, f)
	if l != nil {
		t.Fatalf("Lease() = %s, want none", l.Item.URL)
	}
	if wait != wantWait {
		t.Fatalf("Lease() wait = %v, want %v", wait, wantWait)
	}
}

func TestGapCountsFromCompletion(t *testing.T) {
	f, c := newTest(t, Options{MinDelay: time.Second})
	f.Add(nil, item("a.test", 1), item("a.test", 2))
	l := mustLease(t, f)
	noLease(t, f, 5*time.Minute) // host busy: only the lease deadline is ahead
	c.advance(20 * time.Millisecond)
	if _, err := f.Complete(l, Outcome{Status: 200, ResponseTime: 20 * time.Millisecond}, nil); err != nil {
		t.Fatal(err)
	}
	noLease(t, f, time.Second)
	c.advance(999 * time.Millisecond)
	noLease(t, f, time.Millisecond)
	c.advance(time.Millisecond)
	mustLease(t, f)
}

func TestGapRules(t *testing.T) {
	tests := []struct {
		name       string
		crawlDelay time.Duration
		outcomes   []Outcome
		wantGap    time.Duration // after the last outcome
	}{
		{"min delay", 0, []Outcome{{Status: 200}}, time.Second},
		{"crawl-delay", 3 * time.Second, []Outcome{{Status: 200}}, 3 * time.Second},
		{"ten times response time", 0, []Outcome{{Status: 200, ResponseTime: 250 * time.Millisecond}}, 2500 * time.Millisecond},
		{"429 doubles", 0, []Outcome{{Status: 429}}, 2 * time.Second},
		{"503 twice", 0, []Outcome{{Status: 503}, {Status: 503}}, 4 * time.Second},
		{"timeout", 0, []Outcome{{Timeout: true}}, 2 * time.Second},
		{"failure", 0, []Outcome{{Failed: true}}, 2 * time.Second},
		{"retry-after longer", 0, []Outcome{{Status: 429, RetryAfter: 30 * time.Second}}, 30 * time.Second},
		{"retry-after capped", 0, []Outcome{{Status: 503, RetryAfter: 48 * time.Hour}}, time.Hour},
		{"backoff ceiling", 0, []Outcome{{Status: 503}, {Status: 503}, {Status: 503}, {Status: 503}, {Status: 503}, {Status: 503}, {Status: 503}}, 60 * time.Second},
		{"a success halves it", 0, []Outcome{{Status: 503}, {Status: 503}, {Status: 503}, {Status: 200}}, 4 * time.Second},
		{"halves again", 0, []Outcome{{Status: 503}, {Status: 503}, {Status: 503}, {Status: 200}, {Status: 200}}, 2 * time.Second},
		{"back to base", 0, []Outcome{{Status: 503}, {Status: 200}, {Status: 200}, {Status: 200}}, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, c := newTest(t, Options{MinDelay: time.Second, MaxDelay: time.Minute})
			if tt.crawlDelay > 0 {
				f.SetCrawlDelay("a.test", tt.crawlDelay)
			}
			for i, o := range tt.outcomes {
				f.Add(nil, item("a.test", i))
				l, wait := tryLease(t, f)
				if l == nil {
					c.advance(wait)
					l = mustLease(t, f)
				}
				if _, err := f.Complete(l, o, nil); err != nil {
					t.Fatal(err)
				}
			}
			f.Add(nil, item("a.test", 99))
			if _, wait := tryLease(t, f); wait != tt.wantGap {
				t.Errorf("gap after %v = %v, want %v", tt.outcomes, wait, tt.wantGap)
			}
		})
	}
}

// TestAdaptiveDelayCap: the ten-times-response-time term is capped by
// MaxAdaptiveDelay (docs/design/politeness.md); the other terms are not.
func TestAdaptiveDelayCap(t *testing.T) {
	tests := []struct {
		name       string
		maxAdapt   time.Duration
		crawlDelay time.Duration
		outcomes   []Outcome
		wantGap    time.Duration
	}{
		{"20s response, default cap", 0, 0, []Outcome{{Status: 200, ResponseTime: 20 * time.Second}}, 30 * time.Second},
		{"under the cap", 0, 0, []Outcome{{Status: 200, ResponseTime: 2 * time.Second}}, 20 * time.Second},
		{"exactly the cap", 0, 0, []Outcome{{Status: 200, ResponseTime: 3 * time.Second}}, 30 * time.Second},
		{"cap set", 5 * time.Second, 0, []Outcome{{Status: 200, ResponseTime: time.Second}}, 5 * time.Second},
		{"no cap", -1, 0, []Outcome{{Status: 200, ResponseTime: 20 * time.Second}}, 200 * time.Second},
		{"crawl-delay above the cap", 5 * time.Second, 40 * time.Second, []Outcome{{Status: 200, ResponseTime: 20 * time.Second}}, 40 * time.Second},
		{"min delay above the cap", time.Millisecond, 0, []Outcome{{Status: 200, ResponseTime: time.Second}}, time.Second},
		{"backoff keeps MaxDelay", 0, 0, []Outcome{{Status: 503, ResponseTime: 20 * time.Second}, {Status: 503}, {Status: 503}, {Status: 503}, {Status: 503}}, 10 * time.Minute},
		{"backoff from the capped base", 0, 0, []Outcome{{Status: 503, ResponseTime: 20 * time.Second}}, 60 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, c := newTest(t, Options{MinDelay: time.Second, MaxAdaptiveDelay: tt.maxAdapt})
			if tt.crawlDelay > 0 {
				f.SetCrawlDelay("a.test", tt.crawlDelay)
			}
			for i, o := range tt.outcomes {
				f.Add(nil, item("a.test", i))
				l, wait := tryLease(t, f)
				if l == nil {
					c.advance(wait)
					l = mustLease(t, f)
				}
				c.advance(o.ResponseTime)
				if _, err := f.Complete(l, o, nil); err != nil {
					t.Fatal(err)
				}
			}
			f.Add(nil, item("a.test", 99))
			if _, wait := tryLease(t, f); wait != tt.wantGap {
				t.Errorf("gap after %v with MaxAdaptiveDelay %v = %v, want %v", tt.outcomes, tt.maxAdapt, wait, tt.wantGap)
			}
		})
	}
}

func TestNotStartedKeepsClock(t *testing.T) {
	f, c := newTest(t, Options{MinDelay: time.Second})
	f.Add(nil, item("a.test", 1), item("a.test", 2))
	l := mustLease(t, f)
	c.advance(10 * time.Millisecond)
	f.Complete(l, Outcome{NotStarted: true}, nil) // e.g. robots disallowed
	mustLease(t, f)                               // no gap: nothing was sent
}

// TestNotBefore: an outcome's NotBefore holds the host back even when
// nothing was sent, and never brings a later next allowed time forward.
func TestNotBefore(t *testing.T) {
	f, c := newTest(t, Options{MinDelay: time.Second})
	f.Add(nil, item("a.test", 1), item("a.test", 2))
	l := mustLease(t, f)
	f.Complete(l, Outcome{NotStarted: true, Requeue: true, NotBefore: c.t.Add(5 * time.Second)}, nil)
	noLease(t, f, 5*time.Second)
	c.advance(5 * time.Second)
	l = mustLease(t, f)
	f.Complete(l, Outcome{Status: 200, NotBefore: c.t.Add(time.Millisecond)}, nil)
	noLease(t, f, time.Second) // the gap rule is later than NotBefore
}

func TestRequeueComesBackFirst(t *testing.T) {
	f, c := newTest(t, Options{MinDelay: time.Second})
	f.Add(nil, item("a.test", 1), item("a.test", 2))
	l := mustLease(t, f)
	f.Complete(l, Outcome{Status: 200, Requeue: true}, nil) // slot used for robots.txt
	c.advance(time.Second)
	if l2 := mustLease(t, f); l2.Item.URL != l.Item.URL {
		t.Errorf("after requeue leased %s, want %s", l2.Item.URL, l.Item.URL)
	}
}

func TestLeaseExpiryReoffers(t *testing.T) {
	f, c := newTest(t, Options{MinDelay: time.Second, LeaseTimeout: time.Minute})
	f.Add(nil, item("a.test", 1))
	l := mustLease(t, f)
	noLease(t, f, time.Minute)
	c.advance(time.Minute)
	l2 := mustLease(t, f)
	if l2.Item.URL != l.Item.URL || l2.ID == l.ID {
		t.Fatalf("re-offered %s (id %d), want %s with a new id", l2.Item.URL, l2.ID, l.Item.URL)
	}
	if _, err := f.Complete(l, Outcome{Status: 200}, nil); err != ErrLeaseExpired {
		t.Errorf("Complete(expired) = %v, want ErrLeaseExpired", err)
	}
	if _, err := f.Complete(l2, Outcome{Status: 200}, nil); err != nil {
		t.Errorf("Complete(re-offered) = %v", err)
	}
	if _, err := f.Complete(l2, Outcome{Status: 200}, nil); err != ErrLeaseDone {
		t.Errorf("Complete twice = %v, want ErrLeaseDone", err)
	}
	if !f.Done() {
		t.Error("Done() = false after the only item completed")
	}
}

func TestIPCap(t *testing.T) {
	f, _ := newTest(t, Options{MinDelay: time.Second, IPMaxParallel: 2})
	for _, h := range []string{"a.test", "b.test", "c.test"} {
		f.Add(nil, item(h, 1), item(h, 2))
	}
	var ls []*Lease
	for range 3 {
		l := mustLease(t, f)
		if !f.SetIP(l, "10.0.0.1") {
			f.Complete(l, Outcome{NotStarted: true, Requeue: true}, nil)
			continue
		}
		ls = append(ls, l)
	}
	if len(ls) != 2 {
		t.Fatalf("%d leases went ahead on one IP, want 2", len(ls))
	}
	// All three hosts now know their IP; the third is parked.
	noLease(t, f, 5*time.Minute)
	if s := f.Stats(); s.Parked != 1 {
		t.Errorf("Stats().Parked = %d, want 1", s.Parked)
	}
	f.Complete(ls[0], Outcome{Status: 200}, nil)
	l := mustLease(t, f) // the parked host, whose clock was not charged
	if l.Item.Host == ls[0].Item.Host || l.Item.Host == ls[1].Item.Host {
		t.Errorf("after unpark leased %s, want the third host", l.Item.Host)
	}
}

func TestHostBudget(t *testing.T) {
	drops := map[DropReason]int{}
	f, c := newTest(t, Options{MinDelay: time.Millisecond, HostBudget: 3, OnDrop: func(_ Item, why DropReason) { drops[why]++ }})
	for i := range 10 {
		f.Add(nil, item("a.test", i))
	}
	got := leaseUntilDone(t, f, c, 20, func(l *Lease, _ int) { f.Complete(l, Outcome{Status: 200}, nil) })
	if got != 3 {
		t.Errorf("leased %d URLs with budget 3", got)
	}
	if s := f.Stats(); s.Dropped != 7 || s.Queued != 0 || !f.Done() {
		t.Errorf("Stats() = %+v, want 7 dropped, nothing queued", s)
	}
	f.Add(nil, item("a.test", 50))
	if s := f.Stats(); s.Dropped != 8 {
		t.Errorf("Add after budget: Dropped = %d, want 8", s.Dropped)
	}
	if len(drops) != 1 || drops[DropBudget] != 8 {
		t.Errorf("OnDrop told %v, want 8 budget", drops)
	}
}

// TestRefetchSpendsNoBudget: refetches (recrawls) of a host's pages do
// not count towards its budget of distinct pages.
func TestRefetchSpendsNoBudget(t *testing.T) {
	f, c := newTest(t, Options{MinDelay: time.Millisecond, HostBudget: 3})
	for i := range 10 {
		f.Add(nil, item("a.test", i))
	}
	got := leaseUntilDone(t, f, c, 40, func(l *Lease, i int) { f.Complete(l, Outcome{Status: 200, Refetch: i < 7}, nil) })
	if got != 10 {
		t.Errorf("leased %d URLs with budget 3, 7 of them refetches: want all 10", got)
	}
	if s := f.Stats(); s.Dropped != 0 || !f.Done() {
		t.Errorf("Stats() = %+v, want nothing dropped", s)
	}
}

// TestDuplicateAllowance: a host is cut off once its duplicate pages
// outnumber its distinct ones by more than the allowance, whatever the
// order they come in; a host serving mostly new pages is not.
func TestDuplicateAllowance(t *testing.T) {
	for _, tc := range []struct {
		name   string
		dup    func(i int) bool // whether the i-th page leased is a duplicate
		leased int              // pages leased before the host is cut (of 40)
	}{
		{"all duplicates", func(int) bool { return true }, 3},
		{"one new in three", func(i int) bool { return i%3 != 0 }, 9},
		{"half", func(i int) bool { return i%2 == 1 }, 40},
		{"distinct first", func(i int) bool { return i >= 10 }, 23},
		{"none", func(int) bool { return false }, 40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			drops := map[DropReason]int{}
			f, c := newTest(t, Options{MinDelay: time.Millisecond, DuplicateAllowance: 2, OnDrop: func(_ Item, why DropReason) { drops[why]++ }})
			for i := range 40 {
				f.Add(nil, item("a.test", i))
			}
			got := leaseUntilDone(t, f, c, 100, func(l *Lease, i int) {
				f.Complete(l, Outcome{Status: 200, Duplicate: tc.dup(i)}, nil)
			})
			if got != tc.leased {
				t.Errorf("leased %d pages, want %d", got, tc.leased)
			}
			if s := f.Stats(); s.Dropped != 40-tc.leased || !f.Done() {
				t.Errorf("Stats() = %+v, want %d dropped", s, 40-tc.leased)
			}
			if hi, ok := f.Host("a.test"); !ok || hi.Leased != tc.leased {
				t.Errorf("Host = %+v, want %d leased", hi, tc.leased)
			}
			if drops[DropDuplicates] != 40-tc.leased || len(drops) > 1 {
				t.Errorf("OnDrop told %v, want %d for duplicates", drops, 40-tc.leased)
			}
		})
	}
}

func TestDropHost(t *testing.T) {
	var dropped []string
	f, _ := newTest(t, Options{MinDelay: time.Millisecond, OnDrop: func(it Item, why DropReason) {
		dropped = append(dropped, it.URL+" "+why.String())
	}})
	f.Add(nil, item("a.test", 1), item("a.test", 2), item("b.test", 1))
	l := mustLease(t, f)
	f.Complete(l, Outcome{Status: 500, Requeue: true, DropHost: true}, nil)
	l2 := mustLease(t, f)
	if l2.Item.Host == l.Item.Host {
		t.Fatalf("leased %s from a dropped host", l2.Item.URL)
	}
	f.Complete(l2, Outcome{Status: 200}, nil)
	if !f.Done() {
		t.Errorf("not done: %+v", f.Stats())
	}
	f.Add(nil, item(l.Item.Host, 3))
	slices.Sort(dropped)
	want := []string{l.Item.URL + " host-dropped"}
	for _, i := range []int{1, 2, 3} {
		if u := item(l.Item.Host, i).URL; u != l.Item.URL {
			want = append(want, u+" host-dropped")
		}
	}
	slices.Sort(want)
	if !slices.Equal(dropped, want) {
		t.Errorf("OnDrop told %q, want %q", dropped, want)
	}
}

func TestPriorityIsBiasedButFair(t *testing.T) {
	f, c := newTest(t, Options{MinDelay: time.Millisecond, Levels: 3})
	for i := range 70 {
		it := item("a.test", i)
		it.Level = i % 3
		f.Add(nil, it)
	}
	count := [3]int{}
	for range 14 {
		l, wait := tryLease(t, f)
		if l == nil {
			c.advance(wait)
			l = mustLease(t, f)
		}
		count[l.Item.Level]++
		f.Complete(l, Outcome{Status: 200}, nil)
	}
	if count != [3]int{8, 4, 2} {
		t.Errorf("levels served in 14 leases = %v, want [8 4 2]", count)
	}
}

func TestHostsInterleave(t *testing.T) {
	// Many hosts with work: none waits behind another's gap.
	f, c := newTest(t, Options{MinDelay: time.Second})
	for h := range 50 {
		for i := range 3 {
			f.Add(nil, item(fmt.Sprintf("h%d.test", h), i))
		}
	}
	var ls []*Lease
	for {
		l, _ := tryLease(t, f)
		if l == nil {
			break
		}
		ls = append(ls, l)
	}
	if len(ls) != 50 {
		t.Fatalf("leased %d at once from 50 hosts, want 50", len(ls))
	}
	c.advance(time.Millisecond)
	for _, l := range ls {
		f.Complete(l, Outcome{Status: 200}, nil)
	}
	if _, wait := tryLease(t, f); wait != time.Second {
		t.Errorf("wait = %v, want 1s", wait)
	}
}

func TestValidate(t *testing.T) {
	err := Options{MaxDelay: -1, MaxParallel: -1, Levels: 99}.Validate()
	if err == nil {
		t.Fatal("Validate() = nil for bad options")
	}
	for _, field := range []string{"MaxDelay", "MaxParallel", "Levels"} {
		if !contains(err.Error(), field) {
			t.Errorf("Validate() = %q, does not name %s", err, field)
		}
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// TestSimulatedInvariants drives random work through the frontier with a
// fake clock and checks its invariants after every step.
func TestSimulatedInvariants(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 1))
		maxPar := 1 + rng.IntN(2)
		f, c := newTest(t, Options{MinDelay: 100 * time.Millisecond, MaxParallel: maxPar, IPMaxParallel: 3, LeaseTimeout: 24 * time.Hour})
		const hosts, perHost = 12, 15
		for h := range hosts {
			for i := range perHost {
				f.Add(nil, item(fmt.Sprintf("h%d.test", h), i))
			}
		}
		lastDone := map[string]time.Time{}
		inFlight := map[string]int{}
		ipFlight := map[string]int{}
		completed := map[string]bool{}
		var out []*Lease
		for step := 0; step < 20000 && !f.Done(); step++ {
			switch rng.IntN(3) {
			case 0, 1:
				l, wait := tryLease(t, f)
				if l == nil {
					if wait > 0 {
						// Never as far as a lease deadline: expiry is
						// tested on its own.
						c.advance(min(wait, time.Second))
					}
					continue
				}
				h := l.Item.Host
				if completed[l.Item.URL] {
					t.Fatalf("seed %d: %s leased after it completed", seed, l.Item.URL)
				}
				if maxPar == 1 && !lastDone[h].IsZero() && c.now().Sub(lastDone[h]) < 100*time.Millisecond {
					t.Fatalf("seed %d: %s leased %v after last completion", seed, h, c.now().Sub(lastDone[h]))
				}
				ip := fmt.Sprintf("ip%d", len(h)%3)
				if !f.SetIP(l, ip) {
					f.Complete(l, Outcome{NotStarted: true, Requeue: true}, nil)
					continue
				}
				inFlight[h]++
				ipFlight[ip]++
				if inFlight[h] > maxPar || ipFlight[ip] > 3 {
					t.Fatalf("seed %d step %d: %s (lease ip %q) in flight host %d ip %d: %v", seed, step, h, l.ip, inFlight[h], ipFlight[ip], ipFlight)
				}
				out = append(out, l)
			case 2:
				if len(out) == 0 {
					continue
				}
				i := rng.IntN(len(out))
				l := out[i]
				out = append(out[:i], out[i+1:]...)
				c.advance(time.Duration(rng.IntN(20)) * time.Millisecond)
				o := Outcome{Status: 200, ResponseTime: time.Millisecond}
				if rng.IntN(10) == 0 {
					o = Outcome{Status: 503, Requeue: true}
				}
				if _, err := f.Complete(l, o, nil); err != nil {
					t.Fatalf("seed %d: Complete: %v", seed, err)
				}
				inFlight[l.Item.Host]--
				ipFlight[fmt.Sprintf("ip%d", len(l.Item.Host)%3)]--
				lastDone[l.Item.Host] = c.now()
				if !o.Requeue {
					completed[l.Item.URL] = true
				}
			}
		}
		if len(completed) != hosts*perHost {
			t.Errorf("seed %d: completed %d of %d (stats %+v)", seed, len(completed), hosts*perHost, f.Stats())
		}
	}
}
