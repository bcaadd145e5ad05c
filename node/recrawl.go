package node

import (
	"errors"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/trawl-crawler/trawl/fetch"
	"github.com/trawl-crawler/trawl/frontier"
	"github.com/trawl-crawler/trawl/internal/store"
	"github.com/trawl-crawler/trawl/internal/store/partition"
	"github.com/trawl-crawler/trawl/internal/store/schedule"
	"github.com/trawl-crawler/trawl/internal/store/urlseen"
	"github.com/trawl-crawler/trawl/internal/store/urlstate"
	"github.com/trawl-crawler/trawl/job"
	"github.com/trawl-crawler/trawl/recrawl"
	"github.com/trawl-crawler/trawl/sitemap"
)

// The node's recrawl wiring. Every fetch of a page the node fetched before
// folds a visit into the page's change history (urlstate.Record.Recrawl);
// a fetch for a continuous job (or of a page a continuous job has
// scheduled) writes the page's next visit into the schedule (package
// schedule), at the interval package recrawl sets from the history, in
// the batch of the fetch's completion. A loop hands due entries to the
// frontier and, now and then, scans the whole schedule for each
// continuous job's freshness figures and its pages' estimated rates, from
// which the multiplier that spends its budget is solved. The schedule is
// recrawlScheduler's; it reaches the rest of the node through
// recrawlNode. The fold of a visit into a page's history is the
// worker's (foldVisit, below).

// recrawlNode is what a recrawlScheduler needs of the node: its jobs,
// whether it failed (and a way to fail it), the partitions it serves, the
// frontier's enqueue (add: items with their batch, durable when the
// returned channel yields nil) and the stored record of a URL. *Node
// implements it.
type recrawlNode interface {
	Job(id job.ID) *job.Job
	Jobs() []*job.Job
	failed() bool
	fail(err error)
	serving() func(partition.ID) bool
	add(b *store.Batch, items []frontier.Item) <-chan error
	loadRecord(it frontier.Item) urlstate.Record
}

// recrawlScheduler keeps the recrawl schedule of the node's continuous
// jobs: each job's plan (its policy and the multiplier its budget steers),
// each page's next visit written in the batch of its fetch's completion,
// the host tasks of sitemap rounds, visits brought forward by a sitemap's
// lastmod, and the loop (run) that hands due entries to the frontier and
// keeps each job's freshness figures.
//
// Invariants: a page has at most one schedule entry, and its URL record
// names it (urlstate.Record.Due, DueJob), both changed in one batch; an
// entry is handed to the frontier in the batch that marks it Fed, and
// again only after refeedAfter; the loop reads only the entries of
// partitions the node serves. plans is guarded by mu; a plan's multiplier
// is set by the loop's scans and read atomically. Safe for concurrent use.
type recrawlScheduler struct {
	node           recrawlNode
	db             *store.DB
	fetched        *urlseen.KeyFilter // the state's filter of URL record keys
	now            func() time.Time
	log            *slog.Logger
	tick           time.Duration   // Options.RecrawlTick
	freshnessEvery time.Duration   // Options.FreshnessEvery
	sitemapEvery   time.Duration   // Options.SitemapEvery
	stop           <-chan struct{} // closed when the node stops
	done           chan struct{}   // closed when run is done

	mu    sync.Mutex
	plans map[job.ID]*recrawlPlan

	priors atomic.Pointer[map[job.ID]*groupPriors] // set by scan

	// The loop's own: the release of due entries is levelled (no
	// recrawl storm); seenDue is the latest due time a tick has seen.
	level   recrawl.Leveller
	seenDue time.Time
}

// newRecrawlScheduler returns the recrawl schedule of node n, whose state
// is st and options opts (with defaults); its loop stops when stop is
// closed.
func newRecrawlScheduler(n recrawlNode, st *State, opts Options, stop <-chan struct{}) *recrawlScheduler {
	return &recrawlScheduler{node: n, db: st.DB, fetched: st.Fetched, now: opts.Now, log: opts.Logger,
		tick: opts.RecrawlTick, freshnessEvery: opts.FreshnessEvery, sitemapEvery: opts.SitemapEvery,
		stop: stop, done: make(chan struct{})}
}

