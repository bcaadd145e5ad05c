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
// Store. (A host's own state is 184 B, whatever its queue, and its heap
// entry 16 B.)
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
	"fmt"
	"sync"
	"time"

	"github.com/trawl-crawler/trawl/hostpolicy"
)

// The Frontier itself: its state, New (restored from the Store), the
// host table's entries (host), queueing (Add, put), Changed, and the
// snapshot counts (Stats, Done). The rest lives beside it: options.go,
// jobs.go (job accounting), lease.go (leasing), windows.go and refill.go
// (items in memory), politeness.go (gaps, policies, IP caps), drops.go
// (budgets, dead hosts), giveup.go (liveness), partition.go (partitions
// served), hosts.go (host states and heaps), hostinfo.go, gapreason.go,
// hostqueue.go and store.go (the Store interface, MemStore).

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
	Redirects int // redirects followed to reach this URL
	Attempts  int // earlier attempts that ended in a retryable failure
	ShapeRun  int // run value within its URL shape: 0, or 1 + barren pages in a row before it (scope.NextShapeRun)
	// Requisite is 0 for a page; n > 0 for a resource a page embeds, n
	// references away from it (a page's image or stylesheet 1, a font that
	// stylesheet loads 2): fetched to archive it, not followed for links.
	Requisite int
	Via       string // the URL whose link or redirect led here; "" for seeds
	Job       uint32 // the job that queued it; 0: no job
	Seq       uint64 // position in its host's queue; set by the frontier
}

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
	bulkMin  int      // the fewest due hosts moveDue moves at once (bulkMove; tests change it)
	due      dueCount // the ready heap's hosts, counted by whether they are due (for Stats)
	ipFlight map[string]int
	ipParked map[string][]*hostState // hosts waiting for their IP's cap
	ips      []string                // hostState.ip-1 → IP address
	ipIndex  map[string]int32        // IP address → hostState.ip
	windows  []*[maxLevels][]Item    // hostState.window-1 → the host's items in memory, per level, head first
	freeWins []int32                 // unused entries of windows
	// leases holds the leases out in lease order (deadlines ascending),
	// and leasesDone completed ones among them not yet taken out (see
	// removeLease): the first is always out.
	leases     []*Lease
	leasesDone int
	nextID     uint64
	queued     int // items waiting: in windows or unread in the store
	windowed   int // items in windows
	inFlight   int
	dropped    int
	// Refills (see startRefill).
	refillQ   []hostID // hosts waiting for a refiller, each once
	refilling int      // hosts marked refilling: queued or being read
	refillers int      // refiller goroutines running
	reading   int      // items being read: counted against WindowBudget
	spare     int      // hosts holding an item read past WindowBudget (hostState.spare)
	starving  bool     // a Lease found nothing to hand out since the last lease: spare reads may go (readSize)
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
	// Partition (nil: not loaded); nil unless Options.Partitioned.
	parts []*partState
	// keptPolicies holds the policies of hosts not loaded
	// (Options.Partitioned; see SetHostPolicy).
	keptPolicies map[string]hostpolicy.Policy

	// jobMu serialises job state transitions (SetJobState), which read
	// the store without mu.
	jobMu sync.Mutex
}

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
		bulkMin:  bulkMove,
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
		f.parts = make([]*partState, partCount)
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

// state is h's durable state.
func (f *Frontier) state(h *hostState) HostState {
	return f.stateIn(h, make([]int, maxLevels))
}

// stateIn is state with its counts per level in queued, of maxLevels.
func (f *Frontier) stateIn(h *hostState, queued []int) HostState {
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
		// A host of a taken partition is held like those its store
		// held, however it arrives: the dead owner may have had it in
		// flight without a record of it here.
		if ps.hold != noTime {
			ps.holdHost(h, f.clock.mono(f.opts.Now()))
		}
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
	ch := &Change{Attach: attach, Put: make([]Item, 0, len(items))}
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
