package node

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/trawl-crawler/trawl/crawllog"
	"github.com/trawl-crawler/trawl/css"
	"github.com/trawl-crawler/trawl/fetch"
	"github.com/trawl-crawler/trawl/frontier"
	"github.com/trawl-crawler/trawl/internal/store"
	"github.com/trawl-crawler/trawl/internal/store/dedup"
	"github.com/trawl-crawler/trawl/internal/store/urlstate"
	"github.com/trawl-crawler/trawl/job"
	"github.com/trawl-crawler/trawl/links"
	"github.com/trawl-crawler/trawl/robots"
	"github.com/trawl-crawler/trawl/robotscache"
	"github.com/trawl-crawler/trawl/scope"
	"github.com/trawl-crawler/trawl/simhash"
	"github.com/trawl-crawler/trawl/urlnorm"
	"github.com/trawl-crawler/trawl/warc"
)

// complete ends a lease with nothing discovered.
func (n *Node) complete(l *frontier.Lease, o frontier.Outcome) {
	n.completeWith(l, nil, o, nil, nil)
}

// completeWith ends a lease of job j, queues add (whose seen keys are in
// b, if b is not nil), stores j's tally and returns once all of it is
// durable. Then it sees whether j is done. It reports whether b was
// committed: not when the lease had expired and b held nothing to queue,
// nor when the commit failed (and the node with it).
//
// The tally written is the job's running total, taken under tallyMu
// together with the frontier's Complete: batches attached to completions
// commit in the order Complete took them, so the stored totals never go
// back, whichever worker's batch commits last.
func (n *Node) completeWith(l *frontier.Lease, j *job.Job, o frontier.Outcome, b *store.Batch, add []frontier.Item) (committed bool) {
	if j != nil && b == nil {
		b = n.db.NewBatch()
	}
	if j != nil && o.Requeue {
		j.Stats.SetWaitHost(l.Item.Host)
	}
	var attach any
	if b != nil {
		attach = b
	}
	n.tallyMu.Lock()
	if j != nil {
		j.Stats.Discovered.Add(int64(len(add)))
		if err := b.Set(store.JobTallyKey(j.ID), j.Stats.EncodeTotal()); err != nil {
			n.opts.Logger.Warn("store job tally", "job", j.ID, "err", err)
		}
	}
	done, err := n.frontier.Complete(l, o, attach, add...)
	if errors.Is(err, frontier.ErrNotServed) && b != nil {
		// A partition of some found URL was released since admit split
		// them: those go to its owner too, and the completion again.
		if add, err = n.rerouteUnserved(b, add); err == nil {
			done, err = n.frontier.Complete(l, o, attach, add...)
		}
	}
	n.tallyMu.Unlock()
	if err != nil {
		// The lease expired and its item was offered again: keep what it
		// discovered anyway.
		n.opts.Logger.Warn("complete lease", "url", l.Item.URL, "err", err)
		if len(add) == 0 {
			if b != nil {
				b.Close()
			}
			return false
		}
		if b != nil {
			// Through n.add: a partition released meanwhile has its
			// URLs routed to its owner, not refused (and the node failed).
			done = n.add(b, add)
		} else {
			done = n.frontier.Add(nil, add...)
		}
	}
	if err := <-done; err != nil {
		n.fail(fmt.Errorf("node: record completion of %s: %w", l.Item.URL, err))
		return false
	}
	n.routed()
	if j != nil {
		n.checkDone(j)
	}
	return b != nil
}

// handle processes one lease from start to Complete.
func (n *Node) handle(ctx context.Context, l *frontier.Lease) {
	j := n.Job(l.Item.Job)
	if j == nil {
		n.opts.Logger.Warn("queued URL of an unknown job; dropped", "url", l.Item.URL, "job", l.Item.Job)
		n.complete(l, frontier.Outcome{NotStarted: true})
		return
	}
	switch st, _ := j.State(); st {
	case job.Running:
	case job.Cancelled:
		n.complete(l, frontier.Outcome{NotStarted: true})
		return
	default: // paused or stopped since the lease was made: set aside next time
		n.complete(l, frontier.Outcome{NotStarted: true, Requeue: true})
		return
	}
	if j.Excludes(l.Item.URL) { // queued before an operator excluded it
		j.Stats.Excluded.Add(1)
		n.clog.drop(l.Item, crawllog.DropExcluded, "")
		n.completeWith(l, j, frontier.Outcome{NotStarted: true}, nil, nil)
		return
	}
	u, err := url.Parse(l.Item.URL)
	if err != nil { // canonical URLs always parse; a bug if not
		j.Stats.AddError("internal")
		n.complete(l, frontier.Outcome{NotStarted: true})
		return
	}
	if p, rec := n.sharedCopy(j, l.Item); p != nil {
		n.share(l, j, u, p, rec)
		return
	}
	ip, err := n.fetcher.Resolve(ctx, u.Hostname())
	if err != nil {
		if ctx.Err() != nil {
			n.complete(l, frontier.Outcome{NotStarted: true, Requeue: true})
			return
		}
		// The whole host is unreachable: drop its queue (for every job).
		j.Stats.AddError(string(fetch.ClassOf(err)))
		n.opts.Logger.Info("host unreachable", "host", l.Item.Host, "err", err)
		n.clog.drop(l.Item, crawllog.DropUnreachable, string(fetch.ClassOf(err)))
		n.completeWith(l, j, frontier.Outcome{NotStarted: true, DropHost: true}, nil, nil)
		return
	}
	if !n.frontier.SetIP(l, ip.String()) {
		n.complete(l, frontier.Outcome{NotStarted: true, Requeue: true})
		return
	}
	if gp := n.ipGate.Load(); gp != nil {
		// A fleet's cap on the address, over every member: held until
		// this lease's fetch (robots.txt, sitemap or page) has ended.
		actx, cancel := context.WithTimeout(ctx, ipGateWait)
		release, err := (*gp).Acquire(actx, ip.String())
		cancel()
		if err != nil {
			if ctx.Err() == nil && !errors.Is(err, context.DeadlineExceeded) {
				n.opts.Logger.Warn("per-IP slot not taken", "host", l.Item.Host, "ip", ip, "err", err)
			}
			n.complete(l, frontier.Outcome{NotStarted: true, Requeue: true, NotBefore: n.opts.Now().Add(ipGateRetry), NotBeforeWhy: frontier.GapIPSlot})
			return
		}
		defer release()
	}
	origin := u.Scheme + "://" + u.Host
	v := n.robots.Check(l.Item.Host, origin)
	if v.Action != robotscache.Apply && n.giveUp(l, j, v) {
		return
	}
	switch v.Action {
	case robotscache.Wait:
		why := frontier.GapRobots // an outage: asked again after a backoff
		if v.OutageSince.IsZero() {
			why = frontier.GapLostAnswer // or fetched by another worker now (Until is now)
		}
		n.complete(l, frontier.Outcome{NotStarted: true, Requeue: true, NotBefore: n.retryAt(j, v.Until, v.Attempts, v.OutageSince), NotBeforeWhy: why})
		return
	case robotscache.Fetch:
		n.fetchRobots(ctx, l, j, origin, v)
		return
	}
	if v.Loaded {
		// Kept by an earlier run: the frontier may not know its Crawl-delay.
		n.setCrawlDelay(l.Item.Host, v.Policy)
	}
	// The origin's TDMRep file (tdmrep.go): fetched in this lease's slot
	// when not known or stale, and the item goes back to the queue.
	if n.tdmTurn(ctx, l, j, origin, v.Policy) {
		return
	}
	// Sitemaps (sitemaps.go): while the job has sitemap files of this
	// origin left to read, this lease's slot fetches the next one and its
	// item goes back to the queue. A map lookup once they are done.
	if n.sitemaps.turn(ctx, l, j, origin, v.Policy) {
		return
	}
	if isHostTask(u) { // its work (robots.txt, sitemaps) is done above
		n.complete(l, frontier.Outcome{NotStarted: true})
		return
	}
	if !v.Policy.Allowed(n.agent, u) {
		j.Stats.RobotsDisallowed.Add(1)
		n.clog.drop(l.Item, crawllog.DropRobots, "")
		n.completeWith(l, j, frontier.Outcome{NotStarted: true}, nil, nil)
		return
	}
	if l.Item.Requisite == 0 && !n.startPage(l, j) { // a page's resources are not pages
		return
	}
	n.fetchPage(ctx, l, j, u, v.Policy)
}

