package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/trawl-crawler/trawl/frontier"
	"github.com/trawl-crawler/trawl/frontierdb"
	"github.com/trawl-crawler/trawl/store"
	"github.com/trawl-crawler/trawl/urlseen"
)

// frontierBenchResult is what `trawl bench frontier --json` prints. The
// first eight fields are the ones issue 3 names; the rest explain them.
type frontierBenchResult struct {
	SeenNewPerSec     float64 `json:"seen_new_per_s"`
	SeenKnownPerSec   float64 `json:"seen_known_per_s"`
	EnqueuePerSec     float64 `json:"enqueue_per_s"`
	LeaseCompletePerS float64 `json:"lease_complete_per_s"`
	RSSBytes          int64   `json:"rss_bytes"`
	StartupSeconds    float64 `json:"startup_s"`
	URLs              int     `json:"urls"`
	Hosts             int     `json:"hosts"`
	SeenNewChecked    int     `json:"seen_new_checked"`
	SeenKnownChecked  int     `json:"seen_known_checked"`
	EnqueueSeconds    float64 `json:"enqueue_s"`
	LeaseCompleted    int     `json:"lease_completed"`
	RSSPeakBytes      int64   `json:"rss_peak_bytes"`          // VmHWM up to the restart
	RSSStartupBytes   int64   `json:"rss_after_startup_bytes"` // after the restart, N queued
	RSSStartupPeak    int64   `json:"rss_startup_peak_bytes"`  // VmHWM of the restart (0 if it cannot be reset)
	RSSLeaseBytes     int64   `json:"rss_after_lease_bytes"`   // after the lease+complete phase
	StoreBytes        int64   `json:"store_bytes"`             // size of the store after enqueue
	Workers           int     `json:"workers"`
	Batch             int     `json:"batch"`
}

// frontierBenchConfig is the parsed command line of `trawl bench frontier`.
type frontierBenchConfig struct {
	urls, hosts, batch, workers, known, leases, inflight int
	data, memProfile, cpuProfile, profilePhase           string
	keep                                                 bool
}

// benchFrontier measures the URL-seen gate and the frontier on the real
// store (store + urlseen.Durable + frontierdb), phase by phase:
//
//  1. seen new: every one of the N URLs through a fresh urlseen.Durable's
//     AddBatch (Bloom filter, pending marks, keys staged into a batch), the
//     batches then discarded: the gate alone, no commit;
//  2. enqueue: AddBatch into a batch, frontier.Add of the new URLs with the
//     batch attached, so that the seen keys, queue items and host states
//     commit together (frontierdb's group committer, one fsync per group);
//     several batches in flight; timed until the last is durable;
//  3. RSS with N queued, after a GC that returns freed memory to the OS;
//  4. seen known: a random sample of the enqueued URLs, each of which must
//     be reported not new (the bench fails otherwise);
//  5. start-up: close everything, then time store.Open + NewDurable (the
//     Bloom rebuild scans every 'u' key) + frontier.New (restores the hosts);
//  6. lease+complete: workers lease and complete (status 200), completions
//     pipelined, with no politeness gap, until a fixed count.
func benchFrontier(args []string, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("bench frontier", flag.ContinueOnError)
	fset.SetOutput(stderr)
	var c frontierBenchConfig
	fset.IntVar(&c.urls, "urls", 10_000_000, "URLs to enqueue")
	fset.IntVar(&c.hosts, "hosts", 1_000_000, "hosts the URLs are spread over (URL i is on host i mod H)")
	fset.IntVar(&c.batch, "batch", 1000, "URLs per seen-check batch and frontier.Add")
	fset.IntVar(&c.workers, "workers", 0, "goroutines per phase (0: GOMAXPROCS)")
	fset.IntVar(&c.known, "known", 0, "known URLs to re-check (0: urls/10)")
	fset.IntVar(&c.leases, "leases", 0, "leases to take and complete (0: urls/10)")
	fset.IntVar(&c.inflight, "inflight", 64, "uncommitted changes each worker keeps in flight")
	fset.StringVar(&c.data, "data", "", "directory for the store; must be missing or empty (default: a temporary directory)")
	fset.BoolVar(&c.keep, "keep", false, "keep the data directory at the end")
	asJSON := fset.Bool("json", false, "print one JSON object instead of a table")
	fset.StringVar(&c.cpuProfile, "cpuprofile", "", "write a CPU profile to this file")
	fset.StringVar(&c.profilePhase, "profile-phase", "", "profile only this phase: seen-new, enqueue, seen-known, startup or lease (default: the whole run)")
	fset.StringVar(&c.memProfile, "memprofile", "", "write a heap profile, taken with N URLs queued, to this file")
	if err := fset.Parse(args); err != nil {
		return 2
	}
	if c.workers == 0 {
		c.workers = runtime.GOMAXPROCS(0)
	}
	if c.known == 0 {
		c.known = max(1, c.urls/10)
	}
	if c.leases == 0 {
		c.leases = max(1, c.urls/10)
	}
	if err := c.validate(); err != nil {
		fmt.Fprintf(stderr, "trawl bench frontier: %v\n", err)
		return 2
	}
	if c.data == "" {
		dir, err := os.MkdirTemp("", "trawl-bench-frontier-")
		if err != nil {
			fmt.Fprintf(stderr, "trawl bench frontier: %v\n", err)
			return 1
		}
		c.data = dir
	} else if err := emptyOrMissing(c.data); err != nil {
		fmt.Fprintf(stderr, "trawl bench frontier: --data: %v\n", err)
		return 2
	}
	if !c.keep {
		defer os.RemoveAll(c.data)
	}
	if c.cpuProfile != "" && c.profilePhase == "" {
		stop, err := startCPUProfile(c.cpuProfile)
		if err != nil {
			fmt.Fprintf(stderr, "trawl bench frontier: %v\n", err)
			return 1
		}
		defer stop()
	}
	r, err := runFrontierBench(c, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "trawl bench frontier: %v\n", err)
		return 1
	}
	if *asJSON {
		json.NewEncoder(stdout).Encode(r)
		return 0
	}
	printFrontierBench(stdout, r)
	return 0
}

