package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/trawl-crawler/trawl/internal/bench/crawlbench"
	"github.com/trawl-crawler/trawl/internal/bench/dedupbench"
	"github.com/trawl-crawler/trawl/internal/bench/fleetbench"
	"github.com/trawl-crawler/trawl/internal/bench/freshbench"
	"github.com/trawl-crawler/trawl/internal/bench/freshlive"
	"github.com/trawl-crawler/trawl/internal/bench/frontierbench"
	"github.com/trawl-crawler/trawl/internal/cli/config"
	"github.com/trawl-crawler/trawl/node"
	"github.com/trawl-crawler/trawl/warc"
)

func init() {
	register("bench", "measure the crawler: bench crawl, bench frontier, bench freshness, bench freshness-live, bench fleet, bench dedup", cmdBench)
}

const benchHelp = `usage: trawl bench crawl|frontier|freshness|freshness-live|fleet|dedup [flags]

  crawl     crawl the synthetic web, served by a child process, as fast as
            the machine allows: pages/s, CPU-ms per page by stage, peak RSS
  frontier  the durable frontier and URL-seen gate under load, against their
            ceilings
  freshness a simulated web recrawled at a fixed budget: freshness and age
            of uniform recrawl, Nutch's adaptive schedule and trawl's policy
  freshness-live
            continuous crawls of a changing synthetic web, live, with
            trawl's schedule and Nutch's side by side, judged by the web's
            own versions (10 minutes by default)
  fleet     fleets of 1, 2, 3 'trawl serve' processes, each in a CPU cgroup
            of its own on its own loopback address: pages/s and the
            efficiency against linear scaling (needs root for the cgroups)
  dedup     the content-seen gate judged from the crawl log: recall of
            near copies by edit size, false positives on ordinary and
            templated pages, on a labelled web or a documentation tree

Run 'trawl bench crawl --help', 'trawl bench frontier --help',
'trawl bench freshness --help', 'trawl bench freshness-live --help',
'trawl bench fleet --help' or
'trawl bench dedup --help' for flags.

Examples:
  trawl bench crawl --hosts 200 --latency 5ms
  trawl bench crawl --json --baseline docs/bench/crawl-baseline.json
  trawl bench frontier --urls 1000000 --hosts 100000 --json
  trawl bench freshness --mix churn --last-modified 0.5 --lying 0.2
  trawl bench freshness-live --duration 10m
  trawl bench fleet --nodes 1,2,3 --cpu 0.4
  trawl bench dedup --docs /usr/share/doc/python3.11/html
`

// benches are `trawl bench NAME`'s runs: each parses its flags into its
// package's Options and hands over to the package's Main. crawl, dedup
// and fleet run this binary as child processes (the web; fleet's nodes).
var benches = map[string]func([]string, io.Writer, io.Writer) int{
	"crawl": leafCommand("bench crawl", crawlbench.Help, nil, benchCrawlFlags, func(o *crawlbench.Options, _ []string, _ map[string]config.Source, stdout, stderr io.Writer) int {
		if !executable(&o.Exe, "trawl bench", stderr) {
			return 1
		}
		return crawlbench.Main(*o, stdout, stderr)
	}),
	"frontier": leafCommand("bench frontier", frontierbench.Help, nil, benchFrontierFlags, func(o *frontierbench.Options, _ []string, _ map[string]config.Source, stdout, stderr io.Writer) int {
		return frontierbench.Main(*o, stdout, stderr)
	}),
	"freshness": leafCommand("bench freshness", freshbench.Help, nil, benchFreshnessFlags, func(o *freshbench.Options, _ []string, _ map[string]config.Source, stdout, stderr io.Writer) int {
		return freshbench.Main(*o, stdout, stderr)
	}),
	"freshness-live": leafCommand("bench freshness-live", freshlive.Help, nil, benchFreshLiveFlags, func(o *freshlive.Options, args []string, _ map[string]config.Source, stdout, stderr io.Writer) int {
		if extraArgs("bench freshness-live", args, stderr, "") {
			return 2
		}
		return freshlive.Main(*o, stdout, stderr)
	}),
	"fleet": leafCommand("bench fleet", fleetbench.Help, nil, benchFleetFlags, func(o *fleetbench.Options, _ []string, _ map[string]config.Source, stdout, stderr io.Writer) int {
		if !executable(&o.Exe, "trawl bench fleet", stderr) {
			return 1
		}
		return fleetbench.Main(*o, stdout, stderr)
	}),
	"dedup": leafCommand("bench dedup", dedupbench.Help, nil, benchDedupFlags, func(o *dedupbench.Options, args []string, _ map[string]config.Source, stdout, stderr io.Writer) int {
		if extraArgs("bench dedup", args, stderr, "") {
			return 2
		}
		if !executable(&o.Exe, "trawl bench dedup", stderr) {
			return 1
		}
		return dedupbench.Main(*o, stdout, stderr)
	}),
}

