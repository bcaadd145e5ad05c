// Package server assembles what `trawl serve` runs: the metrics, the host
// ranking, the HTTP API with the dashboard, the node and, when asked, the
// node's membership of a fleet (cluster/fleet.Join). Run starts them in
// that order and stops them backwards.
//
// Invariants:
//   - The API is never served beyond loopback without a token (Validate);
//     on loopback without one, the token is DataDir/api.token, made once.
//   - The API answers before the node's state is loaded: /healthz at once,
//     /readyz 503 until the node is open (and joined to its fleet).
//   - The API drives the node alone, or in a fleet the fleet's view of it
//     (a crawl submitted to one member runs on all); never both.
//   - On the way out the API stops first, then the fleet is left (every
//     served partition checkpointed and handed on), then the node closes.
package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/trawl-crawler/trawl/api"
	"github.com/trawl-crawler/trawl/api/wire"
	"github.com/trawl-crawler/trawl/cluster/fleet"
	"github.com/trawl-crawler/trawl/cluster/fpshard"
	"github.com/trawl-crawler/trawl/cluster/ipcap"
	"github.com/trawl-crawler/trawl/cluster/jsserver"
	"github.com/trawl-crawler/trawl/dashboard"
	"github.com/trawl-crawler/trawl/internal/hostrank"
	"github.com/trawl-crawler/trawl/internal/store/partition"
	"github.com/trawl-crawler/trawl/metrics"
	"github.com/trawl-crawler/trawl/node"
)

// DefaultListen is where the API listens unless told otherwise: loopback
// only.
const DefaultListen = "127.0.0.1:8420"

// Options configure Run.
type Options struct {
	// Node configures the node. With Fleet, Run sets Node.Partitioned.
	// The node checks its own options when Run opens it, after the API is
	// up. Zero DataDir: "./trawl-data", as the node's.
	Node node.Options
	// Listen is the API's address, host:port. Zero: DefaultListen. Not
	// used with Listener.
	Listen string
	// Listener, if set, is where the API is served instead of Listen. Run
	// closes it.
	Listener net.Listener
	// Token is the bearer token the API's changes need. Empty: only on a
	// loopback address; Run then uses the token in DataDir/wire.TokenFile,
	// making it once, and says where on stdout.
	Token string
	// Fleet, if set, makes the node one of a fleet: Run joins it once the
	// node is open. Zero DataDir: Node.DataDir; zero APIURL: the API's
	// http:// address; nil Stdout: Run's; nil Logger: text on Run's
	// stderr, with the member's name.
	Fleet *fleet.JoinOptions
}

