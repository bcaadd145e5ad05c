package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/trawl-crawler/trawl/internal/testweb"
)

func init() {
	register("testweb", "serve the synthetic web on loopback", cmdTestweb)
}

// cmdTestweb generates the synthetic web, serves it on loopback until a
// signal (or --for), and writes an /etc/hosts-style file and the seeds so
// that another process can crawl it.
func cmdTestweb(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("testweb", flag.ContinueOnError)
	fs.SetOutput(stderr)
	seed := fs.Int64("seed", 1, "seed of the generated web")
	hosts := fs.Int("hosts", 0, "number of hosts (0: the default, 300)")
	hostile := fs.Bool("hostile", false, "add hostile hosts")
	port := fs.Int("port", 0, "port to serve on (0: pick a free one)")
	out := fs.String("out", "", "directory to write hosts (IP NAME lines) and seeds.txt into")
	dur := fs.Duration("for", 0, "stop after this long (0: until SIGINT or SIGTERM)")
	latency := fs.Duration("latency", 0, "least per-host latency before the first byte (0: the default, 2ms; negative: none)")
	maxLatency := fs.Duration("max-latency", 0, "most per-host latency (0: the default, 20ms)")
	bigPages := fs.Int("big-pages", 0, "pages of each big host (0: the default, 40)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "trawl testweb: unexpected arguments %q\n", fs.Args())
		return 2
	}
	if *dur < 0 {
		fmt.Fprintf(stderr, "trawl testweb: --for %v is negative\n", *dur)
		return 2
	}
	opts := testweb.Options{Seed: *seed, Hosts: *hosts, Hostile: *hostile, Port: *port,
		Latency: *latency, MaxLatency: *maxLatency, BigPages: *bigPages}
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
	if *out != "" {
		paths, err := writeTestwebFiles(*out, srv)
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
	if *dur > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *dur)
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

// writeTestwebFiles writes dir/hosts (one "IP NAME" line per host, the
// /etc/hosts format) and dir/seeds.txt (one URL per line), and returns
// their paths.
func writeTestwebFiles(dir string, srv *testweb.Server) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("testweb: create %s: %w", dir, err)
	}
	var hosts strings.Builder
	fmt.Fprintf(&hosts, "# trawl testweb, port %d, written %s\n", srv.Port(), time.Now().UTC().Format(time.RFC3339))
	for _, h := range srv.Web().Hosts() {
		fmt.Fprintf(&hosts, "%s %s\n", h.IP, h.Name)
	}
	files := []struct{ name, text string }{
		{"hosts", hosts.String()},
		{"seeds.txt", strings.Join(srv.Seeds(), "\n") + "\n"},
	}
	var paths []string
	for _, f := range files {
		p := filepath.Join(dir, f.name)
		if err := os.WriteFile(p, []byte(f.text), 0o644); err != nil {
			return nil, fmt.Errorf("testweb: write %s: %w", p, err)
		}
		paths = append(paths, p)
	}
	return paths, nil
}
