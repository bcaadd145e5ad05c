package crawllog

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestFilterMatch(t *testing.T) {
	fetch := Entry{Time: t0, Job: 2, URL: "http://WWW.A.test:8080/x", Status: 404}
	revisit := Entry{Time: t0, Job: 1, URL: "https://b.test/", Status: 200, Dedup: DedupExact, Usage: "ai-train=deny,search=allow", Denied: "ai-train"}
	near := Entry{Time: t0, Job: 1, URL: "https://b.test/n", Status: 200, Dedup: DedupNear, Usage: "search=allow"}
	same := Entry{Time: t0, Job: 1, URL: "https://b.test/s", Status: 304, Dedup: DedupNotModified, Original: "https://b.test/s"}
	failed := Entry{Time: t0, Job: 1, URL: "http://[::1]:99/", Error: "timeout"}
	cut := Entry{Time: t0, Job: 1, URL: "http://a.test/big", Status: 200, Error: ErrTooLarge}
	drop := Entry{Time: t0.Add(time.Hour), Job: 3, URL: "http://c.test/cal", Dropped: DropTrap}
	all := []Entry{fetch, revisit, near, same, failed, cut, drop}
	tests := []struct {
		name string
		f    Filter
		want []Entry
	}{
		{"zero filter", Filter{}, all},
		{"job", Filter{Job: 1}, []Entry{revisit, near, same, failed, cut}},
		{"host, case and port ignored", Filter{Host: "www.a.TEST:1"}, []Entry{fetch}},
		{"IPv6 host", Filter{Host: "[::1]"}, []Entry{failed}},
		{"status", Filter{Status: "200"}, []Entry{revisit, near, cut}},
		{"status class", Filter{Status: "4xx"}, []Entry{fetch}},
		{"status list", Filter{Status: "4xx,error"}, []Entry{fetch, failed, cut}},
		{"error", Filter{Status: "error"}, []Entry{failed, cut}},
		{"dropped status", Filter{Status: "dropped"}, []Entry{drop}},
		{"dedup any", Filter{Dedup: "any"}, []Entry{revisit, near, same}},
		{"dedup near", Filter{Dedup: "near"}, []Entry{near}},
		{"dedup not-modified", Filter{Dedup: "not-modified"}, []Entry{same}},
		{"status 3xx", Filter{Status: "3xx"}, []Entry{same}},
		{"dedup none", Filter{Dedup: "none"}, []Entry{fetch, failed, cut, drop}},
		{"dropped any", Filter{Dropped: "any"}, []Entry{drop}},
		{"dropped reason", Filter{Dropped: "robots,trap"}, []Entry{drop}},
		{"dropped other reason", Filter{Dropped: "scope"}, nil},
		{"since", Filter{Since: t0.Add(time.Minute)}, []Entry{drop}},
		{"since, at the time", Filter{Since: t0}, all},
		{"usage any", Filter{Usage: "any"}, []Entry{revisit, near}},
		{"usage denied", Filter{Usage: "denied"}, []Entry{revisit}},
		{"usage pair", Filter{Usage: "search=allow"}, []Entry{revisit, near}},
		{"usage pairs", Filter{Usage: "ai-train=deny,archive=deny"}, []Entry{revisit}},
		{"usage other pair", Filter{Usage: "search=deny"}, nil},
		{"all together", Filter{Job: 1, Host: "b.test", Status: "2xx", Dedup: "exact"}, []Entry{revisit}},
	}
	for _, tt := range tests {
		if err := tt.f.Validate(); err != nil {
			t.Errorf("%s: Validate = %v", tt.name, err)
		}
		var got []Entry
		for _, e := range all {
			if tt.f.Match(&e) {
				got = append(got, e)
			}
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: %+v matches\n%v\nwant\n%v", tt.name, tt.f, urls(got), urls(tt.want))
		}
	}
}

func urls(es []Entry) []string {
	var s []string
	for _, e := range es {
		s = append(s, e.URL)
	}
	return s
}

