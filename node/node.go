// Package node is one trawl process: it owns the data directory and opens,
// once, the store, the frontier, the URL-seen gate, the fetcher, the
// robots.txt keeper and the WARC writer; it runs the worker pool and keeps
// the registry of crawl jobs (package job), which come and go while it runs.
//
// The pipeline (one Node, bounded everywhere):
//
//	dispatcher ──lease──▶ work chan (cap 0) ──▶ Concurrency workers
//	   ▲                                         │ job state, MaxPages, shared page? (another job's fetch)
//	   │ frontier.Changed / wait                 │ resolve + IP cap (frontier.SetIP)
//	   │                                         │ robotscache.Keeper.Check (robots.txt fetched in the host's own slot)
//	   │                                         │ fetch ──▶ WARC write, wait until synced (warc.Writer.Durable)
//	   │                                         │ links.Extract ▶ urlnorm ▶ session IDs stripped ▶ the job's scope ▶ urlseen (per job) ▶ pattern budget
//	   └──────── frontier.Add / Complete ◀───────┘ (durable before the worker moves on)
//
// A worker slot is taken before a lease is asked for, so a lease never
// waits in a queue and the host's clock starts when the fetch can.
// Politeness is the node's: one frontier for every job, so two jobs that
// share a host share its gap and its robots.txt.
//
// Durability: a page's completion (its item deleted, the items it
// discovered with their seen keys, its urlstate record, the host's clock)
// is one store batch, handed to the frontier only once the page's WARC
// records are fsynced, and the worker moves on only once the batch is
// durable. A power cut can archive a page twice, never record as done a
// page whose WARC bytes were lost.
//
// Indexes: the WARC writer's syncer, once a file is finished (fsynced,
// renamed, directory synced), hands its captures to the indexer
// (warc.Options.OnFinish; a queue of indexQueue files), whose goroutine
// writes NAME.warc.gz.cdxj beside it; Open indexes the finished files a
// crash left without one (cdxj.IndexMissing).
//
// Fleet: with Options.Partitioned the node serves only the partitions it
// is given (package cluster/fleet drives ServePartition and
// ReleasePartition); what it finds for the others leaves through its
// outbox, what others find for its own comes in through Fold. The wiring
// is drawn in partitions.go.
//
// Parts with state of their own, each a type that reaches the rest of the
// node through a small interface the node implements: the sitemaps
// (sitemapReader, sitemaps.go, through sitemapNode), the recrawl schedule
// (recrawlScheduler, recrawl.go, through recrawlNode) and the crawl log
// (crawlLog, crawllog.go, which needs only its writer and the clock).
//
// Lock order: Node.jobMu (jobs' state changes) is taken before Node.mu,
// a job's lock or the frontier's; Node.mu is never held while calling into
// the frontier, the keeper, the seen gate, the store or a job (each has its
// own lock).
package node

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/trawl-crawler/trawl/cdxj"
	"github.com/trawl-crawler/trawl/crawllog"
	"github.com/trawl-crawler/trawl/fetch"
	"github.com/trawl-crawler/trawl/frontier"
	"github.com/trawl-crawler/trawl/internal/frontierdb"
	"github.com/trawl-crawler/trawl/internal/outbox"
	"github.com/trawl-crawler/trawl/internal/patternbudget"
	"github.com/trawl-crawler/trawl/internal/store"
	"github.com/trawl-crawler/trawl/internal/store/dedup"
	"github.com/trawl-crawler/trawl/internal/store/urlseen"
	"github.com/trawl-crawler/trawl/job"
	"github.com/trawl-crawler/trawl/robots"
	"github.com/trawl-crawler/trawl/robotscache"
	"github.com/trawl-crawler/trawl/warc"
)

// jobCheckEvery is how often a busy dispatcher sees whether jobs whose
// last URLs left without a lease are done.
const jobCheckEvery = 250 * time.Millisecond

// levels is the number of the frontier's priority levels: seeds, their
// links, the rest (job.Job.Level shifts a job's URLs by its priority).
const levels = 3

