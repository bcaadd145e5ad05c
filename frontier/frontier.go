// Package frontier decides which URL is fetched next and when: a Mercator
// frontier with priority levels in front and one queue per host behind,
// ordered by a min-heap of each host's next allowed fetch time.
//
// It is pure crawl logic: time comes from Options.Now, queued URLs live in a
// Store, and it does no other I/O. A Frontier is safe for concurrent use;
// it has no goroutine of its own while no window is being read.
//
// Every item belongs to a job (Item.Job; the node numbers its jobs, 0 is
// "no job"). Politeness is the node's, not the job's: jobs share each
// host's queue and gap. The frontier counts each job's items as they move
// (Job, O(1)), per partition, and writes the counters with every change
// (JobState); a paused job's
// items are set aside as they reach the head of their host's queue, a
// cancelled job's are dropped there.
//
// Which URL goes next: behind, hosts wait in a min-heap of their next
// allowed fetch time; those due move to a second heap (runnable) that
// orders them by when they became due, less a head start for the work
// their queue holds (at most Options.MaxHeadStart): when fetch slots are
// scarcer than due hosts, a host with many pages keeps its polite rate
// instead of waiting behind every small host, and no host is passed over
// for longer than MaxHeadStart. In front, each host's items sit in
// priority levels (Item.Level, 0 first) served by a biased round robin:
// level i gets 2^(Levels-1-i) of every 2^Levels-1 of the host's leases,
// so the lowest level is never starved. A URL's level is set when it is
// queued (the node: job.Job.Level, seeds 0, then by depth).
//
// An operator's policy (SetHostPolicy) may give a host its own min delay
// and parallel cap, or pause it; it applies from the host's next lease.
//
// Invariants (checked by tests): a host never has more than MaxParallel
// (or its policy's cap) leases out, an IP never more than IPMaxParallel; a host is never leased
// before its next allowed time; a URL is leased to one worker at a time; a
// lease not completed by its deadline is re-offered (at-least-once); no
// lease is handed out for a job that is paused or cancelled at that moment;
// a job's counters agree with its items in the Store after every change.
//
// The items held in memory (windows) grow neither with the queue nor with
// the number of hosts: at most Options.WindowBudget plus WindowBudget/16
// spare ones, and items put back at a queue's head; the rest wait in the
// Store. (A host's own state is 184 B, whatever its queue.)
//
// Store I/O happens off the frontier's lock: Write (called under mu, in
// change order) does not wait for I/O; windows are read by at most
// Options.Refillers goroutines without mu (see startRefill), and held items
// by SetJobState without mu. Lease, Complete and Stats never wait on a read.
//
// Lock order: jobMu (job state transitions) → mu (everything else).
package frontier

import (
	"cmp"
	"container/heap"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/trawl-crawler/trawl/hostpolicy"
	"github.com/trawl-crawler/trawl/internal/store/partition"
)

// Item is one URL waiting in the frontier.
type Item struct {
	URL   string // canonical URL (urlnorm.Canonical)
	Host  string // politeness key (urlnorm.HostKey)
	Depth int    // links followed from a seed; 0 for seeds
	// Level is the priority level, 0 highest; clamped to Options.Levels-1.
	// It orders the host's own items (see the package comment); the node
	// sets it from the job (job.Job.Level: seeds 0, links by depth). A
	// source that knows better (a sitemap's URLs, a page that changes
	// often) queues the URL at a lower number.
	Level     int
	Redirects int    // redirects followed to reach this URL
	Attempts  int    // earlier attempts that ended in a retryable failure
	ShapeRun  int    // run value within its URL shape: 0, or 1 + barren pages in a row before it (scope.NextShapeRun)
	Via       string // the URL whose link or redirect led here; "" for seeds
	Job       uint32 // the job that queued it; 0: no job
	Seq       uint64 // position in its host's queue; set by the frontier
}

// JobMode is what the frontier does with a job's items.
type JobMode uint8

// The job modes. A job the frontier has not been told of is active.
const (
	// JobActive: its items are leased.
	JobActive JobMode = iota
	// JobPaused: its items are set aside (held) as they reach the head of
	// their host's queue, until ResumeJob.
	JobPaused
	// JobCancelled: its items are dropped as they reach the head of their
	// host's queue, and its held items are dropped.
	JobCancelled
)

func (m JobMode) String() string {
	switch m {
	case JobActive:
		return "active"
	case JobPaused:
		return "paused"
	case JobCancelled:
		return "cancelled"
	}
	return fmt.Sprintf("JobMode(%d)", uint8(m))
}

// JobStats counts one job's items.
type JobStats struct {
	Mode     JobMode
	Queued   int // waiting: in windows or unread in the store
	InFlight int // leased
	Held     int // set aside while the job was paused
	Dropped  int // discarded: cancelled, dead host, spent host budget
}

// Done reports that nothing of the job is queued or in flight. Held items
// do not count: a paused job whose items are all held is done in this
// sense; the node tells it from a finished one by its mode.
func (s JobStats) Done() bool { return s.Queued == 0 && s.InFlight == 0 }

// job is the frontier's record of one job. Its counts are totals over
// the partitions loaded (all, without Options.Partitioned): queued +
// inFlight is the sum of parts' stored, held and dropped of theirs.
type job struct {
	mode     JobMode
	queued   int
	inFlight int
	held     int
	dropped  int
	// parts holds the job's durable counters per partition (JobState),
	// those of partitions not loaded zero; nil until it has any.
	parts *[partition.Count]partCounts
}

// partCounts are a job's durable counters over one partition's items.
type partCounts struct {
	stored, held, dropped int
	touched               bool // in Frontier.touched
}

// Options configures a Frontier. A zero field takes the default named.
type Options struct {
	// Levels is the number of priority levels. Default 3.
	Levels int
	// MinDelay is the least gap between two fetches to one host. Default
	// 1s; negative means no minimum (the other rules still apply).
	MinDelay time.Duration
	// MaxDelay caps a host's delay as backoff grows it. Default 10m.
	MaxDelay time.Duration
	// MaxAdaptiveDelay caps the adaptive term of the gap, ten times the
	// last response time, so that one slow response cannot park a host for
	// long (Heritrix caps its own the same way). It does not cap MinDelay,
	// Crawl-delay or the backoff of 429, 503 and time-outs (MaxDelay does).
	// Default 30s; negative means no cap.
	MaxAdaptiveDelay time.Duration
	// MaxRetryAfter caps how long a Retry-After header can park a host.
	// Default 1h.
	MaxRetryAfter time.Duration
	// MaxParallel is the number of fetches a host may have in flight.
	// Default 1.
	MaxParallel int
	// IPMaxParallel is the number of fetches all hosts on one IP address
	// may have in flight together. Default 2.
	IPMaxParallel int
	// HostBudget is the number of URLs leased per host in this crawl;
	// what is queued past it is dropped. 0 means no budget.
	HostBudget int
	// DuplicateAllowance cuts the budget of a host whose pages are mostly
	// duplicates: once its completions that were duplicates (Outcome.
	// Duplicate) outnumber the others by more than this, the host has
	// spent its budget and what is queued for it is dropped. A host may
	// thus go on while at least half of what it serves is new content,
	// plus this slack. 0 means no cut.
	DuplicateAllowance int
	// OnDrop, if set, is told of every queued or added item the frontier
	// discards, and why (the crawl log's dropped lines); items of
	// cancelled jobs held aside are not reported one by one. It is called
	// with the frontier's lock held: it must be quick and must not call
	// the Frontier.
	OnDrop func(it Item, why DropReason)
	// MaxHeadStart bounds the head start a due host gets over other due
	// hosts for the work its queue holds (pending items times its gap):
	// when there are more hosts due than fetch slots, a host with a long
	// queue goes before hosts that became due up to this much earlier,
	// so that it keeps its polite rate (see Frontier.run). It is also
	// the most any host can be passed over that way. Default 1m;
	// negative means none (due hosts in the order they became due).
	MaxHeadStart time.Duration
	// FailLimit is how many fetches in a row may end without a response,
	// in the same way (all time-outs, or all network failures: Outcome.
	// Timeout, Outcome.Failed without a Status), before the host is given
	// up: by then backoff has slowed it to MaxDelay, and the host is
	// marked dead (DropFailing, its reason in HostInfo.DeadReason) and its
	// queue dropped. Any response, or a failure of the other way, starts
	// the count again, so a host that recovers is not punished; the count
	// is not stored, so a restart starts it again too. Default 20;
	// negative means never.
	FailLimit int
	// LeaseTimeout is how long a worker holds a lease before it is
	// re-offered. Default 5m.
	LeaseTimeout time.Duration
	// Window is how many queued items per host and level are read into
	// memory at a time. Default 16.
	Window int
	// WindowBudget bounds the items held in all hosts' windows together,
	// so that memory grows neither with the queue nor with the number of
	// hosts. A host reads a whole window while it fits in the budget; past
	// it, one item, while fewer than WindowBudget/16 (at least 1) such
	// spare items are held; otherwise it waits, out of the ready heap,
	// until a lease makes room. Spare items belong to hosts due now, which
	// the next leases take, so a budget held by hosts that are not due (or
	// that wait for another level's read) does not stall the others. Items
	// put back at the head of a queue (requeued, expired leases) come on
	// top. Default 262144.
	WindowBudget int
	// Refillers bounds the goroutines that read windows from the Store,
	// without the frontier's lock. Default 2.
	Refillers int
	// Store holds the queues and host states; New restores the frontier
	// from it. Default: a new MemStore.
	Store Store
	// Partitioned makes the frontier serve a set of partitions
	// (partition.Of of each host) that changes at run time: New restores
	// the job counters only, and no host; ServePartition loads one
	// partition's hosts from the Store and ReleasePartition drops them.
	// Items of a host whose partition is not served are refused
	// (NotServedError), and Stats counts the served partitions only.
	// False: every host is restored by New and every item accepted.
	Partitioned bool
	// Now is the clock. Default time.Now.
	Now func() time.Time
}