func TestFilterValidate(t *testing.T) {
	err := Filter{Status: "200,2x,abc", Dedup: "maybe", Dropped: "any,tired", Usage: "ai-train=maybe"}.Validate()
	for _, want := range []string{`Status "2x"`, `Status "abc"`, `Dedup "maybe"`, `Dropped "tired"`, `Usage "ai-train=maybe"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate = %v, does not say %s", err, want)
		}
	}
	if err := Scan(t.TempDir(), Filter{Dedup: "x"}, nil); err == nil {
		t.Error("Scan with a bad filter = nil")
	}
}

func TestFiles(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"crawl.log", "crawl-20261202T030405Z-10000.log", "crawl-20261202T030405Z-9999.log",
		"crawl-20261201T235959Z-0000.log", "crawl-2026-0000.log", "crawl.log.1", "notes.txt", "crawl-20261202T030405Z-+001.log"} {
		os.WriteFile(filepath.Join(dir, n), nil, 0o644)
	}
	os.Mkdir(filepath.Join(dir, "crawl-20261203T000000Z-0000.log"), 0o755)
	files, err := Files(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f))
	}
	want := []string{"crawl-20261201T235959Z-0000.log", "crawl-20261202T030405Z-9999.log", "crawl-20261202T030405Z-10000.log", "crawl.log"}
	if !slices.Equal(names, want) {
		t.Errorf("Files = %q, want %q", names, want)
	}
	if _, err := Files(filepath.Join(dir, "none")); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "none")) {
		t.Errorf("Files(missing dir) = %v, want an error naming it", err)
	}
}

// writeLog writes a rotated file and crawl.log by hand.
func writeLog(t *testing.T, dir string, rotated, current string) {
	t.Helper()
	os.WriteFile(filepath.Join(dir, "crawl-20261202T030405Z-0000.log"), []byte(rotated), 0o644)
	os.WriteFile(filepath.Join(dir, Name), []byte(current), 0o644)
}

func line(i int) string { return string(AppendJSON(nil, entry(i))) }

func TestScanPartialAndBadLines(t *testing.T) {
	dir := t.TempDir()
	half := line(9)[:40]
	writeLog(t, dir,
		line(0)+"{not json}\n"+"\n"+line(1)+half,                    // a rotated file cut mid-line: reported
		line(2)+`{"time":"2026-12-02T03:04:05Z"}`+"\n"+line(3)+half) // crawl.log still being written: silent
	var got []int
	collect := func(e Entry) error {
		var n int
		fmt.Sscanf(e.URL, "http://a.test/page/%d", &n)
		got = append(got, n)
		return nil
	}
	var bad []string
	err := Scan(dir, Filter{OnBad: func(file string, line int, err error) {
		bad = append(bad, fmt.Sprintf("%s:%d: %v", filepath.Base(file), line, err))
	}}, collect)
	if err != nil || !slices.Equal(got, []int{0, 1, 2, 3}) {
		t.Errorf("Scan = %v, %v", got, err)
	}
	want := []string{
		"crawl-20261202T030405Z-0000.log:2: crawllog: malformed line: invalid character 'n' looking for beginning of object key string",
		"crawl-20261202T030405Z-0000.log:5: crawllog: malformed line: the file ends inside this line",
		"crawl.log:2: crawllog: malformed line: field url missing",
	}
	if !slices.Equal(bad, want) {
		t.Errorf("OnBad got\n%s\nwant\n%s", strings.Join(bad, "\n"), strings.Join(want, "\n"))
	}

	got = nil
	err = Scan(dir, Filter{}, collect)
	var ble *BadLinesError
	if !errors.As(err, &ble) || ble.N != 3 || !strings.Contains(ble.First, "crawl-20261202T030405Z-0000.log:2:") {
		t.Errorf("Scan without OnBad = %v, want a BadLinesError of 3", err)
	}
	if !slices.Equal(got, []int{0, 1, 2, 3}) {
		t.Errorf("Scan without OnBad read %v", got)
	}

	stop := errors.New("stop")
	n := 0
	if err := Scan(dir, Filter{}, func(Entry) error { n++; return stop }); err != stop || n != 1 {
		t.Errorf("Scan whose fn fails = %v after %d calls, want stop after 1", err, n)
	}
	if err := Scan(filepath.Join(dir, "none"), Filter{}, collect); err == nil || !strings.Contains(err.Error(), "none") {
		t.Errorf("Scan(missing dir) = %v", err)
	}
}

func TestScanLongLine(t *testing.T) {
	defer func(n int) { maxLine = n }(maxLine)
	maxLine = 1000
	dir := t.TempDir()
	long := `{"time":"2026-12-02T03:04:05Z","url":"` + strings.Repeat("x", maxLine) + `"}` + "\n"
	writeLog(t, dir, line(0)+long+line(1), "")
	var got []string
	err := Scan(dir, Filter{}, func(e Entry) error { got = append(got, e.URL); return nil })
	var ble *BadLinesError
	if !errors.As(err, &ble) || ble.N != 1 || !strings.Contains(ble.First, "longer than") || len(got) != 2 {
		t.Errorf("Scan = %d entries, %v", len(got), err)
	}
}

// follow runs Follow in the background and collects page numbers.
type follow struct {
	mu     sync.Mutex
	got    []int
	cancel context.CancelFunc
	done   chan error
}

func startFollow(dir string, f Filter) *follow {
	ctx, cancel := context.WithCancel(context.Background())
	fw := &follow{cancel: cancel, done: make(chan error, 1)}
	go func() {
		fw.done <- Follow(ctx, dir, f, func(e Entry) error {
			var n int
			fmt.Sscanf(e.URL, "http://a.test/page/%d", &n)
			fw.mu.Lock()
			fw.got = append(fw.got, n)
			fw.mu.Unlock()
			return nil
		})
	}()
	return fw
}

// waitFor polls until Follow has delivered n entries, or fails after a
// deadline; it returns them.
func (fw *follow) waitFor(t *testing.T, n int) []int {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		fw.mu.Lock()
		got := slices.Clone(fw.got)
		fw.mu.Unlock()
		if len(got) >= n || time.Now().After(deadline) {
			return got
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (fw *follow) stop(t *testing.T) {
	t.Helper()
	fw.cancel()
	if err := <-fw.done; !errors.Is(err, context.Canceled) {
		t.Errorf("Follow returned %v, want context.Canceled", err)
	}
}

// TestFollow starts following before the directory exists and sees the
// lines written after, across rotations, in order and once each.
func TestFollow(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "logs")
	fw := startFollow(dir, Filter{Job: 1})
	defer fw.stop(t)
	c := &clock{t: t0}
	w := mustOpen(t, dir, Options{MaxBytes: 600, FlushInterval: -1, Now: c.now})
	for i := range 5 {
		w.Write(entry(i))
	}
	w.Write(&Entry{Time: t0, Job: 2, URL: "http://a.test/page/999"}) // filtered out
	w.Flush()
	if got := fw.waitFor(t, 5); !slices.Equal(got, seq(0, 5)) {
		t.Fatalf("Follow saw %v, want 0..4", got)
	}
	// Rotations, several between two polls.
	for i := 5; i < 40; i++ {
		w.Write(entry(i))
	}
	w.Flush()
	if got := fw.waitFor(t, 40); !slices.Equal(got, seq(0, 40)) {
		t.Fatalf("Follow saw %v, want 0..39", got)
	}
	if w.Stats().Rotations < 3 {
		t.Errorf("only %d rotations", w.Stats().Rotations)
	}
}

// TestReaderPartialLine: a line read in two halves, as a poll may find
// it, is delivered once, whole.
func TestReaderPartialLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), Name)
	l := line(1)
	os.WriteFile(path, []byte(line(0)+l[:20]), 0o644)
	r, err := openReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	var got []string
	var bad []error
	fn := func(e Entry) error { got = append(got, e.URL); return nil }
	onBad := func(_ string, _ int, err error) { bad = append(bad, err) }
	if err := r.next(&Filter{}, fn, onBad); err != nil || len(got) != 1 {
		t.Fatalf("first read: %v, %v", got, err)
	}
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(l[20:] + line(2))
	f.Close()
	if err := r.next(&Filter{}, fn, onBad); err != nil || !slices.Equal(got, []string{entry(0).URL, entry(1).URL, entry(2).URL}) || bad != nil || r.line != 3 {
		t.Errorf("after the rest was written: %v, bad %v, %v, line %d", got, bad, err, r.line)
	}
}

// TestFollowWhileWriting: concurrent writes with rotation while Follow
// reads; it sees every line once, in order.
func TestFollowWhileWriting(t *testing.T) {
	dir := t.TempDir()
	w := mustOpen(t, dir, Options{MaxBytes: 4 << 10, BufferBytes: 512, FlushInterval: time.Millisecond})
	for i := range 100 {
		w.Write(entry(i))
	}
	fw := startFollow(dir, Filter{})
	defer fw.stop(t)
	for i := 100; i < 2000; i++ {
		w.Write(entry(i))
	}
	w.Close()
	if got := fw.waitFor(t, 2000); !slices.Equal(got, seq(0, 2000)) {
		t.Fatalf("Follow saw %d lines, want 0..1999 in order; first differences near %v", len(got), firstDiff(got, seq(0, 2000)))
	}
}

func firstDiff(a, b []int) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func TestFollowStopsOnFnError(t *testing.T) {
	dir := t.TempDir()
	writeLog(t, dir, line(0), line(1))
	stop := errors.New("enough")
	if err := Follow(context.Background(), dir, Filter{}, func(Entry) error { return stop }); err != stop {
		t.Errorf("Follow = %v, want fn's error", err)
	}
}

// BenchmarkScan reads a log of 10000 typical lines; ns/op is per line.
func BenchmarkScan(b *testing.B) {
	dir := b.TempDir()
	w, err := Open(dir, Options{FlushInterval: -1, Logger: quiet()})
	if err != nil {
		b.Fatal(err)
	}
	const lines = 10000
	for range lines {
		w.Write(&benchEntry)
	}
	w.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N/lines + 1 {
		n := 0
		if err := Scan(dir, Filter{Status: "5xx"}, func(Entry) error { n++; return nil }); err != nil || n != 0 {
			b.Fatal(n, err)
		}
	}
}
