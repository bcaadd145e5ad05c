package frontier

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestGiveUp drives GiveUp through the cases of its rule: what is given
// up, for which jobs, and when nothing is.
func TestGiveUp(t *testing.T) {
	const (
		oneShot    = 1 // gives up waits over 30 s
		continuous = 2 // never gives up
	)
	horizon := func(job uint32) time.Duration {
		if job == oneShot {
			return 30 * time.Second
		}
		return 0
	}
	type host struct {
		name  string
		jobs  []uint32 // one item each, in order
		first Outcome  // the outcome of its first lease
	}
	ra := func(d time.Duration) Outcome { return Outcome{Status: 429, RetryAfter: d} }
	for _, c := range []struct {
		name  string
		hosts []host
		// swept is GiveUp's answer; dropped the items dropped, by URL, with
		// their reason; kept the URLs still queued afterwards.
		swept   int
		dropped map[string]DropReason
		kept    []string
	}{
		{
			name:    "retry-after beyond the horizon",
			hosts:   []host{{"a", []uint32{oneShot, oneShot, oneShot, oneShot}, ra(time.Hour)}},
			swept:   1,
			dropped: map[string]DropReason{"http://a/p1": DropRetryAfter, "http://a/p2": DropRetryAfter, "http://a/p3": DropRetryAfter},
		},
		{
			name:    "robots.txt retry-after",
			hosts:   []host{{"a", []uint32{oneShot, oneShot}, Outcome{Status: 503, RetryAfter: time.Hour, Requeue: true, Robots: true}}},
			swept:   1,
			dropped: map[string]DropReason{"http://a/p0": DropRobotsWait, "http://a/p1": DropRobotsWait},
		},
		{
			name:  "retry-after within the horizon",
			hosts: []host{{"a", []uint32{oneShot, oneShot}, ra(20 * time.Second)}},
			kept:  []string{"http://a/p1"},
		},
		{
			name:    "a continuous crawl's items stay, in order",
			hosts:   []host{{"a", []uint32{oneShot, continuous, oneShot, continuous, continuous}, ra(time.Hour)}},
			swept:   1,
			dropped: map[string]DropReason{"http://a/p2": DropRetryAfter},
			kept:    []string{"http://a/p1", "http://a/p3", "http://a/p4"},
		},
		{
			name: "another host due within the horizon: nothing given up",
			hosts: []host{
				{"a", []uint32{oneShot, oneShot}, ra(time.Hour)},
				{"b", []uint32{oneShot, oneShot}, Outcome{Status: 200}},
			},
			kept: []string{"http://a/p1", "http://b/p1"},
		},
		{
			name: "a long Crawl-delay is waited for, and a Retry-After that ends before it",
			hosts: []host{
				{"a", []uint32{oneShot, oneShot}, ra(80 * time.Second)},
				{"cd", []uint32{oneShot, oneShot}, Outcome{Status: 200}}, // Crawl-delay 60 s, set below
				{"c", []uint32{oneShot, oneShot}, ra(2 * time.Hour)},
			},
			swept:   1,
			dropped: map[string]DropReason{"http://c/p1": DropRetryAfter},
			kept:    []string{"http://a/p1", "http://cd/p1"},
		},
		{
			// After one time-out only the retries of URLs that failed are
			// given up (none here): a host fails when failures come in a
			// row (TestGiveUpFailingHost).
			name:  "backoff beyond the horizon",
			hosts: []host{{"a", []uint32{oneShot, oneShot, oneShot}, Outcome{Timeout: true, ResponseTime: time.Second}}},
			swept: 1,
			kept:  []string{"http://a/p1", "http://a/p2"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			dropped := map[string]DropReason{}
			// Window 2 and a small budget: most items wait in the store,
			// so the sweep reads them as a dead host's drain does.
			f, clk := newTest(t, Options{Store: &MemStore{}, MinDelay: time.Second, MaxDelay: 10 * time.Minute,
				Window: 2, WindowBudget: 4, OnDrop: func(it Item, why DropReason) { dropped[it.URL] = why }})
			if c.name == "backoff beyond the horizon" {
				// Backoff doubles from the gap: make it 8 minutes at once.
				f.opts.MinDelay = 4 * time.Minute
			}
			for _, h := range c.hosts {
				var items []Item
				for i, j := range h.jobs {
					it := item(h.name, i)
					it.Job = j
					items = append(items, it)
				}
				<-f.Add(nil, items...)
			}
			f.SetCrawlDelay("cd", time.Minute)
			for range c.hosts {
				l, _ := tryLease(t, f)
				if l == nil {
					t.Fatal("no lease for a host's first item")
				}
				var o Outcome
				for _, h := range c.hosts {
					if h.name == l.Item.Host {
						o = h.first
					}
				}
				<-must(f.Complete(l, o, nil))
			}
			clk.advance(time.Second)
			if l, _ := tryLease(t, f); l != nil && c.swept > 0 {
				t.Fatalf("leased %s: the test's hosts should all wait", l.Item.URL)
			} else if l != nil {
				<-must(f.Complete(l, Outcome{NotStarted: true, Requeue: true}, nil))
			}
			if got := f.GiveUp(30*time.Second, horizon); got != c.swept {
				t.Fatalf("GiveUp swept %d hosts, want %d", got, c.swept)
			}
			// Leasing drains the swept hosts; nothing is due, so no lease.
			for i := 0; i < 100 && c.swept > 0; i++ {
				l, _ := tryLease(t, f)
				if l != nil {
					t.Fatalf("leased %s during the sweep", l.Item.URL)
				}
				f.mu.Lock()
				n := len(f.sweeps)
				f.mu.Unlock()
				if n == 0 {
					break
				}
				settle(t, f)
			}
			if c.dropped == nil {
				c.dropped = map[string]DropReason{}
			}
			if fmt.Sprint(dropped) != fmt.Sprint(c.dropped) {
				t.Errorf("dropped %v, want %v", dropped, c.dropped)
			}
			// What is kept is leased later, in order, and nothing else.
			var kept []string
			leaseUntilDone(t, f, clk, 100, func(l *Lease, _ int) {
				kept = append(kept, l.Item.URL)
				<-must(f.Complete(l, Outcome{Status: 200}, nil))
			})
			slices.Sort(kept)
			if !slices.Equal(kept, c.kept) {
				t.Errorf("leased afterwards %v, want %v", kept, c.kept)
			}
			if s := f.Job(oneShot); !s.Done() || s.Dropped != countJob(c.dropped) {
				t.Errorf("one-shot job %+v, want done with %d dropped", s, countJob(c.dropped))
			}
		})
	}
}

