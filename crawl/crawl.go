// Package crawl runs the crawl loop on one node: it wires the frontier, the
// fetcher, the WARC writer, the link extractor, URL normalisation, scope and
// the URL-seen gate together, with a fixed pool of workers.
//
// The pipeline (one Crawler, bounded everywhere):
//
//	dispatcher ──lease──▶ work chan (cap 0) ──▶ N workers
//	   ▲                                         │ resolve + IP cap (frontier.SetIP)
//	   │ frontier.Changed / wait                 │ robots.txt (robots.Cache; fetched in the host's own slot)
//	   │                                         │ fetch (fetch.Fetcher) ──▶ WARC (warc.Writer), before parsing
//	   │                                         │ links.Extract ▶ urlnorm ▶ scope ▶ urlseen
//	   └──────── frontier.Add / Complete ◀───────┘
//
// A worker slot is taken before a lease is asked for, so a lease never
// waits in a queue and the host's clock starts when the fetch can. Lock
// order: Crawler.mu is never held while calling into the frontier, the
// robots cache or the seen set (each has its own lock).
//
// Durability: all crawl state lives in one Pebble store under
// DataDir/state. A lease's completion (its item deleted, the new items it
// discovered and their URL-seen keys put, the fetched URL's urlstate
// record, the touched hosts' clocks) is one batch, and the worker moves on
// only once that batch is durable. The WARC record is written before, so a
// crash between the two archives a page twice and fetches it again
// (at-least-once), and never loses one. A WARC file cut off by a crash is
// repaired by warc.Recover at start-up.
package crawl

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/trawl-crawler/trawl/fetch"
	"github.com/trawl-crawler/trawl/frontier"
	"github.com/trawl-crawler/trawl/frontierdb"
	"github.com/trawl-crawler/trawl/links"
	"github.com/trawl-crawler/trawl/robots"
	"github.com/trawl-crawler/trawl/scope"
	"github.com/trawl-crawler/trawl/simhash"
	"github.com/trawl-crawler/trawl/store"
	"github.com/trawl-crawler/trawl/urlnorm"
	"github.com/trawl-crawler/trawl/urlseen"
	"github.com/trawl-crawler/trawl/urlstate"
	"github.com/trawl-crawler/trawl/warc"
)

// Crawler is one crawl. Create it with New, start it with Run.
type Crawler struct {
	opts     Options
	agent    string
	scope    scope.Rules
	frontier *frontier.Frontier
	fetcher  *fetch.Fetcher
	robots   *robots.Cache
	db       *store.DB
	queue    *frontierdb.Store
	seen     *urlseen.Durable
	warc     *warc.Writer
	stats    stats
	resumed  bool      // the data directory held an earlier crawl
	started  time.Time // when New ran: robots.txt fetches pending since before are an earlier run's

	mu          sync.Mutex
	robotsState map[string]*robotsProgress // origin → fetch in progress or failing; removed once settled
	fatal       error                      // first error that stops the crawl
	stopReason  string
}

// robotsProgress tracks an origin's robots.txt fetch across leases.
type robotsProgress struct {
	next     string // redirect target still to fetch, "" for /robots.txt
	hops     int
	failures int
}