// Node is one crawler process. Create it with Open, add jobs with Submit,
// start the workers with Start, stop with Close.
type Node struct {
	opts     Options
	agent    string
	state    *State
	db       *store.DB
	frontier *frontier.Frontier
	queue    *frontierdb.Store
	seen     *urlseen.Durable
	dedup    *dedup.Index          // the content-seen gate's exact index
	patterns *patternbudget.Budget // URLs queued and room earned per job, host and pattern: the trap rule of patterns.go (fixed 8 MiB)
	fetcher  *fetch.Fetcher
	robots   *robotscache.Keeper
	warc     *warc.Writer
	clog     *crawlLog // the crawl log, on or off (crawllog.go)
	indexer  *indexer  // the CDXJ index of each WARC file the writer finishes
	shared   *sharedPages
	running  atomic.Int32                     // jobs running
	paused   atomic.Bool                      // the whole node is paused (PauseNode): no lease
	fence    atomic.Pointer[func() time.Time] // SetFence's; nil: none
	ipGate   atomic.Pointer[IPGate]           // SetIPGate's; nil: none
	content  atomic.Pointer[ContentIndex]     // SetContentIndex's; nil: dedup (content.go)
	// templates: the hosts' templates, which the near-duplicate gate
	// leaves out of a page's print (templates.go)
	templates templates
	// recentPrints: the near-duplicate gate's pages judged original, kept
	// until long after their prints are committed (dedup.Recent)
	recentPrints dedup.Recent

	sitemaps *sitemapReader    // each job's reading of each origin's sitemaps (sitemaps.go)
	tdm      *tdmFiles         // each origin's TDMRep file (tdmrep.go)
	recrawl  *recrawlScheduler // the continuous jobs' recrawl schedule (recrawl.go)
	checks   validatorChecks   // which hosts' validators lie (validatorcheck.go)
	outbox   *outbox.Outbox    // URLs for partitions served elsewhere (Options.Partitioned; partitions.go)

	stop          chan struct{} // closed by Close: no new lease
	wake          chan struct{} // poke: the dispatcher looks again
	stopOnce      sync.Once
	fetchCtx      context.Context // cancelled StopGrace after stop
	cancelFetches context.CancelFunc
	started       bool
	drained       chan struct{} // closed when dispatcher and workers are done

	// jobMu serialises the jobs' state changes (Submit, Pause, Resume,
	// Cancel, a job's end) with what they tell the frontier and the
	// store. Lock order: jobMu, then mu, a job's own lock, the frontier's.
	jobMu sync.Mutex
	// tallyMu orders the jobs' stored tallies with their completions
	// (completeWith). Taken before the frontier's lock.
	tallyMu sync.Mutex

	mu         sync.Mutex
	jobs       map[job.ID]*job.Job
	submitting map[job.ID]bool // jobs whose seeds are being queued
	nextJob    job.ID
	fatal      error // first error that stops the node
}

