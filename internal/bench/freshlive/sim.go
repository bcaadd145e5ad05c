package freshlive

import (
	"container/heap"
	"errors"
	"math"
	"math/rand/v2"
	"time"

	"github.com/trawl-crawler/trawl/internal/testkit/testweb"
	"github.com/trawl-crawler/trawl/job"
	"github.com/trawl-crawler/trawl/recrawl"
)

// Simulate runs the crawls Run would, without HTTP and without waiting:
// each schedule's decisions (recrawl.Policy's Next, or recrawl.Nutch) over
// a web of the same shape whose pages change as Poisson processes, fetched
// when due as the host's gap allows, judged as Run judges (F, U, O and the
// gap share at the budget spent, fetches by class), for seeds c.Seed,
// c.Seed+1, ... (runs of them). It is a model of the live crawl, for
// trying a change in seconds before the ten minutes Run takes:
//   - the web: per host 15-25 pages, c.Never percent never changing, the
//     rest log-uniform in [ChangeMin, ChangeMax], every page at its first
//     version ten minutes before the crawl (as Run's web); 70% of hosts
//     send a true Last-Modified, the others none;
//   - the crawl: every page known at the start, in a random order; a
//     fetch takes no time; one host fetches at most once per c.Gap;
//   - trawl's schedule as the node runs it without a budget: the
//     multiplier at RecrawlMin, group priors refitted every 30 s from the
//     rates the pages' own visits show (a host's pages, else the whole
//     crawl's), each visit's interval from Policy.Next;
//   - not modelled: link discovery, the node's levelled feed, fetch and
//     politeness delays beyond the gap, validators that lie, sitemaps.
func Simulate(c Config, runs int) ([]Result, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if c.Budget > 0 {
		return nil, errors.New("--budget: not simulated; run the live crawl")
	}
	c = c.withDefaults()
	pol, err := recrawl.New(recrawl.Options{MinInterval: c.RecrawlMin, MaxInterval: c.RecrawlMax})
	if err != nil {
		return nil, err
	}
	// Visits are folded into histories as the node folds them.
	hist := recrawl.Histories
	out := make([]Result, 0, runs)
	for k := range runs {
		rc := c
		rc.Seed = c.Seed + int64(k)
		w := newSimWeb(rc)
		res := Result{Config: rc, Simulated: true, Seed: rc.Seed}
		for _, sched := range rc.Schedules {
			rep := w.crawl(rc, pol, hist, sched)
			jd := rep.Judge(pol)
			res.Rows = append(res.Rows, Row{Schedule: sched, Pages: rep.Pages, Freshness: rep.Freshness, MeanAge: rep.MeanAge,
				Fetches: rep.Fetches, Budget: rep.Budget(), Uniform: jd.Uniform, Optimum: jd.Optimum, GapShare: jd.GapShare,
				Classes: jd.Classes})
		}
		out = append(out, res)
	}
	return out, nil
}

// simWeb is a simulated web: each page's host, true rate (changes a
// second; 0 never) and whether its host sends Last-Modified.
type simWeb struct {
	seed  uint64
	hosts int
	host  []int
	rate  []float64
	lm    []bool
}

// simLastModified is the share of hosts sending a true Last-Modified.
const simLastModified = 0.7

// simEpoch is how long before the crawl every page was at its first
// version.
const simEpoch = 600.0 // seconds

