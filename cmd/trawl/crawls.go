package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/trawl-crawler/trawl/internal/cli/apiclient"
	"github.com/trawl-crawler/trawl/internal/cli/clientcmd"
	"github.com/trawl-crawler/trawl/internal/cli/progress"
	"github.com/trawl-crawler/trawl/job"
)

// clientGroup is a command whose subcommands are calls to a running
// server: `trawl crawls`, `trawl hosts` (hosts.go) and `trawl node`
// (node.go). Each subcommand is a leaf with clientFlags and its own.
type clientGroup struct {
	name, summary string
	about         string // what its subcommands are about, for its --help: "its crawls"
	examples      string // its --help's examples, lines of "  trawl ..."
	commands      []clientCommand
}

// register registers the group and its subcommands' flags; called from
// init.
func (g *clientGroup) register() {
	register(g.name, g.summary, g.main)
	for _, sc := range g.commands {
		leaf(g.name+" "+sc.name, func(fs *flag.FlagSet) { sc.register(fs, new(clientFlags)) })
	}
}

// clientCommand is one subcommand of a clientGroup.
type clientCommand struct {
	name, args, summary, help string
	nargs                     int // arguments wanted; -1: any number
	// run does the subcommand's call and prints its answer: a usageError
	// for bad arguments, an apiclient error otherwise.
	run clientRun
	// bind, if set, makes a subcommand with flags of its own (beside
	// clientFlags): their registration and the run that reads them, over
	// a new set of values each time.
	bind func() (flags func(*flag.FlagSet), run clientRun)
}

// clientRun runs a subcommand with its client and its arguments, flags
// removed; it writes its answer to stdout.
type clientRun func(ctx context.Context, c *apiclient.Client, cf *clientFlags, args []string, stdout io.Writer) error

// crawlsGroup is `trawl crawls`; its subcommands are in the order --help lists
// them.
var crawlsGroup = &clientGroup{name: "crawls", about: "its crawls",
	summary: "list, show, create, steer (seeds, exclusions), pause, resume and cancel a running server's crawls",
	examples: `  trawl crawls list
  trawl crawls create --seed https://example.org/ --max-pages 1000
  trawl crawls stats 1
  trawl crawls exclude 1 --add '/calendar/'
  trawl crawls pause 1 && trawl crawls resume 1`}

// createArgs are `trawl crawls create`'s own flags, a crawl's spec.
type createArgs struct {
	seeds, domains multiFlag
	name           string
	maxDepth       int
	maxPages       int
	priority       int
	giveUp         time.Duration
	maxWait        time.Duration
	recrawl        recrawlFlags
}

func (a *createArgs) register(fs *flag.FlagSet) {
	fs.Var(&a.seeds, "seed", "a seed URL (repeatable; URLs given as arguments are seeds too)")
	fs.Var(&a.domains, "domain", "crawl only this domain and its subdomains (repeatable; default: the seeds' hosts)")
	fs.StringVar(&a.name, "name", "", "the crawl's name; a crawl created with an existing crawl's name is that crawl, run again with this spec (its id and seen URLs kept)")
	d := job.Defaults()
	fs.IntVar(&a.maxDepth, "max-depth", d.MaxDepth, "most links followed from a seed, as trawl crawl's (0: no limit)")
	fs.IntVar(&a.maxPages, "max-pages", d.MaxPages, "stop after this many pages (0: no limit)")
	fs.IntVar(&a.priority, "priority", d.Priority, "-1 (low), 0 or 1 (high): which crawl's URLs go first on a shared node")
	fs.DurationVar(&a.giveUp, "robots-give-up", d.RobotsGiveUp, "give up a host whose robots.txt stays unavailable this long, as trawl crawl's (0: never)")
	fs.DurationVar(&a.maxWait, "max-wait", d.MaxWait, "once nothing may be fetched within this, give up hosts that ask to wait longer, as trawl crawl's (0: wait for ever)")
	a.recrawl.register(fs)
}

