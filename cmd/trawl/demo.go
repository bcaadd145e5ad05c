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
	"time"

	"github.com/trawl-crawler/trawl/internal/testweb"
)

func init() {
	register("demo", "crawl the bundled synthetic web on loopback, with live progress", cmdDemo)
}

// cmdDemo starts the synthetic web in-process, crawls it like `trawl
// crawl` would a real one, and then shows what the web's own request log
// says about the crawl: gaps, robots.txt, repeats and coverage.
func cmdDemo(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: trawl demo [flags]")
		fs.PrintDefaults()
	}
	var cf crawlFlags
	cf.register(fs)
	hosts := fs.Int("hosts", 300, "hosts in the synthetic web")
	seed := fs.Int64("seed", 1, "seed of the synthetic web")
	hostile := fs.Bool("hostile", true, "include hostile hosts (malformed HTML, lying headers, slow drip, endless body)")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "trawl demo: unexpected arguments %q\n", fs.Args())
		return 2
	}
	srv, err := testweb.Serve(testweb.Generate(testweb.Options{Seed: *seed, Hosts: *hosts, Hostile: *hostile}), testweb.ServeOptions{})
	if err != nil {
		fmt.Fprintf(stderr, "trawl demo: %v\n", err)
		return 1
	}
	defer srv.Close()
	opts, spec, err := cf.options(srv.Seeds())
	if err != nil {
		fmt.Fprintf(stderr, "trawl demo: %v\n", err)
		return 2
	}
	// The synthetic web lives on loopback, which the IP guard refuses by
	// default; its names resolve through the crawler's static host map.
	opts.AllowNets = append(opts.AllowNets, mustPrefix("127.0.0.0/8"))
	opts.Hosts = srv.Resolver()
	// Each demo serves a new web on a new port: an earlier demo's state
	// would only point at addresses that are gone.
	opts.Fresh = true
	if len(spec.Domains) == 0 {
		spec.Domains = []string{srv.Web().Options().Domain}
	}
	fmt.Fprintf(stdout, "synthetic web: %d hosts on 127.x.y.z port %d, %d seeds; crawling with a %v gap per host\n",
		len(srv.Resolver()), srv.Port(), len(spec.Seeds), opts.MinDelay)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	code := runCrawl(ctx, opts, spec, cf.progress, stdout, stderr)
	took := time.Since(start)

	rep := testweb.Analyze(srv.Web(), srv.Log(), testweb.AnalyzeOptions{
		Seeds:            spec.Seeds,
		Agent:            "trawl",
		Gap:              opts.MinDelay,
		MaxDepth:         spec.MaxDepth,
		Domain:           spec.Domains[0],
		MaxParallelPerIP: 2,
	})
	fmt.Fprintf(stdout, "\nwhat the synthetic web saw:\n%s\n", indent(rep.String()))
	crit := rep.CriticalPath(opts.MinDelay)
	if crit > 0 {
		fmt.Fprintf(stdout, "  duration %.1fs = %.2f x the critical path (%.1fs: the busiest host's crawlable pages x its gap)\n",
			took.Seconds(), took.Seconds()/crit.Seconds(), crit.Seconds())
	}
	if p := rep.Problems(); len(p) > 0 {
		fmt.Fprintf(stdout, "  %d problems:\n%s\n", len(p), indent(strings.Join(p, "\n")))
		if code == 0 {
			code = 1
		}
	} else {
		fmt.Fprintln(stdout, "  no politeness problems")
	}
	return code
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  ")
}
