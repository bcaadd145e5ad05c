package frontierbench

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/trawl-crawler/trawl/internal/store"
)

// Ceilings are what the frontier's durable phases work against, measured
// in the same run on the same disk, so that a figure can be read as a
// fraction of what the machine allows and runs on different machines
// compare.
type Ceilings struct {
	// FsyncsPerSec is how many 4 KiB append+fdatasync rounds one goroutine
	// makes per second in the data directory: the disk's sync latency.
	FsyncsPerSec float64 `json:"fsyncs_per_s"`
	// IngestPerSec is raw store ingest of the enqueue phase's writes: per
	// URL its seen key and a queue item of the same layout and size, and
	// per batch a host record per host, in batches of Config.Batch URLs,
	// each committed with a sync by Workers x InFlight goroutines (Pebble
	// groups their syncs). No seen gate, no frontier.
	IngestPerSec float64 `json:"ingest_urls_per_s"`
	// CompletePerSec is raw store commits shaped as lease completions (a
	// queue item deleted, a host record and a URL record set), one per
	// synced commit, by Workers x InFlight goroutines.
	CompletePerSec float64 `json:"raw_completions_per_s"`
}

// ceilingTime bounds each ceiling measurement.
const ceilingTime = 3 * time.Second

// measureCeilings measures c's ceilings in a scratch store under c.Dir,
// removed afterwards.
func measureCeilings(c Config) (Ceilings, error) {
	var out Ceilings
	dir, err := os.MkdirTemp(filepath.Dir(filepath.Clean(c.Dir)), "ceiling-")
	if err != nil {
		return out, err
	}
	defer os.RemoveAll(dir)
	if out.FsyncsPerSec, err = fsyncRate(filepath.Join(dir, "fsync")); err != nil {
		return out, err
	}
	db, err := store.Open(filepath.Join(dir, "store"), store.Options{})
	if err != nil {
		return out, err
	}
	defer db.Close()
	goroutines := c.Workers * c.InFlight
	n, secs, err := rawCommits(db, goroutines, c.URLs/c.Batch+1, func(b *store.Batch, i int) (int, error) {
		lo := i * c.Batch
		hi := min(c.URLs, lo+c.Batch)
		var buf, val []byte
		hosts := map[string]bool{}
		for u := lo; u < hi; u++ {
			url, host := urlAt(buf, u, c.Hosts)
			if err := b.Set(store.SeenKey(job, host, url), nil); err != nil {
				return 0, err
			}
			// A queue item as frontierdb lays it out: version, job,
			// depth, redirects, attempts, shape run, host-relative URL.
			val = append(val[:0], 2, byte(job), 1, 0, 0, 0)
			val = store.AppendURL(val, host, url)
			if err := b.Set(store.QueueKey(host, 0, uint64(u)), val); err != nil {
				return 0, err
			}
			hosts[host] = true
		}
		for host := range hosts {
			if err := b.Set(store.HostKey(host), hostRecord(len(hosts))); err != nil {
				return 0, err
			}
		}
		return hi - lo, nil
	})
	if err != nil {
		return out, fmt.Errorf("raw ingest: %w", err)
	}
	out.IngestPerSec = float64(n) / secs
	n, secs, err = rawCommits(db, goroutines, c.Leases, func(b *store.Batch, i int) (int, error) {
		url, host := urlAt(nil, i, c.Hosts)
		if err := b.Delete(store.QueueKey(host, 0, uint64(i))); err != nil {
			return 0, err
		}
		if err := b.Set(store.HostKey(host), hostRecord(1)); err != nil {
			return 0, err
		}
		// A URL record: version, flags, fetch time, status, digests.
		return 1, b.Set(store.URLKey(host, url), make([]byte, 56))
	})
	if err != nil {
		return out, fmt.Errorf("raw completions: %w", err)
	}
	out.CompletePerSec = float64(n) / secs
	return out, db.Close()
}

// hostRecord is a host state of the size frontierdb writes.
func hostRecord(seed int) []byte {
	v := make([]byte, 24)
	v[0] = 1
	binary.BigEndian.PutUint64(v[8:], uint64(seed))
	return v
}

// rawCommits commits up to n batches built by fill (which returns how many
// items batch i holds) from goroutines goroutines, each commit synced,
// for at most ceilingTime; it returns the items committed and the seconds.
func rawCommits(db *store.DB, goroutines, n int, fill func(b *store.Batch, i int) (int, error)) (int, float64, error) {
	var next, items atomic.Int64
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	start := time.Now()
	deadline := start.Add(ceilingTime)
	for range goroutines {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				b := db.NewBatch()
				k, err := fill(b, i)
				if err == nil {
					err = db.Commit(b)
				} else {
					b.Close()
				}
				if err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
				items.Add(int64(k))
			}
		})
	}
	wg.Wait()
	return int(items.Load()), time.Since(start).Seconds(), first
}

// fsyncRate appends 4 KiB and fdatasyncs it in a loop on one goroutine
// for up to a second (at most 20,000 rounds) and returns the rounds per
// second.
func fsyncRate(path string) (float64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	block := make([]byte, 4096)
	start := time.Now()
	n := 0
	for ; n < 20000 && time.Since(start) < time.Second; n++ {
		if _, err := f.Write(block); err != nil {
			return 0, err
		}
		if err := f.Sync(); err != nil {
			return 0, err
		}
	}
	return float64(n) / time.Since(start).Seconds(), nil
}