// startCPUProfile starts a CPU profile into path; stop ends it.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// validate names every bad flag.
func (c frontierBenchConfig) validate() error {
	var errs []error
	for _, f := range []struct {
		name string
		v    int
	}{{"urls", c.urls}, {"hosts", c.hosts}, {"batch", c.batch}, {"workers", c.workers}, {"known", c.known}, {"leases", c.leases}, {"inflight", c.inflight}} {
		if f.v < 1 {
			errs = append(errs, fmt.Errorf("--%s = %d, want >= 1", f.name, f.v))
		}
	}
	return errors.Join(errs...)
}

// emptyOrMissing fails if dir holds anything: the bench needs a fresh store
// and removes the directory at the end.
func emptyOrMissing(dir string) error {
	names, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case len(names) > 0:
		return fmt.Errorf("%s is not empty", dir)
	}
	return nil
}

// benchURL is URL i of the synthetic set: host i mod hosts, path i. URLs
// are made from their index when needed, never all held at once.
func benchURL(buf []byte, i, hosts int) (url, host string) {
	buf = append(buf[:0], "http://h"...)
	buf = appendPadded(buf, i%hosts, 7)
	buf = append(buf, ".bench.test/p/"...)
	buf = strconv.AppendInt(buf, int64(i), 10)
	url = string(buf)
	return url, url[len("http://") : strings.IndexByte(url[len("http://"):], '/')+len("http://")]
}

// appendPadded appends v in decimal, zero-padded to width digits.
func appendPadded(buf []byte, v, width int) []byte {
	var tmp [20]byte
	d := strconv.AppendInt(tmp[:0], int64(v), 10)
	for n := len(d); n < width; n++ {
		buf = append(buf, '0')
	}
	return append(buf, d...)
}

// frontierState is one opening of the store with the gate and the
// frontier on it.
type frontierState struct {
	db    *store.DB
	seen  *urlseen.Durable
	queue *frontierdb.Store
	f     *frontier.Frontier
}

func openFrontierState(dir string, urls int) (*frontierState, error) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	db, err := store.Open(dir, store.Options{Logger: quiet})
	if err != nil {
		return nil, err
	}
	seen, err := urlseen.NewDurable(db, urlseen.DurableOptions{ExpectedURLs: uint(urls)})
	if err != nil {
		db.Close()
		return nil, err
	}
	queue := frontierdb.New(db, frontierdb.Options{})
	f, err := frontier.New(frontier.Options{
		Store:       queue,
		MinDelay:    -1,      // no gap: the bench measures the machinery, not politeness
		MaxParallel: 1 << 30, // every queued URL of a host may be leased at once
	})
	if err != nil {
		queue.Close()
		db.Close()
		return nil, err
	}
	return &frontierState{db: db, seen: seen, queue: queue, f: f}, nil
}

