package crawlrun

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/internal/testkit/testweb"
	"github.com/trawl-crawler/trawl/job"
	"github.com/trawl-crawler/trawl/node"
)

// lockedBuffer is a bytes.Buffer safe to write from Run's progress
// display while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestRunContinuous runs a continuous crawl over a small web: once every
// page is fetched it keeps running, its progress lines saying it waits
// for recrawls, until ctx ends; it then stops with no error, a summary
// that says so, and a state that the same Run resumes.
func TestRunContinuous(t *testing.T) {
	web, err := testweb.Serve(testweb.Generate(testweb.Options{Seed: 4, Hosts: 5, Latency: -1}), testweb.ServeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	data := t.TempDir()
	spec := job.Defaults()
	spec.Name, spec.Seeds, spec.Domains = "crawl", web.Seeds(), []string{web.Web().Options().Domain}
	spec.Continuous, spec.RecrawlMin = true, 2*time.Hour
	o := Options{
		Node: node.Options{DataDir: data, MinDelay: 20 * time.Millisecond, Hosts: web.Resolver(),
			AllowNets: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}},
		Spec: spec, Progress: 20 * time.Millisecond,
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out bytes.Buffer
	var errb lockedBuffer
	done := make(chan error, 1)
	go func() { done <- Run(ctx, o, &out, &errb) }()
	// Each progress line is drawn while the crawl runs: three that say it
	// waits show it did not end when its frontier emptied.
	for deadline := time.Now().Add(time.Minute); strings.Count(errb.String(), "waiting for recrawls") < 3; {
		select {
		case err := <-done:
			t.Fatalf("the continuous crawl ended by itself: %v\n%s\n%s", err, out.String(), errb.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no progress line says the crawl waits for recrawls:\n%s", errb.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel() // Ctrl-C
	if err := <-done; err != nil {
		t.Fatalf("the continuous crawl after the signal: %v\n%s", err, errb.String())
	}
	for _, want := range []string{"crawl signal after", "recrawls    0: 0 not modified (304), 0 changed",
		"  warc        ", "  summary     " + data + "/summary.json\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, out.String())
		}
	}
	if !strings.Contains(errb.String(), "runs until Ctrl-C or SIGTERM") {
		t.Errorf("stderr does not say how the continuous crawl ends:\n%s", errb.String())
	}
	var sum struct {
		Pages      int64  `json:"pages"`
		StopReason string `json:"stop_reason"`
		Continuous bool   `json:"continuous"`
	}
	b, err := os.ReadFile(filepath.Join(data, "summary.json"))
	if err != nil || json.Unmarshal(b, &sum) != nil || sum.Pages == 0 || sum.StopReason != job.ReasonSignal || !sum.Continuous {
		t.Errorf("summary.json = %s (%v), want pages, stop_reason signal, continuous", b, err)
	}

	// The same Run again resumes the crawl: nothing is left to fetch, so
	// it goes straight back to waiting.
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	var errb2 lockedBuffer
	go func() { done <- Run(ctx2, o, io.Discard, &errb2) }()
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(errb2.String(), "waiting for recrawls"); {
		if time.Now().After(deadline) {
			t.Fatalf("the resumed crawl does not wait for recrawls:\n%s", errb2.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(errb2.String(), " 0 queued ") {
		t.Errorf("the resumed crawl queued pages again:\n%s", errb2.String())
	}
	cancel2()
	if err := <-done; err != nil {
		t.Fatalf("the resumed continuous crawl: %v\n%s", err, errb2.String())
	}
}

// TestRunFails: a spec the node refuses is Run's error, and no summary is
// printed.
func TestRunFails(t *testing.T) {
	var out bytes.Buffer
	err := Run(context.Background(), Options{Node: node.Options{DataDir: t.TempDir()}, Spec: job.Spec{Name: "crawl"}}, &out, io.Discard)
	if err == nil || out.Len() > 0 {
		t.Errorf("Run without seeds = %v, stdout %q; want an error and no summary", err, out.String())
	}
}

// TestPrintSummary: the optional lines show only when there is something
// to say.
func TestPrintSummary(t *testing.T) {
	var b strings.Builder
	printSummary(&b, nil, "d")
	if b.Len() > 0 {
		t.Errorf("printSummary(nil) = %q, want nothing", b.String())
	}
	s := &node.Summary{StopReason: "exhausted", Error: "boom"}
	s.Pages, s.RobotsGaveUp, s.RobotsGaveUpOn = 3, 2, 1
	printSummary(&b, s, "data/")
	got := b.String()
	for _, want := range []string{"crawl exhausted after", "  pages       3 ", "whose robots.txt stayed unavailable",
		"  summary     data/summary.json\n", "  error       boom\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
	for _, not := range []string{"recrawls", "freshness", "shared", "past --max-wait"} {
		if strings.Contains(got, not) {
			t.Errorf("summary of a one-off crawl has %q:\n%s", not, got)
		}
	}
}
