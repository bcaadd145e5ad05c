package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/trawl-crawler/trawl/internal/cli/demo"
	"github.com/trawl-crawler/trawl/internal/testkit/testweb"
	"github.com/trawl-crawler/trawl/job"
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

// cmdDemo parses trawl demo's flags and runs the demo (package demo):
// the synthetic web, served in-process, crawled as `trawl crawl` would a
// real one, and what the web's own request log says about the crawl.
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
	opts, spec, err := cf.options(nil) // the seeds are the web's
	if err != nil {
		fmt.Fprintf(stderr, "trawl demo: %v\n", err)
		return 2
	}
	o := demo.Options{
		Node: opts, Spec: spec, Progress: cf.progress, Chaos: a.chaos,
		Web:   testweb.Options{Seed: a.seed, Hosts: a.hosts, Hostile: a.hostile},
		Check: func(spec job.Spec) error { return checkSpec(spec, cf.src) },
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return demo.Run(ctx, o, stdout, stderr)
}