// setCrawlDelay tells the frontier host's Crawl-delay under p: none (0)
// if p has none, so that a robots.txt that dropped its Crawl-delay lowers
// the gap again.
func (n *Node) setCrawlDelay(host string, p *robots.Policy) {
	d, _ := p.CrawlDelay(n.agent)
	n.frontier.SetCrawlDelay(host, d)
}

// startPage counts a page against j's MaxPages; once it is reached the
// job stops (its URLs set aside first) and the lease goes back.
func (n *Node) startPage(l *frontier.Lease, j *job.Job) bool {
	c := j.Stats.PagesStarted.Add(1)
	if j.Spec.MaxPages == 0 || c <= int64(j.Spec.MaxPages) {
		return true
	}
	n.end(j, job.Finished, job.ReasonMaxPages, nil)
	n.complete(l, frontier.Outcome{NotStarted: true, Requeue: true})
	return false
}

// robotsGiveUpAttempts is how many unreachable robots.txt answers a job
// waits for before it may give a host up, however long they took: a host
// whose robots.txt fails once is always asked again, even when a slow
// answer grew its gap past the job's RobotsGiveUp.
const robotsGiveUpAttempts = 2

// giveUp drops l's URL for job j if j gives up on hosts whose robots.txt
// stays unavailable, this host's robots.txt has failed at least
// robotsGiveUpAttempts times and its outage has lasted RobotsGiveUp.
func (n *Node) giveUp(l *frontier.Lease, j *job.Job, v robotscache.Verdict) bool {
	if !n.mayGiveUp(j, v.Attempts, v.OutageSince) {
		return false
	}
	if n.opts.Now().Sub(n.outageStart(j, v.OutageSince)) < j.Spec.RobotsGiveUp {
		return false
	}
	if j.Stats.GaveUp(l.Item.Host) {
		n.opts.Logger.Info("robots.txt unavailable too long; job gives the host up", "job", j.ID, "host", l.Item.Host, "since", v.OutageSince, "attempts", v.Attempts)
	}
	n.clog.drop(l.Item, crawllog.DropRobotsUnavailable, "")
	n.completeWith(l, j, frontier.Outcome{NotStarted: true}, nil, nil)
	return true
}

// outageStart is when job j began to wait for a robots.txt unreachable
// since outageSince: an outage older than this run of the job (kept by an
// earlier run) counts from the run's start, so that a resumed job waits
// its full RobotsGiveUp for the host again before giving it up.
func (n *Node) outageStart(j *job.Job, outageSince time.Time) time.Time {
	if s := j.Stats.Started(); s.After(outageSince) {
		return s
	}
	return outageSince
}

// mayGiveUp reports whether job j may give up a host whose robots.txt
// has failed attempts times in a row since outageSince.
func (n *Node) mayGiveUp(j *job.Job, attempts int, outageSince time.Time) bool {
	return j.Spec.RobotsGiveUp > 0 && !outageSince.IsZero() && attempts >= robotsGiveUpAttempts
}

// retryAt is when a host whose robots.txt is not settled is asked again
// for job j: the keeper's retry time, or j's give-up time if sooner and
// j may give the host up by then.
func (n *Node) retryAt(j *job.Job, until time.Time, attempts int, outageSince time.Time) time.Time {
	if n.mayGiveUp(j, attempts, outageSince) {
		if g := n.outageStart(j, outageSince).Add(j.Spec.RobotsGiveUp); g.Before(until) {
			return g
		}
	}
	return until
}

