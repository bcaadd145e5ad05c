package node

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"sync"
	"time"

	"github.com/trawl-crawler/trawl/crawllog"
	"github.com/trawl-crawler/trawl/fetch"
	"github.com/trawl-crawler/trawl/frontier"
	"github.com/trawl-crawler/trawl/internal/store"
	"github.com/trawl-crawler/trawl/job"
	"github.com/trawl-crawler/trawl/robots"
	"github.com/trawl-crawler/trawl/sitemap"
	"github.com/trawl-crawler/trawl/urlnorm"
	"github.com/trawl-crawler/trawl/warc"
)

// Sitemaps (Options.Sitemaps). Once an origin's robots.txt applies, each
// job reads the origin's sitemaps before its pages: the files its
// robots.txt names (Sitemap: lines) and /sitemap.xml, then the children
// of the index files among them. They are fetched one per lease, in the
// host's slot, as robots.txt is (fetchRobots): the lease's item goes back
// to the queue and the request counts towards the host's gap.
//
//	handle ── robots Apply ──▶ sitemapTurn: files left for (job, origin)?
//	    no (a map lookup) ──▶ the page
//	    yes ──▶ fetch one file ▶ WARC ▶ sitemap.Parse ▶ sitemap.Allowed ▶
//	            scope, exclusions ▶ URL-seen (exact) ▶ frontier at the
//	            job's top level, with the progress record, in the lease's
//	            completion batch; entries seen already ▶ sitemapSeen
//
// The progress of a job through an origin's sitemaps is one store record
// (store.SitemapKey, drawn below), committed with the completion of the
// lease that read a file, so a restart neither fetches a read file again
// nor forgets one left. In memory, sitemapTracker caches the records
// (bounded; a dropped one is read again once), so that the check of a
// host whose sitemaps are done costs a map lookup.
//
// A job reads an origin's sitemaps once; a continuous job reads them again
// Options.SitemapEvery (a day, the robots.txt rule) after it finished
// them: the end of a round schedules a host task (hostTask, recrawl.go)
// that gives the host a lease then, even when none of its pages is due.

// Bounds on one job's reading of one origin's sitemaps.
const (
	// maxSitemapFiles is the most files read per origin and job in one
	// round: the ones named, /sitemap.xml and index children together.
	// Each costs one gap of the host before its pages.
	maxSitemapFiles = 50
	// maxSitemapDepth is how deep indexes are followed: 1 reads the
	// children of an index named in robots.txt; 2 also the children of
	// an index that an index lists (sitemaps.org forbids it; sites do it).
	maxSitemapDepth = 2
	// maxSitemapStates bounds the records held in memory; past it those
	// with no fetch in progress are dropped, and read again when needed.
	maxSitemapStates = 100_000
)

// sitemapFile is one sitemap file of an origin.
type sitemapFile struct {
	url string // canonical
	// robots: it speaks for its whole host (sitemap.Allowed): named in
	// robots.txt, or a child of an index that was.
	robots bool
	depth  uint8 // 0 named in robots.txt or /sitemap.xml, 1 a child of an index, ...
	done   bool  // read, or given up
}

// sitemapRecord is a job's progress through an origin's sitemaps.
type sitemapRecord struct {
	started  time.Time // when the job began this round; zero: none begun
	finished time.Time // when its last file was read; zero while files are left
	// pageDepth is the crawl depth of the pages the files list: one below
	// the URL whose lease began the round.
	pageDepth int
	files     []sitemapFile
}

// sitemapRecordVersion is the first byte of a stored sitemapRecord.
//
// Value of a store.SitemapKey (part of the on-disk format; docs/design/storage.md):
//
//	+------+-----------------+------------------+------------+-----------------+
//	| 0x01 | started: varint | finished: varint | page depth | files: uvarint  |
//	|      | Unix ns         | Unix ns, 0: not  | uvarint    | count, then each|
//	+------+-----------------+------------------+------------+-----------------+
//	each file:
//	+---------------------------+-------------+-----------------------------+
//	| flags (1 B): 0x01 read,   | index depth | URL: uvarint length + bytes |
//	| 0x02 speaks for its host  | (1 B)       |                             |
//	+---------------------------+-------------+-----------------------------+
//
// Trailing bytes after the files are ignored (a later version's).
const sitemapRecordVersion = 0x01

