package clientcmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/trawl-crawler/trawl/internal/cli/apiclient"
)

// HostsList is `trawl hosts list`: a page of hosts, or every page.
type HostsList struct {
	State string // only hosts in this state; "" any
	Crawl string // only hosts where this crawl (an id, as given) has queued a URL; "" any
	Limit int    // hosts a page; 0 the server's default
	All   bool   // every page, not only the first
}

// Run lists the hosts.
func (hl *HostsList) Run(ctx context.Context, c *apiclient.Client, o Options, _ []string, w io.Writer) error {
	q := apiclient.HostQuery{State: hl.State, Limit: hl.Limit}
	if hl.Crawl != "" {
		id, err := crawlID(hl.Crawl)
		if err != nil {
			return UsageError{fmt.Errorf("--crawl: %w", err)}
		}
		q.Crawl = id
	}
	l, err := c.Hosts(ctx, q)
	if err != nil {
		return err
	}
	var raws []json.RawMessage // with All and JSON, every page's hosts as sent
	for hl.All && l.NextCursor != "" {
		if o.JSON {
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
	if o.JSON {
		if raws == nil {
			PrintJSON(w, l.Raw)
			return nil
		}
		if raws, err = appendRawHosts(raws, l.Raw); err != nil {
			return err
		}
		b, _ := json.Marshal(struct {
			Hosts []json.RawMessage `json:"hosts"`
		}{raws})
		PrintJSON(w, b)
		return nil
	}
	if len(l.Hosts) == 0 {
		fmt.Fprintln(w, "no hosts")
	} else {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "HOST\tSTATE\tQUEUED\tIN FLIGHT\tNEXT FETCH\tDELAY\tPOLICY")
		for _, h := range l.Hosts {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%s\n", h.Host, HostState(h), h.Queued, h.InFlight, NextFetch(h), HostDelay(h), PolicyText(h.Policy))
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

// HostsShow is `trawl hosts show HOST`: one host's queue per crawl,
// politeness clock, policy and robots.txt.
func HostsShow(ctx context.Context, c *apiclient.Client, o Options, args []string, w io.Writer) error {
	d, err := c.HostStatus(ctx, args[0])
	if err != nil || o.answer(w, d.Raw) {
		return err
	}
	fmt.Fprintf(w, "host         %s", d.Host.Host)
	if d.IP != "" {
		fmt.Fprintf(w, " (%s)", d.IP)
	}
	fmt.Fprintf(w, "\nstate        %s: %d queued, %d in flight, %d leased (%d duplicates)\n", HostState(d.Host), d.Queued, d.InFlight, d.Leased, d.Duplicates)
	counted := ""
	if !d.QueuedCounted {
		counted = " (counted in part)"
	}
	fmt.Fprintf(w, "by crawl     %s; held %s%s\n", QueuedByCrawl(d.QueuedByCrawl, d.InFlightByCrawl), ByCrawl(d.HeldByCrawl), counted)
	fmt.Fprintf(w, "next fetch   %s\n", NextFetch(d.Host))
	fmt.Fprintf(w, "delay        %s; backoff %s, Crawl-delay %s\n", HostDelay(d.Host), Millis(d.BackoffMS), Millis(d.CrawlDelayMS))
	fmt.Fprintf(w, "policy       %s\n", PolicyText(d.Policy))
	for _, r := range d.Robots {
		fmt.Fprintf(w, "robots.txt   %s: %s\n", r.Origin, Robots(r))
	}
	return nil
}

// Policy is `trawl hosts policy HOST`: it replaces the host's whole
// policy. Given names the flags that set Policy (on the command line, in
// the environment or the config file), in order: a run with none is
// refused rather than taken as Clear.
type Policy struct {
	Policy apiclient.HostPolicy
	Given  []string
	Clear  bool // restore every default (alone)
}

// Run replaces the host's policy.
func (p *Policy) Run(ctx context.Context, c *apiclient.Client, o Options, args []string, w io.Writer) error {
	switch {
	case p.Clear && len(p.Given) > 0:
		return UsageError{fmt.Errorf("--clear and --%s: --clear restores every default, alone", p.Given[0])}
	case !p.Clear && len(p.Given) == 0:
		return UsageError{fmt.Errorf("nothing to set: give --min-delay, --max-parallel or --paused (the policy is replaced whole), or --clear to restore the defaults")}
	}
	set, err := c.SetHostPolicy(ctx, args[0], p.Policy)
	if err != nil || o.answer(w, set.Raw) {
		return err
	}
	fmt.Fprintf(w, "host %s: policy %s\n", set.Host, PolicyText(set.Policy))
	return nil
}