// fetchRobots fetches (one hop of) origin's robots.txt in l's slot and
// puts l's item back: robots.txt fetches count towards the host's gap.
func (n *Node) fetchRobots(ctx context.Context, l *frontier.Lease, j *job.Job, origin string, v robotscache.Verdict) {
	host := l.Item.Host
	if err := n.robots.Begin(host, origin); err != nil {
		n.robots.Cancel(host, origin)
		n.fail(err)
		n.complete(l, frontier.Outcome{NotStarted: true, Requeue: true})
		return
	}
	start := n.opts.Now()
	resp, err := n.fetcher.Fetch(ctx, &fetch.Request{URL: v.URL})
	j.Stats.Requests.Add(1)
	n.observe(n.fetchEvent(j, host, true, start, resp, err))
	// The crawl log's via of a robots.txt is the URL that needed it.
	logIt := frontier.Item{Depth: l.Item.Depth, Via: l.Item.URL}
	if err != nil {
		n.clog.failure(j, logIt, v.URL.String(), true, start, err)
	}
	if err != nil && ctx.Err() != nil {
		n.robots.Cancel(host, origin) // the answer is lost: the host waits as after a crash
		n.complete(l, frontier.Outcome{Requeue: true, Failed: true})
		return
	}
	o := frontier.Outcome{Requeue: true, Robots: true}
	ans := robotscache.Answer{Err: err, At: n.opts.Now().UTC()}
	if resp != nil {
		j.Stats.RobotsFetches.Add(1)
		// Not released: the robots keeper is handed the body, and a
		// robots.txt fetch per host is too rare to be worth the care.
		sum, hasSum := payloadSum(resp)
		loc, ok := n.archive(j, resp, sum, hasSum, nil, nil, nil)
		if !ok {
			n.robots.Cancel(host, origin)
			n.complete(l, frontier.Outcome{Requeue: true, Status: resp.Status})
			return
		}
		n.clog.response(j, logIt, true, resp, loc, verdict{digest: digestOf(resp, sum, hasSum, false, sum)})
		o.Status, o.ResponseTime = resp.Status, resp.Duration
		o.RetryAfter = retryAfter(resp.Header, resp.Start)
		ans.Status, ans.Body, ans.Location = resp.Status, resp.Decoded, resp.Location
		if resp.Truncated != "" && resp.Truncated != "length" {
			ans.Err = fmt.Errorf("node: robots.txt %s: body cut off (%s)", v.URL, resp.Truncated)
		}
	} else {
		o.Failed = true
		o.ResponseTime = n.opts.Now().Sub(start) // as for a page (fetchPage)
		j.Stats.AddError(string(fetch.ClassOf(err)))
	}
	b := n.db.NewBatch()
	res, err := n.robots.Done(b, host, origin, ans)
	if err != nil {
		b.Close()
		n.fail(err)
		n.complete(l, frontier.Outcome{Requeue: true, Status: o.Status})
		return
	}
	switch {
	case res.Unavailable:
		j.Stats.AddError("robots-unavailable")
		o.Failed = true // back the host off
		o.NotBefore = n.retryAt(j, res.RetryAt, res.Attempts, res.OutageSince)
		o.NotBeforeWhy = frontier.GapRobots
	case res.Policy != nil:
		n.setCrawlDelay(host, res.Policy)
	}
	n.completeWith(l, j, o, b, nil)
}

// archive writes resp to the WARC, as a revisit if rv is not nil, and
// waits until it is on disk. A failure stops the node. warcSum, if not
// nil, is the SHA-256 of the body as transferred (contentSeen's): the
// record's payload digest, which the writer then does not compute again
// (a content-encoded body has its decoded sum, sum, taken too); for an
// identical-payload-digest revisit it is required, the original's payload
// digest.
func (n *Node) archive(j *job.Job, resp *fetch.Response, sum [sha256.Size]byte, hasSum bool, rv *warc.Revisit, warcSum *[sha256.Size]byte, meta *warc.Metadata) (warc.Location, bool) {
	ex := &warc.Exchange{
		Metadata:       meta,
		URL:            resp.URL,
		IP:             resp.IP.String(),
		Date:           resp.Start,
		Request:        resp.RawRequest,
		ResponseHeader: resp.RawResponseHeader,
		Body:           resp.Body,
		Truncated:      resp.Truncated,
		Protocols:      resp.Protocols,
	}
	switch {
	case warcSum != nil:
		ex.PayloadSHA256 = warcSum[:]
	case hasSum && resp.Identity():
		ex.PayloadSHA256 = sum[:] // the payload is the body as transferred
	}
	if rv != nil {
		if rv.Profile == warc.ProfileServerNotModified {
			ex.PayloadSHA256 = nil // no payload
		}
		ex.Revisit = rv
	}
	loc, err := n.warc.Write(ex)
	if err == nil {
		err = <-n.warc.Durable(loc)
	}
	if err != nil {
		n.fail(fmt.Errorf("node: archive %s: %w", resp.URL, err))
		return warc.Location{}, false
	}
	j.Stats.Bytes.Add(int64(len(resp.Body)))
	return loc, true
}

// contentSeen looks resp's payload up in the content-seen gate. It
// returns the digest the WARC record carries (the body as transferred),
// whether the response may enter the gate (a complete 2xx with a body,
// whatever its type: a PDF at two URLs is one payload), and the archived
// original if the payload was archived before.
func (n *Node) contentSeen(resp *fetch.Response, sum [sha256.Size]byte, hasSum bool) (warcSum [sha256.Size]byte, eligible bool, orig *dedup.Original) {
	if !hasSum || resp.Status < 200 || resp.Status > 299 || len(resp.Body) == 0 || resp.Truncated != "" {
		return warcSum, false, nil
	}
	warcSum = sum
	if !resp.Identity() {
		warcSum = sha256.Sum256(resp.Body)
	}
	ci, set := n.contentIndex()
	if !set && !n.state.Digests.MayHave(store.DigestKey(warcSum)) { // the filter knows the local store's keys only
		return warcSum, true, nil
	}
	o, ok, err := ci.Exact(warcSum)
	if err != nil {
		n.opts.Logger.Warn("content-seen lookup; archiving in full", "url", resp.URL, "err", err)
		return warcSum, true, nil
	}
	if !ok {
		return warcSum, true, nil
	}
	return warcSum, true, &o
}

// keepOriginal enters a response archived in full into the content-seen
// gate, in b (the page's completion batch, committed after its WARC
// records are durable).
func (n *Node) keepOriginal(b *store.Batch, j *job.Job, resp *fetch.Response, warcSum [sha256.Size]byte, loc warc.Location) {
	o := dedup.Original{URL: resp.URL, Date: resp.Start, File: filepath.Base(loc.File), Offset: loc.Offset, RecordID: loc.RecordID, Job: j.ID}
	n.state.Digests.Add(store.DigestKey(warcSum)) // before b commits: the filter holds every stored key
	ci, _ := n.contentIndex()
	if err := ci.AddExact(b, warcSum, o); err != nil {
		n.opts.Logger.Warn("content-seen gate: keep original", "url", resp.URL, "err", err)
	}
}

