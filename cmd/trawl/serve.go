package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"log/slog"

	"github.com/trawl-crawler/trawl/api"
	"github.com/trawl-crawler/trawl/cluster/fleet"
	"github.com/trawl-crawler/trawl/cluster/fpshard"
	"github.com/trawl-crawler/trawl/cluster/ipcap"
	"github.com/trawl-crawler/trawl/dashboard"
	"github.com/trawl-crawler/trawl/internal/cli/config"
	"github.com/trawl-crawler/trawl/internal/hostrank"
	"github.com/trawl-crawler/trawl/internal/store/partition"
	"github.com/trawl-crawler/trawl/metrics"
	"github.com/trawl-crawler/trawl/node"
)

func init() {
	register("serve", "run a node as a service with the HTTP API, until stopped", cmdServe)
	leaf("serve", func(fs *flag.FlagSet) { new(serveArgs).register(fs) })
}

// serveArgs are `trawl serve`'s flags.
type serveArgs struct {
	nodeFlags
	fleet                        fleetArgs
	listen, tokenFile, hostsFile string
}

func (a *serveArgs) register(fs *flag.FlagSet) {
	a.nodeFlags.register(fs)
	a.fleet.register(fs)
	fs.StringVar(&a.listen, "listen", DefaultListen, "address to serve the API on")
	fs.StringVar(&a.tokenFile, "token-file", "", "file holding the bearer token the API's changes need (or the token itself in TRAWL_TOKEN)")
	fs.StringVar(&a.hostsFile, "hosts", "", "file mapping names to addresses, /etc/hosts format, asked before DNS")
}

// serveEnv are serve's environment variables: the node's, and where to
// listen and find the token.
var serveEnv = map[string]string{"data": "TRAWL_DATA", "user-agent": "TRAWL_USER_AGENT",
	"listen": "TRAWL_LISTEN", "token-file": "TRAWL_TOKEN_FILE"}

const serveHelp = `usage: trawl serve [flags]

Runs a node (every job in --data resumes) and the HTTP API on --listen until
SIGINT or SIGTERM. The API's changes need a bearer token: from --token-file,
TRAWL_TOKEN_FILE or TRAWL_TOKEN (in that order, then a token-file in the
config file); without one, on loopback only, trawl serve uses the token in
DATA/api.token, made once. The live dashboard is at / : trawl serve prints
its link, which on loopback carries the token in its #fragment (the browser
keeps it to itself). trawl status and trawl crawls talk to the API.

With --nats or --nats-embedded the node is one of a fleet: the fleet's
members share the crawl by host partitions (each partition served by one
member at a time; a member that stops or dies is taken over), a crawl
submitted to any member's API runs on all, and it finishes on all once no
member has work for it. --nats-embedded runs a NATS
JetStream server inside each node: give every member the same --nats-peers
list (three or more servers; two are refused, as losing either would stop
both). See the README, "A fleet".

Examples:
  trawl serve --data ./trawl-data
  trawl serve --data ./n1 --listen 127.0.0.1:8421 --node-name n1 --nats-embedded \
    --nats-cluster 127.0.0.1:6221 --nats-peers 127.0.0.1:6221,127.0.0.1:6222,127.0.0.1:6223
  TRAWL_TOKEN_FILE=/etc/trawl/token trawl serve --listen 10.0.0.5:8420
  trawl serve --config /etc/trawl/trawl.json`

// DefaultListen is where `trawl serve` listens unless told otherwise:
// loopback only.
const DefaultListen = "127.0.0.1:8420"

