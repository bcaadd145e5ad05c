package recrawl

import (
	"math"
	"time"
)

// Allocation: the freshness a revisit interval buys (Freshness), the
// interval that spends a fetch budget best (Interval, Solve), and the
// same solve over a census of rates (Census, in census.go).

// Freshness is the expected share of time a copy of a page changing at
// rate r is identical to the live page when it is fetched every interval:
// F = (1 - e^(-rI)) / (rI) (Cho and Garcia-Molina, "Effective page refresh
// policies for web crawlers", ACM TODS 28(4), 2003). It is 1 for r <= 0
// and for interval <= 0 (a copy refetched continuously).
func Freshness(r Rate, interval time.Duration) float64 {
	x := float64(r) * hours(interval)
	if x <= 0 {
		return 1
	}
	return -math.Expm1(-x) / x
}

// Interval is the revisit interval of a page with estimate e and importance
// weight w (0 means 1) under the Lagrange multiplier mu (hours; see
// Solve), clamped to [MinInterval, MaxInterval].
//
// Maximising sum of w_i F(r_i, f_i) subject to sum of f_i = B (f the visit
// frequency) gives, with x = r/f,
//
//	w (1 - (1+x) e^(-x)) / r = mu
//
// for every page visited. The left side is the freshness one more visit
// per hour buys; it is below w/r for every f, so a page with r >= w/mu is
// not visited at all by the optimum: its visits buy less than the same
// visits spent elsewhere. Such a page gets MaxInterval here, so that its
// estimate can still see it slow down, unless it was visited once (its
// rate from a group prior or a Last-Modified age: Estimate.FromPrior,
// Age), which is too little to drop it: it gets InitialInterval. A page
// with no estimate gets InitialInterval too, unless its rate comes from a
// group prior or an age; one estimated never to change, MaxInterval.
//
// A censored estimate (every interval saw a change) is only a lower bound:
// such a page may be one worth following or one changing far too fast.
// Unless even the bound is past the threshold, the page is probed: its
// next interval is at most a quarter of its shortest changed intervals,
// so that a few visits tell the two apart. Probing stops once the changed
// intervals are within probeDivisor times MinInterval: a page that always
// changed that fast keeps its estimate (a lower bound), which usually
// drops it.
func (p *Policy) Interval(e Estimate, w, mu float64) time.Duration {
	return p.interval(e, w, mu, true)
}

func (p *Policy) interval(e Estimate, w, mu float64, probe bool) time.Duration {
	if e.Intervals <= 0 && !e.FromPrior && !e.Age {
		return p.o.InitialInterval
	}
	h := interval(float64(e.Rate), w, mu)
	if (e.Age || e.FromPrior) && math.IsInf(h, 1) {
		// A page seen once is not dropped for MaxInterval as changing
		// too fast: one Last-Modified age has a heavy tail (a page that
		// changed just before its visit), and a group's mean is the
		// group's, set by its fastest pages when its rates spread over
		// decades. Its own next visit tells.
		return p.o.InitialInterval
	}
	if probe && e.Censored && !math.IsInf(h, 1) && e.Shortest > probeDivisor*p.o.MinInterval {
		h = min(h, hours(e.Shortest)/probeDivisor)
	}
	return p.clamp(h)
}

// probeDivisor is how much shorter than its changed intervals a censored
// page's next interval is.
const probeDivisor = 4

// interval is the unclamped optimum in hours, +Inf for a page not worth
// visiting.
func interval(r, w, mu float64) float64 {
	if w <= 0 {
		w = 1
	}
	if r <= 0 || math.IsNaN(r) {
		return math.Inf(1)
	}
	y := mu * r / w
	if y >= 1 {
		return math.Inf(1)
	}
	return hinv(y) / r
}

func (p *Policy) clamp(h float64) time.Duration {
	if math.IsInf(h, 1) || h >= hours(p.o.MaxInterval) {
		return p.o.MaxInterval
	}
	return max(hoursToDuration(h), p.o.MinInterval)
}