// sureResemblance is the resemblance at which the near-duplicate gate is
// sure a page is a copy: only such copies count against a host's
// duplicate allowance (Options.DuplicateAllowance).
const sureResemblance = 0.95

// nearSeen looks the print of the page at pageURL up in the near-duplicate
// gate: the archived page most like it, if it resembles it at least
// Options.NearResemblance, or nil. The page's own earlier print (a
// refetch) does not count. A lookup that fails counts as none.
func (n *Node) nearSeen(j *job.Job, pageURL string, sim simhash.Print) *dedup.Match {
	ci, _ := n.contentIndex()
	m, ok, err := ci.Near(sim, n.opts.NearResemblance)
	if err != nil {
		n.opts.Logger.Warn("near-duplicate lookup; judged on the pages in flight only", "url", pageURL, "err", err)
	}
	if ok && m.URL != pageURL {
		return &m
	}
	// Not in the index: perhaps among the pages judged original whose
	// prints are not committed yet (dedup.Recent), else one of them now.
	if m, ok := n.recentPrints.CheckAndAdd(sim, pageURL, j.ID, n.opts.NearResemblance); ok {
		return &m
	}
	return nil
}

// keepNear enters the fingerprint of an original HTML page into the
// near-duplicate gate, in b (its completion batch, committed after its
// WARC records are durable).
func (n *Node) keepNear(b *store.Batch, job uint32, pageURL string, sim simhash.Print) {
	ci, _ := n.contentIndex()
	if err := ci.AddNear(b, sim, pageURL, job); err != nil {
		n.opts.Logger.Warn("near-duplicate gate: keep fingerprint", "url", pageURL, "err", err)
	}
}

// revisitOf is the identical-payload-digest revisit of orig; nil if orig
// is.
func revisitOf(orig *dedup.Original) *warc.Revisit {
	if orig == nil {
		return nil
	}
	return &warc.Revisit{TargetURI: orig.URL, Date: orig.Date, RecordID: orig.RecordID}
}

