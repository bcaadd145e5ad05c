package cdxj

import (
	"crypto/sha256"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/trawl-crawler/trawl/internal/testkit/warccheck"
	"github.com/trawl-crawler/trawl/warc"
)

// indexingWriter returns a Writer on fsys that writes each finished file's
// index from its captures, as the node wires it; errors go to t.
func indexingWriter(t *testing.T, fsys vfs.FS, dir string) *warc.Writer {
	t.Helper()
	clock := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	w, err := warc.NewWriter(warc.Options{Dir: dir, FS: fsys, MaxFileSize: 8 << 10,
		Now: func() time.Time {
			clock = clock.Add(1500 * time.Millisecond)
			return clock
		},
		OnFinish: func(path string, caps []warc.Capture) {
			if err := WriteIndex(fsys, path, FromCaptures(path, caps)); err != nil {
				t.Error(err)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// withRevisits is indexExchanges with a revisit of the first after it.
func withRevisits() []warc.Exchange {
	exs := indexExchanges()
	sum := sha256.Sum256(exs[0].Body)
	exs[0].PayloadSHA256 = sum[:]
	exs[0].Date = time.Date(2024, 5, 6, 7, 0, 0, 0, time.UTC)
	rev := exs[0]
	rev.URL = "http://www.a.test/copy"
	rev.Date = exs[0].Date.Add(time.Hour)
	rev.Revisit = &warc.Revisit{TargetURI: exs[0].URL, Date: exs[0].Date}
	return append(exs, rev)
}

// readIndex reads the index file of warcPath on fsys.
func readIndex(t *testing.T, fsys vfs.FS, warcPath string) []string {
	t.Helper()
	f, err := fsys.Open(IndexPath(warcPath))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// reread is the index of warcPath on fsys built by reading it, sorted.
func reread(t *testing.T, fsys vfs.FS, warcPath string) []string {
	t.Helper()
	lines, err := indexFS(fsys, warcPath)
	if err != nil {
		t.Fatal(err)
	}
	Sort(lines)
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = l.String()
	}
	return out
}

// TestIndexesAsFilesClose: each file the Writer finishes gets its index
// beside it, built from the writer's captures, equal to the file's index
// read back; merged (LoadDir) they are warcio's index of the files,
// sorted, line for line.
func TestIndexesAsFilesClose(t *testing.T) {
	dir := t.TempDir()
	w := indexingWriter(t, nil, dir)
	for _, ex := range withRevisits() {
		if _, err := w.Write(&ex); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	files := w.Files()
	if len(files) < 3 {
		t.Fatalf("%d files, want rotation", len(files))
	}
	for _, f := range files {
		if got, want := readIndex(t, vfs.Default, f), reread(t, vfs.Default, f); !slices.Equal(got, want) {
			t.Errorf("%s: index written\n%s\nread back\n%s", f, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	want, err := warccheck.CDXIndex(files...)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(want)
	merged, missing, err := LoadDir(nil, dir)
	if err != nil || len(missing) > 0 {
		t.Fatalf("LoadDir: %v; missing %v", err, missing)
	}
	got := make([]string, len(merged))
	for i, l := range merged {
		got[i] = l.String()
	}
	if !slices.Equal(got, want) {
		t.Errorf("merged indexes\n%s\nwarcio, sorted\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n := len(withRevisits()); len(got) != n {
		t.Errorf("%d lines, want %d", len(got), n)
	}
}

// TestParseLine: every line String writes, odd characters included,
// parses back to itself.
func TestParseLine(t *testing.T) {
	dir := t.TempDir()
	files := append(writeIndexFiles(t, dir), revisitFile(t, dir))
	var lines []Line
	for _, f := range files {
		l, err := IndexFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, l...)
	}
	lines = append(lines, Line{SURT: "a b", Timestamp: "2024", URL: "x {y}", Length: 1, Offset: 0, Filename: "f {"})
	for _, l := range lines {
		got, err := ParseLine(l.String())
		if err != nil || got != l {
			t.Errorf("ParseLine(%q) = %+v, %v; want %+v", l.String(), got, err, l)
		}
	}
	for _, bad := range []string{"", "com,a)/ {}", "com,a)/ 2024", `com,a)/ 2024 {"length":"x","offset":"0"}`, "com,a)/ 2024 {"} {
		if l, err := ParseLine(bad); err == nil {
			t.Errorf("ParseLine(%q) = %+v, want an error", bad, l)
		}
	}
}

// TestIndexMissing: finished files without an index get one, read from
// the file; open files and files already indexed are left alone, and
// half-written indexes removed.
func TestIndexMissing(t *testing.T) {
	dir := t.TempDir()
	files := writeIndexFiles(t, dir) // no OnFinish: no index
	open := filepath.Join(dir, "x-00009.warc.gz"+warc.OpenSuffix)
	stale := IndexPath(files[0]) + tmpSuffix
	for _, f := range []string{open, stale} {
		if err := os.WriteFile(f, []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := WriteIndex(nil, files[1], []Line{{SURT: "kept", Timestamp: "1"}}); err != nil {
		t.Fatal(err)
	}
	written, err := IndexMissing(nil, dir)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for i, f := range files {
		if i != 1 {
			want = append(want, IndexPath(f))
			if got, want := readIndex(t, vfs.Default, f), reread(t, vfs.Default, f); !slices.Equal(got, want) {
				t.Errorf("%s: index\n%s\nwant\n%s", f, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		}
	}
	if !slices.Equal(written, want) {
		t.Errorf("IndexMissing wrote %v, want %v", written, want)
	}
	if got := readIndex(t, vfs.Default, files[1]); len(got) != 1 || !strings.HasPrefix(got[0], "kept 1 ") {
		t.Errorf("an existing index was rewritten: %q", got)
	}
	for _, f := range []string{stale, IndexPath(open)} {
		if _, err := os.Stat(f); !os.IsNotExist(err) {
			t.Errorf("%s: %v, want removed or never written", f, err)
		}
	}
	if again, err := IndexMissing(nil, dir); err != nil || len(again) > 0 {
		t.Errorf("second IndexMissing wrote %v, %v; want nothing", again, err)
	}
	if _, missing, err := LoadDir(nil, dir); err != nil || !slices.Equal(missing, []string{open}) {
		t.Errorf("LoadDir: missing %v, %v; want the open file", missing, err)
	}
}

// TestIndexCrash abandons a Writer mid-way (no Close, as a kill or a power
// cut leaves it) at several moments, keeping only what was synced. An
// index that survives describes exactly its file, which is finished and
// whole; after recovery (warc.Recover, then IndexMissing, as the node
// opens) every file has its index and the merged index is every record
// that survived, no line for bytes that did not.
func TestIndexCrash(t *testing.T) {
	exs := withRevisits()
	for _, tt := range []struct {
		name     string
		cutAfter int // exchanges written before the cut
		unsynced int // CrashCloneCfg.UnsyncedDataPercent
	}{
		{"early", 3, 0},
		{"mid", 20, 0},
		{"late", len(exs) - 1, 0},
		{"mid-partial-writes", 20, 50},
		{"late-partial-writes", len(exs) - 2, 80},
	} {
		t.Run(tt.name, func(t *testing.T) {
			mem := vfs.NewCrashableMem()
			const dir = "/w"
			w := indexingWriter(t, mem, dir)
			for i, ex := range exs[:tt.cutAfter] {
				loc, err := w.Write(&ex)
				if err != nil {
					t.Fatal(err)
				}
				if i == tt.cutAfter/2 {
					// Half of them durable for sure.
					if err := <-w.Durable(loc); err != nil {
						t.Fatal(err)
					}
				}
			}
			cfg := vfs.CrashCloneCfg{}
			if tt.unsynced > 0 {
				cfg = vfs.CrashCloneCfg{UnsyncedDataPercent: tt.unsynced, RNG: rand.New(rand.NewPCG(uint64(tt.cutAfter), 1))}
			}
			cut := mem.CrashClone(cfg)
			defer w.Close() // the abandoned writer's goroutine

			names, err := cut.List(dir)
			if err != nil {
				t.Fatal(err)
			}
			indexed := 0
			for _, name := range names {
				warcName, ok := strings.CutSuffix(name, IndexSuffix)
				if !ok {
					continue
				}
				indexed++
				path := cut.PathJoin(dir, warcName)
				if !slices.Contains(names, warcName) {
					t.Fatalf("index %s survived without its finished file (%v)", name, names)
				}
				if got, want := readIndex(t, cut, path), reread(t, cut, path); !slices.Equal(got, want) {
					t.Errorf("%s after the cut:\n%s\nthe file holds\n%s", name, strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
			}

			if _, err := warc.RecoverFS(cut, dir); err != nil {
				t.Fatal(err)
			}
			written, err := IndexMissing(cut, dir)
			if err != nil {
				t.Fatal(err)
			}
			merged, missing, err := LoadDir(cut, dir)
			if err != nil || len(missing) > 0 {
				t.Fatalf("after recovery: LoadDir: %v; missing %v", err, missing)
			}
			names, _ = cut.List(dir)
			var want []string
			for _, name := range names {
				if strings.HasSuffix(name, warc.Extension) {
					want = append(want, reread(t, cut, cut.PathJoin(dir, name))...)
				}
			}
			slices.Sort(want)
			got := make([]string, len(merged))
			for i, l := range merged {
				got[i] = l.String()
			}
			if !slices.Equal(got, want) {
				t.Errorf("merged index after recovery\n%s\nthe files hold\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if len(got) < tt.cutAfter/2+1 {
				t.Errorf("%d lines after recovery; %d exchanges were durable", len(got), tt.cutAfter/2+1)
			}
			t.Logf("%d indexes survived the cut, %d written at recovery; %d of %d exchanges indexed", indexed, len(written), len(got), tt.cutAfter)
		})
	}
}

// BenchmarkWriteIndex is the index of a 1 GiB WARC file of 40 KB pages
// (about 25,000 records) built from captures and written (sorted, one
// fsync, rename, directory sync): per op, per file; ns/line is per page.
func BenchmarkWriteIndex(b *testing.B) {
	const n = 25000
	caps := make([]warc.Capture, n)
	for i := range caps {
		caps[i] = warc.Capture{Type: "response", URL: fmt.Sprintf("http://h%04d.test/page/%d?q=%d", i%2000, i, i%7),
			Date: "2024-05-06T07:08:09.000000Z", PayloadDigest: "sha256:ABCDEFGHIJKLMNOPQRSTUVWXYZ234567ABCDEFGHIJKLMNOPQRSTUVWX",
			HTTP: &warc.HTTPHead{Status: 200, ContentType: "text/html; charset=utf-8"}, Offset: int64(i) * 40000, Length: 40000}
	}
	path := filepath.Join(b.TempDir(), "x.warc.gz")
	b.ReportAllocs()
	for b.Loop() {
		if err := WriteIndex(nil, path, FromCaptures(path, caps)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/line")
}