// Open validates opts and the options it derives for every part, then
// opens the data directory: the state (resuming earlier jobs, or fresh),
// WARC files cut off by a crash repaired, finished WARC files without a
// CDXJ index indexed, a new WARC file begun on the first write. The workers start with Start.
func Open(opts Options) (*Node, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	n := &Node{
		opts:       opts,
		agent:      robots.ProductToken(opts.UserAgent),
		jobs:       make(map[job.ID]*job.Job),
		submitting: make(map[job.ID]bool),
		nextJob:    1,
		stop:       make(chan struct{}),
		wake:       make(chan struct{}, 1),
		drained:    make(chan struct{}),
		shared:     newSharedPages(opts.SharedPages),
		clog:       &crawlLog{now: opts.Now},
	}
	n.fetchCtx, n.cancelFetches = context.WithCancel(context.Background())

	// Every option is checked before anything in DataDir is touched.
	fetchOpts := fetch.Options{
		UserAgent:       opts.UserAgent,
		Hosts:           opts.Hosts,
		AllowNets:       opts.AllowNets,
		LocalAddr:       opts.SourceAddr,
		CACerts:         opts.CACerts,
		TotalTimeout:    opts.FetchTimeout,
		MaxBodyBytes:    opts.MaxBodyBytes,
		MaxDecodedBytes: opts.MaxDecodedBytes,
	}
	stateOpts := StateOptions{
		Dir:             filepath.Join(opts.DataDir, "state"),
		FS:              opts.FS,
		Fresh:           opts.Fresh,
		Logger:          opts.Logger,
		MinSyncInterval: max(opts.MinSyncInterval, 0),
		Frontier: frontier.Options{
			Levels:           levels,
			MinDelay:         opts.MinDelay,
			MaxDelay:         opts.MaxDelay,
			MaxAdaptiveDelay: opts.MaxAdaptiveDelay,
			HostBudget:       opts.HostBudget,
			// Negative (no cut) is frontier's 0.
			DuplicateAllowance: max(opts.DuplicateAllowance, 0),
			// A lease outlives the longest fetch plus the WARC write.
			LeaseTimeout: opts.FetchTimeout + time.Minute,
			Now:          opts.Now,
			OnDrop:       n.frontierDropped,
			Partitioned:  opts.Partitioned,
		},
		Seen: urlseen.DurableOptions{ExpectedURLs: opts.ExpectedURLs, MaxFilterBytes: opts.MaxSeenFilterBytes},
	}
	warcOpts := warc.Options{
		Dir:         filepath.Join(opts.DataDir, "warc"),
		FS:          opts.FS,
		MaxFileSize: opts.WARCMaxSize,
		GzipLevel:   opts.WARCGzipLevel,
		// The WARC and the store's log are fsynced at the same pace.
		MinSyncInterval: max(opts.MinSyncInterval, 0),
		Software:        "trawl/0.1",
		Info: map[string]string{
			"http-header-user-agent": opts.UserAgent,
			"robots":                 "obey",
		},
	}
	keeperOpts := robotscache.KeeperOptions{
		RetryBase: opts.RobotsRetry,
		RetryMax:  max(opts.RobotsRetry, time.Hour),
		// A host whose robots.txt answer a crash lost (and with it its
		// Crawl-delay) is left alone for the longest gap it could have
		// asked for.
		LostAnswerWait: min(opts.MaxDelay, robots.MaxCrawlDelay),
		Now:            opts.Now,
		Logger:         opts.Logger,
	}
	logOpts := crawllog.Options{MaxBytes: opts.CrawlLogMaxBytes, Now: opts.Now, Logger: opts.Logger}
	if err := errors.Join(fetchOpts.Validate(), stateOpts.Validate(), warcOpts.Validate(), keeperOpts.Validate(), logOpts.Validate()); err != nil {
		return nil, err
	}

	if err := opts.FS.MkdirAll(opts.DataDir, 0o755); err != nil {
		return nil, fmt.Errorf("node: create data directory: %w", err)
	}
	// From here, every part opened is closed again, last opened first, if
	// a later one fails.
	var opened []func()
	fail := func(err error) (*Node, error) {
		for i := len(opened) - 1; i >= 0; i-- {
			opened[i]()
		}
		n.cancelFetches()
		return nil, err
	}
	if opts.FS == vfs.Default {
		clog, err := crawllog.Open(filepath.Join(opts.DataDir, logDir), logOpts)
		if err != nil {
			return fail(fmt.Errorf("node: %w", err))
		}
		n.clog.w = clog
		opened = append(opened, func() { n.clog.close() })
	}
	st, err := OpenState(stateOpts)
	if err != nil {
		return fail(err)
	}
	opened = append(opened, func() { st.Close() })
	n.state, n.db, n.frontier, n.queue, n.seen = st, st.DB, st.Frontier, st.Queue, st.Seen
	n.recrawl = newRecrawlScheduler(n, st, opts, n.stop)
	n.sitemaps = newSitemapReader(n, n.recrawl, st.DB, n.shared, n.clog, n.agent, opts)
	n.tdm = newTDMFiles(st.DB)
	if n.dedup, err = dedup.New(st.DB); err != nil {
		return fail(err)
	}
	n.patterns = patternbudget.New(patternbudget.Options{})
	keeperOpts.DB = st.DB
	if n.robots, err = robotscache.NewKeeper(keeperOpts); err != nil {
		return fail(err)
	}
	if n.fetcher, err = fetch.New(fetchOpts); err != nil {
		return fail(err)
	}
	opened = append(opened, func() { n.fetcher.Close() })
	recovered, err := warc.RecoverFS(opts.FS, warcOpts.Dir)
	for _, r := range recovered {
		opts.Logger.Info("recovered WARC file cut off by a crash", "file", r.File, "records", r.Kept, "cut_bytes", r.CutBytes)
	}
	if err != nil {
		return fail(fmt.Errorf("node: recover WARC files: %w", err))
	}
	// Every finished WARC file has its CDXJ index beside it: those a crash
	// left without one (or Recover just finished) get it now, read from
	// the file; the writer's get theirs from its captures as it finishes
	// them (indexer). An index that fails is logged, not fatal: the WARC
	// file is whole, and the next Open indexes it.
	indexed, err := cdxj.IndexMissing(opts.FS, warcOpts.Dir)
	if len(indexed) > 0 {
		opts.Logger.Info("indexed WARC files that had no CDXJ index", "files", len(indexed))
	}
	if err != nil {
		opts.Logger.Warn("CDXJ index of WARC files", "err", err)
	}
	n.indexer = startIndexer(opts.FS, opts.Logger)
	opened = append(opened, n.indexer.close)
	warcOpts.OnFinish = n.indexer.finished
	if n.warc, err = warc.NewWriter(warcOpts); err != nil {
		return fail(err)
	}
	opened = append(opened, func() { n.warc.Close() }) // before the indexer's close: it hands the last file over
	if opts.Partitioned {
		if n.outbox, err = openOutbox(st.DB); err != nil {
			return fail(fmt.Errorf("node: %w", err))
		}
	}
	if err := errors.Join(n.loadJobs(), n.loadPolicies(), n.loadNodePaused()); err != nil {
		return fail(err)
	}
	return n, nil
}

