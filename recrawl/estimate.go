package recrawl

import (
	"math"
	"time"
)

// Visit is one fetch of a page, as the change estimator sees it.
type Visit struct {
	// At is when the fetch began.
	At time.Time
	// Changed reports that the content differed from the copy fetched at
	// the visit before (payload digest, or SimHash beyond a threshold for
	// pages whose boilerplate churns). It is ignored on a page's first
	// visit.
	Changed bool
	// LastModified is the server's Last-Modified time, zero if it sent
	// none. It is used only while the page's dates pass the checks of
	// History.LastModifiedTrusted.
	LastModified time.Time
}

// bins is the number of classes of changed intervals a History keeps;
// binBase the upper bound of the first and binRatio the ratio between
// bounds. Bin k holds the changed intervals in [binBase*4^(k-1),
// binBase*4^k): under 15 minutes, 15m-1h, 1h-4h, ... 10.7d-42.7d, and
// everything above in the last.
const (
	bins     = 8
	binBase  = 0.25 // hours
	binRatio = 4
)

// History is the bounded summary of a page's visits from which its change
// rate is estimated: a fixed-size value (about 100 bytes, float32 counts
// that decay with Policy.Options().Memory), not a list of visits. The zero
// History is a page never visited. It is a plain value: Policy.Observe
// returns a new one.
//
// For the Poisson likelihood of intervals observed at irregular times, an
// unchanged interval contributes only its length, so one sum keeps them
// all; a changed one contributes log(1 - e^(-rI)), which depends on its
// own length, so changed intervals are kept per bin of length (count and
// summed length), each bin standing in for its intervals by their mean.
type History struct {
	// Last is when the page was last visited; zero if never.
	Last time.Time
	// Modified is the Last-Modified time of the last visit that sent one
	// (zero if none did), the reference for the next visit's checks.
	Modified time.Time
	// Visits counts the visits observed (saturating).
	Visits uint32

	changed        [bins]float32 // decayed count of changed intervals per bin
	changedHours   [bins]float32 // decayed summed length of those, hours
	unchangedHours float32       // decayed summed length of unchanged intervals
	intervals      float32       // decayed count of all intervals

	// From Last-Modified dates that passed the checks: changes dated and
	// the time known to be free of changes (the part of each interval
	// after its last change, or all of an unchanged one).
	lmChanges, lmExposure float32
	// Decayed counts of visits whose Last-Modified passed or failed the
	// checks.
	lmGood, lmBad float32
}

// Observe returns h with the visit v folded in. Visits must come in time
// order; a visit not after h.Last only updates Last-Modified bookkeeping.
func (p *Policy) Observe(h History, v Visit) History {
	if h.Visits < math.MaxUint32 {
		h.Visits++
	}
	first := h.Last.IsZero()
	prev, prevLM := h.Last, h.Modified
	if !v.At.After(h.Last) && !first {
		return h
	}
	h.Last = v.At
	if !v.LastModified.IsZero() {
		h.Modified = v.LastModified
	}
	if first {
		// The first visit's Last-Modified dates the page's last change
		// (see ageEstimate): one dated change and the time since free
		// of changes, as a later visit's trusted date gives, and a visit
		// that passed the checks, so that the next visit's agreement
		// makes the dates trusted. The time counts up to MaxInterval: a
		// page static for a year that starts to change would otherwise
		// carry the year, as one interval the decay wears down slowly,
		// for hundreds of visits (TestWokenPageRecovers).
		if age, ok := firstAge(v.At, v.LastModified); ok {
			h.lmChanges, h.lmExposure, h.lmGood = 1, float32(hours(min(age, p.o.MaxInterval))), 1
		}
		return h
	}
	I := hours(v.At.Sub(prev))
	d := float32(p.decay)
	for k := range bins {
		h.changed[k] *= d
		h.changedHours[k] *= d
	}
	h.unchangedHours *= d
	h.intervals = h.intervals*d + 1
	if v.Changed {
		k := bin(I)
		h.changed[k]++
		h.changedHours[k] += float32(I)
	} else {
		h.unchangedHours += float32(I)
	}

	if v.LastModified.IsZero() {
		return h
	}
	h.lmChanges *= d
	h.lmExposure *= d
	h.lmGood *= d
	h.lmBad *= d
	if !lastModifiedOK(prev, prevLM, v) {
		h.lmBad++
		return h
	}
	h.lmGood++
	lm := v.LastModified
	if lm.After(prev) {
		h.lmChanges++
		h.lmExposure += float32(hours(v.At.Sub(lm)))
	} else {
		h.lmExposure += float32(I)
	}
	return h
}

