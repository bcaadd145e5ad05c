package main

import (
	"bytes"
	"flag"
	"strings"
	"testing"
	"time"

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
		{[]string{"--continuous", "--recrawl-schedule", "nutch", "--recrawl-max", "24h"},
			job.Spec{Continuous: true, RecrawlMax: 24 * time.Hour, RecrawlSchedule: job.ScheduleNutch}, ""},
		{[]string{"--continuous", "--recrawl-schedule", "fastest"}, job.Spec{}, `--recrawl-schedule "fastest" is not a schedule: want freshness (the default) or nutch`},
		{[]string{"--continuous", "--recrawl-schedule", "nutch", "--recrawl-budget", "50"}, job.Spec{}, "--recrawl-budget 50: the nutch schedule takes no budget: want 0, or --recrawl-schedule freshness"},
		{[]string{"--recrawl-schedule", "nutch"}, job.Spec{}, `--recrawl-schedule "nutch": only a continuous crawl recrawls: set --continuous`},
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
