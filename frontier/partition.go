package frontier

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/trawl-crawler/trawl/hostpolicy"
	"github.com/trawl-crawler/trawl/internal/store/partition"
)

// Partitions (Options.Partitioned). A fleet spreads the crawl's hosts over
// partitions (partition.Of), each served by one node at a time; the
// frontier of a node serves the partitions it owns now, which change at
// run time:
//
//   - ServePartition loads a partition's hosts from the Store (their
//     queues stay there, read a window at a time as ever) and makes them
//     leasable, none before a hold time.
//   - ReleasePartition stops leasing them at once, waits for their leases
//     and window reads to end and for every change touching the partition
//     to be durable, and forgets them: their state stays in the Store, for
//     the partition's checkpoint.
//
// An item (Add, or Complete's discovered links) is accepted while its
// host's partition is served, or stopped and not yet drained (the leases
// still out complete with their links); otherwise it is refused with a
// *NotServedError and nothing changes: the caller routes it to the
// partition's owner. Stats and Hosts cover the partitions loaded, and so
// do job counters (Job): they are kept per job and partition (JobState),
// loaded with the partition's hosts and dropped with them, so that Job and
// JobDone say what the partitions served hold of the job. A paused job's
// held items of a partition not served stay held when the job is resumed
// or cancelled; UnholdServed applies the job's mode to them once their
// partition is served.
//
// Only the host states of loaded partitions are in memory; a released
// host leaves nothing behind but its name's bytes in the host table's
// arena (its slot and id are reused) and its policy, kept aside by name.
// Interned IP addresses are shared by hosts and not forgotten.

// Partition numbers one of the crawl's partitions, from 0 to one less than
// internal/store/partition.Count. A host's partition is fixed by its name
// (internal/store/partition.Of); a Store's LoadPartition and JobState use
// the same numbers.
type Partition uint16

// partCount is the number of partitions.
const partCount = partition.Count

// partOf is host's partition.
func partOf(host string) Partition { return Partition(partition.Of(host)) }

// ErrNotServed is matched (errors.Is) by every *NotServedError.
var ErrNotServed = errors.New("frontier: partition not served")

// NotServedError refuses an item whose host is in a partition the
// frontier does not serve now (Options.Partitioned).
type NotServedError struct {
	Host      string
	Partition Partition
}

func (e *NotServedError) Error() string {
	return fmt.Sprintf("frontier: host %s is in partition %d, which this frontier does not serve", e.Host, e.Partition)
}

// Is reports whether target is ErrNotServed.
func (e *NotServedError) Is(target error) bool { return target == ErrNotServed }

// partPhase is where a loaded partition is in its life.
type partPhase uint8

const (
	partLoading  partPhase = iota + 1 // ServePartition reads its hosts: fenced, items refused
	partServing                       // leased; items accepted
	partStopping                      // fenced; items accepted; leases and reads run out
	partDraining                      // fenced; items refused; its last changes are made durable
)

func (p partPhase) String() string {
	switch p {
	case partLoading:
		return "being loaded"
	case partServing:
		return "served"
	case partStopping:
		return "stopped (being released)"
	case partDraining:
		return "being released"
	}
	return fmt.Sprintf("partPhase(%d)", uint8(p))
}

// partState is the frontier's record of a loaded partition.
type partState struct {
	phase partPhase
	hosts []hostID // every host of the partition in memory
	// busy counts, once stopped, the leases out of its hosts and their
	// window reads in progress; idle is closed when it reaches 0.
	busy      int
	idle      chan struct{}
	releasing bool // a ReleasePartition runs
	// hold is the floor of a taken partition's hosts (ServePartition's
	// hold): none is leased before it, whether it was in the store then or
	// is first met later (a routed URL, a link); noTime for none.
	hold mono
}

// holdHost holds h until the partition's hold, if it has one still to
// come at now and h is not allowed later anyway.
func (ps *partState) holdHost(h *hostState, now mono) {
	if ps.hold > now && ps.hold > h.nextAllowed {
		h.nextAllowed, h.gapWhy = ps.hold, GapHold
	}
}

// accepts reports whether items of host are queued now: its partition is
// served, or stopped and not yet drained. f.parts is not nil.
func (f *Frontier) accepts(host string) bool {
	ps := f.parts[partOf(host)]
	return ps != nil && (ps.phase == partServing || ps.phase == partStopping)
}

// refuseUnserved returns a *NotServedError for the first item whose host
// is not accepted, or nil.
func (f *Frontier) refuseUnserved(items []Item) error {
	for i := range items {
		if !f.accepts(items[i].Host) {
			return &NotServedError{Host: items[i].Host, Partition: partOf(items[i].Host)}
		}
	}
	return nil
}