func (n *Node) fetchPage(ctx context.Context, l *frontier.Lease, j *job.Job, u *url.URL, pol *robots.Policy) {
	it := l.Item
	prev := n.loadRecord(it)
	start := n.opts.Now().UTC()
	vals := n.checks.validators(j, it.Host, prev)
	resp, err := n.fetcher.Fetch(ctx, &fetch.Request{URL: u, Validators: vals})
	j.Stats.Requests.Add(1)
	n.observe(n.fetchEvent(j, it.Host, false, start, resp, err))
	if err != nil {
		n.clog.failure(j, it, it.URL, false, start, err)
		if ctx.Err() != nil {
			n.complete(l, frontier.Outcome{Requeue: true, Failed: true})
			return
		}
		class := fetch.ClassOf(err)
		j.Stats.AddError(string(class))
		// The time a failure took counts as a response time (the
		// adaptive gap): a host that let a fetch time out is slow, and a
		// hostile one may still be answering the request it abandoned
		// (a header drip notices the hang-up only at its next byte), so
		// it is not asked again within a few short gaps.
		o := frontier.Outcome{Failed: class != fetch.ClassTimeout, Timeout: class == fetch.ClassTimeout,
			ResponseTime: n.opts.Now().Sub(start)}
		if class == fetch.ClassBlocked {
			o = frontier.Outcome{NotStarted: true}
		} else if retryable(class) && it.Attempts < n.opts.MaxRetries {
			l.Item.Attempts++
			o.Requeue, o.Retry = true, true
		}
		n.opts.Logger.Debug("fetch failed", "url", it.URL, "err", err)
		o.Refetch = fetchedBefore(prev) // a recrawl spends no host budget
		if o.NotStarted {
			n.completeWith(l, j, o, nil, nil)
			return
		}
		n.completeWith(l, j, o, n.recordFetch(nil, j, it, prev, urlstate.Observation{At: start, Error: string(class), Job: j.ID}), nil)
		return
	}
	defer resp.Release() // nothing below keeps the body past this call
	if resp.NotModified {
		n.notModified(l, j, u, pol, resp, prev)
		return
	}
	sum, hasSum := payloadSum(resp)
	warcSum, eligible, orig := n.contentSeen(resp, sum, hasSum)
	var loc warc.Location // where the capture is archived, once it is (below)
	o := frontier.Outcome{Status: resp.Status, ResponseTime: resp.Duration, RetryAfter: retryAfter(resp.Header, resp.Start),
		Refetch: fetchedBefore(prev)}
	var (
		page *sharedPage // what another job wanting this URL may use instead of a fetch
		sim  *uint64     // the page's SimHash, if extraction took it
		text textPrint   // the page's visible text, if extraction read it
		near *dedup.Match
		// reprints: pages of the host entered into the near-duplicate
		// gate before its template was learned, to enter again (templates)
		reprints []reprint
		// unparsed: an exact copy of a page the job archived, whose links
		// it has: not parsed
		unparsed bool
		// alone: every other job has ended, so none may take this fetch
		// (its leads are not kept, and a copy may go unparsed)
		alone = !n.othersLive(j)
		metas []links.Meta // the page's use-stating meta elements (usage.go)
	)
	// keep enters the page into the content-seen gates with its
	// completion: the exact one for every complete 2xx archived in full,
	// the near one for HTML pages judged original.
	keep := func(b *store.Batch) *store.Batch {
		if eligible && orig == nil {
			n.keepOriginal(b, j, resp, warcSum, loc)
		}
		if text.judged && near == nil && orig == nil {
			n.keepNear(b, j.ID, it.URL, text.gate)
		}
		for _, r := range reprints {
			n.keepNear(b, r.job, r.url, r.print)
		}
		return b
	}
	switch {
	case resp.Status == 429 || resp.Status == 503:
		if it.Attempts < n.opts.MaxRetries {
			l.Item.Attempts++
			o.Requeue, o.Retry = true, true
		}
	case resp.Status >= 300 && resp.Status < 400:
		page = &sharedPage{at: start, status: resp.Status}
		if resp.Location != "" {
			page.redirect = n.location(j, u, resp.Location)
		}
	case resp.Status >= 200 && resp.Status < 300:
		page = &sharedPage{at: start, status: resp.Status}
		if orig != nil {
			j.Stats.Revisits.Add(1)
			// A refetch of the same URL is no duplicate, nor is a
			// requisite's copy (a placeholder image, a 2x file like the 1x):
			// sites repeat resources, not pages.
			o.Duplicate = orig.URL != it.URL && it.Requisite == 0
			if _, sharded := n.contentIndex(); orig.Job == j.ID && alone && !(sharded && orig.URL == it.URL) {
				// An exact copy of a page this job archived: its links are
				// the job's already, so it is not parsed again. (While other
				// jobs run it is, so that they can share the page and its
				// links; a copy archived by another job is parsed for this one.
				// In a fleet, a refetch of the URL is parsed: its first fetch
				// may have been a dead member's, whose links died with its
				// store while the fingerprint lived on with another member.)
				unparsed = true
				break
			}
		}
		page.links, page.requisites, metas, text = n.extract(j, it, u, resp)
		if text.read {
			sim = &text.fp
		}
		if orig == nil && text.judged {
			// A near duplicate is parsed all the same: the links it shares
			// with its original are known, and those to URLs of its own
			// shape are left (below).
			if near = n.nearSeen(j, it.URL, text.gate); near != nil {
				j.Stats.NearDuplicates.Add(1)
				text.dup = true
				// Only a copy the gate is sure of counts against the
				// host's duplicate allowance.
				o.Duplicate = near.Resemblance >= sureResemblance
			}
		}
		if text.read && orig == nil && near == nil && n.opts.NearResemblance >= 0 {
			// It takes the page's text: keeps it, or lets its buffer go.
			reprints = n.templates.add(u.Host, text.content, text.judged, it.URL, j.ID, nearMinWords)
		} else {
			text.content.Release() // its buffer goes to the next page
		}
		text.content = nil
		text.dup = text.dup || o.Duplicate
		page.text = text
	default:
		page = &sharedPage{at: start, status: resp.Status}
	}
	// Archived once read: the page's statements on the use of its
	// content go beside it, or keep it out (usage.go).
	usage := n.usageOf(j, u, resp, pol, metas)
	if usage.skip {
		eligible = false // nothing archived: no original for the gate
	} else {
		var ok bool
		var bodySum *[sha256.Size]byte // known when the page may enter the gate
		if eligible {
			bodySum = &warcSum
		}
		if loc, ok = n.archive(j, resp, sum, hasSum, revisitOf(orig), bodySum, usage.record); !ok {
			n.complete(l, frontier.Outcome{Requeue: true, Status: resp.Status, ResponseTime: resp.Duration})
			return
		}
	}
	j.Stats.Pages.Add(1)
	j.Stats.AddStatus(resp.Status)
	switch resp.Truncated { // archived as cut off (WARC-Truncated); counted as a failure too
	case "length":
		j.Stats.AddError(ErrorTooLarge)
	case "time":
		j.Stats.AddError(ErrorBodyTimeout)
	case "disconnect", "unspecified":
		// The host broke off its answer: backed off as after a 503, as
		// when it fails before the head.
		j.Stats.AddError(ErrorBodyCut)
		o.Failed = true
	}
	if resp.DecodeErr != nil { // archived as sent; a hostile coding is named, not silent
		j.Stats.AddError(ErrorDecode)
	}
	var found, reqs []candidate
	if page != nil {
		found = n.candidates(j, it, u, page)
		reqs = n.requisites(j, it, u, page)
	}
	if near != nil {
		// A near duplicate's links to URLs of its own shape lead on to more
		// of itself (a soft 404's "missing-N" pages, a calendar's next
		// month): not followed, nor marked seen, so that a page that yields
		// can still queue them. Its other links are followed.
		found = slices.DeleteFunc(found, func(c candidate) bool { return c.inRun })
	}
	n.clog.response(j, it, false, resp, loc, verdict{exact: orig, near: near, digest: digestOf(resp, sum, hasSum, eligible, warcSum),
		usage: usage.summary, denied: usage.denied})
	obs := observation(resp, sim, sum, hasSum)
	obs.Job = j.ID
	if vals == (fetch.Validators{}) && resp.Truncated == "" && resp.DecodeErr == nil {
		// Only a whole, decoded answer to a request without validators
		// tells whether the host's validators follow its content.
		n.checks.observe(it.Host, prev, obs)
	}
	if usage.skip {
		// Not archived: a recrawl asks again unconditionally, so that its
		// answer is judged whole (a 304 has no meta elements) and a 304
		// never stands for a capture that is not in the archive.
		obs.ETag, obs.LastModified = "", ""
	}
	if page != nil && !alone && !unparsed && it.Requisite == 0 { // for other jobs to take (shared.go); a requisite's links were not read
		obs.Leads, obs.HasLeads = page.leads(), true
	}
	if len(found) == 0 && len(reqs) == 0 {
		n.earnRoom(j, it, u, nil, text, &viaText{n: n, it: it})
		n.completeWith(l, j, o, keep(n.recordFetch(nil, j, it, prev, obs)), nil)
		return
	}
	b := n.db.NewBatch()
	// Links first: a frame the page also links to, within the job's
	// scope, is a page (followed), not a requisite.
	add, err := n.admitLinks(b, j, it, u, found, text)
	if err == nil {
		var more []frontier.Item
		more, err = n.admitRequisites(b, j, it, reqs)
		add = append(add, more...)
	}
	if err != nil {
		b.Close()
		n.fail(err)
		n.complete(l, frontier.Outcome{Requeue: true, Status: resp.Status, ResponseTime: resp.Duration})
		return
	}
	n.completeWith(l, j, o, keep(n.recordFetch(b, j, it, prev, obs)), add)
}

