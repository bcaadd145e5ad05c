package recrawl

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

func TestPoolPrior(t *testing.T) {
	var pl Pool
	for _, r := range []Rate{0.1, 0.1} {
		pl.Add(Estimate{Rate: r, Intervals: 5})
	}
	if pr := pl.Prior(); pr != (Prior{}) {
		t.Errorf("two pages: prior %+v, want none (fewer than %d)", pr, minPoolPages)
	}
	pl.Add(Estimate{Rate: 0.1, Intervals: 5})
	pl.Add(Estimate{Rate: 7, FromPrior: true})             // not the page's own: ignored
	pl.Add(Estimate{Rate: 0, Intervals: 3})                // no rate: ignored
	pl.Add(Estimate{Rate: Rate(math.NaN()), Intervals: 3}) // ignored
	pr := pl.Prior()
	if pl.Pages() != 3 || pr.Changes != MaxPriorChanges || math.Abs(float64(pr.Rate())-0.1) > 1e-12 {
		t.Errorf("three equal rates: %d pages, prior %+v (rate %v), want 3, the cap %d pseudo-changes at rate 0.1", pl.Pages(), pr, pr.Rate(), MaxPriorChanges)
	}
	// Rates spread over orders of magnitude: a weak prior at their mean.
	var wide Pool
	for _, r := range []Rate{0.001, 0.01, 0.1, 1, 10} {
		wide.Add(Estimate{Rate: r, Intervals: 5})
	}
	w := wide.Prior()
	m, sq := 11.111/5, (1e-6+1e-4+0.01+1+100)/5
	if want := m * m / (sq - m*m); math.Abs(w.Changes-want) > 1e-3 || math.Abs(float64(w.Rate())-m) > 1e-3 {
		t.Errorf("wide rates: prior %+v (rate %v), want %.3f pseudo-changes (m²/v) at their mean %.3f", w, w.Rate(), want, m)
	}
	// Equal rates but one: still capped; all equal to zero variance: the cap.
	if pr := (Pool{n: 3, sum: 0.3, sumSq: 0.03}).Prior(); pr.Changes != MaxPriorChanges {
		t.Errorf("zero variance: %+v, want the cap", pr)
	}
}

// TestEstimateWithoutPriorIsEstimate: the zero Prior changes nothing.
func TestEstimateWithoutPriorIsEstimate(t *testing.T) {
	p := mustNew(t, Options{})
	rng := rand.New(rand.NewPCG(9, 10))
	for i := range 50 {
		h := poissonHistory(p, rng, math.Exp(rng.NormFloat64()*2-3), i%12, 24*time.Hour, i%3 == 0)
		if a, b := p.Estimate(h), p.EstimateWith(h, Prior{}); a != b {
			t.Fatalf("history %d: Estimate %+v, EstimateWith(zero prior) %+v", i, a, b)
		}
	}
}

// TestPriorGivesTheFirstInterval: a page fetched once gets its group's
// rate, and the interval the policy gives that rate, not InitialInterval.
func TestPriorGivesTheFirstInterval(t *testing.T) {
	p := mustNew(t, Options{})
	h := p.Observe(History{}, Visit{At: t0})
	pr := Prior{Changes: 2, Hours: 2 / 0.01} // one change per 100 h
	e := p.EstimateWith(h, pr)
	if !e.FromPrior || e.Rate != 0.01 || e.Intervals != 0 {
		t.Fatalf("one visit: %+v, want the prior's rate 0.01 from the prior", e)
	}
	mu := 10.0
	if got, want := p.Interval(e, 1, mu), p.Interval(Estimate{Rate: 0.01, Intervals: 1}, 1, mu); got != want || got == p.Options().InitialInterval {
		t.Errorf("interval from the prior %v, want %v (the rate's), not InitialInterval", got, want)
	}
	if got := p.Interval(p.Estimate(h), 1, mu); got != p.Options().InitialInterval {
		t.Errorf("without a prior: %v, want InitialInterval %v", got, p.Options().InitialInterval)
	}
}

