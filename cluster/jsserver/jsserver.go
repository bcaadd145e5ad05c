// Package jsserver runs a JetStream-enabled NATS server inside a trawl
// node, so that a fleet needs no broker of its own: each node's server
// routes to its peers' and together they form one JetStream cluster, whose
// streams, key-value and object stores the fleet's other packages use.
//
// A fleet of one runs JetStream standalone (no replication). A fleet of two
// is refused: JetStream's meta group needs a majority, so two servers stop
// when either does, and a crawler that stops when any node stops is worse
// than one node. Three or more replicate every stream three ways (Replicas).
// A Server is safe for concurrent use.
package jsserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// Options configure an embedded server. Name and Dir are required.
type Options struct {
	// Name is the server's name, unique in the fleet (JetStream's Raft
	// groups know peers by it). The node's name is the natural choice.
	Name string
	// Dir holds JetStream's files (streams, KV, object store). It must not
	// be shared with another server.
	Dir string
	// ClientAddr is host:port for client connections from outside the
	// process (the node itself connects in-process). Zero: 127.0.0.1 on a
	// port the system picks.
	ClientAddr string
	// ClusterAddr is host:port on which peers' routes connect. Required
	// when Peers is not empty.
	ClusterAddr string
	// Peers are the cluster addresses (host:port) of the fleet's servers.
	// The server's own ClusterAddr may be among them (so every node can be
	// given the same list); it is ignored. Empty: a fleet of one.
	Peers []string
	// ClusterName names the cluster; peers must agree, and a server whose
	// route reaches a server of another name is refused, so two fleets
	// whose addresses meet (a peer list mistyped, a port reused) stay
	// apart. Zero: "trawl".
	ClusterName string
	// Logger receives the server's notices, warnings and errors. Nil:
	// silent.
	Logger *slog.Logger
	// StartTimeout bounds the wait for the server to accept clients. Zero:
	// 30 s.
	StartTimeout time.Duration
}

// CheckName reports what is wrong with a server's or a cluster's name:
// NATS carries both in subjects, which a space, '.', '*' or '>' would
// split or widen.
func CheckName(name string) error {
	if strings.ContainsAny(name, " \t\r\n.*>") {
		return errors.New("spaces, '.', '*' and '>' are not allowed")
	}
	return nil
}

// Validate reports every bad field by name.
func (o *Options) Validate() error {
	var errs []error
	if o.Name == "" {
		errs = append(errs, errors.New("Name: empty (each server of a fleet needs a unique name)"))
	} else if err := CheckName(o.Name); err != nil {
		errs = append(errs, fmt.Errorf("Name %q: %w", o.Name, err))
	}
	if err := CheckName(o.ClusterName); err != nil {
		errs = append(errs, fmt.Errorf("ClusterName %q: %w", o.ClusterName, err))
	}
	if o.Dir == "" {
		errs = append(errs, errors.New("Dir: empty"))
	}
	if o.ClientAddr != "" {
		if _, _, err := splitAddr(o.ClientAddr); err != nil {
			errs = append(errs, fmt.Errorf("ClientAddr: %w", err))
		}
	}
	if o.ClusterAddr != "" {
		if _, _, err := splitAddr(o.ClusterAddr); err != nil {
			errs = append(errs, fmt.Errorf("ClusterAddr: %w", err))
		}
	}
	for _, p := range o.Peers {
		if _, _, err := splitAddr(p); err != nil {
			errs = append(errs, fmt.Errorf("Peers: %w", err))
		}
	}
	peers := o.otherPeers()
	if len(peers) > 0 && o.ClusterAddr == "" {
		errs = append(errs, errors.New("ClusterAddr: empty, but Peers are given (peers' routes need an address to connect to)"))
	}
	if n := len(peers) + 1; n == 2 {
		errs = append(errs, fmt.Errorf("Peers: a fleet of 2 servers (%s and %s) is refused: JetStream needs a majority of its servers, so two stop when either stops; run 1, or 3 or more", o.ClusterAddr, peers[0]))
	}
	return errors.Join(errs...)
}

