package frontier

import (
	"time"

	"github.com/trawl-crawler/trawl/hostpolicy"
)

// Host inspection: what the frontier knows of one host (HostInfo, Host)
// and a bounded scan over all of them (Hosts), for the API and dashboard.

// HostInfo is what the frontier knows of one host now.
type HostInfo struct {
	Host string
	// Seq is the host's place in a Hosts scan: Seq+1 goes on after it.
	Seq   HostCursor
	State string // see HostStates
	// Queued counts the host's items waiting, of every job (in memory or
	// in the Store); InFlight its leases out; Leased the URLs leased
	// towards the host budget, Duplicates those that were duplicates
	// (Options.DuplicateAllowance).
	Queued, InFlight, Leased, Duplicates int
	// NextAllowed is the earliest time the host may be contacted; zero if
	// it has never been scheduled.
	NextAllowed time.Time
	// Delay is the gap set after the host's last request (or start-up),
	// and DelayReason the rule that set NextAllowed (a GapReason's
	// String: "min-delay", "retry-after", "robots-retry-after", ...; ""
	// for the gap after start-up, or if no request has ended since). Wait is how long from now
	// until NextAllowed, 0 if it has passed: a Retry-After of an hour
	// shows as a Wait of 59m until it ends.
	Delay       time.Duration
	DelayReason string
	Reason      GapReason // DelayReason's value
	Wait        time.Duration
	Backoff     time.Duration
	CrawlDelay  time.Duration
	IP          string // last address resolved, "" if none yet
	Policy      hostpolicy.Policy
	// DeadReason says why a dead host's queue was dropped ("host-dropped",
	// "budget", "duplicates", "failing": see DropReason); "" if the host
	// is not dead.
	DeadReason string
	// Failures counts the host's latest fetches in a row that ended
	// without a response the same way, FailingHow ("timeout" or
	// "network"; "" if none): Options.FailLimit of them kill the host.
	Failures   int
	FailingHow string
}

// The host states HostInfo.State takes, and Hosts filters by. A host is
// in the first that applies.
const (
	HostDead    = "dead"    // its queue was dropped (robots.txt unavailable, budget spent, failing: HostInfo.DeadReason)
	HostPaused  = "paused"  // paused by its policy
	HostParked  = "parked"  // waits for its IP's cap
	HostBackoff = "backoff" // has work; its gap is grown by backoff
	HostWaiting = "waiting" // has work; its next allowed time is in the future
	HostReady   = "ready"   // has work it may be leased now (or all its slots are in flight)
	HostIdle    = "idle"    // nothing queued or in flight
)

// HostStates lists the states in the order they are decided.
var HostStates = []string{HostDead, HostPaused, HostParked, HostBackoff, HostWaiting, HostReady, HostIdle}

func (f *Frontier) hostStateName(h *hostState, now mono) string {
	switch {
	case h.dead:
		return HostDead
	case h.paused:
		return HostPaused
	case h.parked:
		return HostParked
	case !h.active:
		return HostIdle
	case h.backoff > 0:
		return HostBackoff
	case h.nextAllowed > now:
		return HostWaiting
	}
	return HostReady
}

func (f *Frontier) info(h *hostState, now mono) HostInfo {
	hi := HostInfo{
		Host:        f.hosts.name(h),
		Seq:         HostCursor(h.id),
		State:       f.hostStateName(h, now),
		Queued:      f.pending(h),
		InFlight:    int(h.inFlight),
		Leased:      int(h.leased),
		Duplicates:  int(h.dups),
		DelayReason: h.gapWhy.String(),
		Reason:      h.gapWhy,
		Backoff:     h.backoff,
		CrawlDelay:  h.crawlDelay,
		IP:          f.ip(h),
		Failures:    int(h.fails),
		FailingHow:  h.failWay.String(),
	}
	if h.dead {
		hi.DeadReason = h.deadWhy.String()
	}
	if h.nextAllowed != noTime {
		hi.NextAllowed = f.clock.time(h.nextAllowed)
		hi.Wait = max(0, time.Duration(h.nextAllowed-now))
		if h.lastDone != noTime {
			hi.Delay = max(0, time.Duration(h.nextAllowed-h.lastDone))
		}
	}
	if h.policy {
		hi.Policy = f.policies[h.id]
	}
	return hi
}

// Host returns what the frontier knows of host, and false if it knows
// nothing of it.
func (f *Frontier) Host(host string) (HostInfo, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	h := f.hosts.find(host)
	if h == nil {
		return HostInfo{}, false
	}
	return f.info(h, f.clock.mono(f.opts.Now())), true
}

// HostCursor is where a Hosts scan goes on: 0 to start.
type HostCursor int64

// Hosts returns up to limit hosts in state (one of HostStates; "" for any
// state), in the order they became known, starting at cursor. A call
// looks at no more than scan hosts (at least limit), so that the
// frontier's lock is held for a bounded time however many hosts are
// known: it returns the cursor to go on from, or -1 once every host has
// been looked at. Cursors stay valid while the frontier lives (hosts are
// numbered as they become known and never removed), not across restarts;
// with Options.Partitioned, a released partition's hosts are removed and
// their numbers reused, so a scan across a ServePartition or
// ReleasePartition may miss a host or see one twice.
func (f *Frontier) Hosts(state string, cursor HostCursor, limit, scan int) ([]HostInfo, HostCursor) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.clock.mono(f.opts.Now())
	scan = max(scan, limit)
	var out []HostInfo
	id := hostID(max(cursor, 0))
	for ; id < f.hosts.end() && len(out) < limit && scan > 0; id++ {
		scan--
		h := f.hosts.at(id)
		if h.free || state != "" && f.hostStateName(h, now) != state {
			continue
		}
		out = append(out, f.info(h, now))
	}
	if id >= f.hosts.end() {
		return out, -1
	}
	return out, HostCursor(id)
}
