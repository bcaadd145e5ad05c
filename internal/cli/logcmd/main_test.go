package logcmd

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/crawllog"
	"github.com/trawl-crawler/trawl/internal/testkit/golden"
)

// logT0 is the time of the first test entry; logNow is "now" for --since.
var (
	logT0  = time.Date(2026, 12, 2, 3, 4, 5, 0, time.UTC)
	logNow = logT0.Add(time.Hour)
)

// logEntries are a small crawl's log: two jobs, fetches of every kind and
// drops.
func logEntries() []crawllog.Entry {
	at := func(s int) time.Time { return logT0.Add(time.Duration(s) * time.Second) }
	return []crawllog.Entry{
		{Time: at(0), Job: 1, URL: "http://a.test/robots.txt", Robots: true, Status: 404, Bytes: 9, MIME: "text/plain", Duration: 3 * time.Millisecond},
		{Time: at(1), Job: 1, URL: "http://a.test/", Status: 200, Bytes: 5120, MIME: "text/html", Duration: 12345 * time.Microsecond,
			Digest: "sha256:AAAA", WARC: "trawl-1.warc.gz", Offset: 0},
		{Time: at(2), Job: 1, URL: "http://a.test/about", Status: 200, Bytes: 5120, MIME: "text/html", Duration: 8 * time.Millisecond, Depth: 1,
			Via: "http://a.test/", Digest: "sha256:AAAA", Dedup: crawllog.DedupExact, Original: "http://a.test/", WARC: "trawl-1.warc.gz", Offset: 2048},
		{Time: at(3), Job: 1, URL: "http://A.test:80/missing", Status: 404, Bytes: 120, MIME: "text/html", Duration: 4 * time.Millisecond, Depth: 1,
			Via: "http://a.test/", WARC: "trawl-1.warc.gz", Offset: 4096},
		{Time: at(4), Job: 1, URL: "https://b.test/slow", Error: "timeout", Duration: 30 * time.Second, Depth: 2, Via: "http://a.test/about"},
		{Time: at(5), Job: 1, URL: "https://b.test/big.iso", Status: 200, Error: crawllog.ErrTooLarge, Bytes: 10 << 20, MIME: "application/octet-stream",
			Duration: 2500 * time.Millisecond, Depth: 2, Via: "http://a.test/about", WARC: "trawl-1.warc.gz", Offset: 8192},
		{Time: at(6), Job: 1, URL: "http://a.test/private/x", Depth: 2, Via: "http://a.test/about", Dropped: crawllog.DropRobots},
		{Time: at(7), Job: 1, URL: "http://a.test/cal/2026/12", Depth: 5, Via: "http://a.test/cal/2026/11", Dropped: crawllog.DropTrap, Detail: "shape run > 3"},
		{Time: at(8), Job: 2, URL: "http://c.test/", Status: 503, Bytes: 0, Duration: 90 * time.Millisecond},
		{Time: at(9), Job: 2, URL: "http://c.test/news", Status: 200, Bytes: 40960, MIME: "text/html", Duration: 75 * time.Minute / 1000, Depth: 1,
			Via: "http://c.test/", Dedup: crawllog.DedupNear, Original: "http://c.test/old-news", WARC: "trawl-2.warc.gz", Offset: 123},
	}
}

