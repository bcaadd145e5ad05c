// Package testwebcmd is `trawl testweb`: it generates the synthetic web
// (package testweb) and serves it on loopback until SIGINT, SIGTERM or a
// time limit, so that another process can crawl it, printing the port
// and the seeds and writing the hosts and seeds files.
package testwebcmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/trawl-crawler/trawl/internal/testkit/testweb"
)

// Options are `trawl testweb`'s flags.
type Options struct {
	Web   testweb.Options
	Serve testweb.ServeOptions // how pages go on the wire (gzip, chunks)
	Out   string               // write DIR/hosts (IP NAME lines) and DIR/seeds.txt here; "" none
	For   time.Duration        // stop after this long; 0 at SIGINT or SIGTERM only
}

// Main serves the web until a signal or o.For and returns the exit
// status: 0, 1 if it could not be served or its files written, 2 for bad
// options.
func Main(o Options, stdout, stderr io.Writer) int {
	if o.For < 0 {
		fmt.Fprintf(stderr, "trawl testweb: --for %v is negative\n", o.For)
		return 2
	}
	if err := o.Web.Validate(); err != nil {
		fmt.Fprintf(stderr, "trawl testweb: %v\n", err)
		return 2
	}
	srv, err := testweb.Serve(testweb.Generate(o.Web), o.Serve)
	if err != nil {
		fmt.Fprintf(stderr, "trawl testweb: %v\n", err)
		return 1
	}
	defer srv.Close()

	fmt.Fprintf(stdout, "port %d\n", srv.Port())
	for _, s := range srv.Seeds() {
		fmt.Fprintf(stdout, "seed %s\n", s)
	}
	if o.Out != "" {
		paths, err := testweb.WriteFiles(o.Out, srv)
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
	if o.For > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.For)
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

// Help is `trawl testweb --help`, before its flags.
const Help = `usage: trawl testweb [flags]

Generates the synthetic web (the demo's) and serves it on loopback until
SIGINT, SIGTERM or --for, so that another process can crawl it: prints the
port and the seeds, and with --out writes DIR/hosts (for trawl crawl
--hosts) and DIR/seeds.txt.

Examples:
  trawl testweb --out /tmp/web &
  trawl crawl --seeds /tmp/web/seeds.txt --hosts /tmp/web/hosts --allow-net 127.0.0.0/8 --domain trawl.test
  trawl testweb --hosts 2000 --hostile --latency 5ms --for 10m`
