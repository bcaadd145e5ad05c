// Package store is trawl's one embedded Pebble store per data directory
// (DATA/state): it opens and checks the store, owns the key encoding (keys.go)
// and the format version, and commits batches durably.
//
// A DB is safe for concurrent use. Invariants: every key starts with its
// Kind (keys.go); a store holds MetaKey("version") = FormatVersion or
// PreviousFormatVersion; once a write fails, the DB refuses every later
// write and reports the failure from Err until it is closed and reopened, so
// no commit is acknowledged that is not durable.
//
// Format versions. Open creates a store at FormatVersion, opens one at
// FormatVersion, and opens one at PreviousFormatVersion (the version just
// before) as an old store: Version reports it and NeedsUpgrade is true.
// An old store is read-only until it is upgraded: every commit fails but
// that of a batch carrying Batch.Upgrade, which writes the new version with
// whatever converts the store's contents, atomically. frontierdb's Load is
// the upgrade (it converts the job counters from 3 to 4, see keys.go), and
// every writer in trawl opens its store through it (node.OpenState), so a
// store is upgraded before its first write. Code that opens a store without
// it reads an old store as the version it is and cannot write to it.
// Because the version and the conversion are one synced batch, a crash
// leaves either the old store or the upgraded one; and a binary of the
// older version refuses an upgraded store (its format version is not the
// one it reads), where it would have misread the converted contents.
package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// Options configures Open. The zero value is valid.
type Options struct {
	// FS is the file system the store lives on. If nil, vfs.Default (the
	// operating system's) is used. Tests pass vfs.NewMem() or an
	// error-injecting wrapper.
	FS vfs.FS
	// Logger receives Pebble's messages (info at Debug level). If nil,
	// slog.Default() is used.
	Logger *slog.Logger
	// CacheSize is the size in bytes of Pebble's block cache. If zero,
	// DefaultCacheSize is used.
	CacheSize int64
	// Now is the clock for the store's creation time. If nil, time.Now.
	Now func() time.Time
	// MinSyncInterval is the least time between two fsyncs of the log
	// (Pebble's WALMinSyncInterval): commits that arrive meanwhile share
	// the next one. Zero syncs as soon as asked.
	MinSyncInterval time.Duration
}

// memTableSize is the size of Pebble's memtable.
const memTableSize = 64 << 20

// DefaultCacheSize is the block cache size used when Options.CacheSize is 0.
const DefaultCacheSize = 64 << 20

// Validate reports every bad field of o by name.
func (o Options) Validate() error {
	var errs []error
	if o.CacheSize < 0 {
		errs = append(errs, fmt.Errorf("store: Options.CacheSize = %d, want >= 0", o.CacheSize))
	}
	if o.MinSyncInterval < 0 || o.MinSyncInterval > time.Second {
		errs = append(errs, fmt.Errorf("store: Options.MinSyncInterval = %v, want 0 to 1s", o.MinSyncInterval))
	}
	return errors.Join(errs...)
}

