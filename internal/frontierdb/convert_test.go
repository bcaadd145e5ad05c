package frontierdb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/trawl-crawler/trawl/frontier"
	"github.com/trawl-crawler/trawl/internal/store"
	"github.com/trawl-crawler/trawl/internal/testkit/clustertest"
	"github.com/trawl-crawler/trawl/internal/testkit/storetest"
)

// makeOldStore fills db as a store of format version 3, with whole-store
// job counters ('c' keys): job 1 has 2 items in partition 3 and 1 in
// partition 9; job 2 has 1 in partition 9, paused and held as it reached
// its host's head. It closes db; reopened, the store is at version 3.
func makeOldStore(t *testing.T, db *store.DB) {
	t.Helper()
	s := New(db, Options{})
	f, err := frontier.New(frontier.Options{Store: s})
	if err != nil {
		t.Fatal(err)
	}
	h3, h9 := clustertest.HostIn(3, 0), clustertest.HostIn(9, 0)
	items := []frontier.Item{
		{URL: "http://" + h3 + "/a", Host: h3, Job: 1},
		{URL: "http://" + h3 + "/b", Host: h3, Job: 1},
		{URL: "http://" + h9 + "/a", Host: h9, Job: 2},
		{URL: "http://" + h9 + "/b", Host: h9, Job: 1},
	}
	if err := <-f.Add(nil, items...); err != nil {
		t.Fatal(err)
	}
	if err := f.SetJobState(2, frontier.JobPaused); err != nil {
		t.Fatal(err)
	}
	for {
		if l, _ := f.Lease(); l == nil {
			break
		}
	}
	if j := f.Job(2); j.Held != 1 {
		t.Fatalf("job 2: %+v, want 1 held", j)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Make it an old store: version 3, 'c' keys only.
	b := db.NewBatch()
	prefix := store.KindPrefix(store.KindJobPart)
	b.DeleteRange(prefix, store.PrefixEnd(prefix))
	b.Set(store.JobCountersKey(1), appendJobState(nil, frontier.JobState{Stored: 3, Dropped: 4}))
	b.Set(store.JobCountersKey(2), appendJobState(nil, frontier.JobState{Stored: 0, Held: 1, Dropped: 1}))
	b.Set(store.MetaKey("version"), binary.BigEndian.AppendUint32(nil, store.PreviousFormatVersion))
	if err := db.Commit(b); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// openDB opens the store in dir.
func openDB(t *testing.T, dir string) *store.DB {
	t.Helper()
	db := storetest.OpenDir(t, dir, store.Options{})
	return db
}

// convertedCounters are makeOldStore's counters once converted.
var convertedCounters = map[string]frontier.JobState{
	"job 1 partition 0": {Job: 1, Part: 0, Dropped: 4},
	"job 2 partition 0": {Job: 2, Part: 0, Dropped: 1},
	"job 1 partition 3": {Job: 1, Part: 3, Stored: 2},
	"job 1 partition 9": {Job: 1, Part: 9, Stored: 1},
	"job 2 partition 9": {Job: 2, Part: 9, Held: 1},
}

// loadCounters loads db's job counters with a new Store.
func loadCounters(t *testing.T, db *store.DB) (map[string]frontier.JobState, error) {
	t.Helper()
	s := New(db, Options{})
	defer func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	}()
	got := map[string]frontier.JobState{}
	err := s.Load(nil, func(j frontier.JobState) error {
		got[fmt.Sprintf("job %d partition %d", j.Job, j.Part)] = j
		return nil
	})
	return got, err
}

// counts returns how many 'c' and 'k' keys db holds.
func counts(t *testing.T, db *store.DB) (c, k int) {
	t.Helper()
	c, err := db.Count(store.KindPrefix(store.KindJobCounters))
	if err != nil {
		t.Fatal(err)
	}
	if k, err = db.Count(store.KindPrefix(store.KindJobPart)); err != nil {
		t.Fatal(err)
	}
	return c, k
}

// TestConvertCounters: a store of format version 3 with whole-store job
// counters ('c' keys) is upgraded at Load: per (job, partition) counters
// counted from its queue and held keys, the old Dropped put on partition
// 0, the 'c' keys gone, and the store at version 4 (reopened too); a
// second Load finds nothing to convert.
func TestConvertCounters(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir)
	makeOldStore(t, db)
	db = openDB(t, dir)
	defer db.Close()
	if db.Version() != store.PreviousFormatVersion {
		t.Fatalf("old store opens at version %d, want %d", db.Version(), store.PreviousFormatVersion)
	}
	for round := range 2 {
		got, err := loadCounters(t, db)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(convertedCounters) {
			t.Errorf("round %d: counters %v\nwant %v", round, got, convertedCounters)
		}
		if c, _ := counts(t, db); c != 0 {
			t.Errorf("round %d: %d 'c' keys left", round, c)
		}
		if db.Version() != store.FormatVersion {
			t.Errorf("round %d: version %d, want %d", round, db.Version(), store.FormatVersion)
		}
	}
	db.Close()
	db = openDB(t, dir)
	defer db.Close()
	if db.Version() != store.FormatVersion {
		t.Errorf("reopened: version %d, want %d", db.Version(), store.FormatVersion)
	}
}

