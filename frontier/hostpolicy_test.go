package frontier

import (
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/hostpolicy"
)

// leaseNow leases with the clock where it is, or fails the test.
func leaseNow(t *testing.T, f *Frontier) *Lease {
	t.Helper()
	l, wait := tryLease(t, f)
	if l == nil {
		t.Fatalf("no lease; wait %v, stats %+v", wait, f.Stats())
	}
	return l
}

func completeOK(t *testing.T, f *Frontier, l *Lease) {
	t.Helper()
	if _, err := f.Complete(l, Outcome{Status: 200, ResponseTime: time.Millisecond}, nil); err != nil {
		t.Fatal(err)
	}
}

// TestPolicyMinDelay: a host's own min delay replaces the node's, for
// longer or shorter gaps; a longer one set between two fetches pushes the
// next one back at once; the zero policy restores the default.
func TestPolicyMinDelay(t *testing.T) {
	f, c := newTest(t, Options{MinDelay: time.Second, MaxDelay: time.Minute})
	<-f.Add(nil, item("a.test", 1), item("a.test", 2), item("a.test", 3), item("a.test", 4), item("a.test", 5))
	completeOK(t, f, leaseNow(t, f))

	// Raised between fetches: the next waits 30 s from the last end.
	f.SetHostPolicy("a.test", hostpolicy.Policy{MinDelay: 30 * time.Second, HasMinDelay: true})
	c.advance(29 * time.Second)
	if l, wait := f.Lease(); l != nil || wait != time.Second {
		t.Fatalf("29 s after a fetch under a 30 s policy: lease %v, wait %v; want none, 1s", l, wait)
	}
	c.advance(time.Second)
	completeOK(t, f, leaseNow(t, f))
	hi, _ := f.Host("a.test")
	if hi.Delay != 30*time.Second || hi.DelayReason != "policy" || !hi.Policy.HasMinDelay {
		t.Errorf("HostInfo after a fetch under the policy: %+v", hi)
	}

	// Lowered: applies from the next request's end, not before.
	f.SetHostPolicy("a.test", hostpolicy.Policy{MinDelay: 100 * time.Millisecond, HasMinDelay: true})
	if l, _ := f.Lease(); l != nil {
		t.Fatal("a lowered delay brought the next fetch forward")
	}
	c.advance(30 * time.Second)
	completeOK(t, f, leaseNow(t, f))
	c.advance(100 * time.Millisecond)
	completeOK(t, f, leaseNow(t, f))

	// Back to the defaults: the node's 1 s, longer, counts from the last end.
	f.SetHostPolicy("a.test", hostpolicy.Policy{})
	c.advance(500 * time.Millisecond)
	if l, _ := f.Lease(); l != nil {
		t.Fatal("leased 500 ms after a fetch with the node's 1 s min delay back")
	}
	c.advance(500 * time.Millisecond)
	completeOK(t, f, leaseNow(t, f))
	if hi, _ := f.Host("a.test"); hi.DelayReason != "min-delay" || hi.Policy != (hostpolicy.Policy{}) {
		t.Errorf("HostInfo after the policy was cleared: %+v", hi)
	}
}

// TestPolicyPause: a paused host is not leased, counts in Stats.Paused and
// keeps its queue (the frontier is not done); resumed, it is leased again.
func TestPolicyPause(t *testing.T) {
	f, c := newTest(t, Options{MinDelay: time.Second})
	<-f.Add(nil, item("a.test", 1), item("b.test", 1))
	f.SetHostPolicy("a.test", hostpolicy.Policy{Paused: true})
	l := leaseNow(t, f)
	if l.Item.Host != "b.test" {
		t.Fatalf("leased %s; a.test is paused", l.Item.URL)
	}
	completeOK(t, f, l)
	c.advance(time.Hour)
	if l, _ := f.Lease(); l != nil {
		t.Fatalf("leased %s from a paused host", l.Item.URL)
	}
	st := f.Stats()
	if st.Paused != 1 || st.Queued != 1 || f.Done() {
		t.Fatalf("stats %+v, done %v; want one paused host with one item, not done", st, f.Done())
	}
	if hi, _ := f.Host("a.test"); hi.State != HostPaused || hi.Queued != 1 {
		t.Errorf("HostInfo of the paused host: %+v", hi)
	}
	f.SetHostPolicy("a.test", hostpolicy.Policy{})
	if l := leaseNow(t, f); l.Item.Host != "a.test" {
		t.Fatalf("after resuming, leased %s", l.Item.URL)
	}
	if st := f.Stats(); st.Paused != 0 {
		t.Errorf("Stats.Paused = %d after resuming", st.Paused)
	}
}

// TestPolicyMaxParallel: a host's cap replaces the node's for that host
// only; the per-IP cap still holds.
func TestPolicyMaxParallel(t *testing.T) {
	f, _ := newTest(t, Options{MinDelay: -1, IPMaxParallel: 8})
	for i := range 6 {
		<-f.Add(nil, item("a.test", i), item("b.test", i))
	}
	f.SetHostPolicy("a.test", hostpolicy.Policy{MaxParallel: 3})
	per := map[string]int{}
	for {
		l, _ := tryLease(t, f)
		if l == nil {
			break
		}
		per[l.Item.Host]++
	}
	if per["a.test"] != 3 || per["b.test"] != 1 {
		t.Fatalf("leases in flight per host %v; want a.test 3 (its policy), b.test 1 (the default)", per)
	}
}

// TestHostsScan: a scan by state is bounded per call and its cursor goes
// on where the last call stopped, until every host was looked at once.
func TestHostsScan(t *testing.T) {
	f, c := newTest(t, Options{MinDelay: time.Second})
	const n = 50
	for i := range n {
		<-f.Add(nil, item(hostName(i), 1), item(hostName(i), 2))
	}
	for i := range n {
		if i%5 == 0 {
			f.SetHostPolicy(hostName(i), hostpolicy.Policy{Paused: true})
		}
	}
	// Fetch one page from each host that is not paused: all wait then.
	for range n - n/5 {
		completeOK(t, f, leaseNow(t, f))
	}
	c.advance(10 * time.Millisecond)
	for _, tc := range []struct {
		state string
		want  int
	}{{HostPaused, n / 5}, {HostWaiting, n - n/5}, {"", n}, {HostReady, 0}, {HostBackoff, 0}} {
		seen := map[string]bool{}
		calls := 0
		for cur := HostCursor(0); cur >= 0; calls++ {
			var page []HostInfo
			page, cur = f.Hosts(tc.state, cur, 4, 7)
			if len(page) > 4 {
				t.Fatalf("%q: page of %d, limit 4", tc.state, len(page))
			}
			for _, hi := range page {
				if seen[hi.Host] || (tc.state != "" && hi.State != tc.state) {
					t.Fatalf("%q: %+v seen twice or in the wrong state", tc.state, hi)
				}
				seen[hi.Host] = true
			}
			if calls > n {
				t.Fatalf("%q: scan does not end", tc.state)
			}
		}
		if len(seen) != tc.want {
			t.Errorf("state %q: %d hosts, want %d", tc.state, len(seen), tc.want)
		}
	}
}

func hostName(i int) string { return string(rune('a'+i%26)) + string(rune('a'+i/26)) + ".test" }