// New prepares a crawl: it validates opts, creates DataDir, opens (or
// resumes) the crawl state, repairs WARC files cut off by a crash, opens a
// new WARC file and queues the seeds that are new.
func New(opts Options) (*Crawler, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	c := &Crawler{
		opts:        opts,
		agent:       agentToken(opts.UserAgent),
		robotsState: make(map[string]*robotsProgress),
		started:     time.Now(),
	}
	c.stats.errors = make(map[string]int64)
	c.stats.status = make(map[string]int64)

	seeds, domains, err := c.parseSeeds()
	if err != nil {
		return nil, err
	}
	if len(opts.Domains) > 0 {
		domains = opts.Domains
	}
	c.scope = scope.Rules{Domains: domains, MaxDepth: opts.MaxDepth, MaxShapeRun: opts.MaxShapeRun}.WithDefaults()

	if err := os.MkdirAll(opts.DataDir, 0o755); err != nil {
		return nil, fmt.Errorf("crawl: create data directory: %w", err)
	}
	if err := c.openState(); err != nil {
		return nil, err
	}
	if c.robots, err = robots.NewCache(robots.CacheOptions{}); err != nil {
		c.closeState()
		return nil, err
	}
	if c.fetcher, err = fetch.New(fetch.Options{
		UserAgent:    opts.UserAgent,
		Hosts:        opts.Hosts,
		AllowNets:    opts.AllowNets,
		TotalTimeout: opts.FetchTimeout,
		MaxBodyBytes: opts.MaxBodyBytes,
	}); err != nil {
		c.closeState()
		return nil, err
	}
	warcDir := filepath.Join(opts.DataDir, "warc")
	recovered, err := warc.Recover(warcDir)
	for _, r := range recovered {
		opts.Logger.Info("recovered WARC file cut off by a crash", "file", r.File, "records", r.Kept, "cut_bytes", r.CutBytes)
	}
	if err != nil {
		c.fetcher.Close()
		c.closeState()
		return nil, fmt.Errorf("crawl: recover WARC files: %w", err)
	}
	if c.warc, err = warc.NewWriter(warc.Options{
		Dir:         warcDir,
		MaxFileSize: opts.WARCMaxSize,
		Software:    "trawl/0.1",
		Info: map[string]string{
			"http-header-user-agent": opts.UserAgent,
			"robots":                 "obey",
		},
	}); err != nil {
		c.fetcher.Close()
		c.closeState()
		return nil, err
	}
	// Seeds given again on a resumed crawl are simply already seen.
	cands := make([]candidate, len(seeds))
	for i, u := range seeds {
		cands[i] = candidate{u: u}
	}
	b := c.db.NewBatch()
	items, err := c.admit(b, cands, false)
	if err == nil {
		err = <-c.frontier.Add(b, items...)
	} else {
		b.Close()
	}
	if err != nil {
		c.warc.Close()
		c.fetcher.Close()
		c.closeState()
		return nil, fmt.Errorf("crawl: queue seeds: %w", err)
	}
	c.stats.queuedTotal.Add(int64(len(items)))
	return c, nil
}

// openState opens (or, with Fresh, recreates) DataDir/state and restores
// the seen set and the frontier from it.
func (c *Crawler) openState() error {
	dir := filepath.Join(c.opts.DataDir, "state")
	if c.opts.Fresh {
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("crawl: --fresh: remove %s: %w", dir, err)
		}
	}
	_, statErr := os.Stat(dir)
	c.resumed = statErr == nil
	db, err := store.Open(dir, store.Options{Logger: c.opts.Logger})
	if err != nil {
		return fmt.Errorf("crawl: open state: %w", err)
	}
	c.db = db
	if c.seen, err = urlseen.NewDurable(db, urlseen.DurableOptions{ExpectedURLs: c.opts.ExpectedURLs}); err != nil {
		db.Close()
		return fmt.Errorf("crawl: load seen URLs: %w", err)
	}
	c.queue = frontierdb.New(db, frontierdb.Options{})
	if c.frontier, err = frontier.New(frontier.Options{
		MinDelay:   c.opts.MinDelay,
		MaxDelay:   c.opts.MaxDelay,
		HostBudget: c.opts.HostBudget,
		// A lease outlives the longest fetch plus the WARC write.
		LeaseTimeout: c.opts.FetchTimeout + time.Minute,
		Store:        c.queue,
	}); err != nil {
		c.closeState()
		return err
	}
	return nil
}

// closeState commits what is queued for the store and closes it.
func (c *Crawler) closeState() error {
	var errs []error
	if c.queue != nil {
		if err := c.queue.Close(); err != nil && !errors.Is(err, frontierdb.ErrClosed) {
			errs = append(errs, err)
		}
	}
	if c.db != nil {
		if err := c.db.Close(); err != nil && !errors.Is(err, store.ErrClosed) {
			errs = append(errs, fmt.Errorf("crawl: close state: %w", err))
		}
	}
	return errors.Join(errs...)
}

