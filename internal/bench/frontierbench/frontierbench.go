// Package frontierbench is the benchmark behind `trawl bench frontier`. It
// opens a node's durable state the way the node does (node.OpenState: store,
// URL-seen gate, frontierdb, frontier), fills it with synthetic URLs and
// measures seen-checks, enqueue, RSS, start-up and lease+complete, phase by
// phase (see Run). It is internal to trawl, not a public API. Run measures
// the whole process (RSS, profiles): run one at a time.
package frontierbench

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/trawl-crawler/trawl/frontier"
	"github.com/trawl-crawler/trawl/internal/procstat"
	"github.com/trawl-crawler/trawl/internal/store"
	"github.com/trawl-crawler/trawl/internal/store/urlseen"
	"github.com/trawl-crawler/trawl/node"
)

// Result is one run's measurements; `trawl bench frontier --json` prints
// it. The JSON names are relied on by docs/design/benchmarks.md and by scripts:
// do not rename them. The first eight fields are the targets' figures;
// the rest explain them.
type Result struct {
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
	// LeaseCPUMicros is the process's CPU time (user and system) over the
	// lease+complete phase, in µs a completion: with the phase's rate, how
	// many cores it kept busy.
	LeaseCPUMicros float64 `json:"lease_complete_cpu_us"`
	// Ceilings are measured after the phases, in the same run and on the
	// same disk (see Ceilings).
	Ceilings
	// Footprint is measured along the phases; Projection extends it to
	// Config.ProjectURLs and ProjectHosts (nil if they are 0).
	Footprint
	Projection *Projection `json:"projection,omitempty"`
}

// Config is one run of the benchmark. It has no defaults: every count must
// be at least 1 (the command fills in its flags' defaults).
type Config struct {
	// Dir is the store's directory. It must be missing or hold an empty
	// store; Run leaves the store behind for the caller to remove.
	Dir string
	// URLs is how many synthetic URLs are seen-checked and queued.
	URLs int
	// Hosts is how many hosts the URLs are spread over: URL i is on host
	// i mod Hosts.
	Hosts int
	// Batch is the URLs per seen-check batch and per frontier.Add.
	Batch int
	// Workers is the goroutines each phase runs on.
	Workers int
	// Known is how many queued URLs, drawn at random, are checked again.
	Known int
	// Leases is how many URLs are leased and completed.
	Leases int
	// InFlight is how many uncommitted changes each worker keeps in flight.
	InFlight int
	// ProfilePhase is the phase CPUProfile covers: seen-new, enqueue,
	// seen-known, startup or lease. Empty: none (a caller that wants the
	// whole run profiles the process itself).
	ProfilePhase string
	// CPUProfile receives a CPU profile of ProfilePhase. Nil: no profile.
	CPUProfile io.Writer
	// MutexProfile and BlockProfile receive the contended-lock and
	// blocking profiles of ProfilePhase (every contended lock sampled;
	// one blocking sample per microsecond blocked). Nil: no profile.
	MutexProfile, BlockProfile io.Writer
	// HeapProfile receives a heap profile taken with URLs queued. Nil: no
	// profile.
	HeapProfile io.Writer
	// LeaseHeapProfile receives a heap profile taken after the
	// lease+complete phase (windows refilled, records written). Nil: no
	// profile.
	LeaseHeapProfile io.Writer
	// ProjectURLs and ProjectHosts, if both > 0, are the crawl the
	// measured footprint is projected to (Result.Projection).
	ProjectURLs, ProjectHosts int64
}

// phases are the names of Run's phases, in order.
var phases = []string{"seen-new", "enqueue", "seen-known", "startup", "lease", "ceilings"}

