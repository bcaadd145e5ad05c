package frontier

import (
	"time"

	"github.com/trawl-crawler/trawl/hostpolicy"
)

// Politeness: the gap between two fetches to one host (MinDelay or the
// operator's policy, Crawl-delay, the adaptive term, backoff, Retry-After:
// politeness), the count of failures in a row that gives a host up
// (failed), an operator's per-host policy (SetHostPolicy), and the cap on
// fetches in flight per IP address (SetIP, park).

// delay is the host's current gap between fetches. MaxDelay caps what
// Crawl-delay and backoff reach, not an operator's own min delay.
func (f *Frontier) delay(h *hostState) time.Duration {
	md := f.minDelay(h)
	return min(max(md, h.crawlDelay, h.backoff), max(f.opts.MaxDelay, md))
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

// SetCrawlDelay records a host's robots.txt Crawl-delay.
func (f *Frontier) SetCrawlDelay(host string, d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.parts != nil && f.hosts.find(host) == nil && !f.accepts(host) {
		return // not served: the owner's stored state has its own
	}
	f.host(host).crawlDelay = d
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
