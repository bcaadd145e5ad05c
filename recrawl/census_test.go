package recrawl

import (
	"math"
	"testing"
	"time"
)

// TestBudgetMultiplierHoldsWhileIntervalsLag runs the multiplier as the
// node does: a scan every 30 s reads the schedule, whose intervals are the
// ones pages got at their last visit (hours to days old), and sets mu for
// the visits to come (here every hour of a simulated 60 days). mu must not wind up while the schedule catches up:
// every scan's mu stays within 5% of Solve's on the same estimates, and
// the schedule's planned fetches per hour reach the budget once every
// page has been revisited. (A loop that corrected mu by the ratio of
// the schedule's planned fetches to the budget, as the node once did, was
// off by a factor of 26 here, even at one correction an hour.)
func TestBudgetMultiplierHoldsWhileIntervalsLag(t *testing.T) {
	p := mustNew(t, Options{})
	d := population(2000)
	budget := Rate(2000.0 / 72)
	want := p.Solve(d, budget).Mu

	// Every page starts at a 72 h interval, visits spread over it.
	iv := make([]time.Duration, len(d))
	next := make([]time.Duration, len(d))
	for i := range d {
		iv[i] = 72 * time.Hour
		next[i] = time.Duration(i) * 72 * time.Hour / time.Duration(len(d))
	}
	mu := 0.0
	const scan = time.Hour
	end := 2 * p.Options().MaxInterval
	worst := 0.0
	for now := time.Duration(0); now < end; now += scan {
		var c Census
		for _, x := range d {
			c.Add(x.Estimate, x.Weight)
		}
		mu = p.SolveCensus(&c, budget)
		worst = max(worst, math.Abs(math.Log(mu/want)))
		for i, x := range d {
			if next[i] <= now {
				iv[i] = p.Interval(x.Estimate, x.Weight, mu)
				next[i] = now + iv[i]
			}
		}
	}
	if worst > 0.05 {
		t.Errorf("a scan's mu was off Solve's %.3g by a factor of %.3f", want, math.Exp(worst))
	}
	var planned float64
	for i := range d {
		planned += 1 / iv[i].Hours()
	}
	if math.Abs(planned/float64(budget)-1) > 0.05 {
		t.Errorf("planned %.2f fetches/h after every page was revisited, budget %.2f", planned, float64(budget))
	}
}

// TestCensusSolveMatchesSolve checks the binned solve against the exact
// one on populations with and without pages of unknown rate.
func TestCensusSolveMatchesSolve(t *testing.T) {
	p := mustNew(t, Options{})
	for _, tc := range []struct {
		name    string
		unknown int // pages with no estimate among every 10
	}{{"estimated", 0}, {"some unknown", 3}} {
		d := population(3000)
		for i := range d {
			if i%10 < tc.unknown {
				d[i].Estimate = Estimate{}
			}
		}
		for _, perPage := range []float64{24 * 20, 72, 8} {
			budget := Rate(3000 / perPage)
			a := p.Solve(d, budget)
			var c Census
			for _, x := range d {
				c.Add(x.Estimate, x.Weight)
			}
			mu := p.SolveCensus(&c, budget)
			if r := mu / a.Mu; math.Abs(math.Log(r)) > 0.03 {
				t.Errorf("%s, each page every %vh: census mu %.4g, Solve's %.4g", tc.name, perPage, mu, a.Mu)
			}
		}
	}
}
