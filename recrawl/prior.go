package recrawl

import "math"

// Group priors: what a page's neighbours (the pages of its host, of its
// path section) have shown of their change rates, as a prior on the page's
// own rate. A page fetched once has no interval of its own to learn from;
// one fetched a few times has little. Pages of one site section tend to
// change alike (a news section, an archive, a product catalogue), so the
// group's rates are a better start than one fixed interval for every page.
//
// The prior is a Gamma distribution on the rate, the conjugate prior of a
// Poisson process's rate: Gamma(a, b) is worth a changes seen over b hours.
// A Pool fits it to the group's estimates by the method of moments (mean
// m, variance v: a = m²/v, b = m/v), with a capped at MaxPriorChanges so
// that a page's own visits outweigh its group's after a few changes, and
// at least minPoolPages estimates behind it.

// Prior is a Gamma(Changes, Hours) prior on a page's change rate: Changes
// pseudo-changes seen over Hours of observation. The zero Prior is none:
// the Policy's Options.Prior applies instead.
type Prior struct {
	Changes float64 // shape a
	Hours   float64 // rate b, in hours
}

// Rate is the prior mean a/b; 0 for no prior.
func (p Prior) Rate() Rate {
	if !p.valid() {
		return 0
	}
	return Rate(p.Changes / p.Hours)
}

func (p Prior) valid() bool {
	return p.Changes > 0 && p.Hours > 0 && !math.IsInf(p.Hours, 0) && !math.IsInf(p.Changes, 0)
}

// MaxPriorChanges caps a group prior's weight in pseudo-changes: however
// alike a group's pages, a page that showed MaxPriorChanges changes of its
// own weighs as much as its whole group.
const MaxPriorChanges = 4

// minPriorChanges is the least weight a fitted prior has: a group whose
// rates spread over orders of magnitude still says where they centre.
const minPriorChanges = 0.25

// minPoolPages is the fewest estimates a Pool fits a prior to.
const minPoolPages = 3

// Pool accumulates the rate estimates of a group's pages. The zero Pool is
// empty. It is a plain value, not safe for concurrent use.
type Pool struct {
	n, sum, sumSq float64
}

// Add counts e, if it is an estimate from the page's own visits (not
// one taken from a prior).
func (pl *Pool) Add(e Estimate) {
	if e.Intervals <= 0 || e.Rate <= 0 || math.IsNaN(float64(e.Rate)) || math.IsInf(float64(e.Rate), 0) {
		return
	}
	r := float64(e.Rate)
	pl.n++
	pl.sum += r
	pl.sumSq += r * r
}

// Pages is the number of estimates added.
func (pl Pool) Pages() int { return int(pl.n) }

// Prior fits a Gamma prior to the pool's estimates; the zero Prior while
// it holds fewer than minPoolPages.
func (pl Pool) Prior() Prior {
	if pl.n < minPoolPages {
		return Prior{}
	}
	m := pl.sum / pl.n
	v := pl.sumSq/pl.n - m*m
	if m <= 0 {
		return Prior{}
	}
	a := float64(MaxPriorChanges)
	if v > 0 {
		a = min(max(m*m/v, minPriorChanges), MaxPriorChanges)
	}
	return Prior{Changes: a, Hours: a / m}
}

// EstimateWith is Estimate with the group prior pr in place of the
// Policy's fixed Options.Prior: pr's Changes pseudo-changes over its Hours
// enter the likelihood as a Poisson count and its exposure (the posterior
// mode of the rate under a Gamma(Changes+1, Hours) prior). A page with no
// interval of its own gets the posterior mean from its first visit's
// Last-Modified age (Estimate.Age) or, without one, the prior's mean
// (Estimate.FromPrior).
// With the zero Prior it is Estimate.
func (p *Policy) EstimateWith(h History, pr Prior) Estimate {
	if !pr.valid() {
		return p.Estimate(h)
	}
	if h.intervals <= 0 {
		return p.ageEstimate(h, pr)
	}
	return p.estimate(h, pr)
}
