package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/trawl-crawler/trawl/cluster/catalog"
	"github.com/trawl-crawler/trawl/cluster/finish"
	"github.com/trawl-crawler/trawl/cluster/fpshard"
	"github.com/trawl-crawler/trawl/cluster/ipcap"
	"github.com/trawl-crawler/trawl/cluster/jsserver"
	"github.com/trawl-crawler/trawl/node"
)

// JoinOptions configure Join: where the fleet's NATS JetStream cluster is
// (an external one at NATSURL, or a server run inside this node with
// Embedded), this member's name, and the fleet's timings. Name and one of
// NATSURL and Embedded are required.
type JoinOptions struct {
	// Name is this member's name, unique in the fleet.
	Name string
	// NATSURL is an external NATS JetStream cluster (nats://host:port,
	// comma-separated for several). Empty with Embedded.
	NATSURL string
	// Embedded runs a JetStream server inside this node (cluster/jsserver),
	// its files in DataDir/nats, routed to Peers.
	Embedded bool
	// ClusterAddr, Peers and ClientAddr are the embedded server's (see
	// jsserver.Options); with Embedded only. Peers need ClusterAddr.
	ClusterAddr string
	Peers       []string
	ClientAddr  string
	// ClusterName is the embedded servers' cluster name
	// (jsserver.Options.ClusterName): every member of a fleet gives the
	// same, and a server of another fleet is refused. Zero: "trawl".
	ClusterName string
	// Heartbeat is how often the member renews its membership, reconciles
	// its partitions and reports on its crawls' ends. Zero: 1 s.
	Heartbeat time.Duration
	// MemberTTL is how long a silent member stays a member: at least 4
	// Heartbeats. Zero: 15 s.
	MemberTTL time.Duration
	// CheckpointEvery and TakeoverHold: see Options. Zero: 5 minutes,
	// and the node's fetch timeout plus its minimum gap (61 s with the
	// node's defaults).
	CheckpointEvery, TakeoverHold time.Duration
	// DataDir is the node's data directory: the embedded server's files
	// go under it, and errors about its crawls name it.
	DataDir string
	// APIURL is the node's API address, published with the membership
	// (GET /v1/nodes shows it to the other members' clients).
	APIURL string
	// Stdout receives the line saying where the embedded server is. Nil:
	// none.
	Stdout io.Writer
	// Logger receives the fleet's notices and failures. Nil: silent.
	Logger *slog.Logger
}

// Validate reports every bad field by name.
func (o *JoinOptions) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf("fleet: "+format, a...)) }
	if o.Name == "" {
		bad("Name: empty")
	}
	switch {
	case o.NATSURL != "" && o.Embedded:
		bad("NATSURL and Embedded: one or the other")
	case o.NATSURL == "" && !o.Embedded:
		bad("NATSURL empty and not Embedded: no NATS to join through")
	}
	if !o.Embedded && (o.ClusterAddr != "" || len(o.Peers) > 0 || o.ClientAddr != "" || o.ClusterName != "") {
		bad("ClusterAddr, Peers, ClientAddr and ClusterName: with Embedded only")
	}
	if len(o.Peers) > 0 && o.ClusterAddr == "" {
		bad("Peers without ClusterAddr")
	}
	hb, ttl := o.Heartbeat, o.MemberTTL
	if hb == 0 {
		hb = time.Second
	}
	if ttl == 0 {
		ttl = 15 * time.Second
	}
	if hb < 0 || ttl < 4*hb {
		bad("MemberTTL %v: at least 4 x Heartbeat %v (and both positive)", ttl, hb)
	}
	for name, d := range map[string]time.Duration{"CheckpointEvery": o.CheckpointEvery, "TakeoverHold": o.TakeoverHold} {
		if d < 0 {
			bad("%s: %v, negative", name, d)
		}
	}
	return errors.Join(errs...)
}