// Serves reports whether the frontier accepts items of host now (Add,
// Complete): always without Options.Partitioned; with it, while host's
// partition is served (or stopped, until its release has drained it).
func (f *Frontier) Serves(host string) bool {
	if f.parts == nil {
		return true
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.accepts(host)
}

// Partitions returns the partitions served now (not those being loaded or
// released), in order; nil without Options.Partitioned.
func (f *Frontier) Partitions() []Partition {
	if f.parts == nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Partition
	for p, ps := range f.parts {
		if ps != nil && ps.phase == partServing {
			out = append(out, Partition(p))
		}
	}
	return out
}

// serveBatch is how many hosts ServePartition installs per hold of the
// frontier's lock.
const serveBatch = 1024

// ServePartition loads the hosts of partition p from the Store
// (Store.LoadPartition) and makes them leasable, none before hold: each
// host's next allowed time is the later of its stored one and hold (the
// taker of a partition whose owner died passes the time by which that
// owner's fetches have surely ended; a clean handoff passes the zero
// time). Unlike New, it adds no start-up delay of its own. The Store is
// read without the frontier's lock; the hosts are installed in batches,
// fenced until the last is in. It is an error if p is loaded already
// (served, or being loaded or released), or if the frontier is not
// Options.Partitioned. On a Store failure nothing of p stays loaded.
func (f *Frontier) ServePartition(p Partition, hold time.Time) error {
	if f.parts == nil {
		return fmt.Errorf("frontier: serve partition %d: the frontier is not partitioned (Options.Partitioned)", p)
	}
	if int(p) >= partCount {
		return fmt.Errorf("frontier: serve partition %d: out of range (%d partitions)", p, partCount)
	}
	f.mu.Lock()
	if ps := f.parts[p]; ps != nil {
		f.mu.Unlock()
		return fmt.Errorf("frontier: serve partition %d: already %s", p, ps.phase)
	}
	floor := f.clock.mono(hold)
	ps := &partState{phase: partLoading, hold: floor}
	f.parts[p] = ps
	f.mu.Unlock()

	batch := make([]HostState, 0, serveBatch)
	install := func() {
		f.mu.Lock()
		now := f.clock.mono(f.opts.Now())
		for _, hs := range batch {
			h := f.restoreHost(hs)
			h.fenced = true
			ps.holdHost(h, now)
			h.lastDone = now
		}
		f.mu.Unlock()
		clear(batch)
		batch = batch[:0]
	}
	var counts []JobState
	err := f.opts.Store.LoadPartition(p, func(hs HostState) error {
		if q := partOf(hs.Host); q != p {
			return fmt.Errorf("host %s is in partition %d", hs.Host, q)
		}
		hs.Host = strings.Clone(hs.Host)
		hs.Queued = slices.Clone(hs.Queued)
		batch = append(batch, hs)
		if len(batch) == serveBatch {
			install()
		}
		return nil
	}, func(js JobState) error {
		if js.Part != p {
			return fmt.Errorf("job %d's counters of partition %d", js.Job, js.Part)
		}
		counts = append(counts, js)
		return nil
	})
	if err == nil {
		install()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err != nil {
		f.forget(ps)
		f.parts[p] = nil
		return fmt.Errorf("frontier: serve partition %d: %w", p, err)
	}
	// Nothing of p was counted while it was not loaded: its jobs'
	// counters join their totals with its hosts.
	for _, js := range counts {
		f.loadCounts(js)
	}
	ps.phase = partServing
	for _, id := range ps.hosts {
		h := f.hosts.at(id)
		h.fenced = false
		f.schedule(h)
	}
	f.signal()
	return nil
}

// ReleasePartition stops leasing the hosts of partition p at once, waits
// until every lease of them has been completed (or has expired: the wait
// re-offers expired leases as Lease does) and every window read of them
// has ended, refuses items of p from then on, waits until every change
// written so far is durable (Store.Write), and forgets p's hosts: their
// windows, heaps, leases, per-IP bookkeeping and policies (kept aside by
// name, see SetHostPolicy). Their state stays in the Store. Until the
// leases have drained, items of p (a completion's links) are still
// accepted, into the Store.
//
// If ctx ends first, it returns ctx's error and p stays stopped (not
// leased) but loaded: a later ReleasePartition finishes the release. So
// does it after a Store failure, which it returns. It is an error if p is
// not loaded, is being loaded, or another ReleasePartition of p runs.
func (f *Frontier) ReleasePartition(ctx context.Context, p Partition) error {
	if f.parts == nil {
		return fmt.Errorf("frontier: release partition %d: the frontier is not partitioned (Options.Partitioned)", p)
	}
	if int(p) >= partCount {
		return fmt.Errorf("frontier: release partition %d: out of range (%d partitions)", p, partCount)
	}
	f.mu.Lock()
	ps := f.parts[p]
	switch {
	case ps == nil:
		f.mu.Unlock()
		return fmt.Errorf("frontier: release partition %d: %w", p, ErrNotServed)
	case ps.phase == partLoading:
		f.mu.Unlock()
		return fmt.Errorf("frontier: release partition %d: being loaded", p)
	case ps.releasing:
		f.mu.Unlock()
		return fmt.Errorf("frontier: release partition %d: already being released", p)
	}
	ps.releasing = true
	if ps.phase == partServing {
		f.fence(ps)
	}
	ps.phase = partStopping
	for ps.busy > 0 {
		now := f.opts.Now()
		f.expire(now)
		if ps.busy == 0 {
			break
		}
		idle := ps.idle
		var timer *time.Timer
		var expiry <-chan time.Time
		if len(f.leases) > 0 {
			timer = time.NewTimer(max(0, f.leases[0].Deadline.Sub(now)))
			expiry = timer.C
		}
		f.mu.Unlock()
		var err error
		select {
		case <-idle:
		case <-expiry:
		case <-ctx.Done():
			err = ctx.Err()
		}
		if timer != nil {
			timer.Stop()
		}
		f.mu.Lock()
		if err != nil && ps.busy > 0 {
			ps.releasing = false
			f.mu.Unlock()
			return fmt.Errorf("frontier: release partition %d: %w", p, err)
		}
	}
	// No lease or read of p is out and none can start. Once this empty
	// change is durable, so is every change before it, and no later one
	// touches p: its items are refused from now on.
	ps.phase = partDraining
	barrier := f.write(&Change{})
	f.mu.Unlock()
	var err error
	select {
	case err = <-barrier:
	case <-ctx.Done():
		err = ctx.Err()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	ps.releasing = false
	if err != nil {
		ps.phase = partStopping
		return fmt.Errorf("frontier: release partition %d: %w", p, err)
	}
	f.forget(ps)
	f.unloadCounts(p)
	f.parts[p] = nil
	f.signal()
	return nil
}

// fence stops leasing the hosts of ps: out of the heaps, out of the
// refill queue and of their IPs' parked lists; busy counts the leases and
// window reads of them still out.
func (f *Frontier) fence(ps *partState) {
	ps.phase = partStopping
	ps.idle = make(chan struct{})
	for _, id := range ps.hosts {
		f.hosts.at(id).fenced = true
	}
	// Refills queued but not started are dropped (the host reads again
	// when it is served again); one being read is waited for.
	q := f.refillQ[:0]
	for _, id := range f.refillQ {
		if h := f.hosts.at(id); h.fenced && f.parts[h.part] == ps {
			h.refilling = false
			f.refilling--
			continue
		}
		q = append(q, id)
	}
	clear(f.refillQ[len(q):])
	f.refillQ = q
	for _, id := range ps.hosts {
		h := f.hosts.at(id)
		if h.parked {
			f.unpark(h)
		}
		ps.busy += int(h.inFlight)
		if h.refilling {
			ps.busy++
		}
		f.schedule(h)
	}
	if ps.busy == 0 {
		close(ps.idle)
	}
}

// unpark takes h out of its IP's parked list.
func (f *Frontier) unpark(h *hostState) {
	ip := f.ip(h)
	l := slices.DeleteFunc(f.ipParked[ip], func(x *hostState) bool { return x == h })
	if len(l) == 0 {
		delete(f.ipParked, ip)
	} else {
		f.ipParked[ip] = l
	}
	h.parked = false
	f.parkedN--
}

// unbusy notes that a lease or window read of fenced host h ended.
func (f *Frontier) unbusy(h *hostState) {
	ps := f.parts[h.part]
	if ps == nil || ps.phase < partStopping {
		return // fenced while being loaded: nothing of it is out
	}
	ps.busy--
	if ps.busy == 0 {
		close(ps.idle)
	}
}

// forget drops the hosts of ps, which have no lease or read out, from
// memory.
func (f *Frontier) forget(ps *partState) {
	for _, id := range ps.hosts {
		h := f.hosts.at(id)
		if h.inFlight > 0 || h.refilling {
			panic("frontier: forgetting a host with a lease or read out")
		}
		h.fenced = true
		if h.parked {
			f.unpark(h)
		}
		if h.sweeping {
			delete(f.sweeps, h.id)
			h.sweeping = false
		}
		f.schedule(h) // out of the heaps
		f.queued -= f.pending(h)
		for l := range maxLevels {
			f.windowed -= len(f.win(h, l))
		}
		f.freeWindows(h)
		f.unspare(h)
		if h.active {
			f.active--
		}
		if h.paused {
			f.pausedN--
		}
		if h.backoff > 0 {
			f.backingOff--
		}
		if h.policy {
			f.keepPolicy(strings.Clone(f.hosts.name(h)), f.policies[h.id])
			delete(f.policies, h.id)
		}
		f.hosts.remove(h)
	}
	ps.hosts = nil
}

// keepPolicy keeps host's policy aside until the host is loaded.
func (f *Frontier) keepPolicy(host string, p hostpolicy.Policy) {
	if p.IsZero() {
		delete(f.keptPolicies, host)
		return
	}
	if f.keptPolicies == nil {
		f.keptPolicies = make(map[string]hostpolicy.Policy)
	}
	f.keptPolicies[host] = p
}
