package warc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/nlnwa/gowarc/v3"
)

// cutBody returns the body written for url: 200 to 3199 bytes, partly
// incompressible, so that a small MaxFileSize rotates often, and different
// for every URL, so that a record read back can be checked against it.
func cutBody(url string) []byte {
	seed := uint64(len(url))
	for _, c := range []byte(url) {
		seed = seed*31 + uint64(c)
	}
	rng := rand.New(rand.NewPCG(seed, 7))
	b := make([]byte, 200+rng.IntN(3000))
	for i := range b {
		if i%3 == 0 {
			b[i] = byte(rng.Uint32())
		} else {
			b[i] = 'a' + byte(i%26)
		}
	}
	return b
}

// crash is a power cut taken while the writers ran: the file system as it
// would be found, and the exchanges acknowledged before it.
type crash struct {
	at    int // Writes returned when it was taken
	fs    *vfs.MemFS
	acked []string
}

// TestPowerCut runs concurrent writers that each wait for Durable, and cuts
// the power (CrashClone keeps only synced data and directory entries) at
// random moments, and once after Close. On every clone, Recover must leave
// only whole records in finished files, every exchange acknowledged before
// the cut must be there, whole, once, and every exchange there must be one
// that was written.
func TestPowerCut(t *testing.T) {
	if testing.Short() {
		t.Skip("power cuts at every step: the full suite runs them")
	}
	tests := []struct {
		name     string
		max      int64 // MaxFileSize
		unsynced int   // CrashCloneCfg.UnsyncedDataPercent
	}{
		{"rotating", 12 << 10, 0},
		{"one file per exchange", 1, 0},
		{"one file", 1 << 30, 0},
		{"rotating, unsynced blocks kept at random", 12 << 10, 30},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const (
				workers = 12
				each    = 25
				dir     = "/data/warc"
			)
			mem := vfs.NewCrashableMem()
			w, err := NewWriter(Options{Dir: dir, FS: mem, MaxFileSize: tt.max, Now: fixedClock})
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(uint64(i), 11))
			crashAt := map[int]bool{}
			for len(crashAt) < 6 {
				crashAt[1+rng.IntN(workers*each)] = true
			}
			crashAt[0] = true
			cfg := func() vfs.CrashCloneCfg {
				if tt.unsynced == 0 {
					return vfs.CrashCloneCfg{}
				}
				return vfs.CrashCloneCfg{UnsyncedDataPercent: tt.unsynced, RNG: rand.New(rand.NewPCG(rng.Uint64(), 1))}
			}
			var (
				mu      sync.Mutex
				acked   = map[string]bool{}
				written = map[string]bool{}
				crashes []crash
				writes  atomic.Int64
			)
			cut := func(at int) {
				mu.Lock()
				defer mu.Unlock()
				// The acknowledged set is taken before the clone: all of it
				// must survive.
				c := crash{at: at}
				for u := range acked {
					c.acked = append(c.acked, u)
				}
				c.fs = mem.CrashClone(cfg())
				crashes = append(crashes, c)
			}
			cut(0)
			var wg sync.WaitGroup
			for g := range workers {
				wg.Go(func() {
					for i := range each {
						url := fmt.Sprintf("http://p%d.test/%d", g, i)
						ex := exchange(url, 200, "", cutBody(url))
						mu.Lock()
						written[url] = true
						mu.Unlock()
						loc, err := w.Write(ex)
						if n := int(writes.Add(1)); crashAt[n] {
							cut(n)
						}
						if err != nil {
							t.Errorf("Write(%s): %v", url, err)
							return
						}
						if err := <-w.Durable(loc); err != nil {
							t.Errorf("Durable(%s): %v", url, err)
							return
						}
						mu.Lock()
						acked[url] = true
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			cut(-1) // after Close
			for _, c := range crashes {
				got := checkCrash(t, c.fs, dir, tt.max)
				for _, u := range c.acked {
					if !got[u] {
						t.Errorf("cut after %d writes: acknowledged %s lost", c.at, u)
					}
				}
				for u := range got {
					if !written[u] {
						t.Errorf("cut after %d writes: %s found, never written", c.at, u)
					}
				}
				if c.at == -1 && len(got) != workers*each {
					t.Errorf("cut after Close: %d exchanges, want all %d", len(got), workers*each)
				}
				t.Logf("cut after %d writes: %d acknowledged before it, %d kept", c.at, len(c.acked), len(got))
			}
		})
	}
}

// checkCrash recovers dir on the crashed file system fsys and checks what
// is left: finished files only, each read whole by scan and by gowarc
// (strict, digests checked), holding exchanges each with its own request
// and the body written for its URL. It returns the URLs found.
func checkCrash(t *testing.T, fsys *vfs.MemFS, dir string, max int64) map[string]bool {
	t.Helper()
	recovered, err := RecoverFS(fsys, dir)
	if err != nil {
		t.Fatalf("RecoverFS: %v", err)
	}
	names, err := fsys.List(dir)
	if errors.Is(err, os.ErrNotExist) {
		if len(recovered) != 0 {
			t.Errorf("no directory, but Recover = %+v", recovered)
		}
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	for _, r := range recovered {
		if r.File != "" && !slices.Contains(names, filepath.Base(r.File)) {
			t.Errorf("Recover reported %s, not in the directory %q", r.File, names)
		}
	}
	var cutFiles, removed int
	var cutBytes int64
	for _, r := range recovered {
		cutBytes += r.CutBytes
		if r.File == "" {
			removed++
		} else {
			cutFiles++
		}
	}
	t.Logf("Recover: %d files repaired, %d removed, %d bytes cut", cutFiles, removed, cutBytes)
	got := map[string]bool{}
	local := t.TempDir()
	for _, name := range names {
		if !strings.HasSuffix(name, Extension) {
			t.Errorf("%s left in the directory after Recover", name)
			continue
		}
		data := readMem(t, fsys, fsys.PathJoin(dir, name))
		plan, err := scan(bytes.NewReader(data))
		if err != nil || plan.keep != int64(len(data)) || plan.exchanges == 0 {
			t.Errorf("%s: scan keeps %d of %d bytes, %d exchanges, %v; want all of a file with exchanges", name, plan.keep, len(data), plan.exchanges, err)
			continue
		}
		path := filepath.Join(local, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		recs := readBack(t, path)
		if len(recs) != 1+2*plan.exchanges || recs[0].typ != "warcinfo" {
			t.Errorf("%s: gowarc reads %d records, want a warcinfo and %d exchanges", name, len(recs), plan.exchanges)
			continue
		}
		if plan.exchanges > 1 && int64(len(data)) > max {
			t.Errorf("%s: %d bytes with %d exchanges, over MaxFileSize %d", name, len(data), plan.exchanges, max)
		}
		for i := 1; i+1 < len(recs); i += 2 {
			resp, req := recs[i], recs[i+1]
			url := resp.headers.Get(gowarc.WarcTargetURI)
			if resp.typ != "response" || req.typ != "request" || req.headers.Get(gowarc.WarcTargetURI) != url {
				t.Errorf("%s records %d, %d: %s and %s, want a response and its request", name, i, i+1, resp.typ, req.typ)
				continue
			}
			if !bytes.Equal(resp.payload, cutBody(url)) {
				t.Errorf("%s: %s: body of %d bytes is not the one written", name, url, len(resp.payload))
			}
			if got[url] {
				t.Errorf("%s: %s found twice", name, url)
			}
			got[url] = true
		}
	}
	return got
}

// readMem reads the file name of fsys.
func readMem(t *testing.T, fsys vfs.FS, name string) []byte {
	t.Helper()
	f, err := fsys.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	data, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestDurableAcrossRotation acknowledges exchanges in files that were
// finished since, and some in the current file, and checks they all
// survive a power cut before Close.
func TestDurableAcrossRotation(t *testing.T) {
	mem := vfs.NewCrashableMem()
	w, err := NewWriter(Options{Dir: "/w", FS: mem, MaxFileSize: 6 << 10, Now: fixedClock})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = w.Close() }()
	var (
		locs []Location
		urls []string
	)
	for i := range 12 {
		url := fmt.Sprintf("http://r.test/%d", i)
		loc, err := w.Write(exchange(url, 200, "", cutBody(url)))
		if err != nil {
			t.Fatal(err)
		}
		locs, urls = append(locs, loc), append(urls, url)
	}
	if len(w.Files()) < 3 {
		t.Fatalf("%d files, want rotation", len(w.Files()))
	}
	// The newest first: the older ones are then in finished files.
	for i := len(locs) - 1; i >= 0; i-- {
		if err := <-w.Durable(locs[i]); err != nil {
			t.Fatalf("Durable(%s): %v", urls[i], err)
		}
	}
	got := checkCrash(t, mem.CrashClone(vfs.CrashCloneCfg{}), "/w", 6<<10)
	for _, u := range urls {
		if !got[u] {
			t.Errorf("acknowledged %s lost", u)
		}
	}
	if err := <-w.Durable(Location{File: locs[0].File}); err == nil {
		t.Error("Durable(a Location not from Write) = nil, want an error")
	}
}

// TestMinSyncIntervalGroups writes exchanges faster than MinSyncInterval
// allows fsync rounds: they share rounds, and each is still on disk (a
// crash clone keeps it) once Durable says so.
func TestMinSyncIntervalGroups(t *testing.T) {
	mem := vfs.NewCrashableMem()
	w, err := NewWriter(Options{Dir: "/w", FS: mem, Now: fixedClock, MinSyncInterval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = w.Close() }()
	const n = 20
	var locs []Location
	var urls []string
	for i := range n {
		url := fmt.Sprintf("http://g.test/%d", i)
		loc, err := w.Write(exchange(url, 200, "", cutBody(url)))
		if err != nil {
			t.Fatal(err)
		}
		locs, urls = append(locs, loc), append(urls, url)
		_ = w.Durable(loc) // ask for a round after each write
	}
	for i, loc := range locs {
		if err := <-w.Durable(loc); err != nil {
			t.Fatalf("Durable(%s): %v", urls[i], err)
		}
	}
	// A round at the first write, then at most one more per second: the
	// writes above take far less than a second, even under -race.
	if r := w.rounds.Load(); r > 3 {
		t.Errorf("%d exchanges took %d fsync rounds, want them grouped into at most 3", n, r)
	}
	got := checkCrash(t, mem.CrashClone(vfs.CrashCloneCfg{}), "/w", DefaultMaxFileSize)
	for _, u := range urls {
		if !got[u] {
			t.Errorf("acknowledged %s lost", u)
		}
	}
}

// TestSyncFails makes fsync fail, of a file or of the directory, while
// writers wait for Durable: the error, naming what failed, is the outcome
// of every Durable not yet acknowledged and of every later Write, and no
// exchange written after one that failed is acknowledged.
func TestSyncFails(t *testing.T) {
	for _, target := range []string{Extension + OpenSuffix, "/w"} {
		t.Run(target, func(t *testing.T) {
			var failing atomic.Bool
			efs := errorfs.Wrap(vfs.NewCrashableMem(), errorfs.InjectorFunc(func(op errorfs.Op) error {
				if failing.Load() && op.Kind == errorfs.OpFileSync && strings.HasSuffix(op.Path, target) {
					return errorfs.ErrInjected
				}
				return nil
			}))
			w, err := NewWriter(Options{Dir: "/w", FS: efs, MaxFileSize: 8 << 10, Now: fixedClock})
			if err != nil {
				t.Fatal(err)
			}
			first, err := w.Write(exchange("http://s.test/first", 200, "", []byte("x")))
			if err != nil {
				t.Fatal(err)
			}
			if err := <-w.Durable(first); err != nil {
				t.Fatal(err)
			}

			const workers, each = 8, 20
			type outcome struct {
				seq uint64
				err error
			}
			var (
				mu       sync.Mutex
				outcomes []outcome
				writeErr []error
				wg       sync.WaitGroup
				n        atomic.Int64
			)
			for g := range workers {
				wg.Go(func() {
					for i := range each {
						if n.Add(1) == workers*each/3 {
							failing.Store(true)
						}
						url := fmt.Sprintf("http://s%d.test/%d", g, i)
						loc, err := w.Write(exchange(url, 200, "", cutBody(url)))
						if err != nil {
							mu.Lock()
							writeErr = append(writeErr, err)
							mu.Unlock()
							continue
						}
						err = <-w.Durable(loc)
						mu.Lock()
						outcomes = append(outcomes, outcome{loc.seq, err})
						mu.Unlock()
					}
				})
			}
			wg.Wait()

			var lastAcked, firstFailed uint64 = 0, ^uint64(0)
			var failure error
			for _, o := range outcomes {
				if o.err == nil {
					lastAcked = max(lastAcked, o.seq)
					continue
				}
				firstFailed = min(firstFailed, o.seq)
				failure = o.err
				if !errors.Is(o.err, errorfs.ErrInjected) || !strings.Contains(o.err.Error(), target) {
					t.Errorf("Durable = %v, want the injected error naming %s", o.err, target)
				}
			}
			if failure == nil {
				t.Fatal("no Durable failed")
			}
			if lastAcked >= firstFailed {
				t.Errorf("exchange %d acknowledged after exchange %d failed", lastAcked, firstFailed)
			}
			for _, err := range writeErr {
				if !errors.Is(err, errorfs.ErrInjected) {
					t.Errorf("Write after the failure = %v, want the injected error", err)
				}
			}
			if _, err := w.Write(exchange("http://s.test/after", 200, "", nil)); !errors.Is(err, errorfs.ErrInjected) {
				t.Errorf("Write after the failure = %v, want the injected error", err)
			}
			if err := <-w.Durable(first); err != nil {
				t.Errorf("Durable(acknowledged before the failure) = %v, want nil", err)
			}
			if err := w.Sync(); !errors.Is(err, errorfs.ErrInjected) {
				t.Errorf("Sync after the failure = %v, want the injected error", err)
			}
			if err := w.Close(); !errors.Is(err, errorfs.ErrInjected) {
				t.Errorf("Close = %v, want the injected error", err)
			}
			if files := w.Files(); !strings.HasSuffix(files[len(files)-1], OpenSuffix) {
				t.Errorf("Files() = %q, want the file not made durable listed with %s", files, OpenSuffix)
			}
			t.Logf("%d acknowledged (up to %d), %d failed from %d, %d Writes refused: %v", len(outcomes)-countErr(outcomes, func(o outcome) error { return o.err }), lastAcked, countErr(outcomes, func(o outcome) error { return o.err }), firstFailed, len(writeErr), failure)
		})
	}
}

func countErr[T any](xs []T, err func(T) error) int {
	n := 0
	for _, x := range xs {
		if err(x) != nil {
			n++
		}
	}
	return n
}

// BenchmarkDurable compares 64 concurrent writers on a real directory
// that only Write with 64 that also wait for Durable (one fsync shared by
// every exchange written before it began). Bodies are 40 KB, as in
// BenchmarkWrite.
func BenchmarkDurable(b *testing.B) {
	body := make([]byte, 40<<10)
	for i := range body {
		body[i] = "<html>lorem ipsum dolor sit amet</html>\n"[i%40] ^ byte(i/4096)
	}
	ex := exchange("http://bench.test/page", 200, "Content-Type: text/html\r\n", body)
	size := int64(len(body) + len(ex.ResponseHeader) + len(ex.Request))
	const writers = 64
	for _, durable := range []bool{false, true} {
		name := "write"
		if durable {
			name = "write+durable"
		}
		b.Run(name, func(b *testing.B) {
			w := newTestWriter(b, Options{MaxFileSize: 64 << 20})
			b.SetBytes(size)
			b.ReportAllocs()
			var next atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			for range writers {
				wg.Go(func() {
					for next.Add(1) <= int64(b.N) {
						loc, err := w.Write(ex)
						if err != nil {
							b.Error(err)
							return
						}
						if durable {
							if err := <-w.Durable(loc); err != nil {
								b.Error(err)
								return
							}
						}
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			if durable {
				b.ReportMetric(float64(b.N)/float64(max(1, w.rounds.Load())), "exchanges/fsync")
			}
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
		})
	}
}