const (
	sitemapFileDone   = 0x01
	sitemapFileRobots = 0x02
)

// encode returns r's stored form.
func (r *sitemapRecord) encode() []byte {
	b := []byte{sitemapRecordVersion}
	b = binary.AppendVarint(b, unixNano(r.started))
	b = binary.AppendVarint(b, unixNano(r.finished))
	b = binary.AppendUvarint(b, uint64(max(r.pageDepth, 0)))
	b = binary.AppendUvarint(b, uint64(len(r.files)))
	for _, f := range r.files {
		var flags byte
		if f.done {
			flags |= sitemapFileDone
		}
		if f.robots {
			flags |= sitemapFileRobots
		}
		b = append(b, flags, f.depth)
		b = binary.AppendUvarint(b, uint64(len(f.url)))
		b = append(b, f.url...)
	}
	return b
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromUnixNano(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns).UTC()
}

// errBadSitemapRecord wraps every decodeSitemapRecord error.
var errBadSitemapRecord = errors.New("node: malformed sitemaps record")

// decodeSitemapRecord reads a stored sitemapRecord.
func decodeSitemapRecord(b []byte) (sitemapRecord, error) {
	var r sitemapRecord
	if len(b) == 0 || b[0] != sitemapRecordVersion {
		return r, fmt.Errorf("%w: version", errBadSitemapRecord)
	}
	rest := b[1:]
	cut := fmt.Errorf("%w: cut off", errBadSitemapRecord)
	varint := func() (int64, bool) {
		v, n := binary.Varint(rest)
		rest = rest[max(n, 0):]
		return v, n > 0
	}
	uvarint := func() (uint64, bool) {
		v, n := binary.Uvarint(rest)
		rest = rest[max(n, 0):]
		return v, n > 0
	}
	started, ok1 := varint()
	finished, ok2 := varint()
	depth, ok3 := uvarint()
	count, ok4 := uvarint()
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return sitemapRecord{}, cut
	}
	if depth > 1<<20 || count > maxSitemapFiles {
		return sitemapRecord{}, fmt.Errorf("%w: depth %d, %d files", errBadSitemapRecord, depth, count)
	}
	r.started, r.finished, r.pageDepth = fromUnixNano(started), fromUnixNano(finished), int(depth)
	for range count {
		if len(rest) < 2 {
			return sitemapRecord{}, cut
		}
		f := sitemapFile{done: rest[0]&sitemapFileDone != 0, robots: rest[0]&sitemapFileRobots != 0, depth: rest[1]}
		rest = rest[2:]
		n, ok := uvarint()
		if !ok || n > uint64(len(rest)) {
			return sitemapRecord{}, cut
		}
		f.url, rest = string(rest[:n]), rest[n:]
		r.files = append(r.files, f)
	}
	return r, nil
}

// next returns the index of the first file not read, or -1.
func (r *sitemapRecord) next() int {
	for i, f := range r.files {
		if !f.done {
			return i
		}
	}
	return -1
}

// add appends a file not listed yet, within maxSitemapFiles; it reports
// whether it did.
func (r *sitemapRecord) add(f sitemapFile) bool {
	if len(r.files) >= maxSitemapFiles {
		return false
	}
	for _, g := range r.files {
		if g.url == f.url {
			return false
		}
	}
	r.files = append(r.files, f)
	return true
}

// finish marks the round finished at now if no file is left.
func (r *sitemapRecord) finish(now time.Time) {
	if r.next() < 0 && r.finished.IsZero() {
		r.finished = now
	}
}

// siteKey names a job's reading of an origin's sitemaps.
type siteKey struct {
	job    job.ID
	origin string
}