func (o Options) withDefaults() Options {
	if o.Levels == 0 {
		o.Levels = 3
	}
	switch {
	case o.MinDelay == 0:
		o.MinDelay = time.Second
	case o.MinDelay < 0:
		o.MinDelay = 0
	}
	if o.MaxDelay == 0 {
		o.MaxDelay = 10 * time.Minute
	}
	if o.MaxRetryAfter == 0 {
		o.MaxRetryAfter = time.Hour
	}
	switch {
	case o.MaxAdaptiveDelay == 0:
		o.MaxAdaptiveDelay = 30 * time.Second
	case o.MaxAdaptiveDelay < 0:
		o.MaxAdaptiveDelay = math.MaxInt64
	}
	if o.MaxParallel == 0 {
		o.MaxParallel = 1
	}
	if o.IPMaxParallel == 0 {
		o.IPMaxParallel = 2
	}
	if o.LeaseTimeout == 0 {
		o.LeaseTimeout = 5 * time.Minute
	}
	switch {
	case o.FailLimit == 0:
		o.FailLimit = 20
	case o.FailLimit < 0:
		o.FailLimit = math.MaxInt32
	}
	switch {
	case o.MaxHeadStart == 0:
		o.MaxHeadStart = time.Minute
	case o.MaxHeadStart < 0:
		o.MaxHeadStart = 0
	}
	if o.Window == 0 {
		o.Window = 16
	}
	if o.WindowBudget == 0 {
		o.WindowBudget = 1 << 18
	}
	if o.Refillers == 0 {
		o.Refillers = 2
	}
	if o.Store == nil {
		o.Store = &MemStore{}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Validate reports every field that is out of range.
func (o Options) Validate() error {
	var errs []error
	bad := func(field string, v any, why string) {
		errs = append(errs, fmt.Errorf("frontier: option %s = %v: %s", field, v, why))
	}
	if o.Levels < 0 || o.Levels > maxLevels {
		bad("Levels", o.Levels, fmt.Sprintf("want 1..%d", maxLevels))
	}
	if o.MaxDelay < 0 || (o.MaxDelay > 0 && o.MaxDelay < o.MinDelay) {
		bad("MaxDelay", o.MaxDelay, "negative or below MinDelay")
	}
	if o.MaxRetryAfter < 0 {
		bad("MaxRetryAfter", o.MaxRetryAfter, "negative")
	}
	if o.MaxParallel < 0 {
		bad("MaxParallel", o.MaxParallel, "negative")
	}
	if o.IPMaxParallel < 0 {
		bad("IPMaxParallel", o.IPMaxParallel, "negative")
	}
	if o.HostBudget < 0 {
		bad("HostBudget", o.HostBudget, "negative")
	}
	if o.DuplicateAllowance < 0 {
		bad("DuplicateAllowance", o.DuplicateAllowance, "negative")
	}
	if o.LeaseTimeout < 0 {
		bad("LeaseTimeout", o.LeaseTimeout, "negative")
	}
	if o.Window < 0 {
		bad("Window", o.Window, "negative")
	}
	if o.WindowBudget < 0 {
		bad("WindowBudget", o.WindowBudget, "negative")
	}
	if o.Refillers < 0 {
		bad("Refillers", o.Refillers, "negative")
	}
	return errors.Join(errs...)
}

// Lease is a URL handed to one worker. The worker must Complete it.
type Lease struct {
	Item     Item
	ID       uint64
	Start    time.Time // when it was leased
	Deadline time.Time // when it is re-offered if not completed

	host     *hostState
	prevNext mono   // host's next allowed time before this lease
	ip       string // IP charged for this lease ("" if none)
	done     bool
}

// Outcome is what became of a lease.
type Outcome struct {
	// Status is the HTTP status of the response, 0 if there was none.
	Status int
	// Failed reports a network failure (connect error, reset); Timeout a
	// time-out. Both back the host off like a 503.
	Failed, Timeout bool
	// ResponseTime is how long the fetch took; the next gap is at least
	// ten times this.
	ResponseTime time.Duration
	// RetryAfter is the server's Retry-After, 0 if none.
	RetryAfter time.Duration
	// NotStarted reports that no request was sent (robots disallowed, IP
	// cap, DNS failure): the host's gap is not charged.
	NotStarted bool
	// Requeue puts the item back at the head of its host's queue: the
	// slot was used for something else first (robots.txt), or the fetch is
	// to be retried.
	Requeue bool
	// Retry, with Requeue, puts the item back at the tail of its host's
	// queue instead (under a new Seq): a fetch that failed and is tried
	// again after the host's other URLs, so that one URL that times out
	// does not hold up the rest of its host.
	Retry bool
	// DropHost discards the host's queue (robots.txt stays unavailable):
	// the host is marked dead and its items are drained, a window at a
	// time, and counted dropped for their jobs. With Requeue the lease's
	// own item is dropped too; without, it is done.
	DropHost bool
	// Duplicate reports a page whose content was archived before (an
	// exact or near duplicate), for Options.DuplicateAllowance.
	Duplicate bool
	// Refetch reports a fetch of a URL fetched before (a recrawl): it
	// charges the host's gap but not its HostBudget, which counts distinct
	// pages, so that a continuous crawl can revisit a host for ever.
	Refetch bool
	// NotBefore, if not zero, is the earliest time the host may be
	// contacted again, whatever else the outcome says (a crash lost what
	// the host answered, so its gap is not known).
	NotBefore time.Time
	// NotBeforeWhy says why NotBefore was set (HostInfo.DelayReason, and
	// whether a one-shot crawl may give the wait up: GiveUp).
	NotBeforeWhy GapReason
	// Robots reports that the request was the host's robots.txt: a
	// Retry-After or a backoff it brings is told apart from a page's.
	Robots bool
}

// DropReason says why the frontier discarded an item.
type DropReason uint8

// The reasons an item is dropped.
const (
	DropCancelled  DropReason = iota + 1 // its job was cancelled
	DropBudget                           // its host spent Options.HostBudget
	DropDuplicates                       // its host's budget was cut: mostly duplicates (Options.DuplicateAllowance)
	DropHost                             // its host's queue was dropped (Outcome.DropHost)
	DropFailing                          // its host failed Options.FailLimit times in a row
	DropRetryAfter                       // given up: its host's Retry-After lies beyond its job's wait horizon (GiveUp)
	DropBackoff                          // given up: its host's backoff lies beyond its job's wait horizon (GiveUp)
	DropRobotsWait                       // given up: its host's robots.txt stays unavailable beyond its job's wait horizon (GiveUp)
)

func (r DropReason) String() string {
	switch r {
	case DropCancelled:
		return "cancelled"
	case DropBudget:
		return "budget"
	case DropDuplicates:
		return "duplicates"
	case DropHost:
		return "host-dropped"
	case DropFailing:
		return "failing"
	case DropRetryAfter:
		return "retry-after"
	case DropBackoff:
		return "backoff"
	case DropRobotsWait:
		return "robots-unavailable"
	}
	return "unknown"
}

// dropping reports a discarded item to Options.OnDrop.
func (f *Frontier) dropping(it Item, why DropReason) {
	if f.opts.OnDrop != nil {
		f.opts.OnDrop(it, why)
	}
}

// Errors returned by Complete.
var (
	ErrLeaseExpired = errors.New("frontier: lease expired before completion")
	ErrLeaseDone    = errors.New("frontier: lease already completed")
)

// Frontier is the crawl's to-do list. Create it with New.
type Frontier struct {
	opts Options

	mu    sync.Mutex
	clock epochClock
	hosts *hostTable
	ready hostHeap // hosts with work, under their parallel cap, ordered by next allowed time
	// runnable holds the hosts of ready found due by Lease, moved out of
	// ready, in the order they are leased (see run). A host leaves it when
	// leased, or when a change makes it not wanted, dead or not due at
	// runAt (schedule); it is never in both heaps.
	runnable runHeap
	runAt    mono     // the time Lease last moved due hosts to runnable
	due      dueCount // the ready heap's hosts, counted by whether they are due (for Stats)
	ipFlight map[string]int
	ipParked map[string][]*hostState // hosts waiting for their IP's cap
	ips      []string                // hostState.ip-1 → IP address
	ipIndex  map[string]int32        // IP address → hostState.ip
	windows  []*[maxLevels][]Item    // hostState.window-1 → the host's items in memory, per level, head first
	freeWins []int32                 // unused entries of windows
	leases   []*Lease                // in lease order; deadlines are ascending
	nextID   uint64
	queued   int // items waiting: in windows or unread in the store
	windowed int // items in windows
	inFlight int
	dropped  int
	// Refills (see startRefill).
	refillQ   []hostID // hosts waiting for a refiller, each once
	refilling int      // hosts marked refilling: queued or being read
	refillers int      // refiller goroutines running
	reading   int      // items being read: counted against WindowBudget
	spare     int      // hosts holding an item read past WindowBudget (hostState.spare)
	// Host counts kept as hosts change, for Stats.
	active     int // hosts with items queued or in flight (hostState.active)
	parkedN    int // entries of ipParked
	backingOff int // hosts with backoff > 0
	pausedN    int // hosts paused by their policy
	// policies holds the operator policies of the hosts that have one
	// (hostState.policy): few hosts, so a map rather than a field each.
	policies map[hostID]hostpolicy.Policy
	// sweeps holds the hosts being swept by GiveUp (hostState.sweeping),
	// and giveUpWait the jobs' wait horizons it was called with.
	sweeps     map[hostID]sweep
	giveUpWait func(job uint32) time.Duration
	jobs       map[uint32]*job
	touched    []jobPart // job counters changed since the last write; empty while mu is free
	changed    chan struct{}
	// parts holds the state of each partition loaded, indexed by
	// partition.ID (nil: not loaded); nil unless Options.Partitioned.
	parts []*partState
	// keptPolicies holds the policies of hosts not loaded
	// (Options.Partitioned; see SetHostPolicy).
	keptPolicies map[string]hostpolicy.Policy

	// jobMu serialises job state transitions (SetJobState), which read
	// the store without mu.
	jobMu sync.Mutex
}

// heldBatch is how many held items SetJobState moves per change.
const heldBatch = 512

// New returns a Frontier holding what opts.Store holds: empty for a new
// store, the queues and host clocks of an earlier run otherwise. Items
// that were leased when that run stopped are offered again.
func New(opts Options) (*Frontier, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	f := &Frontier{
		opts:     opts.withDefaults(),
		hosts:    newHostTable(),
		ipFlight: make(map[string]int),
		ipParked: make(map[string][]*hostState),
		ipIndex:  make(map[string]int32),
		jobs:     make(map[uint32]*job),
		changed:  make(chan struct{}, 1),
	}
	f.ready.t = f.hosts
	f.runnable.t = f.hosts
	f.due.later.t = f.hosts
	now := f.opts.Now()
	f.clock = epochClock{epoch: now}
	hosts := func(hs HostState) error {
		h := f.restoreHost(hs)
		// A fetch may have been in flight when the last run stopped; its
		// start was never recorded. So no host is contacted sooner than one
		// full delay after start-up, whatever its stored clock says; the
		// stored reason stays while its time is the later.
		if start := f.clock.mono(now.Add(f.delay(h))); start > h.nextAllowed {
			h.nextAllowed, h.gapWhy = start, GapNone // the start-up gap
			if h.backoff > max(f.minDelay(h), h.crawlDelay) {
				h.gapWhy = GapBackoff
			}
		}
		h.lastDone = f.clock.mono(now)
		f.schedule(h)
		return nil
	}
	jobs := func(js JobState) error {
		f.loadCounts(js)
		return nil
	}
	if f.opts.Partitioned {
		hosts, jobs = nil, nil // ServePartition loads them
		f.parts = make([]*partState, partition.Count)
	}
	err := f.opts.Store.Load(hosts, jobs)
	if err != nil {
		return nil, fmt.Errorf("frontier: restore: %w", err)
	}
	return f, nil
}

// restoreHost makes the host of hs, as stored, unscheduled: its caller
// sets its next allowed time and last request.
func (f *Frontier) restoreHost(hs HostState) *hostState {
	h := f.host(hs.Host)
	h.nextAllowed, h.crawlDelay = f.clock.mono(hs.NextAllowed), hs.CrawlDelay
	f.setBackoff(h, hs.Backoff)
	h.gapWhy = hs.Why
	if h.gapWhy == GapNone && hs.Backoff > 0 {
		h.gapWhy = GapBackoff // written without a reason
	}
	h.leased, h.dups, h.nextSeq, h.dead = int32(hs.Leased), int32(hs.Duplicates), hs.NextSeq, hs.Dead
	if h.dead {
		// A state written without the reason (an older store): a
		// budget spent shows again, anything else as the queue dropped.
		h.deadWhy = cmp.Or(hs.DeadReason, f.budgetSpent(h), DropHost)
	}
	for l, n := range hs.Queued {
		l = min(l, f.opts.Levels-1)
		h.total[l] += int32(n)
		h.unread[l] += int32(n)
		f.queued += n
	}
	return h
}

// maxLevels is the most priority levels (Options.Levels): per-host arrays
// of this size keep a host's memory small and fixed.
const maxLevels = 4

// win is h's window at level l.
func (f *Frontier) win(h *hostState, l int) []Item {
	if h.window == 0 {
		return nil
	}
	return f.windows[h.window-1][l]
}

// setWin sets h's window at level l, taking a set of windows when needed
// and giving it back when all are empty.
func (f *Frontier) setWin(h *hostState, l int, w []Item) {
	if len(w) == 0 {
		w = nil
	}
	if h.window == 0 {
		if w == nil {
			return
		}
		if n := len(f.freeWins); n > 0 {
			h.window = f.freeWins[n-1]
			f.freeWins = f.freeWins[:n-1]
		} else {
			f.windows = append(f.windows, new([maxLevels][]Item))
			h.window = int32(len(f.windows))
		}
	}
	ws := f.windows[h.window-1]
	ws[l] = w
	for _, x := range ws {
		if len(x) > 0 {
			return
		}
	}
	f.freeWindows(h)
}

// freeWindows gives h's set of windows back.
func (f *Frontier) freeWindows(h *hostState) {
	if h.window == 0 {
		return
	}
	*f.windows[h.window-1] = [maxLevels][]Item{}
	f.freeWins = append(f.freeWins, h.window)
	h.window = 0
}

// ip is the IP address h resolved to, "" if not known.
func (f *Frontier) ip(h *hostState) string {
	if h.ip == 0 {
		return ""
	}
	return f.ips[h.ip-1]
}

// setIP records the IP address h resolved to.
func (f *Frontier) setIP(h *hostState, ip string) {
	i, ok := f.ipIndex[ip]
	if !ok {
		f.ips = append(f.ips, ip)
		i = int32(len(f.ips))
		f.ipIndex[ip] = i
	}
	h.ip = i
}

// state is h's durable state.
func (f *Frontier) state(h *hostState) HostState {
	queued := make([]int, maxLevels)
	for l, n := range h.total {
		queued[l] = int(n)
	}
	var deadWhy DropReason
	if h.dead {
		deadWhy = h.deadWhy
	}
	return HostState{
		Host:        f.hosts.name(h),
		NextAllowed: f.clock.time(h.nextAllowed),
		Backoff:     h.backoff,
		CrawlDelay:  h.crawlDelay,
		Leased:      int(h.leased),
		Duplicates:  int(h.dups),
		NextSeq:     h.nextSeq,
		Queued:      queued,
		Dead:        h.dead,
		DeadReason:  deadWhy,
		Why:         h.gapWhy,
	}
}

// Changed is signalled (without blocking) whenever work may have become
// available: items added, a lease completed or a host unparked. Waiters
// select on it together with the wait Lease returned.
func (f *Frontier) Changed() <-chan struct{} { return f.changed }

func (f *Frontier) signal() {
	select {
	case f.changed <- struct{}{}:
	default:
	}
}

// job returns the record of job id, making it (active) if new.
func (f *Frontier) job(id uint32) *job {
	j := f.jobs[id]
	if j == nil {
		j = &job{}
		f.jobs[id] = j
	}
	return j
}

// counts returns job id's (record j's) durable counters in partition p,
// about to change: the next write carries them.
func (f *Frontier) counts(id uint32, j *job, p partition.ID) *partCounts {
	if j.parts == nil {
		j.parts = new([partition.Count]partCounts)
	}
	c := &j.parts[p]
	if !c.touched {
		c.touched = true
		f.touched = append(f.touched, jobPart{id, p})
	}
	return c
}

// loadCounts adds the stored counters js of a partition being loaded (New,
// ServePartition), whose counters in memory are zero, to its job's.
// Leased items are in the store: they are offered again, so Stored counts
// as queued.
func (f *Frontier) loadCounts(js JobState) {
	j := f.job(js.Job)
	if j.parts == nil {
		j.parts = new([partition.Count]partCounts)
	}
	j.parts[js.Part] = partCounts{stored: js.Stored, held: js.Held, dropped: js.Dropped}
	j.queued += js.Stored
	j.held += js.Held
	j.dropped += js.Dropped
	f.dropped += js.Dropped
}

// unloadCounts takes the counters of partition p, being forgotten (no
// lease of it out, none of its counters unwritten), out of its jobs'.
func (f *Frontier) unloadCounts(p partition.ID) {
	for _, j := range f.jobs {
		if j.parts == nil {
			continue
		}
		c := j.parts[p]
		j.queued -= c.stored
		j.held -= c.held
		j.dropped -= c.dropped
		f.dropped -= c.dropped
		j.parts[p] = partCounts{}
	}
}

// write hands ch to the store with the counters touched since the last
// write. Every change of a job's durable counters is followed by a write
// before mu is released, so the counters a change carries agree with the
// store as it stands after that change.
func (f *Frontier) write(ch *Change) <-chan error {
	for _, r := range f.touched {
		c := &f.jobs[r.job].parts[r.part]
		c.touched = false
		ch.Jobs = append(ch.Jobs, JobState{Job: r.job, Part: r.part, Stored: c.stored, Held: c.held, Dropped: c.dropped})
	}
	f.touched = f.touched[:0]
	return f.opts.Store.Write(ch)
}

// Job returns the counts of job id's items. It takes constant time.
func (f *Frontier) Job(id uint32) JobStats {
	f.mu.Lock()
	defer f.mu.Unlock()
	j := f.jobs[id]
	if j == nil {
		return JobStats{}
	}
	return JobStats{Mode: j.mode, Queued: j.queued, InFlight: j.inFlight, Held: j.held, Dropped: j.dropped}
}

// JobDone reports that nothing of job id is queued or in flight
// (JobStats.Done).
func (f *Frontier) JobDone(id uint32) bool { return f.Job(id).Done() }

// SetJobState sets what the frontier does with job id's items (in memory:
// the node keeps its jobs' definitions and sets their modes at start-up,
// before leasing). Making a job active puts its held items back at the
// tail of their hosts' queues (ResumeJob); cancelling it drops them. Those
// items are read from the store in batches without the frontier's lock,
// each batch moved by one change; SetJobState returns once the last is
// durable, or with the first failure. Pausing takes effect for each item
// as it reaches the head of its host's queue; so does cancelling, except
// that items queued for a cancelled job are dropped at once.
func (f *Frontier) SetJobState(id uint32, m JobMode) error {
	if m > JobCancelled {
		return fmt.Errorf("frontier: set job %d: unknown mode %d", id, m)
	}
	f.jobMu.Lock()
	defer f.jobMu.Unlock()
	f.mu.Lock()
	j := f.job(id)
	j.mode = m
	var barrier <-chan error
	if j.held > 0 && m != JobPaused {
		// Once this empty change is applied, so is every change that
		// held an item of the job; and no more will be held.
		barrier = f.opts.Store.Write(&Change{})
	}
	f.signal()
	f.mu.Unlock()
	if barrier == nil {
		return nil
	}
	if err := <-barrier; err != nil {
		return fmt.Errorf("frontier: set job %d %s: %w", id, m, err)
	}
	if err := f.moveHeld(id, m == JobCancelled); err != nil {
		return fmt.Errorf("frontier: set job %d %s: %w", id, m, err)
	}
	return nil
}

// UnholdServed applies job id's mode to its held items that lie in the
// partitions served now: puts them back at the tail of their hosts' queues
// if the job is active, drops them if it is cancelled. A resume or a
// cancellation moves only the items of the partitions served then (see
// moveHeld), so a partition served later, with items held while the job
// was paused, calls this for each job not paused (node.ServePartition).
// It reads all the job's held items from the store; without Options.
// Partitioned, or for a paused job, it does nothing.
func (f *Frontier) UnholdServed(id uint32) error {
	if f.parts == nil {
		return nil
	}
	f.jobMu.Lock()
	defer f.jobMu.Unlock()
	f.mu.Lock()
	mode := f.job(id).mode
	f.mu.Unlock()
	if mode == JobPaused {
		return nil
	}
	if err := f.moveHeld(id, mode == JobCancelled); err != nil {
		return fmt.Errorf("frontier: unhold job %d: %w", id, err)
	}
	return nil
}

// ResumeJob makes job id active and puts its held items back at the tail
// of their hosts' queues: SetJobState(id, JobActive).
func (f *Frontier) ResumeJob(id uint32) error { return f.SetJobState(id, JobActive) }

// moveHeld streams job id's held items from the store, without f.mu, and
// moves each batch under f.mu in one change: back into their hosts' queues
// (new Seqs at the tail), or dropped. f.jobMu is held.
func (f *Frontier) moveHeld(id uint32, drop bool) error {
	var (
		after   *Item
		last    <-chan error
		skipped int
	)
	for {
		items, err := f.opts.Store.ReadHeld(id, after, heldBatch)
		if err != nil {
			return err
		}
		if len(items) == 0 {
			break
		}
		after = &items[len(items)-1]
		f.mu.Lock()
		if f.parts != nil {
			// Items of partitions not served stay held (see
			// ReleasePartition).
			n := len(items)
			items = slices.DeleteFunc(slices.Clone(items), func(it Item) bool { return !f.accepts(it.Host) })
			skipped += n - len(items)
		}
		j := f.job(id)
		ch := &Change{Unhold: items}
		j.held = max(0, j.held-len(items))
		for i := range items {
			c := f.counts(id, j, partition.Of(items[i].Host))
			c.held = max(0, c.held-1)
			if drop {
				c.dropped++
			}
		}
		if drop {
			j.dropped += len(items)
			f.dropped += len(items)
		} else {
			f.put(ch, slices.Clone(items))
		}
		last = f.write(ch)
		f.signal()
		f.mu.Unlock()
	}
	f.mu.Lock()
	if j := f.job(id); j.held != 0 && skipped == 0 {
		// The store holds fewer than counted; forget the rest rather
		// than wait for it. (Every held item read was of a partition
		// loaded: the rest are counted in loaded partitions only.)
		j.held = 0
		for p := range j.parts {
			if j.parts[p].held != 0 {
				f.counts(id, j, partition.ID(p)).held = 0
			}
		}
		last = f.write(&Change{})
	}
	f.mu.Unlock()
	if last != nil {
		return <-last
	}
	return nil
}

// host returns the state of the host called name, making it if new.
func (f *Frontier) host(name string) *hostState {
	if h := f.hosts.find(name); h != nil {
		return h
	}
	h := f.hosts.add(name)
	h.nextAllowed = noTime
	if f.parts != nil {
		// Every caller has checked that the partition is loaded.
		ps := f.parts[h.part]
		ps.hosts = append(ps.hosts, h.id)
		// A host first met while its partition is loaded or released
		// (a completing lease's link, accepted while stopping) is fenced
		// like the partition's others: nothing of it is leased, and the
		// release need not wait for it.
		h.fenced = ps.phase != partServing
		if p, ok := f.keptPolicies[name]; ok {
			delete(f.keptPolicies, name)
			f.setPolicy(h, p)
		}
	}
	return h
}

// Add queues items (seeds) and returns a channel that yields nil once
// they are durable. The caller has already checked they are new; the
// frontier does not de-duplicate. Items of a host whose budget is spent or
// whose queue was dropped are discarded and counted in Stats.Dropped.
// attach travels with the change to the Store (Change.Attach).
//
// With Options.Partitioned, if any item's host is in a partition not
// served (or being loaded, or whose release has drained its leases),
// nothing is queued and the channel yields a *NotServedError naming the
// first such host (errors.Is ErrNotServed); attach is not written.
func (f *Frontier) Add(attach any, items ...Item) <-chan error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.parts != nil {
		if err := f.refuseUnserved(items); err != nil {
			done := make(chan error, 1)
			done <- err
			close(done)
			return done
		}
	}
	ch := &Change{Attach: attach}
	f.put(ch, items)
	f.signal()
	return f.write(ch)
}

// put queues items into ch and the hosts' and jobs' counts. Items of a
// dead host, a host over its budget or a cancelled job are dropped.
func (f *Frontier) put(ch *Change, items []Item) {
	for _, it := range items {
		it.Level = max(0, min(it.Level, f.opts.Levels-1))
		h := f.host(it.Host)
		j := f.job(it.Job)
		c := f.counts(it.Job, j, h.part)
		if why := f.putDrop(h, j); why != 0 {
			f.dropped++
			j.dropped++
			c.dropped++
			f.dropping(it, why)
			continue
		}
		c.stored++
		h.nextSeq++
		it.Seq = h.nextSeq
		h.total[it.Level]++
		if l := it.Level; h.unread[l] == 0 && len(f.win(h, l)) < f.opts.Window && f.windowed+f.reading < f.opts.WindowBudget {
			// Nothing of this level waits in the store: the item joins
			// the window at once, and no read is needed for it.
			f.setWin(h, l, append(f.win(h, l), it))
			h.readSeq[l] = it.Seq
			f.windowed++
		} else {
			h.unread[l]++
		}
		f.queued++
		j.queued++
		ch.Put = append(ch.Put, it)
		f.schedule(h)
	}
}

func (f *Frontier) overBudget(h *hostState) bool { return f.budgetSpent(h) != 0 }

// budgetSpent says why h may lease no more: DropBudget, DropDuplicates,
// or 0 if it may.
func (f *Frontier) budgetSpent(h *hostState) DropReason {
	if f.opts.HostBudget > 0 && int(h.leased) >= f.opts.HostBudget {
		return DropBudget
	}
	// leased counts every page fetched (and the ones in flight), the
	// duplicates among them too.
	if f.opts.DuplicateAllowance > 0 && h.dups-(h.leased-h.dups) > int32(f.opts.DuplicateAllowance) {
		return DropDuplicates
	}
	return 0
}

func (f *Frontier) pending(h *hostState) int {
	n := 0
	for l := range maxLevels {
		n += len(f.win(h, l)) + int(h.unread[l])
	}
	return n
}

// schedule puts h in the ready heap if it has work and is dead (to be
// drained), or has work, room for another lease and is not parked;
// otherwise takes it out.
//
// Every change to a host's queue or leases is followed by schedule, so it
// also keeps the count of active hosts.
func (f *Frontier) schedule(h *hostState) {
	pending := f.pending(h)
	if active := pending > 0 || h.inFlight > 0; active != h.active {
		h.active = active
		if active {
			f.active++
		} else {
			f.active--
		}
	}
	want := pending > 0 && !h.refilling && !h.fenced && (h.draining() || !h.parked && !h.paused && int(h.inFlight) < f.maxParallel(h))
	if h.runIdx >= 0 {
		if want && !h.draining() && h.nextAllowed <= f.runAt {
			return // still due: it keeps its place
		}
		heap.Remove(&f.runnable, int(h.runIdx))
	}
	switch {
	case want && h.heapIdx < 0:
		heap.Push(&f.ready, h)
	case want:
		heap.Fix(&f.ready, int(h.heapIdx))
	case h.heapIdx >= 0:
		heap.Remove(&f.ready, int(h.heapIdx))
	}
	f.due.set(h)
}

// Lease hands out the next URL that may be fetched now. If none may, it
// returns nil and how long until one may (wait < 0: nothing is queued that
// could become ready by time alone; wait for Changed).
func (f *Frontier) Lease() (*Lease, time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.opts.Now()
	f.expire(now)
	// ch gathers what is met on the way: dead hosts' items drained, items
	// of paused jobs held, of cancelled jobs dropped. Its durability is
	// not waited for.
	ch := &Change{}
	defer func() {
		if len(ch.Del) > 0 || len(ch.Hold) > 0 || len(ch.Hosts) > 0 || len(f.touched) > 0 {
			f.write(ch)
		}
	}()
	f.runAt = f.clock.mono(now)
	for {
		// Dead hosts, and hosts swept by GiveUp, sort first in ready:
		// drain them. Then every host due
		// now moves to runnable, which orders them (see run).
		for f.ready.Len() > 0 {
			h := f.ready.top()
			if h.dead {
				f.drain(h, ch)
				continue
			}
			if h.sweeping {
				f.sweepHost(h, ch)
				continue
			}
			if h.nextAllowed > f.runAt {
				break
			}
			heap.Pop(&f.ready)
			f.due.set(h)
			f.run(h)
		}
		if f.runnable.Len() == 0 {
			return nil, f.wait(now)
		}
		h := f.runnable.top()
		if h.nextAllowed > f.runAt {
			// The clock went back since h was found due: back to ready.
			f.schedule(h)
			continue
		}
		if why := f.budgetSpent(h); why != 0 {
			f.kill(h, ch, why)
			ch.Hosts = append(ch.Hosts, f.state(h))
			continue
		}
		if ip := f.ip(h); ip != "" && f.ipFlight[ip] >= f.opts.IPMaxParallel {
			f.park(h)
			continue
		}
		it, ok := f.takeActive(h, ch)
		if !ok {
			f.schedule(h)
			continue
		}
		return f.lease(h, it, now), 0
	}
}

// run puts due host h (out of ready) in runnable. Hosts there are leased
// in order of runKey: the time h became due (runAt for a host never
// contacted), less a head start for the work its queue holds, its
// pending items times its gap (over its parallel cap), at most
// MaxHeadStart. While fetch slots are scarcer than due hosts, a host
// with a long queue, the crawl's critical path, so goes before hosts
// that became due up to MaxHeadStart before it and keeps its polite
// rate; no host waits behind one that became due more than MaxHeadStart
// after it, so none is starved.
func (f *Frontier) run(h *hostState) {
	base := h.nextAllowed
	if base == noTime {
		base = f.runAt
	}
	head := f.opts.MaxHeadStart
	if d := f.delay(h) / time.Duration(f.maxParallel(h)); d <= 0 {
		head = 0
	} else if p := time.Duration(f.pending(h)); p < head/d {
		head = p * d
	}
	h.runKey = base - mono(head)
	heap.Push(&f.runnable, h)
}

// putDrop says why an item of job j added for host h is dropped at once,
// or 0 if it is queued.
func (f *Frontier) putDrop(h *hostState, j *job) DropReason {
	switch {
	case h.dead:
		return h.deadWhy
	case j.mode == JobCancelled:
		return DropCancelled
	}
	return f.budgetSpent(h)
}

// takeActive takes h's next item of an active job. Items of paused jobs
// met on the way are held, of cancelled jobs dropped, both in ch; none of
// them charges the host's gap.
func (f *Frontier) takeActive(h *hostState, ch *Change) (Item, bool) {
	held := false
	defer func() {
		if held {
			// Load finds a host's next Seq from its queue and its state:
			// a held item's Seq must stay taken.
			ch.Hosts = append(ch.Hosts, f.state(h))
		}
	}()
	for {
		it, ok := f.take(h)
		if !ok {
			return it, false
		}
		j := f.job(it.Job)
		if j.mode == JobActive {
			j.queued--
			j.inFlight++
			return it, true
		}
		c := f.counts(it.Job, j, h.part)
		c.stored--
		if j.mode == JobPaused {
			ch.Hold = append(ch.Hold, it)
			j.held++
			c.held++
			held = true
		} else {
			ch.Del = append(ch.Del, it)
			j.dropped++
			c.dropped++
			f.dropped++
			f.dropping(it, DropCancelled)
		}
		j.queued--
		h.total[it.Level]--
	}
}

// drain deletes the items in dead host h's windows, counted dropped for
// their jobs, and has its next window read (install drains it in turn).
func (f *Frontier) drain(h *hostState, ch *Change) {
	for l := range maxLevels {
		w := f.win(h, l)
		for _, it := range w {
			j := f.job(it.Job)
			j.queued--
			j.dropped++
			c := f.counts(it.Job, j, h.part)
			c.stored--
			c.dropped++
			ch.Del = append(ch.Del, it)
			f.dropping(it, h.deadWhy)
		}
		f.dropped += len(w)
		f.queued -= len(w)
		f.windowed -= len(w)
		h.total[l] -= int32(len(w))
	}
	f.freeWindows(h)
	f.unspare(h)
	f.kick()
	f.schedule(h)
	if h.refilling || h.fenced {
		return
	}
	for l := range maxLevels {
		if h.unread[l] > 0 {
			f.startRefill(h, l)
			break
		}
	}
}

// wait is how long until the frontier may have something to lease.
func (f *Frontier) wait(now time.Time) time.Duration {
	w := time.Duration(-1)
	if f.runnable.Len() > 0 {
		return 0
	}
	if f.ready.Len() > 0 {
		w = max(0, time.Duration(f.ready.top().nextAllowed-f.clock.mono(now)))
	}
	if len(f.leases) > 0 {
		d := max(0, f.leases[0].Deadline.Sub(now))
		if w < 0 || d < w {
			w = d
		}
	}
	return w
}

func (f *Frontier) lease(h *hostState, it Item, now time.Time) *Lease {
	f.nextID++
	l := &Lease{
		Item:     it,
		ID:       f.nextID,
		Start:    now,
		Deadline: now.Add(f.opts.LeaseTimeout),
		host:     h,
		prevNext: h.nextAllowed,
		ip:       f.ip(h),
	}
	h.inFlight++
	h.leased++
	f.inFlight++
	if l.ip != "" {
		f.ipFlight[l.ip]++
	}
	if f.maxParallel(h) > 1 {
		// The next fetch may start one delay after this one, while this
		// one is still in flight; Complete pushes it later if need be.
		h.nextAllowed = f.clock.mono(now.Add(f.delay(h)))
	}
	f.leases = append(f.leases, l)
	f.schedule(h)
	return l
}

// take removes the next item of h, choosing the level by a biased round
// robin: level i gets weight 2^(Levels-1-i), so every level is served. If
// the level to serve has items only in the store, take starts a refill of
// it and reports false with h out of the heap until the window is read
// (the round robin does not move on: the same level is served then).
func (f *Frontier) take(h *hostState) (Item, bool) {
	L := f.opts.Levels
	total := uint64(1)<<L - 1
	slot := h.tick % total
	want, span := 0, uint64(1)<<(L-1)
	for slot >= span && want < L-1 {
		slot -= span
		span >>= 1
		want++
	}
	for i := range L {
		l := (want + i) % L
		if w := f.win(h, l); len(w) > 0 {
			it := w[0]
			f.setWin(h, l, shift(w))
			f.queued--
			f.windowed--
			h.tick++
			f.unspare(h)
			f.kick()
			return it, true
		}
		if h.unread[l] > 0 {
			f.startRefill(h, l)
			return Item{}, false
		}
	}
	return Item{}, false
}

// shift removes w's head. The rest moves down, rather than w being
// resliced past its head (which kept the consumed slots alive until the
// window emptied), so cap(w) is its array's size: appends reuse the room,
// and once the window fills no more than half of its array it moves to an
// array of its size. A window drained from the front so holds at most
// about twice its items' slots (Item is 88 B).
func shift(w []Item) []Item {
	n := copy(w, w[1:])
	w[n] = Item{}
	w = w[:n]
	if n > 0 && n <= cap(w)/2 {
		w = slices.Clone(w)
	}
	return w
}

// Window refills. No store I/O happens under f.mu: a host whose window at
// the level to serve ran dry (take), or a dead host being drained (drain),
// is marked refilling, taken out of the ready heap and queued in
// f.refillQ (at most once: the mark). Refiller goroutines, at most
// Options.Refillers, take hosts from the queue's head under f.mu, read
// their windows without f.mu (Store.Read), and install them under f.mu:
// the window is appended, the host is put back in the heap (a dead host's
// items are dropped at once and its next window queued) and Changed is
// signalled. While a host is refilling, only install changes its readSeq
// and unread at the level read; new items go to unread, requeued ones to
// the window's head, so the read's items still follow the window. Done
// reports false while refills are pending.
//
// How much a host reads is readSize's: a whole window while it fits in
// WindowBudget with the items in windows and being read; past that, one
// item while fewer than spareMax hosts hold such a spare item
// (hostState.spare, cleared by the host's next take); past that, nothing:
// the queue's head waits and the refillers end. A running refiller looks
// again after each read; take and drain, which make room, start one
// (kick) once the head can read. Only hosts due now start a refill (take
// is called by Lease for the heap's due top), so a spare item is taken by
// the next leases, and the head waits no longer than the spare items'
// hosts take to be leased: whatever holds the budget, no host holds up the
// others for good. A dead host reads a whole window whatever the budget:
// its items are dropped as soon as they are read.

// spareMax is how many hosts may hold an item read past WindowBudget.
func (f *Frontier) spareMax() int { return max(1, f.opts.WindowBudget/16) }

// readSize is how many items h may read now, and whether the read is a
// spare one (past WindowBudget); 0 means none until room is made.
func (f *Frontier) readSize(h *hostState) (n int, spare bool) {
	if h.draining() {
		return f.opts.Window, false
	}
	if full := min(f.opts.Window, f.opts.WindowBudget); f.windowed+f.reading+full <= f.opts.WindowBudget {
		return full, false
	}
	if f.spare < f.spareMax() {
		return 1, true
	}
	return 0, false
}

// startRefill marks h refilling at level and queues it for a refiller.
func (f *Frontier) startRefill(h *hostState, level int) {
	h.refilling = true
	h.refillLevel = uint8(level)
	f.refilling++
	f.refillQ = append(f.refillQ, h.id)
	f.schedule(h)
	f.kick()
}

// kick starts a refiller if the refill queue's head may read now and
// fewer than Options.Refillers run. It is called wherever a read may have
// become possible outside a refiller: a host queued, items taken out of
// windows.
func (f *Frontier) kick() {
	if len(f.refillQ) == 0 || f.refillers >= f.opts.Refillers {
		return
	}
	if n, _ := f.readSize(f.hosts.at(f.refillQ[0])); n == 0 {
		return
	}
	f.refillers++
	go f.refiller()
}

// refiller reads windows until f.refillQ is empty or its head must wait
// for room (readSize).
func (f *Frontier) refiller() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for len(f.refillQ) > 0 {
		h := f.hosts.at(f.refillQ[0])
		n, spare := f.readSize(h)
		if n == 0 {
			break
		}
		f.refillQ = f.refillQ[1:]
		if len(f.refillQ) == 0 {
			f.refillQ = f.refillQ[:0:0]
		}
		if spare && !h.spare {
			h.spare = true
			f.spare++
		}
		l := int(h.refillLevel)
		f.reading += n
		name, after := f.hosts.name(h), h.readSeq[l]
		f.mu.Unlock()
		items, err := f.opts.Store.Read(name, l, after, n)
		f.mu.Lock()
		f.reading -= n
		f.install(h, l, items, err)
	}
	f.refillers--
}