// parseSeeds canonicalises the seeds and returns them with their hosts
// (the default scope).
func (c *Crawler) parseSeeds() ([]*url.URL, []string, error) {
	var seeds []*url.URL
	var domains []string
	var errs []error
	for _, s := range c.opts.Seeds {
		u, err := urlnorm.Parse(strings.TrimSpace(s), nil)
		if err != nil {
			errs = append(errs, fmt.Errorf("crawl: seed %q: %w", s, err))
			continue
		}
		u = urlnorm.Normalize(u)
		seeds = append(seeds, u)
		domains = append(domains, urlnorm.HostKey(u))
	}
	return seeds, domains, errors.Join(errs...)
}

// Run crawls until the frontier is exhausted, MaxPages is reached, ctx is
// cancelled (SIGINT) or a fatal error (a WARC write failing) stops it. It
// closes the WARC file, writes DataDir/summary.json and returns the
// summary. Once ctx is cancelled no new fetch starts, and the fetches in
// flight get Options.StopGrace to finish (and be archived and recorded);
// those still running then are cut off, not archived, and their URLs stay
// queued.
func (c *Crawler) Run(ctx context.Context) (*Summary, error) {
	c.stats.start = time.Now()
	// On a stop, no new lease is made, and the fetches in flight get
	// StopGrace to finish: a request already sent is better answered and
	// kept than cut off and sent again by the next run.
	fetchCtx, cancelFetches := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelFetches()
	go func() {
		select {
		case <-ctx.Done():
			select {
			case <-time.After(c.opts.StopGrace):
				cancelFetches()
			case <-fetchCtx.Done(): // Run returned first
			}
		case <-fetchCtx.Done():
		}
	}()

	work := make(chan *frontier.Lease)
	slots := make(chan struct{}, c.opts.Concurrency)
	var wg sync.WaitGroup
	for range c.opts.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for l := range work {
				c.handle(fetchCtx, l)
				<-slots
			}
		}()
	}

	reason := c.dispatch(ctx, work, slots)
	close(work)
	wg.Wait()
	c.fetcher.Close()
	werr := errors.Join(c.warc.Close(), c.closeState())

	c.mu.Lock()
	if c.stopReason == "" {
		c.stopReason = reason
	}
	fatal := c.fatal
	c.mu.Unlock()
	if fatal == nil && werr != nil {
		fatal = fmt.Errorf("crawl: close: %w", werr)
	}
	sum := c.summary()
	if fatal != nil {
		sum.Error = fatal.Error()
	}
	if err := sum.write(filepath.Join(c.opts.DataDir, "summary.json")); err != nil && fatal == nil {
		fatal = err
	}
	return sum, fatal
}

// dispatch leases work for idle workers until there is no more, and
// returns why it stopped.
func (c *Crawler) dispatch(ctx context.Context, work chan<- *frontier.Lease, slots chan struct{}) string {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		// Take a worker slot first, so that a lease is only made when a
		// worker can start on it.
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return "signal"
		}
		for {
			if reason := c.stopping(); reason != "" {
				<-slots
				return reason
			}
			l, wait := c.frontier.Lease()
			if l != nil {
				work <- l
				break
			}
			if c.frontier.Done() {
				<-slots
				return "exhausted"
			}
			if wait < 0 {
				wait = time.Hour
			}
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-c.frontier.Changed():
				timer.Stop() // Go 1.23 timers: no stale tick survives Stop

			case <-ctx.Done():
				<-slots
				return "signal"
			}
		}
	}
}

// stopping returns a non-empty reason once the crawl must stop leasing.
func (c *Crawler) stopping() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fatal != nil {
		return "error"
	}
	if c.opts.MaxPages > 0 && c.stats.pagesStarted.Load() >= int64(c.opts.MaxPages) {
		return "max-pages"
	}
	return ""
}

func (c *Crawler) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fatal == nil {
		c.fatal = err
		c.opts.Logger.Error("crawl stops", "err", err)
	}
}

// complete ends a lease with nothing discovered.
func (c *Crawler) complete(l *frontier.Lease, o frontier.Outcome) {
	c.completeWith(l, o, nil, nil)
}

