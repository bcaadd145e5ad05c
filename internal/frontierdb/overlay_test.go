package frontierdb

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/frontier"
	"github.com/trawl-crawler/trawl/internal/testkit/storetest"
)

// TestReadSeesEveryPut leases and completes while other goroutines keep
// adding, with a read iterator that goes stale after a few writes and an
// overlay that is trimmed often, so that windows are refilled from the
// iterator, from the overlay and from both. Every item added must be
// leased exactly once, in Seq order within its host.
func TestReadSeesEveryPut(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: many random runs on Pebble; the full suite runs it")
	}
	for _, tc := range []struct{ stale, overlay, window int }{
		{1, 1, 1},
		{7, 50, 2},
		{1000, 10, 3},
		{200_000, 50_000, 16},
	} {
		t.Run(fmt.Sprintf("stale%d-overlay%d-window%d", tc.stale, tc.overlay, tc.window), func(t *testing.T) {
			db := storetest.Open(t)
			s := New(db, Options{StaleWrites: tc.stale, MaxOverlay: tc.overlay, MaxGroup: 4})
			defer s.Close()
			f, err := frontier.New(frontier.Options{
				Store: s, MinDelay: -1, MaxParallel: 1 << 20, IPMaxParallel: 1 << 20,
				Window: tc.window, WindowBudget: 64,
				Now: func() time.Time { return time.Unix(1e9, 0) },
			})
			if err != nil {
				t.Fatal(err)
			}
			const adders, batches, perBatch, hosts = 3, 40, 25, 7
			var wg sync.WaitGroup
			for a := range adders {
				wg.Go(func() {
					rng := rand.New(rand.NewPCG(uint64(a), 1))
					for b := range batches {
						items := make([]frontier.Item, perBatch)
						for i := range items {
							h := fmt.Sprintf("h%d.test", rng.IntN(hosts))
							items[i] = frontier.Item{URL: fmt.Sprintf("http://%s/%d/%d/%d", h, a, b, i), Host: h, Level: rng.IntN(3)}
						}
						if err := <-f.Add(nil, items...); err != nil {
							t.Errorf("Add: %v", err)
							return
						}
					}
				})
			}
			leased := map[string]int{}
			lastSeq := map[[2]string]uint64{}
			want := adders * batches * perBatch
			deadline := time.Now().Add(30 * time.Second)
			for len(leased) < want && time.Now().Before(deadline) {
				l, _ := f.Lease()
				if l == nil {
					select {
					case <-f.Changed():
					case <-time.After(time.Millisecond):
					}
					continue
				}
				leased[l.Item.URL]++
				k := [2]string{l.Item.Host, fmt.Sprint(l.Item.Level)}
				if l.Item.Seq <= lastSeq[k] {
					t.Fatalf("%s leased with seq %d after seq %d of its host and level", l.Item.URL, l.Item.Seq, lastSeq[k])
				}
				lastSeq[k] = l.Item.Seq
				done, err := f.Complete(l, frontier.Outcome{Status: 200}, nil)
				if err != nil || <-done != nil {
					t.Fatalf("Complete: %v", err)
				}
			}
			wg.Wait()
			if len(leased) != want {
				t.Fatalf("leased %d distinct URLs, want %d (frontier %+v)", len(leased), want, f.Stats())
			}
			for u, n := range leased {
				if n != 1 {
					t.Errorf("%s leased %d times", u, n)
				}
			}
			if l, _ := f.Lease(); l != nil {
				t.Errorf("Lease after all were done = %s", l.Item.URL)
			}
		})
	}
}
