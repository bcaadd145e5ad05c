package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/trawl-crawler/trawl/internal/testkit/trawlbin"
)

func TestMain(m *testing.M) {
	// signal.NotifyContext starts os/signal's loop once per process; it is
	// not a leak of any one test.
	// The trawl binary serve_test.go builds is removed after the tests.
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("os/signal.signal_recv"), goleak.IgnoreTopFunction("os/signal.loop"),
		goleak.Cleanup(func(code int) { trawlbin.Clean(); os.Exit(code) }))
}

func TestUsage(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(nil, &out, &errb); code != 2 {
		t.Errorf("run() = %d, want 2", code)
	}
	for _, name := range []string{"crawl", "demo", "robots", "url", "testweb", "bench", "serve", "status", "crawls", "log"} {
		if !strings.Contains(errb.String(), "  "+name) {
			t.Errorf("usage does not list %q:\n%s", name, errb.String())
		}
	}
	errb.Reset()
	if code := run([]string{"help", "crawls", "create"}, &out, &errb); code != 0 || !strings.Contains(errb.String(), "usage: trawl crawls create") {
		t.Errorf("run(help crawls create) = %d, %q", code, errb.String())
	}
	errb.Reset()
	if code := run([]string{"nope"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), `unknown command "nope"`) {
		t.Errorf("run(nope) = %d, %q", code, errb.String())
	}
}

// TestDemo runs the README's first command on a small web with short gaps.
func TestDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the trawl binary on a crawl: the full suite runs it")
	}
	data := t.TempDir()
	var out, errb bytes.Buffer
	code := run([]string{"demo", "--hosts", "15", "--min-delay", "20ms", "--data", data, "--progress", "200ms"}, &out, &errb)
	if code != 0 {
		t.Fatalf("trawl demo = %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}
	for _, want := range []string{"crawl exhausted", "coverage 1.000", "no politeness problems", "x the critical path"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("demo output lacks %q:\n%s", want, out.String())
		}
	}
	if !strings.Contains(errb.String(), "pages/s") {
		t.Errorf("no progress lines on stderr:\n%s", errb.String())
	}
	var sum struct {
		Pages          int      `json:"pages"`
		StopReason     string   `json:"stop_reason"`
		WARCFiles      []string `json:"warc_files"`
		Revisits       int      `json:"revisits"`
		NearDuplicates int      `json:"near_duplicates"`
	}
	b, err := os.ReadFile(filepath.Join(data, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatalf("summary.json: %v", err)
	}
	if sum.Pages == 0 || sum.StopReason != "exhausted" || len(sum.WARCFiles) == 0 {
		t.Errorf("summary.json = %s", b)
	}
	// The web's exact and near copies: counted, and the summary printed
	// says what summary.json says (and the API would).
	if sum.Revisits == 0 || sum.NearDuplicates == 0 {
		t.Errorf("summary.json counts %d exact and %d near duplicates; the demo web has both", sum.Revisits, sum.NearDuplicates)
	}
	want := fmt.Sprintf("  duplicates  %d exact (revisit records), %d near (archived in full)\n", sum.Revisits, sum.NearDuplicates)
	if !strings.Contains(out.String(), want) {
		t.Errorf("the summary printed lacks %q:\n%s", want, out.String())
	}
}

func TestCrawlFlagErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{}, "no seeds"},
		{[]string{"--allow-net", "nonsense", "http://a.test/"}, "--allow-net"},
		{[]string{"--min-delay", "-1s", "http://a.test/"}, "negative"},
		{[]string{"--max-adaptive-delay", "0s", "http://a.test/"}, "--max-adaptive-delay"},
		{[]string{"--robots-give-up", "-1s", "http://a.test/"}, "--robots-give-up"},
		{[]string{"--warc-gzip-level", "0", "http://a.test/"}, "--warc-gzip-level 0"},
		{[]string{"--warc-gzip-level", "10", "http://a.test/"}, "--warc-gzip-level 10"},
		{[]string{"--seeds", "/nonexistent/seeds.txt"}, "/nonexistent/seeds.txt"},
		{[]string{"--data", "x", "--hosts", "/nonexistent/hosts", "http://a.test/"}, "/nonexistent/hosts"},
		{[]string{"--ca-file", "/nonexistent/ca.pem", "http://a.test/"}, `--ca-file "/nonexistent/ca.pem"`},
		{[]string{"--ca-file", "main_test.go", "http://a.test/"}, `--ca-file "main_test.go": no PEM certificate`},
	}
	for _, tt := range tests {
		var out, errb bytes.Buffer
		if code := run(append([]string{"crawl"}, tt.args...), &out, &errb); code != 2 || !strings.Contains(errb.String(), tt.want) {
			t.Errorf("trawl crawl %q = %d, stderr %q; want 2 and %q", tt.args, code, errb.String(), tt.want)
		}
	}
}

// trawl runs a subcommand in-process and returns its exit status and
// output.
func trawl(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}