func (s *frontierState) close() error {
	return errors.Join(s.queue.Close(), s.db.Close())
}

// runFrontierBench runs the phases described at benchFrontier.
func runFrontierBench(c frontierBenchConfig, progress io.Writer) (frontierBenchResult, error) {
	r := frontierBenchResult{URLs: c.urls, Hosts: c.hosts, Workers: c.workers, Batch: c.batch}
	dir := filepath.Join(c.data, "state")
	st, err := openFrontierState(dir, c.urls)
	if err != nil {
		return r, err
	}
	defer func() {
		if st != nil {
			st.close()
		}
	}()
	// enter starts a phase: it reports it and profiles it if asked to.
	stopProfile := func() {}
	defer func() { stopProfile() }()
	enter := func(name, format string, args ...any) error {
		stopProfile()
		stopProfile = func() {}
		fmt.Fprintf(progress, "bench frontier: "+format+"\n", args...)
		if c.cpuProfile == "" || c.profilePhase != name {
			return nil
		}
		stop, err := startCPUProfile(c.cpuProfile)
		if err == nil {
			stopProfile = stop
		}
		return err
	}

	// 1. seen new: a throwaway gate on the same (empty) store, so that its
	// filter bits do not load the real one.
	if err := enter("seen-new", "seen-check of %d new URLs", c.urls); err != nil {
		return r, err
	}
	gate, err := urlseen.NewDurable(st.db, urlseen.DurableOptions{ExpectedURLs: uint(c.urls)})
	if err != nil {
		return r, err
	}
	secs, err := parallelBatches(c, c.urls, func(lo, hi int, urls []string) error {
		b := st.db.NewBatch()
		defer b.Close()
		isNew, err := gate.AddBatch(b, urls)
		if err != nil {
			return err
		}
		for i, n := range isNew {
			if !n {
				return fmt.Errorf("seen new: URL %q reported known", urls[i])
			}
		}
		return nil
	})
	if err != nil {
		return r, err
	}
	gate = nil
	r.SeenNewChecked, r.SeenNewPerSec = c.urls, float64(c.urls)/secs

	// 2. enqueue.
	if err := enter("enqueue", "enqueue of %d URLs over %d hosts", c.urls, c.hosts); err != nil {
		return r, err
	}
	if r.EnqueueSeconds, err = enqueuePhase(c, st); err != nil {
		return r, err
	}
	r.EnqueuePerSec = float64(c.urls) / r.EnqueueSeconds
	if q := st.f.Stats().Queued; q != c.urls {
		return r, fmt.Errorf("enqueue: frontier holds %d URLs, want %d", q, c.urls)
	}

	// 3. RSS with N queued.
	r.RSSBytes = settledRSS()
	r.RSSPeakBytes = procStatus("VmHWM")
	if c.memProfile != "" {
		if err := writeHeapProfile(c.memProfile); err != nil {
			return r, err
		}
	}

	// 4. seen known.
	if err := enter("seen-known", "seen-check of %d known URLs", c.known); err != nil {
		return r, err
	}
	rng := atomic.Uint64{}
	if secs, err = parallelBatchesFunc(c, c.known, func(lo, hi int) []string {
		rnd := rand.New(rand.NewPCG(uint64(lo), rng.Add(1)))
		urls := make([]string, hi-lo)
		var buf []byte
		for i := range urls {
			urls[i], _ = benchURL(buf, rnd.IntN(c.urls), c.hosts)
		}
		return urls
	}, func(lo, hi int, urls []string) error {
		b := st.db.NewBatch()
		defer b.Close()
		isNew, err := st.seen.AddBatch(b, urls)
		if err != nil {
			return err
		}
		for i, n := range isNew {
			if n {
				return fmt.Errorf("seen known: enqueued URL %q reported new", urls[i])
			}
		}
		return nil
	}); err != nil {
		return r, err
	}
	r.SeenKnownChecked, r.SeenKnownPerSec = c.known, float64(c.known)/secs
	r.StoreBytes = dirSize(dir)

	// 5. start-up with N queued.
	if err := enter("startup", "restart with %d URLs queued", c.urls); err != nil {
		return r, err
	}
	err = st.close()
	st = nil
	if err != nil {
		return r, err
	}
	runtime.GC()
	debug.FreeOSMemory()
	resetPeak := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
	t0 := time.Now()
	if st, err = openFrontierState(dir, c.urls); err != nil {
		return r, err
	}
	r.StartupSeconds = time.Since(t0).Seconds()
	if q := st.f.Stats().Queued; q != c.urls {
		return r, fmt.Errorf("restart: frontier holds %d URLs, want %d", q, c.urls)
	}
	if resetPeak {
		r.RSSStartupPeak = procStatus("VmHWM")
	}
	r.RSSStartupBytes = settledRSS()

	// 6. lease+complete.
	if err := enter("lease", "lease+complete of %d URLs", c.leases); err != nil {
		return r, err
	}
	n, secs, err := leasePhase(c, st.f)
	if err != nil {
		return r, err
	}
	r.LeaseCompleted, r.LeaseCompletePerS = n, float64(n)/secs
	r.RSSLeaseBytes = settledRSS()
	return r, nil
}

