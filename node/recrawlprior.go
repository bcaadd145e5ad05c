package node

import (
	"strconv"
	"strings"
	"time"

	"github.com/trawl-crawler/trawl/internal/store/schedule"
	"github.com/trawl-crawler/trawl/job"
	"github.com/trawl-crawler/trawl/recrawl"
)

// Group priors of a continuous job: what the pages of a site section
// (origin and first path segment), of an origin, and of the whole job
// have shown of their change rates, as the prior of each page's estimate
// (recrawl.Pool, Policy.EstimateWith). A page fetched once starts from
// its section's rate instead of one interval for all; a page fetched a
// few times is pulled towards it. The freshness scan refits them from the
// rates the pages' own visits show (schedule.Entry.Own, of entries
// Learned), never from the estimates a prior shrank, so that a refit from
// unchanged pages gives the same prior; reschedule reads them without a
// lock.
//
// A page whose site states how often it changes (a sitemap's
// <changefreq>, urlstate.Record.Stated) is in one more group, its hint
// group: the pages of its origin stating the same interval. Its prior is
// that group's fit once the group has enough learned pages (what such
// statements turned out to mean on this site), else the statement itself
// (recrawl.HintPrior), before its section's: a site's word on one page
// is closer to the page than what its neighbours showed, and a site whose
// word is wrong is believed only until its pages have been seen. Only
// where the origin's pages state two intervals or more: a site that gives
// every page one value (the commonest sitemap) tells them no apart, and
// its pages take their section's prior as if it had said nothing. A hint
// group pools only pages seen unchanged at least once: a page changed at
// every visit shows only that it changes at least that often, which is
// no evidence against a statement that it changes faster (pooled, such
// pages had a site's true "hourly" taken for "daily").

// groupPriors are one job's fitted priors; only valid ones are kept.
type groupPriors struct {
	job      recrawl.Prior
	origins  map[string]recrawl.Prior
	sections map[string]recrawl.Prior
	hints    map[string]recrawl.Prior
	// telling is false for each origin of which minUniform pages or more
	// were counted, all stating one interval: its statements tell its
	// pages no apart (a site that states one value for every page says
	// nothing its sections do not); absent for the others
	telling map[string]bool
}

// prior returns the prior of the page at url, which its site states to
// change every stated (0: no statement): where its origin's pages state
// more than one interval (or before any scan), its hint group's if that
// has enough learned pages, else the statement's; otherwise its
// section's if the section has enough learned pages, else its origin's,
// else the job's, as if it stated nothing.
func (g *groupPriors) prior(url string, stated time.Duration) recrawl.Prior {
	origin, section := groupsOf(url)
	if stated > 0 && g.tells(origin) {
		if pr, ok := g.hintPrior(origin, stated); ok {
			return pr
		}
		return recrawl.HintPrior(stated)
	}
	if g == nil {
		return recrawl.Prior{}
	}
	if pr, ok := g.sections[section]; ok {
		return pr
	}
	if pr, ok := g.origins[origin]; ok {
		return pr
	}
	return g.job
}

// tells reports whether origin's statements are to be believed: unless
// minUniform of its pages or more were counted, all stating one interval.
func (g *groupPriors) tells(origin string) bool {
	if g == nil {
		return true
	}
	tells, judged := g.telling[origin]
	return tells || !judged
}

func (g *groupPriors) hintPrior(origin string, stated time.Duration) (recrawl.Prior, bool) {
	if g == nil {
		return recrawl.Prior{}, false
	}
	pr, ok := g.hints[hintGroup(origin, stated)]
	return pr, ok
}

// hintGroup is the key of the hint group of origin's pages stating an
// interval of stated.
func hintGroup(origin string, stated time.Duration) string {
	return origin + " " + strconv.FormatInt(int64(stated/time.Second), 10)
}

