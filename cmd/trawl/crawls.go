package main

import (
	"context"
	"flag"
	"io"

	"github.com/trawl-crawler/trawl/internal/cli/apiclient"
	"github.com/trawl-crawler/trawl/internal/cli/clientcmd"
	"github.com/trawl-crawler/trawl/job"
)

// crawlsGroup is `trawl crawls`; its subcommands are in the order --help lists
// them.
var crawlsGroup = &clientGroup{name: "crawls", about: "its crawls",
	summary: "list, show, create, steer (seeds, exclusions), pause, resume and cancel a running server's crawls",
	examples: `  trawl crawls list
  trawl crawls create --seed https://example.org/ --max-pages 1000
  trawl crawls stats 1
  trawl crawls exclude 1 --add '/calendar/'
  trawl crawls pause 1 && trawl crawls resume 1`}

func init() {
	crawlsGroup.commands = []clientCommand{
		{name: "list", summary: "every crawl the server knows", nargs: 0, run: clientcmd.CrawlsList, help: `
Examples:
  trawl crawls list
  trawl crawls list --json | jq '.crawls[] | select(.state == "running") | .id'`},
		{name: "show", args: "ID", summary: "one crawl's spec and state", nargs: 1, run: clientcmd.CrawlsShow, help: `
Examples:
  trawl crawls show 3
  trawl crawls show 3 --json`},
		{name: "create", args: "[SEED...]", summary: "start a crawl", nargs: -1, bind: createFlags, help: `
From the --seed URLs and any given as arguments; prints the crawl's id. The
spec's defaults are trawl crawl's: the seeds' hosts, depth 20, no page limit,
priority 0.

Examples:
  trawl crawls create --seed https://example.org/
  trawl crawls create --name docs --seed https://example.org/docs/ --domain example.org --max-depth 5 --max-pages 10000
  trawl crawls create --priority 1 https://a.example/ https://b.example/
  trawl crawls create --continuous --recrawl-min 6h --recrawl-budget 500 https://example.org/
  trawl crawls create --data /srv/trawl --seed https://example.org/   # the token from /srv/trawl/api.token`},
		{name: "stats", args: "ID", summary: "a crawl's counters", nargs: 1, run: clientcmd.CrawlsStats, help: `
Examples:
  trawl crawls stats 3
  watch -n 5 trawl crawls stats 3
  trawl crawls stats 3 --json | jq .fetched`},
		{name: "seeds", args: "ID URL...", summary: "add seeds to a crawl that has not ended", nargs: -1, run: clientcmd.CrawlsSeeds, help: `
The seeds go through the crawl's scope and exclusions; those the crawl has
seen already are not queued again. Prints how many were added.

Examples:
  trawl crawls seeds 3 https://example.org/new/ https://example.org/archive/
  xargs trawl crawls seeds 3 < more-seeds.txt`},
		{name: "exclude", args: "ID", summary: "show or edit a crawl's exclusion patterns", nargs: 1, bind: excludeFlags, help: `
Patterns are regular expressions (Go's RE2 syntax) matched anywhere in a
canonical URL unless anchored. A URL one matches is not fetched: links are
dropped as they are found, queued URLs as they are leased. Without --add or
--remove, prints the patterns; with them, changes them (the token is needed)
and prints the patterns after the change, one a line.

Examples:
  trawl crawls exclude 3
  trawl crawls exclude 3 --add '/calendar/' --add '\?sessionid='
  trawl crawls exclude 3 --remove '/calendar/'`},
		{name: "pause", args: "ID", summary: "pause a crawl (its queued URLs wait; fetches in flight finish)", nargs: 1, run: clientcmd.Pause, help: `
Examples:
  trawl crawls pause 3
  TRAWL_TOKEN_FILE=/etc/trawl/token trawl crawls pause 3 --server http://crawler:8420`},
		{name: "resume", args: "ID", summary: "resume a paused crawl", nargs: 1, run: clientcmd.Resume, help: `
Examples:
  trawl crawls resume 3`},
		{name: "cancel", args: "ID", summary: "end a crawl for good (its queued URLs are dropped)", nargs: 1, run: clientcmd.Cancel, help: `
Examples:
  trawl crawls cancel 3`},
	}
	crawlsGroup.register()
}

// createFlags registers `trawl crawls create`'s own flags, a crawl's
// spec, into a new clientcmd.Create.
func createFlags(fs *flag.FlagSet) clientcmd.Run {
	c := &clientcmd.Create{Spec: job.Defaults(), Check: func(s job.Spec) error { return checkSpec(s, nil) }} // the server's check, in the flags' words
	s, d := &c.Spec, job.Defaults()
	fs.Var((*multiFlag)(&s.Seeds), "seed", "a seed URL (repeatable; URLs given as arguments are seeds too)")
	fs.Var((*multiFlag)(&s.Domains), "domain", "crawl only this domain and its subdomains (repeatable; default: the seeds' hosts)")
	fs.StringVar(&s.Name, "name", "", "the crawl's name; a crawl created with an existing crawl's name is that crawl, run again with this spec (its id and seen URLs kept)")
	fs.IntVar(&s.MaxDepth, "max-depth", d.MaxDepth, "most links followed from a seed, as trawl crawl's (0: no limit)")
	fs.IntVar(&s.MaxPages, "max-pages", d.MaxPages, "stop after this many pages (0: no limit)")
	fs.IntVar(&s.Priority, "priority", d.Priority, "-1 (low), 0 or 1 (high): which crawl's URLs go first on a shared node")
	fs.DurationVar(&s.RobotsGiveUp, "robots-give-up", d.RobotsGiveUp, "give up a host whose robots.txt stays unavailable this long, as trawl crawl's (0: never)")
	fs.DurationVar(&s.MaxWait, "max-wait", d.MaxWait, "once nothing may be fetched within this, give up hosts that ask to wait longer, as trawl crawl's (0: wait for ever)")
	var rf recrawlFlags
	rf.register(fs)
	return func(ctx context.Context, cl *apiclient.Client, o clientcmd.Options, args []string, w io.Writer) error {
		rf.apply(s)
		return c.Run(ctx, cl, o, args, w)
	}
}

// excludeFlags registers `trawl crawls exclude`'s own flags into a new
// clientcmd.Exclude.
func excludeFlags(fs *flag.FlagSet) clientcmd.Run {
	x := new(clientcmd.Exclude)
	fs.Var((*multiFlag)(&x.Add), "add", "add this pattern (repeatable)")
	fs.Var((*multiFlag)(&x.Remove), "remove", "remove this pattern (repeatable)")
	return x.Run
}