// otherPeers returns Peers without the server's own ClusterAddr and
// without repeats.
func (o *Options) otherPeers() []string {
	var out []string
	for _, p := range o.Peers {
		if p != o.ClusterAddr && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// Server is a running embedded server.
type Server struct {
	s     *server.Server
	fleet int
	admin nkeys.KeyPair // the system account's user (Start)
}

// Start starts a server and waits until it accepts clients. With peers it
// does not wait for them: JetStream works once a majority of the fleet is
// up, which WaitJetStream waits for.
func Start(opts Options) (*Server, error) {
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("jsserver: %w", err)
	}
	so := &server.Options{
		ServerName: opts.Name,
		Host:       "127.0.0.1",
		Port:       server.RANDOM_PORT,
		JetStream:  true,
		StoreDir:   opts.Dir,
		NoSigs:     true,
		NoLog:      opts.Logger == nil,
	}
	if opts.ClientAddr != "" {
		so.Host, so.Port, _ = splitAddr(opts.ClientAddr)
	}
	peers := opts.otherPeers()
	if len(peers) > 0 {
		so.Cluster.Name = opts.ClusterName
		if so.Cluster.Name == "" {
			so.Cluster.Name = "trawl"
		}
		so.Cluster.Host, so.Cluster.Port, _ = splitAddr(opts.ClusterAddr)
		for _, p := range peers {
			so.Routes = append(so.Routes, &url.URL{Scheme: "nats", Host: p})
		}
	}
	// Two nkey users, drawn anew at each start: clients that give no
	// credentials are the first (NoAuthUser: no signature asked), in the
	// global account where JetStream is; the second, in the system
	// account, signs with a seed that never leaves this process (admin).
	// Keys rather than passwords: the server warns of a plain one, and
	// the no-credentials user cannot have a hashed one.
	member, err := nkeys.CreateUser()
	if err != nil {
		return nil, fmt.Errorf("jsserver: %s: %w", opts.Name, err)
	}
	admin, err := nkeys.CreateUser()
	if err != nil {
		return nil, fmt.Errorf("jsserver: %s: %w", opts.Name, err)
	}
	memberKey, _ := member.PublicKey()
	adminKey, _ := admin.PublicKey()
	sys := server.NewAccount(server.DEFAULT_SYSTEM_ACCOUNT)
	so.Accounts = []*server.Account{sys}
	so.SystemAccount = sys.Name
	so.Nkeys = []*server.NkeyUser{{Nkey: memberKey}, {Nkey: adminKey, Account: sys}}
	so.NoAuthUser = memberKey
	s, err := server.NewServer(so)
	if err != nil {
		return nil, fmt.Errorf("jsserver: %s: %w", opts.Name, err)
	}
	if opts.Logger != nil {
		s.SetLogger(newLogAdapter(opts.Logger.With("nats", opts.Name), time.Now), false, false)
	}
	go s.Start()
	timeout := opts.StartTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	if !s.ReadyForConnections(timeout) {
		s.Shutdown()
		s.WaitForShutdown()
		return nil, fmt.Errorf("jsserver: %s: not accepting clients after %v", opts.Name, timeout)
	}
	return &Server{s: s, fleet: len(peers) + 1, admin: admin}, nil
}

// Replicas is the replication factor the fleet's streams and stores
// should use: 1 for a fleet of one, else 3.
func (s *Server) Replicas() int {
	if s.fleet == 1 {
		return 1
	}
	return 3
}

// Fleet is the number of servers the fleet was configured with.
func (s *Server) Fleet() int { return s.fleet }

// Name returns the server's name.
func (s *Server) Name() string { return s.s.Name() }

// ClientURL returns the URL clients outside the process connect to.
func (s *Server) ClientURL() string { return s.s.ClientURL() }

// Connect returns a client connection to the server inside the process
// (no TCP). Extra options follow the in-process one.
func (s *Server) Connect(extra ...nats.Option) (*nats.Conn, error) {
	opts := append([]nats.Option{nats.InProcessServer(s.s), nats.Name(s.s.Name())}, extra...)
	nc, err := nats.Connect("", opts...)
	if err != nil {
		return nil, fmt.Errorf("jsserver: connect to %s: %w", s.s.Name(), err)
	}
	return nc, nil
}

// WaitJetStream waits until JetStream can serve requests: at once for a
// fleet of one, otherwise until the cluster's meta group has a leader this
// server follows (a majority of the fleet is up and routed).
func (s *Server) WaitJetStream(ctx context.Context) error {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		if s.s.JetStreamEnabled() && (!s.s.JetStreamIsClustered() || s.s.JetStreamIsCurrent()) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("jsserver: %s: JetStream not ready (%d of %d servers routed): %w", s.s.Name(), s.s.NumRoutes()+1, s.fleet, ctx.Err())
		case <-t.C:
		}
	}
}

// Peer is a server of the JetStream cluster as the meta group knows it.
type Peer struct {
	Name string
	// Current: seen recently and caught up. Offline: not seen for a
	// while (gone, or cut off).
	Current, Offline bool
	// Active is how long ago it was last heard from.
	Active time.Duration
}

