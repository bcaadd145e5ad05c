package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/internal/testkit/testweb"
	"github.com/trawl-crawler/trawl/job"
)

// TestRecrawlFlags: --continuous and its --recrawl flags make the spec, and
// a bad or lone --recrawl flag is a usage error that names it.
func TestRecrawlFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want job.Spec // the recrawl fields
		err  string
	}{
		{nil, job.Spec{}, ""},
		{[]string{"--continuous"}, job.Spec{Continuous: true}, ""},
		{[]string{"--continuous", "--recrawl-min", "6h", "--recrawl-max", "240h", "--recrawl-budget", "500"},
			job.Spec{Continuous: true, RecrawlMin: 6 * time.Hour, RecrawlMax: 240 * time.Hour, RecrawlBudget: 500}, ""},
		{[]string{"--recrawl-min", "1h"}, job.Spec{}, "--recrawl-min 1h0m0s: only a continuous crawl recrawls: set --continuous"},
		{[]string{"--recrawl-budget", "3"}, job.Spec{}, "--recrawl-budget 3: only a continuous crawl recrawls: set --continuous"},
		{[]string{"--continuous", "--recrawl-min", "-1h"}, job.Spec{}, "--recrawl-min -1h0m0s is negative"},
		{[]string{"--continuous", "--recrawl-max", "-1s"}, job.Spec{}, "--recrawl-max -1s is negative"},
		{[]string{"--continuous", "--recrawl-min", "2h", "--recrawl-max", "1h"}, job.Spec{}, "--recrawl-min 2h0m0s is above --recrawl-max 1h0m0s"},
		{[]string{"--continuous", "--recrawl-budget", "-5"}, job.Spec{}, "--recrawl-budget -5: want 0 (none)"},
		{[]string{"--continuous", "--recrawl-budget", "NaN"}, job.Spec{}, "--recrawl-budget NaN"},
		{[]string{"--continuous", "--recrawl-budget", "+Inf"}, job.Spec{}, "--recrawl-budget +Inf"},
	} {
		fs := flag.NewFlagSet("crawl", flag.ContinueOnError)
		var a crawlArgs
		a.register(fs)
		if err := fs.Parse(c.args); err != nil {
			t.Fatalf("parse %q: %v", c.args, err)
		}
		_, spec, err := a.options([]string{"http://a.test/"})
		got := job.Spec{Continuous: spec.Continuous, RecrawlMin: spec.RecrawlMin, RecrawlMax: spec.RecrawlMax, RecrawlBudget: spec.RecrawlBudget}
		switch {
		case c.err == "" && (err != nil || got.Continuous != c.want.Continuous || got.RecrawlMin != c.want.RecrawlMin ||
			got.RecrawlMax != c.want.RecrawlMax || got.RecrawlBudget != c.want.RecrawlBudget):
			t.Errorf("trawl crawl %q: spec %+v, err %v; want %+v", c.args, got, err, c.want)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("trawl crawl %q: err %v, want %q", c.args, err, c.err)
		}
	}
	var out, errb bytes.Buffer
	if code := run([]string{"crawl", "--recrawl-max", "1h", "http://a.test/"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "set --continuous") {
		t.Errorf("trawl crawl --recrawl-max without --continuous = %d, stderr %q; want 2 and the reason", code, errb.String())
	}
}

// TestCrawlContinuous runs `trawl crawl --continuous` (runCrawl with its
// flags) over a small web: once every page is fetched it keeps running,
// its progress lines saying it waits for recrawls, until the signal; it
// then stops with exit 0, a summary that says so, and a state that the
// same command resumes.
func TestCrawlContinuous(t *testing.T) {
	web, err := testweb.Serve(testweb.Generate(testweb.Options{Seed: 4, Hosts: 5, Latency: -1}), testweb.ServeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	data := t.TempDir()
	fs := flag.NewFlagSet("crawl", flag.ContinueOnError)
	var a crawlArgs
	a.register(fs)
	if err := fs.Parse([]string{"--continuous", "--recrawl-min", "2h", "--data", data, "--min-delay", "20ms", "--allow-net", "127.0.0.0/8"}); err != nil {
		t.Fatal(err)
	}
	opts, spec, err := a.options(web.Seeds())
	if err != nil {
		t.Fatal(err)
	}
	opts.Hosts = web.Resolver()
	spec.Domains = []string{web.Web().Options().Domain}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out bytes.Buffer
	var errb syncBuffer
	done := make(chan int, 1)
	go func() { done <- runCrawl(ctx, opts, spec, 20*time.Millisecond, &out, &errb) }()
	// Each progress line is drawn while the crawl runs: three that say it
	// waits show it did not end when its frontier emptied.
	for deadline := time.Now().Add(time.Minute); strings.Count(errb.String(), "waiting for recrawls") < 3; {
		select {
		case code := <-done:
			t.Fatalf("trawl crawl --continuous ended by itself: exit %d\n%s\n%s", code, out.String(), errb.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no progress line says the crawl waits for recrawls:\n%s", errb.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel() // Ctrl-C
	if code := <-done; code != 0 {
		t.Fatalf("trawl crawl --continuous after the signal = %d\n%s", code, errb.String())
	}
	for _, want := range []string{"crawl signal after", "recrawls    0: 0 not modified (304), 0 changed"} {
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

	// The same command again resumes the crawl: nothing is left to fetch,
	// so it goes straight back to waiting.
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	var errb2 syncBuffer
	go func() { done <- runCrawl(ctx2, opts, spec, 20*time.Millisecond, io.Discard, &errb2) }()
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
	if code := <-done; code != 0 {
		t.Fatalf("resumed trawl crawl --continuous = %d\n%s", code, errb2.String())
	}
}