// Member is a serving node's membership of a fleet, as Join makes it: the
// embedded server (if any), the connection, the Fleet (partitions,
// routing, checkpoints), the content-seen gate, the per-IP cap, the
// catalog of crawls and the crawl end's reports and checks.
type Member struct {
	srv     *jsserver.Server // nil with NATSURL
	nc      *nats.Conn
	fleet   *Fleet
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

// Join connects n (opened with node.Options.Partitioned) to its fleet, as
// member opts.Name, and returns once the crawls the fleet holds are
// applied to n. On an error, what it had started is stopped again (n is
// the caller's to close).
//
// The order, and why:
//
//  1. NATS: the embedded JetStream server (waiting for its JetStream to
//     be up) or the connection to the external cluster. Everything after
//     lives on it.
//  2. The catalog of crawls (cluster/catalog), until its crawls are
//     applied to n: a member that folds routed URLs or restores a
//     checkpoint must know their crawls (a URL of an unknown crawl is
//     folded again later, but a restored queue item of one is dropped). A
//     data directory holding crawls the fleet does not know is refused
//     here, before n serves any partition.
//  3. The content-seen gate (cluster/fpshard), set as n's content index:
//     fingerprints are sharded by partition, kept by each partition's
//     owner and handed on with its checkpoints, so it must be in place
//     before the fleet restores or saves one.
//  4. The per-IP cap (cluster/ipcap), set as n's IP gate before n serves
//     any partition: every fetch takes a slot of its address, shared by
//     the members. Until the membership exists the gate counts as fenced,
//     so n fetches nothing.
//  5. The membership (Start: cluster/owner, route, checkpoints), which
//     takes partitions, restores their checkpoints and follows their
//     routed URLs; the IP gate is then bound to it.
//  6. The crawl end (cluster/finish), which reports on n's crawls and
//     asks the membership who the members are.
//
// The fleet's streams and buckets are made by the first member to ask;
// their Raft groups may still be electing when it or the others ask (or
// electing again, a member just lost), so each of steps 2, 4, 5 and 6 is
// tried again (logged), each attempt bounded (attemptTimeout), until it
// answers or ctx ends. Join logs how long each step took. A member that
// joins within seconds of the loss of the meta group's leader waits for
// its election (JetStream's 4-9 s) in step 1.
func Join(ctx context.Context, opts JoinOptions, n *node.Node) (_ *Member, err error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	stdout := opts.Stdout
	if stdout == nil {
		stdout = io.Discard
	}
	name := opts.Name
	m := &Member{done: make(chan struct{})}
	defer func() {
		if err != nil {
			cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			m.Close(cctx)
		}
	}()
	// How long each step took, logged once Join is done: a member slow
	// to be ready says which step held it.
	began := time.Now()
	last := began
	var steps []any
	step := func(what string) {
		now := time.Now()
		steps = append(steps, what, now.Sub(last).Round(time.Millisecond))
		last = now
	}
	replicas, expect := 1, 0
	if opts.Embedded {
		m.srv, err = jsserver.Start(jsserver.Options{
			Name: name, Dir: filepath.Join(opts.DataDir, "nats"), ClientAddr: opts.ClientAddr,
			ClusterAddr: opts.ClusterAddr, Peers: opts.Peers, ClusterName: opts.ClusterName, Logger: log.With("part", "nats"),
		})
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(stdout, "nats: server %s, clients at %s, %d servers in the fleet, replicas %d\n", name, m.srv.ClientURL(), m.srv.Fleet(), m.srv.Replicas())
		step("server")
		if err := m.srv.WaitJetStream(ctx); err != nil {
			return nil, err
		}
		step("jetstream")
		replicas, expect = m.srv.Replicas(), m.srv.Fleet()
		m.nc, err = m.srv.Connect()
	} else {
		m.nc, err = nats.Connect(opts.NATSURL, nats.Name("trawl "+name), nats.MaxReconnects(-1))
		if err == nil && m.nc.ConnectedClusterName() != "" {
			replicas = 3 // a cluster: replicate as an embedded fleet of 3+ does
		}
	}
	if err != nil {
		return nil, fmt.Errorf("nats: %w", err)
	}
	// An asynchronous publish whose acknowledgement is lost (a stream
	// leader gone mid-publish) fails after this, rather than never: the
	// progress log and the route pump bound their own waits, but a future
	// that never resolves stays among the context's pending ones for good,
	// and enough of them stall every later publish. (Checkpoints do not
	// publish through this context's async path: ckptstore.put.)
	js, err := jetstream.New(m.nc, jetstream.WithPublishAsyncTimeout(10*time.Second))
	if err != nil {
		return nil, fmt.Errorf("nats: %w", err)
	}
	step("connect")
	info, _ := json.Marshal(map[string]string{"api": opts.APIURL})
	// Each attempt has a bound of its own (attemptTimeout): a request
	// whose answer is lost (sent to a stream while its leader is gone and
	// the next not yet elected, which takes JetStream 4-9 s) waits out its
	// context's deadline, not the client's 5 s default, and must not use
	// up all of ctx. Short first, since such an answer never comes; longer
	// each time, since a loaded fleet may answer slowly.
	retry := func(what string, try func(ctx context.Context) error) error {
		for attempt := 0; ; attempt++ {
			actx, cancel := context.WithTimeout(ctx, attemptTimeout(attempt))
			err := try(actx)
			cancel()
			if err == nil {
				return nil
			}
			log.Warn("fleet: "+what+" not ready yet", "err", err)
			select {
			case <-ctx.Done():
				return fmt.Errorf("fleet: %s: %w (last: %v)", what, ctx.Err(), err)
			case <-time.After(retryPause):
			}
		}
	}
	// The crawls first (step 2).
	if err := retry("catalog", func(ctx context.Context) (err error) {
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
	step("catalog")
	if fj := m.catalog.Foreign(); len(fj) > 0 {
		var names []string
		for _, j := range fj {
			names = append(names, fmt.Sprintf("%d (%q)", j.ID, j.Spec.Name))
		}
		return nil, fmt.Errorf("fleet: the data directory %s holds crawls the fleet does not know (job %s): a member shares the fleet's crawls only; start it with a data directory of its own", opts.DataDir, strings.Join(names, ", "))
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
	if err := retry("per-IP slots", func(ctx context.Context) (err error) {
		o := ipcap.Options{Name: name, JS: js, Replicas: replicas, Hold: n.FetchTimeout(), MemberTTL: opts.MemberTTL, Logger: log}
		o.Use(&joined)
		m.ipcap, err = ipcap.Open(ctx, o)
		return err
	}); err != nil {
		return nil, err
	}
	step("ipcap")
	gctx, stopCap := context.WithCancel(context.Background())
	m.stopCap, m.capDone = stopCap, make(chan struct{})
	go func() { defer close(m.capDone); m.ipcap.Run(gctx) }()
	n.SetIPGate(m.ipcap)
	if err := retry("membership", func(ctx context.Context) (err error) {
		m.fleet, err = Start(ctx, Options{
			Name: name, Node: n, DB: n.DB(), Outbox: n.Outbox(), JS: js, Replicas: replicas, Expect: expect, Info: info, Shard: m.fp,
			Heartbeat: opts.Heartbeat, MemberTTL: opts.MemberTTL,
			CheckpointEvery: opts.CheckpointEvery, TakeoverHold: takeoverHold(opts.TakeoverHold, n), Logger: log,
		})
		return err
	}); err != nil {
		return nil, err
	}
	joined.Bind(m.fleet)
	step("membership")
	var fin *finish.Runner
	if err := retry("crawl end", func(ctx context.Context) (err error) {
		fin, err = finish.Open(ctx, finish.Options{
			Name: name, Node: n, DB: n.DB(), JS: js, Catalog: m.catalog, Replicas: replicas, Logger: log,
			Every: opts.Heartbeat,
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
	step("finish")
	log.Info("fleet: joined", append([]any{"in", time.Since(began).Round(time.Millisecond)}, steps...)...)
	return m, nil
}

// Fleet is the membership: partitions, routing, checkpoints.
func (m *Member) Fleet() *Fleet { return m.fleet }

// Catalog is the fleet's catalog of crawls; its Node is the node as the
// API drives it in a fleet (a crawl submitted to it runs on all members).
func (m *Member) Catalog() *catalog.Catalog { return m.catalog }

// IPCap is the per-IP cap over the fleet.
func (m *Member) IPCap() *ipcap.Gate { return m.ipcap }

// Fingerprints is the content-seen gate over the fleet.
func (m *Member) Fingerprints() *fpshard.Shard { return m.fp }

// ErrPeersElsewhere is returned by RemovePeer on a member that uses a
// NATS server it does not run (JoinOptions.NATSURL).
var ErrPeersElsewhere = errors.New("this member uses a NATS server it does not run (--nats): that server's JetStream peers are removed there (nats server raft peer-remove)")

// ErrLiveMember is returned by RemovePeer for a member still live.
var ErrLiveMember = errors.New("still a live member of the fleet")

// Peers lists the JetStream servers of the fleet's embedded cluster as its
// meta group knows them, members gone for good too (they stay peers until
// removed); nil for a fleet of one or on a member using an outside NATS
// server.
func (m *Member) Peers(ctx context.Context) ([]jsserver.Peer, error) {
	if m.srv == nil {
		return nil, nil
	}
	return m.srv.Peers(ctx)
}

// RemovePeer removes the server of the member named name, gone for good,
// from the embedded JetStream cluster's peers (see jsserver.RemovePeer).
// A member still listed live is refused (ErrLiveMember): its membership
// lapses MemberTTL after its last heartbeat.
func (m *Member) RemovePeer(ctx context.Context, name string) error {
	if m.srv == nil {
		return ErrPeersElsewhere
	}
	for _, mi := range m.fleet.Members() {
		if mi.Name == name {
			return fmt.Errorf("%s: %w (a member stopped or killed is listed until its membership lapses, a member TTL after its last heartbeat; remove only a member gone for good)", name, ErrLiveMember)
		}
	}
	return m.srv.RemovePeer(ctx, name)
}

// Close leaves the fleet cleanly (every served partition checkpointed and
// handed on, within ctx), then stops the crawl end, the per-IP cap, the
// content-seen gate, the catalog, the connection and the embedded server:
// the start-up order backwards. The node is the caller's to close, after.
func (m *Member) Close(ctx context.Context) error {
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

// attemptTimeout bounds attempt n (from 0) of a step of Join: 2 s,
// doubled each attempt up to 30 s.
func attemptTimeout(n int) time.Duration {
	return min(2*time.Second<<min(n, 4), 30*time.Second)
}

// retryPause is the pause between two attempts of a step of Join.
const retryPause = 250 * time.Millisecond

// takeoverHold is hold, or when zero the node's fetch timeout plus its
// minimum gap: a dead member's last fetch began before it died and ends
// within its fetch timeout, and the host's gap runs after it; a taker
// comes at least a member TTL after the death, which is the margin.
func takeoverHold(hold time.Duration, n *node.Node) time.Duration {
	if hold > 0 {
		return hold
	}
	return n.FetchTimeout() + n.MinDelay()
}