// parallelBatches runs fn over [0, n) in batches of the synthetic URLs,
// on c.workers goroutines, and returns the seconds it took.
func parallelBatches(c frontierBenchConfig, n int, fn func(lo, hi int, urls []string) error) (float64, error) {
	return parallelBatchesFunc(c, n, func(lo, hi int) []string {
		urls := make([]string, hi-lo)
		var buf []byte
		for i := range urls {
			urls[i], _ = benchURL(buf, lo+i, c.hosts)
		}
		return urls
	}, fn)
}

// parallelBatchesFunc is parallelBatches with the URLs of a batch made by
// gen (inside the timed region: making them is cheap next to checking).
func parallelBatchesFunc(c frontierBenchConfig, n int, gen func(lo, hi int) []string, fn func(lo, hi int, urls []string) error) (float64, error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, c.workers)
	start := time.Now()
	for w := range c.workers {
		wg.Go(func() {
			for {
				lo := int(next.Add(int64(c.batch))) - c.batch
				if lo >= n {
					return
				}
				hi := min(n, lo+c.batch)
				if err := fn(lo, hi, gen(lo, hi)); err != nil {
					errs[w] = err
					next.Store(int64(n))
					return
				}
			}
		})
	}
	wg.Wait()
	return time.Since(start).Seconds(), errors.Join(errs...)
}

// enqueuePhase seen-checks and queues every URL, each batch's seen keys
// committed with its queue items, and returns the seconds until the last
// change was durable. Each worker keeps up to c.inflight changes
// uncommitted, waiting for the oldest when it has that many.
func enqueuePhase(c frontierBenchConfig, st *frontierState) (float64, error) {
	var mu sync.Mutex
	inflight := make(map[int][]<-chan error, c.workers)
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, c.workers)
	start := time.Now()
	for w := range c.workers {
		wg.Go(func() {
			var pending []<-chan error
			defer func() {
				mu.Lock()
				inflight[w] = pending
				mu.Unlock()
			}()
			var buf []byte
			urls := make([]string, 0, c.batch)
			hosts := make([]string, 0, c.batch)
			for {
				lo := int(next.Add(int64(c.batch))) - c.batch
				if lo >= c.urls {
					return
				}
				hi := min(c.urls, lo+c.batch)
				urls, hosts = urls[:0], hosts[:0]
				for i := lo; i < hi; i++ {
					u, h := benchURL(buf, i, c.hosts)
					urls, hosts = append(urls, u), append(hosts, h)
				}
				b := st.db.NewBatch()
				isNew, err := st.seen.AddBatch(b, urls)
				if err != nil {
					b.Close()
					errs[w] = err
					next.Store(int64(c.urls))
					return
				}
				items := make([]frontier.Item, 0, len(urls))
				for i, n := range isNew {
					if n {
						items = append(items, frontier.Item{URL: urls[i], Host: hosts[i], Depth: 1})
					}
				}
				if len(items) != len(urls) {
					errs[w] = fmt.Errorf("enqueue: %d of %d new URLs reported known (batch at %d)", len(urls)-len(items), len(urls), lo)
					next.Store(int64(c.urls))
					b.Close()
					return
				}
				pending = append(pending, st.f.Add(b, items...))
				if len(pending) >= c.inflight {
					if err := <-pending[0]; err != nil {
						errs[w] = err
						next.Store(int64(c.urls))
						return
					}
					pending = pending[1:]
				}
			}
		})
	}
	wg.Wait()
	for _, pending := range inflight {
		for _, ch := range pending {
			if err := <-ch; err != nil {
				errs = append(errs, err)
			}
		}
	}
	return time.Since(start).Seconds(), errors.Join(errs...)
}

