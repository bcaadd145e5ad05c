package clientcmd

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/trawl-crawler/trawl/internal/cli/apiclient"
)

// fleetOf returns the fleet the server is a member of, or an error that
// says it is on its own.
func fleetOf(ctx context.Context, c *apiclient.Client) (apiclient.Nodes, error) {
	n, err := c.Nodes(ctx)
	if err != nil {
		return n, err
	}
	if !n.Fleet {
		return n, fmt.Errorf("%s is a node on its own, not a member of a fleet (trawl serve --nats or --nats-embedded joins one)", c.Server())
	}
	return n, nil
}

// FleetMembers is `trawl fleet members`.
func FleetMembers(ctx context.Context, c *apiclient.Client, o Options, _ []string, w io.Writer) error {
	n, err := fleetOf(ctx, c)
	if err != nil || o.answer(w, n.Raw) {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "MEMBER\tAPI\tPARTITIONS\tSTATE")
	total := 0
	for _, m := range n.Nodes {
		name, state, api := m.Name, "serving", m.Info.API
		if name == n.Self {
			name += " *"
		}
		if m.Leaving {
			state = "leaving"
		}
		if api == "" {
			api = "-"
		}
		total += len(m.Owns)
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", name, api, len(m.Owns), state)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if n.Partitions > 0 && total < n.Partitions {
		fmt.Fprintf(w, "%d of %d partitions given to no live member (their owners lost, not yet taken over)\n", n.Partitions-total, n.Partitions)
	}
	var gone []string
	for _, p := range n.Peers {
		if !p.Member {
			state := "offline"
			if !p.Offline {
				state = "not a member"
			}
			gone = append(gone, fmt.Sprintf("%s (%s, last heard %s ago)", p.Name, state, time.Duration(p.ActiveSeconds*float64(time.Second)).Round(time.Second)))
		}
	}
	if len(gone) > 0 {
		fmt.Fprintf(w, "JetStream peers that are no live member: %s; one gone for good: trawl fleet remove NAME\n", strings.Join(gone, ", "))
	}
	return nil
}

// FleetRemove is `trawl fleet remove NAME`.
func FleetRemove(ctx context.Context, c *apiclient.Client, _ Options, args []string, w io.Writer) error {
	if _, err := fleetOf(ctx, c); err != nil {
		return err
	}
	if err := c.RemovePeer(ctx, args[0]); err != nil {
		return err
	}
	fmt.Fprintf(w, "removed %s from the fleet's JetStream peers\n", args[0])
	return nil
}

// FleetPartitions is `trawl fleet partitions [P...]`.
func FleetPartitions(ctx context.Context, c *apiclient.Client, o Options, args []string, w io.Writer) error {
	n, err := fleetOf(ctx, c)
	if err != nil {
		return err
	}
	want := make([]int, 0, len(args))
	for _, a := range args {
		p, err := strconv.Atoi(a)
		if err != nil || p < 0 || (n.Partitions > 0 && p >= n.Partitions) {
			return UsageError{fmt.Errorf("partition %q: want a number from 0 to %d", a, max(n.Partitions, 1)-1)}
		}
		want = append(want, p)
	}
	if o.answer(w, n.Raw) {
		return nil
	}
	owner := make(map[int]string, n.Partitions)
	for _, m := range n.Nodes {
		for _, p := range m.Owns {
			owner[p] = m.Name
		}
	}
	if len(want) == 0 {
		for p := range n.Partitions {
			want = append(want, p)
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PARTITION\tMEMBER")
	for _, p := range want {
		m := owner[p]
		if m == "" {
			m = "-"
		}
		fmt.Fprintf(tw, "%d\t%s\n", p, m)
	}
	return tw.Flush()
}