// completeWith ends a lease, queues add (whose seen keys are in b, if b is
// not nil) and returns once all of it is durable.
func (c *Crawler) completeWith(l *frontier.Lease, o frontier.Outcome, b *store.Batch, add []frontier.Item) {
	var attach any
	if b != nil {
		attach = b
	}
	done, err := c.frontier.Complete(l, o, attach, add...)
	if err != nil {
		// The lease expired and its item was offered again: keep what it
		// discovered anyway.
		c.opts.Logger.Warn("complete lease", "url", l.Item.URL, "err", err)
		if len(add) == 0 {
			if b != nil {
				b.Close()
			}
			return
		}
		done = c.frontier.Add(attach, add...)
	}
	if err := <-done; err != nil {
		c.fail(fmt.Errorf("crawl: record completion of %s: %w", l.Item.URL, err))
		return
	}
	c.stats.queuedTotal.Add(int64(len(add)))
}

// handle processes one lease from start to Complete.
func (c *Crawler) handle(ctx context.Context, l *frontier.Lease) {
	u, err := url.Parse(l.Item.URL)
	if err != nil { // canonical URLs always parse; a bug if not
		c.stats.addError("internal")
		c.complete(l, frontier.Outcome{NotStarted: true})
		return
	}
	ip, err := c.fetcher.Resolve(ctx, u.Hostname())
	if err != nil {
		if ctx.Err() != nil {
			c.complete(l, frontier.Outcome{NotStarted: true, Requeue: true})
			return
		}
		// The whole host is unreachable: drop its queue.
		c.stats.addError(string(fetch.ClassOf(err)))
		c.opts.Logger.Info("host unreachable", "host", l.Item.Host, "err", err)
		c.complete(l, frontier.Outcome{NotStarted: true, DropHost: true})
		return
	}
	if !c.frontier.SetIP(l, ip.String()) {
		c.complete(l, frontier.Outcome{NotStarted: true, Requeue: true})
		return
	}
	origin := u.Scheme + "://" + u.Host
	pol, ok := c.robots.Lookup(origin)
	if !ok {
		var notBefore time.Time
		pol, ok, notBefore = c.loadRobots(l.Item.Host, origin)
		if time.Now().Before(notBefore) {
			c.complete(l, frontier.Outcome{NotStarted: true, Requeue: true, NotBefore: notBefore})
			return
		}
	}
	if !ok || pol.Unavailable() {
		c.fetchRobots(ctx, l, origin)
		return
	}
	if !pol.Allowed(c.agent, u) {
		c.stats.robotsDisallowed.Add(1)
		c.complete(l, frontier.Outcome{NotStarted: true})
		return
	}
	if n := c.stats.pagesStarted.Add(1); c.opts.MaxPages > 0 && n > int64(c.opts.MaxPages) {
		c.complete(l, frontier.Outcome{NotStarted: true, Requeue: true})
		return
	}
	c.fetchPage(ctx, l, u)
}

// robotsProgressFor returns origin's robots.txt progress, creating it.
// c.mu must be held.
func (c *Crawler) robotsProgressFor(origin string) *robotsProgress {
	st := c.robotsState[origin]
	if st == nil {
		st = &robotsProgress{}
		c.robotsState[origin] = st
	}
	return st
}

