package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func memOpts(fs vfs.FS) Options { return Options{FS: fs, Logger: quiet, CacheSize: 1 << 20} }

func mustOpen(t testing.TB, dir string, opts Options) *DB {
	t.Helper()
	db, err := Open(dir, opts)
	if err != nil {
		t.Fatalf("Open(%q) = %v", dir, err)
	}
	return db
}

func TestOpenReopen(t *testing.T) {
	fs := vfs.NewMem()
	db := mustOpen(t, "/data/state", memOpts(fs))
	b := db.NewBatch()
	b.Set(HostKey("a.test"), []byte("v1"))
	b.Set(URLKey("a.test", "http://a.test/"), []byte{1})
	if err := db.Commit(b); err != nil {
		t.Fatalf("Commit = %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("Close = %v", err)
	}
	if err := db.Close(); !errors.Is(err, ErrClosed) {
		t.Errorf("second Close = %v, want ErrClosed", err)
	}
	if _, err := db.Get(HostKey("a.test")); !errors.Is(err, ErrClosed) {
		t.Errorf("Get after Close = %v, want ErrClosed", err)
	}

	db = mustOpen(t, "/data/state", memOpts(fs))
	defer db.Close()
	if v, err := db.Get(HostKey("a.test")); string(v) != "v1" || err != nil {
		t.Errorf("Get(host a.test) = %q, %v; want v1", v, err)
	}
	if _, err := db.Get(HostKey("b.test")); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get(host b.test) = %v, want ErrNotFound", err)
	}
	if ok, err := db.Has(URLKey("a.test", "http://a.test/")); !ok || err != nil {
		t.Errorf("Has(url) = %v, %v; want true", ok, err)
	}
	if v, err := db.Get(MetaKey(metaVersion)); err != nil || len(v) != 4 || v[3] != byte(FormatVersion) {
		t.Errorf("Get(meta version) = %x, %v", v, err)
	}
}

func TestIterPrefix(t *testing.T) {
	db := mustOpen(t, "/s", memOpts(vfs.NewMem()))
	defer db.Close()
	b := db.NewBatch()
	for i := 0; i < 5; i++ {
		b.Set(QueueKey("a.test", 0, uint64(i)), []byte{byte(i)})
	}
	b.Set(QueueKey("b.test", 0, 0), nil)
	b.Set(HostKey("a.test"), nil)
	if err := db.Commit(b); err != nil {
		t.Fatal(err)
	}
	it, err := db.NewIter(QueuePrefix("a.test"))
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var seqs []uint64
	for it.First(); it.Valid(); it.Next() {
		_, _, seq, err := DecodeQueueKey(it.Key())
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, seq)
	}
	if fmt.Sprint(seqs) != "[0 1 2 3 4]" {
		t.Errorf("queue of a.test = %v, want [0 1 2 3 4]", seqs)
	}
}

func TestBatchOnDoneAndDiscard(t *testing.T) {
	db := mustOpen(t, "/s", memOpts(vfs.NewMem()))
	defer db.Close()
	var got []error
	b := db.NewBatch()
	b.Set(MetaKey("x"), []byte("1"))
	b.OnDone(func(err error) { got = append(got, err) })
	b.Close()
	b.Close()
	if len(got) != 1 || !errors.Is(got[0], ErrDiscarded) {
		t.Errorf("OnDone after Close got %v, want [ErrDiscarded]", got)
	}
	if err := b.Set(MetaKey("y"), nil); err == nil {
		t.Errorf("Set on a closed batch = nil, want an error")
	}
	if err := db.Commit(b); err == nil {
		t.Errorf("Commit of a closed batch = nil, want an error")
	}
	if _, err := db.Get(MetaKey("x")); !errors.Is(err, ErrNotFound) {
		t.Errorf("discarded write visible: Get = %v", err)
	}
	got = nil
	b = db.NewBatch()
	b.Set(MetaKey("x"), []byte("1"))
	b.OnDone(func(err error) { got = append(got, err) })
	if err := db.CommitNoSync(b); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != nil {
		t.Errorf("OnDone after commit got %v, want [nil]", got)
	}
}