// siteProgress is a sitemapRecord held in memory.
type siteProgress struct {
	rec  sitemapRecord
	busy bool // a lease is fetching one of its files, until its completion is durable
}

// sitemapTracker caches the records of (job, origin) pairs. Safe for
// concurrent use; mu is never held during I/O.
type sitemapTracker struct {
	mu sync.Mutex
	m  map[siteKey]*siteProgress
}

func newSitemapTracker() *sitemapTracker {
	return &sitemapTracker{m: make(map[siteKey]*siteProgress)}
}

// idle reports whether p has nothing for a lease to do at now: a fetch of
// it is in progress, or its round is finished and, for a continuous job,
// not older than every (Options.SitemapEvery). t.mu must be held.
func (p *siteProgress) idle(now time.Time, continuous bool, every time.Duration) bool {
	if p.busy {
		return true
	}
	if p.rec.started.IsZero() || p.rec.finished.IsZero() {
		return false
	}
	return !continuous || now.Sub(p.rec.finished) < every
}

// insert adds p under k, first dropping every record with no fetch in
// progress if the map is full. t.mu must be held.
func (t *sitemapTracker) insert(k siteKey, p *siteProgress) {
	if len(t.m) >= maxSitemapStates {
		for k, q := range t.m {
			if !q.busy {
				delete(t.m, k)
			}
		}
	}
	t.m[k] = p
}

// sitemapTurn is handle's hook once the robots.txt of origin applies to
// l (policy p): while job j has sitemap files of origin left to read, it
// fetches the next one in l's slot, completes l (its item goes back to
// the queue) and reports true. For an origin whose sitemaps are done it
// costs a map lookup (and, once per origin and job per run, a store read).
func (n *Node) sitemapTurn(ctx context.Context, l *frontier.Lease, j *job.Job, origin string, p *robots.Policy) bool {
	if n.opts.NoSitemaps {
		return false
	}
	k := siteKey{j.ID, origin}
	now := n.opts.Now()
	t := n.sitemaps
	t.mu.Lock()
	sp := t.m[k]
	if sp != nil && sp.idle(now, j.Spec.Continuous, n.opts.SitemapEvery) {
		t.mu.Unlock()
		return false
	}
	t.mu.Unlock()
	if sp == nil {
		rec := n.loadSitemaps(l.Item.Host, k)
		t.mu.Lock()
		if sp = t.m[k]; sp == nil {
			sp = &siteProgress{rec: rec}
			t.insert(k, sp)
		}
		if sp.idle(now, j.Spec.Continuous, n.opts.SitemapEvery) {
			t.mu.Unlock()
			return false
		}
		t.mu.Unlock()
	}
	su, i, dirty := n.claimSitemap(sp, l, j, origin, p, now)
	if dirty {
		n.saveSitemaps(j, l.Item.Host, k, sp)
	}
	if su == nil {
		return false
	}
	n.fetchSitemap(ctx, l, j, k, sp, i, su)
	return true
}

// claimSitemap begins a round if none is (a new job, or a continuous
// job's TTL), gives up the files that cannot be fetched in l's slot and
// claims the next one: its URL and index, or nil when none is left or
// another lease holds sp. dirty reports a change to store without a fetch:
// files given up (and logged), or the round finished.
func (n *Node) claimSitemap(sp *siteProgress, l *frontier.Lease, j *job.Job, origin string, p *robots.Policy, now time.Time) (su *url.URL, i int, dirty bool) {
	t := n.sitemaps
	t.mu.Lock()
	defer t.mu.Unlock()
	if sp.busy {
		return nil, -1, false
	}
	if sp.rec.started.IsZero() || !sp.rec.finished.IsZero() {
		sp.rec = newSitemapRound(origin, p, l.Item.Depth+1, now)
	}
	for {
		if i = sp.rec.next(); i < 0 {
			sp.rec.finish(now)
			return nil, -1, true
		}
		f := &sp.rec.files[i]
		var why string
		if su, why = n.sitemapFetchable(f.url, l.Item.Host, p); why != "" {
			f.done, dirty = true, true
			n.opts.Logger.Info("sitemap not fetched", "job", j.ID, "url", f.url, "why", why)
			continue
		}
		sp.busy = true
		return su, i, dirty
	}
}