// install puts items, read from the store after h.readSeq[level], into h's
// window and puts h back in the heap.
func (f *Frontier) install(h *hostState, level int, items []Item, err error) {
	h.refilling = false
	f.refilling--
	if h.fenced {
		f.unbusy(h)
	}
	if err != nil || len(items) == 0 {
		// The store lost track; forget its count rather than spin. (The
		// jobs of the items forgotten are not known: their counts keep
		// them until a restart.)
		f.queued -= int(h.unread[level])
		h.unread[level] = 0
		f.unspare(h)
	} else {
		h.unread[level] = max(0, h.unread[level]-int32(len(items)))
		h.readSeq[level] = items[len(items)-1].Seq
		f.setWin(h, level, append(f.win(h, level), items...))
		f.windowed += len(items)
	}
	if h.draining() {
		ch := &Change{}
		if h.dead {
			f.drain(h, ch)
		} else {
			f.sweepHost(h, ch)
		}
		if len(ch.Del) > 0 || len(ch.Put) > 0 || len(f.touched) > 0 {
			f.write(ch)
		}
	}
	f.schedule(h)
	f.signal()
}

// unspare clears h's spare mark (a take, or its window is gone).
func (f *Frontier) unspare(h *hostState) {
	if h.spare {
		h.spare = false
		f.spare--
	}
}

