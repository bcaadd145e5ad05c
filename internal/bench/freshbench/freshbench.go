// Package freshbench is the freshness benchmark: a simulated
// web whose pages change as Poisson processes at mixed rates, recrawled at
// a fixed fetch budget by uniform recrawl, Nutch's adaptive schedule and
// trawl's recrawl.Policy (rates learned from what its fetches saw, and
// with the true rates as an oracle), with freshness and age sampled over
// time. Everything is deterministic for a seed; Run is safe to call from
// several goroutines at once.
package freshbench

import (
	"container/heap"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/trawl-crawler/trawl/recrawl"
)

// Config is one benchmark run.
type Config struct {
	Pages int     // pages on the web
	Days  float64 // simulated days, warm-up included
	// Warmup is the number of days at the start not sampled.
	Warmup float64
	// Budget is the fetches per hour every policy gets; 0 means
	// Pages/72: each page once every 3 days on average.
	Budget float64
	Seed   uint64
	// Mix names the web's mix of change rates: "web" or "churn" (Mixes).
	Mix string
	// LastModified is the share of pages whose server sends a true
	// Last-Modified date; Lying the share whose server sends the time of
	// the request instead. With either above 0, Run adds the row
	// "trawl, Last-Modified".
	LastModified, Lying float64
	// Sample is the time between freshness samples; 0 means 1 hour.
	Sample time.Duration
	// SectionPages groups the pages in sections of this many (a site's
	// section, a host): the pages of a section are of one class of the
	// mix, each with its own rate within the class's range. trawl's rows
	// pool the estimates of a section into a prior for its pages
	// (recrawl.Pool), and the whole web's where a section has none (the
	// node's job prior); the row "trawl, no pooling" uses no prior. 0 or
	// 1: every page on its own, its class drawn alone.
	SectionPages int
	// ChangeFreq is the share of pages whose sitemap states a
	// <changefreq> near their true mean interval (the nearest of hourly,
	// daily, weekly, monthly and yearly, in log scale); ChangeFreqWrong
	// the share stating "daily" whatever their rate (a site giving every
	// page one value). With either above 0, Run adds the row
	// "trawl, changefreq": a stated page starts from its statement's
	// prior (recrawl.HintPrior) and, once enough pages stating the same
	// value have been seen twice, from what they showed (a hint group,
	// as the node pools one site's pages by statement).
	ChangeFreq, ChangeFreqWrong float64
}

// Validate reports every bad field by name.
func (c Config) Validate() error {
	var errs []error
	bad := func(field string, v any, why string) {
		errs = append(errs, fmt.Errorf("freshbench: %s = %v: %s", field, v, why))
	}
	if c.Pages < 1 {
		bad("Pages", c.Pages, "want >= 1")
	}
	if !(c.Days > 0) {
		bad("Days", c.Days, "want > 0")
	}
	if c.Warmup < 0 || c.Warmup >= c.Days {
		bad("Warmup", c.Warmup, "want 0 <= Warmup < Days")
	}
	if c.Budget < 0 || math.IsNaN(c.Budget) {
		bad("Budget", c.Budget, "negative")
	}
	if _, ok := Mixes[c.Mix]; !ok {
		bad("Mix", fmt.Sprintf("%q", c.Mix), "want one of "+strings.Join(mixNames(), ", "))
	}
	if c.LastModified < 0 || c.Lying < 0 || c.LastModified+c.Lying > 1 {
		bad("LastModified", fmt.Sprintf("%v (Lying %v)", c.LastModified, c.Lying), "shares must be >= 0 and sum to at most 1")
	}
	if c.Sample < 0 {
		bad("Sample", c.Sample, "negative")
	}
	if c.SectionPages < 0 {
		bad("SectionPages", c.SectionPages, "negative")
	}
	if c.ChangeFreq < 0 || c.ChangeFreqWrong < 0 || c.ChangeFreq+c.ChangeFreqWrong > 1 {
		bad("ChangeFreq", fmt.Sprintf("%v (ChangeFreqWrong %v)", c.ChangeFreq, c.ChangeFreqWrong), "shares must be >= 0 and sum to at most 1")
	}
	return errors.Join(errs...)
}