func countJob(m map[string]DropReason) int { return len(m) }

// TestGiveUpLeavesLaterItems: an item queued after GiveUp was called (a
// seed added meanwhile) is not swept with the others.
func TestGiveUpLeavesLaterItems(t *testing.T) {
	var dropped []string
	f, clk := newTest(t, Options{Store: &MemStore{}, MinDelay: time.Second,
		OnDrop: func(it Item, why DropReason) { dropped = append(dropped, it.URL) }})
	a := []Item{item("a", 0), item("a", 1)}
	a[0].Job, a[1].Job = 1, 1
	<-f.Add(nil, a...)
	l, _ := tryLease(t, f)
	<-must(f.Complete(l, Outcome{Status: 503, RetryAfter: time.Hour}, nil))
	if n := f.GiveUp(time.Minute, func(uint32) time.Duration { return time.Minute }); n != 1 {
		t.Fatalf("GiveUp swept %d hosts, want 1", n)
	}
	late := item("a", 2)
	late.Job = 1
	<-f.Add(nil, late)
	for range 10 {
		if l, _ := tryLease(t, f); l != nil {
			t.Fatalf("leased %s", l.Item.URL)
		}
	}
	if !slices.Equal(dropped, []string{"http://a/p1"}) {
		t.Errorf("dropped %v, want only the item queued before GiveUp", dropped)
	}
	if s := f.Job(1); s.Queued != 1 {
		t.Errorf("job %+v, want the late item queued", s)
	}
	clk.advance(2 * time.Hour)
	if l, _ := tryLease(t, f); l == nil || l.Item.URL != late.URL {
		t.Errorf("after the Retry-After, leased %v, want %s", l, late.URL)
	}
}

// TestGiveUpFailingHost: a host in backoff beyond the horizon after a
// failure or two has only its retries given up (a bad URL, not a failing
// host); after failingStrikes failures in a row, every URL of it.
func TestGiveUpFailingHost(t *testing.T) {
	var dropped []string
	f, clk := newTest(t, Options{Store: &MemStore{}, MinDelay: 4 * time.Minute, MaxDelay: time.Hour,
		OnDrop: func(it Item, why DropReason) {
			if why != DropBackoff {
				t.Errorf("%s dropped as %v, want backoff", it.URL, why)
			}
			dropped = append(dropped, it.URL)
		}})
	var items []Item
	for i := range 6 {
		it := item("a", i)
		it.Job = 1
		items = append(items, it)
	}
	<-f.Add(nil, items...)
	wait := func(uint32) time.Duration { return 30 * time.Second }
	drain := func() {
		for range 10 {
			if l, _ := tryLease(t, f); l != nil {
				t.Fatalf("leased %s", l.Item.URL)
			}
		}
	}
	// p0 fails and is to be retried at the tail: only its retry goes.
	l, _ := tryLease(t, f)
	l.Item.Attempts++
	<-must(f.Complete(l, Outcome{Status: 503, Requeue: true, Retry: true}, nil))
	if n := f.GiveUp(30*time.Second, wait); n != 1 {
		t.Fatalf("after one failure GiveUp swept %d hosts, want 1", n)
	}
	drain()
	if len(dropped) != 1 || dropped[0] != "http://a/p0" {
		t.Fatalf("after one failure dropped %v, want p0's retry only", dropped)
	}
	// p1, p2, p3 fail in a row: the host is failing, p4 and p5 go too.
	for range failingStrikes {
		clk.advance(2 * time.Hour)
		l, _ := tryLease(t, f)
		if l == nil {
			t.Fatal("no lease")
		}
		<-must(f.Complete(l, Outcome{Status: 503}, nil))
	}
	if n := f.GiveUp(30*time.Second, wait); n != 1 {
		t.Fatalf("after %d failures in a row GiveUp swept %d hosts, want 1", failingStrikes, n)
	}
	drain()
	if want := []string{"http://a/p0", "http://a/p4", "http://a/p5"}; !slices.Equal(dropped, want) {
		t.Errorf("dropped %v, want %v", dropped, want)
	}
	if s := f.Job(1); !s.Done() {
		t.Errorf("job %+v, want done", s)
	}
}