// newSitemapRound is the start of a round of origin's sitemaps: the files
// robots.txt (p) names, then /sitemap.xml, listing pages of depth
// pageDepth.
func newSitemapRound(origin string, p *robots.Policy, pageDepth int, now time.Time) sitemapRecord {
	r := sitemapRecord{started: now, pageDepth: pageDepth}
	for _, s := range p.Sitemaps() {
		if u, err := urlnorm.Parse(s, nil); err == nil {
			r.add(sitemapFile{url: urlnorm.Normalize(u).String(), robots: true})
		}
	}
	r.add(sitemapFile{url: origin + "/sitemap.xml"})
	return r
}

// sitemapFetchable parses a sitemap file's URL and says why it may not be
// fetched in a slot of host under robots.txt p ("" if it may): a file on
// another host would be fetched outside that host's gap, so it is not.
func (n *Node) sitemapFetchable(raw, host string, p *robots.Policy) (*url.URL, string) {
	u, err := url.Parse(raw)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https"):
		return nil, "not an http(s) URL"
	case urlnorm.HostKey(u) != host:
		return nil, "on another host (fetched only in its own host's slot)"
	case !p.Allowed(n.agent, u):
		return nil, "disallowed by robots.txt"
	}
	return u, ""
}

// saveSitemaps stores sp's record after files were given up without a
// fetch (or the round finished without one), without waiting: if it is
// lost, the next run gives them up again, at no request.
func (n *Node) saveSitemaps(j *job.Job, host string, k siteKey, sp *siteProgress) {
	n.sitemaps.mu.Lock()
	v, finished := sp.rec.encode(), sp.rec.finished
	n.sitemaps.mu.Unlock()
	b := n.db.NewBatch()
	if err := b.Set(store.SitemapKey(host, uint32(k.job), k.origin), v); err != nil {
		b.Close()
		n.opts.Logger.Warn("store sitemaps record", "origin", k.origin, "err", err)
		return
	}
	if !finished.IsZero() {
		n.scheduleHostTask(b, j, host, k.origin, finished)
	}
	if err := n.db.CommitNoSync(b); err != nil {
		n.opts.Logger.Warn("store sitemaps record", "origin", k.origin, "err", err)
	}
}

// loadSitemaps reads k's record from the store: none (a zero record) if
// there is none or it is unreadable.
func (n *Node) loadSitemaps(host string, k siteKey) sitemapRecord {
	v, err := n.db.Get(store.SitemapKey(host, uint32(k.job), k.origin))
	if errors.Is(err, store.ErrNotFound) {
		return sitemapRecord{}
	}
	if err != nil {
		n.opts.Logger.Warn("read sitemaps record; starting afresh", "origin", k.origin, "err", err)
		return sitemapRecord{}
	}
	rec, err := decodeSitemapRecord(v)
	if err != nil {
		n.opts.Logger.Warn("sitemaps record unreadable; starting afresh", "origin", k.origin, "err", err)
		return sitemapRecord{}
	}
	return rec
}

// release ends a lease's claim on sp (claimSitemap): sp is free for the
// next lease.
func (t *sitemapTracker) release(sp *siteProgress) {
	t.mu.Lock()
	sp.busy = false
	t.mu.Unlock()
}

// sitemapResult is what reading one sitemap file gave.
type sitemapResult struct {
	pages    []sitemap.Entry // page entries the host rule allows
	children []string        // child sitemaps (of an index) the host rule allows
	refused  int             // entries the host rule refused
	sum      sitemap.Summary
	err      error // a *sitemap.SyntaxError, a *sitemap.LimitError or the reader's
}