// Validate reports every bad field by name.
func (c Config) Validate() error {
	var errs []error
	if c.Dir == "" {
		errs = append(errs, errors.New("frontierbench: Dir is empty"))
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"URLs", c.URLs}, {"Hosts", c.Hosts}, {"Batch", c.Batch}, {"Workers", c.Workers}, {"Known", c.Known}, {"Leases", c.Leases}, {"InFlight", c.InFlight}} {
		if f.v < 1 {
			errs = append(errs, fmt.Errorf("frontierbench: %s = %d, want >= 1", f.name, f.v))
		}
	}
	if c.ProjectURLs < 0 || c.ProjectHosts < 0 {
		errs = append(errs, fmt.Errorf("frontierbench: ProjectURLs = %d, ProjectHosts = %d, want >= 0 (0: no projection)", c.ProjectURLs, c.ProjectHosts))
	}
	if c.ProfilePhase != "" && !slices.Contains(phases, c.ProfilePhase) {
		errs = append(errs, fmt.Errorf("frontierbench: ProfilePhase = %q, want one of %s", c.ProfilePhase, strings.Join(phases, ", ")))
	}
	if (c.CPUProfile != nil || c.MutexProfile != nil || c.BlockProfile != nil) && c.ProfilePhase == "" {
		errs = append(errs, errors.New("frontierbench: a profile is set but ProfilePhase is empty"))
	}
	return errors.Join(errs...)
}

// job is the one job the bench's URLs belong to, in the seen gate and in
// the frontier.
const job uint32 = 0

// openState opens the node's durable state in dir as a node would, with
// the frontier's politeness off.
func openState(dir string, urls int) (*node.State, error) {
	return node.OpenState(node.StateOptions{
		Dir: dir,
		Frontier: frontier.Options{
			MinDelay:    -1,      // no gap: the bench measures the machinery, not politeness
			MaxParallel: 1 << 30, // every queued URL of a host may be leased at once
		},
		Seen:   urlseen.DurableOptions{ExpectedURLs: uint(urls)},
		Logger: slog.New(slog.DiscardHandler),
	})
}

