package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/trawl-crawler/trawl/api"
	"github.com/trawl-crawler/trawl/cluster/catalog"
	"github.com/trawl-crawler/trawl/cluster/finish"
	"github.com/trawl-crawler/trawl/cluster/fleet"
	"github.com/trawl-crawler/trawl/cluster/fpshard"
	"github.com/trawl-crawler/trawl/cluster/ipcap"
	"github.com/trawl-crawler/trawl/cluster/jsserver"
	"github.com/trawl-crawler/trawl/node"
)

// fleetArgs are `trawl serve`'s flags for running as one node of a fleet
// (cluster/fleet): where the NATS cluster is, or how to run one inside.
type fleetArgs struct {
	name        string
	natsURL     string
	embedded    bool
	clusterAddr string
	peers       string
	clientAddr  string
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
	fs.StringVar(&a.clientAddr, "nats-listen", "", "with --nats-embedded: host:port for NATS clients from outside (default: 127.0.0.1, any port)")
	fs.DurationVar(&a.heartbeat, "fleet-heartbeat", time.Second, "how often a member renews its membership and reconciles its partitions")
	fs.DurationVar(&a.memberTTL, "fleet-member-ttl", 15*time.Second, "a member silent this long is dead and its partitions are taken over (at least 4 heartbeats)")
	fs.DurationVar(&a.ckptEvery, "fleet-checkpoint-every", 5*time.Minute, "how often each partition a member serves is checkpointed (a taker redoes what came after)")
	fs.DurationVar(&a.hold, "fleet-takeover-hold", time.Minute, "how long a partition taken from a dead member leaves its hosts alone (its last fetches may still be in flight): more than the fetch timeout plus a host's gap")
}

// enabled reports whether the flags ask for a fleet.
func (a *fleetArgs) enabled() bool { return a.natsURL != "" || a.embedded }

