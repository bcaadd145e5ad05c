package recrawl

import "time"

// Page is the per-URL state every Schedule reads and returns.
type Page struct {
	// History is the change summary (Policy's schedule).
	History History
	// Interval is the last interval the schedule set, 0 before the first
	// visit (Nutch's schedule adapts it).
	Interval time.Duration
	// Weight is the page's importance; 0 means 1.
	Weight float64
	// Prior is what the page's group (its host, its section) says of its
	// rate (Pool); the zero Prior is none. trawl's schedule estimates
	// with it (EstimateWith); the baselines ignore it.
	Prior Prior
}

// Schedule decides, at each visit of a page, how long until the next one.
// The freshness benchmark runs trawl's policy and its baselines through
// it, at the same fetch budget.
type Schedule interface {
	// Visit folds v into pg and returns the new state and the interval
	// until the page's next visit.
	Visit(pg Page, v Visit) (Page, time.Duration)
}

// Uniform visits every page at the same interval.
type Uniform time.Duration

// Visit returns the interval u.
func (u Uniform) Visit(pg Page, v Visit) (Page, time.Duration) {
	pg.Interval = time.Duration(u)
	return pg, pg.Interval
}

// Nutch is Apache Nutch's AdaptiveFetchSchedule reduced to its rule, the
// baseline of the freshness comparisons: the interval shrinks by DecRate when a visit
// saw a change and grows by IncRate when it did not, within [Min, Max].
// (Nutch's optional sync with Last-Modified is not modelled.) Zero fields
// take Nutch's defaults: Initial 24h, IncRate and DecRate 0.2,
// Min 1h, Max 30 days.
type Nutch struct {
	Initial, Min, Max time.Duration
	IncRate, DecRate  float64
}

// Visit returns the next interval: Initial after a first visit, then the
// last one times 1-DecRate on a change or 1+IncRate without, clamped.
func (n Nutch) Visit(pg Page, v Visit) (Page, time.Duration) {
	n = n.withDefaults()
	first := pg.History.Last.IsZero()
	pg.History.Last = v.At
	if first || pg.Interval <= 0 {
		pg.Interval = n.Initial
	} else if v.Changed {
		pg.Interval = time.Duration(float64(pg.Interval) * (1 - n.DecRate))
	} else {
		pg.Interval = time.Duration(float64(pg.Interval) * (1 + n.IncRate))
	}
	pg.Interval = min(max(pg.Interval, n.Min), n.Max)
	return pg, pg.Interval
}

func (n Nutch) withDefaults() Nutch {
	if n.Initial == 0 {
		n.Initial = DefaultInitialInterval
	}
	if n.Min == 0 {
		n.Min = DefaultMinInterval
	}
	if n.Max == 0 {
		n.Max = DefaultMaxInterval
	}
	if n.IncRate == 0 {
		n.IncRate = 0.2
	}
	if n.DecRate == 0 {
		n.DecRate = 0.2
	}
	return n
}

// Schedule returns trawl's schedule under the multiplier mu (from Solve or
// SolveCensus): each visit is folded into the page's History and the
// interval is Interval(EstimateWith(History, Prior), Weight, mu).
func (p *Policy) Schedule(mu float64) Schedule { return optimal{p, mu} }

type optimal struct {
	p  *Policy
	mu float64
}

func (o optimal) Visit(pg Page, v Visit) (Page, time.Duration) {
	pg.History = o.p.Observe(pg.History, v)
	pg.Interval = o.p.Interval(o.p.EstimateWith(pg.History, pg.Prior), pg.Weight, o.mu)
	return pg, pg.Interval
}

// Next is trawl's decision at a page's visit, as a crawl makes it: the
// estimate of the page with history h (the visit folded in) under its
// group prior pr, and the interval until its next visit for weight w
// under the multiplier mu, jittered by key (Jitter; JitterFirst for a
// page with no interval of its own yet). key must depend on the page and
// its visit count, so that a replayed visit draws the same interval.
func (p *Policy) Next(h History, pr Prior, w, mu float64, key uint64) (Estimate, time.Duration) {
	est := p.EstimateWith(h, pr)
	jitter := p.Jitter
	if est.Intervals == 0 {
		jitter = p.JitterFirst
	}
	return est, jitter(p.Interval(est, w, mu), key)
}
