package demo

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/internal/testkit/testweb"
	"github.com/trawl-crawler/trawl/job"
	"github.com/trawl-crawler/trawl/node"
)

// TestCriticalLine: the demo compares its duration with the critical path
// only for a complete crawl, the one the bound is for.
func TestCriticalLine(t *testing.T) {
	web := testweb.Generate(testweb.Options{Seed: 1, Hosts: 12})
	seeds := web.Seeds()
	for _, tc := range []struct {
		name  string
		seeds []string
		want  string
	}{
		{"a crawl that fetched nothing", seeds, "not compared with the critical path ("},
		{"no seeds", nil, "no critical path: nothing was crawlable"},
	} {
		rep := testweb.Analyze(web, nil, testweb.AnalyzeOptions{Seeds: tc.seeds, Agent: "trawl", Gap: 100 * time.Millisecond})
		if got := criticalLine(rep, 100*time.Millisecond, 3*time.Second); !strings.Contains(got, tc.want) {
			t.Errorf("%s: criticalLine = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestRunCheck: Check sees the spec completed with the web's seeds and
// domain; its refusal is exit status 2, each line after "trawl demo: ",
// and nothing is crawled.
func TestRunCheck(t *testing.T) {
	var seen job.Spec
	var out, errb bytes.Buffer
	code := Run(context.Background(), Options{
		Node: node.Options{DataDir: t.TempDir()}, Spec: job.Defaults(), Web: testweb.Options{Seed: 1, Hosts: 3},
		Check: func(s job.Spec) error { seen = s; return errors.New("first\nsecond") },
	}, &out, &errb)
	if code != 2 || errb.String() != "trawl demo: first\ntrawl demo: second\n" || out.Len() > 0 {
		t.Errorf("Run with a refusing Check = %d, stdout %q, stderr %q; want 2, the refusal and no crawl", code, out.String(), errb.String())
	}
	if len(seen.Seeds) == 0 || len(seen.Domains) != 1 || seen.Domains[0] == "" {
		t.Errorf("Check saw seeds %q, domains %q; want the web's", seen.Seeds, seen.Domains)
	}
}

// TestRunChaos crawls a chaos web and prints the web's verdict: the crawl
// ends by itself, and no invariant fails but, on a loaded machine, the
// time bound (exit status 1 then, as for any failure).
func TestRunChaos(t *testing.T) {
	if testing.Short() {
		t.Skip("a crawl of a chaos web")
	}
	var out, errb bytes.Buffer
	code := Run(context.Background(), Options{
		Node: node.Options{DataDir: t.TempDir(), MinDelay: 50 * time.Millisecond}, Spec: job.Defaults(), Chaos: 7,
		Progress: time.Second,
	}, &out, &errb)
	got := out.String()
	for _, want := range []string{"chaos web 7: ", " drew ", "crawl exhausted", "what the chaos web saw:", "(ended by itself)"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	_, failures, failed := strings.Cut(got, " failures:\n")
	switch {
	case code == 0 && failed:
		t.Errorf("exit 0 with failures:\n%s", got)
	case code == 1 && !failed:
		t.Errorf("exit 1 without a failure in the verdict:\n%s\nstderr:\n%s", got, errb.String())
	case code == 1:
		for _, l := range strings.Split(strings.TrimSpace(failures), "\n") {
			if !strings.HasPrefix(strings.TrimSpace(l), "[bound]") {
				t.Errorf("chaos web 7's verdict fails: %s", l)
			}
		}
	case code != 0:
		t.Errorf("Run on chaos web 7 = %d\nstdout:\n%s\nstderr:\n%s", code, got, errb.String())
	}
}