// leasePhase leases and completes up to c.leases URLs on c.workers
// goroutines, each keeping up to c.inflight completions uncommitted, and
// returns how many it completed and the seconds until the last completion
// was durable.
func leasePhase(c frontierBenchConfig, f *frontier.Frontier) (int, float64, error) {
	var taken, done atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, c.workers)
	start := time.Now()
	for w := range c.workers {
		wg.Go(func() {
			var pending []<-chan error
			wait := func(ch <-chan error) bool {
				if err := <-ch; err != nil {
					errs[w] = err
					taken.Store(int64(c.leases))
					return false
				}
				done.Add(1)
				return true
			}
			defer func() {
				for _, ch := range pending {
					wait(ch)
				}
			}()
			for taken.Add(1) <= int64(c.leases) {
				l, d := f.Lease()
				for l == nil {
					if d < 0 && f.Stats().InFlight == 0 {
						return // exhausted
					}
					select {
					case <-f.Changed():
					case <-time.After(max(d, time.Millisecond)):
					}
					l, d = f.Lease()
				}
				ch, err := f.Complete(l, frontier.Outcome{Status: 200}, nil)
				if err != nil {
					errs[w] = fmt.Errorf("complete %s: %w", l.Item.URL, err)
					taken.Store(int64(c.leases))
					return
				}
				pending = append(pending, ch)
				if len(pending) >= c.inflight {
					ok := wait(pending[0])
					pending = pending[1:]
					if !ok {
						return
					}
				}
			}
		})
	}
	wg.Wait()
	return int(done.Load()), time.Since(start).Seconds(), errors.Join(errs...)
}

// settledRSS returns the resident set size after a full GC has returned
// freed memory to the OS.
func settledRSS() int64 {
	runtime.GC()
	debug.FreeOSMemory()
	return procStatus("VmRSS")
}

// procStatus returns a "kB" field of /proc/self/status in bytes, 0 if it
// cannot be read (not Linux).
func procStatus(field string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || name != field {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			return 0
		}
		return kb << 10
	}
	return 0
}

func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.WriteHeapProfile(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// dirSize is the total size of the files under dir.
func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// Targets of issue 3 on the reference machine (2 cores).
const (
	targetSeenNew      = 1_000_000
	targetEnqueue      = 200_000
	targetLeaseComplet = 50_000
	targetRSS          = 1 << 30
)

func printFrontierBench(w io.Writer, r frontierBenchResult) {
	check := func(ok bool) string {
		if ok {
			return "ok"
		}
		return "MISSED"
	}
	mib := func(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }
	fmt.Fprintf(w, "frontier of %d URLs over %d hosts (%d workers, batches of %d; store %s on disk)\n",
		r.URLs, r.Hosts, r.Workers, r.Batch, mib(r.StoreBytes))
	fmt.Fprintf(w, "  %-28s %12.0f /s  target >= %d  %s\n", "seen-check, new URLs", r.SeenNewPerSec, targetSeenNew, check(r.SeenNewPerSec >= targetSeenNew))
	fmt.Fprintf(w, "  %-28s %12.0f /s  (%d sampled)\n", "seen-check, known URLs", r.SeenKnownPerSec, r.SeenKnownChecked)
	fmt.Fprintf(w, "  %-28s %12.0f /s  target >= %d  %s  (%.1f s)\n", "enqueue (seen-check+commit)", r.EnqueuePerSec, targetEnqueue, check(r.EnqueuePerSec >= targetEnqueue), r.EnqueueSeconds)
	fmt.Fprintf(w, "  %-28s %12.0f /s  target >= %d  %s  (%d completed)\n", "lease+complete", r.LeaseCompletePerS, targetLeaseComplet, check(r.LeaseCompletePerS >= targetLeaseComplet), r.LeaseCompleted)
	fmt.Fprintf(w, "  %-28s %12s     target < 1 GiB  %s  (peak %s)\n", "RSS, N queued", mib(r.RSSBytes), check(r.RSSBytes < targetRSS), mib(r.RSSPeakBytes))
	fmt.Fprintf(w, "  %-28s %12.2f s   RSS after %s (peak %s)\n", "start-up, N queued", r.StartupSeconds, mib(r.RSSStartupBytes), mib(r.RSSStartupPeak))
	fmt.Fprintf(w, "  %-28s %12s\n", "RSS after lease+complete", mib(r.RSSLeaseBytes))
}