// lastModifiedOK reports whether v's Last-Modified is believable given the
// visit before (at prev, with Last-Modified prevLM, zero if none): not
// after the fetch began, not the fetch time itself (a server that stamps
// every answer "now"), not earlier than the date it gave before, and
// agreeing with the content: newer than the visit before exactly when the
// content changed.
func lastModifiedOK(prev, prevLM time.Time, v Visit) bool {
	lm := v.LastModified
	switch {
	case lm.After(v.At):
		return false
	case v.At.Sub(lm) < time.Second:
		return false
	case !prevLM.IsZero() && lm.Before(prevLM):
		return false
	}
	// HTTP dates have whole seconds: a change in the second of the
	// visit before is ambiguous, and counted with the earlier interval.
	return lm.After(prev) == v.Changed
}

// LastModifiedTrusted reports whether h's Last-Modified dates are used for
// its rate: at least two visits passed the checks of Observe (the first
// visit's date passes when it is believable; 1.5 for the decay) and fewer
// than one in ten (decayed) failed them.
func (h History) LastModifiedTrusted() bool {
	return h.lmGood >= 1.5 && h.lmBad*10 < h.lmGood+h.lmBad && h.lmExposure > 0
}

func bin(I float64) int {
	k, hi := 0, binBase
	for k < bins-1 && I >= hi {
		k++
		hi *= binRatio
	}
	return k
}

// Estimate is a page's estimated change rate.
type Estimate struct {
	// Rate is the estimated number of changes per hour.
	Rate Rate
	// Intervals is the (decayed) number of intervals between visits
	// behind the estimate; 0 means the page was visited once: Rate is 0
	// unless FromPrior or Age says where it comes from.
	Intervals float64
	// LastModified reports that Rate comes from trusted Last-Modified
	// dates rather than from whether each visit saw a change.
	LastModified bool
	// Censored reports that every interval remembered saw a change: the
	// page may change much faster than Rate, which is only what the
	// visits so far can tell. Shortest is then the mean length of the
	// shortest class of those intervals.
	Censored bool
	Shortest time.Duration
	// FromPrior reports a page with no interval of its own whose Rate is
	// its group prior's mean (EstimateWith); Intervals is then 0.
	FromPrior bool
	// Age reports a page visited once whose Rate comes from the time
	// since the Last-Modified date that visit got (with the group prior,
	// if any); Intervals is then 0.
	Age bool
}

// Estimate returns h's change rate.
//
// With trusted Last-Modified dates, each dated change is an observed change
// time: the maximum-likelihood rate of a Poisson process is the number of
// dated changes over the time known to be free of changes ((X+Prior)/E).
//
// Otherwise a visit only tells whether at least one change happened in the
// interval before it. For a Poisson process with rate r, an interval of
// length I changes with probability 1-e^(-rI); the likelihood of n
// intervals of which those in C changed is maximised where
//
//	sum over i in C of I_i e^(-r I_i) / (1 - e^(-r I_i)) = sum over i not in C of I_i
//
// the extension of Cho and Garcia-Molina's estimator ("Estimating frequency
// of change", ACM TOIT 3(3), 2003) to irregular intervals. As they do, half
// an unchanged interval (of the mean length) is added, which for n regular
// intervals of length I with X changes gives exactly their
// r = -ln((n-X+0.5)/(n+0.5)) / I, finite when every interval changed; and
// Prior pseudo-changes are added on the left, so that a page never seen to
// change gets about Prior/(time observed) rather than 0.
//
// A page visited once has no interval: its rate is the same dated-change
// estimate over the time since the Last-Modified date its visit got, if
// it got a believable one (Estimate.Age), else unknown.
func (p *Policy) Estimate(h History) Estimate {
	if h.intervals <= 0 {
		return p.ageEstimate(h, Prior{})
	}
	return p.estimate(h, Prior{})
}

