package node

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/internal/testkit/testweb"
	"github.com/trawl-crawler/trawl/job"
	"github.com/trawl-crawler/trawl/scope"
)

// trapWeb is the web TestTrapCost crawls: 81 hosts, every trap kind on
// two of them (testweb.Options.Traps), small pages and no latency so that
// the host gap is the crawl's alone.
var trapWeb = testweb.Options{Seed: 17, Hosts: 81, BigPages: 30, MaxPages: 8, MinPageBytes: 4 << 10, MaxPageBytes: 8 << 10,
	Traps: true, Lookalikes: true, Latency: -1}

// trapRun is one way TestTrapCost crawls trapWeb.
type trapRun struct {
	name  string
	rules func(r *scope.Rules) // changes the job's scope before it starts
	// gates turns the node's content gates off: near-duplicates (whose
	// links are not followed) and the duplicate allowance (which cuts a
	// host serving mostly duplicates).
	gatesOff bool
	// endless are the trap kinds that do not end under these rules: the
	// run stops once every trapped host of these kinds that the crawl
	// reached has cost trapStop fetches (or at trapDeadline).
	endless []string
}

// trapStop is where a run stops counting an endless trap; its figures
// are then lower bounds.
const trapStop, trapDeadline = 150, 2 * time.Minute

var trapRuns = []trapRun{
	{"caps only", func(r *scope.Rules) {
		// The URL caps and shape runs alone: no per-pattern room, no
		// session parameters stripped, no content gates.
		r.MaxURLsPerPattern, r.SessionParams = -1, []string{}
	}, true, []string{testweb.TrapSessionID, testweb.TrapFacets, testweb.TrapSoft404}},
	{"defaults", func(*scope.Rules) {}, false, nil},
	// The defaults without the content gates: the URL rules alone (the
	// per-pattern room for facets and soft 404s) must bound every trap.
	{"rules only", func(*scope.Rules) {}, true, nil},
}