func (f *Frontier) park(h *hostState) {
	h.parked = true
	ip := f.ip(h)
	f.ipParked[ip] = append(f.ipParked[ip], h)
	f.parkedN++
	f.schedule(h)
}

func (f *Frontier) unparkIP(ip string) {
	for _, h := range f.ipParked[ip] {
		h.parked = false
		f.schedule(h)
	}
	f.parkedN -= len(f.ipParked[ip])
	delete(f.ipParked, ip)
}

// kill marks h dead and drains its queue into ch, a window at a time (the
// refillers go on; a dead host that has items in memory again, requeued,
// sorts first in the ready heap and Lease drains it); later items are
// dropped. The host's queue is not deleted at once, since which jobs its
// unread items belong to is known only once they are read.
func (f *Frontier) kill(h *hostState, ch *Change, why DropReason) {
	h.dead, h.deadWhy = true, why
	f.drain(h, ch)
}

// delay is the host's current gap between fetches. MaxDelay caps what
// Crawl-delay and backoff reach, not an operator's own min delay.
func (f *Frontier) delay(h *hostState) time.Duration {
	md := f.minDelay(h)
	return min(max(md, h.crawlDelay, h.backoff), max(f.opts.MaxDelay, md))
}

// expire re-offers leases whose deadline has passed.
func (f *Frontier) expire(now time.Time) {
	n := 0
	for n < len(f.leases) && !f.leases[n].Deadline.After(now) {
		l := f.leases[n]
		f.release(l)
		l.host.leased-- // re-offered: it does not spend budget twice
		j := f.job(l.Item.Job)
		j.inFlight--
		j.queued++
		f.pushFront(l.host, l.Item)
		n++
	}
	if n > 0 {
		clear(f.leases[:n])
		f.leases = f.leases[n:]
	}
}