func TestOptionsValidate(t *testing.T) {
	err := Options{CacheSize: -1}.Validate()
	if err == nil || !strings.Contains(err.Error(), "CacheSize") {
		t.Errorf("Validate(CacheSize -1) = %v, want an error naming CacheSize", err)
	}
	if _, err := Open("/s", Options{FS: vfs.NewMem(), CacheSize: -1}); err == nil {
		t.Errorf("Open with CacheSize -1 = nil error")
	}
	for _, d := range []time.Duration{-time.Millisecond, 2 * time.Second} {
		if err := (Options{MinSyncInterval: d}).Validate(); err == nil || !strings.Contains(err.Error(), "MinSyncInterval") {
			t.Errorf("Validate(MinSyncInterval %v) = %v, want an error naming MinSyncInterval", d, err)
		}
	}
	if err := (Options{MinSyncInterval: 5 * time.Millisecond}).Validate(); err != nil {
		t.Errorf("Validate(MinSyncInterval 5ms) = %v", err)
	}
}

// writeFile replaces name on fs with data.
func writeFile(t *testing.T, fs vfs.FS, name string, data []byte) {
	t.Helper()
	f, err := fs.Create(name, vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// newStoreFiles creates a store in dir and returns its file names.
func newStoreFiles(t *testing.T, fs vfs.FS, dir string) []string {
	t.Helper()
	db := mustOpen(t, dir, memOpts(fs))
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	names, err := fs.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	return names
}

func fileWithPrefix(names []string, prefix string) string {
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			return n
		}
	}
	return ""
}

// TestOpenRefuses: every directory that is not a healthy trawl store of
// this version gives an error naming the file, directory or versions.
func TestOpenRefuses(t *testing.T) {
	garbage := []byte("this is not what pebble wrote\n\x00\xff\xfe garbage garbage garbage")
	cases := []struct {
		name   string
		setup  func(t *testing.T, fs vfs.FS) // prepares /s
		wantIn []string                      // substrings of the error
	}{
		{"foreign file in empty dir", func(t *testing.T, fs vfs.FS) {
			fs.MkdirAll("/s", 0o755)
			writeFile(t, fs, "/s/notes.txt", []byte("hello"))
		}, []string{"/s/notes.txt", "foreign"}},
		{"foreign file next to a store", func(t *testing.T, fs vfs.FS) {
			newStoreFiles(t, fs, "/s")
			writeFile(t, fs, "/s/000001.warc.gz", garbage)
		}, []string{"/s/000001.warc.gz"}},
		{"only pebble debris", func(t *testing.T, fs vfs.FS) {
			fs.MkdirAll("/s", 0o755)
			writeFile(t, fs, "/s/000002.log", garbage)
		}, []string{"/s", "no MANIFEST"}},
		{"corrupt MANIFEST", func(t *testing.T, fs vfs.FS) {
			names := newStoreFiles(t, fs, "/s")
			writeFile(t, fs, "/s/"+fileWithPrefix(names, "MANIFEST-"), garbage)
		}, []string{"/s", "MANIFEST-"}},
		{"empty MANIFEST", func(t *testing.T, fs vfs.FS) {
			names := newStoreFiles(t, fs, "/s")
			writeFile(t, fs, "/s/"+fileWithPrefix(names, "MANIFEST-"), nil)
		}, []string{"/s", "MANIFEST-"}},
		{"corrupt OPTIONS", func(t *testing.T, fs vfs.FS) {
			names := newStoreFiles(t, fs, "/s")
			writeFile(t, fs, "/s/"+fileWithPrefix(names, "OPTIONS-"), garbage)
		}, []string{"/s/OPTIONS-"}},
		{"garbage CURRENT", func(t *testing.T, fs vfs.FS) {
			newStoreFiles(t, fs, "/s")
			writeFile(t, fs, "/s/CURRENT", garbage)
		}, []string{"/s/CURRENT"}},
		{"garbage CURRENT instead of the marker", func(t *testing.T, fs vfs.FS) {
			names := newStoreFiles(t, fs, "/s")
			fs.Remove("/s/" + fileWithPrefix(names, "marker.manifest."))
			writeFile(t, fs, "/s/CURRENT", garbage)
		}, []string{"/s/CURRENT"}},
		{"marker names a missing MANIFEST", func(t *testing.T, fs vfs.FS) {
			names := newStoreFiles(t, fs, "/s")
			fs.Remove("/s/" + fileWithPrefix(names, "MANIFEST-"))
		}, []string{"/s", "MANIFEST-"}},
		{"pebble store without version", func(t *testing.T, fs vfs.FS) {
			pdb, err := pebble.Open("/s", &pebble.Options{FS: fs, Logger: pebbleLogger{&DB{log: quiet}}})
			if err != nil {
				t.Fatal(err)
			}
			pdb.Close()
		}, []string{"/s", "no format version"}},
		{"other format version", func(t *testing.T, fs vfs.FS) {
			setVersion(t, fs, "/s", 7)
		}, []string{"store: /s: format version 7, this trawl reads 4 (and upgrades 3)"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs := vfs.NewMem()
			c.setup(t, fs)
			db, err := Open("/s", memOpts(fs))
			if err == nil {
				db.Close()
				t.Fatalf("Open(/s) = nil error, want one containing %q", c.wantIn)
			}
			t.Logf("Open(/s) = %v", err)
			for _, w := range c.wantIn {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Open(/s) = %q, want it to contain %q", err, w)
				}
			}
		})
	}
}