// TestTrapCost crawls a web with every kind of trap three times: with
// the URL caps and shape runs alone, with the defaults, and with the
// defaults but without the content gates (near-duplicates' links not
// followed, the duplicate allowance); it reports the trap fetches per
// trapped host of each kind. The caps-only run never ends by itself and
// stops once each endless trap has cost trapStop fetches on every trapped
// host: its figures for those traps are lower bounds, and they show that
// the traps are real. The runs with the defaults must end by themselves,
// fetch at least 99% of the crawlable pages politely, and stay under a
// bound per trap kind, with the content gates and without.
func TestTrapCost(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: three crawls of a web full of traps")
	}
	t.Parallel()
	var mu sync.Mutex
	stats := map[string][]testweb.TrapStat{}
	reports := map[string]*testweb.Report{}
	sums := map[string]*Summary{}
	t.Run("crawls", func(t *testing.T) {
		for _, run := range trapRuns {
			t.Run(run.name, func(t *testing.T) {
				t.Parallel()
				h := newHarness(t, trapWeb, 20*time.Millisecond)
				sum := runTrapCrawl(t, h, run)
				rep := h.analyze(0)
				mu.Lock()
				stats[run.name], reports[run.name], sums[run.name] = rep.TrapStats(), rep, sum
				mu.Unlock()
			})
		}
	})
	if t.Failed() {
		return
	}
	// Figures per kind: trap fetches per trapped host reached (most on one host).
	var b strings.Builder
	fmt.Fprintf(&b, "%-13s", "trap")
	for _, run := range trapRuns {
		fmt.Fprintf(&b, " | %-16s", run.name)
	}
	b.WriteString("\n")
	for i, st := range stats["defaults"] {
		fmt.Fprintf(&b, "%-13s", st.Kind)
		for _, run := range trapRuns {
			s := stats[run.name][i]
			fmt.Fprintf(&b, " | %6.1f (max %4d)", s.PerHost(), s.Max)
		}
		fmt.Fprintf(&b, "   [%d hosts]\n", st.Hosts)
	}
	for _, run := range trapRuns {
		r := reports[run.name]
		fmt.Fprintf(&b, "%s: %d requests, coverage %.3f, stop %q, out of scope %d\n",
			run.name, r.Requests, r.Coverage, sums[run.name].StopReason, sums[run.name].Total.OutOfScope)
	}
	t.Logf("trap fetches per trapped host:\n%s", b.String())

	for _, name := range []string{"defaults", "rules only"} {
		if sums[name].StopReason != job.ReasonExhausted {
			t.Errorf("%s: with the defaults the crawl stopped %q, want exhausted", name, sums[name].StopReason)
		}
		if r := reports[name]; r.Coverage < 0.99 {
			t.Errorf("%s: with the defaults coverage is %.3f, want at least 0.99; missing e.g. %v", name, r.Coverage, r.Missing[:min(10, len(r.Missing))])
		}
	}
	// One subtest per trap kind (soft 404s, session IDs, facets, ...): its
	// bound with the defaults, and how far below the endless runs it is.
	for _, st := range stats["defaults"] {
		t.Run(st.Kind, func(t *testing.T) {
			// Bounds per trapped host with the defaults: the calendar's
			// shape runs (the month the crawl enters at, then 4 barren
			// months each way before a run is cut: 9); no
			// session-ID variant fetched twice; the shop's filtered
			// listings and a soft-404 host's directories (two) within the
			// per-pattern room: the first DefaultMaxURLsPerPattern URLs,
			// and PatternRoomPerYield more for each page that yielded (a
			// few of the filtered listings the shop's page links, judged
			// by their text against it; the trap's own pages yield
			// nothing); the growing path's 69 paths under the
			// repeated-segment cap. The content gates end most sooner.
			room := scope.DefaultMaxURLsPerPattern + 4*scope.PatternRoomPerYield
			most := map[string]int{
				testweb.TrapCalendar:    10,
				testweb.TrapSessionID:   0,
				testweb.TrapFacets:      room,
				testweb.TrapGrowingPath: 69,
				testweb.TrapSoft404:     3 + 2*room,
			}[st.Kind]
			if st.Hosts == 0 {
				t.Errorf("the crawl reached no host carrying the trap")
			}
			for _, name := range []string{"defaults", "rules only"} {
				for _, o := range stats[name] {
					if o.Kind == st.Kind && o.Max > most {
						t.Errorf("%s: %d trap fetches on one host with the defaults, want at most %d", name, o.Max, most)
					}
				}
			}
			// With the caps alone these traps never end (the run stopped
			// them at trapStop); with the defaults they cost far less.
			for _, o := range stats["caps only"] {
				if o.Kind != st.Kind || !slices.Contains(trapRuns[0].endless, o.Kind) {
					continue
				}
				if o.PerHost() < trapStop {
					t.Errorf("%.1f trap fetches per host with the URL caps alone, want the trap endless (at least %d)", o.PerHost(), trapStop)
				}
				if 2*st.PerHost() > trapStop {
					t.Errorf("%.1f trap fetches per host with the defaults, want far below %d", st.PerHost(), trapStop)
				}
			}
		})
	}
}

// runTrapCrawl runs h's job with its scope changed by run.rules until it
// ends, its endless traps have cost enough (trapStop) or trapDeadline
// passes, and returns its summary.
func runTrapCrawl(t *testing.T, h *harness, run trapRun) *Summary {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), trapDeadline)
	defer cancel()
	enough := func() bool {
		if len(run.endless) == 0 {
			return false
		}
		rep := h.analyze(0)
		for _, st := range rep.TrapStats() {
			if slices.Contains(run.endless, st.Kind) && (st.Hosts == 0 || st.Fetches < st.Hosts*trapStop) {
				return false
			}
		}
		return true
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	if run.gatesOff {
		h.opts.NearResemblance, h.opts.DuplicateAllowance = -1, -1
	}
	n, err := Open(h.opts)
	if err != nil {
		t.Fatal(err)
	}
	j, err := n.Submit(h.spec)
	if err != nil {
		n.Close()
		t.Fatal(err)
	}
	run.rules(&j.Scope) // before Start: no worker reads it yet
	n.Start()
wait:
	for {
		select {
		case <-j.Ended():
			break wait
		case <-ctx.Done():
			t.Logf("%s: stopped at the deadline", run.name)
			break wait
		case <-tick.C:
			if enough() {
				break wait
			}
		}
	}
	if err := n.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := j.Err(); err != nil {
		t.Fatalf("job: %v", err)
	}
	return n.Summary(j.ID)
}