// Class is one kind of page in a mix: a share of the pages whose mean time
// between changes is drawn log-uniformly from [Lo, Hi]; Hi == 0 means the
// page never changes.
type Class struct {
	Name   string
	Share  float64
	Lo, Hi time.Duration
}

const (
	hour = time.Hour
	day  = 24 * hour
)

// Mixes are the webs Run can simulate.
//
// "web" follows the shape of Cho and Garcia-Molina's measurement of 720,000
// pages visited daily for four months ("The evolution of the web and
// implications for an incremental crawler", VLDB 2000), as we recall it:
// about 23% of pages changed within a day (of which we assume 10 points
// change within hours), 15% within a week, 16% within a month, 16% within
// four months and 30% not within four months. The ranges inside each
// class are our assumption.
//
// "churn" is a web where half the pages change faster than the budget can
// follow (feeds, listings, pages with counters): the case where dropping
// them pays most. Its shares are an assumption, not a measurement.
var Mixes = map[string][]Class{
	"web": {
		{"hours", 0.10, 15 * time.Minute, 6 * hour},
		{"day", 0.13, 6 * hour, day},
		{"week", 0.15, day, 7 * day},
		{"month", 0.16, 7 * day, 30 * day},
		{"4 months", 0.16, 30 * day, 120 * day},
		{"rarely", 0.30, 120 * day, 5 * 365 * day},
	},
	"churn": {
		{"hours", 0.45, 15 * time.Minute, 4 * hour},
		{"day", 0.20, 8 * hour, 2 * day},
		{"week", 0.10, 2 * day, 14 * day},
		{"rarely", 0.25, 120 * day, 5 * 365 * day},
	},
}

func mixNames() []string {
	var n []string
	for k := range Mixes {
		n = append(n, k)
	}
	slices.Sort(n)
	return n
}

// Row is one policy's outcome.
type Row struct {
	Policy string `json:"policy"`
	// Freshness is the mean, over samples after the warm-up, of the share
	// of pages whose stored copy is the live page.
	Freshness float64 `json:"freshness"`
	// AgeHours is the mean over the same samples of the mean age: the
	// time since the live page first differed from the stored copy, 0
	// while it has not.
	AgeHours float64 `json:"age_hours"`
	// Fetches is the number of fetches made; every policy gets the same.
	Fetches int `json:"fetches"`
	// RateError is, for trawl's rows, the median of |estimate - true| /
	// true over the pages that change, at the end; 0 otherwise.
	RateError float64 `json:"rate_error,omitempty"`
	// LyingTrusted counts pages with a lying Last-Modified whose dates the
	// estimator trusted at the end (trawl's Last-Modified row).
	LyingTrusted int `json:"lying_trusted,omitempty"`
	// HonestTrusted counts pages with a true Last-Modified whose dates it
	// trusted at the end.
	HonestTrusted int `json:"honest_trusted,omitempty"`
	// GapShare is the share of the reachable gain this policy captured:
	// (F - U) / (O - U), F its freshness, U uniform's and O the true-rate
	// optimum's at the same budget, in the same run (GapShare). 0 for
	// uniform, 1 for the optimum; negative when behind uniform.
	GapShare float64 `json:"gap_share"`
	// Classes break freshness and fetches down by class of the mix.
	Classes []ClassRow `json:"classes"`
}

// ClassRow is a policy's outcome on one class of pages.
type ClassRow struct {
	Class     string  `json:"class"`
	Pages     int     `json:"pages"`
	Freshness float64 `json:"freshness"`
	// FetchShare is the share of all fetches after the warm-up spent on
	// the class.
	FetchShare float64 `json:"fetch_share"`
}

// Result is a whole run.
type Result struct {
	Pages        int     `json:"pages"`
	Days         float64 `json:"days"`
	Warmup       float64 `json:"warmup_days"`
	Budget       float64 `json:"budget_per_hour"`
	Seed         uint64  `json:"seed"`
	Mix          string  `json:"mix"`
	LastModified float64 `json:"last_modified_share,omitempty"`
	Lying        float64 `json:"lying_share,omitempty"`
	// ChangeFreq and ChangeFreqWrong are Config's shares of pages with a
	// stated <changefreq>, near their rate or "daily" whatever it is.
	ChangeFreq      float64 `json:"changefreq_share,omitempty"`
	ChangeFreqWrong float64 `json:"changefreq_wrong_share,omitempty"`
	Rows            []Row   `json:"rows"`
	// TrawlOverUniform is trawl's freshness over uniform's; OracleOverUniform
	// the same for the oracle: the most any schedule of fixed intervals
	// can gain on this web at this budget.
	TrawlOverUniform  float64 `json:"trawl_over_uniform"`
	OracleOverUniform float64 `json:"oracle_over_uniform"`
}