// fetchRobots fetches (one hop of) origin's robots.txt in l's slot and
// puts l's item back: robots.txt fetches count towards the host's gap.
func (c *Crawler) fetchRobots(ctx context.Context, l *frontier.Lease, origin string) {
	c.mu.Lock()
	st := c.robotsProgressFor(origin)
	target, attempts := st.next, st.failures
	c.mu.Unlock()
	if target == "" {
		target = origin + "/robots.txt"
	}
	tu, _ := url.Parse(target)
	if err := c.markRobotsPending(l.Item.Host, origin, attempts); err != nil {
		c.fail(err)
		c.complete(l, frontier.Outcome{NotStarted: true, Requeue: true})
		return
	}
	resp, err := c.fetcher.Fetch(ctx, &fetch.Request{URL: tu})
	c.stats.requests.Add(1)
	if err != nil && ctx.Err() != nil {
		c.complete(l, frontier.Outcome{Requeue: true, Failed: true})
		return
	}
	if resp != nil {
		c.stats.robotsFetches.Add(1)
		if !c.archive(resp) {
			c.complete(l, frontier.Outcome{Requeue: true, Status: resp.Status})
			return
		}
	}
	o := frontier.Outcome{Requeue: true}
	res := robots.FetchResult{Err: err, At: time.Now().UTC()}
	if resp != nil {
		o.Status, o.ResponseTime = resp.Status, resp.Duration
		res.Status, res.Body = resp.Status, resp.Decoded
		if resp.Truncated != "" && resp.Truncated != "length" {
			res.Err = fmt.Errorf("crawl: robots.txt %s: body cut off (%s)", target, resp.Truncated)
		}
		if resp.Status >= 300 && resp.Status < 400 && resp.Location != "" {
			c.mu.Lock()
			st.hops++
			if st.hops <= robots.MaxRedirects {
				st.next = resp.Location
				c.mu.Unlock()
				c.complete(l, o) // next hop in the host's next slot
				return
			}
			c.mu.Unlock()
		}
	} else {
		o.Failed = true
		c.stats.addError(string(fetch.ClassOf(err)))
	}
	pol := c.robots.Store(origin, res)
	c.mu.Lock()
	st.next, st.hops = "", 0
	if pol.Unavailable() {
		st.failures++
	} else {
		// Settled: the cache (and the store) hold the answer now, and the
		// map stays the size of the fetches in progress.
		st.failures = 0
		delete(c.robotsState, origin)
	}
	failures := st.failures
	c.mu.Unlock()
	if pol.Unavailable() {
		c.stats.addError("robots-unavailable")
		o.Failed = true // back the host off
		if failures >= c.opts.RobotsAttempts {
			c.opts.Logger.Info("robots.txt unavailable; dropping host", "origin", origin, "attempts", failures)
			o.DropHost = true
		}
		// The attempt count survives a restart with the completion.
		b := c.db.NewBatch()
		if err := b.Set(store.RobotsKey(l.Item.Host, origin), encodeRobotsFailures(failures, res.At)); err != nil {
			b.Close()
			b = nil
		}
		c.completeWith(l, o, b, nil)
		return
	}
	if d, ok := pol.CrawlDelay(c.agent); ok {
		c.frontier.SetCrawlDelay(l.Item.Host, d)
	}
	// Keep the copy with the lease's completion, so a restart within its
	// 24 hours does not fetch it again.
	b := c.db.NewBatch()
	if err := b.Set(store.RobotsKey(l.Item.Host, origin), encodeRobots(res)); err != nil {
		b.Close()
		b = nil
	}
	c.completeWith(l, o, b, nil)
}

// markRobotsPending records, durably, that a robots.txt request to origin
// is about to be sent, keeping the attempts counted so far.
func (c *Crawler) markRobotsPending(host, origin string, attempts int) error {
	b := c.db.NewBatch()
	if err := b.Set(store.RobotsKey(host, origin), encodeRobotsPending(attempts, time.Now())); err != nil {
		b.Close()
		return fmt.Errorf("crawl: mark robots.txt fetch of %s: %w", origin, err)
	}
	if err := c.db.Commit(b); err != nil {
		return fmt.Errorf("crawl: mark robots.txt fetch of %s: %w", origin, err)
	}
	return nil
}

// loadRobots looks for origin's robots.txt in the store (kept by an
// earlier run) and, if it is still fresh, puts it in the cache. If instead
// an earlier run sent a request for it and stopped before keeping the
// answer, the host was contacted then and the Crawl-delay it asked for is
// not known: notBefore is then that request's time plus the longest
// Crawl-delay honoured, before which the host is left alone.
func (c *Crawler) loadRobots(host, origin string) (pol *robots.Policy, ok bool, notBefore time.Time) {
	v, err := c.db.Get(store.RobotsKey(host, origin))
	if err != nil {
		return nil, false, time.Time{}
	}
	if n, at, pending, ok := decodeRobotsAttempts(v); ok {
		// Unreachable so far, or unanswered: carry on counting the
		// attempts.
		c.mu.Lock()
		st := c.robotsProgressFor(origin)
		st.failures = max(st.failures, n)
		c.mu.Unlock()
		if pending && at.Before(c.started) {
			notBefore = at.Add(min(c.opts.MaxDelay, robots.MaxCrawlDelay))
		}
		return nil, false, notBefore
	}
	res, err := decodeRobots(v)
	if err != nil {
		c.opts.Logger.Warn("stored robots.txt unreadable; fetching again", "origin", origin, "err", err)
		return nil, false, time.Time{}
	}
	c.robots.Store(origin, res)
	pol, ok = c.robots.Lookup(origin) // misses if the copy is older than the TTL
	if ok {
		if d, has := pol.CrawlDelay(c.agent); has {
			c.frontier.SetCrawlDelay(host, d)
		}
	}
	return pol, ok, time.Time{}
}

