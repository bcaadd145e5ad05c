// Package crawlbench is `trawl bench crawl`: it serves the synthetic web
// from a child process (package benchweb), crawls it to the end with a
// node in this process, and reports pages/s, CPU-ms per page (split by
// stage from a CPU profile of the crawl), MB/s, WARC size and peak RSS,
// as a table or one JSON Result. With a baseline it is a guard: CPU-ms
// per page over twice the recorded figure fails the run.
package crawlbench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/trawl-crawler/trawl/internal/bench/benchweb"
	"github.com/trawl-crawler/trawl/internal/bench/cpustages"
	"github.com/trawl-crawler/trawl/internal/procstat"
	"github.com/trawl-crawler/trawl/job"
	"github.com/trawl-crawler/trawl/node"
)

// Help is `trawl bench crawl --help`.
const Help = `usage: trawl bench crawl [flags]

Serves the synthetic web from a child process (so that the CPU measured is
the crawler's alone), crawls it with no gap by default, and reports pages/s,
CPU-ms per page split by stage, MB/s, WARC size and peak RSS.

Examples:
  trawl bench crawl
  trawl bench crawl --hosts 2000 --concurrency 512 --cpuprofile cpu.pprof
  trawl bench crawl --json --baseline docs/bench/crawl-baseline.json`

// Result is what `trawl bench crawl --json` prints.
type Result struct {
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
	// PagesPerCPUSec is pages per second of one busy core: the crawler's
	// throughput per core, 1000 / CPUMsPerPage.
	PagesPerCPUSec float64 `json:"pages_per_cpu_s"`
	// From the Go runtime over the crawl (runtime/metrics): heap
	// allocations per page (objects and bytes), GC cycles, and the time
	// goroutines waited on contended sync.Mutex and RWMutex locks per
	// page (summed over goroutines: waiting is not CPU, but a lock held
	// long enough to make workers wait shows here).
	AllocsPerPage      float64 `json:"allocs_per_page"`
	AllocBytesPerPage  float64 `json:"alloc_bytes_per_page"`
	GCCycles           uint64  `json:"gc_cycles"`
	MutexWaitMsPerPage float64 `json:"mutex_wait_ms_per_page"`
}

// runtimeFigures are the runtime/metrics Result reports.
var runtimeFigures = []string{"/gc/heap/allocs:objects", "/gc/heap/allocs:bytes", "/gc/cycles/total:gc-cycles", "/sync/mutex/wait/total:seconds"}

// readRuntime returns runtimeFigures' values now, as float64.
func readRuntime() []float64 {
	s := make([]metrics.Sample, len(runtimeFigures))
	for i, name := range runtimeFigures {
		s[i].Name = name
	}
	metrics.Read(s)
	out := make([]float64, len(s))
	for i, m := range s {
		switch m.Value.Kind() {
		case metrics.KindUint64:
			out[i] = float64(m.Value.Uint64())
		case metrics.KindFloat64:
			out[i] = m.Value.Float64()
		}
	}
	return out
}

// Options are `trawl bench crawl`'s flags, and the trawl binary that
// serves the web.
type Options struct {
	Exe                                    string // the trawl binary, run as `trawl testweb`
	Hosts, Concurrency, BigPages           int
	WARCGzipLevel                          int
	Latency, MinDelay                      time.Duration
	MinSyncInterval, RobotsGiveUp          time.Duration
	Seed                                   int64
	JSON                                   bool   // one JSON Result instead of a table
	CPUProfile, MutexProfile, BlockProfile string // files to write, if set
	MemProfile                             string
	Baseline                               string // a recorded Result: the guard's figure
	// WebFlags are more `trawl testweb` flags, space-separated, that shape
	// the web (e.g. "--gzip --links 30"); "" serves the default web.
	WebFlags string
}