// TestUpgradeWithoutJobs: a store of version 3 without 'c' keys (no job
// counted yet) is marked version 4 at Load.
func TestUpgradeWithoutJobs(t *testing.T) {
	dir := t.TempDir()
	db := openDB(t, dir)
	b := db.NewBatch()
	b.Set(store.MetaKey("version"), binary.BigEndian.AppendUint32(nil, store.PreviousFormatVersion))
	if err := db.Commit(b); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db = openDB(t, dir)
	defer db.Close()
	if !db.NeedsUpgrade() {
		t.Fatalf("version %d, want an old store", db.Version())
	}
	got, err := loadCounters(t, db)
	if err != nil || len(got) != 0 {
		t.Fatalf("Load = %v, %v; want no counters", got, err)
	}
	if db.Version() != store.FormatVersion {
		t.Errorf("version %d after Load, want %d", db.Version(), store.FormatVersion)
	}
	if v, err := db.Get(store.MetaKey("version")); err != nil || binary.BigEndian.Uint32(v) != store.FormatVersion {
		t.Errorf("version key %x, %v", v, err)
	}
}

// TestConvertCountersCrash: the conversion and the new version are one
// synced batch. With every write failing from the conversion's commit on,
// Load fails, and the store after a crash is the old one: version 3, its
// 'c' keys, no 'k' keys; loaded again, it converts.
func TestConvertCountersCrash(t *testing.T) {
	mem := vfs.NewCrashableMem()
	var failing atomic.Bool
	fs := errorfs.Wrap(mem, errorfs.InjectorFunc(func(op errorfs.Op) error {
		if failing.Load() && op.Kind.ReadOrWrite() == errorfs.OpIsWrite {
			return errorfs.ErrInjected
		}
		return nil
	}))
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	opts := store.Options{FS: fs, Logger: quiet, CacheSize: 1 << 20}
	mustOpen := func(opts store.Options) *store.DB {
		t.Helper()
		db := storetest.OpenDir(t, "/state", opts)
		return db
	}
	makeOldStore(t, mustOpen(opts))
	db := mustOpen(opts)
	if db.Version() != store.PreviousFormatVersion {
		t.Fatalf("old store opens at version %d", db.Version())
	}
	failing.Store(true)
	if _, err := loadCounters(t, db); !errors.Is(err, errorfs.ErrInjected) {
		t.Errorf("Load with failing writes = %v, want ErrInjected", err)
	}
	if db.Version() != store.PreviousFormatVersion {
		t.Errorf("version %d after a failed conversion, want %d", db.Version(), store.PreviousFormatVersion)
	}
	crashed := mem.CrashClone(vfs.CrashCloneCfg{})
	db.Close() // failed: its error is the injected one

	opts.FS = crashed
	db = mustOpen(opts)
	defer db.Close()
	if db.Version() != store.PreviousFormatVersion {
		t.Errorf("after the crash: version %d, want %d", db.Version(), store.PreviousFormatVersion)
	}
	if c, k := counts(t, db); c != 2 || k != 0 {
		t.Errorf("after the crash: %d 'c' keys, %d 'k' keys; want 2, 0", c, k)
	}
	got, err := loadCounters(t, db)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(convertedCounters) {
		t.Errorf("counters %v\nwant %v", got, convertedCounters)
	}
	if c, _ := counts(t, db); c != 0 || db.Version() != store.FormatVersion {
		t.Errorf("converted: %d 'c' keys, version %d", c, db.Version())
	}
}