// release undoes a lease's in-flight accounting.
func (f *Frontier) release(l *Lease) {
	l.done = true
	h := l.host
	h.inFlight--
	f.inFlight--
	if l.ip != "" {
		f.ipFlight[l.ip]--
		if f.ipFlight[l.ip] <= 0 {
			delete(f.ipFlight, l.ip)
		}
		f.unparkIP(l.ip)
	}
	if h.fenced {
		f.unbusy(h)
	}
	f.schedule(h)
}

// pushFront puts it back at the head of h's queue (a dead host drains it
// with the rest).
func (f *Frontier) pushFront(h *hostState, it Item) {
	l := it.Level
	f.setWin(h, l, append([]Item{it}, f.win(h, l)...))
	f.queued++
	f.windowed++
	f.schedule(h)
}

// SetIP records the IP address a host resolved to, for the IP-level cap.
// It reports whether lease l (of that host) may go ahead: false means the
// IP is at its cap and the caller should Complete l with Requeue and
// NotStarted.
func (f *Frontier) SetIP(l *Lease, ip string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if l.done && f.parts != nil {
		return false // its host may have been released (and its slot reused)
	}
	h := l.host
	f.setIP(h, ip)
	if l.done || l.ip == ip {
		return l.ip == ip
	}
	if l.ip != "" {
		f.ipFlight[l.ip]--
		if f.ipFlight[l.ip] <= 0 {
			delete(f.ipFlight, l.ip)
		}
		f.unparkIP(l.ip)
	}
	l.ip = ""
	if f.ipFlight[ip] >= f.opts.IPMaxParallel {
		return false
	}
	l.ip = ip
	f.ipFlight[ip]++
	return true
}