// Row returns the row of the named policy, and whether there is one.
func (r Result) Row(policy string) (Row, bool) {
	for _, x := range r.Rows {
		if x.Policy == policy {
			return x, true
		}
	}
	return Row{}, false
}

// Policy names in Result.Rows.
const (
	Uniform         = "uniform"
	Nutch           = "nutch"
	Trawl           = "trawl"
	TrawlLM         = "trawl, Last-Modified"
	Oracle          = "trawl, true rates"
	TrawlAlone      = "trawl, no pooling"
	TrawlCF         = "trawl, changefreq"
	lmNone     byte = 0
	lmHonest   byte = 1
	lmLying    byte = 2
	baseEpoch       = 1767225600 // 2026-01-01T00:00:00Z
)

// web is the pages' fixed properties, the same for every policy.
type web struct {
	rates []float64 // changes per hour
	class []int     // index in the mix
	lm    []byte
	hint  []time.Duration // the interval the page's sitemap states; 0 none
	order []int           // initial crawl order
}

func newWeb(c Config) web {
	rng := rand.New(rand.NewPCG(c.Seed, 0x11))
	w := web{rates: make([]float64, c.Pages), class: make([]int, c.Pages), lm: make([]byte, c.Pages), hint: make([]time.Duration, c.Pages)}
	hints := rand.New(rand.NewPCG(c.Seed, 0x12)) // its own stream: other rows' webs do not move with it
	classes := Mixes[c.Mix]
	for i := range w.rates {
		u := rng.Float64()
		var cl Class
		for k := range classes {
			cl, w.class[i] = classes[k], k
			if u < cl.Share {
				break
			}
			u -= cl.Share
		}
		if sp := c.SectionPages; sp > 1 && i%sp != 0 {
			w.class[i] = w.class[i-i%sp] // the section's class
			cl = classes[w.class[i]]
		}
		if cl.Hi > 0 {
			lo, hi := math.Log(cl.Lo.Hours()), math.Log(cl.Hi.Hours())
			w.rates[i] = 1 / math.Exp(lo+rng.Float64()*(hi-lo))
		}
		switch v := rng.Float64(); {
		case v < c.LastModified:
			w.lm[i] = lmHonest
		case v < c.LastModified+c.Lying:
			w.lm[i] = lmLying
		}
		switch v := hints.Float64(); {
		case v < c.ChangeFreq:
			w.hint[i] = nearestFreq(w.rates[i])
		case v < c.ChangeFreq+c.ChangeFreqWrong:
			w.hint[i] = day
		}
	}
	w.order = rng.Perm(c.Pages)
	return w
}

// freqs are the periods a sitemap's <changefreq> can state
// (sitemap.ChangeFreq.Interval).
var freqs = []time.Duration{hour, day, 7 * day, 30 * day, 365 * day}

// nearestFreq is the stated period nearest, in log scale, to the mean
// interval of a page changing rate times an hour (yearly for a page that
// never changes).
func nearestFreq(rate float64) time.Duration {
	if rate <= 0 {
		return freqs[len(freqs)-1]
	}
	best, dist := freqs[0], math.Inf(1)
	for _, f := range freqs {
		if d := math.Abs(math.Log(f.Hours() * rate)); d < dist {
			best, dist = f, d
		}
	}
	return best
}