// notModified ends l with resp, a 304 to job j's conditional fetch of a
// page whose record was prev: archived as a server-not-modified revisit
// referring to the capture of prev's payload (when the content-seen gate
// knows it: a payload stored content-encoded is keyed by its transferred
// bytes, and the reference is then left out), not parsed (its links are
// j's already: validators), and recorded with prev's content. A gate set
// with SetContentIndex (a fleet's, which may get no answer from the
// fingerprint's owner) that does not know it is backed by the node's own
// store, which holds the originals this node archived (cluster/fpshard
// keeps a copy of each) and those of partitions it serves or served.
func (n *Node) notModified(l *frontier.Lease, j *job.Job, u *url.URL, pol *robots.Policy, resp *fetch.Response, prev urlstate.Record) {
	it := l.Item
	rv := &warc.Revisit{Profile: warc.ProfileServerNotModified}
	var orig *dedup.Original
	ci, set := n.contentIndex()
	capture, ok, err := ci.Exact(prev.Digest)
	if err != nil {
		n.opts.Logger.Warn("content-seen lookup of a 304's capture", "url", it.URL, "err", err)
	}
	if !ok && set {
		if c, found, err := n.dedup.Exact(prev.Digest); err != nil {
			n.opts.Logger.Warn("local lookup of a 304's capture", "url", it.URL, "err", err)
		} else if found {
			capture, ok = c, true
		}
	}
	if ok {
		rv.TargetURI, rv.Date, rv.RecordID = capture.URL, capture.Date, capture.RecordID
		orig = &capture
	}
	// What the 304's site says (usage.go): robots.txt, the origin's
	// tdmrep.json and the 304's own header fields; the page's meta
	// elements are its earlier capture's.
	usage := n.usageOf(j, u, resp, pol, nil)
	var loc warc.Location
	if !usage.skip {
		var ok bool
		if loc, ok = n.archive(j, resp, [sha256.Size]byte{}, false, rv, nil, usage.record); !ok {
			n.complete(l, frontier.Outcome{Requeue: true, Status: resp.Status, ResponseTime: resp.Duration})
			return
		}
	}
	j.Stats.Pages.Add(1)
	j.Stats.NotModified.Add(1)
	j.Stats.AddStatus(resp.Status)
	n.clog.response(j, it, false, resp, loc, verdict{notModified: true, exact: orig, usage: usage.summary, denied: usage.denied})
	obs := observation(resp, nil, [sha256.Size]byte{}, false)
	obs.Job = j.ID
	o := frontier.Outcome{Status: resp.Status, ResponseTime: resp.Duration, RetryAfter: retryAfter(resp.Header, resp.Start), Refetch: true}
	n.completeWith(l, j, o, n.recordFetch(nil, j, it, prev, obs), nil)
}

// share answers l (job j's lease of a URL) with page, which another job's
// fetch got (sharedCopy): the page counts for j and its links go through
// j's scope and seen gate, and no request is sent again. A continuous j
// schedules its next visit from the fetch taken, unless the URL's record
// rec names one already.
func (n *Node) share(l *frontier.Lease, j *job.Job, u *url.URL, p *sharedPage, rec urlstate.Record) {
	if !n.startPage(l, j) {
		return
	}
	j.Stats.Pages.Add(1)
	j.Stats.Shared.Add(1)
	j.Stats.AddStatus(p.status)
	found := n.candidates(j, l.Item, u, p)
	var b *store.Batch
	if j.Spec.Continuous && rec.Due.IsZero() {
		b = n.db.NewBatch()
		next := rec
		n.recrawl.reschedule(b, j, l.Item, rec, &next)
		if err := b.Set(store.URLKey(l.Item.Host, l.Item.URL), urlstate.Encode(next)); err != nil {
			n.opts.Logger.Warn("record URL state", "url", l.Item.URL, "err", err)
		}
	}
	if len(found) == 0 {
		n.completeWith(l, j, frontier.Outcome{NotStarted: true}, b, nil)
		return
	}
	if b == nil {
		b = n.db.NewBatch()
	}
	add, err := n.admitLinks(b, j, l.Item, u, found, p.text)
	if err != nil {
		b.Close()
		n.fail(err)
		n.complete(l, frontier.Outcome{NotStarted: true, Requeue: true})
		return
	}
	n.completeWith(l, j, frontier.Outcome{NotStarted: true}, b, add)
}

// recordFetch folds job j's fetch of it into the URL's stored record
// (prev, from loadRecord before the fetch: one fetch of a URL runs at a
// time), its change history and its recrawl schedule, and puts them into b,
// or into a new batch if b is nil, which it returns: they are committed
// with the lease's completion.
func (n *Node) recordFetch(b *store.Batch, j *job.Job, it frontier.Item, prev urlstate.Record, o urlstate.Observation) *store.Batch {
	key := store.URLKey(it.Host, it.URL)
	if b == nil {
		b = n.db.NewBatch()
	}
	rec := foldVisit(j, prev, prev.Observe(o), o)
	rec.Depth, rec.HasDepth = it.Depth, true // for a shallower path found later (Fold)
	n.recrawl.reschedule(b, j, it, prev, &rec)
	n.state.Fetched.Add(key) // before b commits: the filter holds every stored key
	if err := b.Set(key, urlstate.Encode(rec)); err != nil {
		n.opts.Logger.Warn("record URL state", "url", it.URL, "err", err)
	}
	return b
}

// payloadSum returns the SHA-256 of a response's payload: the decoded
// body, or the body as transferred if it could not be decoded. The bool
// is always true.
func payloadSum(resp *fetch.Response) ([sha256.Size]byte, bool) {
	if resp.DecodeErr != nil {
		return sha256.Sum256(resp.Body), true
	}
	return sha256.Sum256(resp.Decoded), true
}

// observation describes a response for the URL's record: the payload's
// SHA-256 (sum, from payloadSum) and, for HTML, the SimHash of its visible
// text: sim if link extraction took it in its pass, computed here
// otherwise.
func observation(resp *fetch.Response, sim *uint64, sum [sha256.Size]byte, hasSum bool) urlstate.Observation {
	v := fetch.ValidatorsOf(resp.Header)
	o := urlstate.Observation{
		At:           resp.Start.UTC(),
		Status:       resp.Status,
		NotModified:  resp.Status == http.StatusNotModified,
		ETag:         v.ETag,
		LastModified: v.LastModified,
	}
	if !hasSum {
		return o
	}
	o.Digest, o.HasDigest = sum, true
	if resp.DecodeErr == nil && isHTML(resp.MediaType) {
		if sim != nil {
			o.SimHash = *sim
		} else {
			text, _ := links.Reader(resp.Decoded, resp.Header.Get("Content-Type"))
			o.SimHash = simhash.HTMLReader(text)
		}
	}
	return o
}

func isHTML(mediaType string) bool {
	return mediaType == "text/html" || mediaType == "application/xhtml+xml"
}