// SetCrawlDelay records a host's robots.txt Crawl-delay.
func (f *Frontier) SetCrawlDelay(host string, d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.parts != nil && f.hosts.find(host) == nil && !f.accepts(host) {
		return // not served: the owner's stored state has its own
	}
	f.host(host).crawlDelay = d
}

// Complete ends a lease with its outcome, queues add (what the fetch
// discovered) and sets when the host may be contacted next: the gap
// max(MinDelay, Crawl-delay, min(10 x response time, MaxAdaptiveDelay),
// backoff) counts from now,
// the moment the fetch finished, so the gap the server sees between request
// starts is never shorter than the rule. 429, 503, time-outs and network
// failures double the host's backoff (up to MaxDelay) and a Retry-After is
// honoured (up to MaxRetryAfter); successes halve the backoff.
//
// The lease's item leaves the store (unless requeued), add enters it and
// the touched hosts' states are written, all in one Change that carries
// attach. The returned channel yields nil once that change is durable: only
// then is the completion acknowledged.
//
// With Options.Partitioned, if an item of add is of a host that Add would
// refuse, Complete changes nothing and returns a *NotServedError: the
// lease stays out, to be completed again once the caller has sent those
// items to their partition's owner (Serves tells them apart).
func (f *Frontier) Complete(l *Lease, o Outcome, attach any, add ...Item) (<-chan error, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if l.done {
		if l.Deadline.After(f.opts.Now()) {
			return nil, ErrLeaseDone
		}
		return nil, ErrLeaseExpired
	}
	if f.parts != nil {
		if err := f.refuseUnserved(add); err != nil {
			return nil, err
		}
	}
	f.removeLease(l)
	now := f.opts.Now()
	h := l.host
	f.release(l)
	if o.NotStarted {
		// No request went out: the host's clock is as it was.
		h.nextAllowed = l.prevNext
	} else {
		f.politeness(h, o, now)
	}
	if !o.NotBefore.IsZero() {
		if nb := f.clock.mono(o.NotBefore); nb >= h.nextAllowed {
			h.nextAllowed = nb
			if o.NotBeforeWhy != GapNone {
				h.gapWhy = o.NotBeforeWhy
			}
		}
	}
	// Put h in its place in the heap before any other host moves in it
	// (put below): the heap's operations assume every other entry is.
	f.schedule(h)
	if o.NotStarted || o.Requeue || o.Refetch {
		h.leased-- // no new page was fetched for this item, or it will be again
	} else if o.Duplicate {
		h.dups++
	}
	ch := &Change{Attach: attach, Hosts: []HostState{}}
	j := f.job(l.Item.Job)
	j.inFlight--
	var retry []Item
	switch {
	case o.Requeue && !o.DropHost && !o.Retry:
		j.queued++
		f.pushFront(h, l.Item)
	default:
		if o.Requeue && !o.DropHost {
			retry = append(retry, l.Item) // queued again below, at the tail
		}
		ch.Del = append(ch.Del, l.Item)
		h.total[l.Item.Level]--
		c := f.counts(l.Item.Job, j, h.part)
		c.stored--
		if o.DropHost && o.Requeue {
			j.dropped++
			c.dropped++
			f.dropped++
			f.dropping(l.Item, DropHost)
		}
	}
	if o.DropHost && !h.dead {
		f.kill(h, ch, DropHost)
	}
	if !o.NotStarted && f.failed(h, o) && !h.dead {
		f.kill(h, ch, DropFailing)
	}
	f.put(ch, add)
	f.put(ch, retry)
	ch.Hosts = append(ch.Hosts, f.state(h))
	f.schedule(h)
	f.signal()
	return f.write(ch), nil
}

