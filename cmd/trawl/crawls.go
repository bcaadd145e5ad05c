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

	"github.com/trawl-crawler/trawl/internal/apiclient"
	"github.com/trawl-crawler/trawl/internal/progress"
)

// crawlsCommand is one `trawl crawls` subcommand.
type crawlsCommand struct {
	name, args, summary, help string
	nargs                     int // arguments wanted; -1: any number
	// run does the subcommand's call and prints its answer: a usageError
	// for bad arguments, an apiclient error otherwise.
	run crawlsRun
	// bind, if set, makes a subcommand with flags of its own (beside
	// clientFlags): their registration and the run that reads them, over
	// a new set of values each time.
	bind func() (flags func(*flag.FlagSet), run crawlsRun)
}

// crawlsRun runs a subcommand with its client and its arguments, flags
// removed.
type crawlsRun func(ctx context.Context, c *apiclient.Client, cf *clientFlags, args []string, stdout io.Writer) error

// crawlsCommands are `trawl crawls`'s subcommands, in the order --help
// lists them. "seeds" and "exclude" (a running crawl's seeds and exclusion
// patterns) are to come with their API routes (docs/plans/issue-9.md, step
// 5), as entries here over apiclient calls of their own.
var crawlsCommands []crawlsCommand

// createArgs are `trawl crawls create`'s own flags, a crawl's spec.
type createArgs struct {
	seeds, domains multiFlag
	name           string
	maxDepth       int
	maxPages       int
	priority       int
	giveUp         time.Duration
}

func (a *createArgs) register(fs *flag.FlagSet) {
	fs.Var(&a.seeds, "seed", "a seed URL (repeatable; URLs given as arguments are seeds too)")
	fs.Var(&a.domains, "domain", "crawl only this domain and its subdomains (repeatable; default: the seeds' hosts)")
	fs.StringVar(&a.name, "name", "", "the crawl's name; a crawl created with an existing crawl's name is that crawl, run again with this spec (its id and seen URLs kept)")
	fs.IntVar(&a.maxDepth, "max-depth", 20, "most links followed from a seed, as trawl crawl's (0: no limit)")
	fs.IntVar(&a.maxPages, "max-pages", 0, "stop after this many pages (0: no limit)")
	fs.IntVar(&a.priority, "priority", 0, "-1 (low), 0 or 1 (high): which crawl's URLs go first on a shared node")
	fs.DurationVar(&a.giveUp, "robots-give-up", 0, "give up a host whose robots.txt stays unavailable this long (0: never, the server's default)")
}

func init() {
	crawlsCommands = []crawlsCommand{
		{name: "list", summary: "every crawl the server knows", nargs: 0, run: crawlsList, help: `
Examples:
  trawl crawls list
  trawl crawls list --json | jq '.crawls[] | select(.state == "running") | .id'`},
		{name: "show", args: "ID", summary: "one crawl's spec and state", nargs: 1, run: crawlsShow, help: `
Examples:
  trawl crawls show 3
  trawl crawls show 3 --json`},
		{name: "create", args: "[SEED...]", summary: "start a crawl", nargs: -1, bind: func() (func(*flag.FlagSet), crawlsRun) { a := new(createArgs); return a.register, a.run }, help: `
From the --seed URLs and any given as arguments; prints the crawl's id. The
spec's defaults are trawl crawl's: the seeds' hosts, depth 20, no page limit,
priority 0.

Examples:
  trawl crawls create --seed https://example.org/
  trawl crawls create --name docs --seed https://example.org/docs/ --domain example.org --max-depth 5 --max-pages 10000
  trawl crawls create --priority 1 https://a.example/ https://b.example/
  trawl crawls create --data /srv/trawl --seed https://example.org/   # the token from /srv/trawl/api.token`},
		{name: "stats", args: "ID", summary: "a crawl's counters", nargs: 1, run: crawlsStats, help: `
Examples:
  trawl crawls stats 3
  watch -n 5 trawl crawls stats 3
  trawl crawls stats 3 --json | jq .fetched`},
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
	register("crawls", "list, show, create, pause, resume and cancel a running server's crawls", cmdCrawls)
	for _, sc := range crawlsCommands {
		leaf("crawls "+sc.name, func(fs *flag.FlagSet) { sc.register(fs, new(clientFlags)) })
	}
}

// register adds the subcommand's flags to fs, with cf holding the
// clients' ones, and returns its run.
func (sc crawlsCommand) register(fs *flag.FlagSet, cf *clientFlags) crawlsRun {
	cf.register(fs)
	if sc.bind == nil {
		return sc.run
	}
	flags, run := sc.bind()
	flags(fs)
	return run
}

func crawlsHelp() string {
	var b strings.Builder
	b.WriteString("usage: trawl crawls COMMAND [flags] [args]\n\nTalks to a running trawl serve (--server) about its crawls.\n\nCommands:\n")
	for _, sc := range crawlsCommands {
		fmt.Fprintf(&b, "  %-8s %s\n", sc.name, sc.summary)
	}
	b.WriteString(`
Run 'trawl crawls COMMAND --help' for its flags. A config file section
"crawls" holds defaults for all of them (e.g. "server"), "crawls create"
for one.

Examples:
  trawl crawls list
  trawl crawls create --seed https://example.org/ --max-pages 1000
  trawl crawls stats 1
  trawl crawls pause 1 && trawl crawls resume 1
`)
	return b.String()
}

func cmdCrawls(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, crawlsHelp())
		return 2
	}
	if a := args[0]; a == "-h" || a == "--help" || a == "-help" || a == "help" {
		fmt.Fprint(stderr, crawlsHelp())
		return 0
	}
	for _, sc := range crawlsCommands {
		if sc.name == args[0] {
			return sc.main(args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "trawl crawls: unknown command %q\n\n%s", args[0], crawlsHelp())
	return 2
}

// main parses the subcommand's flags and arguments and runs it.
func (sc crawlsCommand) main(args []string, stdout, stderr io.Writer) int {
	path := "crawls " + sc.name
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
		printJSON(w, l.Raw)
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
			limit(cr.MaxDepth), limit(cr.MaxPages), firstOf(cr.Seeds), firstOf(cr.Domains))
	}
	return tw.Flush()
}

