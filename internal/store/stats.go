package store

import (
	"sort"
	"sync/atomic"
	"time"
)

// CommitBuckets are the upper bounds, in seconds, of the buckets that
// Stats counts durable commits in: from a fast disk's fsync (well under a
// millisecond) to a stalled one. A commit waits for an fsync, and for up
// to Options.MinSyncInterval before it when others are syncing.
var CommitBuckets = [...]float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5}

// Stats describes the store's durable commits since Open: Commit and
// SyncWAL calls that succeeded, from the call to its return (the batch,
// or everything applied before, on stable storage), and groups applied by
// ApplyGroupSynced, from the call to their wait's return. CommitNoSync and
// ApplyGroup are not durable commits and are not counted; their writes
// become durable with the next SyncWAL, which is.
type Stats struct {
	// Commits is their number.
	Commits uint64
	// CommitSeconds is their total time.
	CommitSeconds float64
	// CommitBuckets[i] is the number that took at most CommitBuckets[i]
	// seconds (cumulative, as Prometheus histograms count).
	CommitBuckets [len(CommitBuckets)]uint64
}

// commitTimes counts commit durations without a lock: one atomic add per
// bucket hit and one to the sum.
type commitTimes struct {
	n   [len(CommitBuckets) + 1]atomic.Uint64 // per bucket, not cumulative; the last is past the top bound
	sum atomic.Int64                          // nanoseconds
}

func (c *commitTimes) observe(d time.Duration) {
	c.n[sort.SearchFloat64s(CommitBuckets[:], d.Seconds())].Add(1)
	c.sum.Add(int64(d))
}

// stats returns the counts; a commit that ends meanwhile may be in the
// buckets and not yet in the sum.
func (c *commitTimes) stats() Stats {
	var s Stats
	for i := range c.n {
		s.Commits += c.n[i].Load()
		if i < len(s.CommitBuckets) {
			s.CommitBuckets[i] = s.Commits
		}
	}
	s.CommitSeconds = time.Duration(c.sum.Load()).Seconds()
	return s
}

// Stats returns the store's commit counts. It takes no lock.
func (db *DB) Stats() Stats { return db.commits.stats() }

// Busy reports whether the store is flushing a memtable or compacting
// tables in the background (benchmarks wait for it to settle).
func (db *DB) Busy() bool {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.closed {
		return false
	}
	m := db.pdb.Metrics()
	return m.Compact.NumInProgress > 0 || m.Flush.NumInProgress > 0
}