// retryable reports whether a fetch that failed this way may succeed if
// tried again later: a server that did not answer in time or refused the
// connection may recover; one that sent a malformed or cut-off response
// will most likely send it again.
func retryable(c fetch.Class) bool {
	return c == fetch.ClassTimeout || c == fetch.ClassConnect
}

// location parses a redirect's target: fetch.Response.Location, resolved
// against the request URL u, or as sent when net/url could not parse it
// (a value no parser takes, e.g. "http://[::1", counts bad-location and
// is dropped).
func (n *Node) location(j *job.Job, u *url.URL, location string) *url.URL {
	t, err := urlnorm.Parse(location, u)
	if err != nil {
		j.Stats.AddError("bad-location")
		return nil
	}
	return urlnorm.Normalize(t)
}

// candidates returns the pages job j is to consider after page answered
// its item it (URL u): the redirect's target, or the page's links. A
// requisite leads to none (requisites).
func (n *Node) candidates(j *job.Job, it frontier.Item, u *url.URL, p *sharedPage) []candidate {
	if it.Requisite > 0 {
		return nil // archived, not followed
	}
	if p.redirect != nil {
		if !n.redirectAllowed(j, it) {
			return nil
		}
		// A redirect is not a link: depth and shape run stay the item's.
		return []candidate{{u: p.redirect, via: it.URL, depth: it.Depth, redirects: it.Redirects + 1, shapeRun: it.ShapeRun}}
	}
	// A link within the page's shape continues its run (runs.go): its
	// run value is settled once the links out of the run are admitted.
	found := make([]candidate, len(p.links))
	for i, t := range p.links {
		found[i] = candidate{u: t, via: it.URL, depth: it.Depth + 1, inRun: scope.SameShape(t, u)}
	}
	return found
}

// requisites returns the resources job j fetches after page answered its
// item it (URL u): what the page embeds, within the job's hops of their
// page, or, for a requisite that redirects, its target (a requisite
// still, of the same hops); each within the job's reach of u's host
// (job.Spec.RequisiteInReach), at the page's depth.
func (n *Node) requisites(j *job.Job, it frontier.Item, u *url.URL, p *sharedPage) []candidate {
	refs, hops, redirects := p.requisites, it.Requisite+1, 0
	switch {
	case p.redirect != nil && it.Requisite > 0:
		if !n.redirectAllowed(j, it) {
			return nil
		}
		refs, hops, redirects = []*url.URL{p.redirect}, it.Requisite, it.Redirects+1
	case hops > j.Spec.MaxRequisiteHops():
		return nil
	}
	var out []candidate
	for _, r := range refs {
		if !j.Spec.RequisiteInReach(u.Host, r.Host) || !j.Scope.LengthOK(r.String()) {
			j.Stats.OutOfScope.Add(1)
			continue
		}
		out = append(out, candidate{u: r, via: it.URL, depth: it.Depth, redirects: redirects, requisite: hops})
	}
	return out
}

// redirectAllowed reports whether item it may follow one more redirect,
// counting a chain too long for job j.
func (n *Node) redirectAllowed(j *job.Job, it frontier.Item) bool {
	if it.Redirects+1 > n.opts.MaxRedirects {
		j.Stats.AddError("redirect-chain")
		return false
	}
	return true
}

// admitRequisites passes the requisites reqs of item it through job j's
// exclusions and URL-seen gate, as admit does for links, without the
// job's domain, depth and trap rules (the reach and the hop limit are
// theirs: requisites): a page's resources are as many as the page says,
// once each.
func (n *Node) admitRequisites(b *store.Batch, j *job.Job, it frontier.Item, reqs []candidate) ([]frontier.Item, error) {
	if len(reqs) == 0 {
		return nil, nil
	}
	items, err := n.admit(b, j, reqs, false, it.Host)
	j.Stats.Requisites.Add(int64(len(items)))
	return items, err
}

// textPrint is what the pass that extracts a page's links read of its
// main text (simhash.Builder).
type textPrint struct {
	read  bool   // the page was read: the fields below are its
	fp    uint64 // the SimHash of its main text, which its URL's record keeps
	words int    // words of main text
	// content is the main text, for the template of its host
	// (templates.add, which takes it); released by fetchPage otherwise
	content *simhash.Content
	// gate: the near-duplicate gate's print of it, its host's template left
	// out (templates); judged: the gate applies (it is on, and gate has at
	// least nearMinWords words)
	gate   simhash.Print
	judged bool
	// dup: the page is an exact or near duplicate of a page archived
	// (another URL's): it yields nothing new (patterns.go)
	dup bool
}

// nearMinWords is the fewest words of main text, its host's template left
// out, a page needs for the near-duplicate gate to judge it: on fewer, one
// edit changes much of the page. Short distinct pages of one pattern
// (Javadoc's "No usage of X") differ in their titles, which raises the bar
// (dedup.RetitledResemblance); short pages that share theirs ("Page not
// found") are judged.
const nearMinWords = 15

// extract returns the links of an HTML page worth following and, if it
// read the page, the SimHash of its text (taken in the same pass). For a
// job that fetches requisites (wantReqs: the item is within the job's
// hops of its page) it also returns what the page embeds, or what a
// stylesheet refers to. A requisite's own links are not followed: for
// an item that is one (it.Requisite > 0) links is nil.
func (n *Node) extract(j *job.Job, it frontier.Item, u *url.URL, resp *fetch.Response) (found, reqs []*url.URL, metas []links.Meta, sim textPrint) {
	wantReqs := it.Requisite < j.Spec.MaxRequisiteHops()
	if wantReqs && isCSS(resp.MediaType) {
		res := urlnorm.NewResolver(u)
		for _, r := range css.Refs(resp.Decoded, maxSheetRefs) {
			reqs = appendResolved(j, reqs, res, r.URL)
		}
		return nil, reqs, nil, textPrint{}
	}
	if !isHTML(resp.MediaType) {
		return nil, nil, nil, textPrint{}
	}
	_, noFollow := links.XRobotsTag(resp.Header.Values("X-Robots-Tag"), n.agent)
	page := links.ExtractWith(resp.Decoded, links.Options{Agent: n.agent, SimHash: !noFollow, ContentType: resp.Header.Get("Content-Type"), Requisites: wantReqs})
	base := u
	if page.BaseHref != "" {
		if b, err := urlnorm.Parse(page.BaseHref, u); err == nil {
			base = b
		}
	}
	res := urlnorm.NewResolver(base)
	if wantReqs {
		// A nofollow page's resources are fetched all the same: they are
		// part of the page, not links out of it.
		reqs = make([]*url.URL, 0, len(page.Requisites))
		for _, r := range page.Requisites {
			reqs = appendResolved(j, reqs, res, r.Ref)
		}
	}
	metas = page.Metas
	if noFollow {
		return nil, reqs, metas, textPrint{}
	}
	sim = textPrint{read: true, fp: page.SimHash, words: page.Content.Words(), content: page.Content}
	if n.opts.NearResemblance >= 0 {
		sim.gate = n.templates.print(u.Host, page.Content)
		sim.judged = sim.gate.Words >= nearMinWords
	}
	if page.NoFollow || it.Requisite > 0 {
		return nil, reqs, metas, sim
	}
	found = make([]*url.URL, 0, len(page.Links))
	for _, ln := range page.Links {
		if ln.NoFollow || !followable(ln) {
			continue
		}
		found = appendResolved(j, found, res, ln.Ref)
	}
	return found, reqs, metas, sim
}

