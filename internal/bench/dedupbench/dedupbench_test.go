package dedupbench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/internal/testkit/trawlbin"
)

func TestMain(m *testing.M) { os.Exit(trawlbin.Main(m)) }

// TestBenchDedupTargets runs `trawl bench dedup` as a user does, on a
// small near-duplicate web, and holds its report to the near-duplicate gate's targets:
// recall of at least 0.95 for copies with up to 3% of their words changed
// (and for cross-host copies, whose words are the same), false positives
// on at most 1% of the ordinary and templated pages fetched, every page of
// the templated hosts fetched, and every exact copy flagged exact.
func TestBenchDedupTargets(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the trawl binary on a crawl: the full suite runs it")
	}
	t.Parallel()
	bin := trawlbin.Build(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "bench", "dedup", "--hosts", "15", "--seed", "3", "--latency", "0s", "--concurrency", "32", "--json")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if ctx.Err() != nil {
		t.Fatalf("bench dedup did not end within 3 minutes")
	}
	if err != nil {
		t.Fatalf("bench dedup: %v\n%s\n%s", err, out, stderr.Bytes())
	}
	var r Result
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("bench dedup --json: %v\n%s", err, out)
	}
	t.Logf("report: %s", out)
	if r.StopReason != "exhausted" || r.WebPages < 300 || r.CPUMsPerPage <= 0 {
		t.Fatalf("stop reason %q, %d pages, %.3f CPU-ms/page: want exhausted, at least 300 pages, CPU measured", r.StopReason, r.WebPages, r.CPUMsPerPage)
	}
	type named struct {
		name string
		row  Recall
	}
	rows := []named{{"cross-host copies", r.CrossHost}}
	for _, row := range r.BySize {
		rows = append(rows, named{fmt.Sprintf("copies at edit size %.2f", row.EditSize), row})
	}
	for _, x := range rows {
		if x.row.Fetched < 8 {
			t.Errorf("%s: %d fetched, too few to judge", x.name, x.row.Fetched)
		}
		if x.row.EditSize <= 0.03 && x.row.Recall < 0.95 {
			t.Errorf("%s: recall %.3f (%d of %d), want at least 0.95", x.name, x.row.Recall, x.row.Caught, x.row.Fetched)
		}
	}
	if r.FalsePositiveRate > 0.01 {
		t.Errorf("false positives: %d ordinary and %d templated pages flagged of %d fetched (%.3f), want at most 1%%",
			r.Ordinary.Flagged, r.Templated.Flagged, r.Ordinary.Fetched+r.Templated.Fetched, r.FalsePositiveRate)
	}
	if r.Templated.Coverage != 1 {
		t.Errorf("templated hosts: %d of %d pages fetched, want all", r.Templated.Fetched, r.Templated.Pages)
	}
	if r.Exact.Copies == 0 || r.Exact.CaughtExact != r.Exact.Copies {
		t.Errorf("exact copies: %d flagged exact of %d, want all", r.Exact.CaughtExact, r.Exact.Copies)
	}
	if r.WrongOriginal != 0 {
		t.Errorf("%d copies flagged against a page outside their group", r.WrongOriginal)
	}
}

// defaults are the Options of `trawl bench dedup` with no flags.
func defaults() Options {
	return Options{Seed: 1, Hosts: 60, Latency: time.Millisecond, Concurrency: 64}
}

// TestBenchDedupUsage: bad options are usage errors, named, before
// anything runs.
func TestBenchDedupUsage(t *testing.T) {
	for _, tt := range []struct {
		name string
		set  func(*Options)
		want string
	}{
		{"--hosts 0", func(o *Options) { o.Hosts = 0 }, "--hosts 0"},
		{"--docs missing", func(o *Options) { o.Docs = "/nonexistent/trawl-docs" }, "--docs /nonexistent/trawl-docs"},
		{"--docs testdata", func(o *Options) { o.Docs = "testdata" }, "no index.html"},
		{"--concurrency 0", func(o *Options) { o.Concurrency = 0 }, "--concurrency 0"},
	} {
		o := defaults()
		tt.set(&o)
		var out, errb bytes.Buffer
		if code := Main(o, &out, &errb); code != 2 || !strings.Contains(errb.String(), tt.want) {
			t.Errorf("bench dedup %s: exit %d, stderr %q; want 2 and %q", tt.name, code, errb.String(), tt.want)
		}
	}
}

// TestBenchDedupDocs runs --docs on a small tree of four pages, one a
// byte-for-byte copy of another: every page is fetched, the copy (or
// its original, whichever came second) is flagged exact with the same
// visible text, and no flag is false.
func TestBenchDedupDocs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the trawl binary on a crawl: the full suite runs it")
	}
	var out, errb bytes.Buffer
	o := defaults()
	o.Docs, o.Latency, o.JSON = "testdata/dedupdocs", 0, true
	if code := Main(o, &out, &errb); code != 0 {
		t.Fatalf("bench dedup --docs: exit %d\n%s", code, errb.Bytes())
	}
	var r DocsResult
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("bench dedup --docs --json: %v\n%s", err, out.Bytes())
	}
	if r.HTMLFetched != 4 || r.StopReason != "exhausted" {
		t.Errorf("%d HTML pages fetched (%s), want 4 (exhausted)", r.HTMLFetched, r.StopReason)
	}
	if len(r.Flagged) != 1 || r.FalsePositives != 0 {
		t.Fatalf("flagged %+v, %d false; want the guide's copy alone, flagged exact with the same text", r.Flagged, r.FalsePositives)
	}
	f := r.Flagged[0]
	pair := []string{strings.TrimPrefix(f.URL, "http://"), strings.TrimPrefix(f.Original, "http://")}
	if f.Dedup != "exact" || !f.SameText || f.TextWords < 40 ||
		!(strings.HasSuffix(pair[0], "/guide/copy.html") && strings.HasSuffix(pair[1], "/guide/") ||
			strings.HasSuffix(pair[0], "/guide/") && strings.HasSuffix(pair[1], "/guide/copy.html")) {
		t.Errorf("flag %+v: want the guide and its copy, exact, the same text", f)
	}
}

func TestVisibleText(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`<html><head><title>T</title></head><body><p>a  b</p>c</body></html>`, "a b c"},
		{`<body><script>var s = "x";</script><p>seen</p><style>p {}</style><noscript>no</noscript></body>`, "seen"},
		{`<p>one<br>two</p><!-- hidden -->`, "one two"},
		{``, ""},
	} {
		if got := visibleText([]byte(tt.in)); got != tt.want {
			t.Errorf("visibleText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
