package frontier

import (
	"math"
	"strings"
	"testing"
	"time"
)

// TestFailingHostIsParked: a host whose fetches keep ending without a
// response the same way is slowed by backoff, then given up after
// FailLimit in a row, the reason in its HostInfo; one that recovers, fails
// in different ways, or answers (even 503) is not.
func TestFailingHostIsParked(t *testing.T) {
	var (
		timeout = Outcome{Timeout: true}
		reset   = Outcome{Failed: true}
		ok      = Outcome{Status: 200}
		storm   = Outcome{Status: 503}
		skipped = Outcome{NotStarted: true}
	)
	for _, c := range []struct {
		name     string
		limit    int
		outcomes []Outcome
		dead     bool
		failures int    // HostInfo.Failures at the end
		how      string // HostInfo.FailingHow at the end
	}{
		{"time-outs in a row", 4, []Outcome{timeout, timeout, timeout, timeout}, true, 4, "timeout"},
		{"resets in a row", 4, []Outcome{reset, reset, reset, reset}, true, 4, "network"},
		{"not-started leases do not break the run", 4, []Outcome{timeout, timeout, skipped, timeout, timeout}, true, 4, "timeout"},
		{"recovers between", 4, []Outcome{timeout, timeout, timeout, ok, timeout, timeout, timeout}, false, 3, "timeout"},
		{"fails in changing ways", 4, []Outcome{timeout, reset, timeout, reset, timeout, reset}, false, 1, "network"},
		{"a 503 storm is answered", 4, []Outcome{storm, storm, storm, storm, storm, storm}, false, 0, ""},
		{"a failed robots.txt answer with a status is no silence", 4, []Outcome{{Status: 500, Failed: true}, {Status: 500, Failed: true}, {Status: 500, Failed: true}, {Status: 500, Failed: true}}, false, 0, ""},
		{"never, with a negative limit", -1, []Outcome{timeout, timeout, timeout, timeout, timeout, timeout, timeout, timeout}, false, 8, "timeout"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var dropped []string
			f, clk := newTest(t, Options{MinDelay: time.Second, MaxDelay: time.Minute, FailLimit: c.limit,
				OnDrop: func(it Item, why DropReason) { dropped = append(dropped, why.String()) }})
			const queued = 20
			for i := range queued {
				f.Add(nil, item("a.test", i))
			}
			var maxBackoff time.Duration
			leases := leaseUntilDone(t, f, clk, 10*len(c.outcomes), func(l *Lease, i int) {
				if i >= len(c.outcomes) {
					return // left leased: the host's state is judged as the outcomes left it
				}
				if _, err := f.Complete(l, c.outcomes[i], nil); err != nil {
					t.Fatal(err)
				}
				hi, _ := f.Host("a.test")
				maxBackoff = max(maxBackoff, hi.Backoff)
			})
			hi, ok := f.Host("a.test")
			if !ok {
				t.Fatal("host unknown")
			}
			if got := hi.State == HostDead; got != c.dead {
				t.Errorf("after %d leases: state %q, want dead %v", leases, hi.State, c.dead)
			}
			if hi.Failures != c.failures || hi.FailingHow != c.how {
				t.Errorf("Failures, FailingHow = %d, %q; want %d, %q", hi.Failures, hi.FailingHow, c.failures, c.how)
			}
			if !c.dead {
				if hi.DeadReason != "" || len(dropped) > 0 {
					t.Errorf("live host: DeadReason %q, %d items dropped", hi.DeadReason, len(dropped))
				}
				return
			}
			if hi.DeadReason != "failing" {
				t.Errorf("DeadReason = %q, want failing", hi.DeadReason)
			}
			if leases != len(c.outcomes) {
				t.Errorf("%d leases, want %d: the host is leased no more once parked", leases, len(c.outcomes))
			}
			if maxBackoff <= time.Second {
				t.Errorf("backoff at most %v before the host was parked; want it slowed first", maxBackoff)
			}
			if want := queued - len(c.outcomes); len(dropped) != want || strings.Count(strings.Join(dropped, " "), "failing") != want {
				t.Errorf("dropped %v, want %d items dropped as failing", dropped, want)
			}
			if !f.Done() {
				t.Errorf("not done with the only host parked: %+v", f.Stats())
			}
		})
	}
}

func TestFailLimitDefault(t *testing.T) {
	for _, c := range []struct{ set, want int }{{0, 20}, {5, 5}, {-1, math.MaxInt32}} {
		if got := (Options{FailLimit: c.set}).withDefaults().FailLimit; got != c.want {
			t.Errorf("FailLimit %d with defaults = %d, want %d", c.set, got, c.want)
		}
	}
}
