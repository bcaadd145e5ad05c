package node

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/internal/testkit/testweb"
	"github.com/trawl-crawler/trawl/job"
)

// TestCriticalPathIsALowerBound: the critical path `trawl demo` divides
// its duration by is a true lower bound. A real, polite and complete crawl
// of a small web that has one host of each robots.txt kind (a Crawl-delay
// of 2s, a 429 before the rules, a redirect to them) never beats it: not
// as a whole, and not host by host, from a host's first request in the
// web's log to the start of its last. This is a correctness property, not
// a timing assertion: the crawl may be as slow as the machine makes it.
func TestCriticalPathIsALowerBound(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the Crawl-delay host alone takes about 8s")
	}
	t.Parallel()
	h := newHarness(t, testweb.Options{Seed: 3, Hosts: 10, BigHosts: -1, MaxPages: 6}, 20*time.Millisecond)
	// The bound is for a crawl that fetches every crawlable URL. The scope
	// rules that depend on the path by which a crawl first found a URL
	// (which depends on timing: on a loaded machine, another path) can
	// leave some out, while the crawlable set takes the shortest path and
	// knows no shape runs: here h00N/ links to h00M/, one shape, so a run
	// of home pages hits the shape cap of 3. So: no shape cap, and a depth
	// cap (trawl crawl's) four times the longest shortest path between the
	// web's pages (5), which still ends the calendar trap.
	h.spec.MaxShapeRun = -1
	h.spec.MaxDepth = 20
	start := time.Now()
	sum := h.run(t, context.Background())
	took := time.Since(start)
	rep := h.analyze(1)
	if p := rep.Problems(); len(p) > 0 {
		explainMissing(t, h.srv, rep)

		t.Fatalf("the bound holds for a polite, complete crawl; this one had %d problems:\n%s", len(p), strings.Join(p, "\n"))
	}
	if sum.StopReason != job.ReasonExhausted {
		t.Fatalf("StopReason = %q, want exhausted", sum.StopReason)
	}

	first, last := map[string]time.Time{}, map[string]time.Time{}
	for _, r := range h.srv.Log() {
		if f, ok := first[r.Host]; !ok || r.Start.Before(f) {
			first[r.Host] = r.Start
		}
		if r.Start.After(last[r.Host]) {
			last[r.Host] = r.Start
		}
	}
	reachable := map[string]int{}
	for _, hr := range rep.Hosts {
		reachable[hr.Host] = hr.Reachable
	}
	delayed, extraRobots := 0, 0
	for _, b := range rep.Bounds(h.opts.MinDelay) {
		if span := last[b.Host].Sub(first[b.Host]); span < b.Duration {
			t.Errorf("host %s: its requests span %v, below its bound %+v", b.Host, span, b)
		}
		if b.Gap > h.opts.MinDelay {
			delayed++
		}
		if b.Requests-reachable[b.Host] > 1 {
			extraRobots++
		}
	}
	if delayed == 0 || extraRobots < 2 {
		t.Errorf("the web has %d Crawl-delay hosts and %d hosts needing two robots.txt requests; want 1 and 2 (seed or generator changed?)", delayed, extraRobots)
	}
	crit := rep.Critical(h.opts.MinDelay)
	if took < crit.Duration {
		t.Errorf("the crawl took %v, less than the critical path %+v", took, crit)
	}
	t.Logf("duration %v = %.2f x the critical path (%v on %s: %d requests, %v apart)",
		took.Round(time.Millisecond), took.Seconds()/crit.Duration.Seconds(), crit.Duration, crit.Host, crit.Requests, crit.Gap)
}