// check reports the first contradiction among the flags.
func (a *fleetArgs) check() error {
	switch {
	case a.natsURL != "" && a.embedded:
		return errors.New("--nats and --nats-embedded: choose one (an external cluster, or a server inside each node)")
	case !a.embedded && (a.clusterAddr != "" || a.peers != "" || a.clientAddr != ""):
		return errors.New("--nats-cluster, --nats-peers and --nats-listen need --nats-embedded")
	case a.embedded && a.peers != "" && a.clusterAddr == "":
		return errors.New("--nats-peers needs --nats-cluster (the address this node's peers reach it on)")
	case !a.enabled() && a.name != "":
		return errors.New("--node-name needs --nats or --nats-embedded")
	case a.heartbeat <= 0 || a.memberTTL < 4*a.heartbeat:
		return fmt.Errorf("--fleet-member-ttl %v: at least 4 x --fleet-heartbeat %v (and both positive)", a.memberTTL, a.heartbeat)
	case a.ckptEvery <= 0 || a.hold <= 0:
		return errors.New("--fleet-checkpoint-every and --fleet-takeover-hold must be positive")
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

// fleetMember is a serving node's membership of a fleet: the embedded
// server (if any), the connection, the fleet (partitions, routing,
// checkpoints) and the catalog of crawls.
type fleetMember struct {
	srv     *jsserver.Server // nil with --nats
	nc      *nats.Conn
	fleet   *fleet.Fleet
	fp      *fpshard.Shard // the content-seen gate over the fleet
	catalog *catalog.Catalog
	ipcap   *ipcap.Gate // the per-IP cap over the fleet
	stopCap context.CancelFunc
	capDone chan struct{}
	cancel  context.CancelFunc
	done    chan struct{}

	stopFinish context.CancelFunc // the crawl end's reports and checks (cluster/finish)
	finished   chan struct{}
}

// joinFleet connects n (opened with Options.Partitioned) to its fleet, as
// member name, and returns once the crawls the fleet holds are applied to
// n. apiURL is published with the membership.
func joinFleet(ctx context.Context, a *fleetArgs, name string, n *node.Node, dataDir, apiURL string, stdout io.Writer, log *slog.Logger) (_ *fleetMember, err error) {
	m := &fleetMember{done: make(chan struct{})}
	defer func() {
		if err != nil {
			cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			m.close(cctx)
		}
	}()
	replicas := 1
	if a.embedded {
		var peers []string
		for _, p := range strings.Split(a.peers, ",") {
			if p = strings.TrimSpace(p); p != "" {
				peers = append(peers, p)
			}
		}
		m.srv, err = jsserver.Start(jsserver.Options{
			Name: name, Dir: filepath.Join(dataDir, "nats"), ClientAddr: a.clientAddr,
			ClusterAddr: a.clusterAddr, Peers: peers, Logger: log.With("part", "nats"),
		})
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(stdout, "nats: server %s, clients at %s, %d servers in the fleet, replicas %d\n", name, m.srv.ClientURL(), m.srv.Fleet(), m.srv.Replicas())
		if err := m.srv.WaitJetStream(ctx); err != nil {
			return nil, err
		}
		replicas = m.srv.Replicas()
		m.nc, err = m.srv.Connect()
	} else {
		m.nc, err = nats.Connect(a.natsURL, nats.Name("trawl "+name), nats.MaxReconnects(-1))
		if err == nil && m.nc.ConnectedClusterName() != "" {
			replicas = 3 // a cluster: replicate as an embedded fleet of 3+ does
		}
	}
	if err != nil {
		return nil, fmt.Errorf("nats: %w", err)
	}
	js, err := jetstream.New(m.nc)
	if err != nil {
		return nil, fmt.Errorf("nats: %w", err)
	}
	info, _ := json.Marshal(map[string]string{"api": apiURL})
	// The fleet's streams and buckets are made by the first member to
	// ask; their Raft groups may still be electing when it or the others
	// ask (each attempt is bounded by the client's 5 s default), so each
	// is tried until it answers.
	retry := func(what string, try func() error) error {
		for {
			err := try()
			if err == nil {
				return nil
			}
			log.Warn("fleet: "+what+" not ready yet", "err", err)
			select {
			case <-ctx.Done():
				return fmt.Errorf("fleet: %s: %w (last: %v)", what, ctx.Err(), err)
			case <-time.After(time.Second):
			}
		}
	}
	// The crawls first: a member that folds routed URLs or restores a
	// checkpoint must know their crawls (a URL of an unknown crawl is
	// folded again later, but a restored queue item of one is dropped).
	if err := retry("catalog", func() (err error) {
		m.catalog, err = catalog.Open(ctx, js, n, catalog.Options{Replicas: replicas, Logger: log})
		return err
	}); err != nil {
		return nil, err
	}
	cctx, cancel := context.WithCancel(context.Background())
	m.cancel = cancel
	go func() { defer close(m.done); m.catalog.Run(cctx) }()
	select {
	case <-m.catalog.Ready():
	case <-ctx.Done():
		return nil, fmt.Errorf("fleet: crawls not loaded: %w", ctx.Err())
	}
	if fj := m.catalog.Foreign(); len(fj) > 0 {
		var names []string
		for _, j := range fj {
			names = append(names, fmt.Sprintf("%d (%q)", j.ID, j.Spec.Name))
		}
		return nil, fmt.Errorf("fleet: the data directory %s holds crawls the fleet does not know (job %s): a member shares the fleet's crawls only; start it with a data directory of its own", dataDir, strings.Join(names, ", "))
	}
	// Content fingerprints are sharded by partition: looked up and kept
	// by each partition's owner, handed on with its checkpoints.
	if m.fp, err = fpshard.New(fpshard.Options{Conn: m.nc, Index: n.Dedup(), DB: n.DB(), Logger: log}); err != nil {
		return nil, err
	}
	n.SetContentIndex(m.fp)
	// The per-IP cap over the fleet: every fetch of n takes a slot of
	// its address, shared by the members (cluster/ipcap). Set before n
	// serves any partition; until the membership is up, the gate counts
	// as fenced (n fetches nothing).
	var joined ipcap.Later
	if err := retry("per-IP slots", func() (err error) {
		o := ipcap.Options{Name: name, JS: js, Replicas: replicas, Hold: n.FetchTimeout(), MemberTTL: a.memberTTL, Logger: log}
		o.Use(&joined)
		m.ipcap, err = ipcap.Open(ctx, o)
		return err
	}); err != nil {
		return nil, err
	}
	gctx, stopCap := context.WithCancel(context.Background())
	m.stopCap, m.capDone = stopCap, make(chan struct{})
	go func() { defer close(m.capDone); m.ipcap.Run(gctx) }()
	n.SetIPGate(m.ipcap)
	if err := retry("membership", func() (err error) {
		m.fleet, err = fleet.Start(ctx, fleet.Options{
			Name: name, Node: n, DB: n.DB(), Outbox: n.Outbox(), JS: js, Replicas: replicas, Info: info, Shard: m.fp,
			Heartbeat: a.heartbeat, MemberTTL: a.memberTTL,
			CheckpointEvery: a.ckptEvery, TakeoverHold: a.hold, Logger: log,
		})
		return err
	}); err != nil {
		return nil, err
	}
	joined.Bind(m.fleet)
	var fin *finish.Runner
	if err := retry("crawl end", func() (err error) {
		fin, err = finish.Open(ctx, finish.Options{
			Name: name, Node: n, DB: n.DB(), JS: js, Catalog: m.catalog, Replicas: replicas, Logger: log,
			Every: a.heartbeat,
			Members: func() []string {
				var names []string
				for _, mi := range m.fleet.Members() {
					names = append(names, mi.Name)
				}
				return names
			},
		})
		return err
	}); err != nil {
		return nil, err
	}
	fctx, stop := context.WithCancel(context.Background())
	m.stopFinish, m.finished = stop, make(chan struct{})
	go func() { defer close(m.finished); fin.Run(fctx) }()
	return m, nil
}

// close leaves the fleet cleanly (every served partition checkpointed and
// handed on, within ctx), then stops the catalog, the connection and the
// embedded server. The node is the caller's to close, after.
func (m *fleetMember) close(ctx context.Context) error {
	var errs []error
	if m.stopFinish != nil {
		m.stopFinish()
		<-m.finished
	}
	if m.fleet != nil {
		if err := m.fleet.Close(ctx); err != nil {
			errs = append(errs, fmt.Errorf("fleet: leave: %w", err))
		}
	}
	if m.stopCap != nil {
		// Every partition is handed on (or dropped) and the membership
		// deleted: n starts no more fetches. Slots still in use are left
		// to expire, or to be freed by the others.
		m.ipcap.Stop()
		m.stopCap()
		<-m.capDone
		m.ipcap.Close(ctx)
	}
	if m.fp != nil {
		m.fp.Close()
	}
	if m.cancel != nil {
		m.cancel()
		<-m.done
	}
	if m.nc != nil {
		m.nc.Close()
	}
	if m.srv != nil {
		m.srv.Close()
	}
	return errors.Join(errs...)
}

// members is the fleet as this member last saw it, for GET /v1/nodes.
func (m *fleetMember) members() []api.Member {
	var out []api.Member
	for _, mi := range m.fleet.Members() {
		out = append(out, api.Member{Name: mi.Name, Leaving: mi.Leaving, Info: mi.Info, Owns: mi.Owns})
	}
	return out
}
