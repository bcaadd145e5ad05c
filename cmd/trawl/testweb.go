package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/trawl-crawler/trawl/internal/testkit/testweb"
)

func init() {
	register("testweb", "serve the synthetic web on loopback", cmdTestweb)
	leaf("testweb", func(fs *flag.FlagSet) { new(testwebArgs).register(fs) })
}

// testwebArgs are `trawl testweb`'s flags.
type testwebArgs struct {
	seed                int64
	hosts, port         int
	hostile, nearDup    bool
	out                 string
	dur                 time.Duration
	latency, maxLatency time.Duration
	bigPages            int
}

func (a *testwebArgs) register(fs *flag.FlagSet) {
	fs.Int64Var(&a.seed, "seed", 1, "seed of the generated web")
	fs.IntVar(&a.hosts, "hosts", 0, "number of hosts (0: the default, 300)")
	fs.BoolVar(&a.hostile, "hostile", false, "add hostile hosts")
	fs.BoolVar(&a.nearDup, "near-dup", false, "serve the labelled near-duplicate web instead (trawl bench dedup's)")
	fs.IntVar(&a.port, "port", 0, "port to serve on (0: pick a free one)")
	fs.StringVar(&a.out, "out", "", "directory to write hosts (IP NAME lines) and seeds.txt into")
	fs.DurationVar(&a.dur, "for", 0, "stop after this long (0: until SIGINT or SIGTERM)")
	fs.DurationVar(&a.latency, "latency", 0, "least per-host latency before the first byte (0: the default, 2ms; negative: none)")
	fs.DurationVar(&a.maxLatency, "max-latency", 0, "most per-host latency (0: the default, 20ms)")
	fs.IntVar(&a.bigPages, "big-pages", 0, "pages of each big host (0: the default, 40)")
}

const testwebHelp = `usage: trawl testweb [flags]

Generates the synthetic web (the demo's) and serves it on loopback until
SIGINT, SIGTERM or --for, so that another process can crawl it: prints the
port and the seeds, and with --out writes DIR/hosts (for trawl crawl
--hosts) and DIR/seeds.txt.

Examples:
  trawl testweb --out /tmp/web &
  trawl crawl --seeds /tmp/web/seeds.txt --hosts /tmp/web/hosts --allow-net 127.0.0.0/8 --domain trawl.test
  trawl testweb --hosts 2000 --hostile --latency 5ms --for 10m`

// cmdTestweb generates the synthetic web, serves it on loopback until a
// signal (or --for), and writes an /etc/hosts-style file and the seeds so
// that another process can crawl it.
func cmdTestweb(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("testweb", testwebHelp, nil, stderr)
	var a testwebArgs
	a.register(fs)
	if _, code, ok := parseFlags(fs, args, nil, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "trawl testweb: unexpected arguments %q\n", fs.Args())
		return 2
	}
	if a.dur < 0 {
		fmt.Fprintf(stderr, "trawl testweb: --for %v is negative\n", a.dur)
		return 2
	}
	opts := testweb.Options{Seed: a.seed, Hosts: a.hosts, Hostile: a.hostile, Port: a.port,
		Latency: a.latency, MaxLatency: a.maxLatency, BigPages: a.bigPages, NearDup: a.nearDup}
	if err := opts.Validate(); err != nil {
		fmt.Fprintf(stderr, "trawl testweb: %v\n", err)
		return 2
	}
	srv, err := testweb.Serve(testweb.Generate(opts), testweb.ServeOptions{})
	if err != nil {
		fmt.Fprintf(stderr, "trawl testweb: %v\n", err)
		return 1
	}
	defer srv.Close()

	fmt.Fprintf(stdout, "port %d\n", srv.Port())
	for _, s := range srv.Seeds() {
		fmt.Fprintf(stdout, "seed %s\n", s)
	}
	if a.out != "" {
		paths, err := testweb.WriteFiles(a.out, srv)
		if err != nil {
			fmt.Fprintf(stderr, "trawl testweb: %v\n", err)
			return 1
		}
		for _, p := range paths {
			fmt.Fprintf(stdout, "wrote %s\n", p)
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if a.dur > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, a.dur)
		defer cancel()
	}
	fmt.Fprintln(stdout, "serving; stop with SIGINT or SIGTERM")
	<-ctx.Done()
	if err := srv.Close(); err != nil {
		fmt.Fprintf(stderr, "trawl testweb: close: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "stopped after %d requests\n", len(srv.Log()))
	return 0
}