// fetchSitemap fetches file i of sp (URL su) in l's slot, archives it,
// queues what it lists and completes l with sp's record.
func (n *Node) fetchSitemap(ctx context.Context, l *frontier.Lease, j *job.Job, k siteKey, sp *siteProgress, i int, su *url.URL) {
	defer n.sitemaps.release(sp)
	n.sitemaps.mu.Lock()
	file := sp.rec.files[i]
	n.sitemaps.mu.Unlock()
	var (
		o   = frontier.Outcome{Requeue: true}
		res sitemapResult
	)
	if p := n.shared.get(sitemapShareKey(file.url)); p != nil && p.sitemap != nil && !p.at.Before(j.Created) {
		// Another job read the file while this one ran: no request again.
		res, o = *p.sitemap, frontier.Outcome{Requeue: true, NotStarted: true}
		j.Stats.Sitemaps.Add(1)
	} else if !n.readSitemapFile(ctx, l, j, file, su, &o, &res) {
		return
	}
	n.afterSitemap(l, j, k, sp, i, file, o, res)
}

// readSitemapFile fetches the sitemap file at su in l's slot, archives
// and reads it into res, and sets o from the answer. It reports false
// when it completed l itself (stopping, or the archive failed).
func (n *Node) readSitemapFile(ctx context.Context, l *frontier.Lease, j *job.Job, file sitemapFile, su *url.URL, o *frontier.Outcome, res *sitemapResult) bool {
	start := n.opts.Now()
	resp, err := n.fetcher.Fetch(ctx, &fetch.Request{URL: su})
	j.Stats.Requests.Add(1)
	n.observe(n.fetchEvent(j, l.Item.Host, false, start, resp, err))
	// The crawl log's via of a sitemap is the URL whose lease fetched it.
	logIt := frontier.Item{Job: j.ID, Depth: l.Item.Depth, Via: l.Item.URL}
	if err != nil {
		n.logFailure(j, logIt, file.url, false, start, err)
		if ctx.Err() != nil { // stopping: the file stays to be read
			n.complete(l, frontier.Outcome{Requeue: true, Failed: true})
			return false
		}
		class := fetch.ClassOf(err)
		j.Stats.AddError(string(class))
		o.Failed, o.Timeout = class != fetch.ClassTimeout, class == fetch.ClassTimeout
		n.opts.Logger.Info("sitemap fetch failed; skipped", "job", j.ID, "url", file.url, "err", err)
		return true
	}
	defer resp.Release()
	sum, hasSum := payloadSum(resp)
	loc, ok := n.archive(j, resp, sum, hasSum, nil, sum)
	if !ok {
		n.complete(l, frontier.Outcome{Requeue: true, Status: resp.Status})
		return false
	}
	o.Status, o.ResponseTime, o.RetryAfter = resp.Status, resp.Duration, retryAfter(resp.Header, resp.Start)
	j.Stats.Sitemaps.Add(1)
	*res = n.readSitemap(j, file, su, resp)
	n.logSitemap(j, logIt, resp, loc, digestOf(resp, sum, hasSum, false, sum), *res)
	if n.othersLive(j) { // other jobs may want the same file
		kept := *res
		n.shared.put(sitemapShareKey(file.url), &sharedPage{at: start, status: resp.Status, sitemap: &kept})
	}
	return true
}

// afterSitemap queues what a sitemap file listed (res) and completes l
// with sp's record.
func (n *Node) afterSitemap(l *frontier.Lease, j *job.Job, k siteKey, sp *siteProgress, i int, file sitemapFile, o frontier.Outcome, res sitemapResult) {
	host := l.Item.Host
	b := n.db.NewBatch()
	n.sitemaps.mu.Lock()
	depth := sp.rec.pageDepth
	n.sitemaps.mu.Unlock()
	add, err := n.admitListed(b, j, file.url, depth, res)
	if err != nil {
		b.Close()
		n.fail(err)
		n.complete(l, frontier.Outcome{Requeue: true, Status: o.Status})
		return
	}
	n.sitemaps.mu.Lock()
	sp.rec.files[i].done = true
	for _, c := range res.children {
		sp.rec.add(sitemapFile{url: c, robots: file.robots, depth: file.depth + 1})
	}
	sp.rec.finish(n.opts.Now())
	v, finished := sp.rec.encode(), sp.rec.finished
	n.sitemaps.mu.Unlock()
	if err := b.Set(store.SitemapKey(host, uint32(k.job), k.origin), v); err != nil {
		n.opts.Logger.Warn("store sitemaps record", "origin", k.origin, "err", err)
	}
	if !finished.IsZero() {
		n.scheduleHostTask(b, j, host, k.origin, finished)
	}
	n.completeWith(l, j, o, b, add)
}

