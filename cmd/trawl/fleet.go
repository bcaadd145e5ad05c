package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/trawl-crawler/trawl/cluster/fleet"
	"github.com/trawl-crawler/trawl/cluster/jsserver"
)

// fleetArgs are `trawl serve`'s flags for running as one node of a fleet
// (cluster/fleet.Join, through package server): where the NATS cluster
// is, or how to run one inside.
type fleetArgs struct {
	name        string
	natsURL     string
	embedded    bool
	clusterAddr string
	peers       string
	clientAddr  string
	clusterName string
	heartbeat   time.Duration
	memberTTL   time.Duration
	ckptEvery   time.Duration
	hold        time.Duration
}

func (a *fleetArgs) register(fs *flag.FlagSet) {
	fs.StringVar(&a.name, "node-name", "", "this node's name in a fleet, unique among its members (default: the host name)")
	fs.StringVar(&a.natsURL, "nats", "", "join a fleet through this external NATS JetStream cluster (nats://host:port, comma-separated for several)")
	fs.BoolVar(&a.embedded, "nats-embedded", false, "join a fleet by running a NATS JetStream server inside this node, routed to --nats-peers")
	fs.StringVar(&a.clusterAddr, "nats-cluster", "", "with --nats-embedded: host:port the embedded server's peers connect to")
	fs.StringVar(&a.peers, "nats-peers", "", "with --nats-embedded: every fleet server's --nats-cluster address, comma-separated (this node's own may be among them); none: a fleet of one")
	fs.StringVar(&a.clusterName, "nats-cluster-name", "", "with --nats-embedded: the fleet's name, the same on every member from the fleet's first start; a server of a fleet of another name is refused, so two fleets stay apart (default: trawl)")
	fs.StringVar(&a.clientAddr, "nats-listen", "", "with --nats-embedded: host:port for NATS clients from outside (default: 127.0.0.1, any port)")
	fs.DurationVar(&a.heartbeat, "fleet-heartbeat", time.Second, "how often a member renews its membership and reconciles its partitions")
	fs.DurationVar(&a.memberTTL, "fleet-member-ttl", 15*time.Second, "a member silent this long is dead and its partitions are taken over (at least 4 heartbeats)")
	fs.DurationVar(&a.ckptEvery, "fleet-checkpoint-every", 5*time.Minute, "how often each partition a member serves is checkpointed (a taker redoes what came after)")
	fs.DurationVar(&a.hold, "fleet-takeover-hold", 0, "how long a partition taken from a dead member leaves its hosts alone (its last fetches may still be in flight); 0: the fetch timeout plus the minimum gap (61s with their defaults)")
}

// enabled reports whether the flags ask for a fleet.
func (a *fleetArgs) enabled() bool { return a.natsURL != "" || a.embedded }

// check reports the first contradiction among the flags.
func (a *fleetArgs) check() error {
	switch {
	case a.natsURL != "" && a.embedded:
		return errors.New("--nats and --nats-embedded: choose one (an external cluster, or a server inside each node)")
	case !a.embedded && (a.clusterAddr != "" || a.peers != "" || a.clientAddr != "" || a.clusterName != ""):
		return errors.New("--nats-cluster, --nats-peers, --nats-listen and --nats-cluster-name need --nats-embedded")
	case jsserver.CheckName(a.clusterName) != nil:
		return fmt.Errorf("--nats-cluster-name %q: %v; give every member the same name", a.clusterName, jsserver.CheckName(a.clusterName))
	case a.embedded && a.peers != "" && a.clusterAddr == "":
		return errors.New("--nats-peers needs --nats-cluster (the address this node's peers reach it on)")
	case !a.enabled() && a.name != "":
		return errors.New("--node-name needs --nats or --nats-embedded")
	case a.heartbeat <= 0 || a.memberTTL < 4*a.heartbeat:
		return fmt.Errorf("--fleet-member-ttl %v: at least 4 x --fleet-heartbeat %v (and both positive)", a.memberTTL, a.heartbeat)
	case a.ckptEvery <= 0:
		return fmt.Errorf("--fleet-checkpoint-every %v: must be positive", a.ckptEvery)
	case a.hold < 0:
		return fmt.Errorf("--fleet-takeover-hold %v: negative (0 for the fetch timeout plus the minimum gap)", a.hold)
	}
	return nil
}

// memberName is --node-name, or the host name.
func (a *fleetArgs) memberName() (string, error) {
	if a.name != "" {
		return a.name, nil
	}
	h, err := os.Hostname()
	if err != nil {
		return "", fmt.Errorf("--node-name not given and no host name: %w", err)
	}
	// '.' and spaces are not allowed in a member's name (NATS subjects).
	return strings.NewReplacer(".", "-", " ", "-").Replace(h), nil
}

// options are the fleet's join options from the flags: the member's name
// is --node-name, or the host name.
func (a *fleetArgs) options() (*fleet.JoinOptions, error) {
	name, err := a.memberName()
	if err != nil {
		return nil, err
	}
	var peers []string
	for _, p := range strings.Split(a.peers, ",") {
		if p = strings.TrimSpace(p); p != "" {
			peers = append(peers, p)
		}
	}
	return &fleet.JoinOptions{
		Name: name, NATSURL: a.natsURL, Embedded: a.embedded,
		ClusterAddr: a.clusterAddr, Peers: peers, ClientAddr: a.clientAddr, ClusterName: a.clusterName,
		Heartbeat: a.heartbeat, MemberTTL: a.memberTTL, CheckpointEvery: a.ckptEvery, TakeoverHold: a.hold,
	}, nil
}