// failed counts a fetch of h that ended without a response, and reports
// whether h has now failed Options.FailLimit times in a row the same way.
// A response, or a failure of the other way, starts the count again.
func (f *Frontier) failed(h *hostState, o Outcome) bool {
	way := failNone
	switch {
	case o.Timeout:
		way = failTimeout
	case o.Failed && o.Status == 0:
		way = failNetwork
	}
	if way == failNone || way != h.failWay {
		h.fails = 0
	}
	h.failWay = way
	if way != failNone {
		h.fails++
	}
	return int(h.fails) >= f.opts.FailLimit
}

func (f *Frontier) politeness(h *hostState, o Outcome, now time.Time) {
	adaptive := f.opts.MaxAdaptiveDelay
	if o.ResponseTime < adaptive/10 {
		adaptive = 10 * o.ResponseTime
	}
	md := f.minDelay(h)
	base := max(md, h.crawlDelay, adaptive)
	h.gapWhy = GapMinDelay
	if h.policy && f.policies[h.id].HasMinDelay {
		h.gapWhy = GapPolicy
	}
	switch {
	case base == md:
	case base == h.crawlDelay:
		h.gapWhy = GapCrawlDelay
	default:
		h.gapWhy = GapAdaptive
	}
	if o.Status == 429 || o.Status == 503 || o.Timeout || o.Failed {
		f.setBackoff(h, min(max(2*h.backoff, 2*base), f.opts.MaxDelay))
		h.strikes = min(h.strikes, 254) + 1
	} else if h.strikes = 0; h.backoff > 0 {
		b := h.backoff / 2
		if b <= base {
			b = 0
		}
		f.setBackoff(h, b)
	}
	gap := min(max(base, h.backoff), max(f.opts.MaxDelay, base))
	if gap > base {
		h.gapWhy = GapBackoff
		if o.Robots {
			h.gapWhy = GapRobots
		}
	}
	next := f.clock.mono(now.Add(gap))
	if ra := min(o.RetryAfter, f.opts.MaxRetryAfter); ra > 0 && f.clock.mono(now.Add(ra)) > next {
		next = f.clock.mono(now.Add(ra))
		h.gapWhy = GapRetryAfter
		if o.Robots {
			h.gapWhy = GapRobotsRetryAfter
		}
	}
	h.lastDone = f.clock.mono(now)
	if f.maxParallel(h) == 1 || next > h.nextAllowed {
		h.nextAllowed = next
	}
}