// TestOpenGarbageWAL: Pebble reads a WAL that is garbage from its start as
// a torn tail and drops it; the store still opens with its format version,
// which Open flushed to an sstable.
func TestOpenGarbageWAL(t *testing.T) {
	fs := vfs.NewMem()
	names := newStoreFiles(t, fs, "/s")
	wal := ""
	for _, n := range names { // fs.List gives no order; take a WAL, not a table
		if strings.HasSuffix(n, ".log") {
			wal = n
			break
		}
	}
	if wal == "" {
		t.Fatalf("no WAL among %q", names)
	}
	writeFile(t, fs, "/s/"+wal, []byte("garbage garbage garbage garbage garbage"))
	db := mustOpen(t, "/s", memOpts(fs))
	defer db.Close()
	if v, err := db.Get(MetaKey(metaVersion)); err != nil || len(v) != 4 {
		t.Errorf("Get(meta version) after a garbage WAL = %x, %v", v, err)
	}
}

// TestOpenLocked: a second Open of a store in use fails.
func TestOpenLocked(t *testing.T) {
	dir := t.TempDir()
	db := mustOpen(t, dir, Options{Logger: quiet})
	defer db.Close()
	if db2, err := Open(dir, Options{Logger: quiet}); err == nil {
		db2.Close()
		t.Fatalf("second Open(%q) = nil error, want a lock error", dir)
	} else if !strings.Contains(err.Error(), dir) {
		t.Errorf("second Open = %q, want it to name %s", err, dir)
	}
}

// enospc fails every write operation while on.
type enospc struct{ on atomic.Bool }

func (e *enospc) inj() errorfs.Injector {
	return errorfs.InjectorFunc(func(op errorfs.Op) error {
		if op.Kind.ReadOrWrite() == errorfs.OpIsWrite && e.on.Load() {
			return &os.PathError{Op: "write", Path: op.Path, Err: syscall.ENOSPC}
		}
		return nil
	})
}