// appendResolved appends ref, resolved by res and normalised, to out; a
// ref that does not parse is counted as a bad link.
func appendResolved(j *job.Job, out []*url.URL, res *urlnorm.Resolver, ref string) []*url.URL {
	t, err := res.Parse(ref)
	if err != nil {
		j.Stats.BadLinks.Add(1)
		return out
	}
	return append(out, urlnorm.Normalize(t))
}

// maxSheetRefs bounds the references taken from one fetched stylesheet:
// with a page's MaxRequisites and the hops, what one page can make the
// crawl fetch stays bounded by their product, and a stylesheet is rarely
// more than a few dozen fonts and images.
const maxSheetRefs = 200

// isCSS reports a stylesheet's media type.
func isCSS(mediaType string) bool { return mediaType == "text/css" }

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
	via                        string // the URL it was found at; "" for a seed
	depth, redirects, shapeRun int
	// inRun: a link to a URL of the linking page's shape (admitLinks
	// sets its shapeRun)
	inRun bool
	// requisite: a resource a page embeds, this many references from it
	// (frontier.Item.Requisite); 0 for a page
	requisite int
}

// levelOf is the frontier level of candidate cd of job j: a requisite's
// is the job's top, so that a page's resources are fetched soon after it
// (ahead of its host's links), a page's by its depth.
func levelOf(j *job.Job, cd candidate) int {
	if cd.requisite > 0 {
		return j.Level(0, levels)
	}
	return j.Level(cd.depth, levels)
}

// admit passes candidates through j's scope (unless they are seeds), its
// exclusion patterns, the per-pattern room (links only: patterns.go) and
// its URL-seen gate, whose keys for the new ones go into b, and returns
// the new ones as frontier items of j. b must be committed with them (as
// the Attach of the frontier change that queues them) or closed.
//
// home is the host whose fetch b completes ("" for seeds): in a fleet,
// links to other partitions are routed (routeForeign).
func (n *Node) admit(b *store.Batch, j *job.Job, cands []candidate, checkScope bool, home string) ([]frontier.Item, error) {
	urls := make([]string, 0, len(cands))
	kept := cands[:0:0]
	for _, cd := range cands {
		cd.u = j.Scope.StripSession(cd.u)
		if checkScope && !n.inScope(j, cd, true) {
			continue
		}
		s, ok := n.notExcluded(j, cd)
		if !ok {
			continue
		}
		urls = append(urls, s)
		kept = append(kept, cd)
	}
	if n.outbox != nil {
		routed, err := n.routeForeign(b, j, urls, kept, func(cd candidate) int { return levelOf(j, cd) }, home)
		if err != nil {
			return nil, err
		}
		urls, kept = unrouted(urls, routed), unrouted(kept, routed)
	}
	var patterns []string // of kept, with the pattern rule
	lim := j.Scope.PatternLimit()
	if checkScope && lim > 0 {
		urls, kept, patterns = n.patternRoom(j, urls, kept, lim)
	}
	if len(urls) == 0 {
		return nil, nil
	}
	isNew, err := n.seen.AddBatch(b, j.ID, urls)
	if err != nil {
		return nil, fmt.Errorf("node: seen-check: %w", err)
	}
	items := make([]frontier.Item, 0, len(urls))
	over := 0 // new URLs over their pattern's room
	for i, cd := range kept {
		if !isNew[i] {
			continue
		}
		if patterns != nil && !n.patterns.Admit(j.ID, patterns[i], lim, scope.PatternRoomPerYield) {
			// Room taken since patternRoom looked (another worker), or a
			// URL the seen gate's filter only thought it had seen: seen,
			// never queued.
			j.Stats.OutOfScope.Add(1)
			over++
			n.patternDropped(j, cd, patterns[i], lim)
			continue
		}
		items = append(items, frontier.Item{
			URL:       urls[i],
			Host:      urlnorm.HostKey(cd.u),
			Job:       j.ID,
			Depth:     cd.depth,
			Level:     levelOf(j, cd),
			Redirects: cd.redirects,
			ShapeRun:  cd.shapeRun,
			Via:       cd.via,
			Requisite: cd.requisite,
		})
	}
	j.Stats.Duplicates.Add(int64(len(urls) - len(items) - over))
	return items, nil
}

// inScope passes cd through j's scope rules and, with shapes, the
// shape-run rule, counting and logging a drop.
func (n *Node) inScope(j *job.Job, cd candidate, shapes bool) bool {
	err := j.Scope.Check(cd.u, cd.depth)
	if err == nil && shapes {
		err = j.Scope.CheckShapeRun(cd.u, cd.shapeRun)
	}
	if err != nil {
		j.Stats.OutOfScope.Add(1)
		n.clog.scopeDropped(j, cd, err)
		return false
	}
	return true
}

// notExcluded returns cd's URL and whether no exclusion pattern of j
// matches it, counting and logging a drop.
func (n *Node) notExcluded(j *job.Job, cd candidate) (string, bool) {
	s := cd.u.String()
	if j.Excludes(s) {
		j.Stats.Excluded.Add(1)
		n.clog.drop(frontier.Item{URL: s, Job: j.ID, Depth: cd.depth, Via: cd.via}, crawllog.DropExcluded, "")
		return s, false
	}
	return s, true
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