// cmdBench runs `trawl bench NAME`.
func cmdBench(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		if run, ok := benches[args[0]]; ok {
			return run(args[1:], stdout, stderr)
		}
	}
	fmt.Fprint(stderr, benchHelp)
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
		return 0
	}
	return 2
}

// executable sets *exe to this binary's path, or says on stderr why it
// cannot.
func executable(exe *string, prefix string, stderr io.Writer) bool {
	var err error
	if *exe, err = os.Executable(); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prefix, err)
	}
	return err == nil
}

func benchCrawlFlags(fs *flag.FlagSet, o *crawlbench.Options) {
	fs.IntVar(&o.Hosts, "hosts", 200, "hosts in the synthetic web")
	fs.DurationVar(&o.Latency, "latency", 5*time.Millisecond, "per-host latency before the first byte")
	fs.DurationVar(&o.MinDelay, "min-delay", 0, "least gap between fetches to one host (0: none)")
	fs.IntVar(&o.Concurrency, "concurrency", 256, "fetch workers")
	fs.Int64Var(&o.Seed, "seed", 1, "seed of the synthetic web")
	fs.IntVar(&o.BigPages, "big-pages", 0, "pages of each big host (0: the default)")
	fs.StringVar(&o.WebFlags, "web-flags", "", "more flags of trawl testweb, space-separated, that shape the web (e.g. \"--gzip --links 30\")")
	fs.BoolVar(&o.JSON, "json", false, "print one JSON object instead of a table")
	fs.StringVar(&o.CPUProfile, "cpuprofile", "", "write a CPU profile of the crawl to this file")
	fs.StringVar(&o.MutexProfile, "mutexprofile", "", "write a mutex contention profile of the crawl to this file (every contended lock sampled)")
	fs.StringVar(&o.BlockProfile, "blockprofile", "", "write a blocking profile of the crawl to this file (channel waits, selects, locks; one sample per 100 µs blocked)")
	fs.StringVar(&o.MemProfile, "memprofile", "", "write a heap profile to this file after the crawl (its alloc_space and alloc_objects cover the whole run)")
	fs.IntVar(&o.WARCGzipLevel, "warc-gzip-level", warc.DefaultGzipLevel, "gzip level of each WARC record: 1 (fastest) to 9 (smallest)")
	fs.DurationVar(&o.MinSyncInterval, "min-sync-interval", node.DefaultMinSyncInterval, "least time between two fsyncs of the WARC, and of the store's log (negative: none)")
	fs.DurationVar(&o.RobotsGiveUp, "robots-give-up", 4*time.Second, "give up a host whose robots.txt stays unavailable this long (the web has some that answer 500 for ever; 0: never, and the crawl never ends)")
	fs.StringVar(&o.Baseline, "baseline", "", "a `trawl bench crawl --json` result recorded in the repo: fail (exit 1) if CPU-ms/page is over twice its figure")
}

