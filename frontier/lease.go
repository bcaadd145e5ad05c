package frontier

import (
	"container/heap"
	"errors"
	"slices"
	"time"
)

// Leasing: which host goes next (schedule keeps the ready heap, run orders
// the due hosts in the runnable heap), handing its next item out (Lease),
// and taking the lease back: Complete with its outcome, or expire once its
// deadline has passed.

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

// Errors returned by Complete.
var (
	ErrLeaseExpired = errors.New("frontier: lease expired before completion")
	ErrLeaseDone    = errors.New("frontier: lease already completed")
)

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
		f.ready.fix(h)
	case h.heapIdx >= 0:
		heap.Remove(&f.ready, int(h.heapIdx))
	}
	f.due.set(h)
}

// Lease hands out the next URL that may be fetched now. If none may, it
// returns nil and how long until one may (wait < 0: nothing is queued that
// could become ready by time alone; wait for Changed).
func (f *Frontier) Lease() (*Lease, time.Duration) {
	// Allocated before the lock is taken, like Complete's change.
	l := new(Lease)
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.opts.Now()
	f.expire(now)
	// ch gathers what is met on the way: dead hosts' items drained, items
	// of paused jobs held, of cancelled jobs dropped. Its durability is
	// not waited for. It is copied to the heap only if written: most
	// leases meet nothing.
	var ch Change
	defer func() {
		if len(ch.Del) > 0 || len(ch.Hold) > 0 || len(ch.Hosts) > 0 || len(f.touched) > 0 {
			w := ch
			f.write(&w)
		}
	}()
	f.runAt = f.clock.mono(now)
	bulk := false // moveDue tried
	for skipped := 0; ; skipped++ {
		if skipped == maxSkips {
			// Hosts passed over (mostly windows to read after a
			// restart): give the lock up, and the caller comes back.
			f.signal()
			return nil, 0
		}
		// Dead hosts, and hosts swept by GiveUp, sort first in ready:
		// drain them. Then every host due
		// now moves to runnable, which orders them (see run).
		for f.ready.Len() > 0 {
			h := f.ready.top()
			if h.dead {
				f.drain(h, &ch)
				continue
			}
			if h.sweeping {
				f.sweepHost(h, &ch)
				continue
			}
			if h.nextAllowed > f.runAt {
				break
			}
			if !bulk {
				bulk = true
				if f.moveDue() {
					continue
				}
			}
			heap.Pop(&f.ready)
			f.due.set(h)
			f.run(h)
			heap.Push(&f.runnable, h)
		}
		if f.runnable.Len() == 0 {
			if len(f.refillQ) > 0 && f.reading == 0 {
				// Nothing to hand out, nothing being read, and hosts
				// wait for their windows: let them read past the budget
				// (readSize).
				f.starving = true
				f.kick()
			}
			return nil, f.wait(now)
		}
		h := f.runnable.top()
		if h.nextAllowed > f.runAt {
			// The clock went back since h was found due: back to ready.
			f.schedule(h)
			continue
		}
		if why := f.budgetSpent(h); why != 0 {
			f.kill(h, &ch, why)
			ch.Hosts = append(ch.Hosts, f.state(h))
			continue
		}
		if ip := f.ip(h); ip != "" && f.ipFlight[ip] >= f.opts.IPMaxParallel {
			f.park(h)
			continue
		}
		it, ok := f.takeActive(h, &ch)
		if !ok {
			f.schedule(h)
			continue
		}
		f.lease(l, h, it, now)
		return l, 0
	}
}

// maxSkips bounds the hosts one Lease passes over without leasing (a
// host whose window must be read first, parked, killed): Lease then
// returns nil with no wait, and Changed is signalled. After a restart no
// host has a window, and the first Lease queued a read for every due
// host under the frontier's lock (100,000 hosts: tens of ms, on top of
// moving them to runnable), while the refillers, waiting for the lock to
// take the first of them, read nothing.
const maxSkips = 64

// run sets the runKey of due host h, out of ready, before it is put in
// runnable. Hosts there are leased
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
}

// bulkMove is the fewest due hosts moveDue moves at once.
const bulkMove = 256