// ageEstimate is the estimate of a page visited once (h has no interval).
// The Last-Modified date of that visit, if believable (not after the
// visit, not the visit's own second), dates the page's last change: in a
// page changing as a Poisson process the time since then, its age, is
// the rate's first observation, one dated change followed by that time
// free of changes (Observe keeps it with the trusted dates' sums). With
// the group prior pr (if valid) the estimate is the posterior mean
// (Changes+1)/(Hours+age); without, (1+Options.Prior)/age, the
// dated-change estimate trusted dates give. No age: the prior's mean, or
// nothing.
func (p *Policy) ageEstimate(h History, pr Prior) Estimate {
	age, ok := firstAge(h.Last, h.Modified)
	switch {
	case !ok:
	case pr.valid():
		return Estimate{Rate: Rate((1 + pr.Changes) / (hours(age) + pr.Hours)), Age: true}
	default:
		return Estimate{Rate: Rate((1 + p.o.Prior) / hours(age)), Age: true}
	}
	if pr.valid() {
		return Estimate{Rate: pr.Rate(), FromPrior: true}
	}
	return Estimate{}
}

// firstAge returns the age a visit at at with Last-Modified lm tells, and
// whether lm is believable: set, not after the visit, and not within its
// second (a server stamping every answer "now").
func firstAge(at, lm time.Time) (time.Duration, bool) {
	age := at.Sub(lm)
	return age, !lm.IsZero() && age >= time.Second
}

// estimate is Estimate for a page with intervals, with the group prior pr
// if it is valid, else the fixed Options.Prior.
func (p *Policy) estimate(h History, pr Prior) Estimate {
	e := Estimate{Intervals: float64(h.intervals)}
	prior := p.o.Prior
	group := pr.valid()
	if h.LastModifiedTrusted() {
		e.LastModified = true
		if group {
			e.Rate = Rate((float64(h.lmChanges) + pr.Changes) / (float64(h.lmExposure) + pr.Hours))
		} else {
			e.Rate = Rate((float64(h.lmChanges) + prior) / float64(h.lmExposure))
		}
		return e
	}
	var x, total float64
	for k := range bins {
		x += float64(h.changed[k])
		total += float64(h.changedHours[k])
	}
	n := float64(h.intervals)
	total += float64(h.unchangedHours)
	mean := total / n
	if group {
		prior = 0 // the group prior replaces the fixed one
	}
	if x+prior+pr.Changes <= 0 || mean <= 0 {
		return e
	}

	right := float64(h.unchangedHours) + 0.5*mean
	if group {
		right += pr.Hours
	}
	phi := func(r float64) float64 {
		s := prior * g(mean, r)
		if group {
			s += pr.Changes / r
		}
		for k := range bins {
			if c := float64(h.changed[k]); c > 0 {
				s += c * g(float64(h.changedHours[k])/c, r)
			}
		}
		return s - right
	}
	// phi falls from +Inf to -right as r grows: bisect on log r between
	// bounds that bracket its root.
	lo, hi := math.Log(1e-9), math.Log(1e4)
	for range 44 {
		mid := (lo + hi) / 2
		if phi(math.Exp(mid)) > 0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	e.Rate = Rate(math.Exp((lo + hi) / 2))
	if h.unchangedHours == 0 {
		// Censored: the half unchanged interval of the mean length says
		// little when the mean is made of long intervals, so the rate is
		// at least Cho and Garcia-Molina's for the shortest class alone,
		// ln((x+0.5)/0.5) / its mean length.
		e.Censored = true
		for k := range bins {
			if c := float64(h.changed[k]); c > 0 {
				I := float64(h.changedHours[k]) / c
				e.Shortest = hoursToDuration(I)
				e.Rate = max(e.Rate, Rate(math.Log((c+0.5)/0.5)/I))
				break
			}
		}
	}
	return e
}

// g is I e^(-rI) / (1 - e^(-rI)) = I / (e^(rI) - 1), the weight of a
// changed interval of length I in the likelihood equation.
func g(I, r float64) float64 {
	x := r * I
	if x < 1e-12 {
		return 1 / r
	}
	return I / math.Expm1(x)
}

// ChoGarciaMolina is Cho and Garcia-Molina's estimator for n visits at a
// regular interval of which x saw a change: r = -ln((n-x+0.5)/(n+0.5)) per
// interval, returned per hour. It is 0 for n <= 0 or interval <= 0; x is
// clamped to [0, n].
func ChoGarciaMolina(n, x int, interval time.Duration) Rate {
	if n <= 0 || interval <= 0 {
		return 0
	}
	x = min(max(x, 0), n)
	r := -math.Log((float64(n-x) + 0.5) / (float64(n) + 0.5))
	return Rate(r / hours(interval))
}
