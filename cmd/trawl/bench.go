package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/trawl-crawler/trawl/internal/bench/crawlbench"
	"github.com/trawl-crawler/trawl/internal/bench/dedupbench"
	"github.com/trawl-crawler/trawl/internal/bench/fleetbench"
	"github.com/trawl-crawler/trawl/internal/bench/freshbench"
	"github.com/trawl-crawler/trawl/internal/bench/frontierbench"
	"github.com/trawl-crawler/trawl/node"
	"github.com/trawl-crawler/trawl/warc"
)

func init() {
	register("bench", "measure the crawler: bench crawl, bench frontier, bench freshness, bench fleet, bench dedup", cmdBench)
	leaf("bench crawl", func(fs *flag.FlagSet) { benchCrawlFlags(fs, new(crawlbench.Options)) })
	leaf("bench frontier", func(fs *flag.FlagSet) { benchFrontierFlags(fs, new(frontierbench.Options)) })
	leaf("bench freshness", func(fs *flag.FlagSet) { benchFreshnessFlags(fs, new(freshbench.Options)) })
	leaf("bench fleet", func(fs *flag.FlagSet) { benchFleetFlags(fs, new(fleetbench.Options)) })
	leaf("bench dedup", func(fs *flag.FlagSet) { benchDedupFlags(fs, new(dedupbench.Options)) })
}

const benchHelp = `usage: trawl bench crawl|frontier|freshness|fleet|dedup [flags]

  crawl     crawl the synthetic web, served by a child process, as fast as
            the machine allows: pages/s, CPU-ms per page by stage, peak RSS
  frontier  the durable frontier and URL-seen gate under load, against their
            ceilings
  freshness a simulated web recrawled at a fixed budget: freshness and age
            of uniform recrawl, Nutch's adaptive schedule and trawl's policy
  fleet     fleets of 1, 2, 3 'trawl serve' processes, each in a CPU cgroup
            of its own on its own loopback address: pages/s and the
            efficiency against linear scaling (needs root for the cgroups)
  dedup     the content-seen gate judged from the crawl log: recall of
            near copies by edit size, false positives on ordinary and
            templated pages, on a labelled web or a documentation tree

Run 'trawl bench crawl --help', 'trawl bench frontier --help',
'trawl bench freshness --help', 'trawl bench fleet --help' or
'trawl bench dedup --help' for flags.

Examples:
  trawl bench crawl --hosts 200 --latency 5ms
  trawl bench crawl --json --baseline docs/bench/crawl-baseline.json
  trawl bench frontier --urls 1000000 --hosts 100000 --json
  trawl bench freshness --mix churn --last-modified 0.5 --lying 0.2
  trawl bench fleet --nodes 1,2,3 --cpu 0.4
  trawl bench dedup --docs /usr/share/doc/python3.11/html
`

// cmdBench parses a bench's flags into its package's Options and hands
// over to the package's Main. crawl, dedup and fleet run this binary as
// child processes (the web; fleet's nodes).
func cmdBench(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, benchHelp)
		return 2
	}
	name := args[0]
	parse := func(help string, flags func(*flag.FlagSet)) (*flag.FlagSet, int, bool) {
		fs := newFlagSet("bench "+name, help, nil, stderr)
		flags(fs)
		_, code, ok := parseFlags(fs, args[1:], nil, stderr)
		return fs, code, ok
	}
	exe := func(prefix string) (string, bool) {
		exe, err := os.Executable()
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", prefix, err)
		}
		return exe, err == nil
	}
	switch name {
	case "crawl":
		var o crawlbench.Options
		if _, code, ok := parse(crawlbench.Help, func(fs *flag.FlagSet) { benchCrawlFlags(fs, &o) }); !ok {
			return code
		}
		var ok bool
		if o.Exe, ok = exe("trawl bench"); !ok {
			return 1
		}
		return crawlbench.Main(o, stdout, stderr)
	case "frontier":
		var o frontierbench.Options
		if _, code, ok := parse(frontierbench.Help, func(fs *flag.FlagSet) { benchFrontierFlags(fs, &o) }); !ok {
			return code
		}
		return frontierbench.Main(o, stdout, stderr)
	case "freshness":
		var o freshbench.Options
		if _, code, ok := parse(freshbench.Help, func(fs *flag.FlagSet) { benchFreshnessFlags(fs, &o) }); !ok {
			return code
		}
		return freshbench.Main(o, stdout, stderr)
	case "fleet":
		var o fleetbench.Options
		if _, code, ok := parse(fleetbench.Help, func(fs *flag.FlagSet) { benchFleetFlags(fs, &o) }); !ok {
			return code
		}
		var ok bool
		if o.Exe, ok = exe("trawl bench fleet"); !ok {
			return 1
		}
		return fleetbench.Main(o, stdout, stderr)
	case "dedup":
		var o dedupbench.Options
		fs, code, ok := parse(dedupbench.Help, func(fs *flag.FlagSet) { benchDedupFlags(fs, &o) })
		if !ok {
			return code
		}
		if fs.NArg() > 0 {
			fmt.Fprintf(stderr, "trawl bench dedup: unexpected arguments %q\n", fs.Args())
			return 2
		}
		if o.Exe, ok = exe("trawl bench dedup"); !ok {
			return 1
		}
		return dedupbench.Main(o, stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stderr, benchHelp)
		return 0
	}
	fmt.Fprint(stderr, benchHelp)
	return 2
}

func benchCrawlFlags(fs *flag.FlagSet, o *crawlbench.Options) {
	fs.IntVar(&o.Hosts, "hosts", 200, "hosts in the synthetic web")
	fs.DurationVar(&o.Latency, "latency", 5*time.Millisecond, "per-host latency before the first byte")
	fs.DurationVar(&o.MinDelay, "min-delay", 0, "least gap between fetches to one host (0: none)")
	fs.IntVar(&o.Concurrency, "concurrency", 256, "fetch workers")
	fs.Int64Var(&o.Seed, "seed", 1, "seed of the synthetic web")
	fs.IntVar(&o.BigPages, "big-pages", 0, "pages of each big host (0: the default)")
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
	fset.StringVar(&o.MemProfile, "memprofile", "", "write a heap profile, taken with N URLs queued, to this file")
	fset.StringVar(&o.LeaseMemProfile, "memprofile-lease", "", "write a heap profile, taken after the lease+complete phase, to this file")
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
	fset.BoolVar(&o.JSON, "json", false, "print one JSON object instead of a table")
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