// Run simulates every policy on the web of c and returns their rows.
func Run(c Config) (Result, error) {
	if err := c.Validate(); err != nil {
		return Result{}, err
	}
	if c.Budget == 0 {
		c.Budget = float64(c.Pages) / 72
	}
	if c.Sample == 0 {
		c.Sample = hour
	}
	w := newWeb(c)
	res := Result{Pages: c.Pages, Days: c.Days, Warmup: c.Warmup, Budget: c.Budget, Seed: c.Seed, Mix: c.Mix, LastModified: c.LastModified, Lying: c.Lying,
		ChangeFreq: c.ChangeFreq, ChangeFreqWrong: c.ChangeFreqWrong}
	initial := hoursToDuration(float64(c.Pages) / c.Budget)
	opts := recrawl.Options{InitialInterval: initial}
	pol, err := recrawl.New(opts)
	if err != nil {
		return res, err
	}
	policies := []string{Uniform, Nutch, Trawl, Oracle}
	if c.LastModified > 0 || c.Lying > 0 {
		policies = append(policies, TrawlLM)
	}
	if c.ChangeFreq > 0 || c.ChangeFreqWrong > 0 {
		policies = append(policies, TrawlCF)
	}
	policies = append(policies, TrawlAlone)
	for _, name := range policies {
		res.Rows = append(res.Rows, simulate(c, w, pol, name, initial))
	}
	u, _ := res.Row(Uniform)
	t, _ := res.Row(Trawl)
	o, _ := res.Row(Oracle)
	if u.Freshness > 0 {
		res.TrawlOverUniform = t.Freshness / u.Freshness
		res.OracleOverUniform = o.Freshness / u.Freshness
	}
	for i := range res.Rows {
		res.Rows[i].GapShare = recrawl.GapShare(res.Rows[i].Freshness, u.Freshness, o.Freshness)
	}
	return res, nil
}

// page is one page's simulated state under one policy.
type page struct {
	rng         *rand.Rand
	nextChange  float64 // hours; the first change after the last fetch, once fetched
	lastChange  float64 // the last change so far (for Last-Modified)
	fetched     bool
	state       recrawl.Page
	due         float64
	index, slot int
}

func (p *page) advance(rate, t float64) {
	for p.nextChange <= t {
		p.lastChange = p.nextChange
		p.nextChange += p.rng.ExpFloat64() / rate
	}
}

