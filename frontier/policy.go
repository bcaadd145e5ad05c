package frontier

import (
	"time"

	"github.com/trawl-crawler/trawl/hostpolicy"
)

// GapReason says which rule set a host's current wait (HostInfo.DelayReason):
// the gap after its last request, or a later time its caller set
// (Outcome.NotBefore, with Outcome.NotBeforeWhy).
type GapReason uint8

// The reasons a host waits. Those a server asks for or a failing host
// earns (GiveUpReason) may be given up by a one-shot crawl (GiveUp); the
// others are the crawler's own politeness and are always waited out.
const (
	GapNone             GapReason = iota // no request has ended since start-up
	GapMinDelay                          // the node's MinDelay
	GapPolicy                            // the host policy's MinDelay
	GapCrawlDelay                        // robots.txt Crawl-delay
	GapAdaptive                          // ten times the last response time
	GapBackoff                           // backoff after 429, 503, time-outs, failures
	GapRetryAfter                        // the server's Retry-After on a page
	GapRobotsRetryAfter                  // the server's Retry-After on robots.txt
	GapRobots                            // robots.txt unavailable: asked again later
	GapLostAnswer                        // a robots.txt answer was lost: left alone for the longest Crawl-delay
	GapHold                              // a partition taken over: its hosts held while the old owner's fetches may run
	GapIPSlot                            // waiting for a fetch slot of its address

	gapLast = GapIPSlot
)

func (r GapReason) String() string {
	switch r {
	case GapMinDelay:
		return "min-delay"
	case GapPolicy:
		return "policy"
	case GapCrawlDelay:
		return "crawl-delay"
	case GapAdaptive:
		return "adaptive"
	case GapBackoff:
		return "backoff"
	case GapRetryAfter:
		return "retry-after"
	case GapRobotsRetryAfter:
		return "robots-retry-after"
	case GapRobots:
		return "robots-unavailable"
	case GapLostAnswer:
		return "robots-answer-lost"
	case GapHold:
		return "takeover-hold"
	case GapIPSlot:
		return "ip-slot"
	}
	return ""
}

// ParseGapReason is the reason whose String is s, and false if none is
// ("" is GapNone).
func ParseGapReason(s string) (GapReason, bool) {
	for r := GapNone; r <= gapLast; r++ {
		if r.String() == s {
			return r, true
		}
	}
	return GapNone, false
}

// Describe says r in a user's words, for "waiting 59m for 1 host
// (robots.txt Retry-After)".
func (r GapReason) Describe() string {
	switch r {
	case GapMinDelay, GapPolicy:
		return "politeness gap"
	case GapCrawlDelay:
		return "Crawl-delay"
	case GapAdaptive:
		return "slow responses"
	case GapBackoff:
		return "backoff after errors"
	case GapRetryAfter:
		return "Retry-After"
	case GapRobotsRetryAfter:
		return "robots.txt Retry-After"
	case GapRobots:
		return "robots.txt unavailable"
	case GapLostAnswer:
		return "robots.txt answer lost"
	case GapHold:
		return "takeover hold"
	case GapIPSlot:
		return "address slot"
	}
	return "start-up gap"
}

// GiveUpReason reports whether a one-shot crawl may give up a host that
// waits for r (GiveUp): the server asked for the wait, or the host keeps
// failing. The crawler's own gaps and safety waits are always waited out.
func (r GapReason) GiveUpReason() bool {
	switch r {
	case GapBackoff, GapRetryAfter, GapRobotsRetryAfter, GapRobots:
		return true
	}
	return false
}

// minDelay is h's least gap: its policy's, or Options.MinDelay.
func (f *Frontier) minDelay(h *hostState) time.Duration {
	if h.policy {
		if p := f.policies[h.id]; p.HasMinDelay {
			return p.MinDelay
		}
	}
	return f.opts.MinDelay
}

// maxParallel is h's cap on leases in flight: its policy's, or
// Options.MaxParallel.
func (f *Frontier) maxParallel(h *hostState) int {
	if h.policy {
		if p := f.policies[h.id]; p.MaxParallel > 0 {
			return p.MaxParallel
		}
	}
	return f.opts.MaxParallel
}

// SetHostPolicy applies an operator's policy to host (a politeness key),
// replacing any earlier one; the zero Policy restores the defaults. p must
// be valid (hostpolicy.Policy.Validate). It takes effect on the host's
// next lease: a paused host is not leased (its leases out run to their
// end), a cap is checked at the next lease, and a longer min delay counts
// from the end of the host's last request (or from start-up), pushing its
// next allowed time back if need be. A shorter min delay applies from the
// next request's end: it never brings forward a time set by backoff or
// Retry-After. Policies are not written to the Store; the node keeps them.
// With Options.Partitioned, the policy of a host whose partition is not
// served is kept aside (by name) and applied when the host is loaded; a
// released host's policy is kept aside in the same way.
func (f *Frontier) SetHostPolicy(host string, p hostpolicy.Policy) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var h *hostState
	if f.parts != nil {
		if h = f.hosts.find(host); h == nil && !f.accepts(host) {
			f.keepPolicy(host, p)
			return
		}
	}
	if h == nil {
		h = f.host(host)
	}
	f.setPolicy(h, p)
	f.signal()
}

// setPolicy applies p to h (SetHostPolicy).
func (f *Frontier) setPolicy(h *hostState, p hostpolicy.Policy) {
	if h.paused != p.Paused {
		if p.Paused {
			f.pausedN++
		} else {
			f.pausedN--
		}
	}
	h.paused = p.Paused
	if p.IsZero() {
		if h.policy {
			delete(f.policies, h.id)
		}
		h.policy = false
	} else {
		if f.policies == nil {
			f.policies = make(map[hostID]hostpolicy.Policy)
		}
		f.policies[h.id] = p
		h.policy = true
	}
	if h.lastDone != noTime {
		h.nextAllowed = max(h.nextAllowed, h.lastDone+mono(f.minDelay(h)))
	}
	f.schedule(h)
}

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