// TestDiskFull: with the disk full, commits fail with a clear error naming
// the store, the DB reports itself failed, Close does not panic; after
// space is freed, a reopened store holds every acknowledged commit, even
// with everything that was never synced thrown away (a crash).
func TestDiskFull(t *testing.T) {
	mem := vfs.NewCrashableMem()
	var full enospc
	fs := errorfs.Wrap(mem, full.inj())
	db := mustOpen(t, "/data/state", memOpts(fs))

	var mu sync.Mutex
	acked := map[string]bool{}
	var wg sync.WaitGroup
	var failures int
	// The disk fills after the 60th commit of all goroutines: counted per
	// goroutine, the others could run thousands of commits ahead under
	// load, fill Pebble's first (small) memtable and have the disk fill
	// during a WAL rotation, which Pebble answers with a panic.
	var commits atomic.Int64
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				if commits.Add(1) == 60 {
					full.on.Store(true)
				}
				k := fmt.Sprintf("g%d-%d", g, i)
				b := db.NewBatch()
				b.Set(URLKey("a.test", k), make([]byte, 100))
				err := db.Commit(b)
				mu.Lock()
				if err == nil {
					acked[k] = true
				} else {
					failures++
				}
				mu.Unlock()
				if err != nil {
					if !strings.Contains(err.Error(), "/data/state") || !errors.Is(err, syscall.ENOSPC) {
						t.Errorf("Commit on a full disk = %v, want an error naming /data/state wrapping ENOSPC", err)
					}
					return
				}
				if i > 10000 {
					t.Errorf("10000 commits after the disk filled, no error")
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := db.Err(); err == nil || !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("Err() = %v, want the ENOSPC failure", err)
	}
	b := db.NewBatch()
	b.Set(MetaKey("after"), nil)
	if err := db.Commit(b); err == nil {
		t.Errorf("Commit after failure = nil, want the failure")
	}
	db.Close() // may report the failure again; must not panic
	if len(acked) < 50 || failures != 4 {
		t.Fatalf("acked %d commits, %d failures; want >= 50 and 4", len(acked), failures)
	}

	full.on.Store(false)                           // space freed
	crashed := mem.CrashClone(vfs.CrashCloneCfg{}) // only synced data survives
	db = mustOpen(t, "/data/state", memOpts(crashed))
	defer db.Close()
	for k := range acked {
		if ok, err := db.Has(URLKey("a.test", k)); !ok || err != nil {
			t.Errorf("acknowledged commit %s lost after reopen (Has = %v, %v)", k, ok, err)
		}
	}
}

// TestApplyGroupThenSyncWAL: an applied group is visible at once, and is
// durable once a SyncWAL that began after it returns, even when every
// unsynced write is thrown away (a crash).
func TestApplyGroupThenSyncWAL(t *testing.T) {
	mem := vfs.NewCrashableMem()
	db := mustOpen(t, "/data/state", memOpts(mem))
	var order []string
	group := func(names ...string) []*Batch { return metaGroup(db, &order, names...) }
	if err := db.ApplyGroup(group("a", "b", "c")); err != nil {
		t.Fatalf("ApplyGroup = %v", err)
	}
	if err := db.ApplyGroup(group("d")); err != nil {
		t.Fatalf("ApplyGroup = %v", err)
	}
	if got := strings.Join(order, ","); got != "a,b,c,d" {
		t.Errorf("OnDone order = %s, want a,b,c,d", got)
	}
	for _, n := range []string{"a", "d"} {
		if v, err := db.Get(MetaKey(n)); err != nil || string(v) != n {
			t.Errorf("Get(%s) after ApplyGroup = %q, %v; want it visible", n, v, err)
		}
	}
	if err := db.SyncWAL(); err != nil {
		t.Fatalf("SyncWAL = %v", err)
	}
	if err := db.ApplyGroup(group("e")); err != nil { // never synced
		t.Fatalf("ApplyGroup = %v", err)
	}
	crashed := mem.CrashClone(vfs.CrashCloneCfg{})
	db.Close()
	db = mustOpen(t, "/data/state", memOpts(crashed))
	defer db.Close()
	for _, n := range []string{"a", "b", "c", "d"} {
		if ok, err := db.Has(MetaKey(n)); !ok || err != nil {
			t.Errorf("%s applied before SyncWAL lost in a crash (Has = %v, %v)", n, ok, err)
		}
	}
}