// hinv solves 1 - (1+x) e^(-x) = y for x >= 0, 0 <= y < 1: Newton's
// method from an approximation (x^2/2 for small x, x = L + ln(1+x) with
// L = -ln(1-y) for large), kept inside a shrinking bracket.
func hinv(y float64) float64 {
	if y <= 0 {
		return 0
	}
	if y >= 1 {
		return math.Inf(1)
	}
	x := math.Sqrt(2 * y)
	if y > 0.25 {
		l := -math.Log1p(-y)
		x = l + math.Log1p(l)
	}
	lo, hi := 0.0, 800.0
	for range 50 {
		e := math.Exp(-x)
		fx := -math.Expm1(-x) - x*e - y
		if fx > 0 {
			hi = x
		} else {
			lo = x
		}
		nx := x - fx/(x*e)
		if !(nx > lo && nx < hi) {
			nx = (lo + hi) / 2
		}
		if math.Abs(nx-x) <= 1e-12*x {
			return nx
		}
		x = nx
	}
	return x
}

// Demand is one page's input to Solve.
type Demand struct {
	Estimate Estimate
	Weight   float64 // importance; 0 means 1
}

// Allocation is Solve's answer.
type Allocation struct {
	// Mu is the Lagrange multiplier, in hours: the freshness one visit
	// per hour buys at the margin is 1/Mu (weighted). Interval(e, w, Mu)
	// gives each page its share.
	Mu float64
	// Intervals holds each page's interval, in the order of the demands.
	Intervals []time.Duration
	// Planned is the sum of 1/interval: the fetches per hour the
	// intervals call for. It exceeds the budget when even MaxInterval (and
	// InitialInterval for pages without an estimate) for every page is
	// more than the budget allows, and falls short of it when MinInterval
	// for every page is less.
	Planned Rate
}

// Solve finds the multiplier at which the intervals of the pages in d call
// for budget fetches per hour, and those intervals: Cho and
// Garcia-Molina's optimal allocation for average freshness, with the
// clamps. Probes (see Interval) are left out of the sum: they are a few
// visits per page, not a steady share, and counting them would starve the
// pages whose rates are known.
func (p *Policy) Solve(d []Demand, budget Rate) Allocation {
	planned := func(mu float64) float64 {
		s := 0.0
		for _, x := range d {
			s += 1 / hours(p.interval(x.Estimate, x.Weight, mu, false))
		}
		return s
	}
	a := Allocation{Mu: solveMu(planned, float64(budget)), Intervals: make([]time.Duration, len(d))}
	var s float64
	for i, x := range d {
		a.Intervals[i] = p.Interval(x.Estimate, x.Weight, a.Mu)
		s += 1 / hours(a.Intervals[i])
	}
	a.Planned = Rate(s)
	return a
}

// Reference returns the average freshness of pages changing at the true
// rates (changes per hour; 0 for a page that never changes) under the two
// schedules a crawl's freshness F is judged between, both spending budget
// fetches per hour: uniform recrawl (every page at the same interval,
// len(rates)/budget hours, unclamped) and the optimum (Solve with the
// true rates, within p's bounds). The gap share (F - uniform) /
// (optimum - uniform) is the part of what a schedule could gain over
// uniform recrawl that F captured.
func (p *Policy) Reference(rates []float64, budget Rate) (uniform, optimum float64) {
	if len(rates) == 0 || budget <= 0 {
		return 0, 0
	}
	iu := hoursToDuration(float64(len(rates)) / float64(budget))
	d := make([]Demand, len(rates))
	for i, r := range rates {
		uniform += Freshness(Rate(r), iu)
		d[i].Estimate = Estimate{Rate: Rate(r), Intervals: 1}
	}
	a := p.Solve(d, budget)
	for i, r := range rates {
		optimum += Freshness(Rate(r), a.Intervals[i])
	}
	n := float64(len(rates))
	return uniform / n, optimum / n
}

// GapShare is (f - uniform) / (optimum - uniform): 1 for a schedule as
// fresh as the optimum, 0 for one no fresher than uniform recrawl; 0 when
// the optimum is not above uniform (nothing to gain).
func GapShare(f, uniform, optimum float64) float64 {
	if !(optimum > uniform) {
		return 0
	}
	return (f - uniform) / (optimum - uniform)
}