// readSitemap parses a fetched sitemap file and keeps the entries the
// sitemaps.org host rule allows it: pages of a urlset or text file, or
// child sitemaps of an index within maxSitemapDepth. A malformed file or
// one past a limit keeps what was read before the fault, and is logged.
func (n *Node) readSitemap(j *job.Job, file sitemapFile, su *url.URL, resp *fetch.Response) sitemapResult {
	var res sitemapResult
	if resp.Status < 200 || resp.Status > 299 {
		n.opts.Logger.Debug("sitemap not there", "job", j.ID, "url", file.url, "status", resp.Status)
		return res
	}
	body := resp.Decoded
	if resp.DecodeErr != nil {
		body = resp.Body
	}
	sm, err := sitemap.Parse(bytes.NewReader(body), sitemap.Options{})
	res.sum, res.err = sm.Summary, err
	if err == nil && resp.Truncated != "" {
		res.err = fmt.Errorf("node: sitemap %s: body cut off (%s)", file.url, resp.Truncated)
	}
	var robotsURL *url.URL
	if file.robots {
		robotsURL = &url.URL{Scheme: su.Scheme, Host: su.Host, Path: "/robots.txt"}
	}
	for _, e := range sm.Entries {
		loc, perr := url.Parse(e.Loc)
		if perr != nil || !sitemap.Allowed(su, loc, robotsURL) {
			res.refused++
			continue
		}
		if sm.Kind != sitemap.KindIndex {
			res.pages = append(res.pages, e)
		} else if file.depth < maxSitemapDepth {
			res.children = append(res.children, e.Loc)
		}
	}
	n.logSitemapError(j, file.url, res)
	return res
}

// logSitemapError logs, in the node's log, a sitemap file cut short.
func (n *Node) logSitemapError(j *job.Job, url string, res sitemapResult) {
	var syn *sitemap.SyntaxError
	var lim *sitemap.LimitError
	switch {
	case res.err == nil:
	case errors.As(res.err, &syn):
		n.opts.Logger.Warn("sitemap malformed: the rest of it is skipped", "job", j.ID, "url", url, "kept", res.sum.Entries, "err", res.err)
	case errors.As(res.err, &lim):
		n.opts.Logger.Warn("sitemap over a limit: the rest of it is skipped", "job", j.ID, "url", url, "kept", res.sum.Entries, "err", res.err)
	default:
		n.opts.Logger.Warn("sitemap unreadable: the rest of it is skipped", "job", j.ID, "url", url, "kept", res.sum.Entries, "err", res.err)
	}
	if res.refused > 0 {
		n.opts.Logger.Info("sitemap lists URLs it may not speak for (sitemaps.org host rule); ignored", "job", j.ID, "url", url, "refused", res.refused)
	}
}

// Crawl log errors of a sitemap file read in part (crawllog.Entry.Error,
// beside the fetch classes); Detail says what and where.
const (
	logSitemapMalformed = "sitemap-malformed"
	logSitemapLimit     = "sitemap-limit"
)

