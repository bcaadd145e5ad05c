package clientcmd

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/trawl-crawler/trawl/internal/cli/apiclient"
	"github.com/trawl-crawler/trawl/internal/cli/progress"
	"github.com/trawl-crawler/trawl/job"
)

// CrawlsList is `trawl crawls list`: every crawl the server knows.
func CrawlsList(ctx context.Context, c *apiclient.Client, o Options, _ []string, w io.Writer) error {
	l, err := c.Crawls(ctx)
	if err != nil || o.answer(w, l.Raw) {
		return err
	}
	if len(l.Crawls) == 0 {
		fmt.Fprintln(w, "no crawls yet: trawl crawls create --seed URL starts one")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tSTATE\tPRIORITY\tMAX DEPTH\tMAX PAGES\tSEEDS\tDOMAINS")
	for _, cr := range l.Crawls {
		state := cr.State
		if cr.StopReason != "" {
			state += " (" + cr.StopReason + ")"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", cr.ID, cr.Name, state, cr.Priority,
			Limit(cr.MaxDepth), Limit(cr.MaxPages), FirstOf(cr.Seeds), FirstOf(cr.Domains))
	}
	return tw.Flush()
}

// CrawlsShow is `trawl crawls show ID`: one crawl's spec and state.
func CrawlsShow(ctx context.Context, c *apiclient.Client, o Options, args []string, w io.Writer) error {
	id, err := idArg(args)
	if err != nil {
		return err
	}
	cr, err := c.Crawl(ctx, id)
	if err != nil || o.answer(w, cr.Raw) {
		return err
	}
	PrintCrawl(w, cr)
	return nil
}

// CrawlsStats is `trawl crawls stats ID`: a crawl's counters.
func CrawlsStats(ctx context.Context, c *apiclient.Client, o Options, args []string, w io.Writer) error {
	id, err := idArg(args)
	if err != nil {
		return err
	}
	st, err := c.Stats(ctx, id)
	if err != nil || o.answer(w, st.Raw) {
		return err
	}
	fmt.Fprintf(w, "crawl %d, %s, after %s\n", st.CrawlID, st.State, time.Duration(st.ElapsedSeconds*float64(time.Second)).Round(time.Second))
	fmt.Fprintf(w, "  pages       %d (%.1f/s; %d shared with another crawl), %d requests incl. %d robots.txt, %s\n",
		st.Fetched, st.PagesPerSecond, st.Shared, st.Requests, st.RobotsFetches, progress.Bytes(st.Bytes))
	fmt.Fprintf(w, "  queue       %d queued, %d in flight, %d held, %d dropped\n", st.Queued, st.InFlight, st.Held, st.Dropped)
	fmt.Fprintf(w, "  discovered  %d URLs; %d out of scope, %d excluded, %d disallowed by robots.txt\n",
		st.Discovered, st.OutOfScope, st.Excluded, st.RobotsDisallowed)
	fmt.Fprintf(w, "  duplicates  %d exact (revisit records), %d near (archived in full)\n", st.Revisits, st.NearDuplicates)
	fmt.Fprintf(w, "  hosts       %d known: %d active, %d waiting, %d in backoff\n", st.Hosts, st.HostsActive, st.HostsWaiting, st.HostsBackoff)
	fmt.Fprintf(w, "  answers     %s\n", progress.Counts(st.StatusByClass))
	fmt.Fprintf(w, "  errors      %s\n", progress.Counts(st.ErrorsByClass))
	PrintRecrawls(w, st)
	return nil
}

// Pause, Resume and Cancel are `trawl crawls pause|resume|cancel ID`.
var (
	Pause  = crawlsChange((*apiclient.Client).Pause)
	Resume = crawlsChange((*apiclient.Client).Resume)
	Cancel = crawlsChange((*apiclient.Client).Cancel)
)

// crawlsChange runs a change of a crawl's state.
func crawlsChange(do func(*apiclient.Client, context.Context, uint32) (apiclient.Crawl, error)) Run {
	return func(ctx context.Context, c *apiclient.Client, o Options, args []string, w io.Writer) error {
		id, err := idArg(args)
		if err != nil {
			return err
		}
		cr, err := do(c, ctx, id)
		if err != nil || o.answer(w, cr.Raw) {
			return err
		}
		fmt.Fprintf(w, "crawl %d %s\n", cr.ID, cr.State)
		return nil
	}
}

// CrawlsSeeds is `trawl crawls seeds ID URL...`: it adds seeds to a
// crawl.
func CrawlsSeeds(ctx context.Context, c *apiclient.Client, o Options, args []string, w io.Writer) error {
	if len(args) < 2 {
		return UsageError{fmt.Errorf("want ID URL..., got %q", args)}
	}
	id, err := idArg(args)
	if err != nil {
		return err
	}
	s, err := c.AddSeeds(ctx, id, args[1:])
	if err != nil || o.answer(w, s.Raw) {
		return err
	}
	fmt.Fprintf(w, "crawl %d: %d seeds added, %d seen already\n", id, s.Added, s.AlreadySeen)
	return nil
}

// Exclude is `trawl crawls exclude ID`: with neither Add nor Remove it
// shows the crawl's exclusion patterns, otherwise it edits them.
type Exclude struct{ Add, Remove []string }

// Run shows or edits the crawl's exclusion patterns.
func (x *Exclude) Run(ctx context.Context, c *apiclient.Client, o Options, args []string, w io.Writer) error {
	id, err := idArg(args)
	if err != nil {
		return err
	}
	var ex apiclient.Exclusions
	if len(x.Add) == 0 && len(x.Remove) == 0 {
		ex, err = c.Exclusions(ctx, id)
	} else {
		ex, err = c.EditExclusions(ctx, id, x.Add, x.Remove)
	}
	if err != nil || o.answer(w, ex.Raw) {
		return err
	}
	if len(ex.Patterns) == 0 {
		fmt.Fprintf(w, "crawl %d excludes nothing: trawl crawls exclude %d --add PATTERN adds a pattern\n", id, id)
	}
	for _, p := range ex.Patterns {
		fmt.Fprintln(w, p)
	}
	return nil
}

// Create is `trawl crawls create [SEED...]`: Spec is the crawl's, its
// seeds joined by the arguments; Check, if set, checks it first as the
// server would, in the flags' words.
type Create struct {
	Spec  job.Spec
	Check func(job.Spec) error
}

// Run creates the crawl.
func (cr *Create) Run(ctx context.Context, c *apiclient.Client, o Options, args []string, w io.Writer) error {
	spec := cr.Spec
	spec.Seeds = append(append([]string{}, spec.Seeds...), args...)
	if len(spec.Seeds) == 0 {
		return UsageError{fmt.Errorf("no seeds: give --seed URL (or URLs as arguments)")}
	}
	if cr.Check != nil {
		if err := cr.Check(spec); err != nil {
			return UsageError{err}
		}
	}
	giveUpS, maxWaitS := spec.RobotsGiveUp.Seconds(), spec.MaxWait.Seconds()
	req := apiclient.CrawlRequest{Name: spec.Name, Seeds: spec.Seeds, Priority: spec.Priority,
		Scope:      apiclient.Scope{Domains: spec.Domains, MaxDepth: &spec.MaxDepth},
		Limits:     apiclient.Limits{MaxPages: spec.MaxPages, RobotsGiveUpS: &giveUpS, MaxWaitS: &maxWaitS},
		Continuous: spec.Continuous,
		Recrawl: apiclient.Recrawl{MinS: spec.RecrawlMin.Seconds(), MaxS: spec.RecrawlMax.Seconds(),
			BudgetPerHour: spec.RecrawlBudget, Schedule: spec.RecrawlSchedule},
		Requisites: apiclient.Requisites{Reach: spec.Requisites, MaxHops: spec.RequisiteHops},
		Usage:      apiclient.Usage{Purpose: spec.Purpose, OnDenied: spec.OnDenied, TDMRep: spec.TDMRep}}
	created, err := c.CreateCrawl(ctx, req)
	if err != nil || o.answer(w, created.Raw) {
		return err
	}
	fmt.Fprintf(w, "crawl %d accepted: trawl crawls stats %d follows it\n", created.CrawlID, created.CrawlID)
	return nil
}

// Node, PauseNode and ResumeNode are `trawl node show|pause|resume`: each
// prints the node's state after its call.
var (
	Node       = nodeChange((*apiclient.Client).Node)
	PauseNode  = nodeChange((*apiclient.Client).PauseNode)
	ResumeNode = nodeChange((*apiclient.Client).ResumeNode)
)

func nodeChange(do func(*apiclient.Client, context.Context) (apiclient.NodeState, error)) Run {
	return func(ctx context.Context, c *apiclient.Client, o Options, _ []string, w io.Writer) error {
		s, err := do(c, ctx)
		if err != nil || o.answer(w, s.Raw) {
			return err
		}
		if s.Paused {
			fmt.Fprintln(w, "node paused: no crawl is fetched (trawl node resume)")
		} else {
			fmt.Fprintln(w, "node running")
		}
		return nil
	}
}