// Validate reports every bad field by name (the node's are checked when
// Run opens it).
func (o *Options) Validate() error {
	var errs []error
	bad := func(field string, v any, why string) {
		errs = append(errs, fmt.Errorf("server: option %s = %v: %s", field, v, why))
	}
	loopback := false
	if o.Listener != nil {
		ta, ok := o.Listener.Addr().(*net.TCPAddr)
		loopback = ok && ta.IP.IsLoopback()
	} else {
		listen := o.listen()
		var err error
		if loopback, err = IsLoopbackAddr(listen); err != nil {
			bad("Listen", fmt.Sprintf("%q", listen), err.Error())
		}
	}
	if o.Token == "" && !loopback {
		bad("Token", `""`, "the API is served beyond loopback only with a token")
	}
	if o.Fleet != nil {
		if err := o.Fleet.Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (o *Options) listen() string {
	if o.Listen == "" {
		return DefaultListen
	}
	return o.Listen
}

// errorf is a line on stderr for a trouble that does not fail the run,
// worded as the command's own errors.
func errorf(w io.Writer, format string, a ...any) {
	fmt.Fprintf(w, "trawl serve: "+format+"\n", a...)
}

// Run serves the API and runs the node (and its fleet membership) until
// ctx is done or the API fails; nil on a clean stop. On stdout it says
// where the API token is (when it made one), where it listens, the
// dashboard's link, when the node is ready and when it has stopped; the
// fleet's log and the troubles that do not fail the run go to stderr.
// Its error is always an errors.Join of the troubles, one each (an
// error's Unwrap() []error): a caller may tell them one by one.
func Run(ctx context.Context, o Options, stdout, stderr io.Writer) error {
	if err := o.Validate(); err != nil {
		return errors.Join(err)
	}
	opts := o.Node
	if opts.DataDir == "" {
		opts.DataDir = node.DefaultDataDir
	}
	if o.Fleet != nil {
		opts.Partitioned = true
	}
	token := o.Token
	if token == "" {
		// Loopback without a token: the node's own, in the data directory,
		// for local clients to read.
		path := filepath.Join(opts.DataDir, wire.TokenFile)
		var err error
		if token, err = LocalToken(path); err != nil {
			return errors.Join(err)
		}
		fmt.Fprintf(stdout, "API token in %s\n", path)
	}
	ln := o.Listener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", o.listen()); err != nil {
			return errors.Join(err)
		}
	}
	var (
		n      atomic.Pointer[node.Node]
		view   atomic.Pointer[api.Node] // what the API drives: the node, or the fleet's view of it
		joined atomic.Pointer[fleet.Member]
	)
	m := metrics.New(loaded[metrics.Source](&n))
	if o.Fleet != nil {
		m.AddFleet(func() (fleet.Stats, bool) {
			if fm := joined.Load(); fm != nil {
				return fm.Fleet().Stats(), true
			}
			return fleet.Stats{}, false
		})
		m.AddIPCap(func() (ipcap.Stats, bool) {
			if fm := joined.Load(); fm != nil {
				return fm.IPCap().Stats(), true
			}
			return ipcap.Stats{}, false
		})
		m.AddFingerprints(func() (fpshard.Stats, bool) {
			if fm := joined.Load(); fm != nil && fm.Fingerprints() != nil {
				return fm.Fingerprints().Stats(), true
			}
			return fpshard.Stats{}, false
		})
	}
	hosts, err := hostrank.New(hostrank.Options{})
	if err != nil {
		ln.Close()
		return errors.Join(err)
	}
	// Every request a worker sends goes to the metrics' latency histogram
	// and to the host ranking (one shard lock, about 100 ns), which GET
	// /v1/stats reads for the dashboard.
	opts.OnFetch = node.ObserveAll(opts.OnFetch, m.ObserveFetch, func(ev node.FetchEvent) { hosts.Observe(ev.Host, ev.Duration) })
	ao := api.Options{Token: token, DataDir: opts.DataDir, Metrics: m.Handler(), HostRanking: hosts, Dashboard: dashboard.Handler(),
		Node: func() api.Node {
			if v := view.Load(); v != nil {
				return *v
			}
			return nil
		}}
	if o.Fleet != nil {
		ao.Self = o.Fleet.Name
		ao.Partitions = partition.Count
		ao.Members = func() []api.Member {
			if fm := joined.Load(); fm != nil {
				return members(fm)
			}
			return nil
		}
		ao.Peers = func(ctx context.Context) ([]api.Peer, error) {
			if fm := joined.Load(); fm != nil {
				return peers(ctx, fm)
			}
			return nil, nil
		}
		ao.RemovePeer = func(ctx context.Context, name string) error {
			fm := joined.Load()
			if fm == nil {
				return fmt.Errorf("%w: this member has not joined its fleet yet", api.ErrPeerRefused)
			}
			return removePeer(ctx, fm, name)
		}
	}
	srv := &http.Server{Handler: api.New(ao), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Fprintf(stdout, "listening on %s\n", ln.Addr())
	fmt.Fprintf(stdout, "dashboard: %s\n", DashboardURL(ln.Addr(), token))

	opened, err := node.Open(opts)
	if err != nil {
		srv.Close()
		return errors.Join(err)
	}
	opened.Start()
	n.Store(opened)
	var apiOf api.Node = opened
	if o.Fleet != nil {
		fm, err := join(ctx, *o.Fleet, opened, opts.DataDir, ln.Addr(), stdout, stderr)
		if err != nil {
			srv.Close()
			return errors.Join(err, opened.Close())
		}
		joined.Store(fm)
		apiOf = fm.Catalog().Node()
		fmt.Fprintf(stdout, "fleet: joined as %s\n", o.Fleet.Name)
	}
	view.Store(&apiOf)
	fmt.Fprintf(stdout, "ready: %d jobs, data in %s\n", len(opened.Jobs()), opts.DataDir)

	var errs []error
	select {
	case <-ctx.Done():
	case err := <-served:
		errs = append(errs, err)
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil && !errors.Is(err, http.ErrServerClosed) {
		errorf(stderr, "stop the API: %v", err)
	}
	if fm := joined.Load(); fm != nil {
		// Hand every partition on (checkpointed) before the node stops.
		leave, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := fm.Close(leave); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(opened.Close(), opened.Err()); err != nil {
		errs = append(errs, err)
	}
	fmt.Fprintln(stdout, "stopped")
	return errors.Join(errs...)
}

// join joins n's fleet with fo, its zero fields filled from the server's.
func join(ctx context.Context, fo fleet.JoinOptions, n *node.Node, dataDir string, addr net.Addr, stdout, stderr io.Writer) (*fleet.Member, error) {
	if fo.DataDir == "" {
		fo.DataDir = dataDir
	}
	if fo.APIURL == "" {
		fo.APIURL = "http://" + addr.String()
	}
	if fo.Stdout == nil {
		fo.Stdout = stdout
	}
	if fo.Logger == nil {
		fo.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo})).With("member", fo.Name)
	}
	return fleet.Join(ctx, fo, n)
}