// archive writes resp to the WARC. A failure stops the crawl.
func (c *Crawler) archive(resp *fetch.Response) bool {
	_, err := c.warc.Write(&warc.Exchange{
		URL:            resp.URL,
		IP:             resp.IP.String(),
		Date:           resp.Start,
		Request:        resp.RawRequest,
		ResponseHeader: resp.RawResponseHeader,
		Body:           resp.Body,
		Truncated:      resp.Truncated,
	})
	if err != nil {
		c.fail(fmt.Errorf("crawl: archive %s: %w", resp.URL, err))
		return false
	}
	c.stats.bytes.Add(int64(len(resp.Body)))
	return true
}

func (c *Crawler) fetchPage(ctx context.Context, l *frontier.Lease, u *url.URL) {
	it := l.Item
	start := time.Now().UTC()
	resp, err := c.fetcher.Fetch(ctx, &fetch.Request{URL: u})
	c.stats.requests.Add(1)
	if err != nil {
		if ctx.Err() != nil {
			c.complete(l, frontier.Outcome{Requeue: true, Failed: true})
			return
		}
		class := fetch.ClassOf(err)
		c.stats.addError(string(class))
		o := frontier.Outcome{Failed: class != fetch.ClassTimeout, Timeout: class == fetch.ClassTimeout}
		if class == fetch.ClassBlocked {
			o = frontier.Outcome{NotStarted: true}
		} else if retryable(class) && it.Attempts < c.opts.MaxRetries {
			l.Item.Attempts++
			o.Requeue = true
		}
		c.opts.Logger.Debug("fetch failed", "url", it.URL, "err", err)
		if o.NotStarted {
			c.complete(l, o)
			return
		}
		c.completeWith(l, o, c.recordFetch(nil, it, urlstate.Observation{At: start, Error: string(class)}), nil)
		return
	}
	if !c.archive(resp) {
		c.complete(l, frontier.Outcome{Requeue: true, Status: resp.Status, ResponseTime: resp.Duration})
		return
	}
	c.stats.pages.Add(1)
	c.stats.addStatus(resp.Status)
	o := frontier.Outcome{Status: resp.Status, ResponseTime: resp.Duration, RetryAfter: retryAfter(resp.Header, resp.Start)}
	var (
		found []candidate
		sim   *uint64 // the page's SimHash, if extraction took it
	)
	switch {
	case resp.Status == 429 || resp.Status == 503:
		if it.Attempts < c.opts.MaxRetries {
			l.Item.Attempts++
			o.Requeue = true
		}
	case resp.Status >= 300 && resp.Status < 400:
		if resp.Location != "" {
			found = c.redirect(it, resp.Location)
		}
	case resp.Status >= 200 && resp.Status < 300:
		found, sim = c.extract(it, u, resp)
	}
	if len(found) == 0 {
		c.completeWith(l, o, c.recordFetch(nil, it, observation(resp, sim)), nil)
		return
	}
	b := c.db.NewBatch()
	add, err := c.admit(b, found, true)
	if err != nil {
		b.Close()
		c.fail(err)
		c.complete(l, frontier.Outcome{Requeue: true, Status: resp.Status, ResponseTime: resp.Duration})
		return
	}
	c.completeWith(l, o, c.recordFetch(b, it, observation(resp, sim)), add)
}

