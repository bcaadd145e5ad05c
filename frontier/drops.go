package frontier

// Budgets and drops: why an item is discarded (DropReason, reported to
// Options.OnDrop), the host budget (HostBudget, DuplicateAllowance), and
// dead hosts, whose queues are drained a window at a time (kill, drain).

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

// kill marks h dead and drains its queue into ch, a window at a time (the
// refillers go on; a dead host that has items in memory again, requeued,
// sorts first in the ready heap and Lease drains it); later items are
// dropped. The host's queue is not deleted at once, since which jobs its
// unread items belong to is known only once they are read.
func (f *Frontier) kill(h *hostState, ch *Change, why DropReason) {
	h.dead, h.deadWhy = true, why
	f.drain(h, ch)
}