func benchFrontierFlags(fset *flag.FlagSet, o *frontierbench.Options) {
	c := &o.Config
	fset.IntVar(&c.URLs, "urls", 10_000_000, "URLs to enqueue")
	fset.IntVar(&c.Hosts, "hosts", 1_000_000, "hosts the URLs are spread over (URL i is on host i mod H)")
	fset.IntVar(&c.Batch, "batch", 1000, "URLs per seen-check batch and frontier.Add")
	fset.IntVar(&c.Workers, "workers", 0, "goroutines per phase (0: GOMAXPROCS)")
	fset.IntVar(&c.Known, "known", 0, "known URLs to re-check (0: urls/10)")
	fset.IntVar(&c.Leases, "leases", 0, "leases to take and complete (0: urls/10)")
	fset.IntVar(&c.InFlight, "inflight", 64, "uncommitted changes each worker keeps in flight")
	fset.StringVar(&o.Data, "data", "", "directory for the store; must be missing or empty (default: a temporary directory)")
	fset.BoolVar(&o.Keep, "keep", false, "keep the data directory at the end")
	fset.BoolVar(&o.JSON, "json", false, "print one JSON object instead of a table")
	fset.StringVar(&o.CPUProfile, "cpuprofile", "", "write a CPU profile to this file")
	fset.StringVar(&c.ProfilePhase, "profile-phase", "", "profile only this phase: seen-new, enqueue, seen-known, startup or lease (default: the whole run)")
	fset.StringVar(&o.MutexProfile, "mutexprofile", "", "write a mutex contention profile of --profile-phase to this file (every contended lock sampled)")
	fset.StringVar(&o.BlockProfile, "blockprofile", "", "write a blocking profile of --profile-phase to this file (channel waits, selects, locks; one sample per µs blocked)")
	fset.StringVar(&o.MemProfile, "memprofile", "", "write a heap profile, taken with N URLs queued, to this file")
	fset.StringVar(&o.LeaseMemProfile, "memprofile-lease", "", "write a heap profile, taken after the lease+complete phase, to this file")
	fset.Int64Var(&c.ProjectURLs, "project-urls", 1_000_000_000, "URLs to project the measured footprint to (RAM, disk, start-up of one node; 0: no projection)")
	fset.Int64Var(&c.ProjectHosts, "project-hosts", 50_000_000, "hosts to project the measured footprint to (0: no projection)")
}

func benchFreshnessFlags(fset *flag.FlagSet, o *freshbench.Options) {
	c := &o.Config
	fset.IntVar(&c.Pages, "pages", 10_000, "pages on the simulated web")
	fset.Float64Var(&c.Days, "days", 60, "simulated days")
	fset.Float64Var(&c.Warmup, "warmup", 14, "days at the start not sampled")
	fset.Float64Var(&c.Budget, "budget", 0, "fetches per hour for every policy (0: pages/72, each page every 3 days)")
	fset.Uint64Var(&c.Seed, "seed", 1, "seed of the web and its changes")
	fset.StringVar(&c.Mix, "mix", "web", "mix of change rates: web (shaped after Cho and Garcia-Molina 2000) or churn (half the pages change within hours)")
	fset.Float64Var(&c.LastModified, "last-modified", 0, "share of pages sending a true Last-Modified (adds a row)")
	fset.Float64Var(&c.Lying, "lying", 0, "share of pages sending the request time as Last-Modified")
	fset.DurationVar(&c.Sample, "sample", 0, "time between freshness samples (0: 1h)")
	fset.IntVar(&c.SectionPages, "section-pages", 0, "pages per site section, all of one class of the mix; trawl pools a section's estimates into a prior (0: no sections)")
	fset.Float64Var(&c.ChangeFreq, "changefreq", 0, "share of pages whose sitemap states a changefreq near their true rate")
	fset.Float64Var(&c.ChangeFreqWrong, "changefreq-wrong", 0, "share of pages whose sitemap states \"daily\" whatever their rate")
	fset.BoolVar(&o.JSON, "json", false, "print one JSON object instead of a table")
}

