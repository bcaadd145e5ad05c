package main

import (
	"bytes"
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/internal/cli/apiclient"
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

// TestCrawlsCreateContinuous: `trawl crawls create --continuous` sends
// the recrawl settings, `crawls show` and `crawls stats` show them and
// the crawl waiting for recrawls, and a lone --recrawl flag is a usage
// error before any call.
func TestCrawlsCreateContinuous(t *testing.T) {
	_, data, web := startClientsServer(t)
	code, _, errb := trawl("crawls", "create", "--data", data, "--recrawl-min", "1h", web.Seeds()[0])
	if code != 2 || !strings.Contains(errb, "--recrawl-min 1h0m0s: only a continuous crawl recrawls: set --continuous") {
		t.Errorf("create --recrawl-min without --continuous = %d, stderr %q", code, errb)
	}
	args := append([]string{"crawls", "create", "--data", data, "--continuous", "--recrawl-min", "30m", "--recrawl-budget", "60",
		"--domain", web.Web().Options().Domain}, web.Seeds()...)
	code, out, errb := trawl(args...)
	if code != 0 || !strings.HasPrefix(out, "crawl 1 accepted") {
		t.Fatalf("create --continuous = %d\n%s%s", code, out, errb)
	}
	code, out, _ = trawl("crawls", "show", "1")
	if want := "recrawl    continuous: every 30m0s to 720h (default), at most 60 fetches/hour"; code != 0 || !strings.Contains(out, want) {
		t.Errorf("show 1 = %d, lacks %q:\n%s", code, want, out)
	}
	want := "recrawls    0: 0 not modified (304), 0 changed; waiting for recrawls"
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		code, out, _ = trawl("crawls", "stats", "1")
		if code == 0 && strings.Contains(out, want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("stats 1 never says %q:\n%s", want, out)
		}
	}
	if code, out, _ = trawl("status"); code != 0 || !strings.Contains(out, "running (waiting for recrawls)") {
		t.Errorf("status = %d, does not show the crawl waiting for recrawls:\n%s", code, out)
	}
}

// TestPrintRecrawls: the recrawl lines of `trawl crawls stats`.
func TestPrintRecrawls(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		st   apiclient.Stats
		want string
	}{
		{apiclient.Stats{}, ""},
		{apiclient.Stats{Recrawls: 3, NotModified: 2}, "  recrawls    3: 2 not modified (304), 0 changed\n"},
		{apiclient.Stats{Continuous: true, WaitingForRecrawls: true, Recrawls: 10, NotModified: 6, Changed: 3,
			Freshness: &apiclient.Freshness{At: at, Scheduled: 50, Due: 0, Freshness: 0.96, MeanAgeS: 4000}},
			"  recrawls    10: 6 not modified (304), 3 changed; waiting for recrawls\n" +
				"  freshness   96.0%, mean age 1h7m; 50 scheduled, 0 due, 0 overdue (as of 2026-12-01T10:00:00Z)\n"},
	} {
		var b strings.Builder
		printRecrawls(&b, c.st)
		if b.String() != c.want {
			t.Errorf("printRecrawls(%+v) = %q, want %q", c.st, b.String(), c.want)
		}
	}
}
