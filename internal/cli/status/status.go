// Package status is `trawl status`: one screen on a running server, its
// readiness and its crawls, the live ones first, with their key figures.
// For a member of a fleet, each crawl's figures are the sums of every
// member's share (each member's API counts only its own).
package status

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/trawl-crawler/trawl/internal/cli/apiclient"
	"github.com/trawl-crawler/trawl/internal/cli/clientcmd"
)

// Rows bounds the crawls `trawl status` shows: one screen.
const Rows = 20

// Report is what `trawl status --json` prints.
type Report struct {
	Server string  `json:"server"`
	Ready  bool    `json:"ready"`
	Status string  `json:"status"` // "ready" or "loading"
	Crawls []Crawl `json:"crawls"`
	More   int     `json:"more"` // crawls left out
	// Fleet, for a member of one: its members; each crawl's stats are
	// then the sums over the members that answered.
	Fleet []Member `json:"fleet,omitempty"`
}

// Member is one fleet member in `trawl status`.
type Member struct {
	Name       string `json:"name"`
	API        string `json:"api"`
	Partitions int    `json:"partitions"`
	Leaving    bool   `json:"leaving,omitempty"`
	Error      string `json:"error,omitempty"` // its API did not answer: its share is missing from the sums
}

// Crawl is one crawl in `trawl status`.
type Crawl struct {
	Crawl apiclient.Crawl  `json:"crawl"`
	Stats *apiclient.Stats `json:"stats"` // nil if the call for them failed
}

// Main is `trawl status`: it opens a client as o says, gathers the
// report and prints it (as JSON with o.JSON), and returns the exit
// status: 0 the server is ready, 1 it could not be reached or failed, 2
// bad options, 3 it answers but is still loading its state.
func Main(ctx context.Context, o clientcmd.Options, stdout, stderr io.Writer) int {
	c, origin, err := clientcmd.Open(o)
	if err != nil {
		fmt.Fprintf(stderr, "trawl status: %v\n", err)
		return 2
	}
	out, err := Gather(ctx, c)
	if err != nil {
		return clientcmd.Fail(stderr, "status", o.Server, err, origin)
	}
	if o.JSON {
		b, _ := json.MarshalIndent(out, "", "  ")
		fmt.Fprintln(stdout, string(b))
	} else {
		Print(stdout, out)
	}
	if !out.Ready {
		return 3
	}
	return 0
}

// Gather asks the server c talks to whether it is ready and, if it is,
// for its crawls (the live ones first, at most Rows) with their stats
// and, for a member of a fleet, for the other members' shares of them,
// summed. Only a failed readiness probe or crawl list is an error: a
// crawl whose stats cannot be had has nil Stats, a member that does not
// answer has an Error.
func Gather(ctx context.Context, c *apiclient.Client) (Report, error) {
	ready, probe, err := c.Ready(ctx)
	if err != nil {
		return Report{}, err
	}
	out := Report{Server: c.Server(), Ready: ready, Status: probe.Status, Crawls: []Crawl{}}
	if ready {
		list, err := c.Crawls(ctx)
		if err != nil {
			return Report{}, err
		}
		shown := order(list.Crawls)
		out.More = len(shown) - min(len(shown), Rows)
		for _, cr := range shown[:len(shown)-out.More] {
			cs := Crawl{Crawl: cr}
			if st, err := c.Stats(ctx, cr.ID); err == nil {
				cs.Stats = &st
			}
			out.Crawls = append(out.Crawls, cs)
		}
		if nodes, err := c.Nodes(ctx); err == nil && nodes.Fleet {
			out.Fleet = fleet(ctx, c, nodes, out.Crawls)
		}
	}
	return out, nil
}

// order puts running and paused crawls first, then the ended ones,
// the newest first within each.
func order(crawls []apiclient.Crawl) []apiclient.Crawl {
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

// fleet asks every other member of the fleet for its share of each
// crawl in crawls and adds it to the stats there (a crawl's stats are
// each member's own counts: the pages it fetched, its partitions' queue).
func fleet(ctx context.Context, self *apiclient.Client, nodes apiclient.Nodes, crawls []Crawl) []Member {
	var out []Member
	for _, m := range nodes.Nodes {
		ms := Member{Name: m.Name, API: m.Info.API, Partitions: len(m.Owns), Leaving: m.Leaving}
		out = append(out, ms)
		if m.Name == nodes.Self {
			continue // its stats are those asked already
		}
		mc, err := apiclient.New(apiclient.Options{Server: m.Info.API, Timeout: 5 * time.Second})
		if err != nil || m.Info.API == "" {
			out[len(out)-1].Error = fmt.Sprintf("no usable API address %q", m.Info.API)
			continue
		}
		for i := range crawls {
			if crawls[i].Stats == nil {
				continue
			}
			st, err := mc.Stats(ctx, crawls[i].Crawl.ID)
			if err != nil {
				out[len(out)-1].Error = err.Error()
				break
			}
			crawls[i].Stats.Add(st)
		}
	}
	return out
}

// Print writes s as `trawl status` shows it.
func Print(w io.Writer, s Report) {
	if !s.Ready {
		fmt.Fprintf(w, "server  %s: %s (the node is still loading its state; try again shortly)\n", s.Server, s.Status)
		return
	}
	fmt.Fprintf(w, "server  %s: %s\n", s.Server, s.Status)
	if len(s.Fleet) > 0 {
		fmt.Fprintf(w, "fleet   %d members:", len(s.Fleet))
		for i, m := range s.Fleet {
			sep := ","
			if i == 0 {
				sep = ""
			}
			fmt.Fprintf(w, "%s %s (%d partitions", sep, m.Name, m.Partitions)
			if m.Leaving {
				fmt.Fprint(w, ", leaving")
			}
			if m.Error != "" {
				fmt.Fprint(w, ", not answering: not in the sums")
			}
			fmt.Fprint(w, ")")
		}
		fmt.Fprintln(w, "; figures are the fleet's sums")
	}
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
		if st.WaitingForRecrawls {
			state += " (waiting for recrawls)"
		}
		errs := int64(0)
		for _, n := range st.ErrorsByClass {
			errs += n
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%.1f\t%d\t%d\t%d\t%d\t%s\n", c.Crawl.ID, c.Crawl.Name, state,
			st.Fetched, st.PagesPerSecond, st.Queued, st.InFlight, st.HostsActive, errs,
			time.Duration(st.ElapsedSeconds*float64(time.Second)).Round(time.Second))
	}
	tw.Flush()
	for _, c := range s.Crawls {
		if st := c.Stats; st != nil && st.Waiting != nil && c.Crawl.State == "running" {
			fmt.Fprintf(w, "crawl %d: %s\n", c.Crawl.ID, st.Waiting.Text)
		}
	}
}

// Help is `trawl status --help`, before its flags.
const Help = `usage: trawl status [flags]

Asks a running trawl serve whether it is ready and shows its crawls, live
ones first, with their key figures: state, pages, pages/s, queue, hosts
active, errors and time running. At most 20 crawls are shown;
trawl crawls list has them all. A member of a fleet is asked for the
fleet's members too, and each member's API for its share of every crawl:
the figures shown are the fleet's sums.

Examples:
  trawl status
  trawl status --server http://10.0.0.5:8420
  TRAWL_SERVER=http://crawler:8420 trawl status --json | jq '.crawls[].stats.fetched'
` + clientcmd.TokenHelp + `

Exit status: 0 the server is ready, 1 it could not be reached or failed,
2 a usage error, 3 it answers but is still loading its state.`
