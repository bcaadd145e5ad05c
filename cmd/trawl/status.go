package main

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/trawl-crawler/trawl/internal/apiclient"
)

func init() {
	register("status", "a running server's readiness and its crawls, on one screen", cmdStatus)
	leaf("status", func(fs *flag.FlagSet) { new(clientFlags).register(fs) })
}

const statusHelp = `usage: trawl status [flags]

Asks a running trawl serve whether it is ready and shows its crawls, live
ones first, with their key figures: state, pages, pages/s, queue, hosts
active, errors and time running. At most 20 crawls are shown;
trawl crawls list has them all.

Examples:
  trawl status
  trawl status --server http://10.0.0.5:8420
  TRAWL_SERVER=http://crawler:8420 trawl status --json | jq '.crawls[].stats.fetched'`

// statusRows bounds the crawls `trawl status` shows: one screen.
const statusRows = 20

// statusJSON is what `trawl status --json` prints.
type statusJSON struct {
	Server string        `json:"server"`
	Ready  bool          `json:"ready"`
	Status string        `json:"status"` // "ready" or "loading"
	Crawls []crawlStatus `json:"crawls"`
	More   int           `json:"more"` // crawls left out
}

type crawlStatus struct {
	Crawl apiclient.Crawl  `json:"crawl"`
	Stats *apiclient.Stats `json:"stats"` // nil if the call for them failed
}

func cmdStatus(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("status", statusHelp+"\n"+tokenHelp+"\n\nExit status: 0 the server is ready, 1 it could not be reached or failed,\n2 a usage error, 3 it answers but is still loading its state.", clientEnv, stderr)
	var cf clientFlags
	cf.register(fs)
	src, code, ok := parseFlags(fs, args, clientEnv, stderr)
	if !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "trawl status: unexpected arguments %q\n", fs.Args())
		return 2
	}
	c, origin, err := cf.open(src)
	if err != nil {
		fmt.Fprintf(stderr, "trawl status: %v\n", err)
		return 2
	}
	ctx := context.Background()
	ready, probe, err := c.Ready(ctx)
	if err != nil {
		return cf.fail(stderr, "status", err, origin)
	}
	out := statusJSON{Server: c.Server(), Ready: ready, Status: probe.Status, Crawls: []crawlStatus{}}
	if ready {
		list, err := c.Crawls(ctx)
		if err != nil {
			return cf.fail(stderr, "status", err, origin)
		}
		shown := statusOrder(list.Crawls)
		out.More = len(shown) - min(len(shown), statusRows)
		for _, cr := range shown[:len(shown)-out.More] {
			cs := crawlStatus{Crawl: cr}
			if st, err := c.Stats(ctx, cr.ID); err == nil {
				cs.Stats = &st
			}
			out.Crawls = append(out.Crawls, cs)
		}
	}
	if cf.json {
		b, _ := json.MarshalIndent(out, "", "  ")
		fmt.Fprintln(stdout, string(b))
	} else {
		printStatus(stdout, out)
	}
	if !ready {
		return 3
	}
	return 0
}

// statusOrder puts running and paused crawls first, then the ended ones,
// the newest first within each.
func statusOrder(crawls []apiclient.Crawl) []apiclient.Crawl {
	live := func(c apiclient.Crawl) int {
		if c.State == "running" || c.State == "paused" {
			return 0
		}
		return 1
	}
	out := slices.Clone(crawls)
	slices.SortStableFunc(out, func(a, b apiclient.Crawl) int {
		return cmp.Or(cmp.Compare(live(a), live(b)), cmp.Compare(b.ID, a.ID))
	})
	return out
}

func printStatus(w io.Writer, s statusJSON) {
	if !s.Ready {
		fmt.Fprintf(w, "server  %s: %s (the node is still loading its state; try again shortly)\n", s.Server, s.Status)
		return
	}
	fmt.Fprintf(w, "server  %s: %s\n", s.Server, s.Status)
	if len(s.Crawls) == 0 {
		fmt.Fprintln(w, "crawls  none yet: trawl crawls create --seed URL starts one")
		return
	}
	states := map[string]int{}
	for _, c := range s.Crawls {
		states[c.Crawl.State]++
	}
	fmt.Fprintf(w, "crawls  %d shown", len(s.Crawls))
	for _, st := range []string{"running", "paused", "finished", "cancelled", "failed"} {
		if states[st] > 0 {
			fmt.Fprintf(w, ", %d %s", states[st], st)
		}
	}
	if s.More > 0 {
		fmt.Fprintf(w, "; %d more (trawl crawls list)", s.More)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tSTATE\tPAGES\tPAGES/S\tQUEUED\tIN FLIGHT\tHOSTS ACTIVE\tERRORS\tELAPSED")
	for _, c := range s.Crawls {
		state := c.Crawl.State
		if c.Crawl.StopReason != "" {
			state += " (" + c.Crawl.StopReason + ")"
		}
		if c.Stats == nil {
			fmt.Fprintf(tw, "%d\t%s\t%s\t-\t-\t-\t-\t-\t-\t-\n", c.Crawl.ID, c.Crawl.Name, state)
			continue
		}
		st := c.Stats
		errs := int64(0)
		for _, n := range st.ErrorsByClass {
			errs += n
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%.1f\t%d\t%d\t%d\t%d\t%s\n", c.Crawl.ID, c.Crawl.Name, state,
			st.Fetched, st.PagesPerSecond, st.Queued, st.InFlight, st.HostsActive, errs,
			time.Duration(st.ElapsedSeconds*float64(time.Second)).Round(time.Second))
	}
	tw.Flush()
}