func (o Options) withDefaults() Options {
	if o.FS == nil {
		o.FS = vfs.Default
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.CacheSize == 0 {
		o.CacheSize = DefaultCacheSize
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Meta item names.
const (
	metaVersion = "version"
	metaCreated = "created"
)

// ErrNotFound is returned by Get for a missing key.
var ErrNotFound = errors.New("store: not found")

// ErrClosed is returned by every operation on a closed DB.
var ErrClosed = errors.New("store: closed")

// DB is an open store.
type DB struct {
	dir   string
	fs    vfs.FS
	log   *slog.Logger
	cache interface{ Unref() }

	// mu guards closed: operations hold it shared, Close exclusively, so
	// that Pebble (which panics on use after close) is never used closed.
	mu     sync.RWMutex
	closed bool
	pdb    *pebble.DB

	failMu sync.Mutex
	failed error

	version atomic.Uint32 // the store's format version (Version)

	commits commitTimes // durable commits (Stats)

	// tap, if set, sees every batch applied (tap.go); tapMu orders the
	// applies it sees.
	tap   atomic.Pointer[Tap]
	tapMu sync.Mutex
}

// Open opens the store in dir, creating dir and an empty store if dir is
// missing or empty. An existing store must hold FormatVersion or
// PreviousFormatVersion (then the DB is read-only until upgraded: see the
// package comment and NeedsUpgrade). Open refuses, with an error naming the
// file or the versions: a file in dir that is not part of a Pebble store, a
// store without a MANIFEST, a store Pebble cannot read (corrupt CURRENT,
// MANIFEST or OPTIONS), a store of another format version, and a store
// locked by another open DB.
func Open(dir string, opts Options) (*DB, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	fs := opts.FS
	if err := fs.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("store: open %s: %w", dir, err)
	}
	names, err := fs.List(dir)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", dir, err)
	}
	sort.Strings(names)
	existing := false
	for _, name := range names {
		switch {
		case name == "CURRENT":
			return nil, fmt.Errorf("store: open %s: %s: a store of Pebble format 1 or a foreign file; trawl's stores never hold one", dir, fs.PathJoin(dir, name))
		case !isPebbleFile(name):
			return nil, fmt.Errorf("store: open %s: foreign file %s: not part of a trawl store (remove it, or use another directory)", dir, fs.PathJoin(dir, name))
		case strings.HasPrefix(name, "marker.manifest.") || strings.HasPrefix(name, "MANIFEST-"):
			existing = true
		}
	}
	if len(names) > 0 && !existing {
		return nil, fmt.Errorf("store: open %s: no MANIFEST among %d files: not a complete store (an interrupted creation; remove the directory)", dir, len(names))
	}

	if !existing {
		// A new directory's entry in its parent must be durable too, or a
		// crash could lose the whole store along with acknowledged commits.
		if err := syncParents(fs, dir); err != nil {
			return nil, fmt.Errorf("store: open %s: %w", dir, err)
		}
	}
	db := &DB{dir: dir, fs: fs, log: opts.Logger}
	cache := pebble.NewCache(opts.CacheSize)
	db.cache = cache
	popts := &pebble.Options{
		FS:                 fs,
		Cache:              cache,
		Logger:             pebbleLogger{db},
		ErrorIfNotExists:   existing,
		FormatMajorVersion: pebble.FormatNewest,
		// A crawl commits large groups of small writes (a page's links,
		// their seen keys and host states); with Pebble's 4 MiB default a
		// group over half a memtable becomes a flushable batch and forces
		// a tiny L0 table per commit, which then slows every read.
		MemTableSize: memTableSize,
		// Write-heavy: let L0 absorb more before compacting, and keep a
		// larger base level, so that fewer, larger compactions run.
		L0CompactionThreshold: 8,
		L0StopWritesThreshold: 32,
		LBaseMaxBytes:         256 << 20,
		// Two full memtables waiting for a flush would stop writes; four
		// ride out a slow flush.
		MemTableStopWritesThreshold: 4,
		EventListener: &pebble.EventListener{
			BackgroundError: func(err error) { db.fail(err) },
		},
	}
	if d := opts.MinSyncInterval; d > 0 {
		popts.WALMinSyncInterval = func() time.Duration { return d }
	}
	// Flushes of a 64 MiB memtable as 16 MiB tables rather than 2 MiB
	// ones: fewer L0 files to count against the compaction threshold.
	// (Per-table Bloom filters were tried and dropped: a seen-gate false
	// positive then read a whole table's filter block, ~600 KB, so enqueue
	// at 10M URLs got slower.)
	popts.TargetFileSizes[0] = 16 << 20
	pdb, err := pebble.Open(dir, popts)
	if err != nil {
		cache.Unref()
		return nil, fmt.Errorf("store: open %s: %w", dir, nameBadFile(fs, dir, names, err))
	}
	db.pdb = pdb
	if err := db.checkVersion(existing, opts.Now()); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// nameBadFile adds the file's name to err, Pebble's reason for refusing to
// open dir, where Pebble's message lacks it: an OPTIONS file that does not
// parse is reported without its name.
func nameBadFile(fs vfs.FS, dir string, names []string, err error) error {
	for _, name := range names {
		if !strings.HasPrefix(name, "OPTIONS-") || strings.Contains(err.Error(), name) {
			continue
		}
		path := fs.PathJoin(dir, name)
		f, oerr := fs.Open(path)
		if oerr != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		data, rerr := io.ReadAll(f)
		f.Close()
		if rerr != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if perr := (&pebble.Options{}).Parse(string(data), nil); perr != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	return err
}

// syncParents fsyncs every ancestor directory of dir, so that its entry
// (made by MkdirAll) survives a crash.
func syncParents(fs vfs.FS, dir string) error {
	for d := dir; ; {
		parent := fs.PathDir(d)
		if parent == d || parent == "" {
			return nil
		}
		f, err := fs.OpenDir(parent)
		if err != nil {
			return err
		}
		err = f.Sync()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("sync directory %s: %w", parent, err)
		}
		d = parent
	}
}

// isPebbleFile reports whether name is one Pebble writes in its directory.
func isPebbleFile(name string) bool {
	digits := func(s string) bool {
		if s == "" {
			return false
		}
		for i := 0; i < len(s); i++ {
			if (s[i] < '0' || s[i] > '9') && s[i] != '-' {
				return false
			}
		}
		return true
	}
	switch {
	case name == "LOCK":
		return true
	case strings.HasPrefix(name, "MANIFEST-"):
		return digits(name[len("MANIFEST-"):])
	case strings.HasPrefix(name, "OPTIONS-"):
		return digits(name[len("OPTIONS-"):])
	case strings.HasPrefix(name, "marker."):
		return true
	case strings.HasSuffix(name, ".dbtmp"):
		return strings.HasPrefix(name, "temporary.")
	case strings.HasSuffix(name, ".log"):
		return digits(strings.TrimSuffix(name, ".log"))
	case strings.HasSuffix(name, ".sst"):
		return digits(strings.TrimSuffix(name, ".sst"))
	case strings.HasSuffix(name, ".blob"):
		return digits(strings.TrimSuffix(name, ".blob"))
	}
	return false
}

func (db *DB) checkVersion(existing bool, now time.Time) error {
	v, err := db.Get(MetaKey(metaVersion))
	switch {
	case errors.Is(err, ErrNotFound) && !existing:
		b := db.NewBatch()
		b.Upgrade() // a new store: from no version to FormatVersion
		b.Set(MetaKey(metaCreated), binary.BigEndian.AppendUint64(nil, uint64(now.UnixNano())))
		if err := db.Commit(b); err != nil {
			return err
		}
		// Flush the version into an sstable, so that it does not depend on
		// the WAL, which Pebble may cut back at a torn or garbled tail.
		if err := db.pdb.Flush(); err != nil {
			return fmt.Errorf("store: %s: flush: %w", db.dir, err)
		}
		return nil
	case errors.Is(err, ErrNotFound):
		return fmt.Errorf("store: %s: no format version key: a Pebble store, but not trawl's", db.dir)
	case err != nil:
		return err
	case len(v) != 4:
		return fmt.Errorf("store: %s: format version key holds %d bytes, want 4", db.dir, len(v))
	}
	got := binary.BigEndian.Uint32(v)
	switch got {
	case FormatVersion:
	case PreviousFormatVersion:
		db.log.Info("store: an older format version: read-only until upgraded", "dir", db.dir, "version", got, "upgrade_to", FormatVersion)
	default:
		return fmt.Errorf("store: %s: format version %d, this trawl reads %d (and upgrades %d)", db.dir, got, FormatVersion, PreviousFormatVersion)
	}
	db.version.Store(got)
	return nil
}

// Version is the store's format version: FormatVersion, or
// PreviousFormatVersion for an old store not yet upgraded.
func (db *DB) Version() uint32 { return db.version.Load() }

// NeedsUpgrade reports whether the store is at PreviousFormatVersion: it
// then refuses every commit but one of a batch carrying Batch.Upgrade.
func (db *DB) NeedsUpgrade() bool { return db.Version() != FormatVersion }

// errOldVersion is returned by a commit to a store that needs an upgrade.
func (db *DB) errOldVersion() error {
	return fmt.Errorf("store: %s: format version %d is read-only until upgraded to %d (frontierdb's Load upgrades it)", db.dir, db.Version(), FormatVersion)
}

// Dir is the directory the store lives in.
func (db *DB) Dir() string { return db.dir }

// Err returns the write failure that stopped the store, or nil. Once it is
// non-nil every commit fails with it; close and reopen the store (after
// freeing space, say) to go on from the last acknowledged commit.
func (db *DB) Err() error {
	db.failMu.Lock()
	defer db.failMu.Unlock()
	return db.failed
}

// fail records the first write failure.
func (db *DB) fail(cause error) {
	db.failMu.Lock()
	defer db.failMu.Unlock()
	if db.failed == nil {
		db.failed = fmt.Errorf("store: %s: write failed, store stopped: %w", db.dir, cause)
		db.log.Error("store: write failed, store stopped", "dir", db.dir, "err", cause)
	}
}

// pebbleLogger routes Pebble's messages to slog. Pebble calls Fatalf on an
// error it cannot recover from, such as a failed WAL sync during a commit or
// a failed MANIFEST write (db.go commit path, version_set.go logAndApply),
// and relies on it not returning. Here it returns, after marking the DB
// failed: DB.Commit checks the mark after every Pebble commit, so such a
// commit is reported as failed (Pebble itself returns nil after Fatalf), and
// no later write is passed to Pebble.
type pebbleLogger struct{ db *DB }

func (l pebbleLogger) Infof(format string, args ...any) {
	l.db.log.Debug("pebble: " + fmt.Sprintf(format, args...))
}

func (l pebbleLogger) Errorf(format string, args ...any) {
	l.db.log.Error("pebble: " + fmt.Sprintf(format, args...))
}

func (l pebbleLogger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	var cause error
	for _, a := range args {
		if err, ok := a.(error); ok {
			cause = err
			break
		}
	}
	if cause == nil {
		cause = errors.New(msg)
	} else {
		cause = fmt.Errorf("%s: %w", strings.TrimSuffix(format[:max(0, strings.Index(format, "%"))], ": "), cause)
	}
	l.db.fail(cause)
}

// Batch is a set of writes committed atomically by DB.Commit or
// DB.CommitNoSync. It is not safe for concurrent use. A Batch is consumed
// by a commit or by Close; functions registered with OnDone then run once.
type Batch struct {
	db      *DB
	b       *pebble.Batch
	onDone  []func(err error)
	done    bool
	upgrade bool // holds the upgrade to FormatVersion (Upgrade)
}

// ErrDiscarded is passed to OnDone functions of a batch closed uncommitted.
var ErrDiscarded = errors.New("store: batch discarded")

// NewBatch returns an empty batch.
func (db *DB) NewBatch() *Batch {
	return &Batch{db: db, b: db.pdb.NewBatch()}
}

// errConsumed is returned by writes to a committed or closed batch.
var errConsumed = errors.New("store: write to a committed or closed batch")

// Set adds key = value to the batch. Both are copied. It fails only on a
// consumed batch.
func (b *Batch) Set(key, value []byte) error {
	if b.done {
		return errConsumed
	}
	return b.b.Set(key, value, nil)
}

// Delete adds the deletion of key to the batch. It fails only on a consumed
// batch.
func (b *Batch) Delete(key []byte) error {
	if b.done {
		return errConsumed
	}
	return b.b.Delete(key, nil)
}

// DeleteRange adds the deletion of every key in [start, end) to the batch.
// It fails only on a consumed batch.
func (b *Batch) DeleteRange(start, end []byte) error {
	if b.done {
		return errConsumed
	}
	return b.b.DeleteRange(start, end, nil)
}

// Upgrade adds the upgrade of the store to FormatVersion to the batch: it
// sets MetaKey("version"), and a store that needs an upgrade (NeedsUpgrade)
// accepts the batch; once it commits, Version is FormatVersion and the
// store takes every write. The batch must also hold whatever converts the
// store's contents to FormatVersion, so that both are durable together;
// commit it with Commit, which returns once it is durable. It fails only on
// a consumed batch.
func (b *Batch) Upgrade() error {
	if b.done {
		return errConsumed
	}
	if err := b.b.Set(MetaKey(metaVersion), binary.BigEndian.AppendUint32(nil, FormatVersion), nil); err != nil {
		return err
	}
	b.upgrade = true
	return nil
}

// Count is the number of writes in the batch.
func (b *Batch) Count() uint32 { return b.b.Count() }

// OnDone registers f to run once the batch is committed (err == nil), has
// failed to commit (err is the failure) or is closed uncommitted
// (ErrDiscarded). f runs on the goroutine that commits or closes.
func (b *Batch) OnDone(f func(err error)) { b.onDone = append(b.onDone, f) }

// Close discards an uncommitted batch. Closing a committed batch does
// nothing.
func (b *Batch) Close() {
	b.finish(ErrDiscarded)
}

func (b *Batch) finish(err error) {
	if b.done {
		return
	}
	b.done = true
	b.b.Close()
	for _, f := range b.onDone {
		f(err)
	}
	b.onDone = nil
}

// Commit applies b atomically and returns once it is durable (its WAL
// record is fsynced). It consumes b. An error means b may not be durable;
// the DB is then failed (see Err).
//
// Group commit: concurrent Commits share fsyncs. This is Pebble's own
// mechanism, not ours: Batch.Commit(pebble.Sync) enqueues the batch's WAL
// record with a sync request (record.LogWriter.SyncRecordGeneralized pushes
// a pendingSync), and the LogWriter's single flushLoop takes every pending
// sync request queued so far, writes their records and issues one fsync for
// all of them before waking each waiter (flushLoop → flushPending → syncQueue
// .pop, pebble v2.1.7 record/log_writer.go). BenchmarkCommit shows the
// effect: 32 concurrent committers get many more commits per second than 1.
func (db *DB) Commit(b *Batch) error {
	start := time.Now()
	err := db.commit(b, pebble.Sync)
	if err == nil {
		db.commits.observe(time.Since(start))
	}
	return err
}

// ApplyGroup applies bs, in order, as one atomic batch (one WAL record)
// without waiting for durability: it returns once the group is applied and
// visible to reads. A group of sets and point deletions is handed to
// Pebble sorted by key, which makes its memtable inserts cheaper and
// changes nothing a reader sees (sorted.go). It consumes every batch; each one's OnDone functions
// see the group's outcome. The group becomes durable with the next SyncWAL
// (or synced commit) by anyone, since the WAL is written in order, and is
// lost in a crash before then. A single writer that must keep its changes
// in order (the frontier's committer) applies group after group with it
// while another goroutine calls SyncWAL and acknowledges what was applied
// before: the fsync of one group then overlaps the building of the next.
func (db *DB) ApplyGroup(bs []*Batch) error {
	if len(bs) == 0 {
		return nil
	}
	upgrade := false
	for _, b := range bs {
		if b.done {
			return fmt.Errorf("store: %s: commit of a consumed batch", db.dir)
		}
		upgrade = upgrade || b.upgrade
	}
	var err error
	count, size := 0, 0
	for _, b := range bs {
		count += int(b.b.Count())
		size += b.b.Len()
	}
	if !upgrade && db.NeedsUpgrade() {
		err = db.errOldVersion()
	} else if sorted, ok := db.mergeSorted(bs, size, count); ok {
		// One batch of the group's writes in key order (sorted.go).
		db.mu.RLock()
		err = db.commitLocked(sorted, pebble.NoSync)
		db.mu.RUnlock()
		sorted.Close()
	} else if len(bs) == 1 {
		db.mu.RLock()
		err = db.commitLocked(bs[0].b, pebble.NoSync)
		db.mu.RUnlock()
	} else {
		// Merge into one batch sized for all of them: growing the first
		// batch by appending the others copied it again at every doubling.
		merged := db.pdb.NewBatchWithSize(size)
		for _, b := range bs {
			if err = merged.Apply(b.b, nil); err != nil {
				err = fmt.Errorf("store: %s: merge batches: %w", db.dir, err)
				break
			}
		}
		if err == nil {
			db.mu.RLock()
			err = db.commitLocked(merged, pebble.NoSync)
			db.mu.RUnlock()
		}
		merged.Close()
	}
	if err == nil && upgrade {
		db.version.Store(FormatVersion)
	}
	for _, b := range bs {
		b.finish(err)
	}
	return err
}

// ApplyGroupSynced is ApplyGroup with the group's WAL record synced: it
// returns once the group is applied and visible to reads, as ApplyGroup
// does, with the fsync already asked for (shared with every other commit's
// and sync's); wait returns once the group is durable, with the outcome
// of the fsync; it must be called once. The fsync so starts while the caller goes
// on, rather than when a later SyncWAL reaches the log: the frontier's
// committer applies group after group and a second goroutine waits for
// each in turn (the next group's memtable inserts overlap this one's
// fsync), and no log-data record is written to ask for it. With a tap set
// (SetTap), wait is a SyncWAL. After an error, wait returns it.
func (db *DB) ApplyGroupSynced(bs []*Batch) (wait func() error, err error) {
	failed := func(err error) (func() error, error) {
		return func() error { return err }, err
	}
	if len(bs) == 0 {
		return func() error { return nil }, nil
	}
	if db.tap.Load() != nil {
		// The tap sees each batch in its order (commitTapped).
		if err := db.ApplyGroup(bs); err != nil {
			return failed(err)
		}
		return db.SyncWAL, nil
	}
	start := time.Now()
	upgrade := false
	count, size := 0, 0
	for _, b := range bs {
		if b.done {
			return failed(fmt.Errorf("store: %s: commit of a consumed batch", db.dir))
		}
		upgrade = upgrade || b.upgrade
		count += int(b.b.Count())
		size += b.b.Len()
	}
	// One batch of the group's writes, sorted if it may be (sorted.go):
	// it must outlive its fsync, so not one of bs, which are finished here.
	group, ok := db.mergeSorted(bs, size, count)
	if !ok {
		group = db.pdb.NewBatchWithSize(size)
		for _, b := range bs {
			if err = group.Apply(b.b, nil); err != nil {
				err = fmt.Errorf("store: %s: merge batches: %w", db.dir, err)
				break
			}
		}
	}
	if err == nil && !upgrade && db.NeedsUpgrade() {
		err = db.errOldVersion()
	}
	if err == nil {
		db.mu.RLock()
		switch {
		case db.closed:
			err = ErrClosed
		case db.Err() != nil:
			err = db.Err()
		default:
			if err = db.pdb.ApplyNoSyncWait(group, pebble.Sync); err != nil {
				db.fail(err)
				err = fmt.Errorf("store: %s: commit: %w", db.dir, err)
			}
		}
		db.mu.RUnlock()
	}
	if err == nil && upgrade {
		db.version.Store(FormatVersion)
	}
	for _, b := range bs {
		b.finish(err)
	}
	if err != nil {
		group.Close()
		return failed(err)
	}
	return func() error {
		err := group.SyncWait()
		if err != nil {
			db.fail(err)
			err = fmt.Errorf("store: %s: sync: %w", db.dir, err)
		} else if err = db.Err(); err == nil {
			// Pebble reports WAL failures through Logger.Fatalf and
			// then returns nil.
			db.commits.observe(time.Since(start))
		}
		group.Close()
		return err
	}, nil
}

// SyncWAL returns once everything applied before the call is durable (one
// fsync of the WAL, shared with concurrent commits).
func (db *DB) SyncWAL() error {
	start := time.Now()
	// A log-data record is written to the WAL only (never to a memtable),
	// and a synced one makes every record before it durable.
	b := db.pdb.NewBatch()
	defer b.Close()
	if err := b.LogData(nil, nil); err != nil {
		return fmt.Errorf("store: %s: sync: %w", db.dir, err)
	}
	db.mu.RLock()
	err := db.commitLocked(b, pebble.Sync)
	db.mu.RUnlock()
	if err == nil {
		db.commits.observe(time.Since(start))
	}
	return err
}

// CommitNoSync applies b atomically without waiting for it to be durable:
// it becomes durable with the next Commit by anyone (the WAL is ordered) or
// the next memtable flush, and is lost in a crash before then. It consumes b.
func (db *DB) CommitNoSync(b *Batch) error { return db.commit(b, pebble.NoSync) }

func (db *DB) commit(b *Batch, o *pebble.WriteOptions) error {
	if b.done {
		return fmt.Errorf("store: %s: commit of a consumed batch", db.dir)
	}
	if !b.upgrade && db.NeedsUpgrade() {
		err := db.errOldVersion()
		b.finish(err)
		return err
	}
	db.mu.RLock()
	defer db.mu.RUnlock()
	err := db.commitLocked(b.b, o)
	if err == nil && b.upgrade {
		db.version.Store(FormatVersion)
	}
	b.finish(err)
	return err
}

func (db *DB) commitLocked(b *pebble.Batch, o *pebble.WriteOptions) error {
	if db.closed {
		return ErrClosed
	}
	if err := db.Err(); err != nil {
		return err
	}
	if t := db.tap.Load(); t != nil && b.Count() > 0 {
		return db.commitTapped(*t, b, o)
	}
	if err := db.pdb.Apply(b, o); err != nil {
		db.fail(err)
		return fmt.Errorf("store: %s: commit: %w", db.dir, err)
	}
	// Pebble reports WAL failures through Logger.Fatalf and then returns nil.
	return db.Err()
}

// Get returns a copy of the value of key, or ErrNotFound.
func (db *DB) Get(key []byte) ([]byte, error) {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.closed {
		return nil, ErrClosed
	}
	v, closer, err := db.pdb.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store: %s: get %q: %w", db.dir, key, err)
	}
	out := append([]byte(nil), v...)
	closer.Close()
	return out, nil
}

// Has reports whether key is present.
func (db *DB) Has(key []byte) (bool, error) {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.closed {
		return false, ErrClosed
	}
	_, closer, err := db.pdb.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("store: %s: get %q: %w", db.dir, key, err)
	}
	closer.Close()
	return true, nil
}