// limit shows a limit whose zero means none.
func limit(n int) string {
	if n == 0 {
		return "none"
	}
	return fmt.Sprint(n)
}

// firstOf is a list's first item and how many more, for a table cell.
func firstOf(list []string) string {
	switch len(list) {
	case 0:
		return "-"
	case 1:
		return list[0]
	}
	return fmt.Sprintf("%s (+%d)", list[0], len(list)-1)
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
		printJSON(w, cr.Raw)
		return nil
	}
	printCrawl(w, cr)
	return nil
}

func printCrawl(w io.Writer, cr apiclient.Crawl) {
	state := cr.State
	if cr.StopReason != "" {
		state += " (" + cr.StopReason + ")"
	}
	domains := strings.Join(cr.Domains, " ")
	if domains == "" {
		domains = "the seeds' hosts"
	}
	fmt.Fprintf(w, "crawl      %d %s\n", cr.ID, cr.Name)
	fmt.Fprintf(w, "state      %s\n", state)
	fmt.Fprintf(w, "seeds      %s\n", strings.Join(cr.Seeds, " "))
	fmt.Fprintf(w, "domains    %s\n", domains)
	fmt.Fprintf(w, "max depth  %s\n", limit(cr.MaxDepth))
	fmt.Fprintf(w, "max pages  %s\n", limit(cr.MaxPages))
	fmt.Fprintf(w, "priority   %d\n", cr.Priority)
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
		printJSON(w, st.Raw)
		return nil
	}
	fmt.Fprintf(w, "crawl %d, %s, after %s\n", st.CrawlID, st.State, time.Duration(st.ElapsedSeconds*float64(time.Second)).Round(time.Second))
	fmt.Fprintf(w, "  pages       %d (%.1f/s; %d shared with another crawl), %d requests incl. %d robots.txt, %s\n",
		st.Fetched, st.PagesPerSecond, st.Shared, st.Requests, st.RobotsFetches, progress.Bytes(st.Bytes))
	fmt.Fprintf(w, "  queue       %d queued, %d in flight, %d held, %d dropped\n", st.Queued, st.InFlight, st.Held, st.Dropped)
	fmt.Fprintf(w, "  discovered  %d URLs; %d out of scope, %d excluded, %d disallowed by robots.txt\n",
		st.Discovered, st.OutOfScope, st.Excluded, st.RobotsDisallowed)
	fmt.Fprintf(w, "  hosts       %d known: %d active, %d waiting, %d in backoff\n", st.Hosts, st.HostsActive, st.HostsWaiting, st.HostsBackoff)
	fmt.Fprintf(w, "  answers     %s\n", progress.Counts(st.StatusByClass))
	fmt.Fprintf(w, "  errors      %s\n", progress.Counts(st.ErrorsByClass))
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
			printJSON(w, cr.Raw)
			return nil
		}
		fmt.Fprintf(w, "crawl %d %s\n", cr.ID, cr.State)
		return nil
	}
}

// run creates the crawl.
func (a *createArgs) run(ctx context.Context, c *apiclient.Client, cf *clientFlags, args []string, w io.Writer) error {
	seeds := append(append([]string{}, a.seeds...), args...)
	if len(seeds) == 0 {
		return usageError{fmt.Errorf("no seeds: give --seed URL (or URLs as arguments)")}
	}
	req := apiclient.CrawlRequest{Name: a.name, Seeds: seeds, Priority: a.priority,
		Scope:  apiclient.Scope{Domains: a.domains, MaxDepth: a.maxDepth},
		Limits: apiclient.Limits{MaxPages: a.maxPages, RobotsGiveUpS: a.giveUp.Seconds()}}
	created, err := c.CreateCrawl(ctx, req)
	if err != nil {
		return err
	}
	if cf.json {
		printJSON(w, created.Raw)
		return nil
	}
	fmt.Fprintf(w, "crawl %d accepted: trawl crawls stats %d follows it\n", created.CrawlID, created.CrawlID)
	return nil
}
