package recrawl

import (
	"math"
	"time"
)

// Pace spreads a schedule's due visits over time, so that visits planned
// at similar times (a first crawl's pages, all given their first interval
// at once; pages held at the same maximum) do not come out together: a
// recrawl storm. It lets out at most Headroom times the rate visits have
// been going out at (a moving mean over PaceMemory), and never more than
// Headroom times the rate the schedule plans (the sum of 1/interval over
// its pages): in steady state no second carries much more than Headroom
// times the mean, and a wave or a backlog (after a restart) drains at
// Headroom-1 times the mean on top of the steady flow, the mean rising as
// it does.
//
// The planned rate alone is not the reference: visits go out slower than
// planned (politeness, fetch time, the whole seconds of due times), a
// fifth slower in the live freshness test, which made 1.5 times the plan
// nearly twice the mean.
//
// The zero Pace lets everything out until SetPlanned gives it a rate. It
// is a plain value, not safe for concurrent use.
type Pace struct {
	planned float64 // visits per second the schedule plans; 0: no pacing
	mean    float64 // moving mean of visits let out per second; 0 before the first
	credit  float64 // visits owed, below one
	last    time.Time
	el      float64 // seconds credited by the last Allow
}

// Headroom is how much faster than the mean rate a Pace lets due visits
// out; PaceMemory is the time constant of that mean.
const (
	Headroom   = 1.5
	PaceMemory = 30 * time.Second
)

// maxPaceGap bounds the time one Allow call credits: after a pause (a
// stopped loop, a paused job) the pace starts afresh rather than letting
// out the whole pause's worth at once.
const maxPaceGap = 2 * time.Second

// SetPlanned sets the planned rate, visits per hour; 0 or less turns
// pacing off. The moving mean starts at the first planned rate.
func (p *Pace) SetPlanned(perHour Rate) {
	p.planned = max(float64(perHour), 0) / 3600
	if math.IsNaN(p.planned) || math.IsInf(p.planned, 0) {
		p.planned = 0
	}
	if p.mean == 0 {
		p.mean = p.planned
	}
}

// Allow returns how many due visits may go out at now (-1: any number):
// the time since the last call at Headroom times the reference rate. Only
// the fraction left over is kept for the next call, so the caller calls
// it at every tick, due visits or not (an allowance not spent is lost, and
// an idle second does not add up to a burst), and reports what it let out
// with Out. At least one visit goes out per second, however low the rate.
func (p *Pace) Allow(now time.Time) int {
	el := maxPaceGap
	if !p.last.IsZero() {
		el = min(max(now.Sub(p.last), 0), maxPaceGap)
	}
	p.last, p.el = now, el.Seconds()
	if p.planned <= 0 {
		return -1
	}
	rate := max(Headroom*min(p.planned, p.mean), 1)
	a := p.credit + rate*p.el
	n := math.Floor(a)
	p.credit = a - n
	return int(n)
}

// Out records that n visits went out since the last Allow, for the moving
// mean.
func (p *Pace) Out(n int) {
	if p.el <= 0 || p.planned <= 0 {
		return
	}
	w := 1 - math.Exp(-p.el/PaceMemory.Seconds())
	p.mean += (float64(n)/p.el - p.mean) * w
}