// Peers returns the cluster's servers as the meta group's leader knows
// them, gone ones too, this one first; nil outside a cluster. It asks the
// leader (through the system account), so it answers once JetStream is
// ready.
func (s *Server) Peers(ctx context.Context) ([]Peer, error) {
	if !s.s.JetStreamIsClustered() {
		return nil, nil
	}
	nc, err := s.adminConn()
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	// Only the meta leader answers, listing the group's peers with how
	// recently each was heard from.
	msg, err := askLeader(ctx, nc, "$SYS.REQ.SERVER.PING.JSZ", []byte(`{"leader_only":true}`), askEvery)
	if err != nil {
		return nil, fmt.Errorf("jsserver: ask the meta leader for its peers: %w", err)
	}
	var resp struct {
		Server struct {
			Name string `json:"name"`
		} `json:"server"`
		Data struct {
			Meta *server.MetaClusterInfo `json:"meta_cluster"`
		} `json:"data"`
		Error *struct {
			Description string `json:"description"`
		} `json:"error"`
	}
	if err := json.Unmarshal(msg.Data, &resp); err != nil {
		return nil, fmt.Errorf("jsserver: the meta leader's peers: %w", err)
	}
	if resp.Error != nil {
		return nil, fmt.Errorf("jsserver: the meta leader's peers: %s", resp.Error.Description)
	}
	if resp.Data.Meta == nil {
		return nil, errors.New("jsserver: the meta leader's peers: no meta group in its answer")
	}
	// The leader lists the others; it is current itself.
	out := []Peer{{Name: resp.Server.Name, Current: true}}
	for _, r := range resp.Data.Meta.Replicas {
		out = append(out, Peer{Name: r.Name, Current: r.Current, Offline: r.Offline, Active: r.Active})
	}
	slices.SortFunc(out[1:], func(a, b Peer) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// askEvery bounds one request that only a leader answers (Peers,
// RemovePeer): the next is sent when it passes unanswered.
const askEvery = 2 * time.Second

// askLeader sends a request only the meta leader answers, and sends it
// again each time every (askEvery, but for tests) passes without an
// answer, until one comes or ctx ends: one sent while there is no leader
// (electing one takes JetStream 4-9 s) is dropped, never answered.
// (A removal answered but lost is sent again; it is then refused as not
// a peer.)
func askLeader(ctx context.Context, nc *nats.Conn, subj string, data []byte, every time.Duration) (*nats.Msg, error) {
	for {
		actx, cancel := context.WithTimeout(ctx, every)
		msg, err := nc.RequestWithContext(actx, subj, data)
		cancel()
		if err == nil {
			return msg, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w (last: %v)", ctx.Err(), err)
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			// No responders: the server is still starting its system
			// services. Not at once again.
			select {
			case <-ctx.Done():
			case <-time.After(every / 10):
			}
		}
	}
}

// ErrNoCluster is returned by RemovePeer on a server that runs
// JetStream on its own (a fleet of one).
var ErrNoCluster = errors.New("JetStream runs on its own here: there are no peers to remove")

// ErrNotPeer is returned by RemovePeer for a name the cluster does not
// know.
var ErrNotPeer = errors.New("not a server of the JetStream cluster")

// RemovePeer removes the server named name from the JetStream cluster's
// peers: for a server gone for good, which JetStream otherwise keeps
// counting (its streams' replicas placed on it, its vote in every
// majority). A server removed that comes back joins again as a new peer.
func (s *Server) RemovePeer(ctx context.Context, name string) error {
	if !s.s.JetStreamIsClustered() {
		return fmt.Errorf("jsserver: %s: %w", s.s.Name(), ErrNoCluster)
	}
	nc, err := s.adminConn()
	if err != nil {
		return err
	}
	defer nc.Close()
	req, _ := json.Marshal(map[string]string{"peer": name})
	msg, err := askLeader(ctx, nc, "$JS.API.SERVER.REMOVE", req, askEvery)
	if err != nil {
		return fmt.Errorf("jsserver: remove peer %s: %w", name, err)
	}
	var resp struct {
		Success bool `json:"success"`
		Error   *struct {
			Code        int    `json:"code"`
			ErrCode     int    `json:"err_code"`
			Description string `json:"description"`
		} `json:"error"`
	}
	if err := json.Unmarshal(msg.Data, &resp); err != nil {
		return fmt.Errorf("jsserver: remove peer %s: %w", name, err)
	}
	switch {
	case resp.Error != nil && resp.Error.ErrCode == int(server.JSClusterServerNotMemberErr):
		return fmt.Errorf("jsserver: remove peer %s: %w", name, ErrNotPeer)
	case resp.Error != nil:
		return fmt.Errorf("jsserver: remove peer %s: %s", name, resp.Error.Description)
	case !resp.Success:
		return fmt.Errorf("jsserver: remove peer %s: not done (no error given)", name)
	}
	return nil
}

// admin connects to the server in-process as its system account's user.
func (s *Server) adminConn() (*nats.Conn, error) {
	key, _ := s.admin.PublicKey()
	nc, err := nats.Connect("", nats.InProcessServer(s.s), nats.Name(s.s.Name()+"-admin"), nats.Nkey(key, s.admin.Sign))
	if err != nil {
		return nil, fmt.Errorf("jsserver: connect to %s's system account: %w", s.s.Name(), err)
	}
	return nc, nil
}

// Close shuts the server down and waits until it has.
func (s *Server) Close() {
	s.s.Shutdown()
	s.s.WaitForShutdown()
}

func splitAddr(addr string) (string, int, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("%q: %w", addr, err)
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 0 || n > 65535 {
		return "", 0, fmt.Errorf("%q: bad port", addr)
	}
	if host == "" {
		host = "0.0.0.0"
	}
	return host, n, nil
}