func init() {
	crawlsGroup.commands = []clientCommand{
		{name: "list", summary: "every crawl the server knows", nargs: 0, run: crawlsList, help: `
Examples:
  trawl crawls list
  trawl crawls list --json | jq '.crawls[] | select(.state == "running") | .id'`},
		{name: "show", args: "ID", summary: "one crawl's spec and state", nargs: 1, run: crawlsShow, help: `
Examples:
  trawl crawls show 3
  trawl crawls show 3 --json`},
		{name: "create", args: "[SEED...]", summary: "start a crawl", nargs: -1, bind: func() (func(*flag.FlagSet), clientRun) { a := new(createArgs); return a.register, a.run }, help: `
From the --seed URLs and any given as arguments; prints the crawl's id. The
spec's defaults are trawl crawl's: the seeds' hosts, depth 20, no page limit,
priority 0.

Examples:
  trawl crawls create --seed https://example.org/
  trawl crawls create --name docs --seed https://example.org/docs/ --domain example.org --max-depth 5 --max-pages 10000
  trawl crawls create --priority 1 https://a.example/ https://b.example/
  trawl crawls create --continuous --recrawl-min 6h --recrawl-budget 500 https://example.org/
  trawl crawls create --data /srv/trawl --seed https://example.org/   # the token from /srv/trawl/api.token`},
		{name: "stats", args: "ID", summary: "a crawl's counters", nargs: 1, run: crawlsStats, help: `
Examples:
  trawl crawls stats 3
  watch -n 5 trawl crawls stats 3
  trawl crawls stats 3 --json | jq .fetched`},
		{name: "seeds", args: "ID URL...", summary: "add seeds to a crawl that has not ended", nargs: -1, run: crawlsSeeds, help: `
The seeds go through the crawl's scope and exclusions; those the crawl has
seen already are not queued again. Prints how many were added.

Examples:
  trawl crawls seeds 3 https://example.org/new/ https://example.org/archive/
  xargs trawl crawls seeds 3 < more-seeds.txt`},
		{name: "exclude", args: "ID", summary: "show or edit a crawl's exclusion patterns", nargs: 1, bind: func() (func(*flag.FlagSet), clientRun) { a := new(excludeArgs); return a.register, a.run }, help: `
Patterns are regular expressions (Go's RE2 syntax) matched anywhere in a
canonical URL unless anchored. A URL one matches is not fetched: links are
dropped as they are found, queued URLs as they are leased. Without --add or
--remove, prints the patterns; with them, changes them (the token is needed)
and prints the patterns after the change, one a line.

Examples:
  trawl crawls exclude 3
  trawl crawls exclude 3 --add '/calendar/' --add '\?sessionid='
  trawl crawls exclude 3 --remove '/calendar/'`},
		{name: "pause", args: "ID", summary: "pause a crawl (its queued URLs wait; fetches in flight finish)", nargs: 1, run: crawlsChange((*apiclient.Client).Pause), help: `
Examples:
  trawl crawls pause 3
  TRAWL_TOKEN_FILE=/etc/trawl/token trawl crawls pause 3 --server http://crawler:8420`},
		{name: "resume", args: "ID", summary: "resume a paused crawl", nargs: 1, run: crawlsChange((*apiclient.Client).Resume), help: `
Examples:
  trawl crawls resume 3`},
		{name: "cancel", args: "ID", summary: "end a crawl for good (its queued URLs are dropped)", nargs: 1, run: crawlsChange((*apiclient.Client).Cancel), help: `
Examples:
  trawl crawls cancel 3`},
	}
	crawlsGroup.register()
}

// register adds the subcommand's flags to fs, with cf holding the
// clients' ones, and returns its run.
func (sc clientCommand) register(fs *flag.FlagSet, cf *clientFlags) clientRun {
	cf.register(fs)
	if sc.bind == nil {
		return sc.run
	}
	flags, run := sc.bind()
	flags(fs)
	return run
}

// help is the group's --help.
func (g *clientGroup) help() string {
	var b strings.Builder
	fmt.Fprintf(&b, "usage: trawl %s COMMAND [flags] [args]\n\nTalks to a running trawl serve (--server) about %s.\n\nCommands:\n", g.name, g.about)
	for _, sc := range g.commands {
		fmt.Fprintf(&b, "  %-8s %s\n", sc.name, sc.summary)
	}
	example := g.commands[0].name // a subcommand whose own section is worth showing
	for _, sc := range g.commands {
		if sc.bind != nil {
			example = sc.name
			break
		}
	}
	fmt.Fprintf(&b, `
Run 'trawl %[1]s COMMAND --help' for its flags. A config file section
%[1]q holds defaults for all of them (e.g. "server"), "%[1]s %[2]s"
for one.

Examples:
%[3]s
`, g.name, example, strings.TrimRight(g.examples, "\n"))
	return b.String()
}

