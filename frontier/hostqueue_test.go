package frontier

import (
	"maps"
	"sync/atomic"
	"testing"
)

// readHook is a MemStore whose first Read of a host's queue runs hook
// first (once), as if the frontier moved while a count read the store.
type readHook struct {
	*MemStore
	fired atomic.Bool
	hook  func()
}

func (s *readHook) Read(host string, level int, after uint64, n int) ([]Item, error) {
	if s.hook != nil && s.fired.CompareAndSwap(false, true) {
		s.hook()
	}
	return s.MemStore.Read(host, level, after, n)
}

// TestHostQueueCountsPerJob: a host's items of two jobs, over two levels,
// in windows, unread in the store and in flight, are counted per job, and
// the counts add up to the host's own figures of the same moment; a count
// allowed to read fewer items than are unread says it is not complete; a
// count during which the queue moved is taken again.
func TestHostQueueCountsPerJob(t *testing.T) {
	for _, tc := range []struct {
		name    string
		maxRead int
		moves   bool // leases and completes items while the count reads
		// complete is whether the count is whole.
		complete bool
	}{
		{"whole", 1000, false, true},
		{"read cut short", 3, false, false},
		{"queue moved while read", 1000, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := &readHook{MemStore: &MemStore{}}
			f, c := newTest(t, Options{Store: store, Window: 4, Levels: 2, MaxParallel: 3})
			added := map[uint32]int{}
			var items []Item
			for i := range 40 {
				it := item("a.test", i)
				it.Job, it.Level = uint32(1+i%3/2), i%2 // jobs 1, 2 in the ratio 2:1
				added[it.Job]++
				items = append(items, it)
			}
			if err := <-f.Add(nil, items...); err != nil {
				t.Fatal(err)
			}
			leased := map[uint32]int{}
			var out []*Lease
			lease := func() *Lease {
				for range 100 {
					l, wait := tryLease(t, f)
					if l != nil {
						return l
					}
					c.advance(wait)
				}
				t.Fatal("no lease in 100 tries")
				return nil
			}
			for range 3 {
				l := lease()
				leased[l.Item.Job]++
				out = append(out, l)
			}
			if tc.moves {
				store.hook = func() {
					// End the leases out, then lease and end 20 more (some
					// unread when the count began), before it reads on.
					for i := range 23 {
						if i >= len(out) {
							out = append(out, lease())
						}
						if _, err := f.Complete(out[i], Outcome{Status: 200}, nil); err != nil {
							t.Fatal(err)
						}
						added[out[i].Item.Job]--
					}
					clear(leased)
				}
			}
			settle(t, f)
			hi, byJob, known, err := f.HostQueue("a.test", tc.maxRead)
			if err != nil || !known {
				t.Fatalf("HostQueue = known %v, %v", known, err)
			}
			if byJob.Complete != tc.complete {
				t.Errorf("Complete = %v, want %v", byJob.Complete, tc.complete)
			}
			queued, flying := 0, 0
			for _, n := range byJob.Queued {
				queued += n
			}
			for _, n := range byJob.InFlight {
				flying += n
			}
			if flying != hi.InFlight || !maps.Equal(byJob.InFlight, leased) {
				t.Errorf("in flight by job %v (%d), want %v, host says %d", byJob.InFlight, flying, leased, hi.InFlight)
			}
			if !tc.complete {
				if queued >= hi.Queued {
					t.Errorf("a count cut short found %d of %d", queued, hi.Queued)
				}
				return
			}
			want := map[uint32]int{}
			for j, n := range added {
				if n-leased[j] > 0 {
					want[j] = n - leased[j]
				}
			}
			if queued != hi.Queued || !maps.Equal(byJob.Queued, want) {
				t.Errorf("queued by job %v (%d), want %v, host says %d", byJob.Queued, queued, want, hi.Queued)
			}
		})
	}
	f, _ := newTest(t, Options{})
	if _, byJob, known, err := f.HostQueue("nobody.test", 10); known || err != nil || len(byJob.Queued)+len(byJob.InFlight) != 0 || !byJob.Complete {
		t.Errorf("HostQueue of an unknown host = known %v, %+v, %v", known, byJob, err)
	}
}