func simulate(c Config, w web, pol *recrawl.Policy, name string, initial time.Duration) Row {
	n := c.Pages
	pages := make([]page, n)
	q := make(queue, n)
	step := 1 / c.Budget
	for i := range pages {
		p := &pages[i]
		p.rng = rand.New(rand.NewPCG(c.Seed, uint64(i)+1<<32))
		// A web that has been changing for long (stationary): a changing
		// page's last change before the start is as far back as its
		// rate makes it (exponential, as its next is ahead); a page that
		// never changes was last changed some time in the past year.
		p.nextChange, p.lastChange = math.Inf(1), -365*24*p.rng.Float64()
		if r := w.rates[i]; r > 0 {
			p.nextChange = p.rng.ExpFloat64() / r
			p.lastChange = -p.rng.ExpFloat64() / r
		}
		p.index = i
		q[i] = p
	}
	for slot, i := range w.order {
		pages[i].due = float64(slot) * step
	}
	heap.Init(&q)

	var sched recrawl.Schedule
	var fixed []time.Duration // oracle intervals
	mu := 0.0
	// Group priors and mu, refitted once a day as the node does at its
	// freshness scans: each section's pages' estimates from their own
	// visits pooled (a section of one page has none), else the whole
	// web's (the node's job prior); mu solved from a census of the
	// pages' estimates.
	sp := max(c.SectionPages, 1)
	sections := make([]recrawl.Prior, (n+sp-1)/sp)
	priors := make([]recrawl.Prior, n)
	useCF := name == TrawlCF
	// As the node: statements count only where the site states more than
	// one interval (the bench's web is one site).
	telling := false
	var first time.Duration
	for _, h := range w.hint {
		switch {
		case h == 0:
		case first == 0:
			first = h
		case h != first:
			telling = true
		}
	}
	solve := func() {
		pools := make([]recrawl.Pool, len(sections))
		hintPools := make(map[time.Duration]*recrawl.Pool)
		var all recrawl.Pool
		for i := range pages {
			e := pol.Estimate(pages[i].state.History)
			pools[i/sp].Add(e)
			all.Add(e)
			// A censored page (changed at every visit) is only a lower
			// bound on its rate: it says nothing against its statement.
			if h := w.hint[i]; useCF && h > 0 && !e.Censored {
				if hintPools[h] == nil {
					hintPools[h] = &recrawl.Pool{}
				}
				hintPools[h].Add(e)
			}
		}
		if name != TrawlAlone {
			job := all.Prior()
			for k := range pools {
				if sections[k] = pools[k].Prior(); sections[k].Rate() <= 0 {
					sections[k] = job
				}
			}
		}
		for i := range priors {
			priors[i] = sections[i/sp]
			h := w.hint[i]
			switch {
			case !useCF || h == 0:
			case telling:
				priors[i] = recrawl.HintPrior(h)
				if pl := hintPools[h]; pl != nil && pl.Prior().Rate() > 0 {
					priors[i] = pl.Prior()
				}
			}
		}
		var census recrawl.Census
		for i := range pages {
			census.Add(pol.EstimateWith(pages[i].state.History, priors[i]), 1)
		}
		mu = pol.SolveCensus(&census, recrawl.Rate(c.Budget))
	}
	switch name {
	case Uniform:
		sched = recrawl.Uniform(initial)
	case Nutch:
		o := pol.Options()
		sched = recrawl.Nutch{Initial: initial, Min: o.MinInterval, Max: o.MaxInterval}
	case Oracle:
		d := make([]recrawl.Demand, n)
		for i, r := range w.rates {
			d[i].Estimate = recrawl.Estimate{Rate: recrawl.Rate(r), Intervals: 1}
		}
		fixed = pol.Solve(d, recrawl.Rate(c.Budget)).Intervals
	}
	useLM := name == TrawlLM

	end := c.Days * 24
	nextSample := c.Warmup * 24
	sampleStep := c.Sample.Hours()
	nextSolve := 0.0
	var freshSum, ageSum float64
	samples, fetches := 0, 0
	classes := Mixes[c.Mix]
	classPages := make([]int, len(classes))
	for _, k := range w.class {
		classPages[k]++
	}
	classFresh := make([]float64, len(classes))
	classFetches := make([]int, len(classes))
	warm, sampledFetches := c.Warmup*24, 0
	fresh := make([]int, len(classes))
	for t := 0.0; t < end; t += step {
		for nextSample <= t {
			clear(fresh)
			all, age := 0, 0.0
			for i := range pages {
				p := &pages[i]
				switch {
				case !p.fetched:
					age += nextSample
				case nextSample < p.nextChange:
					fresh[w.class[i]]++
					all++
				default:
					age += nextSample - p.nextChange
				}
			}
			for k, f := range fresh {
				if classPages[k] > 0 {
					classFresh[k] += float64(f) / float64(classPages[k])
				}
			}
			freshSum += float64(all) / float64(n)
			ageSum += age / float64(n)
			samples++
			nextSample += sampleStep
		}
		if (name == Trawl || name == TrawlLM || name == TrawlAlone || name == TrawlCF) && t >= nextSolve {
			solve()
			sched = pol.Schedule(mu)
			nextSolve += 24
		}
		p := heap.Pop(&q).(*page)
		i := p.index
		changed := p.fetched && p.nextChange <= t
		if r := w.rates[i]; r > 0 {
			p.advance(r, t)
		}
		v := recrawl.Visit{At: at(t), Changed: changed}
		if useLM {
			switch w.lm[i] {
			case lmHonest:
				v.LastModified = at(p.lastChange).Truncate(time.Second)
			case lmLying:
				v.LastModified = at(t).Truncate(time.Second)
			}
		}
		p.fetched = true
		fetches++
		if t >= warm {
			classFetches[w.class[i]]++
			sampledFetches++
		}
		var next time.Duration
		if fixed != nil {
			p.state.History.Last = v.At
			next = fixed[i]
		} else {
			p.state.Prior = priors[i]
			p.state, next = sched.Visit(p.state, v)
		}
		p.due = t + next.Hours()
		heap.Push(&q, p)
	}
	row := Row{Policy: name, Fetches: fetches}
	if samples > 0 {
		row.Freshness = freshSum / float64(samples)
		row.AgeHours = ageSum / float64(samples)
	}
	for k, cl := range classes {
		cr := ClassRow{Class: cl.Name, Pages: classPages[k]}
		if samples > 0 {
			cr.Freshness = classFresh[k] / float64(samples)
		}
		if sampledFetches > 0 {
			cr.FetchShare = float64(classFetches[k]) / float64(sampledFetches)
		}
		row.Classes = append(row.Classes, cr)
	}
	if name == Trawl || name == TrawlLM || name == TrawlAlone || name == TrawlCF {
		var errs []float64
		for i := range pages {
			h := pages[i].state.History
			if r := w.rates[i]; r > 0 {
				if e := pol.Estimate(h); e.Intervals > 0 {
					errs = append(errs, math.Abs(float64(e.Rate)-r)/r)
				}
			}
			if h.LastModifiedTrusted() {
				switch w.lm[i] {
				case lmHonest:
					row.HonestTrusted++
				case lmLying:
					row.LyingTrusted++
				}
			}
		}
		if len(errs) > 0 {
			sort.Float64s(errs)
			row.RateError = errs[len(errs)/2]
		}
	}
	return row
}

