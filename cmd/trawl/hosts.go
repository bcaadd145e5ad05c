package main

import (
	"flag"
	"strconv"
	"time"

	"github.com/trawl-crawler/trawl/internal/cli/clientcmd"
)

// hostsGroup is `trawl hosts`: the hosts a server's frontier knows, and their
// policies.
var hostsGroup = &clientGroup{name: "hosts", about: "the hosts its frontier knows",
	summary: "list and show a running server's hosts; set a host's policy (its gap, parallelism, pause)",
	examples: `  trawl hosts list --state backoff
  trawl hosts show example.org
  trawl hosts policy example.org --min-delay 5s`}

func init() {
	hostsGroup.commands = []clientCommand{
		{name: "list", summary: "the hosts, by state and crawl", nargs: 0, bind: hostsListFlags, help: `
A page of hosts (--limit, the server's 100 by default), or every page with
--all. A host's state is one of dead, paused, parked (its IP's cap),
backoff, waiting (its gap), ready or idle. A dead host's state says why
it was given up (host-dropped, budget, duplicates, failing); a live host
whose latest fetches ended without a response says how many in a row and
how (timeout, network); 20 in a row the same way give it up. NEXT FETCH
is how long until the host may be fetched again and why it waits: its
politeness gap, backoff after errors, a server's Retry-After (on a page or
on robots.txt), robots.txt unavailable; DELAY is the gap its last request
set, and the rule that set it.

Examples:
  trawl hosts list
  trawl hosts list --state backoff --crawl 3
  trawl hosts list --all --json | jq -r '.hosts[] | select(.queued > 100) | .host'`},
		{name: "show", args: "HOST", summary: "one host's queue per crawl, politeness clock, policy and robots.txt", nargs: 1, run: clientcmd.HostsShow, help: `
Examples:
  trawl hosts show example.org
  trawl hosts show example.org:8080 --json`},
		{name: "policy", args: "HOST", summary: "set a host's policy, replacing the one it had", nargs: 1, bind: policyFlags, help: `
The policy given replaces the host's whole policy: a flag not given is the
node's default again, whatever it was set to before. --clear restores every
default. It takes effect at the host's next lease and survives a restart;
robots.txt's Crawl-delay, the adaptive delay and backoff still apply on top
of --min-delay, and the per-IP cap on top of --max-parallel.

Examples:
  trawl hosts policy example.org --min-delay 5s
  trawl hosts policy example.org --min-delay 2s --max-parallel 1 --paused
  trawl hosts policy example.org --clear`},
	}
	hostsGroup.register()
}

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