// main runs `trawl GROUP args...`.
func (g *clientGroup) main(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, g.help())
		return 2
	}
	if a := args[0]; a == "-h" || a == "--help" || a == "-help" || a == "help" {
		fmt.Fprint(stderr, g.help())
		return 0
	}
	for _, sc := range g.commands {
		if sc.name == args[0] {
			return sc.main(g.name+" "+sc.name, args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "trawl %s: unknown command %q\n\n%s", g.name, args[0], g.help())
	return 2
}

// main parses the subcommand's flags and arguments and runs it; path is
// its name with its group's.
func (sc clientCommand) main(path string, args []string, stdout, stderr io.Writer) int {
	help := fmt.Sprintf("usage: trawl %s [flags] %s\n\n%s.\n%s\n%s\n%s", path, sc.args,
		strings.ToUpper(sc.summary[:1])+sc.summary[1:], sc.help, tokenHelp, clientExitHelp)
	fs := newFlagSet(path, help, clientEnv, stderr)
	var cf clientFlags
	run := sc.register(fs, &cf)
	pos, src, code, ok := parseInterleaved(fs, args, clientEnv, stderr)
	if !ok {
		return code
	}
	if sc.nargs >= 0 && len(pos) != sc.nargs {
		want := "no arguments"
		if sc.nargs > 0 {
			want = sc.args
		}
		fmt.Fprintf(stderr, "trawl %s: want %s, got %q (see --help)\n", path, want, pos)
		return 2
	}
	c, origin, err := cf.open(src)
	if err != nil {
		fmt.Fprintf(stderr, "trawl %s: %v\n", path, err)
		return 2
	}
	if err := run(context.Background(), c, &cf, pos, stdout); err != nil {
		var ue usageError
		if errors.As(err, &ue) {
			fmt.Fprintf(stderr, "trawl %s: %v\n", path, ue.error)
			return 2
		}
		return cf.fail(stderr, path, err, origin)
	}
	return 0
}

// usageError is a bad argument found by a subcommand's run: exit 2.
type usageError struct{ error }

// idArg parses the one argument, a crawl id.
func idArg(args []string) (uint32, error) {
	id, err := crawlID(args[0])
	if err != nil {
		return 0, usageError{err}
	}
	return id, nil
}

func crawlsList(ctx context.Context, c *apiclient.Client, cf *clientFlags, _ []string, w io.Writer) error {
	l, err := c.Crawls(ctx)
	if err != nil {
		return err
	}
	if cf.json {
		clientcmd.PrintJSON(w, l.Raw)
		return nil
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
			clientcmd.Limit(cr.MaxDepth), clientcmd.Limit(cr.MaxPages), clientcmd.FirstOf(cr.Seeds), clientcmd.FirstOf(cr.Domains))
	}
	return tw.Flush()
}

func crawlsShow(ctx context.Context, c *apiclient.Client, cf *clientFlags, args []string, w io.Writer) error {
	id, err := idArg(args)
	if err != nil {
		return err
	}
	cr, err := c.Crawl(ctx, id)
	if err != nil {
		return err
	}
	if cf.json {
		clientcmd.PrintJSON(w, cr.Raw)
		return nil
	}
	clientcmd.PrintCrawl(w, cr)
	return nil
}

