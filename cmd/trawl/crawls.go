package main

import (
	"context"
	"flag"
	"io"

	"github.com/trawl-crawler/trawl/internal/cli/apiclient"
	"github.com/trawl-crawler/trawl/internal/cli/clientcmd"
	"github.com/trawl-crawler/trawl/job"
)

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
	registerRequisites(fs, s)
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
