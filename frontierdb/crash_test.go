package frontierdb

import (
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/trawl-crawler/trawl/frontier"
	"github.com/trawl-crawler/trawl/store"
)

// TestCrashKeepsAPrefix crashes the store (only synced writes survive)
// while changes are being applied and synced in the pipeline, at several
// moments. After each crash the store must hold every change that was
// acknowledged, and the changes it holds must be a prefix of the order
// they were written in: applying one group while the previous one is being
// synced must never let a later change survive an earlier one.
func TestCrashKeepsAPrefix(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, crashAfter := range []int{0, 1, 7, 40, 150, 399} {
		t.Run(fmt.Sprint(crashAfter), func(t *testing.T) {
			mem := vfs.NewCrashableMem()
			opts := store.Options{FS: mem, Logger: quiet, CacheSize: 1 << 20}
			db, err := store.Open("/state", opts)
			if err != nil {
				t.Fatal(err)
			}
			s := New(db, Options{MaxGroup: 8})
			f, err := frontier.New(frontier.Options{Store: s, Now: func() time.Time { return time.Unix(1e9, 0) }})
			if err != nil {
				t.Fatal(err)
			}
			const n = 400
			var (
				mu    sync.Mutex
				acked = map[string]bool{}
				wg    sync.WaitGroup
				urls  []string
			)
			var (
				crashed      *vfs.MemFS
				ackedAtCrash []string
			)
			for i := range n {
				u := fmt.Sprintf("http://h%d.test/%d", i%13, i)
				urls = append(urls, u)
				done := f.Add(nil, frontier.Item{URL: u, Host: fmt.Sprintf("h%d.test", i%13)}, frontier.Item{URL: u + "/b", Host: "other.test"})
				wg.Add(1)
				go func() {
					defer wg.Done()
					if err := <-done; err == nil {
						mu.Lock()
						acked[u] = true
						mu.Unlock()
					}
				}()
				if i == crashAfter {
					// Take the acknowledged set before the clone: everything
					// in it must survive.
					mu.Lock()
					for k := range acked {
						ackedAtCrash = append(ackedAtCrash, k)
					}
					mu.Unlock()
					crashed = mem.CrashClone(vfs.CrashCloneCfg{})
				}
			}
			wg.Wait()
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			db.Close()

			db, err = store.Open("/state", store.Options{FS: crashed, Logger: quiet, CacheSize: 1 << 20})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			present := map[string]bool{}
			it, err := db.NewIter(store.KindPrefix(store.KindQueue))
			if err != nil {
				t.Fatal(err)
			}
			for ok := it.First(); ok; ok = it.Next() {
				host, _, _, err := store.DecodeQueueKey(it.Key())
				if err != nil {
					t.Fatal(err)
				}
				item, err := decodeItem(host, it.Value())
				if err != nil {
					t.Fatal(err)
				}
				present[item.URL] = true
			}
			it.Close()
			gap := -1
			for i, u := range urls {
				if !present[u] && gap < 0 {
					gap = i
				}
				if present[u] && gap >= 0 {
					t.Fatalf("change %d (%s) survived the crash but change %d did not", i, u, gap)
				}
				if present[u] != present[u+"/b"] {
					t.Fatalf("change %d half applied: %s %v, %s/b %v", i, u, present[u], u, present[u+"/b"])
				}
			}
			for _, u := range ackedAtCrash {
				if !present[u] {
					t.Errorf("acknowledged change %s lost in the crash", u)
				}
			}
			t.Logf("crash after %d writes: %d acknowledged before, %d survived", crashAfter, len(ackedAtCrash), len(present)/2)
		})
	}
}
