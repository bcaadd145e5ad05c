package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/trawl-crawler/trawl/internal/bench/cpustages"
	"github.com/trawl-crawler/trawl/internal/procstat"
	"github.com/trawl-crawler/trawl/job"
	"github.com/trawl-crawler/trawl/node"
	"github.com/trawl-crawler/trawl/warc"
)

func init() {
	register("bench", "measure the crawler: bench crawl, bench frontier, bench freshness, bench fleet, bench dedup", cmdBench)
	leaf("bench crawl", func(fs *flag.FlagSet) { new(benchCrawlArgs).register(fs) })
	leaf("bench frontier", func(fs *flag.FlagSet) { new(benchFrontierArgs).register(fs) })
	leaf("bench freshness", func(fs *flag.FlagSet) { new(benchFreshnessArgs).register(fs) })
	leaf("bench fleet", func(fs *flag.FlagSet) { new(benchFleetArgs).register(fs) })
	leaf("bench dedup", func(fs *flag.FlagSet) { new(benchDedupArgs).register(fs) })
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

func cmdBench(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "crawl":
			return benchCrawl(args[1:], stdout, stderr)
		case "frontier":
			return benchFrontier(args[1:], stdout, stderr)
		case "freshness":
			return benchFreshness(args[1:], stdout, stderr)
		case "fleet":
			return benchFleet(args[1:], stdout, stderr)
		case "dedup":
			return benchDedup(args[1:], stdout, stderr)
		case "-h", "--help", "help":
			fmt.Fprint(stderr, benchHelp)
			return 0
		}
	}
	fmt.Fprint(stderr, benchHelp)
	return 2
}

// benchResult is what `trawl bench crawl --json` prints.
type benchResult struct {
	Hosts        int     `json:"hosts"`
	Latency      string  `json:"latency"`
	MinDelay     string  `json:"min_delay"`
	Concurrency  int     `json:"concurrency"`
	Pages        int64   `json:"pages"`
	Requests     int64   `json:"requests"`
	Seconds      float64 `json:"seconds"`
	PagesPerSec  float64 `json:"pages_per_s"`
	CPUSeconds   float64 `json:"cpu_s"`
	CPUMsPerPage float64 `json:"cpu_ms_per_page"`
	CPUsBusy     float64 `json:"cpus_busy"` // CPU seconds per wall second
	MBPerSec     float64 `json:"mb_per_s"`
	StopReason   string  `json:"stop_reason"`
	// The bulk phase is the crawl up to 90% of its pages: after it, only
	// hosts with long Crawl-delays or deep chains are left, and the crawl
	// waits on politeness, not on the machine.
	BulkSeconds     float64 `json:"bulk_s"`
	BulkPagesPerSec float64 `json:"bulk_pages_per_s"`
	BulkCPUsBusy    float64 `json:"bulk_cpus_busy"`
	ServerCPUSec    float64 `json:"server_cpu_s"`
	ServerProcess   bool    `json:"server_in_own_process"`
	// FetchedBytes is the payload fetched (after content decoding);
	// WARCBytes the size of the WARC files written (gzipped).
	FetchedBytes int64 `json:"fetched_bytes"`
	WARCBytes    int64 `json:"warc_bytes"`
	RSSPeakBytes int64 `json:"rss_peak_bytes"` // VmHWM of the crawler process
	// StageCPUMsPerPage splits CPUMsPerPage by stage (package cpustages),
	// from a CPU profile of the crawl: sampled, so it adds up to a little
	// less than the rusage figure.
	StageCPUMsPerPage map[string]float64 `json:"stage_cpu_ms_per_page"`
}

// benchCrawlArgs are `trawl bench crawl`'s flags.
type benchCrawlArgs struct {
	hosts, concurrency, bigPages, gzipLevel                      int
	latency, minDelay, minSync, giveUp                           time.Duration
	seed                                                         int64
	asJSON                                                       bool
	cpuProfile, mutexProfile, blockProfile, memProfile, baseline string
}