func benchFreshLiveFlags(fs *flag.FlagSet, o *freshlive.Options) {
	c := &o.Config
	fs.DurationVar(&c.Duration, "duration", 10*time.Minute, "how long each schedule crawls")
	fs.DurationVar(&c.Judged, "judged", 0, "the end part of the crawl that is judged (0: the last 65%)")
	fs.Int64Var(&c.Seed, "seed", 26, "seed of the web and its changes")
	fs.IntVar(&c.Hosts, "hosts", 40, "hosts in the web, of 15-25 pages each")
	fs.DurationVar(&c.ChangeMin, "change-min", 30*time.Second, "shortest mean time between a changing page's changes")
	fs.DurationVar(&c.ChangeMax, "change-max", 20*time.Minute, "longest mean time between a changing page's changes")
	c.Never = 30
	fs.Func("never", "percentage of pages that never change (default 30)", func(v string) error {
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("%q is not a whole percentage", v)
		}
		if c.Never = n; n == 0 {
			c.Never = -1 // none: the Config's zero is its default
		}
		return nil
	})
	fs.DurationVar(&c.Gap, "gap", time.Second, "least time between two fetches from one host")
	fs.DurationVar(&c.RecrawlMin, "recrawl-min", 20*time.Second, "shortest interval between two fetches of a page")
	fs.DurationVar(&c.RecrawlMax, "recrawl-max", 3*time.Minute, "longest interval between two fetches of a page")
	fs.Float64Var(&c.Budget, "budget", 0, "the freshness schedule's recrawl fetches per hour (0: none)")
	fs.IntVar(&o.Simulate, "simulate", 0, "simulate the crawls for this many seeds from --seed instead of crawling (seconds, not minutes; a model, see --help)")
	fs.Func("schedules", "comma-separated schedules to run: freshness, nutch (default both)", func(v string) error {
		c.Schedules = strings.Split(v, ",")
		return nil
	})
	fs.BoolVar(&o.JSON, "json", false, "print one JSON object instead of a table")
}

func benchFleetFlags(fs *flag.FlagSet, o *fleetbench.Options) {
	fs.StringVar(&o.Nodes, "nodes", "1,2,3", "fleet sizes to measure, comma-separated (efficiency is against the size 1 run, or the smallest)")
	fs.Float64Var(&o.CPU, "cpu", 0.4, "each node's CPU quota, in cores (a cgroup of its own)")
	fs.IntVar(&o.Hosts, "hosts", 6000, "hosts in the synthetic web (enough that no fleet size runs out of work in the warm-up and window)")
	fs.IntVar(&o.Concurrency, "concurrency", 64, "fetch workers of each node")
	fs.DurationVar(&o.Latency, "latency", 5*time.Millisecond, "per-host latency before the first byte")
	fs.DurationVar(&o.MaxAdaptiveDelay, "max-adaptive-delay", 100*time.Millisecond, "each node's cap on the adaptive term of a host's gap (10 x its response time, which CPU throttling inflates): small, so that politeness does not limit the run")
	fs.DurationVar(&o.Warmup, "warmup", 10*time.Second, "time from every node serving partitions to the start of the window")
	fs.DurationVar(&o.Window, "window", 20*time.Second, "measuring window of each fleet size")
	fs.Int64Var(&o.Seed, "seed", 1, "seed of the synthetic web")
	fs.BoolVar(&o.JSON, "json", false, "print one JSON object instead of a table")
	fs.StringVar(&o.Logs, "logs", "", "write each node's output to DIR/N<size>-<name>.log")
}

func benchDedupFlags(fs *flag.FlagSet, o *dedupbench.Options) {
	fs.Int64Var(&o.Seed, "seed", 1, "seed of the near-duplicate web")
	fs.IntVar(&o.Hosts, "hosts", 60, "hosts of the near-duplicate web (every fifth templated)")
	fs.DurationVar(&o.Latency, "latency", time.Millisecond, "per-host latency before the first byte")
	fs.DurationVar(&o.MinDelay, "min-delay", 0, "least gap between fetches to one host (0: none)")
	fs.IntVar(&o.Concurrency, "concurrency", 64, "fetch workers")
	fs.BoolVar(&o.JSON, "json", false, "print one JSON object instead of a table")
	fs.StringVar(&o.Docs, "docs", "", "instead of the synthetic web, serve this directory tree (from its index.html) and list every page flagged")
}