// NewIter returns an iterator over the keys with prefix, in key order,
// positioned before the first (call First). The caller must Close it before
// closing the DB. Iterators see a consistent snapshot taken at creation.
func (db *DB) NewIter(prefix []byte) (*pebble.Iterator, error) {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.closed {
		return nil, ErrClosed
	}
	it, err := db.pdb.NewIter(&pebble.IterOptions{
		LowerBound: append([]byte(nil), prefix...),
		UpperBound: PrefixEnd(prefix),
	})
	if err != nil {
		return nil, fmt.Errorf("store: %s: iterate %q: %w", db.dir, prefix, err)
	}
	return it, nil
}

// Count returns how many keys start with prefix, by scanning them (tests,
// diagnostics and status: it reads every such key).
func (db *DB) Count(prefix []byte) (int, error) {
	it, err := db.NewIter(prefix)
	if err != nil {
		return 0, err
	}
	defer it.Close()
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		n++
	}
	return n, it.Error()
}

// DiskUsage returns the bytes on disk the keys of each kind take, after
// writing the memtable out (so that every committed key is in a table):
// Pebble's estimate from its tables' sizes, compressed, as the files
// take them; a table that spans two kinds is counted in part to each.
// Benchmarks use it to report bytes per queued and per seen URL.
func (db *DB) DiskUsage(kinds ...Kind) (map[Kind]uint64, error) {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.closed {
		return nil, ErrClosed
	}
	if err := db.pdb.Flush(); err != nil {
		return nil, fmt.Errorf("store: %s: flush: %w", db.dir, err)
	}
	use := make(map[Kind]uint64, len(kinds))
	for _, k := range kinds {
		n, err := db.pdb.EstimateDiskUsage(KindPrefix(k), KindPrefix(k+1))
		if err != nil {
			return nil, fmt.Errorf("store: %s: disk usage of %c keys: %w", db.dir, k, err)
		}
		use[k] = n
	}
	return use, nil
}

// NewRangeIter returns an iterator over the keys in [lower, upper). The
// caller must close it.
func (db *DB) NewRangeIter(lower, upper []byte) (*pebble.Iterator, error) {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.closed {
		return nil, ErrClosed
	}
	it, err := db.pdb.NewIter(&pebble.IterOptions{
		LowerBound: append([]byte(nil), lower...),
		UpperBound: append([]byte(nil), upper...),
	})
	if err != nil {
		return nil, fmt.Errorf("store: %s: iterate [%q, %q): %w", db.dir, lower, upper, err)
	}
	return it, nil
}

// Close closes the store, waiting for commits in progress. It returns the
// error Pebble reports (a failed DB may report its write failure again).
// Closing twice returns ErrClosed.
func (db *DB) Close() error {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return ErrClosed
	}
	db.closed = true
	err := db.pdb.Close()
	db.cache.Unref()
	if err != nil {
		return fmt.Errorf("store: %s: close: %w", db.dir, err)
	}
	return nil
}
