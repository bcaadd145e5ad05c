package crawllog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// clock is a fake clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

func entry(i int) *Entry {
	return &Entry{Time: t0.Add(time.Duration(i) * time.Millisecond), Job: 1, URL: fmt.Sprintf("http://a.test/page/%d", i),
		Status: 200, Bytes: int64(i), Duration: time.Duration(i) * time.Microsecond, Depth: i % 5}
}

func mustOpen(t *testing.T, dir string, o Options) *Writer {
	t.Helper()
	if o.Logger == nil {
		o.Logger = quiet()
	}
	w, err := Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// pageNumbers reads every line of the log, file by file in Files order,
// checking that each file holds whole lines that parse, and returns the
// page numbers in the order read.
func pageNumbers(t *testing.T, dir string, maxBytes int64) []int {
	t.Helper()
	files, err := Files(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > 0 && b[len(b)-1] != '\n' {
			t.Errorf("%s does not end in a newline: a line was split", path)
		}
		lines := bytes.SplitAfter(b, []byte("\n"))
		if maxBytes > 0 && int64(len(b)) > maxBytes && len(lines) > 2 {
			t.Errorf("%s has %d bytes in %d lines, MaxBytes %d", path, len(b), len(lines)-1, maxBytes)
		}
		for _, l := range lines {
			if len(l) == 0 {
				continue
			}
			e, err := Parse(l)
			if err != nil {
				t.Fatalf("%s: %q: %v", path, l, err)
			}
			var n int
			fmt.Sscanf(e.URL, "http://a.test/page/%d", &n)
			got = append(got, n)
		}
	}
	return got
}

func seq(from, to int) []int {
	var s []int
	for i := from; i < to; i++ {
		s = append(s, i)
	}
	return s
}

func TestRotation(t *testing.T) {
	for _, buf := range []int{1, 1000} { // every line written at once; a few lines at a time
		t.Run(fmt.Sprint("buffer ", buf), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "logs")
			c := &clock{t: time.Date(2026, 12, 2, 3, 4, 5, 0, time.UTC)}
			const maxBytes = 700
			w := mustOpen(t, dir, Options{MaxBytes: maxBytes, BufferBytes: buf, FlushInterval: -1, Now: c.now})
			for i := range 100 {
				if i%30 == 29 {
					c.set(c.now().Add(time.Second))
				}
				w.Write(entry(i))
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if got := pageNumbers(t, dir, maxBytes); !slices.Equal(got, seq(0, 100)) {
				t.Errorf("lines read back, in Files order: %v", got)
			}
			files, _ := Files(dir)
			st := w.Stats()
			if st.Lines != 100 || st.Dropped != 0 || st.Rotations != int64(len(files)-1) || st.Rotations < 10 {
				t.Errorf("Stats = %+v with %d files", st, len(files))
			}
			var names []string
			for _, f := range files {
				names = append(names, filepath.Base(f))
			}
			if names[len(names)-1] != Name || names[0] != "crawl-20261202T030405Z-0000.log" || names[1] != "crawl-20261202T030405Z-0001.log" {
				t.Errorf("Files = %q", names)
			}
			if !slices.IsSorted(names[:len(names)-1]) {
				t.Errorf("rotated names do not sort in rotation order: %q", names)
			}

			// A restart appends to crawl.log; a clock that stepped back does
			// not put new rotated files before the old ones.
			c.set(c.now().Add(-time.Hour))
			w2 := mustOpen(t, dir, Options{MaxBytes: maxBytes, BufferBytes: buf, FlushInterval: -1, Now: c.now})
			for i := 100; i < 150; i++ {
				w2.Write(entry(i))
			}
			if err := w2.Close(); err != nil {
				t.Fatal(err)
			}
			if got := pageNumbers(t, dir, maxBytes); !slices.Equal(got, seq(0, 150)) {
				t.Errorf("after a restart, lines read back: %v", got)
			}
		})
	}
}