// groupsOf returns the groups of a canonical URL: its origin
// (scheme://host[:port]) and its section, the origin and the first path
// segment ("https://a.example/news/"); a page at the root ("/",
// "/about.html") is in the section origin + "/". A URL without a path
// is its origin and the root section.
func groupsOf(url string) (origin, section string) {
	i := strings.Index(url, "://")
	if i < 0 {
		return url, url + "/"
	}
	j := strings.IndexByte(url[i+3:], '/')
	if j < 0 {
		return url, url + "/"
	}
	origin = url[:i+3+j]
	path := url[i+3+j+1:]
	k := strings.IndexAny(path, "/?#")
	if k < 0 || path[k] != '/' {
		return origin, origin + "/"
	}
	return origin, url[:i+3+j+1+k+1]
}

// priorPools gathers one job's learned rates in a scan.
type priorPools struct {
	job      recrawl.Pool
	origins  map[string]*recrawl.Pool
	sections map[string]*recrawl.Pool
	hints    map[string]*recrawl.Pool
	// stated holds, per origin, the first interval its entries state and
	// whether another was seen
	stated map[string]statedSeen
}

type statedSeen struct {
	first time.Duration
	more  bool
	n     int // entries stating an interval
}

// minUniform is the fewest pages of an origin, all stating one interval,
// from which the origin is taken to state one value everywhere: fewer
// may be the first pages of a site whose others state other values.
const minUniform = 8

// add counts the rate schedule entry e's page showed by itself, if it
// was learned (an entry written before Own existed: its estimate), and
// the interval it states.
func (pp *priorPools) add(e schedule.Entry) {
	if e.Stated > 0 {
		origin, _ := groupsOf(e.URL)
		if pp.stated == nil {
			pp.stated = make(map[string]statedSeen)
		}
		seen, ok := pp.stated[origin]
		if !ok {
			seen.first = e.Stated
		}
		seen.more = seen.more || seen.first != e.Stated
		seen.n++
		pp.stated[origin] = seen
	}
	r := e.Own
	if r <= 0 {
		r = e.Rate
	}
	if !e.Learned || r <= 0 {
		return
	}
	est := recrawl.Estimate{Rate: recrawl.Rate(r), Intervals: 1}
	pp.job.Add(est)
	origin, section := groupsOf(e.URL)
	addTo(&pp.origins, origin, est)
	addTo(&pp.sections, section, est)
	// A censored page (changed at every visit) is only a lower bound on
	// its rate: it says nothing against what its site states.
	if e.Stated > 0 && !e.Censored {
		addTo(&pp.hints, hintGroup(origin, e.Stated), est)
	}
}

// addTo adds est to the pool of group key in *m, making both if missing.
func addTo(m *map[string]*recrawl.Pool, key string, est recrawl.Estimate) {
	if *m == nil {
		*m = make(map[string]*recrawl.Pool)
	}
	pl := (*m)[key]
	if pl == nil {
		pl = &recrawl.Pool{}
		(*m)[key] = pl
	}
	pl.Add(est)
}

// priors fits the pools' priors.
func (pp *priorPools) priors() *groupPriors {
	g := &groupPriors{job: pp.job.Prior(), origins: fit(pp.origins), sections: fit(pp.sections), hints: fit(pp.hints),
		telling: make(map[string]bool)}
	for origin, seen := range pp.stated {
		if !seen.more && seen.n >= minUniform {
			g.telling[origin] = false // one value everywhere
		}
	}
	return g
}

func fit(pools map[string]*recrawl.Pool) map[string]recrawl.Prior {
	out := make(map[string]recrawl.Prior)
	for k, pl := range pools {
		if pr := pl.Prior(); pr.Rate() > 0 {
			out[k] = pr
		}
	}
	return out
}

// setPriors replaces the group priors of every job in pools (a job the
// scan found no entry of keeps none).
func (s *recrawlScheduler) setPriors(pools map[job.ID]*priorPools) {
	m := make(map[job.ID]*groupPriors, len(pools))
	for id, pp := range pools {
		m[id] = pp.priors()
	}
	s.priors.Store(&m)
}

// priorOf returns the group prior of job id's page at url, which its site
// states to change every stated (0: no statement).
func (s *recrawlScheduler) priorOf(id job.ID, url string, stated time.Duration) recrawl.Prior {
	var g *groupPriors
	if m := s.priors.Load(); m != nil {
		g = (*m)[id]
	}
	return g.prior(url, stated)
}