// Run validates c and measures the URL-seen gate and the frontier on the
// node's durable state in c.Dir, phase by phase, reporting each phase as it
// starts on progress:
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
//  5. start-up: close the state, then time node.OpenState (store.Open,
//     urlseen.NewDurable rebuilding the Bloom filter by a scan of every seen
//     key, frontier.New restoring the hosts);
//  6. lease+complete: workers lease and complete (status 200), completions
//     pipelined, with no politeness gap, until a fixed count;
//  7. ceilings: the disk's fsyncs per second, and raw store commits of the
//     enqueue's and the completions' writes without the seen gate or the
//     frontier (Ceilings), in a scratch store beside Dir.
func Run(c Config, progress io.Writer) (_ Result, err error) {
	r := Result{URLs: c.URLs, Hosts: c.Hosts, Workers: c.Workers, Batch: c.Batch}
	if err := c.Validate(); err != nil {
		return r, err
	}
	r.HeapBaseBytes = heapLive()
	st, err := openState(c.Dir, c.URLs)
	if err != nil {
		return r, err
	}
	defer func() {
		if st != nil {
			if cerr := st.Close(); err == nil {
				err = cerr
			}
		}
	}()
	if n, q := st.Seen.Len(), st.Frontier.Stats().Queued; n != 0 || q != 0 {
		return r, fmt.Errorf("frontierbench: %s holds a store with %d seen and %d queued URLs, want an empty one", c.Dir, n, q)
	}
	// enter starts a phase: it reports it and profiles it if asked to.
	stopProfile := func() {}
	defer func() { stopProfile() }()
	enter := func(name, format string, args ...any) error {
		stopProfile()
		stopProfile = func() {}
		fmt.Fprintf(progress, "bench frontier: "+format+"\n", args...)
		if c.ProfilePhase != name {
			return nil
		}
		if c.CPUProfile != nil {
			if err := pprof.StartCPUProfile(c.CPUProfile); err != nil {
				return fmt.Errorf("frontierbench: %s: CPU profile: %w", name, err)
			}
		}
		stopProfiles := startWaitProfiles(c.MutexProfile, c.BlockProfile)
		stopProfile = func() {
			if c.CPUProfile != nil {
				pprof.StopCPUProfile()
			}
			stopProfiles()
		}
		return nil
	}

	// 1. seen new: a throwaway gate on the same (empty) store, so that its
	// filter bits do not load the real one.
	if err := enter("seen-new", "seen-check of %d new URLs", c.URLs); err != nil {
		return r, err
	}
	gate, err := urlseen.NewDurable(st.DB, urlseen.DurableOptions{ExpectedURLs: uint(c.URLs)})
	if err != nil {
		return r, err
	}
	secs, err := parallelBatches(c, c.URLs, func(lo, hi int, urls []string) error {
		b := st.DB.NewBatch()
		defer b.Close()
		isNew, err := gate.AddBatch(b, job, urls)
		if err != nil {
			return err
		}
		for i, n := range isNew {
			if !n {
				return fmt.Errorf("URL %q reported known", urls[i])
			}
		}
		return nil
	})
	if err != nil {
		return r, fmt.Errorf("frontierbench: seen new: %w", err)
	}
	gate = nil
	r.SeenNewChecked, r.SeenNewPerSec = c.URLs, float64(c.URLs)/secs

	// 2. enqueue.
	if err := enter("enqueue", "enqueue of %d URLs over %d hosts", c.URLs, c.Hosts); err != nil {
		return r, err
	}
	if r.EnqueueSeconds, err = enqueuePhase(c, st); err != nil {
		return r, fmt.Errorf("frontierbench: enqueue: %w", err)
	}
	r.EnqueuePerSec = float64(c.URLs) / r.EnqueueSeconds
	if q := st.Frontier.Stats().Queued; q != c.URLs {
		return r, fmt.Errorf("frontierbench: enqueue: frontier holds %d URLs, want %d", q, c.URLs)
	}

	// 3. RSS with N queued.
	r.RSSBytes = settledRSS()
	r.RSSPeakBytes = procstat.Bytes("VmHWM")
	if c.HeapProfile != nil {
		if err := pprof.WriteHeapProfile(c.HeapProfile); err != nil {
			return r, fmt.Errorf("frontierbench: heap profile: %w", err)
		}
	}

	// 4. seen known.
	if err := enter("seen-known", "seen-check of %d known URLs", c.Known); err != nil {
		return r, err
	}
	rng := atomic.Uint64{}
	if secs, err = parallelBatchesFunc(c, c.Known, func(lo, hi int) []string {
		rnd := rand.New(rand.NewPCG(uint64(lo), rng.Add(1)))
		urls := make([]string, hi-lo)
		for i := range urls {
			urls[i], _ = urlAt(rnd.IntN(c.URLs), c.Hosts)
		}
		return urls
	}, func(lo, hi int, urls []string) error {
		b := st.DB.NewBatch()
		defer b.Close()
		isNew, err := st.Seen.AddBatch(b, job, urls)
		if err != nil {
			return err
		}
		for i, n := range isNew {
			if n {
				return fmt.Errorf("enqueued URL %q reported new", urls[i])
			}
		}
		return nil
	}); err != nil {
		return r, fmt.Errorf("frontierbench: seen known: %w", err)
	}
	r.SeenKnownChecked, r.SeenKnownPerSec = c.Known, float64(c.Known)/secs
	r.StoreBytes = dirSize(c.Dir)
	use, err := st.DB.DiskUsage(store.KindQueue, store.KindSeen)
	if err != nil {
		return r, fmt.Errorf("frontierbench: disk usage: %w", err)
	}
	r.DiskQueueBytesPerURL = float64(use[store.KindQueue]) / float64(c.URLs)
	r.DiskSeenBytesPerURL = float64(use[store.KindSeen]) / float64(c.URLs)
	queueBytes, err := keyValueBytes(st.DB, store.KindQueue)
	if err != nil {
		return r, err
	}
	seenBytes, err := keyValueBytes(st.DB, store.KindSeen)
	if err != nil {
		return r, err
	}
	r.RawQueueBytesPerURL = float64(queueBytes) / float64(c.URLs)
	r.RawSeenBytesPerURL = float64(seenBytes) / float64(c.URLs)

	// 5. start-up with N queued.
	if err := enter("startup", "restart with %d URLs queued", c.URLs); err != nil {
		return r, err
	}
	err = st.Close()
	st = nil
	if err != nil {
		return r, err
	}
	runtime.GC()
	debug.FreeOSMemory()
	resetPeak := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
	t0 := time.Now()
	if st, err = openState(c.Dir, c.URLs); err != nil {
		return r, err
	}
	r.StartupSeconds = time.Since(t0).Seconds()
	if q := st.Frontier.Stats().Queued; q != c.URLs {
		return r, fmt.Errorf("frontierbench: restart: frontier holds %d URLs, want %d", q, c.URLs)
	}
	if resetPeak {
		r.RSSStartupPeak = procstat.Bytes("VmHWM")
	}
	r.RSSStartupBytes = settledRSS()
	r.StartupStoreSeconds = st.Opened.Store.Seconds()
	r.StartupSeenSeconds = st.Opened.Seen.Seconds()
	r.StartupFiltersSeconds = st.Opened.Filters.Seconds()
	r.StartupFrontierSeconds = st.Opened.Frontier.Seconds()
	r.HeapStartupBytes = heapLive()
	r.FilterBytes = st.Seen.FilterStats().Bytes + st.Fetched.FilterStats().Bytes + st.Digests.FilterStats().Bytes
	r.HeapPerHost = float64(max(0, r.HeapStartupBytes-r.HeapBaseBytes-r.FilterBytes)) / float64(c.Hosts)

	// 6. lease+complete.
	if err := enter("lease", "lease+complete of %d URLs", c.Leases); err != nil {
		return r, err
	}
	cpu0 := procstat.SelfCPU()
	n, secs, err := leasePhase(c, st.Frontier)
	if err != nil {
		return r, fmt.Errorf("frontierbench: lease+complete: %w", err)
	}
	r.LeaseCompleted, r.LeaseCompletePerS = n, float64(n)/secs
	r.LeaseCPUMicros = float64((procstat.SelfCPU() - cpu0).Microseconds()) / float64(max(n, 1))
	r.RSSLeaseBytes = settledRSS()
	r.HeapLeaseBytes = heapLive()
	r.WindowBytes = max(0, r.HeapLeaseBytes-r.HeapStartupBytes)
	// Every completion was acknowledged, so committed: count the host
	// records they wrote.
	if r.HostRecords, err = st.DB.Count(store.KindPrefix(store.KindHost)); err != nil {
		return r, fmt.Errorf("frontierbench: host records: %w", err)
	}
	if use, err = st.DB.DiskUsage(store.KindHost); err != nil {
		return r, fmt.Errorf("frontierbench: disk usage: %w", err)
	}
	r.DiskHostBytesPerHost = float64(use[store.KindHost]) / float64(max(r.HostRecords, 1))
	if c.LeaseHeapProfile != nil {
		if err := pprof.WriteHeapProfile(c.LeaseHeapProfile); err != nil {
			return r, fmt.Errorf("frontierbench: heap profile after leasing: %w", err)
		}
	}

	// 7. ceilings, with the state closed (no compaction of its own runs).
	if err := enter("ceilings", "ceilings: fsyncs/s, raw store ingest of %d URLs and %d raw completions", min(c.URLs, ceilingURLs), min(c.Leases, ceilingCompletions)); err != nil {
		return r, err
	}
	err = st.Close()
	st = nil
	if err != nil {
		return r, err
	}
	if r.Ceilings, err = measureCeilings(c); err != nil {
		return r, fmt.Errorf("frontierbench: ceilings: %w", err)
	}
	if c.ProjectURLs > 0 && c.ProjectHosts > 0 {
		p := Project(r, c.ProjectURLs, c.ProjectHosts)
		r.Projection = &p
	}
	return r, nil
}

