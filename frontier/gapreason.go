package frontier

// GapReason: which rule set a host's current wait, shown in HostInfo and
// told apart by GiveUp (the waits a server asked for may be given up).

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
