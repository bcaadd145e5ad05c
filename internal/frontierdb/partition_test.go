package frontierdb

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/internal/testkit/clustertest"

	"github.com/trawl-crawler/trawl/frontier"
	"github.com/trawl-crawler/trawl/internal/store"
	"github.com/trawl-crawler/trawl/internal/store/partition"
)

func pitem(host string, n int) frontier.Item {
	return frontier.Item{URL: fmt.Sprintf("http://%s/p%d", host, n), Host: host, Depth: n, Level: n % 2}
}

// TestLoadPartition: LoadPartition streams the hosts of one partition, no
// other, with the counts and next seq Load gives them, then the
// partition's job counters.
func TestLoadPartition(t *testing.T) {
	db, s := open(t, t.TempDir())
	defer db.Close()
	defer s.Close()
	f, err := frontier.New(frontier.Options{Store: s})
	if err != nil {
		t.Fatal(err)
	}
	// Neighbouring partitions, to catch a range one too wide.
	parts := []partition.ID{0, 1, 2, 255}
	for _, p := range parts {
		for i := range 3 {
			h := clustertest.HostIn(p, i)
			for n := range i + 1 {
				if err := <-f.Add(nil, pitem(h, n)); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	all := map[string]frontier.HostState{}
	if err := s.Load(func(h frontier.HostState) error { all[h.Host] = h; return nil }, func(frontier.JobState) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if err := s.Load(nil, func(frontier.JobState) error { return nil }); err != nil {
		t.Fatalf("Load without hosts: %v", err)
	}
	for _, p := range parts {
		var got []string
		var jobs []frontier.JobState
		err := s.LoadPartition(frontier.Partition(p), func(h frontier.HostState) error {
			if partition.Of(h.Host) != p {
				t.Errorf("partition %d streamed %s of partition %d", p, h.Host, partition.Of(h.Host))
			}
			if w := all[h.Host]; fmt.Sprint(w) != fmt.Sprint(h) {
				t.Errorf("partition %d: %+v, Load gave %+v", p, h, w)
			}
			got = append(got, h.Host)
			return nil
		}, func(j frontier.JobState) error {
			jobs = append(jobs, j)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 3 {
			t.Errorf("partition %d streamed %v, want its 3 hosts", p, got)
		}
		// 1 + 2 + 3 items of job 0 on its hosts.
		if want := []frontier.JobState{{Part: frontier.Partition(p), Stored: 6}}; fmt.Sprint(jobs) != fmt.Sprint(want) {
			t.Errorf("partition %d: job counters %+v, want %+v", p, jobs, want)
		}
	}
}

// TestPartitionOnPebble serves two partitions on the real store, releases
// one with a lease in flight, and serves it again, on the same frontier
// and on a new one over the reopened store: the same queue and host
// clocks come back.
func TestPartitionOnPebble(t *testing.T) {
	dir := t.TempDir()
	c := newClock(time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC))
	db, s := open(t, dir)
	o := frontier.Options{Store: s, Now: c.now, MinDelay: time.Second, Partitioned: true}
	f, err := frontier.New(o)
	if err != nil {
		t.Fatal(err)
	}
	p, q := partition.ID(4), partition.ID(5)
	for _, x := range []partition.ID{p, q} {
		if err := f.ServePartition(frontier.Partition(x), time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	a, a2, b := clustertest.HostIn(p, 0), clustertest.HostIn(p, 1), clustertest.HostIn(q, 0)
	var seeds []frontier.Item
	for n := range 4 {
		seeds = append(seeds, pitem(a, n), pitem(a2, n), pitem(b, n))
	}
	if err := <-f.Add(nil, seeds...); err != nil {
		t.Fatal(err)
	}
	if err := <-f.Add(nil, pitem(clustertest.HostIn(6, 0), 0)); !errors.Is(err, frontier.ErrNotServed) {
		t.Fatalf("Add to partition 6: %v", err)
	}
	lease := func() *frontier.Lease {
		t.Helper()
		for range 100 {
			l, wait := f.Lease()
			if l != nil {
				return l
			}
			if wait > 0 {
				c.advance(wait)
			}
			time.Sleep(time.Millisecond) // a window being read
		}
		t.Fatal("no lease")
		return nil
	}
	// Complete one lease of each host; keep a second of a in flight.
	var inFlight *frontier.Lease
	done := map[string]bool{}
	for range 20 {
		if inFlight != nil && done[a2] && done[b] {
			break
		}
		l := lease()
		if l.Item.Host == a && done[a] && inFlight == nil {
			inFlight = l
			continue
		}
		c.advance(50 * time.Millisecond)
		if err := <-must(f.Complete(l, frontier.Outcome{Status: 200, ResponseTime: 50 * time.Millisecond}, nil)); err != nil {
			t.Fatal(err)
		}
		done[l.Item.Host] = true
		done[l.Item.URL] = true
	}
	if inFlight == nil {
		t.Fatal("no lease of a in flight")
	}

	released := make(chan error, 1)
	go func() { released <- f.ReleasePartition(context.Background(), frontier.Partition(p)) }()
	select {
	case err := <-released:
		t.Fatalf("release returned %v with a lease in flight", err)
	case <-time.After(50 * time.Millisecond):
	}
	c.advance(20 * time.Millisecond)
	if err := <-must(f.Complete(inFlight, frontier.Outcome{Status: 200, ResponseTime: 20 * time.Millisecond}, nil, pitem(a, 9))); err != nil {
		t.Fatal(err)
	}
	done[inFlight.Item.URL] = true
	if err := <-released; err != nil {
		t.Fatal(err)
	}
	wantNext := c.now().Add(time.Second)
	if st := f.Stats(); st.Hosts != 1 {
		t.Fatalf("after release: %+v, want b's host only", st)
	}

	// What the store holds of p: every item not completed, and a's clock.
	var want []string
	for _, it := range append(seeds, pitem(a, 9)) {
		if partition.Of(it.Host) == p && !done[it.URL] {
			want = append(want, it.URL)
		}
	}
	sort.Strings(want)
	check := func(f *frontier.Frontier, hold time.Time) {
		t.Helper()
		if err := f.ServePartition(frontier.Partition(p), hold); err != nil {
			t.Fatal(err)
		}
		hi, ok := f.Host(a)
		if !ok || !hi.NextAllowed.Equal(wantNext) {
			t.Fatalf("%s back with next allowed %v, want %v", a, hi.NextAllowed, wantNext)
		}
		if l, _ := f.Lease(); l != nil && l.Item.Host == a {
			t.Fatalf("leased %s before its next allowed time", l.Item.URL)
		}
		if err := f.ReleasePartition(context.Background(), frontier.Partition(p)); err != nil {
			t.Fatal(err)
		}
	}
	check(f, time.Time{})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db.Close()

	db, s = open(t, dir)
	defer db.Close()
	defer s.Close()
	o.Store = s
	f, err = frontier.New(o)
	if err != nil {
		t.Fatal(err)
	}
	if st := f.Stats(); st.Hosts != 0 || st.Queued != 0 {
		t.Fatalf("a partitioned New loaded hosts: %+v", st)
	}
	check(f, c.now())
	if err := f.ServePartition(frontier.Partition(p), time.Time{}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for range 1000 {
		l, wait := f.Lease()
		if l == nil {
			if f.Done() {
				break
			}
			if wait > 0 {
				c.advance(wait)
			}
			time.Sleep(time.Millisecond)
			continue
		}
		got = append(got, l.Item.URL)
		if err := <-must(f.Complete(l, frontier.Outcome{Status: 200}, nil)); err != nil {
			t.Fatal(err)
		}
	}
	sort.Strings(got)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("served back %v, want %v", got, want)
	}
}

// TestLoadPartitionSeesKeysWrittenPast: queue keys written into the store
// past the Store (a checkpoint read in by cluster/checkpoint) are read by
// Read once LoadPartition has loaded their partition, though the shared
// queue iterator was made before they were written.
func TestLoadPartitionSeesKeysWrittenPast(t *testing.T) {
	db, s := open(t, t.TempDir())
	defer db.Close()
	defer s.Close()
	const p = partition.ID(7)
	h := clustertest.HostIn(p, 0)
	if got, err := s.Read(h, 0, 0, 10); err != nil || len(got) != 0 {
		t.Fatalf("Read before = %v, %v", got, err)
	}
	b := db.NewBatch()
	for n := range 3 {
		it := frontier.Item{URL: fmt.Sprintf("http://%s/p%d", h, n), Host: h, Seq: uint64(n + 1)}
		if err := b.Set(store.QueueKey(h, 0, it.Seq), appendItem(nil, it)); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Commit(b); err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := s.LoadPartition(frontier.Partition(p), func(frontier.HostState) error { n++; return nil }, nil); err != nil || n != 1 {
		t.Fatalf("LoadPartition: %d hosts, %v", n, err)
	}
	got, err := s.Read(h, 0, 0, 10)
	if err != nil || len(got) != 3 {
		t.Fatalf("Read after LoadPartition = %d items, %v; want the 3 written past the Store", len(got), err)
	}
}
