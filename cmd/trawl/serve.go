package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/trawl-crawler/trawl/internal/cli/config"
	"github.com/trawl-crawler/trawl/internal/cli/linefile"
	"github.com/trawl-crawler/trawl/server"
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
	fs.StringVar(&a.listen, "listen", server.DefaultListen, "address to serve the API on")
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

// cmdServe runs a node until SIGINT or SIGTERM, serving the HTTP API
// (package server). A restart on the same --data resumes every job.
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
	loopback, err := server.IsLoopbackAddr(a.listen)
	if err != nil {
		fmt.Fprintf(stderr, "trawl serve: --listen %q: %v\n", a.listen, err)
		return 2
	}
	if !loopback && token == "" {
		fmt.Fprintf(stderr, "trawl serve: --listen %q is not a loopback address: refusing to serve the API there without a token (--token-file, TRAWL_TOKEN_FILE or TRAWL_TOKEN)\n", a.listen)
		return 2
	}
	opts := server.Options{Listen: a.listen, Token: token}
	if opts.Node, err = a.nodeFlags.options(); err != nil {
		fmt.Fprintf(stderr, "trawl serve: %v\n", err)
		return 2
	}
	if err := a.fleet.check(); err != nil {
		fmt.Fprintf(stderr, "trawl serve: %v\n", err)
		return 2
	}
	if a.hostsFile != "" {
		if opts.Node.Hosts, err = linefile.Hosts(a.hostsFile); err != nil {
			fmt.Fprintf(stderr, "trawl serve: %v\n", err)
			return 2
		}
	}
	if a.fleet.enabled() {
		if opts.Fleet, err = a.fleet.options(); err != nil {
			fmt.Fprintf(stderr, "trawl serve: %v\n", err)
			return 2
		}
	}
	if err := opts.Validate(); err != nil {
		printErrors(stderr, "trawl serve", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := server.Run(ctx, opts, stdout, stderr); err != nil {
		printErrors(stderr, "trawl serve", err)
		return 1
	}
	return 0
}

// printErrors writes err on w after prefix, one line per error it joins
// (errors.Join), as each was met.
func printErrors(w io.Writer, prefix string, err error) {
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		fmt.Fprintf(w, "%s: %v\n", prefix, e)
	}
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
