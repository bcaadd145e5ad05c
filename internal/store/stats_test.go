package store

import (
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestCommitBuckets: a duration counts in the first bucket whose bound it
// does not pass (a bound is inclusive, as Prometheus's le); past the top
// bound it counts in Commits and the sum only.
func TestCommitBuckets(t *testing.T) {
	for _, tt := range []struct {
		d      time.Duration
		bucket int // first cumulative bucket that counts it; len(CommitBuckets): none
	}{
		{0, 0},
		{500 * time.Microsecond, 0},
		{501 * time.Microsecond, 1},
		{3 * time.Millisecond, 3},
		{time.Second, 10},
		{5 * time.Second, len(CommitBuckets) - 1},
		{6 * time.Second, len(CommitBuckets)},
	} {
		var c commitTimes
		c.observe(tt.d)
		c.observe(tt.d)
		s := c.stats()
		if s.Commits != 2 || s.CommitSeconds != 2*tt.d.Seconds() {
			t.Errorf("%v twice: Commits %d, CommitSeconds %v; want 2, %v", tt.d, s.Commits, s.CommitSeconds, 2*tt.d.Seconds())
		}
		for i, n := range s.CommitBuckets {
			want := uint64(0)
			if i >= tt.bucket {
				want = 2
			}
			if n != want {
				t.Errorf("%v twice: bucket le=%v counts %d, want %d", tt.d, CommitBuckets[i], n, want)
			}
		}
	}
}

// TestStatsCountDurableCommits: Commit and SyncWAL are counted, and
// nothing else is; each in a bucket.
func TestStatsCountDurableCommits(t *testing.T) {
	db := mustOpen(t, "/data/state", memOpts(vfs.NewMem()))
	defer db.Close()
	before := db.Stats() // Open commits the format version
	put := func(k string) *Batch {
		b := db.NewBatch()
		b.Set(MetaKey(k), []byte(k))
		return b
	}
	steps := []struct {
		what string
		do   func() error
		more uint64
	}{
		{"Commit", func() error { return db.Commit(put("a")) }, 1},
		{"CommitNoSync", func() error { return db.CommitNoSync(put("b")) }, 0},
		{"ApplyGroup", func() error { return db.ApplyGroup([]*Batch{put("c"), put("d")}) }, 0},
		{"SyncWAL", db.SyncWAL, 1},
	}
	want := before.Commits
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.what, err)
		}
		want += s.more
		got := db.Stats()
		if got.Commits != want {
			t.Errorf("after %s: Stats().Commits = %d, want %d", s.what, got.Commits, want)
		}
		if top := got.CommitBuckets[len(CommitBuckets)-1]; top != got.Commits {
			t.Errorf("after %s: %d commits, %d of them in the buckets (none takes 5 s in memory)", s.what, got.Commits, top)
		}
	}
}