func TestLineLongerThanMaxBytes(t *testing.T) {
	dir := t.TempDir()
	w := mustOpen(t, dir, Options{MaxBytes: 50, FlushInterval: -1})
	for i := range 3 {
		w.Write(entry(i))
	}
	w.Close()
	files, _ := Files(dir)
	if got := pageNumbers(t, dir, 50); !slices.Equal(got, seq(0, 3)) || len(files) != 3 {
		t.Errorf("lines %v in %d files, want 3 files of a line each", got, len(files))
	}
}

// TestConcurrentWriters writes from many goroutines with the background
// flush on and rotation: every line arrives once, whole, each writer's in
// its order.
func TestConcurrentWriters(t *testing.T) {
	dir := t.TempDir()
	w := mustOpen(t, dir, Options{MaxBytes: 32 << 10, BufferBytes: 2 << 10, FlushInterval: time.Millisecond})
	const writers, each = 8, 1000
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := range each {
				w.Write(entry(g*each + i))
			}
		})
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got := pageNumbers(t, dir, 32<<10)
	if len(got) != writers*each {
		t.Fatalf("%d lines read back, want %d", len(got), writers*each)
	}
	next := make([]int, writers)
	for _, n := range got {
		g := n / each
		if n%each != next[g] {
			t.Fatalf("writer %d: line %d after %d", g, n%each, next[g]-1)
		}
		next[g]++
	}
	if st := w.Stats(); st.Lines != writers*each || st.Rotations == 0 {
		t.Errorf("Stats = %+v", st)
	}
}

func TestOpenAfterCrashMidLine(t *testing.T) {
	dir := t.TempDir()
	good := AppendJSON(nil, entry(0))
	os.WriteFile(filepath.Join(dir, Name), append(good, `{"time":"2026-12-0`...), 0o644)
	w := mustOpen(t, dir, Options{FlushInterval: -1})
	w.Write(entry(1))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var got []string
	var bad []string
	err := Scan(dir, Filter{OnBad: func(file string, line int, err error) {
		bad = append(bad, fmt.Sprintf("%s:%d", filepath.Base(file), line))
	}}, func(e Entry) error { got = append(got, e.URL); return nil })
	if err != nil || !slices.Equal(got, []string{entry(0).URL, entry(1).URL}) || !slices.Equal(bad, []string{"crawl.log:2"}) {
		t.Errorf("Scan = %v, bad %v, %v", got, bad, err)
	}
}

func TestOpenErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	if _, err := Open(filepath.Join(file, "logs"), Options{}); err == nil || !strings.Contains(err.Error(), file) || !strings.HasPrefix(err.Error(), "crawllog: ") {
		t.Errorf("Open under a file: %v, want an error naming %s", err, file)
	}
	if os.Geteuid() == 0 {
		t.Log("running as root: permissions are not checked")
		return
	}
	ro := filepath.Join(t.TempDir(), "ro")
	os.Mkdir(ro, 0o555)
	dir := filepath.Join(ro, "logs")
	if _, err := Open(dir, Options{}); err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("Open in a read-only directory: %v, want an error naming %s", err, dir)
	}
	os.Mkdir(dir, 0o555)
	if _, err := Open(dir, Options{}); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, Name)) {
		t.Errorf("Open of a read-only logs directory: %v, want an error naming its crawl.log", err)
	}
}

// countHandler counts log records.
type countHandler struct{ n atomic.Int64 }

func (h *countHandler) Enabled(context.Context, slog.Level) bool  { return true }
func (h *countHandler) Handle(context.Context, slog.Record) error { h.n.Add(1); return nil }
func (h *countHandler) WithAttrs([]slog.Attr) slog.Handler        { return h }
func (h *countHandler) WithGroup(string) slog.Handler             { return h }

