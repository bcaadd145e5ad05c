package crawlbench

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/internal/bench/cpustages"
	"github.com/trawl-crawler/trawl/internal/testkit/trawlbin"
)

func TestMain(m *testing.M) { os.Exit(trawlbin.Main(m)) }

// TestBenchCrawlEnds runs `trawl bench crawl` as a user does, on a small
// web whose 13th host (the tenth small one) answers robots.txt with 500 for
// ever: the crawl must give that host up and end (with --robots-give-up 0
// it would not), and report figures taken from a web served by its own
// process.
func TestBenchCrawlEnds(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the trawl binary on a crawl: the full suite runs it")
	}
	t.Parallel()
	bin := trawlbin.Build(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// A baseline of 1000 CPU-ms/page: the guard runs and passes.
	base := filepath.Join(t.TempDir(), "baseline.json")
	if err := os.WriteFile(base, []byte(`{"cpu_ms_per_page": 1000}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, bin, "bench", "crawl", "--hosts", "14", "--concurrency", "16",
		"--robots-give-up", "2s", "--json", "--baseline", base)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if ctx.Err() != nil {
		t.Fatalf("bench crawl did not end within 3 minutes (a host it never gave up?)")
	}
	if err != nil {
		t.Fatalf("bench crawl: %v\n%s\n%s", err, out, stderr.Bytes())
	}
	if !strings.Contains(stderr.String(), "bench crawl guard:") || !strings.Contains(stderr.String(), "(limit 2000.000): ok") {
		t.Errorf("stderr has no passing guard line:\n%s", stderr.Bytes())
	}
	var r Result
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("bench crawl --json: %v\n%s", err, out)
	}
	if r.StopReason != "exhausted" {
		t.Errorf("stop_reason = %q, want exhausted", r.StopReason)
	}
	if r.Hosts != 14 || r.Pages < 20 || r.Requests < r.Pages {
		t.Errorf("hosts %d, pages %d, requests %d: want 14 hosts, at least 20 pages, requests >= pages", r.Hosts, r.Pages, r.Requests)
	}
	if r.WARCBytes <= 0 || r.FetchedBytes <= 0 || r.RSSPeakBytes <= 0 {
		t.Errorf("warc_bytes %d, fetched_bytes %d, rss_peak_bytes %d: want all > 0", r.WARCBytes, r.FetchedBytes, r.RSSPeakBytes)
	}
	var stages float64
	for _, st := range cpustages.Order {
		v, ok := r.StageCPUMsPerPage[st]
		if !ok || v < 0 {
			t.Errorf("stage %q: %v (present %v), want a figure >= 0", st, v, ok)
		}
		stages += v
	}
	// The profile samples the same CPU time rusage counts (100 Hz, so a
	// little is missed); the stages cannot add up to much more.
	if stages <= 0 || stages > 1.2*r.CPUMsPerPage {
		t.Errorf("stages add up to %.3f CPU-ms/page, rusage says %.3f", stages, r.CPUMsPerPage)
	}
	if r.CPUMsPerPage <= 0 || r.CPUSeconds <= 0 || !r.ServerProcess || r.ServerCPUSec <= 0 {
		t.Errorf("figures missing: cpu_ms_per_page %v, cpu_s %v, server process %v, server cpu %v",
			r.CPUMsPerPage, r.CPUSeconds, r.ServerProcess, r.ServerCPUSec)
	}
	// Every page allocates (a body, a record); a KiB a page is far below
	// what a page of the web costs, so a figure under it was not read.
	if r.AllocsPerPage < 1 || r.AllocBytesPerPage < 1024 || r.MutexWaitMsPerPage < 0 ||
		math.Abs(r.PagesPerCPUSec*r.CPUMsPerPage-1000) > 1e-6 {
		t.Errorf("runtime figures: %v allocations and %v bytes a page, %v ms of lock waits a page, %v pages per CPU-second at %v CPU-ms/page",
			r.AllocsPerPage, r.AllocBytesPerPage, r.MutexWaitMsPerPage, r.PagesPerCPUSec, r.CPUMsPerPage)
	}
}

// TestBenchCrawlBaselineErrors: a baseline that cannot be read or holds no
// figure is refused before anything runs.
func TestBenchCrawlBaselineErrors(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.json")
	if err := os.WriteFile(empty, []byte(`{"pages": 3}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ path, want string }{
		{filepath.Join(dir, "missing.json"), "missing.json"},
		{empty, "no cpu_ms_per_page"},
	} {
		var out, errb bytes.Buffer
		if code := Main(Options{Baseline: tt.path, RobotsGiveUp: 4 * time.Second}, &out, &errb); code != 2 || !strings.Contains(errb.String(), tt.want) {
			t.Errorf("--baseline %s: exit %d, stderr %q; want 2 and %q", tt.path, code, errb.String(), tt.want)
		}
	}
}
