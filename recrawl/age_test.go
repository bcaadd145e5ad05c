package recrawl

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestInitialIntervalIsTheGeometricMean: with no InitialInterval the first
// interval is halfway between the bounds on a log scale, so a crawl with
// only short bounds set recrawls within them, and one with only
// MinInterval set does not wait the default's day.
func TestInitialIntervalIsTheGeometricMean(t *testing.T) {
	for _, tt := range []struct {
		o    Options
		want time.Duration
	}{
		{Options{MinInterval: 20 * time.Second, MaxInterval: 3 * time.Minute}, time.Minute},
		{Options{MinInterval: 20 * time.Second}, 2 * time.Hour},                    // sqrt(20 s x 30 d)
		{Options{}, hoursToDuration(math.Sqrt(720))},                               // about 26.8 h
		{Options{MinInterval: time.Minute, InitialInterval: time.Hour}, time.Hour}, // set: kept
		{Options{MaxInterval: 2 * time.Hour, InitialInterval: day}, 2 * time.Hour}, // clamped
		{Options{MinInterval: 5 * time.Minute, MaxInterval: 5 * time.Minute}, 5 * time.Minute},
	} {
		got := mustNew(t, tt.o).Options().InitialInterval
		if d := got - tt.want; d < -time.Millisecond || d > time.Millisecond {
			t.Errorf("%+v: InitialInterval %v, want %v", tt.o, got, tt.want)
		}
	}
}

// TestFirstVisitAge: a page visited once gets its rate from the age of
// the Last-Modified date it sent. On stationary Poisson pages (the age at
// a visit is exponential with the page's rate), the median estimate is
// within a factor of 2.5 of the true rate at every rate, so a fast page's
// first interval is short and a slow one's long; a page unchanged for a
// year is left at MaxInterval; dates that cannot be true give no age.
func TestFirstVisitAge(t *testing.T) {
	p := mustNew(t, Options{MinInterval: 20 * time.Second, MaxInterval: 3 * time.Minute})
	rng := rand.New(rand.NewPCG(7, 8))
	for _, every := range []time.Duration{30 * time.Second, 2 * time.Minute, 20 * time.Minute, day} {
		r := 1 / every.Hours()
		var ests []float64
		for range 501 {
			age := time.Duration(rng.ExpFloat64() / r * float64(time.Hour))
			h := p.Observe(History{}, Visit{At: t0, LastModified: t0.Add(-age).Truncate(time.Second)})
			e := p.Estimate(h)
			if age >= 2*time.Second && (!e.Age || e.Intervals != 0 || e.FromPrior) {
				t.Fatalf("change every %v, age %v: %+v, want an Age estimate", every, age, e)
			}
			ests = append(ests, float64(e.Rate))
		}
		slices.Sort(ests)
		if med := ests[len(ests)/2]; med < r/2.5 || med > r*2.5 {
			t.Errorf("change every %v: median first-visit rate %.3g/h, want within 2.5x of %.3g/h", every, med, r)
		}
	}

	mu := 20 * time.Second.Hours() // the node's multiplier without a budget: MinInterval
	static := p.Estimate(p.Observe(History{}, Visit{At: t0, LastModified: t0.Add(-365 * day)}))
	if got := p.Interval(static, 1, mu); got != p.Options().MaxInterval {
		t.Errorf("unchanged for a year: interval %v, want MaxInterval %v", got, p.Options().MaxInterval)
	}
	// Changed 2 min before: worth following (about every 77 s). Changed
	// 10 s before: it may change faster than MinInterval allows to
	// follow, which the optimum does not chase, but one age is too
	// little to drop a page for MaxInterval: InitialInterval, and the
	// next visit tells.
	fast := p.Estimate(p.Observe(History{}, Visit{At: t0, LastModified: t0.Add(-2 * time.Minute)}))
	if got := p.Interval(fast, 1, mu); got >= p.Options().MaxInterval || got == p.Options().InitialInterval {
		t.Errorf("changed 2 min before the visit: interval %v, want its own, under MaxInterval", got)
	}
	tooFast := p.Estimate(p.Observe(History{}, Visit{At: t0, LastModified: t0.Add(-10 * time.Second)}))
	if got := p.Interval(tooFast, 1, mu); got != p.Options().InitialInterval {
		t.Errorf("changed 10 s before the visit: interval %v, want InitialInterval", got)
	}

	for name, lm := range map[string]time.Time{
		"none":          {},
		"in the future": t0.Add(time.Hour),
		"the visit's":   t0,
		"half a second": t0.Add(-time.Second / 2),
	} {
		e := p.Estimate(p.Observe(History{}, Visit{At: t0, LastModified: lm}))
		if e.Age || e.Rate != 0 {
			t.Errorf("Last-Modified %s: %+v, want no estimate", name, e)
		}
		if got := p.Interval(e, 1, mu); got != p.Options().InitialInterval {
			t.Errorf("Last-Modified %s: interval %v, want InitialInterval", name, got)
		}
	}

	// With a group prior: the posterior mean, between the prior's mean
	// and the age's.
	pr := Prior{Changes: 2, Hours: 2} // one change an hour
	h := p.Observe(History{}, Visit{At: t0, LastModified: t0.Add(-4 * time.Hour)})
	e := p.EstimateWith(h, pr)
	if want := Rate(3.0 / 6); !e.Age || math.Abs(float64(e.Rate-want)) > 1e-9 {
		t.Errorf("age 4 h, prior 2 changes in 2 h: %+v, want Age and rate %v", e, want)
	}
	// After a second visit whose date agrees, the dates are trusted and
	// the age is part of them, up to MaxInterval: a page last changed a
	// year before its first visit and not since stays slow.
	h = p.Observe(History{}, Visit{At: t0, LastModified: t0.Add(-365 * day)})
	h = p.Observe(h, Visit{At: t0.Add(time.Hour), LastModified: t0.Add(-365 * day)})
	want := Rate(1.5 / (p.Options().MaxInterval.Hours() + 1))
	if e := p.Estimate(h); e.Age || e.Intervals == 0 || !e.LastModified || e.Rate > want*1.01 {
		t.Errorf("second visit, same date: %+v, want trusted dates and a rate of at most %.3g/h", e, want)
	}
}