// parallelBatches runs fn over [0, n) in batches of the synthetic URLs,
// on c.Workers goroutines, and returns the seconds it took.
func parallelBatches(c Config, n int, fn func(lo, hi int, urls []string) error) (float64, error) {
	return parallelBatchesFunc(c, n, func(lo, hi int) []string {
		urls := make([]string, hi-lo)
		for i := range urls {
			urls[i], _ = urlAt(lo+i, c.Hosts)
		}
		return urls
	}, fn)
}

// parallelBatchesFunc is parallelBatches with the URLs of a batch made by
// gen (inside the timed region: making them is cheap next to checking).
func parallelBatchesFunc(c Config, n int, gen func(lo, hi int) []string, fn func(lo, hi int, urls []string) error) (float64, error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, c.Workers)
	start := time.Now()
	for w := range c.Workers {
		wg.Go(func() {
			for {
				lo := int(next.Add(int64(c.Batch))) - c.Batch
				if lo >= n {
					return
				}
				hi := min(n, lo+c.Batch)
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
// change was durable. Each worker keeps up to c.InFlight changes
// uncommitted, waiting for the oldest when it has that many.
func enqueuePhase(c Config, st *node.State) (float64, error) {
	var mu sync.Mutex
	inflight := make(map[int][]<-chan error, c.Workers)
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, c.Workers)
	start := time.Now()
	for w := range c.Workers {
		wg.Go(func() {
			var pending []<-chan error
			defer func() {
				mu.Lock()
				inflight[w] = pending
				mu.Unlock()
			}()
			urls := make([]string, 0, c.Batch)
			hosts := make([]string, 0, c.Batch)
			for {
				lo := int(next.Add(int64(c.Batch))) - c.Batch
				if lo >= c.URLs {
					return
				}
				hi := min(c.URLs, lo+c.Batch)
				urls, hosts = urls[:0], hosts[:0]
				for i := lo; i < hi; i++ {
					u, h := urlAt(i, c.Hosts)
					urls, hosts = append(urls, u), append(hosts, h)
				}
				b := st.DB.NewBatch()
				isNew, err := st.Seen.AddBatch(b, job, urls)
				if err != nil {
					b.Close()
					errs[w] = err
					next.Store(int64(c.URLs))
					return
				}
				items := make([]frontier.Item, 0, len(urls))
				for i, n := range isNew {
					if n {
						items = append(items, frontier.Item{URL: urls[i], Host: hosts[i], Depth: 1, Job: job})
					}
				}
				if len(items) != len(urls) {
					errs[w] = fmt.Errorf("%d of %d new URLs reported known (batch at %d)", len(urls)-len(items), len(urls), lo)
					next.Store(int64(c.URLs))
					b.Close()
					return
				}
				pending = append(pending, st.Frontier.Add(b, items...))
				if len(pending) >= c.InFlight {
					if err := <-pending[0]; err != nil {
						errs[w] = err
						next.Store(int64(c.URLs))
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

// leasePhase leases and completes up to c.Leases URLs on c.Workers
// goroutines, each keeping up to c.InFlight completions uncommitted, and
// returns how many it completed and the seconds until the last completion
// was durable.
func leasePhase(c Config, f *frontier.Frontier) (int, float64, error) {
	var taken, done atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, c.Workers)
	start := time.Now()
	for w := range c.Workers {
		wg.Go(func() {
			var pending []<-chan error
			wait := func(ch <-chan error) bool {
				if err := <-ch; err != nil {
					errs[w] = err
					taken.Store(int64(c.Leases))
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
			for taken.Add(1) <= int64(c.Leases) {
				l, d := f.Lease()
				for l == nil {
					// Lease answers nil with no wait while a window refill
					// is under way; only Done tells that nothing is left.
					if d < 0 && f.Done() {
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
					taken.Store(int64(c.Leases))
					return
				}
				pending = append(pending, ch)
				if len(pending) >= c.InFlight {
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

// startWaitProfiles starts sampling contended locks if mutex is set and
// blocking if block is set, and returns a func that stops sampling and
// writes the profiles. The runtime samples nothing before it, so the
// profiles cover only the time between the two.
func startWaitProfiles(mutex, block io.Writer) (stop func()) {
	if mutex != nil {
		runtime.SetMutexProfileFraction(1)
	}
	if block != nil {
		runtime.SetBlockProfileRate(int(time.Microsecond))
	}
	return func() {
		if mutex != nil {
			runtime.SetMutexProfileFraction(0)
			pprof.Lookup("mutex").WriteTo(mutex, 0)
		}
		if block != nil {
			runtime.SetBlockProfileRate(0)
			pprof.Lookup("block").WriteTo(block, 0)
		}
	}
}