func at(h float64) time.Time {
	return time.Unix(baseEpoch, 0).UTC().Add(time.Duration(h * float64(time.Hour)))
}

func hoursToDuration(h float64) time.Duration { return time.Duration(h * float64(time.Hour)) }

// queue orders pages by due time, then by index so that ties do not depend
// on the heap's history.
type queue []*page

func (q queue) Len() int { return len(q) }
func (q queue) Less(a, b int) bool {
	if q[a].due != q[b].due {
		return q[a].due < q[b].due
	}
	return q[a].index < q[b].index
}
func (q queue) Swap(a, b int) { q[a], q[b] = q[b], q[a] }
func (q *queue) Push(x any)   { *q = append(*q, x.(*page)) }
func (q *queue) Pop() any     { old := *q; x := old[len(old)-1]; *q = old[:len(old)-1]; return x }

// Print writes r as a table.
func Print(out io.Writer, r Result) {
	fmt.Fprintf(out, "freshness: %d pages, mix %q, %.0f days (first %.0f not sampled), budget %.1f fetches/hour (each page every %.1f h on average), seed %d\n",
		r.Pages, r.Mix, r.Days, r.Warmup, r.Budget, float64(r.Pages)/r.Budget, r.Seed)
	if r.LastModified > 0 || r.Lying > 0 {
		fmt.Fprintf(out, "Last-Modified: true on %.0f%% of pages, the request time on %.0f%%\n", 100*r.LastModified, 100*r.Lying)
	}
	if r.ChangeFreq > 0 || r.ChangeFreqWrong > 0 {
		fmt.Fprintf(out, "sitemap changefreq: near the true rate on %.0f%% of pages, \"daily\" whatever the rate on %.0f%%\n", 100*r.ChangeFreq, 100*r.ChangeFreqWrong)
	}
	fmt.Fprintf(out, "%-22s %10s %10s %10s %9s %10s\n", "policy", "freshness", "gap share", "age (h)", "fetches", "rate err")
	for _, x := range r.Rows {
		e := "-"
		if x.RateError > 0 {
			e = fmt.Sprintf("%.0f%%", 100*x.RateError)
		}
		fmt.Fprintf(out, "%-22s %10.3f %10.2f %10.1f %9d %10s\n", x.Policy, x.Freshness, x.GapShare, x.AgeHours, x.Fetches, e)
	}
	fmt.Fprintf(out, "\nby class: freshness / share of fetches\n%-22s", "policy")
	if len(r.Rows) > 0 {
		for _, cr := range r.Rows[0].Classes {
			fmt.Fprintf(out, " %13s", fmt.Sprintf("%s (%d)", cr.Class, cr.Pages))
		}
	}
	fmt.Fprintln(out)
	for _, x := range r.Rows {
		fmt.Fprintf(out, "%-22s", x.Policy)
		for _, cr := range x.Classes {
			fmt.Fprintf(out, " %13s", fmt.Sprintf("%.2f / %2.0f%%", cr.Freshness, 100*cr.FetchShare))
		}
		fmt.Fprintln(out)
	}
	fmt.Fprintf(out, "\ntrawl / uniform freshness: %.3f (true rates: %.3f)\n", r.TrawlOverUniform, r.OracleOverUniform)
	fmt.Fprintln(out, "gap share: (F - uniform) / (true rates - uniform), the share of the reachable gain captured")
	if x, ok := r.Row(TrawlLM); ok {
		fmt.Fprintf(out, "Last-Modified trusted at the end: %d pages with true dates, %d with lying ones\n", x.HonestTrusted, x.LyingTrusted)
	}
}
