// Package frontier decides which URL is fetched next and when: a Mercator
// frontier with priority levels in front and one queue per host behind,
// ordered by a min-heap of each host's next allowed fetch time.
//
// It is pure crawl logic: time comes from Options.Now, queued URLs live in a
// Store, and it does no other I/O. A Frontier is safe for concurrent use.
//
// Invariants (checked by tests): a host never has more than MaxParallel
// leases out, an IP never more than IPMaxParallel; a host is never leased
// before its next allowed time; a URL is leased to one worker at a time; a
// lease not completed by its deadline is re-offered (at-least-once).
package frontier

import (
	"container/heap"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Item is one URL waiting in the frontier.
type Item struct {
	URL       string // canonical URL (urlnorm.Canonical)
	Host      string // politeness key (urlnorm.HostKey)
	Depth     int    // links followed from a seed; 0 for seeds
	Level     int    // priority level, 0 highest; clamped to Options.Levels-1
	Redirects int    // redirects followed to reach this URL
	Attempts  int    // earlier attempts that ended in a retryable failure
	ShapeRun  int    // consecutive links within one URL shape (scope.ShapeRun)
	Seq       uint64 // position in its host's queue; set by the frontier
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
	// LeaseTimeout is how long a worker holds a lease before it is
	// re-offered. Default 5m.
	LeaseTimeout time.Duration
	// Window is how many queued items per host and level are read into
	// memory at a time. Default 16.
	Window int
	// WindowBudget bounds the items held in all hosts' windows together;
	// past it a host reads one item at a time, so memory does not grow
	// with the queue when many hosts have been leased. Default 262144.
	WindowBudget int
	// Store holds the queues and host states; New restores the frontier
	// from it. Default: a new MemStore.
	Store Store
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
	if o.MaxParallel == 0 {
		o.MaxParallel = 1
	}
	if o.IPMaxParallel == 0 {
		o.IPMaxParallel = 2
	}
	if o.LeaseTimeout == 0 {
		o.LeaseTimeout = 5 * time.Minute
	}
	if o.Window == 0 {
		o.Window = 16
	}
	if o.WindowBudget == 0 {
		o.WindowBudget = 1 << 18
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
	if o.LeaseTimeout < 0 {
		bad("LeaseTimeout", o.LeaseTimeout, "negative")
	}
	if o.Window < 0 {
		bad("Window", o.Window, "negative")
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
	// DropHost discards the host's queue (robots.txt stays unavailable).
	DropHost bool
	// NotBefore, if not zero, is the earliest time the host may be
	// contacted again, whatever else the outcome says (a crash lost what
	// the host answered, so its gap is not known).
	NotBefore time.Time
}

// Errors returned by Complete.
var (
	ErrLeaseExpired = errors.New("frontier: lease expired before completion")
	ErrLeaseDone    = errors.New("frontier: lease already completed")
)

// Frontier is the crawl's to-do list. Create it with New.
type Frontier struct {
	opts Options

	mu       sync.Mutex
	clock    epochClock
	hosts    *hostTable
	ready    hostHeap // hosts with work, under their parallel cap, ordered by next allowed time
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
	changed  chan struct{}
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
		changed:  make(chan struct{}, 1),
	}
	f.ready.t = f.hosts
	now := f.opts.Now()
	f.clock = epochClock{epoch: now}
	err := f.opts.Store.Load(func(hs HostState) error {
		h := f.host(hs.Host)
		h.nextAllowed, h.backoff, h.crawlDelay = f.clock.mono(hs.NextAllowed), hs.Backoff, hs.CrawlDelay
		// A fetch may have been in flight when the last run stopped; its
		// start was never recorded. So no host is contacted sooner than one
		// full delay after start-up, whatever its stored clock says.
		h.nextAllowed = max(h.nextAllowed, f.clock.mono(now.Add(f.delay(h))))
		h.leased, h.nextSeq, h.dead = int32(hs.Leased), hs.NextSeq, hs.Dead
		for l, n := range hs.Queued {
			l = min(l, f.opts.Levels-1)
			h.total[l] += int32(n)
			h.unread[l] += int32(n)
			f.queued += n
		}
		f.schedule(h)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("frontier: restore: %w", err)
	}
	return f, nil
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
	return HostState{
		Host:        f.hosts.name(h),
		NextAllowed: f.clock.time(h.nextAllowed),
		Backoff:     h.backoff,
		CrawlDelay:  h.crawlDelay,
		Leased:      int(h.leased),
		NextSeq:     h.nextSeq,
		Queued:      queued,
		Dead:        h.dead,
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
	return h
}

// Add queues items (seeds) and returns a channel that yields nil once
// they are durable. The caller has already checked they are new; the
// frontier does not de-duplicate. Items of a host whose budget is spent or
// whose queue was dropped are discarded and counted in Stats.Dropped.
// attach travels with the change to the Store (Change.Attach).
func (f *Frontier) Add(attach any, items ...Item) <-chan error {
	f.mu.Lock()
	defer f.mu.Unlock()
	ch := &Change{Attach: attach}
	f.put(ch, items)
	f.signal()
	return f.opts.Store.Write(ch)
}

// put queues items into ch and the hosts' counts.
func (f *Frontier) put(ch *Change, items []Item) {
	for _, it := range items {
		it.Level = max(0, min(it.Level, f.opts.Levels-1))
		h := f.host(it.Host)
		if h.dead || f.overBudget(h) {
			f.dropped++
			continue
		}
		h.nextSeq++
		it.Seq = h.nextSeq
		h.total[it.Level]++
		h.unread[it.Level]++
		f.queued++
		ch.Put = append(ch.Put, it)
		f.schedule(h)
	}
}

func (f *Frontier) overBudget(h *hostState) bool {
	return f.opts.HostBudget > 0 && int(h.leased) >= f.opts.HostBudget
}

func (f *Frontier) pending(h *hostState) int {
	n := 0
	for l := range maxLevels {
		n += len(f.win(h, l)) + int(h.unread[l])
	}
	return n
}

// schedule puts h in the ready heap if it has work, room for another lease
// and is not parked; otherwise takes it out.
func (f *Frontier) schedule(h *hostState) {
	want := !h.dead && !h.parked && int(h.inFlight) < f.opts.MaxParallel && f.pending(h) > 0
	switch {
	case want && h.heapIdx < 0:
		heap.Push(&f.ready, h)
	case want:
		heap.Fix(&f.ready, int(h.heapIdx))
	case h.heapIdx >= 0:
		heap.Remove(&f.ready, int(h.heapIdx))
	}
}

// Lease hands out the next URL that may be fetched now. If none may, it
// returns nil and how long until one may (wait < 0: nothing is queued that
// could become ready by time alone; wait for Changed).
func (f *Frontier) Lease() (*Lease, time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.opts.Now()
	f.expire(now)
	for f.ready.Len() > 0 {
		h := f.ready.top()
		if h.nextAllowed > f.clock.mono(now) {
			return nil, f.wait(now)
		}
		if f.overBudget(h) {
			ch := &Change{}
			f.dropHost(h, ch)
			ch.Hosts = append(ch.Hosts, f.state(h))
			f.opts.Store.Write(ch) // durability of a drop is not waited for
			continue
		}
		if ip := f.ip(h); ip != "" && f.ipFlight[ip] >= f.opts.IPMaxParallel {
			f.park(h)
			continue
		}
		it, ok := f.take(h)
		if !ok {
			f.schedule(h)
			continue
		}
		return f.lease(h, it, now), 0
	}
	return nil, f.wait(now)
}

// wait is how long until the frontier may have something to lease.
func (f *Frontier) wait(now time.Time) time.Duration {
	w := time.Duration(-1)
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
	if f.opts.MaxParallel > 1 {
		// The next fetch may start one delay after this one, while this
		// one is still in flight; Complete pushes it later if need be.
		h.nextAllowed = f.clock.mono(now.Add(f.delay(h)))
	}
	f.leases = append(f.leases, l)
	f.schedule(h)
	return l
}

// take removes the next item of h, choosing the level by a biased round
// robin: level i gets weight 2^(Levels-1-i), so every level is served.
func (f *Frontier) take(h *hostState) (Item, bool) {
	L := f.opts.Levels
	total := uint64(1)<<L - 1
	slot := h.tick % total
	h.tick++
	want, span := 0, uint64(1)<<(L-1)
	for slot >= span && want < L-1 {
		slot -= span
		span >>= 1
		want++
	}
	for i := range L {
		l := (want + i) % L
		if len(f.win(h, l)) == 0 && h.unread[l] > 0 {
			f.refill(h, l)
		}
		if w := f.win(h, l); len(w) > 0 {
			it := w[0]
			w[0] = Item{}
			f.setWin(h, l, w[1:])
			f.queued--
			f.windowed--
			return it, true
		}
	}
	return Item{}, false
}

func (f *Frontier) refill(h *hostState, level int) {
	n := f.opts.Window
	if f.windowed >= f.opts.WindowBudget {
		n = 1
	}
	items, err := f.opts.Store.Read(f.hosts.name(h), level, h.readSeq[level], n)
	if err != nil || len(items) == 0 {
		// The store lost track; forget its count rather than spin.
		f.queued -= int(h.unread[level])
		h.unread[level] = 0
		return
	}
	h.unread[level] = max(0, h.unread[level]-int32(len(items)))
	h.readSeq[level] = items[len(items)-1].Seq
	f.setWin(h, level, append(f.win(h, level), items...))
	f.windowed += len(items)
}

func (f *Frontier) park(h *hostState) {
	h.parked = true
	ip := f.ip(h)
	f.ipParked[ip] = append(f.ipParked[ip], h)
	f.schedule(h)
}

func (f *Frontier) unparkIP(ip string) {
	for _, h := range f.ipParked[ip] {
		h.parked = false
		f.schedule(h)
	}
	delete(f.ipParked, ip)
}

// dropHost discards h's queue, in memory now and in the store with ch.
func (f *Frontier) dropHost(h *hostState, ch *Change) {
	n := 0
	for l := range maxLevels {
		k := len(f.win(h, l)) + int(h.unread[l])
		n += k
		f.queued -= k
		f.windowed -= len(f.win(h, l))
		h.unread[l] = 0
		h.total[l] = 0
	}
	f.freeWindows(h)
	f.dropped += n
	h.dead = true
	ch.Drop = append(ch.Drop, f.hosts.name(h))
	f.schedule(h)
}

// delay is the host's current gap between fetches.
func (f *Frontier) delay(h *hostState) time.Duration {
	return min(max(f.opts.MinDelay, h.crawlDelay, h.backoff), f.opts.MaxDelay)
}

// expire re-offers leases whose deadline has passed.
func (f *Frontier) expire(now time.Time) {
	n := 0
	for n < len(f.leases) && !f.leases[n].Deadline.After(now) {
		l := f.leases[n]
		f.release(l)
		l.host.leased-- // re-offered: it does not spend budget twice
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
	f.schedule(h)
}

func (f *Frontier) pushFront(h *hostState, it Item) {
	if h.dead {
		f.dropped++
		return
	}
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
	f.host(host).crawlDelay = d
}

// Complete ends a lease with its outcome, queues add (what the fetch
// discovered) and sets when the host may be contacted next: the gap
// max(MinDelay, Crawl-delay, 10 x response time, backoff) counts from now,
// the moment the fetch finished, so the gap the server sees between request
// starts is never shorter than the rule. 429, 503, time-outs and network
// failures double the host's backoff (up to MaxDelay) and a Retry-After is
// honoured (up to MaxRetryAfter); successes shrink the backoff by a quarter.
//
// The lease's item leaves the store (unless requeued), add enters it and
// the touched hosts' states are written, all in one Change that carries
// attach. The returned channel yields nil once that change is durable: only
// then is the completion acknowledged.
func (f *Frontier) Complete(l *Lease, o Outcome, attach any, add ...Item) (<-chan error, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if l.done {
		if l.Deadline.After(f.opts.Now()) {
			return nil, ErrLeaseDone
		}
		return nil, ErrLeaseExpired
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
		h.nextAllowed = max(h.nextAllowed, f.clock.mono(o.NotBefore))
	}
	if o.NotStarted || o.Requeue {
		h.leased-- // no page was fetched for this item, or it will be again
	}
	ch := &Change{Attach: attach, Hosts: []HostState{}}
	switch {
	case o.DropHost:
		if !h.dead {
			f.dropHost(h, ch)
		}
	case o.Requeue:
		f.pushFront(h, l.Item)
	default:
		ch.Del = append(ch.Del, l.Item)
		if !h.dead {
			h.total[l.Item.Level]--
		}
	}
	f.put(ch, add)
	ch.Hosts = append(ch.Hosts, f.state(h))
	f.schedule(h)
	f.signal()
	return f.opts.Store.Write(ch), nil
}

func (f *Frontier) politeness(h *hostState, o Outcome, now time.Time) {
	base := max(f.opts.MinDelay, h.crawlDelay, 10*o.ResponseTime)
	if o.Status == 429 || o.Status == 503 || o.Timeout || o.Failed {
		h.backoff = min(max(2*h.backoff, 2*base), f.opts.MaxDelay)
	} else if h.backoff > 0 {
		h.backoff = h.backoff * 3 / 4
		if h.backoff <= base {
			h.backoff = 0
		}
	}
	gap := min(max(base, h.backoff), max(f.opts.MaxDelay, base))
	next := f.clock.mono(now.Add(gap))
	if ra := min(o.RetryAfter, f.opts.MaxRetryAfter); ra > 0 {
		next = max(next, f.clock.mono(now.Add(ra)))
	}
	if f.opts.MaxParallel == 1 || next > h.nextAllowed {
		h.nextAllowed = next
	}
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
	Queued   int // items waiting
	InFlight int // leases out
	Hosts    int // hosts known
	Ready    int // hosts with work that may be leased now
	Waiting  int // hosts with work whose next allowed time is in the future
	Parked   int // hosts with work waiting for their IP's cap
	Backoff  int // hosts with a backoff above their base delay
	Dropped  int // items discarded (budget, dead hosts)
}

// Stats returns a snapshot.
func (f *Frontier) Stats() Stats {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.opts.Now()
	s := Stats{Queued: f.queued, InFlight: f.inFlight, Hosts: f.hosts.len(), Dropped: f.dropped}
	mnow := f.clock.mono(now)
	for _, id := range f.ready.ids {
		if f.hosts.at(id).nextAllowed > mnow {
			s.Waiting++
		} else {
			s.Ready++
		}
	}
	for _, hs := range f.ipParked {
		s.Parked += len(hs)
	}
	f.hosts.each(func(h *hostState) {
		if h.backoff > 0 {
			s.Backoff++
		}
	})
	return s
}

// Done reports whether nothing is in flight and no host has work that
// could ever be leased: the crawl is exhausted.
func (f *Frontier) Done() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.inFlight == 0 && f.ready.Len() == 0 && len(f.ipParked) == 0
}