// recrawlPlan is a continuous job's recrawl policy and the multiplier its
// budget sets, or the Nutch schedule the job asked for instead.
type recrawlPlan struct {
	policy *recrawl.Policy
	budget recrawl.Rate // fetches per hour; 0: none, mu stays at its start
	muBits atomic.Uint64
	// nutch, if set, picks the intervals (job.ScheduleNutch); policy
	// still estimates the rates the freshness figures are made of.
	nutch *recrawl.Nutch
}

func (p *recrawlPlan) mu() float64 { return math.Float64frombits(p.muBits.Load()) }

// plan returns j's recrawl plan, nil if j is not continuous.
func (s *recrawlScheduler) plan(j *job.Job) *recrawlPlan {
	if j == nil || !j.Spec.Continuous {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.plans[j.ID]; p != nil {
		return p
	}
	pol, err := recrawl.New(recrawl.Options{MinInterval: j.Spec.RecrawlMin, MaxInterval: j.Spec.RecrawlMax})
	if err != nil { // Spec.Validate refuses such bounds; a bug if not
		s.log.Warn("recrawl policy of job; defaults used", "job", j.ID, "err", err)
		pol, _ = recrawl.New(recrawl.Options{})
	}
	p := &recrawlPlan{policy: pol, budget: recrawl.Rate(j.Spec.RecrawlBudget)}
	if j.Spec.RecrawlSchedule == job.ScheduleNutch {
		// From the same first interval as the freshness schedule's, within
		// the same bounds: the two differ only in how they adapt.
		o := pol.Options()
		p.nutch = &recrawl.Nutch{Initial: o.InitialInterval, Min: o.MinInterval, Max: o.MaxInterval}
	}
	// Without a budget the multiplier is the shortest interval, in hours:
	// one more visit per MinInterval must buy at least as much freshness
	// as a page visited every MinInterval could lose.
	p.muBits.Store(math.Float64bits(pol.Options().MinInterval.Hours()))
	if s.plans == nil {
		s.plans = make(map[job.ID]*recrawlPlan)
	}
	s.plans[j.ID] = p
	return p
}

// validators are the validators that make j's fetch of a page with record
// prev conditional: only when j made the last fetch itself (so a 304,
// which has no body, hides no link j has not seen) and it got the
// content.
func validators(j *job.Job, prev urlstate.Record) fetch.Validators {
	if prev.Job != j.ID || !prev.HasDigest || !(prev.Status >= 200 && prev.Status < 300 || prev.Status == http.StatusNotModified) {
		return fetch.Validators{}
	}
	return fetch.Validators{ETag: prev.ETag, LastModified: prev.LastModified}
}

// fetchedBefore reports whether a URL with record prev got a response
// before: its fetch now is a recrawl, which spends no host budget
// (frontier.Outcome.Refetch). A URL whose earlier attempts all failed
// spends it with this one, so that failures cannot dodge the budget.
func fetchedBefore(prev urlstate.Record) bool { return prev.Status != 0 || prev.HasDigest }

// statusClass is a status's class for change detection: a 304 stands for
// the 200 it confirms.
func statusClass(s int) int {
	if s == http.StatusNotModified {
		return 2
	}
	return s / 100
}

// changedSince reports whether the response o describes differs from the
// one prev keeps: another status class, or another payload digest. For a
// page whose boilerplate churns (its digest differed at each of the last
// churnVisits fetches), a new digest with the same SimHash of the visible
// text is no change: only markup, scripts, hidden fields or numbers moved.
// Other pages are judged by digest alone, so that a changed price or date
// (which the SimHash does not see) counts.
func changedSince(prev urlstate.Record, o urlstate.Observation) bool {
	switch {
	case o.NotModified:
		return false
	case prev.Status != 0 && statusClass(prev.Status) != statusClass(o.Status):
		return true
	case !prev.HasDigest || !o.HasDigest || prev.Digest == o.Digest:
		return false
	case prev.SimHash != 0 && prev.SimHash == o.SimHash && churns(prev):
		return false
	}
	return true
}

// churnVisits is how many fetches in a row must each have seen a new
// digest for a page to count as one whose boilerplate churns.
const churnVisits = 2

// churns reports whether the last churnVisits fetches of r each saw a new
// digest.
func churns(r urlstate.Record) bool {
	h := r.History
	if len(h) < churnVisits {
		return false
	}
	for _, e := range h[len(h)-churnVisits:] {
		if !e.Changed {
			return false
		}
	}
	return true
}

// httpDate parses a Last-Modified value; zero if it does not parse.
func httpDate(v string) time.Time {
	t, err := http.ParseTime(v)
	if err != nil {
		return time.Time{}
	}
	return t
}

// foldVisit returns rec (prev with o folded in) with the change history
// updated for a response to a page fetched before, and counts the recrawl
// for j.
func foldVisit(j *job.Job, prev, rec urlstate.Record, o urlstate.Observation) urlstate.Record {
	if prev.Fetches == 0 || prev.LastFetch.IsZero() || o.Status == 0 {
		return rec
	}
	h := prev.Recrawl
	if h.Visits == 0 { // the first visit is only in LastFetch (urlstate keeps no history for one)
		h = recrawl.Histories.Observe(h, recrawl.Visit{At: prev.LastFetch, LastModified: httpDate(prev.LastModified)})
	}
	changed := changedSince(prev, o)
	lm := o.LastModified
	if o.NotModified && lm == "" {
		lm = prev.LastModified
	}
	rec.Recrawl = recrawl.Histories.Observe(h, recrawl.Visit{At: o.At, Changed: changed, LastModified: httpDate(lm)})
	j.Stats.Recrawls.Add(1)
	if changed {
		j.Stats.Changed.Add(1)
	}
	return rec
}

// reschedule writes, into b, the next visit of the page of it (whose
// record goes from prev to rec with this fetch by job j): for j if it is
// continuous, else for the continuous job that scheduled the page before.
// The old entry, if any, is deleted in b.
func (s *recrawlScheduler) reschedule(b *store.Batch, j *job.Job, it frontier.Item, prev urlstate.Record, rec *urlstate.Record) {
	rec.Due, rec.DueJob = time.Time{}, 0
	if !prev.Due.IsZero() {
		if err := schedule.Delete(b, prev.Due, it.Host, it.URL); err != nil {
			s.log.Warn("recrawl schedule: delete entry", "url", it.URL, "err", err)
		}
	}
	owner := j
	if !j.Spec.Continuous {
		if prev.DueJob == 0 { // the common case of a one-off crawl: no lock taken
			return
		}
		if owner = s.node.Job(prev.DueJob); owner == nil {
			return
		}
	}
	if st, _ := owner.State(); st.Ended() {
		return
	}
	p := s.plan(owner)
	if p == nil {
		return
	}
	h := rec.Recrawl
	if h.Visits == 0 && !rec.LastFetch.IsZero() {
		// Fetched once: the visit is only in the record (urlstate keeps
		// no history for one), its Last-Modified the age it tells.
		h = recrawl.Histories.Observe(h, recrawl.Visit{At: rec.LastFetch, LastModified: httpDate(rec.LastModified)})
	}
	// Jittered by URL and visit, so that pages fetched together do not
	// come due together at every round (a recrawl storm).
	est, iv := p.policy.Next(h, s.priorOf(owner.ID, it.URL, rec.Stated), 1, p.mu(), jitterKey(it.URL, rec.Recrawl.Visits))
	e := entryRates(p.policy, h, est)
	if p.nutch != nil {
		iv = nutchInterval(*p.nutch, s.lastInterval(it, prev), prev, *rec)
	}
	e.URL, e.Host, e.Due, e.Job = it.URL, it.Host, rec.LastFetch.Add(iv).Truncate(time.Second), owner.ID
	e.Depth, e.ShapeRun, e.Level, e.Interval, e.Requisite = it.Depth, it.ShapeRun, uint8(it.Level), iv, it.Requisite
	e.LastFetch, e.Stated = rec.LastFetch.Truncate(time.Second), rec.Stated
	if err := schedule.Put(b, e); err != nil {
		s.log.Warn("recrawl schedule: put entry", "url", it.URL, "err", err)
		return
	}
	rec.Due, rec.DueJob = e.Due, owner.ID
}

// entryRates returns the rates the schedule entry of a page with history
// h and estimate est (under its group prior) keeps: Rate, the estimate
// (for a page with nothing known yet, one change per initial interval);
// Learned, whether it rests on intervals of the page's own; and Own, the
// rate those intervals give without the prior, which is what the page's
// groups pool. Pooling the estimate instead would feed each prior back
// into itself: at every scan the pool's spread would narrow, its weight
// grow, and every page be pulled harder to its group's mean.
func entryRates(pol *recrawl.Policy, h recrawl.History, est recrawl.Estimate) schedule.Entry {
	e := schedule.Entry{Rate: float64(est.Rate), Learned: est.Intervals > 0}
	if e.Rate == 0 && !e.Learned {
		e.Rate = 1 / pol.Options().InitialInterval.Hours()
	}
	if e.Learned {
		own := pol.Estimate(h)
		e.Own, e.Censored = float64(own.Rate), own.Censored
	}
	return e
}

// lastInterval is the interval the page of it was given when it was last
// scheduled (its schedule entry's, which a sitemap's lastmod does not
// shorten when it brings the page forward); 0 if it has no entry.
func (s *recrawlScheduler) lastInterval(it frontier.Item, prev urlstate.Record) time.Duration {
	if prev.Due.IsZero() {
		return 0
	}
	key := store.DueKey(prev.Due, it.Host, it.URL)
	v, err := s.db.Get(key) // the entry's delete is in the batch, not yet applied
	if err != nil {
		return 0
	}
	e, err := schedule.Decode(key, v)
	if err != nil {
		return 0
	}
	return e.Interval
}

// nutchInterval is the next interval Nutch's schedule gives a page whose
// record goes from prev to rec with this fetch: its first interval after a
// first fetch, then last (the interval it was last given; with none known,
// the time from prev's fetch to its due time) shrunk or grown by whether
// this fetch's digest differed. A failed fetch (no response) changes
// nothing: the page keeps its interval. Nutch jitters nothing: its pages
// come due as they were fetched.
func nutchInterval(n recrawl.Nutch, last time.Duration, prev, rec urlstate.Record) time.Duration {
	pg := recrawl.Page{History: recrawl.History{Last: prev.LastFetch}, Interval: last}
	if pg.Interval <= 0 && !prev.Due.IsZero() && !prev.LastFetch.IsZero() {
		pg.Interval = prev.Due.Sub(prev.LastFetch.Truncate(time.Second)) // both whole seconds, as the entry's
	}
	if rec.Status == 0 && pg.Interval > 0 {
		return pg.Interval
	}
	changed := len(rec.History) > 0 && rec.History[len(rec.History)-1].Changed
	_, iv := n.Visit(pg, recrawl.Visit{At: rec.LastFetch, Changed: changed})
	return iv
}

// Defaults of the schedule loop (Options.RecrawlTick, FreshnessEvery).
const (
	DefaultRecrawlTick    = time.Second
	DefaultFreshnessEvery = 30 * time.Second
)

// maxFeed bounds the entries one tick hands to the frontier.
const maxFeed = 10_000

// run hands due recrawls to the frontier and keeps the freshness
// figures, until the node stops; then it closes s.done.
func (s *recrawlScheduler) run() {
	defer close(s.done)
	tick := time.NewTicker(s.tick)
	defer tick.Stop()
	// The first scan comes FreshnessEvery after the start: a job's
	// figures mean something once some of its pages have been fetched.
	scanned := s.now()
	for {
		select {
		case <-s.stop:
			return
		case <-tick.C:
		}
		if s.node.failed() || !s.anyContinuous() {
			continue
		}
		now := s.now()
		if now.Sub(scanned) >= s.freshnessEvery {
			scanned = now
			s.scan(now)
		}
		s.feedDue(now)
	}
}

// anyContinuous reports whether a continuous job has not ended.
func (s *recrawlScheduler) anyContinuous() bool {
	for _, j := range s.node.Jobs() {
		if st, _ := j.State(); j.Spec.Continuous && !st.Ended() {
			return true
		}
	}
	return false
}

// refeedAfter is how long an entry handed to the frontier may wait for
// its fetch before it is handed again: its item was dropped (robots.txt,
// a dead host) or lost. A second item costs at most one fetch.
func refeedAfter(j *job.Job) time.Duration {
	if j.Spec.RecrawlMax > 0 {
		return j.Spec.RecrawlMax
	}
	return recrawl.DefaultMaxInterval
}

// feedDue hands the due entries of running continuous jobs to the
// frontier, the oldest due first and as many as the leveller allows,
// marking each Fed in the same batch; entries of jobs that ended or are no
// longer continuous are deleted.
func (s *recrawlScheduler) feedDue(now time.Time) {
	b := s.db.NewBatch()
	var due []schedule.Entry
	newly, latest := 0, int64(0) // entries that came due since the last tick; the latest due time among them
	bad := func(key []byte, err error) {
		s.log.Warn("recrawl schedule: entry unreadable; deleted", "err", err)
		b.Delete(key)
	}
	served := s.node.serving()
	for p := range schedule.Partitions {
		if !served(partition.ID(p)) {
			continue // another node's, or not loaded yet: its entries wait
		}
		err := schedule.Due(s.db, partition.ID(p), now, func(e schedule.Entry) bool {
			j := s.node.Job(e.Job)
			var st job.State
			if j != nil {
				st, _ = j.State()
			}
			switch {
			case j == nil || !j.Spec.Continuous || st.Ended():
				if err := b.Delete(e.Key()); err != nil {
					s.log.Warn("recrawl schedule: delete entry", "url", e.URL, "err", err)
				}
				return true
			case st != job.Running, !e.Fed.IsZero() && now.Sub(e.Fed) < refeedAfter(j):
				return true
			}
			if e.Due.After(s.seenDue) {
				newly++
				latest = max(latest, e.Due.UnixNano())
			}
			due = append(due, e)
			return len(due) < maxFeed
		}, bad)
		if err != nil {
			s.log.Warn("recrawl schedule: scan", "partition", p, "err", err)
		}
		if len(due) >= maxFeed {
			break
		}
	}
	if latest > 0 {
		s.seenDue = time.Unix(0, latest)
	}
	slices.SortStableFunc(due, func(a, b schedule.Entry) int { return a.Due.Compare(b.Due) })
	due = due[:min(len(due), s.level.Allow(now, newly, len(due)))]
	items := make([]frontier.Item, 0, len(due))
	for _, e := range due {
		e.Fed = now
		if err := schedule.Put(b, e); err != nil {
			s.log.Warn("recrawl schedule: mark entry fed", "url", e.URL, "err", err)
			continue
		}
		items = append(items, frontier.Item{URL: e.URL, Host: e.Host, Job: e.Job, Depth: e.Depth, Level: int(e.Level), ShapeRun: e.ShapeRun, Requisite: e.Requisite})
	}
	if b.Count() == 0 {
		b.Close()
		return
	}
	select {
	case err := <-s.node.add(b, items):
		if err != nil {
			s.node.fail(err)
		}
	case <-s.stop:
	}
}

// freshTally sums one job's schedule entries.
type freshTally struct {
	f      job.Freshness
	census recrawl.Census // the pages' estimated rates
	fresh  float64        // sum of each page's probability to be fresh
	age    float64        // sum of each page's expected age, hours
}

// scan reads the whole schedule: each continuous job's freshness
// figures, and the multiplier at which its pages' estimated rates call
// for its budget. The multiplier is solved from the rates, not corrected
// from the intervals the entries hold: those were set at each page's last
// visit and follow a new multiplier only as pages are revisited.
func (s *recrawlScheduler) scan(now time.Time) {
	tallies := make(map[job.ID]*freshTally)
	pools := make(map[job.ID]*priorPools)
	served := s.node.serving()
	for p := range schedule.Partitions {
		if !served(partition.ID(p)) {
			continue
		}
		err := schedule.All(s.db, partition.ID(p), func(e schedule.Entry) bool {
			if isHostTaskURL(e.URL) {
				return true // no page: no freshness of its own
			}
			t := tallies[e.Job]
			if t == nil {
				t = &freshTally{}
				tallies[e.Job] = t
			}
			t.add(e, now, s.node.Job(e.Job))
			pp := pools[e.Job]
			if pp == nil {
				pp = &priorPools{}
				pools[e.Job] = pp
			}
			pp.add(e)
			return true
		}, nil)
		if err != nil {
			s.log.Warn("recrawl schedule: scan", "partition", p, "err", err)
			return
		}
	}
	s.setPriors(pools)
	for _, j := range s.node.Jobs() {
		p := s.plan(j)
		if p == nil {
			continue
		}
		t := tallies[j.ID]
		if t == nil {
			t = &freshTally{}
		}
		t.f.At = now
		if k := float64(t.f.Scheduled); k > 0 {
			t.f.Freshness = t.fresh / k
			t.f.MeanAge = time.Duration(t.age / k * float64(time.Hour))
		}
		j.Stats.SetFreshness(t.f)
		if p.budget > 0 {
			p.muBits.Store(math.Float64bits(p.policy.SolveCensus(&t.census, p.budget)))
		}
	}
}

// add counts entry e of job j (nil if unknown) as of now: a page changing
// at rate r, fetched t ago, is fresh with probability e^(-rt), and its
// expected age is t - (1 - e^(-rt))/r.
func (t *freshTally) add(e schedule.Entry, now time.Time, j *job.Job) {
	t.f.Scheduled++
	if !e.Due.After(now) {
		t.f.Due++
		if j != nil && now.Sub(e.Due) > j.Spec.RecrawlMinOrDefault() {
			t.f.Overdue++
		}
	}
	// The entry keeps the rate, not the estimate: a page fetched once
	// whose rate is a prior's or its age's counts as estimated, and one
	// with nothing known at the rate of one change per initial interval
	// (reschedule), close to what its next visit's prior will say.
	t.census.Add(recrawl.Estimate{Rate: recrawl.Rate(e.Rate), Intervals: 1}, 1)
	since := max(now.Sub(e.LastFetch).Hours(), 0)
	if rt := e.Rate * since; rt > 0 {
		t.fresh += math.Exp(-rt)
		t.age += since - (1-math.Exp(-rt))/e.Rate
	} else {
		t.fresh++
	}
}

// DefaultSitemapEvery is Options.SitemapEvery's default.
const DefaultSitemapEvery = 24 * time.Hour

// A host task is a queue item whose URL is an origin's /robots.txt: a
// lease of the host that fetches no page of its own. handle does the
// host's work (robots.txt when it is due, the next sitemap file) and ends
// it. The end of a continuous job's sitemap round schedules one for the
// next round (scheduleHostTask), so that a host whose pages are all far
// from due still reads its sitemaps, and refreshes its robots.txt, on
// time. (A page linked as /robots.txt is such an item too: the keeper
// archives robots.txt already.)
func isHostTask(u *url.URL) bool { return u.Path == "/robots.txt" && u.RawQuery == "" }

// isHostTaskURL is isHostTask for a canonical URL, without parsing it:
// scheme://host[:port]/robots.txt.
func isHostTaskURL(s string) bool {
	return strings.HasSuffix(s, "/robots.txt") && strings.Count(s, "/") == 3
}

// hostTaskURL is origin's host task URL.
func hostTaskURL(origin string) string { return origin + "/robots.txt" }

// scheduleHostTask writes into b job j's host task for origin (of
// politeness key host), due SitemapEvery after finished, replacing the
// one its URL record names.
func (s *recrawlScheduler) scheduleHostTask(b *store.Batch, j *job.Job, host, origin string, finished time.Time) {
	if !j.Spec.Continuous {
		return
	}
	it := frontier.Item{URL: hostTaskURL(origin), Host: host, Job: j.ID, Level: j.Level(0, levels)}
	prev := s.node.loadRecord(it)
	e := schedule.Entry{URL: it.URL, Host: host, Due: ceilSecond(finished.Add(s.sitemapEvery)), Job: j.ID,
		Level: uint8(it.Level), Interval: s.sitemapEvery, LastFetch: finished.Truncate(time.Second)}
	rec := prev
	rec.Due, rec.DueJob = e.Due, j.ID
	key := store.URLKey(host, it.URL)
	s.fetched.Add(key) // before b commits
	if err := errors.Join(schedule.Move(b, prev.Due, e), b.Set(key, urlstate.Encode(rec))); err != nil {
		s.log.Warn("recrawl schedule: put host task", "origin", origin, "err", err)
	}
}

// ceilSecond rounds t up to the second: a host task due no sooner than
// the sitemaps' age allows a new round.
func ceilSecond(t time.Time) time.Time {
	if c := t.Truncate(time.Second); c.Before(t) {
		return c.Add(time.Second)
	}
	return t
}

// statedInterval is the interval a <changefreq> states, as the prior of
// a page's rate: its period for hourly to yearly; "always" (changes at
// every access) a minute, "never" (archived) ten years.
func statedInterval(f sitemap.ChangeFreq) time.Duration {
	switch f {
	case sitemap.FreqAlways:
		return time.Minute
	case sitemap.FreqNever:
		return 10 * 365 * 24 * time.Hour
	}
	return f.Interval()
}

// listed updates, in b, the record of it's page, which a sitemap of job
// j lists with entry e (j had seen the page already if seen):
//   - the interval e's changefreq states is kept in the record
//     (urlstate.Record.Stated) for a continuous job's schedule; a page
//     not yet fetched gets a record that holds only that. A listing that
//     states nothing leaves a statement made before as it is (a site may
//     list a page in two sitemaps, one without changefreq); one that
//     states another interval replaces it.
//   - a seen page whose lastmod is after its last fetch (and after the
//     Last-Modified that fetch got) has its scheduled recrawl brought
//     forward to now. A page with no recrawl scheduled, or one already
//     due, is left as it is.
//
// The record is read once and written once, only if something changed.
func (s *recrawlScheduler) listed(b *store.Batch, j *job.Job, it frontier.Item, e sitemap.Entry, seen bool) {
	stated := statedInterval(e.ChangeFreq)
	states := j.Spec.Continuous && stated > 0
	if !states && (!seen || e.LastMod.IsZero()) {
		return // nothing to keep, nothing to bring forward: no read
	}
	rec := s.node.loadRecord(it)
	dirty := false
	if states && rec.Stated != stated {
		rec.Stated, dirty = stated, true
	}
	if seen && !e.LastMod.IsZero() && s.bringForward(b, it, &rec, e.LastMod) {
		dirty = true
	}
	if !dirty {
		return
	}
	key := store.URLKey(it.Host, it.URL)
	s.fetched.Add(key) // before b commits
	if err := b.Set(key, urlstate.Encode(rec)); err != nil {
		s.log.Warn("recrawl schedule: update a listed page's record", "url", it.URL, "err", err)
	}
}

// bringForward moves, in b, the scheduled recrawl of it's page (whose
// record is rec) to now, and sets rec.Due to it, when lastmod says the
// page changed after its last fetch (and after the Last-Modified that
// fetch got); it reports whether it did. The caller writes rec.
func (s *recrawlScheduler) bringForward(b *store.Batch, it frontier.Item, rec *urlstate.Record, lastmod time.Time) bool {
	now := s.now()
	if rec.Due.IsZero() || !rec.Due.After(now) || rec.LastFetch.IsZero() || !lastmod.After(rec.LastFetch) {
		return false
	}
	if lm := httpDate(rec.LastModified); !lm.IsZero() && !lastmod.After(lm) {
		return false
	}
	key := store.DueKey(rec.Due, it.Host, it.URL)
	v, err := s.db.Get(key)
	if err != nil {
		s.log.Warn("recrawl schedule: read entry to bring forward", "url", it.URL, "err", err)
		return false
	}
	e, err := schedule.Decode(key, v)
	if err != nil {
		s.log.Warn("recrawl schedule: entry unreadable", "url", it.URL, "err", err)
		return false
	}
	e.Due, e.Fed, e.Level = now.Truncate(time.Second), time.Time{}, min(e.Level, uint8(it.Level))
	from := rec.Due
	if err := schedule.Move(b, from, e); err != nil {
		s.log.Warn("recrawl schedule: bring forward", "url", it.URL, "err", err)
		return false
	}
	rec.Due = e.Due
	if j := s.node.Job(e.Job); j != nil {
		j.Stats.BroughtForward.Add(1)
	}
	s.log.Debug("sitemap lastmod brings a recrawl forward", "url", it.URL, "lastmod", lastmod, "fetched", rec.LastFetch)
	return true
}

// jitterKey is the key of a page's interval jitter: its URL (FNV-1a) and
// its visit count, so that each visit draws afresh and a replayed visit
// draws the same.
func jitterKey(url string, visits uint32) uint64 {
	h := uint64(14695981039346656037)
	for i := range len(url) {
		h ^= uint64(url[i])
		h *= 1099511628211
	}
	return h ^ uint64(visits)<<32
}