// TestWokenPageRecovers: the age is kept with the dates, up to
// MaxInterval, so a page static for a year before its first visit that
// then changes every 4 hours, visited daily with true dates, carries 30
// days of evidence of slowness until the decay (Memory) wears it down
// (uncapped, the year kept it under half its rate for 200 visits): its
// estimate must reach half its rate within 90 visits and stay there.
func TestWokenPageRecovers(t *testing.T) {
	p := mustNew(t, Options{})
	rng := rand.New(rand.NewPCG(9, 10))
	const r = 1.0 / 4
	last := t0.Add(-365 * day)
	next := t0.Add(time.Duration(rng.ExpFloat64() / r * float64(time.Hour)))
	var h History
	reached := -1
	for i := range 200 {
		at := t0.Add(time.Duration(i) * day)
		changed := false
		for !next.After(at) {
			last, changed = next, true
			next = next.Add(time.Duration(rng.ExpFloat64() / r * float64(time.Hour)))
		}
		h = p.Observe(h, Visit{At: at, Changed: changed && i > 0, LastModified: last.Truncate(time.Second)})
		e := p.Estimate(h)
		switch {
		case float64(e.Rate) >= r/2 && reached < 0:
			reached = i
		case float64(e.Rate) < r/2 && reached >= 0:
			t.Fatalf("visit %d: rate %.3g/h fell back under half the true %.3g/h after reaching it at visit %d", i, e.Rate, r, reached)
		}
	}
	t.Logf("half the true rate reached at visit %d", reached)
	if reached < 0 || reached > 90 {
		t.Errorf("half the true rate reached at visit %d, want by visit 90", reached)
	}
}
