package main

import (
	"strings"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/internal/testkit/testweb"
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
