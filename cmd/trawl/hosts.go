package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/trawl-crawler/trawl/internal/cli/apiclient"
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
		{name: "list", summary: "the hosts, by state and crawl", nargs: 0, bind: func() (func(*flag.FlagSet), clientRun) { a := new(hostsListArgs); return a.register, a.run }, help: `
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
		{name: "show", args: "HOST", summary: "one host's queue per crawl, politeness clock, policy and robots.txt", nargs: 1, run: hostsShow, help: `
Examples:
  trawl hosts show example.org
  trawl hosts show example.org:8080 --json`},
		{name: "policy", args: "HOST", summary: "set a host's policy, replacing the one it had", nargs: 1, bind: func() (func(*flag.FlagSet), clientRun) { a := new(policyArgs); return a.register, a.run }, help: `
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

// hostsListArgs are `trawl hosts list`'s own flags.
type hostsListArgs struct {
	state, crawl string
	limit        int
	all          bool
}

func (a *hostsListArgs) register(fs *flag.FlagSet) {
	fs.StringVar(&a.state, "state", "", "only hosts in this state: dead, paused, parked, backoff, waiting, ready or idle")
	fs.StringVar(&a.crawl, "crawl", "", "only hosts where the crawl with this id has queued a URL")
	fs.IntVar(&a.limit, "limit", 0, "hosts a page at most, 1 to 1000 (0: the server's default, 100)")
	fs.BoolVar(&a.all, "all", false, "every page, not only the first")
}

// run lists the hosts.
func (a *hostsListArgs) run(ctx context.Context, c *apiclient.Client, cf *clientFlags, _ []string, w io.Writer) error {
	q := apiclient.HostQuery{State: a.state, Limit: a.limit}
	if a.crawl != "" {
		id, err := crawlID(a.crawl)
		if err != nil {
			return usageError{fmt.Errorf("--crawl: %w", err)}
		}
		q.Crawl = id
	}
	l, err := c.Hosts(ctx, q)
	if err != nil {
		return err
	}
	var raws []json.RawMessage // with --all --json, every page's hosts as sent
	for a.all && l.NextCursor != "" {
		if cf.json {
			if raws, err = appendRawHosts(raws, l.Raw); err != nil {
				return err
			}
		}
		q.Cursor = l.NextCursor
		next, err := c.Hosts(ctx, q)
		if err != nil {
			return err
		}
		next.Hosts = append(l.Hosts, next.Hosts...)
		l = next
	}
	if cf.json {
		if raws == nil {
			clientcmd.PrintJSON(w, l.Raw)
			return nil
		}
		if raws, err = appendRawHosts(raws, l.Raw); err != nil {
			return err
		}
		b, _ := json.Marshal(struct {
			Hosts []json.RawMessage `json:"hosts"`
		}{raws})
		clientcmd.PrintJSON(w, b)
		return nil
	}
	if len(l.Hosts) == 0 {
		fmt.Fprintln(w, "no hosts")
	} else {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "HOST\tSTATE\tQUEUED\tIN FLIGHT\tNEXT FETCH\tDELAY\tPOLICY")
		for _, h := range l.Hosts {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%s\n", h.Host, clientcmd.HostState(h), h.Queued, h.InFlight, clientcmd.NextFetch(h), clientcmd.HostDelay(h), clientcmd.PolicyText(h.Policy))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if l.NextCursor != "" {
		fmt.Fprintln(w, "(more hosts: --all lists every page)")
	}
	return nil
}

// appendRawHosts appends a page's hosts, as the server sent them, to raws.
func appendRawHosts(raws []json.RawMessage, page []byte) ([]json.RawMessage, error) {
	var p struct {
		Hosts []json.RawMessage `json:"hosts"`
	}
	if err := json.Unmarshal(page, &p); err != nil {
		return nil, fmt.Errorf("a page of hosts: %w", err)
	}
	return append(raws, p.Hosts...), nil
}

func hostsShow(ctx context.Context, c *apiclient.Client, cf *clientFlags, args []string, w io.Writer) error {
	d, err := c.HostStatus(ctx, args[0])
	if err != nil {
		return err
	}
	if cf.json {
		clientcmd.PrintJSON(w, d.Raw)
		return nil
	}
	fmt.Fprintf(w, "host         %s", d.Host.Host)
	if d.IP != "" {
		fmt.Fprintf(w, " (%s)", d.IP)
	}
	fmt.Fprintf(w, "\nstate        %s: %d queued, %d in flight, %d leased (%d duplicates)\n", clientcmd.HostState(d.Host), d.Queued, d.InFlight, d.Leased, d.Duplicates)
	counted := ""
	if !d.QueuedCounted {
		counted = " (counted in part)"
	}
	fmt.Fprintf(w, "by crawl     %s; held %s%s\n", clientcmd.QueuedByCrawl(d.QueuedByCrawl, d.InFlightByCrawl), clientcmd.ByCrawl(d.HeldByCrawl), counted)
	fmt.Fprintf(w, "next fetch   %s\n", clientcmd.NextFetch(d.Host))
	fmt.Fprintf(w, "delay        %s; backoff %s, Crawl-delay %s\n", clientcmd.HostDelay(d.Host), clientcmd.Millis(d.BackoffMS), clientcmd.Millis(d.CrawlDelayMS))
	fmt.Fprintf(w, "policy       %s\n", clientcmd.PolicyText(d.Policy))
	for _, r := range d.Robots {
		fmt.Fprintf(w, "robots.txt   %s: %s\n", r.Origin, clientcmd.Robots(r))
	}
	return nil
}

// policyArgs are `trawl hosts policy`'s own flags. Each records whether
// it was given (on the command line, in the environment or the config
// file): the PUT replaces the whole policy, so a run without any is
// refused rather than taken as --clear.
type policyArgs struct {
	p     apiclient.HostPolicy
	given []string
	clear bool
}

func (a *policyArgs) register(fs *flag.FlagSet) {
	fs.Func("min-delay", "the host's own least gap between fetches, a `DURATION` such as 5s (not given: the node's --min-delay)", func(s string) error {
		d, err := time.ParseDuration(s)
		if err != nil {
			return err
		}
		n := d.Milliseconds()
		a.p.MinDelayMS, a.given = &n, append(a.given, "min-delay")
		return nil
	})
	fs.Func("max-parallel", "`N` fetches from the host in flight at once, at most (not given or 0: the node's default)", func(s string) error {
		n, err := strconv.Atoi(s)
		a.p.MaxParallel, a.given = n, append(a.given, "max-parallel")
		return err
	})
	fs.BoolFunc("paused", "fetch nothing from the host until a policy without --paused", func(s string) error {
		b, err := strconv.ParseBool(s)
		a.p.Paused, a.given = b, append(a.given, "paused")
		return err
	})
	fs.BoolVar(&a.clear, "clear", false, "restore the node's defaults (alone)")
}

// run replaces the host's policy.
func (a *policyArgs) run(ctx context.Context, c *apiclient.Client, cf *clientFlags, args []string, w io.Writer) error {
	switch {
	case a.clear && len(a.given) > 0:
		return usageError{fmt.Errorf("--clear and --%s: --clear restores every default, alone", a.given[0])}
	case !a.clear && len(a.given) == 0:
		return usageError{fmt.Errorf("nothing to set: give --min-delay, --max-parallel or --paused (the policy is replaced whole), or --clear to restore the defaults")}
	}
	set, err := c.SetHostPolicy(ctx, args[0], a.p)
	if err != nil {
		return err
	}
	if cf.json {
		clientcmd.PrintJSON(w, set.Raw)
		return nil
	}
	fmt.Fprintf(w, "host %s: policy %s\n", set.Host, clientcmd.PolicyText(set.Policy))
	return nil
}