// recordFetch folds a fetch of it into the URL's stored record
// (urlstate) and puts the new record into b, or into a new batch if b is
// nil, which it returns: the record is committed with the lease's
// completion. A stored record that cannot be read is started afresh.
func (c *Crawler) recordFetch(b *store.Batch, it frontier.Item, o urlstate.Observation) *store.Batch {
	key := store.URLKey(it.Host, it.URL)
	var prev urlstate.Record
	v, err := c.db.Get(key)
	switch {
	case err == nil:
		if prev, err = urlstate.Decode(v); err != nil {
			c.opts.Logger.Warn("stored URL state unreadable; starting afresh", "url", it.URL, "err", err)
		}
	case !errors.Is(err, store.ErrNotFound):
		c.opts.Logger.Warn("read URL state; starting afresh", "url", it.URL, "err", err)
	}
	if b == nil {
		b = c.db.NewBatch()
	}
	if err := b.Set(key, urlstate.Encode(prev.Observe(o))); err != nil {
		c.opts.Logger.Warn("record URL state", "url", it.URL, "err", err)
	}
	return b
}

// observation describes a response for the URL's record: the payload's
// SHA-256 (the decoded body, or the body as transferred if it could not be
// decoded) and, for HTML, the SimHash of its visible text: sim if link
// extraction took it in its pass, computed here otherwise.
func observation(resp *fetch.Response, sim *uint64) urlstate.Observation {
	o := urlstate.Observation{
		At:           resp.Start.UTC(),
		Status:       resp.Status,
		NotModified:  resp.Status == http.StatusNotModified,
		ETag:         resp.Header.Get("ETag"),
		LastModified: resp.Header.Get("Last-Modified"),
	}
	if resp.BodySkipped {
		return o
	}
	payload := resp.Decoded
	if resp.DecodeErr != nil {
		payload = resp.Body
	}
	o.Digest, o.HasDigest = sha256.Sum256(payload), true
	if resp.DecodeErr == nil && (resp.MediaType == "text/html" || resp.MediaType == "application/xhtml+xml") {
		if sim != nil {
			o.SimHash = *sim
		} else {
			o.SimHash = simhash.HTML(resp.Decoded)
		}
	}
	return o
}

// retryable reports whether a fetch that failed this way may succeed if
// tried again later: a server that did not answer in time or refused the
// connection may recover; one that sent a malformed or cut-off response
// will most likely send it again.
func retryable(c fetch.Class) bool {
	return c == fetch.ClassTimeout || c == fetch.ClassConnect
}

// redirect returns a redirect's target as a candidate: it goes through
// the same gates as a link.
func (c *Crawler) redirect(it frontier.Item, location string) []candidate {
	if it.Redirects+1 > c.opts.MaxRedirects {
		c.stats.addError("redirect-chain")
		return nil
	}
	t, err := urlnorm.Parse(location, nil)
	if err != nil {
		c.stats.addError("bad-location")
		return nil
	}
	t = urlnorm.Normalize(t)
	// A redirect is not a link: depth and shape run stay the item's.
	return []candidate{{u: t, depth: it.Depth, redirects: it.Redirects + 1, shapeRun: it.ShapeRun}}
}

// extract returns the links of an HTML page worth following and, if it
// read the page, the SimHash of its text (taken in the same pass).
func (c *Crawler) extract(it frontier.Item, u *url.URL, resp *fetch.Response) ([]candidate, *uint64) {
	if resp.MediaType != "text/html" && resp.MediaType != "application/xhtml+xml" {
		return nil, nil
	}
	if _, noFollow := links.XRobotsTag(resp.Header.Values("X-Robots-Tag"), c.agent); noFollow {
		return nil, nil
	}
	page := links.ExtractWith(resp.Decoded, links.Options{Agent: c.agent, SimHash: true})
	sim := &page.SimHash
	if page.NoFollow {
		return nil, sim
	}
	base := u
	if page.BaseHref != "" {
		if b, err := urlnorm.Parse(page.BaseHref, u); err == nil {
			base = b
		}
	}
	found := make([]candidate, 0, len(page.Links))
	for _, ln := range page.Links {
		if ln.NoFollow || !followable(ln) {
			continue
		}
		t, err := urlnorm.Parse(ln.Ref, base)
		if err != nil {
			c.stats.badLinks.Add(1)
			continue
		}
		t = urlnorm.Normalize(t)
		found = append(found, candidate{u: t, depth: it.Depth + 1, shapeRun: scope.ShapeRun(u, it.ShapeRun, t)})
	}
	return found, sim
}