// openOutbox opens a partitioned node's outbox; a variable so that a test
// can make it fail.
var openOutbox = outbox.Open

// Resumed reports whether the data directory held an earlier run's state.
func (n *Node) Resumed() bool { return n.state.Resumed }

// Start runs the dispatcher and the workers until Close.
func (n *Node) Start() {
	n.mu.Lock()
	if n.started {
		n.mu.Unlock()
		return
	}
	n.started = true
	n.mu.Unlock()
	now := n.opts.Now()
	for _, j := range n.Jobs() {
		j.Stats.Start(now)
	}
	go n.run()
	go n.recrawl.run()
}

// run is the dispatcher and the worker pool.
func (n *Node) run() {
	defer close(n.drained)
	work := make(chan *frontier.Lease)
	slots := make(chan struct{}, n.opts.Concurrency)
	var wg sync.WaitGroup
	for range n.opts.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for l := range work {
				n.handle(n.fetchCtx, l)
				<-slots
			}
		}()
	}
	n.dispatch(work, slots)
	close(work)
	wg.Wait()
}

// dispatch leases work for idle workers until the node stops.
func (n *Node) dispatch(work chan<- *frontier.Lease, slots chan struct{}) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var checked, gaveUp time.Time
	for {
		// Take a worker slot first, so that a lease is only made when a
		// worker can start on it.
		select {
		case slots <- struct{}{}:
		case <-n.stop:
			return
		}
		for {
			if n.failed() {
				<-slots
				<-n.stop // a failed node only waits to be closed
				return
			}
			// Items leave the frontier without a lease too (dropped,
			// held): see which jobs are done, when idle and every so
			// often while busy.
			if now := n.opts.Now(); now.Sub(checked) >= jobCheckEvery {
				checked = now
				n.checkJobs()
			}
			var (
				l    *frontier.Lease
				wait = time.Duration(-1) // paused: until poked
			)
			switch {
			case n.paused.Load():
			case n.fenced():
				wait = fenceRecheck
			default:
				l, wait = n.frontier.Lease()
			}
			if l != nil {
				work <- l
				break
			}
			n.checkJobs()
			if now := n.opts.Now(); !n.paused.Load() && !n.fenced() && now.Sub(gaveUp) >= giveUpEvery && (wait < 0 || wait > giveUpEvery) {
				gaveUp = now
				n.giveUpFar(wait)
			}
			if wait < 0 {
				wait = time.Hour
			} else if n.anyMaxWait() {
				// Look again for work to give up (giveUpFar) while waiting.
				wait = min(wait, giveUpEvery)
			}
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-n.frontier.Changed():
				timer.Stop() // Go 1.23 timers: no stale tick survives Stop
			case <-n.wake:
				timer.Stop()
			case <-n.stop:
				<-slots
				return
			}
		}
	}
}

// Close stops the node: no new lease is made, the fetches in flight get
// StopGrace to finish (and be archived and recorded), those still running
// then are cut off and their URLs stay queued. Jobs still running end for
// this run with job.ReasonSignal; their stored state stays running, so the
// next Open resumes them. Close closes the WARC file and the store.
func (n *Node) Close() error {
	n.stopOnce.Do(func() { close(n.stop) })
	n.mu.Lock()
	started := n.started
	n.started = true // a Start after Close does nothing
	n.mu.Unlock()
	if started {
		grace := time.NewTimer(n.opts.StopGrace)
		select {
		case <-grace.C:
			n.cancelFetches()
			<-n.drained
		case <-n.drained:
			grace.Stop()
		}
		<-n.recrawl.done
	}
	n.cancelFetches()
	n.fetcher.Close()
	n.keepTallies()
	err := n.warc.Close()
	n.indexer.close() // the last file's index, handed over by Close
	err = errors.Join(err, n.state.Close(), n.clog.close())
	for _, j := range n.Jobs() {
		j.End(job.Finished, job.ReasonSignal, nil)
	}
	if err != nil {
		return fmt.Errorf("node: close: %w", err)
	}
	return n.Err()
}

