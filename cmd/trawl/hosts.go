package main

import (
	"flag"
	"strconv"
	"time"

	"github.com/trawl-crawler/trawl/internal/cli/clientcmd"
)

// hostsListFlags registers `trawl hosts list`'s own flags into a new
// clientcmd.HostsList.
func hostsListFlags(fs *flag.FlagSet) clientcmd.Run {
	a := new(clientcmd.HostsList)
	fs.StringVar(&a.State, "state", "", "only hosts in this state: dead, paused, parked, backoff, waiting, ready or idle")
	fs.StringVar(&a.Crawl, "crawl", "", "only hosts where the crawl with this id has queued a URL")
	fs.IntVar(&a.Limit, "limit", 0, "hosts a page at most, 1 to 1000 (0: the server's default, 100)")
	fs.BoolVar(&a.All, "all", false, "every page, not only the first")
	return a.Run
}

// policyFlags registers `trawl hosts policy`'s own flags into a new
// clientcmd.Policy. Each records that it was given (on the command line,
// in the environment or the config file).
func policyFlags(fs *flag.FlagSet) clientcmd.Run {
	a := new(clientcmd.Policy)
	fs.Func("min-delay", "the host's own least gap between fetches, a `DURATION` such as 5s (not given: the node's --min-delay)", func(s string) error {
		d, err := time.ParseDuration(s)
		if err != nil {
			return err
		}
		n := d.Milliseconds()
		a.Policy.MinDelayMS, a.Given = &n, append(a.Given, "min-delay")
		return nil
	})
	fs.Func("max-parallel", "`N` fetches from the host in flight at once, at most (not given or 0: the node's default)", func(s string) error {
		n, err := strconv.Atoi(s)
		a.Policy.MaxParallel, a.Given = n, append(a.Given, "max-parallel")
		return err
	})
	fs.BoolFunc("paused", "fetch nothing from the host until a policy without --paused", func(s string) error {
		b, err := strconv.ParseBool(s)
		a.Policy.Paused, a.Given = b, append(a.Given, "paused")
		return err
	})
	fs.BoolVar(&a.Clear, "clear", false, "restore the node's defaults (alone)")
	return a.Run
}