// Main runs the bench, writes its report to stdout and its messages to
// stderr, and returns the exit code: 2 for bad options, 1 for a failure
// or a regression against the baseline.
func Main(o Options, stdout, stderr io.Writer) int {
	var recorded float64
	if o.Baseline != "" {
		var err error
		if recorded, err = readBaseline(o.Baseline); err != nil {
			fmt.Fprintf(stderr, "trawl bench: --baseline: %v\n", err)
			return 2
		}
	}
	if o.RobotsGiveUp < 0 {
		fmt.Fprintf(stderr, "trawl bench: --robots-give-up %v is negative\n", o.RobotsGiveUp)
		return 2
	}
	dir, err := os.MkdirTemp("", "trawl-bench-")
	if err != nil {
		fmt.Fprintf(stderr, "trawl bench: %v\n", err)
		return 1
	}
	defer os.RemoveAll(dir)
	web, err := benchweb.Start(benchweb.Options{Exe: o.Exe, Dir: dir, Seed: o.Seed, Hosts: o.Hosts,
		Latency: o.Latency, BigPages: o.BigPages, Lifetime: 30 * time.Minute, Stderr: stderr, Extra: strings.Fields(o.WebFlags)})
	if err != nil {
		fmt.Fprintf(stderr, "trawl bench: %v\n", err)
		return 1
	}
	defer web.Stop()
	seeds, hostMap := web.Seeds, web.Hosts
	md := o.MinDelay
	if md == 0 {
		md = -1
	}
	n, err := node.Open(node.Options{
		DataDir:         filepath.Join(dir, "data"),
		MinDelay:        md,
		Concurrency:     o.Concurrency,
		WARCGzipLevel:   o.WARCGzipLevel,
		MinSyncInterval: o.MinSyncInterval,
		AllowNets:       []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		Hosts:           hostMap,
	})
	if err != nil {
		fmt.Fprintf(stderr, "trawl bench: %v\n", err)
		return 1
	}
	j, err := n.Submit(job.Spec{Seeds: seeds, Domains: []string{"trawl.test"}, MaxDepth: 20, RobotsGiveUp: o.RobotsGiveUp})
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
	cpu0, rt0 := procstat.SelfCPU(), readRuntime()
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
				samples = append(samples, sample{time.Since(start).Seconds(), pages(), (procstat.SelfCPU() - cpu0).Seconds()})
			}
		}
	}()
	if o.MutexProfile != "" {
		runtime.SetMutexProfileFraction(1)
	}
	if o.BlockProfile != "" {
		runtime.SetBlockProfileRate(int(100 * time.Microsecond))
	}
	n.Start()
	<-j.Ended()
	err = errors.Join(j.Err(), n.Close())
	sum := n.Summary(j.ID)
	wall := time.Since(start).Seconds()
	cpu, rt := (procstat.SelfCPU() - cpu0).Seconds(), readRuntime()
	for i := range rt {
		rt[i] -= rt0[i]
	}
	close(stopSampling)
	<-sampled
	pprof.StopCPUProfile()
	if err != nil {
		fmt.Fprintf(stderr, "trawl bench: %v\n", err)
		return 1
	}
	if o.CPUProfile != "" {
		if err := os.WriteFile(o.CPUProfile, prof.Bytes(), 0o644); err != nil {
			fmt.Fprintf(stderr, "trawl bench: %v\n", err)
			return 1
		}
	}
	for _, p := range []struct{ name, path string }{{"mutex", o.MutexProfile}, {"block", o.BlockProfile}} {
		if p.path == "" {
			continue
		}
		if err := writeProfile(p.name, p.path); err != nil {
			fmt.Fprintf(stderr, "trawl bench: --%sprofile: %v\n", p.name, err)
			return 1
		}
	}
	if o.MemProfile != "" {
		runtime.GC() // so that the heap profile's in-use figures are current
		if err := writeProfile("heap", o.MemProfile); err != nil {
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
	r := Result{
		Hosts: o.Hosts, Latency: o.Latency.String(), MinDelay: o.MinDelay.String(), Concurrency: o.Concurrency,
		Pages: sum.Pages, Requests: sum.Requests, Seconds: wall, StopReason: sum.StopReason,
		PagesPerSec: float64(sum.Pages) / wall, CPUSeconds: cpu, CPUsBusy: cpu / wall,
		MBPerSec: float64(sum.Bytes) / 1e6 / wall, ServerProcess: true,
		FetchedBytes: sum.Bytes, WARCBytes: warcBytes, RSSPeakBytes: procstat.Bytes("VmHWM"),
		StageCPUMsPerPage: map[string]float64{},
	}
	if sum.Pages > 0 {
		r.CPUMsPerPage = cpu * 1000 / float64(sum.Pages)
		r.PagesPerCPUSec = float64(sum.Pages) / cpu
		pg := float64(sum.Pages)
		r.AllocsPerPage, r.AllocBytesPerPage, r.GCCycles, r.MutexWaitMsPerPage = rt[0]/pg, rt[1]/pg, uint64(rt[2]), rt[3]*1000/pg
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
	web.Stop()
	if ps := web.Cmd.ProcessState; ps != nil {
		r.ServerCPUSec = (ps.UserTime() + ps.SystemTime()).Seconds()
	}
	code := 0
	if o.Baseline != "" {
		verdict := "ok"
		if r.CPUMsPerPage > 2*recorded {
			verdict, code = "REGRESSION: over twice the recorded figure", 1
		}
		fmt.Fprintf(stderr, "bench crawl guard: %.3f CPU-ms/page against %.3f recorded in %s (limit %.3f): %s\n",
			r.CPUMsPerPage, recorded, o.Baseline, 2*recorded, verdict)
	}
	if o.JSON {
		json.NewEncoder(stdout).Encode(r)
		return code
	}
	fmt.Fprintf(stdout, "crawl of %d hosts (%v latency, min delay %v, %d workers; web served by a separate process)\n",
		r.Hosts, o.Latency, o.MinDelay, r.Concurrency)
	fmt.Fprintf(stdout, "  pages         %d (%d requests), %s\n", r.Pages, r.Requests, r.StopReason)
	fmt.Fprintf(stdout, "  wall          %.2f s\n", r.Seconds)
	fmt.Fprintf(stdout, "  pages/s       %.0f\n", r.PagesPerSec)
	fmt.Fprintf(stdout, "  CPU           %.2f s (%.2f CPUs busy)\n", r.CPUSeconds, r.CPUsBusy)
	fmt.Fprintf(stdout, "  CPU-ms/page   %.3f (%.0f pages per CPU-second)\n", r.CPUMsPerPage, r.PagesPerCPUSec)
	fmt.Fprintf(stdout, "  allocations   %.0f a page, %.0f KB a page; %d GC cycles\n", r.AllocsPerPage, r.AllocBytesPerPage/1e3, r.GCCycles)
	fmt.Fprintf(stdout, "  lock waits    %.3f ms a page (contended mutexes, summed over goroutines)\n", r.MutexWaitMsPerPage)
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
	var r Result
	if err := json.Unmarshal(data, &r); err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	if r.CPUMsPerPage <= 0 {
		return 0, fmt.Errorf("%s: no cpu_ms_per_page above 0", path)
	}
	return r.CPUMsPerPage, nil
}