// TestPriorNeverDropsAPageSeenOnce: a page fetched once whose group's
// mean rate is past the threshold (a group of pages that change hourly,
// or a heavy-tailed one whose mean the fast pages set) is not dropped for
// MaxInterval on that mean alone: it gets InitialInterval, and its own
// next visit tells. A page with intervals of its own at that rate is
// dropped.
func TestPriorNeverDropsAPageSeenOnce(t *testing.T) {
	p := mustNew(t, Options{})
	mu := 10.0 // pages changing more than once per 10 h are not worth a visit
	h := p.Observe(History{}, Visit{At: t0})
	e := p.EstimateWith(h, Prior{Changes: 1, Hours: 1}) // one change per hour
	if !e.FromPrior {
		t.Fatalf("one visit: %+v, want an estimate from the prior", e)
	}
	if got := p.Interval(e, 1, mu); got != p.Options().InitialInterval {
		t.Errorf("seen once, group mean past the threshold: interval %v, want InitialInterval %v", got, p.Options().InitialInterval)
	}
	if got := p.Interval(Estimate{Rate: 1, Intervals: 5}, 1, mu); got != p.Options().MaxInterval {
		t.Errorf("five intervals of its own at that rate: %v, want MaxInterval", got)
	}
}

// TestPriorLearnsFaster: pages of a group changing at similar rates,
// visited only a few times each, are estimated closer to their rates with
// the group's prior than with the fixed one, static pages included; and a
// page's own visits overcome a prior that is wrong for it.
func TestPriorLearnsFaster(t *testing.T) {
	p := mustNew(t, Options{})
	rng := rand.New(rand.NewPCG(11, 12))
	for _, c := range []struct {
		name string
		rate float64 // per hour; 0: never changes
	}{
		{"daily", 1.0 / 24},
		{"weekly", 1.0 / 168},
		{"static", 0},
	} {
		// The group: 30 pages with 20 visits each, at rates within ±30%.
		var pl Pool
		for range 30 {
			r := c.rate * (0.7 + 0.6*rng.Float64())
			pl.Add(p.Estimate(poissonHistory(p, rng, max(r, 1e-9), 20, 48*time.Hour, false)))
		}
		pr := pl.Prior()
		// New pages of the group, three visits each.
		var errFixed, errGroup float64
		for range 200 {
			h := poissonHistory(p, rng, max(c.rate, 1e-9), 3, 48*time.Hour, false)
			truth := max(c.rate, 1.0/(24*365)) // a static page: a year counts as right
			errFixed += math.Abs(math.Log(float64(p.Estimate(h).Rate) / truth))
			errGroup += math.Abs(math.Log(float64(p.EstimateWith(h, pr).Rate) / truth))
		}
		t.Logf("%s: prior %+v (rate %.4g/h); mean |log error| after 3 visits: fixed prior %.2f, group prior %.2f",
			c.name, pr, pr.Rate(), errFixed/200, errGroup/200)
		if errGroup >= errFixed {
			t.Errorf("%s: the group prior's error %.2f is not below the fixed prior's %.2f", c.name, errGroup/200, errFixed/200)
		}
	}
	// A wrong prior (hourly) against a page's 200 weekly visits (of which
	// the default Memory keeps about 64): the prior moves the estimate
	// less than 10% of the way, in log, from what the page's own visits
	// say towards the prior.
	truth := 1.0 / 168
	h := poissonHistory(p, rng, truth, 200, 48*time.Hour, false)
	wrong := Prior{Changes: MaxPriorChanges, Hours: MaxPriorChanges / 1.0}
	e, own := p.EstimateWith(h, wrong), p.Estimate(h)
	if off, gap := math.Abs(math.Log(float64(e.Rate/own.Rate))), math.Abs(math.Log(float64(wrong.Rate()/own.Rate))); off > 0.1*gap {
		t.Errorf("200 weekly visits against an hourly prior: rate %.4g/h (without the prior %.4g/h), true %.4g/h", e.Rate, p.Estimate(h).Rate, truth)
	}
}