// moveDue moves every host of ready that is due at f.runAt and not
// draining to runnable, with its runKey (run), and reports whether it
// did. It does so only when at least f.bulkMin hosts and a sixteenth of
// ready are due: then rebuilding the two heaps, O(n), costs less than
// popping and pushing each host, O(log n) sifts each, every sift
// writing two host states (after a restart every host is due at once:
// 100,000 hosts took about 130 ms under the frontier's lock, 20 ms in
// bulk). The heaps
// order their hosts totally (hostTable.less), so runnable hands them out
// in the same order either way.
func (f *Frontier) moveDue() bool {
	es := f.ready.es
	// The due entries form a subtree at the root (hostHeap.due): a
	// child's key is never before its parent's.
	var buf [2 * bulkMove]int32
	stack, due := buf[:1:bulkMove], buf[bulkMove:bulkMove]
	stack[0] = 0
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if es[i].key > f.runAt {
			continue
		}
		if es[i].key != noTime || !f.hosts.at(es[i].id).draining() {
			due = append(due, i)
		}
		for _, c := range [2]int32{2*i + 1, 2*i + 2} {
			if int(c) < len(es) {
				stack = append(stack, c)
			}
		}
	}
	if len(due) < f.bulkMin || 16*len(due) < len(es) {
		return false
	}
	moved := make([]hostID, len(due))
	for k, i := range due {
		moved[k] = es[i].id
		f.hosts.at(es[i].id).heapIdx = -1
	}
	f.ready.removeMoved()
	f.due.removeMany(moved)
	// Pushed one by one into a runnable heap of many more, or appended
	// and the heap rebuilt.
	rebuild := 4*len(moved) >= f.runnable.Len()
	f.runnable.es = slices.Grow(f.runnable.es, len(moved))
	for _, id := range moved {
		h := f.hosts.at(id)
		f.run(h)
		if !rebuild {
			heap.Push(&f.runnable, h)
			continue
		}
		h.runIdx = int32(len(f.runnable.es))
		f.runnable.es = append(f.runnable.es, f.hosts.entry(h, h.runKey))
	}
	if rebuild {
		heap.Init(&f.runnable)
	}
	return true
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

// lease makes l the lease of it, h's next item.
func (f *Frontier) lease(l *Lease, h *hostState, it Item, now time.Time) {
	f.nextID++
	*l = Lease{
		Item:     it,
		ID:       f.nextID,
		Start:    now,
		Deadline: now.Add(f.opts.LeaseTimeout),
		host:     h,
		prevNext: h.nextAllowed,
		ip:       f.ip(h),
	}
	f.starving = false
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
}

// expire re-offers leases whose deadline has passed.
func (f *Frontier) expire(now time.Time) {
	n := 0
	for n < len(f.leases) && !f.leases[n].Deadline.After(now) {
		l := f.leases[n]
		n++
		if l.done {
			f.leasesDone-- // completed, not yet taken out (removeLease)
			continue
		}
		f.release(l)
		l.host.leased-- // re-offered: it does not spend budget twice
		j := f.job(l.Item.Job)
		j.inFlight--
		j.queued++
		f.pushFront(l.host, l.Item)
	}
	if n > 0 {
		f.dropLeases(n)
	}
}

// dropLeases takes the first n leases out of f.leases, and the completed
// ones that follow them, so that the first lease left is out.
func (f *Frontier) dropLeases(n int) {
	for n < len(f.leases) && f.leases[n].done {
		n++
		f.leasesDone--
	}
	clear(f.leases[:n])
	f.leases = f.leases[n:]
	if len(f.leases) == 0 {
		f.leases = f.leases[:0:0]
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
	// The change is allocated before the lock is taken: every worker
	// waits while mu is held, and an allocation may assist the collector.
	c := new(completion)
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
	now := f.opts.Now()
	h := l.host
	f.release(l)
	f.removeLease(l)
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
	ch := &c.ch
	ch.Attach, ch.Del, ch.Hosts, ch.Jobs = attach, c.del[:0], c.hosts[:0], c.jobs[:0]
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
	ch.Hosts = append(ch.Hosts, f.stateIn(h, c.queued[:]))
	f.schedule(h)
	f.signal()
	return f.write(ch), nil
}

// completion is the Change of a Complete with room for what most
// completions write (the lease's item deleted, its host's state, the
// counters of its job in the host's partition) in one allocation, made
// under the frontier's lock, instead of five.
type completion struct {
	ch     Change
	del    [1]Item
	hosts  [1]HostState
	queued [maxLevels]int
	jobs   [1]JobState
}

// removeLease takes l, which is marked done, out of f.leases, in O(1)
// amortised: a scan for it, under the frontier's lock, took as long as
// the leases out. Leases end mostly in the order they were made, so the
// first lease is taken out at once, with the completed ones behind it;
// one completed behind a lease still out stays in f.leases, counted in
// f.leasesDone, until the leases before it end or until completed ones
// are half of f.leases, which are then compacted. So f.leases is at most
// twice the leases out, its first lease is always out, and its deadlines
// stay ascending.
func (f *Frontier) removeLease(l *Lease) {
	if len(f.leases) > 0 && f.leases[0] == l {
		f.dropLeases(1)
		return
	}
	f.leasesDone++
	if 2*f.leasesDone <= len(f.leases) {
		return
	}
	out := f.leases[:0]
	for _, x := range f.leases {
		if !x.done {
			out = append(out, x)
		}
	}
	clear(f.leases[len(out):])
	f.leases = out
	f.leasesDone = 0
}