func (a *benchCrawlArgs) register(fs *flag.FlagSet) {
	fs.IntVar(&a.hosts, "hosts", 200, "hosts in the synthetic web")
	fs.DurationVar(&a.latency, "latency", 5*time.Millisecond, "per-host latency before the first byte")
	fs.DurationVar(&a.minDelay, "min-delay", 0, "least gap between fetches to one host (0: none)")
	fs.IntVar(&a.concurrency, "concurrency", 256, "fetch workers")
	fs.Int64Var(&a.seed, "seed", 1, "seed of the synthetic web")
	fs.IntVar(&a.bigPages, "big-pages", 0, "pages of each big host (0: the default)")
	fs.BoolVar(&a.asJSON, "json", false, "print one JSON object instead of a table")
	fs.StringVar(&a.cpuProfile, "cpuprofile", "", "write a CPU profile of the crawl to this file")
	fs.StringVar(&a.mutexProfile, "mutexprofile", "", "write a mutex contention profile of the crawl to this file (every contended lock sampled)")
	fs.StringVar(&a.blockProfile, "blockprofile", "", "write a blocking profile of the crawl to this file (channel waits, selects, locks; one sample per 100 µs blocked)")
	fs.StringVar(&a.memProfile, "memprofile", "", "write a heap profile to this file after the crawl (its alloc_space and alloc_objects cover the whole run)")
	fs.IntVar(&a.gzipLevel, "warc-gzip-level", warc.DefaultGzipLevel, "gzip level of each WARC record: 1 (fastest) to 9 (smallest)")
	fs.DurationVar(&a.minSync, "min-sync-interval", node.DefaultMinSyncInterval, "least time between two fsyncs of the WARC, and of the store's log (negative: none)")
	fs.DurationVar(&a.giveUp, "robots-give-up", 4*time.Second, "give up a host whose robots.txt stays unavailable this long (the web has some that answer 500 for ever; 0: never, and the crawl never ends)")
	fs.StringVar(&a.baseline, "baseline", "", "a `trawl bench crawl --json` result recorded in the repo: fail (exit 1) if CPU-ms/page is over twice its figure")
}

const benchCrawlHelp = `usage: trawl bench crawl [flags]

Serves the synthetic web from a child process (so that the CPU measured is
the crawler's alone), crawls it with no gap by default, and reports pages/s,
CPU-ms per page split by stage, MB/s, WARC size and peak RSS.

Examples:
  trawl bench crawl
  trawl bench crawl --hosts 2000 --concurrency 512 --cpuprofile cpu.pprof
  trawl bench crawl --json --baseline docs/bench/crawl-baseline.json`