// TestSyncWALDiskFull: SyncWAL on a full disk fails naming the store, and
// the DB is failed.
func TestSyncWALDiskFull(t *testing.T) {
	var full enospc
	db := mustOpen(t, "/data/state", memOpts(errorfs.Wrap(vfs.NewMem(), full.inj())))
	defer db.Close()
	b := db.NewBatch()
	b.Set(MetaKey("x"), make([]byte, 100))
	if err := db.ApplyGroup([]*Batch{b}); err != nil {
		t.Fatalf("ApplyGroup = %v", err)
	}
	full.on.Store(true)
	err := db.SyncWAL()
	if err == nil || !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "/data/state") {
		t.Fatalf("SyncWAL on a full disk = %v, want an error naming /data/state wrapping ENOSPC", err)
	}
	if db.Err() == nil {
		t.Error("Err() = nil after a failed sync")
	}
	if err := db.ApplyGroup([]*Batch{db.NewBatch()}); err == nil {
		t.Error("ApplyGroup after a failed sync = nil, want the failure")
	}
}

// TestApplyGroupSynced: a group applied with its fsync asked for is
// visible at once, before its wait, and durable once its wait returns, even
// when every unsynced write is thrown away (a crash); groups of a single
// write and of a range deletion (not sorted) too.
func TestApplyGroupSynced(t *testing.T) {
	mem := vfs.NewCrashableMem()
	db := mustOpen(t, "/data/state", memOpts(mem))
	var order []string
	group := func(names ...string) []*Batch { return metaGroup(db, &order, names...) }
	var waits []func() error
	for _, g := range [][]string{{"c", "a", "b"}, {"d"}, {"e", "f"}} {
		wait, err := db.ApplyGroupSynced(group(g...))
		if err != nil {
			t.Fatalf("ApplyGroupSynced(%v) = %v", g, err)
		}
		waits = append(waits, wait)
	}
	ranged := db.NewBatch()
	ranged.b.DeleteRange(MetaKey("f"), MetaKey("g"), nil)
	wait, err := db.ApplyGroupSynced([]*Batch{ranged})
	if err != nil {
		t.Fatalf("ApplyGroupSynced(range deletion) = %v", err)
	}
	waits = append(waits, wait)
	if got := strings.Join(order, ","); got != "c,a,b,d,e,f" {
		t.Errorf("OnDone order = %s, want c,a,b,d,e,f", got)
	}
	for _, n := range []string{"a", "d", "e"} {
		if v, err := db.Get(MetaKey(n)); err != nil || string(v) != n {
			t.Errorf("Get(%s) before its wait = %q, %v; want it visible", n, v, err)
		}
	}
	for _, w := range waits {
		if err := w(); err != nil {
			t.Fatalf("wait = %v", err)
		}
	}
	crashed := mem.CrashClone(vfs.CrashCloneCfg{})
	db.Close()
	db = mustOpen(t, "/data/state", memOpts(crashed))
	defer db.Close()
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		if ok, err := db.Has(MetaKey(n)); !ok || err != nil {
			t.Errorf("%s lost in a crash after its wait (Has = %v, %v)", n, ok, err)
		}
	}
	if ok, err := db.Has(MetaKey("f")); ok || err != nil {
		t.Errorf("f, deleted by a range, is back after a crash (Has = %v, %v)", ok, err)
	}
}