// followable reports whether a link leads to something worth fetching as
// a page: not a stylesheet, icon or script resource.
func followable(ln links.Link) bool {
	if ln.Tag != "link" {
		return true
	}
	for _, rel := range strings.Fields(ln.Rel) {
		switch rel {
		case "stylesheet", "icon", "preload", "prefetch", "dns-prefetch", "preconnect", "modulepreload", "manifest", "apple-touch-icon":
			return false
		}
	}
	return true
}

// candidate is a canonical URL found on a page, in a Location header or
// given as a seed, with what the gates need to know about it.
type candidate struct {
	u                          *url.URL
	depth, redirects, shapeRun int
}

// admit passes candidates through scope (unless they are seeds) and the
// URL-seen gate, whose keys for the new ones go into b, and returns the
// new ones as frontier items. b must be committed with them (as the
// Attach of the frontier change that queues them) or closed.
func (c *Crawler) admit(b *store.Batch, cands []candidate, checkScope bool) ([]frontier.Item, error) {
	urls := make([]string, 0, len(cands))
	kept := cands[:0:0]
	for _, cd := range cands {
		if checkScope {
			if err := c.scope.Check(cd.u, cd.depth); err != nil {
				c.stats.outOfScope.Add(1)
				continue
			}
			if err := c.scope.CheckShapeRun(cd.u, cd.shapeRun); err != nil {
				c.stats.outOfScope.Add(1)
				continue
			}
		}
		urls = append(urls, cd.u.String())
		kept = append(kept, cd)
	}
	if len(urls) == 0 {
		return nil, nil
	}
	isNew, err := c.seen.AddBatch(b, urls)
	if err != nil {
		return nil, fmt.Errorf("crawl: seen-check: %w", err)
	}
	items := make([]frontier.Item, 0, len(urls))
	for i, cd := range kept {
		if !isNew[i] {
			continue
		}
		items = append(items, frontier.Item{
			URL:       urls[i],
			Host:      urlnorm.HostKey(cd.u),
			Depth:     cd.depth,
			Level:     min(cd.depth, 2),
			Redirects: cd.redirects,
			ShapeRun:  cd.shapeRun,
		})
	}
	return items, nil
}

// retryAfter reads a Retry-After header: seconds or an HTTP date.
func retryAfter(h http.Header, now time.Time) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// Progress returns a snapshot of the crawl's counters.
func (c *Crawler) Progress() Progress {
	fs := c.frontier.Stats()
	p := c.stats.snapshot()
	p.Queued, p.InFlight, p.Hosts = fs.Queued, fs.InFlight, fs.Hosts
	p.HostsReady, p.HostsWaiting, p.HostsBackoff = fs.Ready, fs.Waiting, fs.Backoff
	p.Dropped = fs.Dropped
	return p
}

func (c *Crawler) summary() *Summary {
	p := c.Progress()
	c.mu.Lock()
	reason := c.stopReason
	c.mu.Unlock()
	return &Summary{
		Progress:   p,
		StopReason: reason,
		Finished:   time.Now().UTC(),
		WARCFiles:  c.warc.Files(),
		UserAgent:  c.opts.UserAgent,
		Seeds:      c.opts.Seeds,
	}
}

// Summary is what a crawl did; Run writes it to DataDir/summary.json.
type Summary struct {
	Progress
	StopReason string    `json:"stop_reason"` // exhausted, max-pages, signal, error
	Error      string    `json:"error,omitempty"`
	Finished   time.Time `json:"finished"`
	WARCFiles  []string  `json:"warc_files"`
	UserAgent  string    `json:"user_agent"`
	Seeds      []string  `json:"seeds"`
}

func (s *Summary) write(path string) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("crawl: encode summary: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("crawl: write %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("crawl: write %s: %w", path, err)
	}
	return nil
}