func crawlsStats(ctx context.Context, c *apiclient.Client, cf *clientFlags, args []string, w io.Writer) error {
	id, err := idArg(args)
	if err != nil {
		return err
	}
	st, err := c.Stats(ctx, id)
	if err != nil {
		return err
	}
	if cf.json {
		clientcmd.PrintJSON(w, st.Raw)
		return nil
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
	clientcmd.PrintRecrawls(w, st)
	return nil
}

// crawlsChange runs a change of state (pause, resume, cancel).
func crawlsChange(do func(*apiclient.Client, context.Context, uint32) (apiclient.Crawl, error)) func(context.Context, *apiclient.Client, *clientFlags, []string, io.Writer) error {
	return func(ctx context.Context, c *apiclient.Client, cf *clientFlags, args []string, w io.Writer) error {
		id, err := idArg(args)
		if err != nil {
			return err
		}
		cr, err := do(c, ctx, id)
		if err != nil {
			return err
		}
		if cf.json {
			clientcmd.PrintJSON(w, cr.Raw)
			return nil
		}
		fmt.Fprintf(w, "crawl %d %s\n", cr.ID, cr.State)
		return nil
	}
}

// crawlsSeeds adds seeds to a crawl.
func crawlsSeeds(ctx context.Context, c *apiclient.Client, cf *clientFlags, args []string, w io.Writer) error {
	if len(args) < 2 {
		return usageError{fmt.Errorf("want ID URL..., got %q", args)}
	}
	id, err := idArg(args)
	if err != nil {
		return err
	}
	s, err := c.AddSeeds(ctx, id, args[1:])
	if err != nil {
		return err
	}
	if cf.json {
		clientcmd.PrintJSON(w, s.Raw)
		return nil
	}
	fmt.Fprintf(w, "crawl %d: %d seeds added, %d seen already\n", id, s.Added, s.AlreadySeen)
	return nil
}

// excludeArgs are `trawl crawls exclude`'s own flags.
type excludeArgs struct{ add, remove multiFlag }

func (a *excludeArgs) register(fs *flag.FlagSet) {
	fs.Var(&a.add, "add", "add this pattern (repeatable)")
	fs.Var(&a.remove, "remove", "remove this pattern (repeatable)")
}

// run shows or edits the crawl's exclusion patterns.
func (a *excludeArgs) run(ctx context.Context, c *apiclient.Client, cf *clientFlags, args []string, w io.Writer) error {
	id, err := idArg(args)
	if err != nil {
		return err
	}
	var x apiclient.Exclusions
	if len(a.add) == 0 && len(a.remove) == 0 {
		x, err = c.Exclusions(ctx, id)
	} else {
		x, err = c.EditExclusions(ctx, id, a.add, a.remove)
	}
	if err != nil {
		return err
	}
	if cf.json {
		clientcmd.PrintJSON(w, x.Raw)
		return nil
	}
	if len(x.Patterns) == 0 {
		fmt.Fprintf(w, "crawl %d excludes nothing: trawl crawls exclude %d --add PATTERN adds a pattern\n", id, id)
	}
	for _, p := range x.Patterns {
		fmt.Fprintln(w, p)
	}
	return nil
}

// run creates the crawl.
func (a *createArgs) run(ctx context.Context, c *apiclient.Client, cf *clientFlags, args []string, w io.Writer) error {
	seeds := append(append([]string{}, a.seeds...), args...)
	if len(seeds) == 0 {
		return usageError{fmt.Errorf("no seeds: give --seed URL (or URLs as arguments)")}
	}
	spec := job.Defaults()
	spec.Name, spec.Seeds, spec.Domains, spec.Priority = a.name, seeds, a.domains, a.priority
	spec.MaxDepth, spec.MaxPages, spec.RobotsGiveUp, spec.MaxWait = a.maxDepth, a.maxPages, a.giveUp, a.maxWait
	a.recrawl.apply(&spec)
	if err := checkSpec(spec, nil); err != nil { // the server's check, in the flags' words
		return usageError{err}
	}
	giveUpS, maxWaitS := spec.RobotsGiveUp.Seconds(), spec.MaxWait.Seconds()
	req := apiclient.CrawlRequest{Name: spec.Name, Seeds: spec.Seeds, Priority: spec.Priority,
		Scope:      apiclient.Scope{Domains: spec.Domains, MaxDepth: &spec.MaxDepth},
		Limits:     apiclient.Limits{MaxPages: spec.MaxPages, RobotsGiveUpS: &giveUpS, MaxWaitS: &maxWaitS},
		Continuous: spec.Continuous,
		Recrawl: apiclient.Recrawl{MinS: spec.RecrawlMin.Seconds(), MaxS: spec.RecrawlMax.Seconds(),
			BudgetPerHour: spec.RecrawlBudget}}
	created, err := c.CreateCrawl(ctx, req)
	if err != nil {
		return err
	}
	if cf.json {
		clientcmd.PrintJSON(w, created.Raw)
		return nil
	}
	fmt.Fprintf(w, "crawl %d accepted: trawl crawls stats %d follows it\n", created.CrawlID, created.CrawlID)
	return nil
}
