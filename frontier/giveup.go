package frontier

import (
	"slices"
	"time"
)

// Liveness. A one-shot crawl must end by itself, but a host may ask it to
// wait an hour (Retry-After on a page or on robots.txt) or earn a backoff
// of minutes by failing. GiveUp is the rule that bounds such waits: once
// nothing at all may be leased within a crawl's wait horizon, every host
// that waits beyond it for a reason the server gave (GapReason.
// GiveUpReason) has its URLs of that crawl dropped now, each reported to
// Options.OnDrop with the reason (DropRetryAfter, DropBackoff,
// DropRobotsWait), instead of the crawl idling until the host's time.
// The crawler's own waits (gaps, Crawl-delay, a takeover hold, a lost
// robots.txt answer) are waited out: they are bounded by the crawler's
// own settings.
//
// So a one-shot crawl is never idle for longer than its horizon because
// of a host that asked for more: when it is, that work is given up.
//
// Giving up does not make a host dead: its items are swept (as a dead
// host's are drained, a window at a time, from the store) up to the last
// Seq queued when GiveUp was called; the items of crawls that wait longer
// (a continuous crawl, a paused one, or one with a longer horizon) are
// queued again at the tail, and items queued later are not touched.

// sweep is the state of a host being swept (Frontier.sweeps).
type sweep struct {
	to    uint64        // the host's items with Seq up to this are looked at
	ahead time.Duration // how far beyond the other work left the host waits
	why   DropReason
	// retries: only items already tried (Item.Attempts > 0) are given
	// up, the others wait: a host in backoff after a failure or two may
	// have one bad URL, not be failing (failingStrikes).
	retries bool
}

// failingStrikes is how many requests in a row must have failed for a
// host in backoff to count as failing, all its URLs given up; after fewer,
// only the URLs that failed already are (their retries).
const failingStrikes = 3

// GiveUp gives up the work that lies beyond the wait horizon of one-shot
// crawls (for a backoff, the retries of URLs that failed, and every URL
// once failingStrikes requests in a row failed), if nothing may be leased within minWait: no lease in flight, no
// host due or being read or drained, none waiting for its address's slot.
// wait returns a job's horizon (0: the job never gives up, e.g. a
// continuous crawl); minWait is the least over the jobs running. A host
// that waits for a GiveUpReason, ahead of the latest time any other host
// waits for, by more than a job's horizon, has that job's items dropped.
// It returns how many hosts are swept (0 if the frontier is not idle that
// long). The node calls it when Lease finds nothing to do.
func (f *Frontier) GiveUp(minWait time.Duration, wait func(job uint32) time.Duration) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.clock.mono(f.opts.Now())
	if top := f.idleTop(); minWait <= 0 || top == nil || top.nextAllowed <= now+mono(minWait) {
		return 0
	}
	// Every host with work waits beyond minWait. Those that wait for the
	// crawler's own reasons will be waited for: the crawl lasts at least
	// until the latest of them (floor), so a host the server parks until
	// before then costs nothing to wait for.
	floor := now
	var cands []*hostState
	for _, e := range f.ready.es {
		h := f.hosts.at(e.id)
		// A backoff no failure has renewed since a success is waited for.
		if h.gapWhy.GiveUpReason() && (h.gapWhy != GapBackoff || h.strikes >= 1) {
			cands = append(cands, h)
		} else {
			floor = max(floor, h.nextAllowed)
		}
	}
	n := 0
	for _, h := range cands {
		ahead := time.Duration(h.nextAllowed - floor)
		if ahead <= minWait {
			continue
		}
		if f.sweeps == nil {
			f.sweeps = make(map[hostID]sweep)
		}
		f.sweeps[h.id] = sweep{to: h.nextSeq, ahead: ahead, why: dropFor(h.gapWhy),
			retries: h.gapWhy == GapBackoff && h.strikes < failingStrikes}
		h.sweeping = true
		f.schedule(h)
		n++
	}
	if n > 0 {
		f.giveUpWait = wait
		f.signal()
	}
	return n
}

// dropFor is the drop reason of an item given up while its host waits for r.
func dropFor(r GapReason) DropReason {
	switch r {
	case GapRetryAfter:
		return DropRetryAfter
	case GapRobotsRetryAfter, GapRobots:
		return DropRobotsWait
	}
	return DropBackoff
}

// sweepHost looks at the items of h, being swept, that its windows hold up
// to the sweep's last Seq: those of jobs that give the wait up are dropped,
// the others queued again at the tail. Then it has the next window read,
// or ends the sweep once every such item has been looked at.
func (f *Frontier) sweepHost(h *hostState, ch *Change) {
	sw := f.sweeps[h.id]
	var kept []Item
	for l := range maxLevels {
		w := f.win(h, l)
		i := 0
		for ; i < len(w) && w[i].Seq <= sw.to; i++ {
			it := w[i]
			j := f.job(it.Job)
			c := f.counts(it.Job, j, h.part)
			j.queued--
			c.stored--
			h.total[l]--
			ch.Del = append(ch.Del, it)
			if d := f.giveUpWait(it.Job); d > 0 && sw.ahead > d && (!sw.retries || it.Attempts > 0) {
				j.dropped++
				c.dropped++
				f.dropped++
				f.dropping(it, sw.why)
			} else {
				kept = append(kept, it)
			}
		}
		if i > 0 {
			f.queued -= i
			f.windowed -= i
			f.setWin(h, l, slices.Clone(w[i:]))
		}
	}
	f.unspare(h)
	f.kick()
	more := -1
	for l := range maxLevels {
		if h.unread[l] > 0 && h.readSeq[l] < sw.to {
			more = l
			break
		}
	}
	if more < 0 {
		delete(f.sweeps, h.id)
		h.sweeping = false
	}
	// Kept items go to the tail under new Seqs, past the sweep's end.
	f.put(ch, kept)
	f.schedule(h)
	if more >= 0 && !h.refilling && !h.fenced {
		f.startRefill(h, more)
	}
}

// Waiting says what the frontier waits for while it has nothing to lease:
// "waiting 59m for 1 host (robots.txt Retry-After)".
type Waiting struct {
	// Idle is set when nothing is in flight, due, being read or drained:
	// the fields below say what is waited for. Otherwise they are zero.
	Idle bool
	// Next is the soonest a host with work may be leased, and Reason why
	// that host waits; Hosts counts the hosts with work, all waiting.
	Next   time.Time
	Reason GapReason
	Hosts  int
}

// WaitFor says what the frontier waits for (Waiting), in constant time.
func (f *Frontier) WaitFor() Waiting {
	f.mu.Lock()
	defer f.mu.Unlock()
	top := f.idleTop()
	if top == nil || top.nextAllowed <= f.clock.mono(f.opts.Now()) {
		return Waiting{}
	}
	return Waiting{Idle: true, Next: f.clock.time(top.nextAllowed), Reason: top.gapWhy, Hosts: f.ready.Len()}
}

// idleTop returns the host with work due soonest while nothing else goes
// on: no lease in flight, no host due, read, drained, swept or waiting
// for its address's slot. Nil if something does, or nothing waits.
func (f *Frontier) idleTop() *hostState {
	if f.inFlight > 0 || f.runnable.Len() > 0 || f.refilling > 0 || len(f.ipParked) > 0 || len(f.sweeps) > 0 || f.ready.Len() == 0 {
		return nil
	}
	if top := f.ready.top(); !top.dead {
		return top
	}
	return nil
}