// TestWriteError: a failed write is returned once by the next call and
// logged once per run of failures; lines are counted as dropped; writing
// resumes when the file takes writes again.
func TestWriteError(t *testing.T) {
	dir := t.TempDir()
	h := &countHandler{}
	w := mustOpen(t, dir, Options{FlushInterval: -1, Logger: slog.New(h)})
	good := w.f
	ro, err := os.Open(w.path) // a descriptor that refuses writes
	if err != nil {
		t.Fatal(err)
	}
	w.ioMu.Lock()
	w.f = ro
	w.ioMu.Unlock()
	w.Write(entry(0))
	w.Write(entry(1))
	err = w.Flush()
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, Name)) {
		t.Fatalf("Flush after a failed write = %v, want an error naming crawl.log", err)
	}
	if err := w.Flush(); err != nil {
		t.Errorf("second Flush = %v, want nil: the error was returned", err)
	}
	w.Write(entry(2))
	if err := w.Sync(); err == nil {
		t.Error("Sync after another failed write = nil")
	}
	if h.n.Load() != 1 {
		t.Errorf("%d log records for one run of failures, want 1", h.n.Load())
	}
	if st := w.Stats(); st.Dropped != 3 || st.Lines != 0 {
		t.Errorf("Stats = %+v, want 3 dropped", st)
	}
	w.ioMu.Lock()
	w.f = good
	w.ioMu.Unlock()
	ro.Close()
	w.Write(entry(3))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := pageNumbers(t, dir, 0); !slices.Equal(got, []int{3}) {
		t.Errorf("lines after recovery: %v", got)
	}
}

func TestClose(t *testing.T) {
	dir := t.TempDir()
	w := mustOpen(t, dir, Options{})
	w.Write(entry(0))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
	w.Write(entry(1))
	if err := w.Flush(); !errors.Is(err, ErrClosed) {
		t.Errorf("Flush after Close = %v, want ErrClosed", err)
	}
	if err := w.Sync(); !errors.Is(err, ErrClosed) {
		t.Errorf("Sync after Close = %v, want ErrClosed", err)
	}
	if st := w.Stats(); st.Lines != 1 || st.Dropped != 1 {
		t.Errorf("Stats = %+v, want 1 line, 1 dropped", st)
	}
	if got := pageNumbers(t, dir, 0); !slices.Equal(got, []int{0}) {
		t.Errorf("lines: %v", got)
	}
}

// TestBackgroundFlush: a line becomes readable without Flush.
func TestBackgroundFlush(t *testing.T) {
	dir := t.TempDir()
	w := mustOpen(t, dir, Options{FlushInterval: 5 * time.Millisecond})
	w.Write(entry(7))
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(filepath.Join(dir, Name))
		if len(b) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the line never reached the file")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestValidate(t *testing.T) {
	err := Options{BufferBytes: -1, FlushInterval: time.Nanosecond}.Validate()
	for _, field := range []string{"BufferBytes", "FlushInterval"} {
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("Validate() = %v, does not name %s", err, field)
		}
	}
	if _, err := Open(t.TempDir(), Options{BufferBytes: -1}); err == nil {
		t.Error("Open with bad options succeeded")
	}
	if err := (Options{MaxBytes: -1, FlushInterval: -1}).Validate(); err != nil {
		t.Errorf("Validate(negative MaxBytes, FlushInterval) = %v, want nil (both mean off)", err)
	}
}

// BenchmarkWrite is one goroutine's Write, the file's I/O included.
func BenchmarkWrite(b *testing.B) {
	w, err := Open(b.TempDir(), Options{Logger: quiet()})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	b.ReportAllocs()
	for b.Loop() {
		w.Write(&benchEntry)
	}
}

// BenchmarkWriteParallel is Write from GOMAXPROCS goroutines at once.
func BenchmarkWriteParallel(b *testing.B) {
	w, err := Open(b.TempDir(), Options{Logger: quiet()})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			w.Write(&benchEntry)
		}
	})
}