// writeTestLog writes entries with the crawl log's own Writer, rotating
// often, into data/logs.
func writeTestLog(t *testing.T, data string, entries []crawllog.Entry) {
	t.Helper()
	w, err := crawllog.Open(filepath.Join(data, "logs"), crawllog.Options{MaxBytes: 1000, FlushInterval: -1,
		Now: func() time.Time { return logT0 }, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	for i := range entries {
		w.Write(&entries[i])
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// syncBuffer is a bytes.Buffer safe for one writer and one reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestLogCommand(t *testing.T) {
	data := t.TempDir()
	writeTestLog(t, data, logEntries())
	if files, _ := crawllog.Files(filepath.Join(data, "logs")); len(files) < 3 {
		t.Fatalf("the test log has %d files, want rotations", len(files))
	}
	var b strings.Builder
	for _, c := range []struct {
		flags string // as trawl log's, for the golden file
		o     Options
	}{
		{"", Options{}},
		{"--status 4xx,error", Options{Status: "4xx,error"}},
		{"--status dropped", Options{Status: "dropped"}},
		{"--host A.TEST --dedup none", Options{Host: "A.TEST", Dedup: "none"}},
		{"--job 2", Options{Job: 2}},
		{"--dedup any --json", Options{Dedup: "any", JSON: true}},
		{"--dropped trap", Options{Dropped: "trap"}},
		{"--since 2026-12-02T03:04:13Z", Options{Since: "2026-12-02T03:04:13Z"}},
		{"--since 59m52s", Options{Since: "59m52s"}},
		{"--count", Options{Count: true}},
		{"--job 1 --count --json", Options{Job: 1, Count: true, JSON: true}},
		{"--status 2x", Options{Status: "2x"}},
		{"--since yesterday", Options{Since: "yesterday"}},
		{"--count -f", Options{Count: true, Follow: true}},
	} {
		var out, errb bytes.Buffer
		c.o.Data, c.o.Now = data, func() time.Time { return logNow }
		code := Main(context.Background(), c.o, &out, &errb)
		fmt.Fprintf(&b, "trawl log %s\n----\n%sexit %d\n", c.flags, out.String(), code)
		if errb.Len() > 0 {
			fmt.Fprintf(&b, "stderr: %s", strings.ReplaceAll(errb.String(), data, "DATA"))
		}
		b.WriteString("\n")
	}
	golden.Check(t, "log.golden", b.String())
}

func TestLogCommandErrors(t *testing.T) {
	data := t.TempDir()
	o := Options{Data: data, Now: time.Now}
	var out, errb bytes.Buffer
	if code := Main(context.Background(), o, &out, &errb); code != 1 || !strings.Contains(errb.String(), "no crawl log in "+filepath.Join(data, "logs")) {
		t.Errorf("trawl log without a log = %d, stderr %q", code, errb.String())
	}

	writeTestLog(t, data, logEntries()[:2])
	f, err := os.OpenFile(filepath.Join(data, "logs", "crawl.log"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("not json\n" + `{"time":"2026-12-02T03:04:05Z","url":"http://a.test/half"`) // a bad line, then a partial one
	f.Close()
	out.Reset()
	errb.Reset()
	o.JSON = true
	code := Main(context.Background(), o, &out, &errb)
	if code != 0 || strings.Count(out.String(), "\n") != 2 {
		t.Errorf("trawl log with a malformed line = %d, stdout:\n%s", code, out.String())
	}
	if want := "crawl.log:3: skipped: crawllog: malformed line"; !strings.Contains(errb.String(), want) || strings.Count(errb.String(), "\n") != 1 {
		t.Errorf("stderr = %q, want one line with %q", errb.String(), want)
	}
}

// TestLogFollow: -f prints entries written after it started, through a
// rotation, and not the ones before (no --since); it ends at the
// context's end with status 0.
func TestLogFollow(t *testing.T) {
	data := t.TempDir()
	old := logEntries()
	writeTestLog(t, data, old) // before logNow: not shown

	ctx, cancel := context.WithCancel(context.Background())
	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, Options{Data: data, Follow: true, JSON: true, Job: 1, Now: func() time.Time { return logNow }}, &out, &errb)
	}()
	var fresh []crawllog.Entry
	for i, e := range old {
		e.Time = logNow.Add(time.Duration(i) * time.Second)
		fresh = append(fresh, e)
	}
	writeTestLog(t, data, fresh)
	want := 0
	var wantText strings.Builder
	for _, e := range fresh {
		if e.Job == 1 {
			want++
			wantText.Write(crawllog.AppendJSON(nil, &e))
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for strings.Count(out.String(), "\n") < want && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("trawl log -f = %d, stderr %s", code, errb.String())
	}
	if out.String() != wantText.String() {
		t.Errorf("trawl log -f printed\n%s\nwant\n%s", out.String(), wantText.String())
	}
}