// setBackoff sets h's backoff, counting the hosts in backoff.
func (f *Frontier) setBackoff(h *hostState, d time.Duration) {
	switch {
	case h.backoff <= 0 && d > 0:
		f.backingOff++
	case h.backoff > 0 && d <= 0:
		f.backingOff--
	}
	h.backoff = d
}

func (f *Frontier) removeLease(l *Lease) {
	for i, x := range f.leases {
		if x == l {
			copy(f.leases[i:], f.leases[i+1:])
			f.leases[len(f.leases)-1] = nil
			f.leases = f.leases[:len(f.leases)-1]
			return
		}
	}
}

// Stats is a snapshot of the frontier's size.
type Stats struct {
	Queued    int // items waiting (Options.Partitioned: of the partitions loaded)
	InFlight  int // leases out
	Hosts     int // hosts known (Options.Partitioned: of the partitions loaded)
	Active    int // hosts with items queued or in flight
	Ready     int // hosts with work that may be leased now
	Waiting   int // hosts with work whose next allowed time is in the future
	Parked    int // hosts with work waiting for their IP's cap
	Backoff   int // hosts with a backoff above their base delay
	Paused    int // hosts paused by an operator's policy (with work or not)
	Refilling int // hosts whose next window is being read from the store, or waits for room in Options.WindowBudget
	Dropped   int // items discarded (budget, dead hosts, cancelled jobs), over all jobs and runs
}

// Stats returns a snapshot. It does not walk the hosts: the counts are
// kept as they change, and Ready and Waiting split the ready heap's hosts
// by a count kept beside it (dueCount), in O(log n) per host that came
// due since the last call. If the clock went back since, the ready heap's
// due entries are walked instead: at most 2 x (Ready + dead hosts being
// drained) + 1 entries.
func (f *Frontier) Stats() Stats {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.statsLocked()
}

func (f *Frontier) statsLocked() Stats {
	s := Stats{
		Queued:    f.queued,
		InFlight:  f.inFlight,
		Hosts:     f.hosts.len(),
		Active:    f.active,
		Parked:    f.parkedN,
		Backoff:   f.backingOff,
		Paused:    f.pausedN,
		Refilling: f.refilling,
		Dropped:   f.dropped,
	}
	now := f.clock.mono(f.opts.Now())
	due, dead, ok := f.due.at(now)
	if !ok {
		due, dead = f.ready.due(now)
	}
	s.Ready = due - dead + f.runnable.Len()
	s.Waiting = f.ready.Len() - due
	return s
}

// Done reports whether nothing is in flight, no window is being read and
// no host has work that could ever be leased: the crawl is exhausted.
func (f *Frontier) Done() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.inFlight != 0 || f.ready.Len() != 0 || f.runnable.Len() != 0 || len(f.ipParked) != 0 || f.refilling != 0 {
		return false
	}
	for id := range f.policies { // a paused host's work waits for its resumption
		if h := f.hosts.at(id); h.paused && f.pending(h) > 0 {
			return false
		}
	}
	return true
}
