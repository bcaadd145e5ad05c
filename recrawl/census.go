package recrawl

import "math"

// Census counts a population of pages by estimated change rate (per unit
// of importance weight), in bins a sixteenth of a decade wide, so that the
// multiplier at which their intervals spend a budget is solved in a time
// that does not depend on the number of pages (SolveCensus). The node
// counts each continuous job's schedule into one at every freshness scan.
//
// The multiplier is solved from the estimates, not corrected from the
// intervals pages were given: those change only as pages are revisited,
// hours or days after a correction, and a loop correcting from them winds
// up (TestBudgetMultiplierHoldsWhileIntervalsLag).
//
// The zero Census is empty. It is a plain value, not safe for concurrent
// use.
type Census struct {
	bins      [censusBins]float64
	atInitial float64 // pages with no estimate (InitialInterval)
	atMax     float64 // pages estimated not to change (MaxInterval)
}

// Census bins: log10 of the rate per hour from censusLo to censusHi, in
// censusPerDecade steps; rates outside go to the end bins.
const (
	censusLo        = -8
	censusHi        = 5
	censusPerDecade = 16
	censusBins      = (censusHi - censusLo) * censusPerDecade
)

// Add counts a page with estimate e and importance w (0 means 1). A page
// with no estimate is counted at InitialInterval; one whose estimate is
// that it does not change, at MaxInterval. Probes are not counted: as in
// Solve, they are a few visits per page, not a steady share.
func (c *Census) Add(e Estimate, w float64) {
	if w <= 0 {
		w = 1
	}
	switch r := float64(e.Rate) / w; {
	case e.Intervals <= 0 && !e.FromPrior && !e.Age:
		c.atInitial++
	case !(r > 0) || math.IsInf(r, 1):
		c.atMax++
	default:
		k := int(math.Floor((math.Log10(r) - censusLo) * censusPerDecade))
		c.bins[min(max(k, 0), censusBins-1)]++
	}
}

// censusRate is the rate a bin stands for: its geometric middle.
func censusRate(k int) Rate {
	return Rate(math.Pow(10, censusLo+(float64(k)+0.5)/censusPerDecade))
}

// SolveCensus returns the multiplier at which the pages of c call for
// budget fetches per hour (Solve's Mu, to within the bins' width): the
// smallest it tries (every page at its shortest) when even that calls for
// less, the largest when even every page at its longest calls for more.
func (p *Policy) SolveCensus(c *Census, budget Rate) float64 {
	fixed := c.atInitial/hours(p.o.InitialInterval) + c.atMax/hours(p.o.MaxInterval)
	planned := func(mu float64) float64 {
		s := fixed
		for k, n := range c.bins {
			if n > 0 {
				s += n / hours(p.interval(Estimate{Rate: censusRate(k), Intervals: 1}, 1, mu, false))
			}
		}
		return s
	}
	return solveMu(planned, float64(budget))
}

// solveMu bisects on log mu for the multiplier at which planned, falling
// as mu grows, meets budget.
func solveMu(planned func(mu float64) float64, budget float64) float64 {
	lo, hi := math.Log(1e-6), math.Log(1e12)
	if planned(math.Exp(lo)) <= budget {
		return math.Exp(lo)
	}
	if planned(math.Exp(hi)) >= budget {
		return math.Exp(hi)
	}
	for range 40 {
		mid := (lo + hi) / 2
		if planned(math.Exp(mid)) > budget {
			lo = mid
		} else {
			hi = mid
		}
	}
	return math.Exp(hi)
}
