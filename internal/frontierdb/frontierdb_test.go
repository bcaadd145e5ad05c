package frontierdb

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/trawl-crawler/trawl/frontier"
	"github.com/trawl-crawler/trawl/internal/store"
	"github.com/trawl-crawler/trawl/internal/testkit/storetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// clock is a fake clock, safe for concurrent use: the frontier reads it
// from its own goroutines (a ReleasePartition waiting for leases).
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock(t time.Time) *clock { return &clock{t: t} }

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func open(t *testing.T, dir string) (*store.DB, *Store) {
	t.Helper()
	db := storetest.OpenDir(t, dir, store.Options{})
	return db, New(db, Options{})
}

// TestRestartOnPebble runs a frontier on the real store, closes it with a
// lease in flight, reopens it and finishes the work.
func TestRestartOnPebble(t *testing.T) {
	dir := t.TempDir()
	c := newClock(time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC))
	db, s := open(t, dir)
	f, err := frontier.New(frontier.Options{Store: s, Now: c.now, MinDelay: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var seeds []frontier.Item
	for i := range 5 {
		seeds = append(seeds, frontier.Item{URL: fmt.Sprintf("http://a.test/%d", i), Host: "a.test", Depth: i, ShapeRun: i})
	}
	seeds = append(seeds, frontier.Item{URL: "http://b.test/", Host: "b.test", Level: 2})
	if err := <-f.Add(nil, seeds...); err != nil {
		t.Fatal(err)
	}
	l1, _ := f.Lease()
	l2, _ := f.Lease()
	if l1 == nil || l2 == nil {
		t.Fatal("no leases")
	}
	c.advance(100 * time.Millisecond)
	done, err := f.Complete(l1, frontier.Outcome{Status: 200, ResponseTime: 100 * time.Millisecond}, nil,
		frontier.Item{URL: "http://c.test/x", Host: "c.test", Depth: 1})
	if err != nil || <-done != nil {
		t.Fatalf("Complete: %v", err)
	}
	wantNext := c.now().Add(time.Second)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db.Close()

	db, s = open(t, dir)
	defer db.Close()
	defer s.Close()
	if n, _ := s.QueueLen(); n != 6 {
		t.Errorf("queue holds %d items after restart, want 6", n)
	}
	var states []frontier.HostState
	s.Load(func(h frontier.HostState) error { states = append(states, h); return nil }, func(frontier.JobState) error { return nil })
	for _, h := range states {
		if h.Host == l1.Item.Host && !h.NextAllowed.Equal(wantNext) {
			t.Errorf("%s next allowed = %v, want %v", h.Host, h.NextAllowed, wantNext)
		}
	}
	f, err = frontier.New(frontier.Options{Store: s, Now: c.now, MinDelay: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]frontier.Item{}
	for range 1000 {
		l, wait := f.Lease()
		if l == nil {
			if f.Done() {
				break
			}
			if wait < 0 { // windows being read
				<-f.Changed()
				continue
			}
			c.advance(wait)
			continue
		}
		got[l.Item.URL] = l.Item
		if err := <-must(f.Complete(l, frontier.Outcome{Status: 200}, nil)); err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != 6 || got[l1.Item.URL].URL != "" {
		t.Errorf("after restart leased %d URLs (%v), want the 6 not completed", len(got), got)
	}
	if it := got["http://a.test/3"]; it.Depth != 3 || it.ShapeRun != 3 || it.Host != "a.test" {
		t.Errorf("item decoded as %+v", it)
	}
	if n, _ := s.QueueLen(); n != 0 {
		t.Errorf("queue holds %d items after all completed", n)
	}
}

// TestDeadReasonSurvivesRestart: why a host was given up is stored with
// its state, in the batch that marks it dead, and shows again after the
// store is closed and reopened; a state written before the reason was
// stored (host state version 2) shows as host-dropped, or as the budget
// if the host's budget is spent.
func TestDeadReasonSurvivesRestart(t *testing.T) {
	for _, c := range []struct {
		name    string
		opts    frontier.Options
		outcome func(i int) frontier.Outcome
		old     bool   // rewrite the host's state as version 2 before the restart
		want    string // DeadReason, before the restart and after
		after   string // DeadReason after the restart, if not want
	}{
		{"host-dropped", frontier.Options{}, func(int) frontier.Outcome { return frontier.Outcome{Status: 500, Requeue: true, DropHost: true} }, false, "host-dropped", ""},
		{"budget", frontier.Options{HostBudget: 2}, func(int) frontier.Outcome { return frontier.Outcome{Status: 200} }, false, "budget", ""},
		{"duplicates", frontier.Options{DuplicateAllowance: 1}, func(int) frontier.Outcome { return frontier.Outcome{Status: 200, Duplicate: true} }, false, "duplicates", ""},
		{"failing", frontier.Options{FailLimit: 3}, func(int) frontier.Outcome { return frontier.Outcome{Timeout: true} }, false, "failing", ""},
		{"failing, older store", frontier.Options{FailLimit: 3}, func(int) frontier.Outcome { return frontier.Outcome{Timeout: true} }, true, "failing", "host-dropped"},
		{"budget, older store", frontier.Options{HostBudget: 2}, func(int) frontier.Outcome { return frontier.Outcome{Status: 200} }, true, "budget", "budget"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			clk := newClock(time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC))
			opts := c.opts
			opts.Now, opts.MinDelay = clk.now, time.Second
			db, s := open(t, dir)
			opts.Store = s
			f, err := frontier.New(opts)
			if err != nil {
				t.Fatal(err)
			}
			var seeds []frontier.Item
			for i := range 10 {
				seeds = append(seeds, frontier.Item{URL: fmt.Sprintf("http://a.test/%d", i), Host: "a.test"})
			}
			seeds = append(seeds, frontier.Item{URL: "http://b.test/", Host: "b.test"})
			if err := <-f.Add(nil, seeds...); err != nil {
				t.Fatal(err)
			}
			n := 0
			for range 1000 {
				l, wait := f.Lease()
				if l == nil {
					if f.Done() {
						break
					}
					if wait < 0 {
						<-f.Changed()
						continue
					}
					clk.advance(wait)
					continue
				}
				o := frontier.Outcome{Status: 200}
				if l.Item.Host == "a.test" {
					o = c.outcome(n)
					n++
				}
				if err := <-must(f.Complete(l, o, nil)); err != nil {
					t.Fatal(err)
				}
			}
			if !f.Done() {
				t.Fatalf("not done: %+v", f.Stats())
			}
			if hi, _ := f.Host("a.test"); hi.State != frontier.HostDead || hi.DeadReason != c.want {
				t.Fatalf("before the restart: state %q, reason %q; want dead, %q", hi.State, hi.DeadReason, c.want)
			}
			if hi, _ := f.Host("b.test"); hi.State == frontier.HostDead || hi.DeadReason != "" {
				t.Errorf("b.test before the restart: state %q, reason %q; want live", hi.State, hi.DeadReason)
			}
			// Every change the frontier wrote (drops of a dead host's items
			// go on after the last completion) is applied before the
			// record is rewritten: closing the Store waits for them.
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if c.old {
				v, err := db.Get(store.HostKey("a.test"))
				if err != nil {
					t.Fatal(err)
				}
				h, err := decodeHostState(v)
				if err != nil {
					t.Fatal(err)
				}
				b := db.NewBatch()
				if err := b.Set(store.HostKey("a.test"), appendHostStateV2(h)); err != nil {
					t.Fatal(err)
				}
				if err := db.Commit(b); err != nil {
					t.Fatal(err)
				}
			}
			db.Close()

			db, s = open(t, dir)
			defer db.Close()
			defer s.Close()
			var dropped []string
			opts.Store = s
			opts.OnDrop = func(_ frontier.Item, why frontier.DropReason) { dropped = append(dropped, why.String()) }
			if f, err = frontier.New(opts); err != nil {
				t.Fatal(err)
			}
			want := cmp.Or(c.after, c.want)
			if hi, ok := f.Host("a.test"); !ok || hi.State != frontier.HostDead || hi.DeadReason != want {
				t.Errorf("after the restart: %v, state %q, reason %q; want dead, %q", ok, hi.State, hi.DeadReason, want)
			}
			if hi, _ := f.Host("b.test"); hi.State == frontier.HostDead || hi.DeadReason != "" {
				t.Errorf("b.test after the restart: state %q, reason %q; want live", hi.State, hi.DeadReason)
			}
			// An item added for the dead host is dropped for its reason.
			if err := <-f.Add(nil, frontier.Item{URL: "http://a.test/new", Host: "a.test"}); err != nil {
				t.Fatal(err)
			}
			if len(dropped) != 1 || dropped[0] != want {
				t.Errorf("an item added after the restart: dropped %v, want [%s]", dropped, want)
			}
		})
	}
}

// appendHostStateV2 encodes h as host state version 2 did: no dead reason.
func appendHostStateV2(h frontier.HostState) []byte {
	b := appendHostState(nil, h)
	b = b[:len(b)-1] // less the wait reason
	tail := binary.AppendUvarint(nil, uint64(len(h.Queued)))
	for _, n := range h.Queued {
		tail = binary.AppendUvarint(tail, uint64(n))
	}
	head := b[:len(b)-len(tail)-1] // less the dead reason byte before the tail
	head[0] = 2
	return append(head, tail...)
}

func must(ch <-chan error, err error) <-chan error {
	if err != nil {
		panic(err)
	}
	return ch
}

func TestCodecRoundTrip(t *testing.T) {
	for _, it := range []frontier.Item{
		{URL: "http://a.test/x?y", Host: "a.test", Depth: 7, Redirects: 2, Attempts: 1, ShapeRun: 3},
		{URL: "https://a.test", Host: "a.test"},
		{URL: "https://a.test:8443/", Host: "a.test"},
		{URL: "http://a.testing/", Host: "a.test"},
		{URL: "ftp://a.test/", Host: "a.test"},
		{URL: "http://[::1]:8080/", Host: "::1"},
		{URL: "http://a.test/", Host: "a.test", Job: 1<<32 - 1},
		{URL: "http://a.test/b", Host: "a.test", Depth: 1, Via: "http://a.test/"},
		{URL: "http://a.test/b", Host: "a.test", Depth: 1, Via: "https://other.test/x?y=1"},
		{URL: "http://a.test/b", Host: "a.test", Depth: 1, Via: "http://a.testing/"},
		{URL: "http://a.test/s.css", Host: "a.test", Depth: 4, Via: "http://a.test/b", Requisite: 1},
		{URL: "http://cdn.test/f.woff2", Host: "cdn.test", Job: 3, Via: "http://a.test/s.css", Requisite: 2},
	} {
		got, err := decodeItem(it.Host, appendItem(nil, it))
		if err != nil || got != it {
			t.Errorf("item round trip = %+v, %v; want %+v", got, err, it)
		}
	}
	// A page's item costs no byte for Requisite.
	page, req := frontier.Item{URL: "http://a.test/x", Host: "a.test"}, frontier.Item{URL: "http://a.test/x", Host: "a.test", Requisite: 1}
	if a, b := len(appendItem(nil, page)), len(appendItem(nil, req)); b != a+1 {
		t.Errorf("item of a page %d bytes, of a requisite %d: want one byte more", a, b)
	}
	// Version 2 items (before via) are still read.
	v2 := []byte{2, 1, 3, 0, 0, 0, 0x01, '/', 'x'}
	if got, err := decodeItem("a.test", v2); err != nil || got != (frontier.Item{URL: "http://a.test/x", Host: "a.test", Job: 1, Depth: 3}) {
		t.Errorf("decodeItem(version 2) = %+v, %v", got, err)
	}
	h := frontier.HostState{NextAllowed: time.Unix(1e9, 5), Backoff: time.Second, CrawlDelay: 2 * time.Second,
		Leased: 4, Duplicates: 3, NextSeq: 99, Queued: []int{1, 0, 5}, Dead: true}
	gh, err := decodeHostState(appendHostState(nil, h))
	if err != nil || !gh.NextAllowed.Equal(h.NextAllowed) || gh.Backoff != h.Backoff || gh.Leased != 4 || gh.Duplicates != 3 ||
		gh.NextSeq != 99 || len(gh.Queued) != 3 || gh.Queued[2] != 5 || !gh.Dead || gh.CrawlDelay != h.CrawlDelay {
		t.Errorf("host round trip = %+v, %v; want %+v", gh, err, h)
	}
	for _, why := range []frontier.DropReason{frontier.DropHost, frontier.DropBudget, frontier.DropDuplicates, frontier.DropFailing} {
		h := h
		h.DeadReason = why
		if gh, err := decodeHostState(appendHostState(nil, h)); err != nil || gh.DeadReason != why || !gh.Dead {
			t.Errorf("host round trip, dead for %v = %+v, %v", why, gh, err)
		}
		h.Dead = false // a live host has no reason, whatever the field holds
		if gh, err := decodeHostState(appendHostState(nil, h)); err != nil || gh.DeadReason != 0 || gh.Dead {
			t.Errorf("host round trip, live with reason %v = %+v, %v", why, gh, err)
		}
	}
	// The wait reason round-trips, each of them; version 3 host states
	// (before it) are still read, without one, and so is a code this code
	// does not know.
	for why := frontier.GapNone; why <= frontier.GapIPSlot; why++ {
		h := h
		h.Why = why
		if gh, err := decodeHostState(appendHostState(nil, h)); err != nil || gh.Why != why || gh.NextSeq != 99 {
			t.Errorf("host round trip, waiting for %v = %+v, %v", why, gh, err)
		}
	}
	h.Why = frontier.GapRobotsRetryAfter
	v4 := appendHostState(nil, h)
	v3 := append([]byte{3}, v4[1:len(v4)-1]...)
	if gh, err := decodeHostState(v3); err != nil || gh.Why != frontier.GapNone || gh.NextSeq != 99 || len(gh.Queued) != 3 || gh.Queued[2] != 5 {
		t.Errorf("decodeHostState(version 3) = %+v, %v", gh, err)
	}
	v4[len(v4)-1] = 200
	if gh, err := decodeHostState(v4); err != nil || gh.Why != frontier.GapNone || len(gh.Queued) != 3 {
		t.Errorf("decodeHostState(unknown wait reason) = %+v, %v", gh, err)
	}
	h.Why = frontier.GapNone
	// Version 2 host states (before the dead reason) are still read, with
	// no reason; so is a reason this code does not know.
	h2 := []byte{2, 0, 0, 0, 4, 3, 99, 1, 1, 2}
	if gh, err := decodeHostState(h2); err != nil || gh.Leased != 4 || gh.Duplicates != 3 || gh.NextSeq != 99 || !gh.Dead || gh.DeadReason != 0 || len(gh.Queued) != 1 || gh.Queued[0] != 2 {
		t.Errorf("decodeHostState(version 2) = %+v, %v", gh, err)
	}
	h3 := []byte{3, 0, 0, 0, 4, 3, 99, 1, 200, 1, 2}
	if gh, err := decodeHostState(h3); err != nil || !gh.Dead || gh.DeadReason != 0 || gh.NextSeq != 99 || len(gh.Queued) != 1 {
		t.Errorf("decodeHostState(version 3, unknown reason) = %+v, %v", gh, err)
	}
	// Version 1 host states (before the duplicates count) are still read.
	v1 := []byte{1, 0, 0, 0, 4, 99, 0, 1, 2}
	if gh, err := decodeHostState(v1); err != nil || gh.Leased != 4 || gh.NextSeq != 99 || gh.Duplicates != 0 || len(gh.Queued) != 1 || gh.Queued[0] != 2 {
		t.Errorf("decodeHostState(version 1) = %+v, %v", gh, err)
	}
	for _, bad := range [][]byte{nil, {2}, {0, 0, 0, 0, 0, 0, 0, 0, 0}, {4, 0, 0, 0, 0, 0, 0, 0, 0, 0}, {3, 0, 0, 0, 0, 0, 0, 1}, {1, 0x80}, append(appendHostState(nil, h), 7)} {
		if _, err := decodeHostState(bad); err == nil {
			t.Errorf("decodeHostState(%x) = nil error", bad)
		}
	}
	for _, bad := range [][]byte{nil, {1, 0, 1, 0, 0, 0, 0x01, '/'}, {2, 0x80, 0x80, 0x80, 0x80, 0x10, 0, 0, 0, 0, 0x01},
		{3, 0, 0, 0, 0, 0, 9, 0x01, '/'}, {3, 0, 0, 0, 0, 0, 1, 7, 0x01, '/'}} {
		if _, err := decodeItem("a.test", bad); err == nil {
			t.Errorf("decodeItem(%x) = nil error (version 1, or a job over 32 bits)", bad)
		}
	}
	j := frontier.JobState{Stored: 5, Held: 7, Dropped: 1 << 33}
	if gj, err := decodeJobState(appendJobState(nil, j)); err != nil || gj != j {
		t.Errorf("job counters round trip = %+v, %v; want %+v", gj, err, j)
	}
	for _, bad := range [][]byte{nil, {2, 0, 0, 0}, {1, 0, 0}} {
		if _, err := decodeJobState(bad); err == nil {
			t.Errorf("decodeJobState(%x) = nil error", bad)
		}
	}
}

// TestReadHeld pages through one job's held items on Pebble, across hosts
// that hold other jobs' items before and after it.
func TestReadHeld(t *testing.T) {
	db, s := open(t, t.TempDir())
	defer db.Close()
	defer s.Close()
	var hold []frontier.Item
	want := map[string]bool{}
	for h := range 20 {
		host := fmt.Sprintf("h%d.test", h)
		for i := range 6 {
			it := frontier.Item{URL: fmt.Sprintf("http://%s/%d", host, i), Host: host, Job: uint32(i % 3), Level: i % 2, Seq: uint64(i + 1)}
			hold = append(hold, it)
			if it.Job == 1 {
				want[it.URL] = true
			}
		}
	}
	if err := <-s.Write(&frontier.Change{Hold: hold}); err != nil {
		t.Fatal(err)
	}
	var after *frontier.Item
	got := map[string]bool{}
	for {
		items, err := s.ReadHeld(1, after, 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(items) == 0 {
			break
		}
		for _, it := range items {
			if it.Job != 1 || got[it.URL] {
				t.Fatalf("ReadHeld(1) gave %+v", it)
			}
			got[it.URL] = true
		}
		after = &items[len(items)-1]
	}
	if len(got) != len(want) {
		t.Errorf("ReadHeld(1) gave %d items, want %d", len(got), len(want))
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(appendItem(nil, frontier.Item{URL: "http://a.test/", Host: "a.test", Depth: 1}))
	f.Add(appendItem(nil, frontier.Item{URL: "http://a.test/b", Host: "a.test", Depth: 1, Via: "http://b.test/"}))
	f.Add(appendHostState(nil, frontier.HostState{NextSeq: 3, Queued: []int{1, 2}}))
	f.Add(appendJobState(nil, frontier.JobState{Stored: 3, Held: 1}))
	f.Fuzz(func(t *testing.T, b []byte) {
		if it, err := decodeItem("a.test", b); err == nil {
			if again, err := decodeItem("a.test", appendItem(nil, it)); err != nil || again != it {
				t.Fatalf("item does not round-trip: %+v", it)
			}
		}
		if j, err := decodeJobState(b); err == nil {
			if again, err := decodeJobState(appendJobState(nil, j)); err != nil || again != j {
				t.Fatalf("job counters do not round-trip: %+v", j)
			}
		}
		if h, err := decodeHostState(b); err == nil {
			if _, err := decodeHostState(appendHostState(nil, h)); err != nil {
				t.Fatalf("host state does not round-trip: %+v: %v", h, err)
			}
		}
	})
}

// TestCloseWhileWriting closes the store while writers are still calling
// Write: no panic (no send on the closed channel), every change yields nil
// or ErrClosed, and every Write after Close yields ErrClosed.
func TestCloseWhileWriting(t *testing.T) {
	for round := range 20 {
		db, s := open(t, t.TempDir())
		const writers, perWriter = 8, 200
		var wg sync.WaitGroup
		var closedSeen, issued atomic.Int64
		for w := range writers {
			wg.Go(func() {
				var pending []<-chan error
				for i := range perWriter {
					host := fmt.Sprintf("w%d.test", w)
					ch := &frontier.Change{Put: []frontier.Item{{URL: fmt.Sprintf("http://%s/%d", host, i), Host: host, Seq: uint64(i + 1)}}}
					pending = append(pending, s.Write(ch))
					issued.Add(1)
				}
				for _, done := range pending {
					switch err := <-done; {
					case err == nil:
					case errors.Is(err, ErrClosed):
						closedSeen.Add(1)
					default:
						t.Errorf("Write: %v", err)
					}
				}
			})
		}
		// Close once a different share of the writes is issued each round.
		for issued.Load() < int64(round*writers*perWriter/20) {
			runtime.Gosched()
		}
		if err := s.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		wg.Wait()
		if err := <-s.Write(&frontier.Change{}); !errors.Is(err, ErrClosed) {
			t.Errorf("Write after Close = %v, want ErrClosed", err)
		}
		if _, err := s.Read("w0.test", 0, 0, 10); !errors.Is(err, ErrClosed) {
			t.Errorf("Read after Close = %v, want ErrClosed", err)
		}
		if err := s.Close(); !errors.Is(err, ErrClosed) {
			t.Errorf("second Close = %v, want ErrClosed", err)
		}
		db.Close()
		t.Logf("round %d: %d of %d writes refused after Close", round, closedSeen.Load(), writers*perWriter)
	}
}

// TestLoadCounts: Load counts each host's queue keys per level and finds
// its highest seq, for hosts with and without a host record, many hosts
// to a partition, hosts whose names are prefixes of one another and a
// host with a record but no queue; the counts agree with a count made by
// decoding every key.
func TestLoadCounts(t *testing.T) {
	db, s := open(t, t.TempDir())
	defer db.Close()
	defer s.Close()
	b := db.NewBatch()
	want := map[string]frontier.HostState{}
	hosts := []string{"a.test", "a.tes", "a.testa", "b.test", "recorded.test", "only-record.test"}
	for i := range 200 {
		hosts = append(hosts, fmt.Sprintf("h%d.test", i))
	}
	for i, h := range hosts {
		if h == "recorded.test" || h == "only-record.test" || i%7 == 0 {
			if err := b.Set(store.HostKey(h), appendHostState(nil, frontier.HostState{Host: h, CrawlDelay: time.Second})); err != nil {
				t.Fatal(err)
			}
			want[h] = frontier.HostState{Host: h}
		}
		if h == "only-record.test" {
			continue
		}
		hs := frontier.HostState{Host: h}
		for j := range 1 + i%9 {
			level, seq := uint8(j%3), uint64(10*j+i%4)
			if err := b.Set(store.QueueKey(h, level, seq), []byte{1}); err != nil {
				t.Fatal(err)
			}
			for len(hs.Queued) <= int(level) {
				hs.Queued = append(hs.Queued, 0)
			}
			hs.Queued[level]++
			hs.NextSeq = max(hs.NextSeq, seq)
		}
		want[h] = hs
	}
	if err := db.Commit(b); err != nil {
		t.Fatal(err)
	}
	got := map[string]frontier.HostState{}
	if err := s.Load(func(h frontier.HostState) error {
		if _, dup := got[h.Host]; dup {
			t.Errorf("host %s loaded twice", h.Host)
		}
		got[h.Host] = h
		return nil
	}, nil); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Errorf("Load gave %d hosts, want %d", len(got), len(want))
	}
	for h, w := range want {
		g := got[h]
		if fmt.Sprint(g.Queued) != fmt.Sprint(w.Queued) || g.NextSeq != w.NextSeq {
			t.Errorf("%s: Queued %v, NextSeq %d; want %v, %d", h, g.Queued, g.NextSeq, w.Queued, w.NextSeq)
		}
	}
}
