package recrawl

import (
	"math"
	"time"
)

// Leveller smooths the release of due recrawls, so that a continuous
// crawl's fetch rate stays near its mean (no recrawl storm): at each tick
// of the schedule's loop it lets out at most Headroom times what the
// recent demand calls for, the oldest due first, and holds the rest for
// the next ticks. The demand is the rate at which entries come due (not
// the rate let out, which the leveller itself limits: a pace on what went
// out would hold itself down after a lull), an exponentially weighted
// mean over Window. A wave of pages that come due in the same few seconds
// (a first pass given like intervals, or chance coincidences of many
// pages) is spread over the next seconds instead of fetched at once; in
// the steady state the demand is let out whole, so the budget a schedule
// spends is unchanged and a page waits a tick or two at most. Whatever the
// demand, a tick lets out at least the share dt/Window of the entries due
// (a backlog after a restart, a pause, a partition taken over, or one
// job's beside another's busy one drains within a few windows, not at
// the pace of a demand that no longer counts it).
//
// The zero Leveller is ready for use with the defaults; it is a plain
// value for one loop, not safe for concurrent use, and takes its clock
// from its callers.
type Leveller struct {
	// Headroom is how far above the demand rate a tick may let entries
	// out; 0 means DefaultHeadroom.
	Headroom float64
	// Window is the demand rate's time constant; 0 means
	// DefaultLevelWindow.
	Window time.Duration

	rate    float64   // entries coming due per second
	last    time.Time // the last Allow that folded its entries in
	pending int       // entries come due at calls whose clock did not move
}

// Defaults of Leveller's zero fields.
const (
	DefaultHeadroom    = 1.5
	DefaultLevelWindow = 10 * time.Second
)

// Allow folds newly, the entries that came due since the last call, into
// the demand rate and returns how many of the due entries (due of them,
// newly included) may go out at now: Headroom times the demand over the
// time since the last call, or the share of due that time is of Window,
// whichever is more, rounded up, and at least one. The first call lets
// everything out: there is no demand to level against yet.
func (l *Leveller) Allow(now time.Time, newly, due int) int {
	if l.last.IsZero() {
		l.last = now
		return math.MaxInt
	}
	if !now.After(l.last) { // a clock that did not move: fold newly in at the next call
		l.pending += newly
		return 1
	}
	newly += l.pending
	l.pending = 0
	dt := now.Sub(l.last).Seconds()
	l.last = now
	w := l.Window
	if w <= 0 {
		w = DefaultLevelWindow
	}
	a := -math.Expm1(-dt / w.Seconds())
	l.rate += a * (float64(newly)/dt - l.rate)
	n := math.Ceil(max(l.headroom()*l.rate*dt, float64(due)*min(dt/w.Seconds(), 1)))
	if n >= math.MaxInt32 {
		return math.MaxInt
	}
	return max(1, int(n))
}

// Rate is the demand rate, entries coming due per second.
func (l *Leveller) Rate() float64 { return l.rate }

func (l *Leveller) headroom() float64 {
	if l.Headroom <= 0 {
		return DefaultHeadroom
	}
	return l.Headroom
}