// benchCrawl serves the synthetic web from a child process (so that the
// CPU measured is the crawler's alone), crawls it, and reports throughput
// and CPU per page.
func benchCrawl(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("bench crawl", benchCrawlHelp, nil, stderr)
	var a benchCrawlArgs
	a.register(fs)
	if _, code, ok := parseFlags(fs, args, nil, stderr); !ok {
		return code
	}
	var recorded float64
	if a.baseline != "" {
		var err error
		if recorded, err = readBaseline(a.baseline); err != nil {
			fmt.Fprintf(stderr, "trawl bench: --baseline: %v\n", err)
			return 2
		}
	}
	if a.giveUp < 0 {
		fmt.Fprintf(stderr, "trawl bench: --robots-give-up %v is negative\n", a.giveUp)
		return 2
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "trawl bench: %v\n", err)
		return 1
	}
	dir, err := os.MkdirTemp("", "trawl-bench-")
	if err != nil {
		fmt.Fprintf(stderr, "trawl bench: %v\n", err)
		return 1
	}
	defer os.RemoveAll(dir)
	web, err := startBenchWeb(exe, dir, a.seed, a.hosts, a.latency, a.bigPages, 30*time.Minute, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "trawl bench: %v\n", err)
		return 1
	}
	defer web.stop()
	seeds := web.seeds
	hostMap, err := readHostsFile(web.hostsFile)
	if err != nil {
		fmt.Fprintf(stderr, "trawl bench: %v\n", err)
		return 1
	}
	md := a.minDelay
	if md == 0 {
		md = -1
	}
	n, err := node.Open(node.Options{
		DataDir:         filepath.Join(dir, "data"),
		MinDelay:        md,
		Concurrency:     a.concurrency,
		WARCGzipLevel:   a.gzipLevel,
		MinSyncInterval: a.minSync,
		AllowNets:       []netip.Prefix{mustPrefix("127.0.0.0/8")},
		Hosts:           hostMap,
	})
	if err != nil {
		fmt.Fprintf(stderr, "trawl bench: %v\n", err)
		return 1
	}
	j, err := n.Submit(job.Spec{Seeds: seeds, Domains: []string{"trawl.test"}, MaxDepth: 20, RobotsGiveUp: a.giveUp})
	if err != nil {
		n.Close()
		fmt.Fprintf(stderr, "trawl bench: %v\n", err)
		return 1
	}
	pages := func() int64 { return j.Stats.Pages.Load() }
	// The crawl is always profiled, for the per-stage breakdown;
	// --cpuprofile keeps the profile.
	var prof bytes.Buffer
	if err := pprof.StartCPUProfile(&prof); err != nil {
		fmt.Fprintf(stderr, "trawl bench: %v\n", err)
		return 1
	}
	type sample struct {
		t     float64
		pages int64
		cpu   float64
	}
	var samples []sample
	cpu0 := cpuTime()
	start := time.Now()
	stopSampling := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stopSampling:
				return
			case <-tick.C:
				samples = append(samples, sample{time.Since(start).Seconds(), pages(), (cpuTime() - cpu0).Seconds()})
			}
		}
	}()
	if a.mutexProfile != "" {
		runtime.SetMutexProfileFraction(1)
	}
	if a.blockProfile != "" {
		runtime.SetBlockProfileRate(int(100 * time.Microsecond))
	}
	n.Start()
	<-j.Ended()
	err = errors.Join(j.Err(), n.Close())
	sum := n.Summary(j.ID)
	wall := time.Since(start).Seconds()
	cpu := (cpuTime() - cpu0).Seconds()
	close(stopSampling)
	<-sampled
	pprof.StopCPUProfile()
	if err != nil {
		fmt.Fprintf(stderr, "trawl bench: %v\n", err)
		return 1
	}
	if a.cpuProfile != "" {
		if err := os.WriteFile(a.cpuProfile, prof.Bytes(), 0o644); err != nil {
			fmt.Fprintf(stderr, "trawl bench: %v\n", err)
			return 1
		}
	}
	for _, p := range []struct{ name, path string }{{"mutex", a.mutexProfile}, {"block", a.blockProfile}} {
		if p.path == "" {
			continue
		}
		if err := writeProfile(p.name, p.path); err != nil {
			fmt.Fprintf(stderr, "trawl bench: --%sprofile: %v\n", p.name, err)
			return 1
		}
	}
	if a.memProfile != "" {
		runtime.GC() // so that the heap profile's in-use figures are current
		if err := writeProfile("heap", a.memProfile); err != nil {
			fmt.Fprintf(stderr, "trawl bench: --memprofile: %v\n", err)
			return 1
		}
	}
	stages, err := cpustages.Split(&prof)
	if err != nil {
		fmt.Fprintf(stderr, "trawl bench: %v\n", err)
		return 1
	}
	var warcBytes int64
	for _, f := range sum.WARCFiles {
		if fi, err := os.Stat(f); err == nil {
			warcBytes += fi.Size()
		}
	}
	r := benchResult{
		Hosts: a.hosts, Latency: a.latency.String(), MinDelay: a.minDelay.String(), Concurrency: a.concurrency,
		Pages: sum.Pages, Requests: sum.Requests, Seconds: wall, StopReason: sum.StopReason,
		PagesPerSec: float64(sum.Pages) / wall, CPUSeconds: cpu, CPUsBusy: cpu / wall,
		MBPerSec: float64(sum.Bytes) / 1e6 / wall, ServerProcess: true,
		FetchedBytes: sum.Bytes, WARCBytes: warcBytes, RSSPeakBytes: procstat.Bytes("VmHWM"),
		StageCPUMsPerPage: map[string]float64{},
	}
	if sum.Pages > 0 {
		r.CPUMsPerPage = cpu * 1000 / float64(sum.Pages)
		for st, d := range stages {
			r.StageCPUMsPerPage[st] = d.Seconds() * 1000 / float64(sum.Pages)
		}
	}
	for _, smp := range samples {
		if smp.pages*10 >= sum.Pages*9 && smp.t > 0 {
			r.BulkSeconds, r.BulkPagesPerSec, r.BulkCPUsBusy = smp.t, float64(smp.pages)/smp.t, smp.cpu/smp.t
			break
		}
	}
	web.stop()
	if ps := web.cmd.ProcessState; ps != nil {
		r.ServerCPUSec = (ps.UserTime() + ps.SystemTime()).Seconds()
	}
	code := 0
	if a.baseline != "" {
		verdict := "ok"
		if r.CPUMsPerPage > 2*recorded {
			verdict, code = "REGRESSION: over twice the recorded figure", 1
		}
		fmt.Fprintf(stderr, "bench crawl guard: %.3f CPU-ms/page against %.3f recorded in %s (limit %.3f): %s\n",
			r.CPUMsPerPage, recorded, a.baseline, 2*recorded, verdict)
	}
	if a.asJSON {
		json.NewEncoder(stdout).Encode(r)
		return code
	}
	fmt.Fprintf(stdout, "crawl of %d hosts (%v latency, min delay %v, %d workers; web served by a separate process)\n",
		r.Hosts, a.latency, a.minDelay, r.Concurrency)
	fmt.Fprintf(stdout, "  pages         %d (%d requests), %s\n", r.Pages, r.Requests, r.StopReason)
	fmt.Fprintf(stdout, "  wall          %.2f s\n", r.Seconds)
	fmt.Fprintf(stdout, "  pages/s       %.0f\n", r.PagesPerSec)
	fmt.Fprintf(stdout, "  CPU           %.2f s (%.2f CPUs busy)\n", r.CPUSeconds, r.CPUsBusy)
	fmt.Fprintf(stdout, "  CPU-ms/page   %.3f\n", r.CPUMsPerPage)
	fmt.Fprintf(stdout, "  MB/s          %.1f\n", r.MBPerSec)
	fmt.Fprintf(stdout, "  bulk (90%%)    %.2f s, %.0f pages/s, crawler %.2f CPUs busy\n", r.BulkSeconds, r.BulkPagesPerSec, r.BulkCPUsBusy)
	fmt.Fprintf(stdout, "  web server    %.2f CPU-s in its own process (%.3f ms/page)\n", r.ServerCPUSec, r.ServerCPUSec*1000/float64(max(r.Pages, 1)))
	fmt.Fprintf(stdout, "  WARC          %.1f MB for %.1f MB fetched (%.2f)\n", float64(r.WARCBytes)/1e6, float64(r.FetchedBytes)/1e6, float64(r.WARCBytes)/float64(max(r.FetchedBytes, 1)))
	fmt.Fprintf(stdout, "  peak RSS      %.0f MiB\n", float64(r.RSSPeakBytes)/(1<<20))
	fmt.Fprintf(stdout, "  CPU-ms/page by stage (from a CPU profile):\n")
	for _, st := range cpustages.Order {
		fmt.Fprintf(stdout, "    %-31s %.3f\n", st, r.StageCPUMsPerPage[st])
	}
	return code
}

// writeProfile writes the named runtime profile (heap, mutex, block) to
// path.
func writeProfile(name, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	return errors.Join(pprof.Lookup(name).WriteTo(f, 0), f.Close())
}

// readBaseline reads the CPU-ms/page of a recorded `bench crawl --json`
// result.
func readBaseline(path string) (float64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	var r benchResult
	if err := json.Unmarshal(data, &r); err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	if r.CPUMsPerPage <= 0 {
		return 0, fmt.Errorf("%s: no cpu_ms_per_page above 0", path)
	}
	return r.CPUMsPerPage, nil
}

// cpuTime is the user+system CPU time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