// members is the fleet as this member last saw it, for GET /v1/nodes.
func members(fm *fleet.Member) []api.Member {
	var out []api.Member
	for _, mi := range fm.Fleet().Members() {
		out = append(out, api.Member{Name: mi.Name, Leaving: mi.Leaving, Info: mi.Info, Owns: mi.Owns})
	}
	return out
}

// peers is the fleet's embedded JetStream cluster, for GET /v1/nodes.
func peers(ctx context.Context, fm *fleet.Member) ([]api.Peer, error) {
	ps, err := fm.Peers(ctx)
	if err != nil || ps == nil {
		return nil, err
	}
	out := make([]api.Peer, 0, len(ps))
	for _, p := range ps {
		out = append(out, api.Peer{Name: p.Name, Current: p.Current, Offline: p.Offline, ActiveSeconds: p.Active.Seconds()})
	}
	return out, nil
}

// removePeer removes a member gone for good from the fleet's JetStream
// peers, for DELETE /v1/nodes/{name}; its errors in the API's terms.
func removePeer(ctx context.Context, fm *fleet.Member, name string) error {
	err := fm.RemovePeer(ctx, name)
	switch {
	case errors.Is(err, jsserver.ErrNotPeer):
		return fmt.Errorf("%w: %w", api.ErrNoSuchPeer, err)
	case errors.Is(err, fleet.ErrLiveMember), errors.Is(err, fleet.ErrPeersElsewhere), errors.Is(err, jsserver.ErrNoCluster):
		return fmt.Errorf("%w: %w", api.ErrPeerRefused, err)
	}
	return err
}

// loaded returns a func that gives the node in p as I once it is open, and
// nil before (not a nil *node.Node in a non-nil interface).
func loaded[I any](p *atomic.Pointer[node.Node]) func() I {
	return func() I {
		var none I
		if n := p.Load(); n != nil {
			return any(n).(I)
		}
		return none
	}
}

// DashboardURL is the dashboard's address on addr. On loopback it carries
// the token in its fragment (#token=...), which the browser keeps to
// itself: the page stores it and never sends it but as the bearer token of
// its own API calls. Elsewhere the token is typed into the page.
func DashboardURL(addr net.Addr, token string) string {
	u := url.URL{Scheme: "http", Host: addr.String(), Path: "/"}
	if ta, ok := addr.(*net.TCPAddr); ok && ta.IP.IsLoopback() && token != "" {
		u.Fragment = "token=" + token
	}
	return u.String()
}

// LocalToken returns the token in path, making one (32 random bytes, hex,
// mode 0600) if the file does not exist.
func LocalToken(path string) (string, error) {
	if b, err := os.ReadFile(path); err == nil && strings.TrimSpace(string(b)) != "" {
		return strings.TrimSpace(string(b)), nil
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("token: %w", err)
	}
	var raw [32]byte
	_, _ = rand.Read(raw[:]) // crypto/rand.Read never fails (Go 1.24+)
	t := hex.EncodeToString(raw[:])
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", fmt.Errorf("token: %w", err)
	}
	if err := os.WriteFile(path, []byte(t+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("token: %w", err)
	}
	return t, nil
}

// IsLoopbackAddr reports whether a listen address (host:port) is on a
// loopback address only: 127.0.0.0/8, ::1 or "localhost". An empty host
// (every interface) is not.
func IsLoopbackAddr(addr string) (bool, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, err
	}
	if host == "localhost" {
		return true, nil
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return false, nil // a name: it may resolve anywhere
	}
	return ip.IsLoopback(), nil
}
