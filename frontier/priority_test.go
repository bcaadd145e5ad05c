package frontier

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// simLease is one lease a simulated crawl made: when it started and when
// its fetch completed.
type simLease struct {
	item       Item
	start, end time.Time
}

// simulate runs a crawl on f under its fake clock c: workers take leases
// as soon as the frontier hands them out, every fetch takes resp and
// succeeds; the clock jumps from event to event. It returns every lease
// in the order made, once nothing is left.
func simulate(t *testing.T, f *Frontier, c *clock, workers int, resp time.Duration) []simLease {
	t.Helper()
	type flight struct {
		l   *Lease
		i   int // in out
		end time.Time
	}
	var (
		out      []simLease
		inflight []flight // by end: every fetch takes resp
	)
	for steps := 0; ; steps++ {
		if steps > 10_000_000 {
			t.Fatalf("simulation did not end: %d leases, %+v", len(out), f.Stats())
		}
		// Window reads take no simulated time: a store read is far
		// shorter than a fetch.
		settle(t, f)
		wait := time.Duration(-1)
		for len(inflight) < workers {
			var l *Lease
			l, wait = tryLease(t, f)
			if l == nil {
				break
			}
			out = append(out, simLease{item: l.Item, start: c.now()})
			inflight = append(inflight, flight{l, len(out) - 1, c.now().Add(resp)})
		}
		switch {
		case len(inflight) == 0 && wait < 0:
			return out
		case len(inflight) == 0 || len(inflight) < workers && wait >= 0 && c.now().Add(wait).Before(inflight[0].end):
			c.advance(max(wait, time.Microsecond))
			continue
		}
		c.t = inflight[0].end
		for len(inflight) > 0 && !inflight[0].end.After(c.now()) {
			fl := inflight[0]
			inflight = inflight[1:]
			out[fl.i].end = c.now()
			if _, err := f.Complete(fl.l, Outcome{Status: 200, ResponseTime: resp}, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestBigHostAtPoliteRate is the failure the design notes warn of:
// thousands of small hosts queued first, then one large host. Workers
// are the bottleneck while the small hosts last, so hosts queue up for
// them; the large host must still be fetched at its full polite rate from
// the start (its first lease at once, each next one as soon as its gap
// allows, give or take one response time for a worker to come free),
// since it is the crawl's critical path.
func TestBigHostAtPoliteRate(t *testing.T) {
	const (
		small, perSmall = 3000, 3
		bigPages        = 2000
		workers         = 16
		resp            = 50 * time.Millisecond
		gap             = time.Second
	)
	for _, tt := range []struct {
		name               string
		smallLevel, bigLvl int
		headStart          time.Duration // Options.MaxHeadStart
		starved            bool          // the failure, shown without a head start
	}{
		{"same level", 0, 0, 0, false},
		{"small hosts are seeds, the big host's pages links", 0, 1, 0, false},
		{"no head start: due order alone starves it", 0, 0, -1, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, c := newTest(t, Options{MinDelay: gap, MaxHeadStart: tt.headStart})
			start := c.now()
			var items []Item
			for h := range small {
				for p := range perSmall {
					it := item(fmt.Sprintf("s%04d.test", h), p)
					it.Level = tt.smallLevel
					items = append(items, it)
				}
			}
			if err := <-f.Add(nil, items...); err != nil {
				t.Fatal(err)
			}
			items = items[:0]
			for p := range bigPages {
				it := item("big.test", p)
				it.Level = tt.bigLvl
				items = append(items, it)
			}
			if err := <-f.Add(nil, items...); err != nil {
				t.Fatal(err)
			}
			leases := simulate(t, f, c, workers, resp)
			if want := small*perSmall + bigPages; len(leases) != want {
				t.Fatalf("%d leases, want %d", len(leases), want)
			}
			var big []simLease
			var smallDone time.Time
			for _, l := range leases {
				if l.item.Host == "big.test" {
					big = append(big, l)
				} else {
					smallDone = l.end
				}
			}
			late, worst := 0, time.Duration(0)
			first := big[0].start.Sub(start)
			var lateAt []string
			for i := 1; i < len(big); i++ {
				allowed := big[i-1].end.Add(gap)
				d := big[i].start.Sub(allowed)
				worst = max(worst, d)
				if d > resp {
					late++
					lateAt = append(lateAt, fmt.Sprintf("lease %d at %v: %v after its gap allowed it", i, big[i].start.Sub(start), d))
				}
			}
			switch {
			case tt.starved && late == 0:
				t.Errorf("no big-host lease came late without a head start: the test no longer shows the failure")
			case !tt.starved && (late > 0 || first > resp):
				t.Errorf("first big-host lease after %v, want at once; %d of %d came later than their gap plus %v: %v",
					first, late, len(big), resp, lateAt[:min(5, len(lateAt))])
			}
			// Its rate while the small hosts kept the workers busy.
			n := 0
			for _, l := range big {
				if l.start.Before(smallDone) {
					n++
				}
			}
			busy := smallDone.Sub(start)
			t.Logf("small hosts done after %v; the big host had %d leases by then: %.3f/s, polite rate %.3f/s; worst lateness %v; whole crawl %v",
				busy.Round(time.Millisecond), n, float64(n)/busy.Seconds(), 1/(gap+resp).Seconds(), worst, leases[len(leases)-1].end.Sub(start).Round(time.Second))
		})
	}
}

// TestLowLevelsNotStarved: the lowest level is served within a bounded
// number of leases while higher levels stay busy: within one host, by the
// biased selector (level i gets 2^(Levels-1-i) of every 2^Levels-1 of the
// host's leases); across hosts, a host with one low-level URL is leased
// within MaxHeadStart (plus a gap) of becoming due, however long the
// queues of the hosts that keep the workers busy.
func TestLowLevelsNotStarved(t *testing.T) {
	const resp = 50 * time.Millisecond
	for _, levels := range []int{2, 3, 4} {
		t.Run(fmt.Sprintf("one host, %d levels", levels), func(t *testing.T) {
			f, c := newTest(t, Options{Levels: levels, MinDelay: 100 * time.Millisecond})
			var items []Item
			for l := range levels - 1 {
				for p := range 100 {
					it := item("a.test", l*1000+p)
					it.Level = l
					items = append(items, it)
				}
			}
			low := item("a.test", 99999)
			low.Level = levels - 1
			if err := <-f.Add(nil, append(items, low)...); err != nil {
				t.Fatal(err)
			}
			leases := simulate(t, f, c, 4, resp)
			at := slices.IndexFunc(leases, func(l simLease) bool { return l.item.URL == low.URL })
			if bound := 1<<levels - 1; at < 0 || at >= bound {
				t.Errorf("the lowest level's URL was lease %d, want within the first %d", at, bound)
			}
			t.Logf("%d levels: the lowest level's only URL was lease %d of %d", levels, at, len(leases))
		})
	}
	t.Run("across hosts", func(t *testing.T) {
		const (
			hosts, pages = 50, 400
			workers      = 2 // 40 leases/s for 50 hosts that could take 50/s: saturated
			gap          = time.Second
			headStart    = 5 * time.Second
		)
		f, c := newTest(t, Options{Levels: 3, MinDelay: gap, MaxHeadStart: headStart})
		start := c.now()
		var items []Item
		for h := range hosts {
			for p := range pages {
				items = append(items, item(fmt.Sprintf("h%02d.test", h), p))
			}
		}
		if err := <-f.Add(nil, items...); err != nil {
			t.Fatal(err)
		}
		low := item("low.test", 0)
		low.Level = 2
		if err := <-f.Add(nil, low); err != nil {
			t.Fatal(err)
		}
		leases := simulate(t, f, c, workers, resp)
		at := slices.IndexFunc(leases, func(l simLease) bool { return l.item.URL == low.URL })
		// Leased within headStart + a gap of the start: at most that many
		// seconds of the workers' leases before it.
		bound := int((headStart + gap) / resp * workers)
		if at < 0 || at > bound {
			t.Errorf("the low host's URL was lease %d, want within %d", at, bound)
		} else {
			t.Logf("the low host's only URL was lease %d (at %v) of %d; bound %d", at, leases[at].start.Sub(start), len(leases), bound)
		}
	})
}