// keepTallies stores every job's tally once the workers are done: what
// they counted after their last completion (a request cut off by the
// stop) is kept too. Every completion is durable by then (a worker waits
// for its own), so no older tally can commit after these.
func (n *Node) keepTallies() {
	if n.failed() {
		return
	}
	b := n.db.NewBatch()
	for _, j := range n.Jobs() {
		if err := b.Set(store.JobTallyKey(j.ID), j.Stats.EncodeTotal()); err != nil {
			b.Close()
			n.opts.Logger.Warn("store job tallies at close", "err", err)
			return
		}
	}
	if err := n.db.Commit(b); err != nil {
		n.opts.Logger.Warn("store job tallies at close", "err", err)
	}
}

// Err is the error that stopped the node, if any.
func (n *Node) Err() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.fatal
}

func (n *Node) failed() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.fatal != nil
}

// fail stops the node on an error that every job shares (the WARC or the
// store failing): no new lease is made and every running job fails.
func (n *Node) fail(err error) {
	n.mu.Lock()
	first := n.fatal == nil
	if first {
		n.fatal = err
	}
	n.mu.Unlock()
	if !first {
		return
	}
	n.opts.Logger.Error("node stops", "err", err)
	for _, j := range n.Jobs() {
		if was, ok := j.End(job.Failed, job.ReasonError, err); ok && was == job.Running {
			n.running.Add(-1)
		}
	}
	n.poke()
}

// poke wakes the dispatcher (without blocking) to look at the node's and
// the jobs' states again.
func (n *Node) poke() {
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

// Jobs returns the jobs the node knows, by ID.
func (n *Node) Jobs() []*job.Job {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]*job.Job, 0, len(n.jobs))
	for _, j := range n.jobs {
		out = append(out, j)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].ID < out[b].ID })
	return out
}

// Job returns the job with id, or nil.
func (n *Node) Job(id job.ID) *job.Job {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.jobs[id]
}

// Progress returns a snapshot of job id's counters, with its queue counts
// from the frontier and the node's host counts. ok is false for an
// unknown job.
func (n *Node) Progress(id job.ID) (p job.Progress, ok bool) {
	j := n.Job(id)
	if j == nil {
		return p, false
	}
	p = j.Stats.Snapshot(n.opts.Now())
	p.Job = id
	js := n.frontier.Job(id)
	p.Queued, p.InFlight, p.Held, p.Dropped = js.Queued, js.InFlight, js.Held, js.Dropped
	fs := n.frontier.Stats()
	p.Hosts, p.HostsReady, p.HostsWaiting, p.HostsBackoff = fs.Hosts, fs.Ready, fs.Waiting, fs.Backoff
	if st, _ := j.State(); st == job.Running && js.Queued > 0 && js.InFlight == 0 {
		// A wait shorter than a second is a moment between fetches, not
		// worth a word.
		now := n.opts.Now()
		waiting := func(until time.Time, hosts int, why frontier.GapReason) *job.Waiting {
			if d := until.Sub(now); d >= time.Second {
				return &job.Waiting{Seconds: d.Seconds(), Until: until.UTC(), Hosts: hosts, Reason: why.String(), Why: why.Describe()}
			}
			return nil
		}
		// The frontier does not count hosts per job. The host this job
		// last had to put a URL back for holds one of its URLs, so it
		// says what the job waits for when other jobs share the node:
		// the node's soonest host may be theirs. Alone, the job owns
		// every host and the node's own wait is the job's.
		if hi, ok := n.frontier.Host(j.Stats.WaitHost()); ok && n.othersNotEnded(j) {
			p.Waiting = waiting(hi.NextAllowed, 1, hi.Reason)
		}
		if p.Waiting == nil {
			if w := n.frontier.WaitFor(); w.Idle {
				p.Waiting = waiting(w.Next, w.Hosts, w.Reason)
			}
		}
		if p.Waiting == nil {
			if hi, ok := n.frontier.Host(j.Stats.WaitHost()); ok {
				p.Waiting = waiting(hi.NextAllowed, 1, hi.Reason)
			}
		}
	}
	return p, true
}

// FrontierStats returns the frontier's counts: URLs queued and in flight,
// hosts by state. It does not walk the hosts (frontier.Stats).
func (n *Node) FrontierStats() frontier.Stats { return n.frontier.Stats() }

// FetchTimeout is the longest a fetch of the node takes.
func (n *Node) FetchTimeout() time.Duration { return n.opts.FetchTimeout }

// MinDelay is the node's minimum gap between two requests to one host.
func (n *Node) MinDelay() time.Duration { return n.opts.MinDelay }

// WARCFiles lists the WARC files the node has written in this run.
func (n *Node) WARCFiles() []string { return n.warc.Files() }

// UserAgent is the User-Agent the node sends.
func (n *Node) UserAgent() string { return n.opts.UserAgent }