// cmdServe runs a node until SIGINT or SIGTERM, serving the HTTP API. A
// restart on the same --data resumes every job. The API is up before the
// node's state is loaded (/healthz answers, /readyz says 503 until then).
func cmdServe(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("serve", serveHelp, serveEnv, stderr)
	var a serveArgs
	a.register(fs)
	src, code, ok := parseFlags(fs, args, serveEnv, stderr)
	if !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "trawl serve: unexpected arguments %q\n", fs.Args())
		return 2
	}
	token, err := readToken(tokenFileAfterEnv(a.tokenFile, src["token-file"]))
	if err != nil {
		fmt.Fprintf(stderr, "trawl serve: %v\n", err)
		return 2
	}
	loopback, err := isLoopbackAddr(a.listen)
	if err != nil {
		fmt.Fprintf(stderr, "trawl serve: --listen %q: %v\n", a.listen, err)
		return 2
	}
	if !loopback && token == "" {
		fmt.Fprintf(stderr, "trawl serve: --listen %q is not a loopback address: refusing to serve the API there without a token (--token-file, TRAWL_TOKEN_FILE or TRAWL_TOKEN)\n", a.listen)
		return 2
	}
	opts, err := a.nodeFlags.options()
	if err != nil {
		fmt.Fprintf(stderr, "trawl serve: %v\n", err)
		return 2
	}
	var fa *fleetArgs
	if err := a.fleet.check(); err != nil {
		fmt.Fprintf(stderr, "trawl serve: %v\n", err)
		return 2
	}
	if a.fleet.enabled() {
		fa = &a.fleet
		opts.Partitioned = true
	}
	if token == "" {
		// Loopback without a token: the node's own, in the data directory,
		// for local clients to read.
		path := filepath.Join(opts.DataDir, TokenFile)
		if token, err = localToken(path); err != nil {
			fmt.Fprintf(stderr, "trawl serve: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "API token in %s\n", path)
	}
	if a.hostsFile != "" {
		if opts.Hosts, err = readHostsFile(a.hostsFile); err != nil {
			fmt.Fprintf(stderr, "trawl serve: %v\n", err)
			return 2
		}
	}
	ln, err := net.Listen("tcp", a.listen)
	if err != nil {
		fmt.Fprintf(stderr, "trawl serve: %v\n", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serve(ctx, ln, opts, fa, token, stdout, stderr)
}

// serve runs the API on ln and a node with opts until ctx is done or the
// node fails; exit code 0 on a clean stop. With fa, the node joins its
// fleet (opts.Partitioned must be set) and the API acts fleet-wide.
func serve(ctx context.Context, ln net.Listener, opts node.Options, fa *fleetArgs, token string, stdout, stderr io.Writer) int {
	var (
		n      atomic.Pointer[node.Node]
		view   atomic.Pointer[api.Node] // what the API drives: the node, or the fleet's view of it
		joined atomic.Pointer[fleetMember]
		name   string
	)
	if fa != nil {
		var err error
		if name, err = fa.memberName(); err != nil {
			fmt.Fprintf(stderr, "trawl serve: %v\n", err)
			return 2
		}
	}
	m := metrics.New(loaded[metrics.Source](&n))
	if fa != nil {
		m.AddFleet(func() (fleet.Stats, bool) {
			if fm := joined.Load(); fm != nil {
				return fm.fleet.Stats(), true
			}
			return fleet.Stats{}, false
		})
		m.AddIPCap(func() (ipcap.Stats, bool) {
			if fm := joined.Load(); fm != nil {
				return fm.ipcap.Stats(), true
			}
			return ipcap.Stats{}, false
		})
		m.AddFingerprints(func() (fpshard.Stats, bool) {
			if fm := joined.Load(); fm != nil && fm.fp != nil {
				return fm.fp.Stats(), true
			}
			return fpshard.Stats{}, false
		})
	}
	hosts, err := hostrank.New(hostrank.Options{})
	if err != nil {
		fmt.Fprintf(stderr, "trawl serve: %v\n", err)
		return 1
	}
	// Every request a worker sends goes to the metrics' latency histogram
	// and to the host ranking (one shard lock, about 100 ns), which GET
	// /v1/stats reads for the dashboard.
	opts.OnFetch = node.ObserveAll(opts.OnFetch, m.ObserveFetch, func(ev node.FetchEvent) { hosts.Observe(ev.Host, ev.Duration) })
	ao := api.Options{Token: token, Metrics: m.Handler(), HostRanking: hosts, Dashboard: dashboard.Handler(),
		Node: func() api.Node {
			if v := view.Load(); v != nil {
				return *v
			}
			return nil
		}}
	if fa != nil {
		ao.Self = name
		ao.Partitions = partition.Count
		ao.Members = func() []api.Member {
			if fm := joined.Load(); fm != nil {
				return fm.members()
			}
			return nil
		}
	}
	srv := &http.Server{Handler: api.New(ao), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Fprintf(stdout, "listening on %s\n", ln.Addr())
	fmt.Fprintf(stdout, "dashboard: %s\n", dashboardURL(ln.Addr(), token))

	opened, err := node.Open(opts)
	if err != nil {
		srv.Close()
		fmt.Fprintf(stderr, "trawl serve: %v\n", err)
		return 1
	}
	opened.Start()
	n.Store(opened)
	var apiOf api.Node = opened
	if fa != nil {
		log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo})).With("member", name)
		fm, err := joinFleet(ctx, fa, name, opened, opts.DataDir, "http://"+ln.Addr().String(), stdout, log)
		if err != nil {
			srv.Close()
			fmt.Fprintf(stderr, "trawl serve: %v\n", err)
			if cerr := opened.Close(); cerr != nil {
				fmt.Fprintf(stderr, "trawl serve: %v\n", cerr)
			}
			return 1
		}
		joined.Store(fm)
		apiOf = fm.catalog.Node()
		fmt.Fprintf(stdout, "fleet: joined as %s\n", name)
	}
	view.Store(&apiOf)
	fmt.Fprintf(stdout, "ready: %d jobs, data in %s\n", len(opened.Jobs()), opts.DataDir)

	code := 0
	select {
	case <-ctx.Done():
	case err := <-served:
		fmt.Fprintf(stderr, "trawl serve: %v\n", err)
		code = 1
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(stderr, "trawl serve: stop the API: %v\n", err)
	}
	if fm := joined.Load(); fm != nil {
		// Hand every partition on (checkpointed) before the node stops.
		leave, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := fm.close(leave); err != nil {
			fmt.Fprintf(stderr, "trawl serve: %v\n", err)
			code = 1
		}
	}
	if err := errors.Join(opened.Close(), opened.Err()); err != nil {
		fmt.Fprintf(stderr, "trawl serve: %v\n", err)
		code = 1
	}
	fmt.Fprintln(stdout, "stopped")
	return code
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

// dashboardURL is the dashboard's address on addr. On loopback it carries
// the token in its fragment (#token=...), which the browser keeps to
// itself: the page stores it and never sends it but as the bearer token of
// its own API calls. Elsewhere the token is typed into the page.
func dashboardURL(addr net.Addr, token string) string {
	u := url.URL{Scheme: "http", Host: addr.String(), Path: "/"}
	if ta, ok := addr.(*net.TCPAddr); ok && ta.IP.IsLoopback() && token != "" {
		u.Fragment = "token=" + token
	}
	return u.String()
}

// TokenFile is the file in the data directory that holds the API token
// `trawl serve` made for itself when given none (loopback only).
const TokenFile = "api.token"

// localToken returns the token in path, making one (32 random bytes, hex,
// mode 0600) if the file does not exist.
func localToken(path string) (string, error) {
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

// readToken returns the API token: from path if given, else from the file
// TRAWL_TOKEN_FILE names, else TRAWL_TOKEN; "" if none. Surrounding white
// space is trimmed; a named file that is empty is an error.
func readToken(path string) (string, error) {
	if path == "" {
		path = os.Getenv("TRAWL_TOKEN_FILE")
	}
	if path == "" {
		return strings.TrimSpace(os.Getenv("TRAWL_TOKEN")), nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("token: %w", err)
	}
	t := strings.TrimSpace(string(b))
	if t == "" {
		return "", fmt.Errorf("token: %s is empty", path)
	}
	return t, nil
}

// tokenFileAfterEnv returns the token file to read: path, unless it came
// from the config file and TRAWL_TOKEN is set (the environment wins over
// the file), then "" so that readToken takes TRAWL_TOKEN.
func tokenFileAfterEnv(path string, src config.Source) string {
	if src == config.FromFile && os.Getenv("TRAWL_TOKEN") != "" {
		return ""
	}
	return path
}

// isLoopbackAddr reports whether a listen address (host:port) is on a
// loopback address only: 127.0.0.0/8, ::1 or "localhost". An empty host
// (every interface) is not.
func isLoopbackAddr(addr string) (bool, error) {
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