// TestApplyGroupSyncedDiskFull: a group whose fsync fails gets the failure
// from its wait, naming the store, and the DB is failed.
func TestApplyGroupSyncedDiskFull(t *testing.T) {
	var full enospc
	db := mustOpen(t, "/data/state", memOpts(errorfs.Wrap(vfs.NewMem(), full.inj())))
	defer db.Close()
	b := db.NewBatch()
	b.Set(MetaKey("x"), make([]byte, 100))
	full.on.Store(true)
	wait, err := db.ApplyGroupSynced([]*Batch{b})
	if err == nil {
		err = wait()
	}
	if err == nil || !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "/data/state") {
		t.Fatalf("ApplyGroupSynced on a full disk = %v, want an error naming /data/state wrapping ENOSPC", err)
	}
	if db.Err() == nil {
		t.Error("Err() = nil after a failed sync")
	}
	if _, err := db.ApplyGroupSynced([]*Batch{db.NewBatch()}); err == nil {
		t.Error("ApplyGroupSynced after a failed sync = nil, want the failure")
	}
}

// setVersion makes dir a store whose version key holds v.
func setVersion(t *testing.T, fs vfs.FS, dir string, v uint32) {
	t.Helper()
	db := mustOpen(t, dir, memOpts(fs))
	b := db.NewBatch()
	b.Set(MetaKey(metaVersion), binary.BigEndian.AppendUint32(nil, v))
	b.Set(HostKey("a.test"), []byte("v1"))
	if err := db.Commit(b); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestOpenVersions: Open refuses a store older than the previous version
// and newer than this one, opens one of the previous version as old
// (read-only until upgraded) and one of this version as it is.
func TestOpenVersions(t *testing.T) {
	if FormatVersion != 4 || PreviousFormatVersion != 3 {
		t.Fatalf("FormatVersion %d, PreviousFormatVersion %d: update this table", FormatVersion, PreviousFormatVersion)
	}
	cases := []struct {
		version uint32
		wantErr string // "" to open
		upgrade bool   // NeedsUpgrade
	}{
		{2, "store: /s: format version 2, this trawl reads 4 (and upgrades 3)", false},
		{3, "", true},
		{4, "", false},
		{5, "store: /s: format version 5, this trawl reads 4 (and upgrades 3)", false},
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.version), func(t *testing.T) {
			fs := vfs.NewMem()
			setVersion(t, fs, "/s", c.version)
			db, err := Open("/s", memOpts(fs))
			if c.wantErr != "" {
				if err == nil {
					db.Close()
					t.Fatalf("Open = nil error, want %q", c.wantErr)
				}
				if err.Error() != c.wantErr {
					t.Errorf("Open = %q, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Open = %v", err)
			}
			defer db.Close()
			if db.Version() != c.version || db.NeedsUpgrade() != c.upgrade {
				t.Errorf("Version %d, NeedsUpgrade %v; want %d, %v", db.Version(), db.NeedsUpgrade(), c.version, c.upgrade)
			}
			if v, err := db.Get(HostKey("a.test")); string(v) != "v1" || err != nil {
				t.Errorf("Get(host a.test) = %q, %v; want v1", v, err)
			}
		})
	}
}