func newSimWeb(c Config) *simWeb {
	seed := uint64(c.Seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	w := &simWeb{seed: seed, hosts: c.Hosts}
	lo, hi := math.Log(c.ChangeMin.Seconds()), math.Log(c.ChangeMax.Seconds())
	for h := range c.Hosts {
		lm := rng.Float64() < simLastModified
		for range 15 + rng.IntN(11) {
			r := 0.0
			if rng.IntN(100) >= c.Never {
				r = 1 / math.Exp(lo+rng.Float64()*(hi-lo))
			}
			w.host, w.rate, w.lm = append(w.host, h), append(w.rate, r), append(w.lm, lm)
		}
	}
	return w
}

// simPage is one page's state in one schedule's crawl.
type simPage struct {
	i           int
	due         float64 // seconds from the start
	nextChange  float64
	changeTimes []float64 // of changes 1..version (the page's version is their number)
	fetched     bool
	copyVersion int // the version of the copy held
	hist        recrawl.History
	interval    time.Duration // Nutch's last
	own         float64       // the rate its own visits show, changes an hour; 0 if none
}

type simQueue []*simPage

func (q simQueue) Len() int { return len(q) }
func (q simQueue) Less(a, b int) bool {
	if q[a].due != q[b].due {
		return q[a].due < q[b].due
	}
	return q[a].i < q[b].i
}
func (q simQueue) Swap(a, b int) { q[a], q[b] = q[b], q[a] }
func (q *simQueue) Push(x any)   { *q = append(*q, x.(*simPage)) }
func (q *simQueue) Pop() any {
	o := *q
	x := o[len(o)-1]
	*q = o[:len(o)-1]
	return x
}

// simRefit is how often the group priors are refitted (the node's
// freshness scan).
const simRefit = 30.0 // seconds

// crawl runs schedule sched over w and reports as Server.Freshness does:
// pol is the job's policy (its bounds), hist the one visits are folded
// with.
// The changes are the same for every schedule (one stream per page).
func (w *simWeb) crawl(c Config, pol, hist *recrawl.Policy, sched string) testweb.FreshnessReport {
	n := len(w.rate)
	pages := make([]*simPage, n)
	changes := make([]*rand.Rand, n)
	q := make(simQueue, 0, n)
	order := rand.New(rand.NewPCG(w.seed, 2)).Perm(n)
	for k, i := range order {
		p := &simPage{i: i, due: float64(k) * 0.02, nextChange: math.Inf(1)}
		changes[i] = rand.New(rand.NewPCG(w.seed, 3+uint64(i)))
		if r := w.rate[i]; r > 0 {
			p.nextChange = -simEpoch + changes[i].ExpFloat64()/r
		}
		p.advance(w.rate[i], changes[i], 0)
		pages[i] = p
		q = append(q, p)
	}
	heap.Init(&q)
	mu := c.RecrawlMin.Hours()
	o := pol.Options()
	nutch := recrawl.Nutch{Initial: o.InitialInterval, Min: o.MinInterval, Max: o.MaxInterval}
	gap := c.Gap.Seconds()
	end := c.Duration.Seconds()
	from := end - c.Judged.Seconds()
	hostFree := make([]float64, w.hosts)
	var priors []recrawl.Prior
	nextFit := 0.0
	rep := testweb.FreshnessReport{Window: c.Judged, PageFetches: make([]int, n)}
	var freshSum, ageSum float64
	samples := 0
	nextSample := from
	sample := func(t float64) {
		fresh := 0
		for i, p := range pages {
			p.advance(w.rate[i], changes[i], t)
			switch {
			case !p.fetched:
				ageSum += t + simEpoch
			case p.copyVersion == p.version():
				fresh++
			default:
				ageSum += t - p.changeAfter(p.copyVersion)
			}
		}
		freshSum += float64(fresh) / float64(n)
		samples++
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return base.Add(time.Duration(s * float64(time.Second))) }
	for q.Len() > 0 {
		p := heap.Pop(&q).(*simPage)
		h := w.host[p.i]
		if t := hostFree[h]; t > p.due {
			p.due = t
			heap.Push(&q, p)
			continue
		}
		t := p.due
		for ; nextSample <= t && nextSample < end; nextSample += 0.25 {
			sample(nextSample)
		}
		if t >= end {
			break
		}
		if t >= nextFit {
			priors = w.fit(pages)
			nextFit = t + simRefit
		}
		hostFree[h] = t + gap
		p.advance(w.rate[p.i], changes[p.i], t)
		changed := p.fetched && p.copyVersion != p.version()
		p.fetched, p.copyVersion = true, p.version()
		if t >= from {
			rep.Fetches++
			rep.PageFetches[p.i]++
		}
		v := recrawl.Visit{At: at(t), Changed: changed}
		if w.lm[p.i] {
			v.LastModified = at(p.lastChange()).Truncate(time.Second)
		}
		p.hist = hist.Observe(p.hist, v)
		var iv time.Duration
		switch sched {
		case job.ScheduleNutch:
			pg := recrawl.Page{History: recrawl.History{Last: p.hist.Last}, Interval: p.interval}
			if p.hist.Visits == 1 {
				pg.History.Last = time.Time{}
			}
			_, iv = nutch.Visit(pg, v)
			p.interval = iv
		default:
			var est recrawl.Estimate
			est, iv = pol.Next(p.hist, priors[h], 1, mu, uint64(p.i)<<32|uint64(p.hist.Visits))
			p.own = 0
			if est.Intervals > 0 {
				p.own = float64(pol.Estimate(p.hist).Rate)
			}
		}
		p.due = t + iv.Seconds()
		heap.Push(&q, p)
	}
	for ; nextSample < end; nextSample += 0.25 {
		sample(nextSample)
	}
	rep.Pages = n
	for i := range pages {
		rep.Rates = append(rep.Rates, w.rate[i]*3600)
	}
	if samples > 0 {
		rep.Freshness = freshSum / float64(samples)
		rep.MeanAge = time.Duration(ageSum / float64(samples*n) * float64(time.Second))
	}
	return rep
}

// fit returns each host's prior: its pages' own rates pooled, else the
// whole crawl's, as the node's freshness scan fits them.
func (w *simWeb) fit(pages []*simPage) []recrawl.Prior {
	pools := make([]recrawl.Pool, w.hosts)
	var all recrawl.Pool
	for i, p := range pages {
		if p.own > 0 {
			e := recrawl.Estimate{Rate: recrawl.Rate(p.own), Intervals: 1}
			pools[w.host[i]].Add(e)
			all.Add(e)
		}
	}
	job := all.Prior()
	priors := make([]recrawl.Prior, w.hosts)
	for h := range pools {
		if priors[h] = pools[h].Prior(); priors[h].Rate() <= 0 {
			priors[h] = job
		}
	}
	return priors
}

// advance moves p's live version to time t.
func (p *simPage) advance(rate float64, rng *rand.Rand, t float64) {
	for p.nextChange <= t {
		p.changeTimes = append(p.changeTimes, p.nextChange)
		p.nextChange += rng.ExpFloat64() / rate
	}
}

// version is p's live version as of its last advance.
func (p *simPage) version() int { return len(p.changeTimes) }

// lastChange is the time of p's last change so far: the epoch if none.
func (p *simPage) lastChange() float64 {
	if n := len(p.changeTimes); n > 0 {
		return p.changeTimes[n-1]
	}
	return -simEpoch
}

// changeAfter is the time of the first change after version v.
func (p *simPage) changeAfter(v int) float64 { return p.changeTimes[v] }