// logSitemap writes the crawl log line of a fetched sitemap file.
func (n *Node) logSitemap(j *job.Job, it frontier.Item, resp *fetch.Response, loc warc.Location, digest string, res sitemapResult) {
	if n.clog == nil {
		return
	}
	e := &crawllog.Entry{Time: n.opts.Now().UTC(), Job: j.ID, URL: resp.URL, Status: resp.Status,
		Bytes: int64(len(resp.Body)), MIME: resp.MediaType, Duration: resp.Duration, Depth: it.Depth, Via: it.Via,
		Digest: digest, WARC: filepath.Base(loc.File), Offset: loc.Offset}
	if resp.Status >= 200 && resp.Status <= 299 {
		e.Detail = fmt.Sprintf("sitemap %s: %d entries, %d skipped, %d refused by the host rule", res.sum.Kind, res.sum.Entries, res.sum.Skipped, res.refused)
	}
	var lim *sitemap.LimitError
	switch {
	case res.err == nil:
	case errors.As(res.err, &lim):
		e.Error, e.Detail = logSitemapLimit, fmt.Sprintf("%s; %d entries kept", res.err, res.sum.Entries)
	default:
		e.Error, e.Detail = logSitemapMalformed, fmt.Sprintf("%s; %d entries kept", res.err, res.sum.Entries)
	}
	n.clog.Write(e)
}

// admitListed passes the pages a sitemap file (fileURL) lists through
// job j's scope, its exclusions and its URL-seen gate (keys into b) and
// returns the new ones, at depth, as items at the job's top priority level. Unlike
// links, listed pages skip the shape-run and pattern-budget trap rules
// (the site itself lists them). The seen gate's answer is exact
// (urlseen.Durable never trusts its Bloom filter's "maybe" alone), so no
// false positive hides a listed page; pages seen already go to
// sitemapSeen with their lastmod.
func (n *Node) admitListed(b *store.Batch, j *job.Job, fileURL string, depth int, res sitemapResult) ([]frontier.Item, error) {
	if len(res.pages) == 0 {
		return nil, nil
	}
	urls := make([]string, 0, len(res.pages))
	kept := make([]candidate, 0, len(res.pages))
	lastmod := make([]time.Time, 0, len(res.pages))
	for _, e := range res.pages {
		u, err := url.Parse(e.Loc) // canonical already (sitemap.Entry.Loc)
		if err != nil {
			continue
		}
		cd := candidate{u: j.Scope.StripSession(u), via: fileURL, depth: depth}
		if !n.inScope(j, cd, false) { // no shape rule: the site lists these URLs itself
			continue
		}
		s, ok := n.notExcluded(j, cd)
		if !ok {
			continue
		}
		urls, kept, lastmod = append(urls, s), append(kept, cd), append(lastmod, e.LastMod)
	}
	if n.outbox != nil {
		routed, err := n.routeForeign(b, j, urls, kept, func(candidate) int { return j.Level(0, levels) })
		if err != nil {
			return nil, err
		}
		urls, kept, lastmod = unrouted(urls, routed), unrouted(kept, routed), unrouted(lastmod, routed)
	}
	if len(urls) == 0 {
		return nil, nil
	}
	isNew, err := n.seen.AddBatch(b, j.ID, urls)
	if err != nil {
		return nil, fmt.Errorf("node: seen-check of sitemap %s: %w", fileURL, err)
	}
	items := make([]frontier.Item, 0, len(urls))
	for i, cd := range kept {
		it := frontier.Item{URL: urls[i], Host: urlnorm.HostKey(cd.u), Job: j.ID, Depth: cd.depth,
			Level: j.Level(0, levels), Via: cd.via}
		if !isNew[i] {
			n.sitemapSeen(b, j, it, lastmod[i])
			continue
		}
		items = append(items, it)
	}
	j.Stats.SitemapURLs.Add(int64(len(items)))
	return items, nil
}

// sitemapSeen is handed every page a sitemap lists that job j had seen
// already (queued or fetched), with the sitemap's lastmod for it (zero if
// none), and b, the batch of the lease's completion: a page whose lastmod
// is after its last fetch has its scheduled recrawl brought forward to now
// (bringForward).
func (n *Node) sitemapSeen(b *store.Batch, j *job.Job, it frontier.Item, lastmod time.Time) {
	j.Stats.SitemapKnown.Add(1)
	if !lastmod.IsZero() {
		n.bringForward(b, it, lastmod)
	}
}
