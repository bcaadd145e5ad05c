package job

import (
	"fmt"
	"maps"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Stats are a job's counters, updated by the node's workers without a
// shared lock except for the maps.
type Stats struct {
	start            atomic.Int64 // unix ns of the node's start of this job's run
	PagesStarted     atomic.Int64 // page fetches begun for the job (MaxPages counts these)
	Pages            atomic.Int64 // pages the job got: fetched for it, or shared from another job's fetch
	Shared           atomic.Int64 // of Pages, those another job's fetch answered (no request sent again)
	Requests         atomic.Int64 // HTTP requests sent for the job, robots.txt included
	RobotsFetches    atomic.Int64
	RobotsDisallowed atomic.Int64
	RobotsGaveUp     atomic.Int64 // URLs given up because their host's robots.txt stayed unavailable
	WaitGaveUp       atomic.Int64 // URLs given up because their host asked to wait past Spec.MaxWait
	Bytes            atomic.Int64 // body bytes archived for the job
	Discovered       atomic.Int64 // distinct URLs queued for the job, seeds included
	OutOfScope       atomic.Int64
	Excluded         atomic.Int64 // URLs an exclusion pattern matched: links found, queued URLs at their lease
	Duplicates       atomic.Int64 // URLs found (links, redirect targets, seeds) that the job's URL-seen gate had seen
	Revisits         atomic.Int64 // pages whose payload was archived already: written as revisit records, not parsed
	NearDuplicates   atomic.Int64 // pages whose main text resembles an archived page's at NearResemblance (links followed)
	BadLinks         atomic.Int64
	Recrawls         atomic.Int64 // fetches of pages the node had fetched before (by any job)
	NotModified      atomic.Int64 // of Recrawls, 304 answers to conditional requests: no body
	Changed          atomic.Int64 // of Recrawls, pages whose content differed from the stored copy
	BroughtForward   atomic.Int64 // recrawls moved to now by a sitemap's lastmod newer than the last fetch
	Sitemaps         atomic.Int64 // sitemap files fetched (answered) for the job
	SitemapURLs      atomic.Int64 // URLs queued because a sitemap listed them (new to the job)
	SitemapKnown     atomic.Int64 // URLs a sitemap listed that the job had seen already
	Routed           atomic.Int64 // URLs found for partitions another node serves: sent to their owner (Options.Partitioned)
	Requisites       atomic.Int64 // resources pages embed, queued because Spec.Requisites asked (new to the job)

	fresh      atomic.Pointer[Freshness] // the recrawl schedule's last figures (SetFreshness)
	waitHost   atomic.Pointer[string]    // the host of the job's latest URL put back to wait (SetWaitHost)
	continuous bool                      // the job's Spec.Continuous, for Snapshot (set by New)

	mu          sync.Mutex
	prior       Tally            // what earlier runs of the node counted (SetPrior)
	errors      map[string]int64 // by class
	status      map[string]int64 // "2xx", "3xx", ...
	gaveUpHosts map[string]struct{}
	gaveUpMore  int // hosts given up past maxGaveUpHosts
	waitHosts   map[string]struct{}
	waitMore    int // hosts given up waiting past maxGaveUpHosts
}

func (s *Stats) init() {
	s.errors = make(map[string]int64)
	s.status = make(map[string]int64)
	s.gaveUpHosts = make(map[string]struct{})
	s.waitHosts = make(map[string]struct{})
}

// SetPrior records what earlier runs of the node counted for the job
// (the stored Tally): Total adds it to this run's counts.
func (s *Stats) SetPrior(t Tally) {
	s.mu.Lock()
	s.prior = t
	s.mu.Unlock()
}

// Run returns this run's counts.
func (s *Stats) Run() Tally {
	t := s.counters()
	s.mu.Lock()
	t.Status, t.Errors = maps.Clone(s.status), maps.Clone(s.errors)
	s.mu.Unlock()
	return t
}

// counters returns this run's fixed counters (no maps).
func (s *Stats) counters() Tally {
	return Tally{
		Pages:            s.Pages.Load(),
		Shared:           s.Shared.Load(),
		Requests:         s.Requests.Load(),
		RobotsFetches:    s.RobotsFetches.Load(),
		RobotsDisallowed: s.RobotsDisallowed.Load(),
		RobotsGaveUp:     s.RobotsGaveUp.Load(),
		WaitGaveUp:       s.WaitGaveUp.Load(),
		Bytes:            s.Bytes.Load(),
		Discovered:       s.Discovered.Load(),
		OutOfScope:       s.OutOfScope.Load(),
		Excluded:         s.Excluded.Load(),
		BadLinks:         s.BadLinks.Load(),
		Duplicates:       s.Duplicates.Load(),
		Revisits:         s.Revisits.Load(),
		NearDuplicates:   s.NearDuplicates.Load(),
		Recrawls:         s.Recrawls.Load(),
		NotModified:      s.NotModified.Load(),
		Changed:          s.Changed.Load(),
		Sitemaps:         s.Sitemaps.Load(),
		SitemapURLs:      s.SitemapURLs.Load(),
		SitemapKnown:     s.SitemapKnown.Load(),
		Routed:           s.Routed.Load(),
		Requisites:       s.Requisites.Load(),
	}
}

// Total returns the counts of every run of the job: the prior ones' and
// this one's.
func (s *Stats) Total() Tally {
	run := s.Run()
	s.mu.Lock()
	prior := s.prior
	s.mu.Unlock()
	return prior.Add(run)
}

// EncodeTotal returns Total().Encode(), the stored form of the job's
// tally that the node writes with every completion, without the maps
// Total clones and adds.
func (s *Stats) EncodeTotal() []byte {
	run := s.counters()
	s.mu.Lock()
	defer s.mu.Unlock()
	tot := s.prior
	of, rf := tot.fields(), run.fields()
	for i := range of {
		*of[i] += *rf[i]
	}
	b := tot.appendCounters(make([]byte, 0, 64))
	b = appendSum(b, s.prior.Status, s.status)
	return appendSum(b, s.prior.Errors, s.errors)
}

// Freshness is what the node's recrawl schedule knows of a job's pages, as
// of At: gauges, not counts, recomputed now and then by a scan of the
// schedule.
type Freshness struct {
	At time.Time `json:"at"`
	// Scheduled counts the job's pages waiting for a recrawl.
	Scheduled int64 `json:"scheduled"`
	// Due counts recrawls whose time has come: queued in the frontier or
	// about to be.
	Due int64 `json:"due"`
	// Overdue counts, of Due, those more than the job's RecrawlMin late.
	Overdue int64 `json:"overdue"`
	// Freshness is the expected share of the job's stored copies that
	// match the live page, from each page's estimated change rate and the
	// time since its last fetch (1 for a page estimated never to change).
	Freshness float64 `json:"freshness"`
	// MeanAge is the expected time since the live page first differed from
	// the stored copy (0 while it matches), averaged over the pages.
	MeanAge time.Duration `json:"-"`
	// MeanAgeSeconds is MeanAge in seconds, for JSON.
	MeanAgeSeconds float64 `json:"mean_age_s"`
}

// SetFreshness records the schedule's latest figures for the job.
func (s *Stats) SetFreshness(f Freshness) {
	f.MeanAgeSeconds = f.MeanAge.Seconds()
	s.fresh.Store(&f)
}

// Freshness returns the figures SetFreshness recorded last, and false if
// none were (a job that is not continuous, or before the first scan).
func (s *Stats) Freshness() (Freshness, bool) {
	if f := s.fresh.Load(); f != nil {
		return *f, true
	}
	return Freshness{}, false
}

// Start marks the beginning of this run of the job (rates count from it).
func (s *Stats) Start(t time.Time) { s.start.Store(t.UnixNano()) }

// Started is when this run of the job began (zero before Start).
func (s *Stats) Started() time.Time {
	if ns := s.start.Load(); ns != 0 {
		return time.Unix(0, ns)
	}
	return time.Time{}
}

// AddError counts a failure of class ("" counts as "other").
func (s *Stats) AddError(class string) {
	if class == "" {
		class = "other"
	}
	s.mu.Lock()
	s.errors[class]++
	s.mu.Unlock()
}

// AddStatus counts a response by its status class.
func (s *Stats) AddStatus(code int) {
	k := strconv.Itoa(code/100) + "xx"
	s.mu.Lock()
	s.status[k]++
	s.mu.Unlock()
}

// GaveUp records that the job gave up a URL of host because the host's
// robots.txt stayed unavailable; it reports whether host is new to the
// list.
func (s *Stats) GaveUp(host string) bool {
	s.RobotsGaveUp.Add(1)
	return s.gaveUpHost(s.gaveUpHosts, &s.gaveUpMore, host)
}

// GaveUpWaiting records that the job gave up a URL of host because the
// host asked it to wait past its Spec.MaxWait (Retry-After, backoff, a
// robots.txt outage); it reports whether host is new to the list.
func (s *Stats) GaveUpWaiting(host string) bool {
	s.WaitGaveUp.Add(1)
	return s.gaveUpHost(s.waitHosts, &s.waitMore, host)
}

func (s *Stats) gaveUpHost(hosts map[string]struct{}, more *int, host string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := hosts[host]; ok {
		return false
	}
	if len(hosts) < maxGaveUpHosts {
		hosts[host] = struct{}{}
	} else {
		*more++
	}
	return true
}

// maxGaveUpHosts bounds the hosts a job remembers giving up; past it they
// are counted, and may be counted again.
const maxGaveUpHosts = 100_000

// Progress is a snapshot of a job, as `trawl crawl` prints it and
// summary.json and the API carry it.
type Progress struct {
	Job              ID               `json:"job"`
	Elapsed          time.Duration    `json:"-"`
	ElapsedSeconds   float64          `json:"elapsed_s"`
	Pages            int64            `json:"pages"`             // pages the job got (fetched for it or shared)
	Shared           int64            `json:"shared"`            // of pages, answered by another job's fetch of the same URL
	Requests         int64            `json:"requests"`          // HTTP requests sent for the job, robots.txt included
	RobotsFetches    int64            `json:"robots_fetches"`    // robots.txt requests
	RobotsDisallowed int64            `json:"robots_disallowed"` // URLs not fetched because robots.txt disallows them
	RobotsGaveUp     int64            `json:"robots_gave_up"`    // URLs given up: their host's robots.txt stayed unavailable
	RobotsGaveUpOn   int              `json:"robots_gave_up_hosts"`
	WaitGaveUp       int64            `json:"wait_gave_up"`       // URLs given up: their host asked to wait past the job's MaxWait
	WaitGaveUpOn     int              `json:"wait_gave_up_hosts"` // hosts those URLs were on
	Bytes            int64            `json:"bytes"`              // body bytes archived
	PagesPerSecond   float64          `json:"pages_per_s"`
	Discovered       int64            `json:"discovered"`   // distinct URLs queued, seeds included
	OutOfScope       int64            `json:"out_of_scope"` // links outside the scope or over a trap cap
	Excluded         int64            `json:"excluded"`     // URLs an exclusion pattern matched (found or queued)
	Duplicates       int64            `json:"duplicates"`   // URLs found again: dropped by the URL-seen gate
	BadLinks         int64            `json:"bad_links"`    // links that did not parse
	Status           map[string]int64 `json:"status"`       // responses by status class
	Errors           map[string]int64 `json:"errors"`       // failures by class (a response cut off counts here too: too-large, body-timeout)
	Queued           int              `json:"queued"`       // the job's URLs still waiting
	InFlight         int              `json:"in_flight"`
	Held             int              `json:"held"`    // URLs set aside while the job is paused
	Dropped          int              `json:"dropped"` // URLs dropped: host budgets, dead hosts, cancellation
	// Continuous is the job's Spec.Continuous: it does not end when
	// nothing is queued, but waits for its pages' recrawls.
	Continuous  bool  `json:"continuous,omitempty"`
	Recrawls    int64 `json:"recrawls"`     // fetches of pages fetched before
	NotModified int64 `json:"not_modified"` // of recrawls, 304 answers: no body
	Changed     int64 `json:"changed"`      // of recrawls, content differed from the stored copy
	// Freshness is the recrawl schedule's last figures for the job; nil
	// before its first scan, and for a job that is not continuous.
	Freshness *Freshness `json:"freshness,omitempty"`
	// Waiting says what the job waits for when nothing of it is in flight
	// and nothing may be fetched for a second or more; nil otherwise.
	Waiting *Waiting `json:"waiting,omitempty"`
	// Node-wide host counts (politeness is the node's, shared by jobs).
	Hosts        int `json:"hosts"`
	HostsReady   int `json:"hosts_ready"`   // hosts with work that may be fetched now
	HostsWaiting int `json:"hosts_waiting"` // hosts with work waiting for their gap
	HostsBackoff int `json:"hosts_backoff"`

	// Content duplicates: pages fetched whose content the node had
	// archived already, byte for byte (Revisits) or nearly (NearDuplicates).
	Revisits       int64 `json:"revisits"`        // written as revisit records, not parsed
	NearDuplicates int64 `json:"near_duplicates"` // main text resembling an archived page's (docs/design/dedup.md)
	// Total counts every run of the job, this one included (the counts
	// above are this run's).
	Total Tally `json:"total"`
}

// WaitingForRecrawls reports whether p is of a continuous job with nothing
// queued, in flight or held: every page it found is fetched, and it waits
// for the next recrawl to fall due (it does not end, as another job
// would). The job's state says whether it runs at all.
func (p Progress) WaitingForRecrawls() bool {
	return p.Continuous && p.Queued == 0 && p.InFlight == 0 && p.Held == 0
}

// Snapshot returns the job's own counters at now; the node fills in the
// frontier's counts.
func (s *Stats) Snapshot(now time.Time) Progress {
	var el time.Duration
	if st := s.start.Load(); st != 0 {
		el = now.Sub(time.Unix(0, st))
	}
	run := s.Run()
	p := Progress{
		Elapsed:          el,
		ElapsedSeconds:   el.Seconds(),
		Pages:            run.Pages,
		Shared:           run.Shared,
		Requests:         run.Requests,
		RobotsFetches:    run.RobotsFetches,
		RobotsDisallowed: run.RobotsDisallowed,
		RobotsGaveUp:     run.RobotsGaveUp,
		WaitGaveUp:       run.WaitGaveUp,
		Bytes:            run.Bytes,
		Discovered:       run.Discovered,
		OutOfScope:       run.OutOfScope,
		Excluded:         run.Excluded,
		Duplicates:       run.Duplicates,
		Revisits:         run.Revisits,
		NearDuplicates:   run.NearDuplicates,
		BadLinks:         run.BadLinks,
		Status:           run.Status,
		Errors:           run.Errors,
		Continuous:       s.continuous,
		Recrawls:         run.Recrawls,
		NotModified:      run.NotModified,
		Changed:          run.Changed,
	}
	if f, ok := s.Freshness(); ok {
		p.Freshness = &f
	}
	if el > 0 {
		p.PagesPerSecond = float64(p.Pages) / el.Seconds()
	}
	s.mu.Lock()
	p.RobotsGaveUpOn = len(s.gaveUpHosts) + s.gaveUpMore
	p.WaitGaveUpOn = len(s.waitHosts) + s.waitMore
	prior := s.prior
	s.mu.Unlock()
	p.Total = prior.Add(run)
	return p
}

// Waiting is what a job with queued URLs waits for while nothing may be
// fetched: the soonest of its node's hosts with work (politeness is the
// node's), why that host waits, and how many hosts wait.
type Waiting struct {
	Seconds float64   `json:"for_s"`  // until the soonest host may be fetched
	Until   time.Time `json:"until"`  // when that is
	Hosts   int       `json:"hosts"`  // hosts with work, all waiting
	Reason  string    `json:"reason"` // why the soonest waits: retry-after, robots-retry-after, robots-unavailable, backoff, crawl-delay, ...
	// Why is Reason in a user's words ("robots.txt Retry-After").
	Why string `json:"why"`
}

// String is the wait as the progress line, `trawl status` and the
// dashboard say it: "waiting 59m for 1 host (robots.txt Retry-After)".
func (w Waiting) String() string {
	hosts := "hosts"
	if w.Hosts == 1 {
		hosts = "host"
	}
	return fmt.Sprintf("waiting %s for %d %s (%s)", WaitDuration(time.Duration(w.Seconds*float64(time.Second))), w.Hosts, hosts, w.Why)
}

// WaitDuration is d as a wait is said: 450ms, 12s, 59m, 2h05m.
func WaitDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute-time.Second/2:
		return fmt.Sprintf("%ds", int(d.Round(time.Second).Seconds()))
	case d < time.Hour-time.Minute/2:
		return fmt.Sprintf("%dm", int(d.Round(time.Minute).Minutes()))
	}
	d = d.Round(time.Minute)
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// SetWaitHost records host as the one whose URL of the job was last put
// back to wait (a robots.txt outage, a retry, a Retry-After): what the
// job waits for while other jobs keep the node busy (node.Progress).
func (s *Stats) SetWaitHost(host string) {
	if p := s.waitHost.Load(); p == nil || *p != host {
		s.waitHost.Store(&host)
	}
}

// WaitHost returns SetWaitHost's latest host, "" if none.
func (s *Stats) WaitHost() string {
	if p := s.waitHost.Load(); p != nil {
		return *p
	}
	return ""
}
