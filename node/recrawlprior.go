package node

import (
	"strings"

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

// groupPriors are one job's fitted priors; only valid ones are kept.
type groupPriors struct {
	job      recrawl.Prior
	origins  map[string]recrawl.Prior
	sections map[string]recrawl.Prior
}

// prior returns the prior of the page at url: its section's if the
// section has enough learned pages, else its origin's, else the job's.
func (g *groupPriors) prior(url string) recrawl.Prior {
	if g == nil {
		return recrawl.Prior{}
	}
	origin, section := groupsOf(url)
	if pr, ok := g.sections[section]; ok {
		return pr
	}
	if pr, ok := g.origins[origin]; ok {
		return pr
	}
	return g.job
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
}

// add counts the rate schedule entry e's page showed by itself, if it
// was learned (an entry written before Own existed: its estimate).
func (pp *priorPools) add(e schedule.Entry) {
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
	for _, g := range []struct {
		m   *map[string]*recrawl.Pool
		key string
	}{{&pp.origins, origin}, {&pp.sections, section}} {
		if *g.m == nil {
			*g.m = make(map[string]*recrawl.Pool)
		}
		pl := (*g.m)[g.key]
		if pl == nil {
			pl = &recrawl.Pool{}
			(*g.m)[g.key] = pl
		}
		pl.Add(est)
	}
}

// priors fits the pools' priors.
func (pp *priorPools) priors() *groupPriors {
	g := &groupPriors{job: pp.job.Prior(), origins: fit(pp.origins), sections: fit(pp.sections)}
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

// priorOf returns the group prior of job id's page at url.
func (s *recrawlScheduler) priorOf(id job.ID, url string) recrawl.Prior {
	m := s.priors.Load()
	if m == nil {
		return recrawl.Prior{}
	}
	return (*m)[id].prior(url)
}