// TestUpgrade: a store of the previous version refuses every commit
// (Commit, CommitNoSync, ApplyGroup) until a batch with Upgrade commits;
// then it is at FormatVersion, takes writes, and opens at FormatVersion.
func TestUpgrade(t *testing.T) {
	fs := vfs.NewMem()
	setVersion(t, fs, "/s", PreviousFormatVersion)
	db := mustOpen(t, "/s", memOpts(fs))
	write := func() *Batch {
		b := db.NewBatch()
		b.Set(HostKey("b.test"), []byte("v2"))
		return b
	}
	const refused = "store: /s: format version 3 is read-only until upgraded to 4"
	var onDone error
	b := write()
	b.OnDone(func(err error) { onDone = err })
	for name, err := range map[string]error{
		"Commit":       db.Commit(b),
		"CommitNoSync": db.CommitNoSync(write()),
		"ApplyGroup":   db.ApplyGroup([]*Batch{write(), write()}),
	} {
		if err == nil || !strings.HasPrefix(err.Error(), refused) {
			t.Errorf("%s on an old store = %v, want %q", name, err, refused)
		}
	}
	if onDone == nil {
		t.Errorf("OnDone of a refused batch saw nil")
	}
	if db.Err() != nil {
		t.Errorf("Err after a refused commit = %v, want nil (the store is not failed)", db.Err())
	}
	if ok, _ := db.Has(HostKey("b.test")); ok {
		t.Errorf("a refused write was applied")
	}
	if err := db.SyncWAL(); err != nil {
		t.Errorf("SyncWAL on an old store = %v", err)
	}

	b = write()
	if err := b.Upgrade(); err != nil {
		t.Fatal(err)
	}
	if err := db.Commit(b); err != nil {
		t.Fatalf("Commit of the upgrade = %v", err)
	}
	if db.Version() != FormatVersion || db.NeedsUpgrade() {
		t.Errorf("after the upgrade: Version %d, NeedsUpgrade %v", db.Version(), db.NeedsUpgrade())
	}
	b = db.NewBatch()
	b.Set(HostKey("c.test"), []byte("v3"))
	if err := db.Commit(b); err != nil {
		t.Errorf("Commit after the upgrade = %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db = mustOpen(t, "/s", memOpts(fs))
	defer db.Close()
	if db.Version() != FormatVersion {
		t.Errorf("reopened: Version %d, want %d", db.Version(), FormatVersion)
	}
	for _, h := range []string{"a.test", "b.test", "c.test"} {
		if ok, err := db.Has(HostKey(h)); !ok || err != nil {
			t.Errorf("reopened: Has(host %s) = %v, %v", h, ok, err)
		}
	}
}

// TestNewStoreVersion: a new store is written at FormatVersion.
func TestNewStoreVersion(t *testing.T) {
	db := mustOpen(t, "/s", memOpts(vfs.NewMem()))
	defer db.Close()
	if db.Version() != FormatVersion || db.NeedsUpgrade() {
		t.Errorf("new store: Version %d, NeedsUpgrade %v", db.Version(), db.NeedsUpgrade())
	}
	if v, err := db.Get(MetaKey(metaVersion)); err != nil || binary.BigEndian.Uint32(v) != FormatVersion {
		t.Errorf("Get(meta version) = %x, %v", v, err)
	}
}

// TestDiskUsage: committed keys, still in the memtable, are counted by
// kind once written out; a kind with 20 times the keys takes more room, a
// kind with no keys none.
func TestDiskUsage(t *testing.T) {
	db := mustOpen(t, "/s", memOpts(vfs.NewMem()))
	defer db.Close()
	b := db.NewBatch()
	val := bytes.Repeat([]byte("v"), 100)
	for i := range 2000 {
		host := fmt.Sprintf("h%d.test", i%50)
		b.Set(QueueKey(host, 0, uint64(i)), val)
		if i%20 == 0 {
			b.Set(HostKey(host+fmt.Sprint(i)), val)
		}
	}
	if err := db.Commit(b); err != nil {
		t.Fatal(err)
	}
	use, err := db.DiskUsage(KindQueue, KindHost, KindSeen)
	if err != nil {
		t.Fatal(err)
	}
	if use[KindHost] == 0 || use[KindQueue] < 5*use[KindHost] || use[KindSeen] != 0 {
		t.Errorf("DiskUsage = queue %d, host %d, seen %d bytes; want host > 0, queue over 5x host (20x the keys), seen 0", use[KindQueue], use[KindHost], use[KindSeen])
	}
	db.Close()
	if _, err := db.DiskUsage(KindQueue); !errors.Is(err, ErrClosed) {
		t.Errorf("DiskUsage on a closed store = %v, want ErrClosed", err)
	}
}

// metaGroup returns a batch per name, each setting the meta key name to
// name and appending name to *done once it is done without error.
func metaGroup(db *DB, done *[]string, names ...string) []*Batch {
	var bs []*Batch
	for _, n := range names {
		b := db.NewBatch()
		b.Set(MetaKey(n), []byte(n))
		b.OnDone(func(err error) {
			if err == nil {
				*done = append(*done, n)
			}
		})
		bs = append(bs, b)
	}
	return bs
}
