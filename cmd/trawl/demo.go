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

	"github.com/trawl-crawler/trawl/internal/testkit/testweb"
)

func init() {
	register("demo", "crawl the bundled synthetic web on loopback, with live progress", cmdDemo)
	leaf("demo", func(fs *flag.FlagSet) { new(demoArgs).register(fs) })
}

// demoArgs are `trawl demo`'s flags.
type demoArgs struct {
	crawlFlags
	hosts   int
	seed    int64
	hostile bool
	chaos   int64
}

func (a *demoArgs) register(fs *flag.FlagSet) {
	a.crawlFlags.register(fs)
	fs.IntVar(&a.hosts, "hosts", 300, "hosts in the synthetic web")
	fs.Int64Var(&a.seed, "seed", 1, "seed of the synthetic web")
	fs.BoolVar(&a.hostile, "hostile", true, "include hostile hosts (malformed HTML, lying headers, slow drip, endless body)")
	fs.Int64Var(&a.chaos, "chaos", 0, "crawl the chaos web of this seed instead, and print its verdict (0: the bundled web)")
}

// demoEnv is empty: the demo wipes its --data, so TRAWL_DATA, meant for
// real crawls, must not point it there; and its report judges the agent
// "trawl", which TRAWL_USER_AGENT could change. Flags and the config
// file's "demo" section set it up.
var demoEnv map[string]string

const demoHelp = `usage: trawl demo [flags]

Serves the bundled synthetic web (--hosts virtual hosts with robots.txt
variants, redirects, traps and hostile servers) on loopback, crawls it as
trawl crawl would a real one (fresh state in --data each time), and then
prints what the web's own request log says about the crawl: gaps, robots.txt,
repeats, coverage, and the duration against the critical path, a lower bound
no polite and complete crawl can beat (the busiest host's requests, its
robots.txt included, one gap apart; Crawl-delay hosts at their own gap).
Exit status 1 if the log shows a politeness problem.

Examples:
  trawl demo
  trawl demo --hosts 50 --min-delay 100ms
  trawl demo --hosts 1000 --min-delay 200ms --concurrency 128 --hostile=false
  trawl demo --progress 2s 2>progress.log
  trawl demo --chaos 7 --min-delay 50ms`

// cmdDemo starts the synthetic web in-process, crawls it like `trawl
// crawl` would a real one, and then shows what the web's own request log
// says about the crawl: gaps, robots.txt, repeats and coverage.
func cmdDemo(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("demo", demoHelp, demoEnv, stderr)
	var a demoArgs
	a.register(fs)
	src, code, ok := parseFlags(fs, args, demoEnv, stderr)
	if !ok {
		return code
	}
	cf := &a.crawlFlags
	cf.src = src
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "trawl demo: unexpected arguments %q\n", fs.Args())
		return 2
	}
	if a.chaos != 0 {
		return demoChaos(&a, stdout, stderr)
	}
	srv, err := testweb.Serve(testweb.Generate(testweb.Options{Seed: a.seed, Hosts: a.hosts, Hostile: a.hostile}), testweb.ServeOptions{})
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
	if err := checkSpec(spec, cf.src); err != nil {
		fmt.Fprintf(stderr, "trawl demo: %v\n", strings.ReplaceAll(err.Error(), "\n", "\ntrawl demo: "))
		return 2
	}
	fmt.Fprintf(stdout, "synthetic web: %d hosts on 127.x.y.z port %d, %d seeds; crawling with a %v gap per host\n",
		len(srv.Resolver()), srv.Port(), len(spec.Seeds), opts.MinDelay)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	code = runCrawl(ctx, opts, spec, cf.progress, stdout, stderr)
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
	fmt.Fprintf(stdout, "  %s\n", criticalLine(rep, opts.MinDelay, took))
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

// criticalLine compares the crawl's duration with the critical path, a
// lower bound (testweb.Report.Critical) that holds for a complete crawl:
// for one that missed crawlable URLs it says so instead.
func criticalLine(rep *testweb.Report, gap, took time.Duration) string {
	crit := rep.Critical(gap)
	switch {
	case crit.Duration <= 0:
		return "no critical path: nothing was crawlable"
	case len(rep.Missing) > 0:
		return fmt.Sprintf("duration %.1fs, not compared with the critical path (%.1fs): the crawl missed %d crawlable URLs",
			took.Seconds(), crit.Duration.Seconds(), len(rep.Missing))
	}
	why := "its gap"
	if crit.Gap > gap {
		why = "its Crawl-delay"
	}
	return fmt.Sprintf("duration %.1fs = %.2f x the critical path (%.1fs: %s needs %d requests, robots.txt included, %v apart: %s)",
		took.Seconds(), took.Seconds()/crit.Duration.Seconds(), crit.Duration.Seconds(), crit.Host, crit.Requests, crit.Gap, why)
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  ")
}
