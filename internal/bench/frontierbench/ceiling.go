package frontierbench

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/trawl-crawler/trawl/internal/procstat"
	"github.com/trawl-crawler/trawl/internal/store"
	"github.com/trawl-crawler/trawl/internal/store/partition"
)

// Ceilings are what the frontier's durable phases work against, measured
// in the same run on the same disk, so that a figure can be read as a
// fraction of what the machine allows and runs on different machines
// compare.
type Ceilings struct {
	// FsyncsPerSec is how many 4 KiB append+fsync rounds one goroutine
	// makes per second in the data directory: the disk's sync latency.
	FsyncsPerSec float64 `json:"fsyncs_per_s"`
	// IngestPerSec is raw store ingest of the enqueue phase's writes, as
	// frontierdb commits them: per URL its seen key and its queue item (the
	// same layout and size), and per batch the job's counters of each
	// partition its hosts fall in (queueing writes no host state: Load
	// derives a host's counts and next seq from its queue). Batches of
	// Config.Batch URLs, built before the clock starts and committed
	// without a sync by Workers goroutines, timed until one SyncWAL after
	// the last: what Pebble takes of these writes with no seen gate, no
	// frontier, no waiting for fsyncs.
	IngestPerSec float64 `json:"ingest_urls_per_s"`
	// CompletePerSec is raw store commits shaped as the lease phase's
	// completions (a queue item deleted, the host's state and the job's
	// counters of its partition set; the phase completes with no URL
	// record attached), built before the clock starts, one per synced
	// commit, by Workers x InFlight goroutines (Pebble groups their
	// syncs).
	CompletePerSec float64 `json:"raw_completions_per_s"`
	// CompleteCPUMicros is the process's CPU time over the raw
	// completions, in µs a completion (LeaseCPUMicros's counterpart).
	CompleteCPUMicros float64 `json:"raw_completion_cpu_us"`
}

// ceilingURLs and ceilingCompletions bound the URLs (ingest) and the
// completions whose batches a ceiling builds before it starts the clock,
// so that memory stays bounded (about 80 bytes of batch a URL: 160 MB at
// the bound, held only while the ceilings are measured, after the state
// is closed). Up to them a ceiling takes as many as its phase: the raw
// ingest's store then grows, flushes and compacts as the frontier's did
// (a ceiling of 300,000 URLs into an empty store ran 3% and 33% faster
// than one of the 1,000,000 a run enqueued, in two alternated pairs), and
// 30,000 completions, 0.2 s at tmpfs speed, were too short to measure
// through a busy machine's noise. Past the bounds a ceiling is that of
// the first ones, an overestimate.
const (
	ceilingURLs        = 2_000_000
	ceilingCompletions = 100_000
)

// measureCeilings measures c's ceilings in a scratch store beside c.Dir,
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

	urls := min(c.URLs, ceilingURLs)
	var batches []*store.Batch
	var val []byte
	for lo := 0; lo < urls; lo += c.Batch {
		b := db.NewBatch()
		batches = append(batches, b)
		parts := map[partition.ID]int{}
		for u := lo; u < min(urls, lo+c.Batch); u++ {
			url, host := urlAt(u, c.Hosts)
			// A queue item as frontierdb lays it out: version, job,
			// depth, redirects, attempts, shape run, via (none),
			// host-relative URL.
			val = append(val[:0], 3, byte(job), 1, 0, 0, 0, 0)
			val = store.AppendURL(val, host, url)
			if err := errors.Join(b.Set(store.SeenKey(job, host, url), nil), b.Set(store.QueueKey(host, 0, uint64(u)), val)); err != nil {
				return out, err
			}
			parts[partition.Of(host)]++
		}
		for p, n := range parts {
			if err := b.Set(store.JobPartKey(p, job), jobCounters(lo+n)); err != nil {
				return out, err
			}
		}
	}
	secs, err := rawCommits(db, c.Workers, false, batches)
	if err != nil {
		return out, fmt.Errorf("raw ingest: %w", err)
	}
	out.IngestPerSec = float64(urls) / secs

	settle(db)
	n := min(c.Leases, ceilingCompletions)
	batches = batches[:0]
	for i := range n {
		_, host := urlAt(i, c.Hosts)
		b := db.NewBatch()
		batches = append(batches, b)
		if err := errors.Join(b.Delete(store.QueueKey(host, 0, uint64(i))), b.Set(store.HostKey(host), hostRecord(i)), b.Set(store.JobPartKey(partition.Of(host), job), jobCounters(urls-i))); err != nil {
			return out, err
		}
	}
	cpu0 := procstat.SelfCPU()
	if secs, err = rawCommits(db, c.Workers*c.InFlight, true, batches); err != nil {
		return out, fmt.Errorf("raw completions: %w", err)
	}
	out.CompletePerSec = float64(n) / secs
	out.CompleteCPUMicros = float64((procstat.SelfCPU() - cpu0).Microseconds()) / float64(max(n, 1))
	return out, db.Close()
}

// settle waits, at most a minute, until db flushes and compacts nothing,
// so that a ceiling does not pay for the background work of the one
// before it.
func settle(db *store.DB) {
	for deadline := time.Now().Add(time.Minute); db.Busy() && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
}

// hostRecord is a host state of the size frontierdb writes at a
// completion (19 bytes: version, next allowed time, counts, four levels).
func hostRecord(seed int) []byte {
	v := make([]byte, 19)
	v[0] = 4
	binary.BigEndian.PutUint64(v[1:], uint64(seed))
	return v
}

// jobCounters is a job's counters of one partition as frontierdb writes
// them: version, stored, held, dropped.
func jobCounters(stored int) []byte {
	return append(binary.AppendUvarint([]byte{1}, uint64(stored)), 0, 0)
}

// rawCommits commits batches from goroutines goroutines, each commit
// synced if synced, else one SyncWAL after the last, and returns the
// seconds until all were durable. On an error the batches not committed
// are closed.
func rawCommits(db *store.DB, goroutines int, synced bool, batches []*store.Batch) (float64, error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, goroutines)
	start := time.Now()
	for g := range goroutines {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(batches) {
					return
				}
				var err error
				if errs[g] != nil {
					batches[i].Close()
					continue
				}
				if synced {
					err = db.Commit(batches[i])
				} else {
					err = db.CommitNoSync(batches[i])
				}
				errs[g] = err
			}
		})
	}
	wg.Wait()
	err := errors.Join(errs...)
	if err == nil && !synced {
		err = db.SyncWAL()
	}
	return time.Since(start).Seconds(), err
}

// fsyncRate appends 4 KiB and fsyncs it in a loop on one goroutine for up
// to a second (at most 20,000 rounds) and returns the rounds per second.
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
