package node

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
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
// to the queue and the request counts towards the host's gap. The
// reading is sitemapReader's; it reaches the rest of the node through
// sitemapNode (the politeness path, the admission of listed pages, the
// lease's completion) and the recrawl schedule through hostTasks.
//
//	handle ── robots Apply ──▶ sitemaps.turn: files left for (job, origin)?
//	    no (a map lookup) ──▶ the page
//	    yes ──▶ fetch one file ▶ WARC ▶ sitemap.Parse ▶ sitemap.Allowed ▶
//	            scope, exclusions ▶ URL-seen (exact) ▶ frontier at the
//	            job's top level, with the progress record, in the lease's
//	            completion batch; entries seen already ▶ sitemapSeen
//
// The progress of a job through an origin's sitemaps is one store record
// (store.SitemapKey, drawn below), committed with the completion of the
// lease that read a file, so a restart neither fetches a read file again
// nor forgets one left. In memory, sitemapReader caches the records
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

// idle reports whether p has nothing for a lease to do at now: a fetch of
// it is in progress, or its round is finished and, for a continuous job,
// not older than every (Options.SitemapEvery). The reader's mu must be
// held.
func (p *siteProgress) idle(now time.Time, continuous bool, every time.Duration) bool {
	if p.busy {
		return true
	}
	if p.rec.started.IsZero() || p.rec.finished.IsZero() {
		return false
	}
	return !continuous || now.Sub(p.rec.finished) < every
}

// sitemapNode is what a sitemapReader needs of the node: the politeness
// path that fetches and archives a file in a lease's slot, the admission
// of the pages a file lists (scope, exclusions, partitions, URL-seen
// gate), the lease's completion, the node's failure, and whether another
// job may want a file read. *Node implements it.
type sitemapNode interface {
	fetchSitemapFile(ctx context.Context, l *frontier.Lease, j *job.Job, fileURL string, su *url.URL, o *frontier.Outcome) (fetchedSitemap, bool)
	admitListed(b *store.Batch, j *job.Job, fileURL string, depth int, pages []sitemap.Entry, home string) ([]frontier.Item, error)
	complete(l *frontier.Lease, o frontier.Outcome)
	completeWith(l *frontier.Lease, j *job.Job, o frontier.Outcome, b *store.Batch, add []frontier.Item) bool
	fail(err error)
	othersLive(j *job.Job) bool
}

// hostTasks schedules a continuous job's next round of an origin's
// sitemaps (scheduleHostTask, recrawl.go), in the batch that records the
// end of this one.
type hostTasks interface {
	scheduleHostTask(b *store.Batch, j *job.Job, host, origin string, finished time.Time)
}

// fetchedSitemap is a sitemap file fetched through the node's politeness
// path (sitemapNode.fetchSitemapFile).
type fetchedSitemap struct {
	resp   *fetch.Response // nil: the fetch failed (err); the reader releases it
	err    error
	start  time.Time
	loc    warc.Location // where the response's WARC record is
	digest string        // its payload digest, for the crawl log
}

// sitemapReader is each job's reading of each origin's sitemaps: it
// decides, at a lease whose origin's robots.txt applies, whether the lease
// reads a sitemap file instead of its page; it parses what is read and
// keeps each (job, origin) pair's progress record, in the store and, as a
// cache, in memory.
//
// Invariants: at most one lease at a time reads files of a (job, origin)
// pair (siteProgress.busy, from the claim until the lease's completion is
// durable); a file's record is stored in the batch of the completion of
// the lease that read it; the cache holds at most maxSitemapStates
// records, past which those with no read in progress are dropped (and
// read again from the store when needed). Safe for concurrent use; mu is
// never held during I/O or a call into the node.
type sitemapReader struct {
	node   sitemapNode
	tasks  hostTasks
	db     *store.DB
	shared *sharedPages     // files other jobs read in this run (sitemapShareKey)
	clog   *crawlLog        // the node's crawl log
	agent  string           // robots.txt product token
	off    bool             // Options.NoSitemaps
	every  time.Duration    // Options.SitemapEvery
	now    func() time.Time // Options.Now
	log    *slog.Logger

	mu sync.Mutex
	m  map[siteKey]*siteProgress
}

// newSitemapReader returns the sitemap reader of node n, whose options
// are opts (with defaults).
func newSitemapReader(n sitemapNode, tasks hostTasks, db *store.DB, shared *sharedPages, clog *crawlLog, agent string, opts Options) *sitemapReader {
	return &sitemapReader{node: n, tasks: tasks, db: db, shared: shared, clog: clog, agent: agent,
		off: opts.NoSitemaps, every: opts.SitemapEvery, now: opts.Now, log: opts.Logger,
		m: make(map[siteKey]*siteProgress)}
}

// insert adds p under k, first dropping every record with no fetch in
// progress if the map is full. r.mu must be held.
func (r *sitemapReader) insert(k siteKey, p *siteProgress) {
	if len(r.m) >= maxSitemapStates {
		for k, q := range r.m {
			if !q.busy {
				delete(r.m, k)
			}
		}
	}
	r.m[k] = p
}

// turn is handle's hook once the robots.txt of origin applies to l
// (policy p): while job j has sitemap files of origin left to read, it
// fetches the next one in l's slot, completes l (its item goes back to
// the queue) and reports true. For an origin whose sitemaps are done it
// costs a map lookup (and, once per origin and job per run, a store read).
func (r *sitemapReader) turn(ctx context.Context, l *frontier.Lease, j *job.Job, origin string, p *robots.Policy) bool {
	if r.off {
		return false
	}
	k := siteKey{j.ID, origin}
	now := r.now()
	r.mu.Lock()
	sp := r.m[k]
	if sp != nil && sp.idle(now, j.Spec.Continuous, r.every) {
		r.mu.Unlock()
		return false
	}
	r.mu.Unlock()
	if sp == nil {
		rec := r.load(l.Item.Host, k)
		r.mu.Lock()
		if sp = r.m[k]; sp == nil {
			sp = &siteProgress{rec: rec}
			r.insert(k, sp)
		}
		if sp.idle(now, j.Spec.Continuous, r.every) {
			r.mu.Unlock()
			return false
		}
		r.mu.Unlock()
	}
	su, i, dirty := r.claim(sp, l, j, origin, p, now)
	if dirty {
		r.save(j, l.Item.Host, k, sp)
	}
	if su == nil {
		return false
	}
	r.fetch(ctx, l, j, k, sp, i, su)
	return true
}

// claim begins a round if none is (a new job, or a continuous job's TTL),
// gives up the files that cannot be fetched in l's slot and claims the
// next one: its URL and index, or nil when none is left or another lease
// holds sp. dirty reports a change to store without a fetch: files given
// up (and logged), or the round finished.
func (r *sitemapReader) claim(sp *siteProgress, l *frontier.Lease, j *job.Job, origin string, p *robots.Policy, now time.Time) (su *url.URL, i int, dirty bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
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
		if su, why = r.fetchable(f.url, l.Item.Host, p); why != "" {
			f.done, dirty = true, true
			r.log.Info("sitemap not fetched", "job", j.ID, "url", f.url, "why", why)
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

// fetchable parses a sitemap file's URL and says why it may not be
// fetched in a slot of host under robots.txt p ("" if it may): a file on
// another host would be fetched outside that host's gap, so it is not.
func (r *sitemapReader) fetchable(raw, host string, p *robots.Policy) (*url.URL, string) {
	u, err := url.Parse(raw)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https"):
		return nil, "not an http(s) URL"
	case urlnorm.HostKey(u) != host:
		return nil, "on another host (fetched only in its own host's slot)"
	case !p.Allowed(r.agent, u):
		return nil, "disallowed by robots.txt"
	}
	return u, ""
}

// save stores sp's record after files were given up without a fetch (or
// the round finished without one), without waiting: if it is lost, the
// next run gives them up again, at no request.
func (r *sitemapReader) save(j *job.Job, host string, k siteKey, sp *siteProgress) {
	r.mu.Lock()
	v, finished := sp.rec.encode(), sp.rec.finished
	r.mu.Unlock()
	b := r.db.NewBatch()
	if err := b.Set(store.SitemapKey(host, uint32(k.job), k.origin), v); err != nil {
		b.Close()
		r.log.Warn("store sitemaps record", "origin", k.origin, "err", err)
		return
	}
	if !finished.IsZero() {
		r.tasks.scheduleHostTask(b, j, host, k.origin, finished)
	}
	if err := r.db.CommitNoSync(b); err != nil {
		r.log.Warn("store sitemaps record", "origin", k.origin, "err", err)
	}
}

// load reads k's record from the store: none (a zero record) if there is
// none or it is unreadable.
func (r *sitemapReader) load(host string, k siteKey) sitemapRecord {
	v, err := r.db.Get(store.SitemapKey(host, uint32(k.job), k.origin))
	if errors.Is(err, store.ErrNotFound) {
		return sitemapRecord{}
	}
	if err != nil {
		r.log.Warn("read sitemaps record; starting afresh", "origin", k.origin, "err", err)
		return sitemapRecord{}
	}
	rec, err := decodeSitemapRecord(v)
	if err != nil {
		r.log.Warn("sitemaps record unreadable; starting afresh", "origin", k.origin, "err", err)
		return sitemapRecord{}
	}
	return rec
}

// release ends a lease's claim on sp (claim): sp is free for the next
// lease.
func (r *sitemapReader) release(sp *siteProgress) {
	r.mu.Lock()
	sp.busy = false
	r.mu.Unlock()
}

// sitemapResult is what reading one sitemap file gave.
type sitemapResult struct {
	pages    []sitemap.Entry // page entries the host rule allows
	children []string        // child sitemaps (of an index) the host rule allows
	refused  int             // entries the host rule refused
	sum      sitemap.Summary
	err      error // a *sitemap.SyntaxError, a *sitemap.LimitError or the reader's
}

// fetch fetches file i of sp (URL su) in l's slot, archives it, queues
// what it lists and completes l with sp's record.
func (r *sitemapReader) fetch(ctx context.Context, l *frontier.Lease, j *job.Job, k siteKey, sp *siteProgress, i int, su *url.URL) {
	defer r.release(sp)
	r.mu.Lock()
	file := sp.rec.files[i]
	r.mu.Unlock()
	var (
		o   = frontier.Outcome{Requeue: true}
		res sitemapResult
	)
	if p := r.shared.get(sitemapShareKey(file.url)); p != nil && p.sitemap != nil && !p.at.Before(j.Created) {
		// Another job read the file while this one ran: no request again.
		res, o = *p.sitemap, frontier.Outcome{Requeue: true, NotStarted: true}
		j.Stats.Sitemaps.Add(1)
	} else if !r.readFile(ctx, l, j, file, su, &o, &res) {
		return
	}
	r.after(l, j, k, sp, i, file, o, res)
}

// sitemapLogItem is the item a crawl log line of a sitemap file read in
// l's slot names: its via is the URL whose lease fetched it.
func sitemapLogItem(l *frontier.Lease, j *job.Job) frontier.Item {
	return frontier.Item{Job: j.ID, Depth: l.Item.Depth, Via: l.Item.URL}
}

// readFile fetches the sitemap file at su in l's slot, archives and reads
// it into res, and sets o from the answer. It reports false when l was
// completed already (stopping, or the archive failed).
func (r *sitemapReader) readFile(ctx context.Context, l *frontier.Lease, j *job.Job, file sitemapFile, su *url.URL, o *frontier.Outcome, res *sitemapResult) bool {
	f, ok := r.node.fetchSitemapFile(ctx, l, j, file.url, su, o)
	if !ok {
		return false
	}
	if f.resp == nil {
		r.log.Info("sitemap fetch failed; skipped", "job", j.ID, "url", file.url, "err", f.err)
		return true
	}
	defer f.resp.Release()
	j.Stats.Sitemaps.Add(1)
	*res = r.parse(j, file, su, f.resp)
	r.logSitemap(j, sitemapLogItem(l, j), f.resp, f.loc, f.digest, *res)
	if r.node.othersLive(j) { // other jobs may want the same file
		kept := *res
		r.shared.put(sitemapShareKey(file.url), &sharedPage{at: f.start, status: f.resp.Status, sitemap: &kept})
	}
	return true
}

// after queues what a sitemap file listed (res) and completes l with sp's
// record.
func (r *sitemapReader) after(l *frontier.Lease, j *job.Job, k siteKey, sp *siteProgress, i int, file sitemapFile, o frontier.Outcome, res sitemapResult) {
	host := l.Item.Host
	b := r.db.NewBatch()
	r.mu.Lock()
	depth := sp.rec.pageDepth
	r.mu.Unlock()
	add, err := r.node.admitListed(b, j, file.url, depth, res.pages, host)
	if err != nil {
		b.Close()
		r.node.fail(err)
		r.node.complete(l, frontier.Outcome{Requeue: true, Status: o.Status})
		return
	}
	r.mu.Lock()
	sp.rec.files[i].done = true
	for _, c := range res.children {
		sp.rec.add(sitemapFile{url: c, robots: file.robots, depth: file.depth + 1})
	}
	sp.rec.finish(r.now())
	v, finished := sp.rec.encode(), sp.rec.finished
	r.mu.Unlock()
	if err := b.Set(store.SitemapKey(host, uint32(k.job), k.origin), v); err != nil {
		r.log.Warn("store sitemaps record", "origin", k.origin, "err", err)
	}
	if !finished.IsZero() {
		r.tasks.scheduleHostTask(b, j, host, k.origin, finished)
	}
	r.node.completeWith(l, j, o, b, add)
}

// parse parses a fetched sitemap file and keeps the entries the
// sitemaps.org host rule allows it: pages of a urlset or text file, or
// child sitemaps of an index within maxSitemapDepth. A malformed file or
// one past a limit keeps what was read before the fault, and is logged.
func (r *sitemapReader) parse(j *job.Job, file sitemapFile, su *url.URL, resp *fetch.Response) sitemapResult {
	var res sitemapResult
	if resp.Status < 200 || resp.Status > 299 {
		r.log.Debug("sitemap not there", "job", j.ID, "url", file.url, "status", resp.Status)
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
	r.logError(j, file.url, res)
	return res
}

// logError logs, in the node's log, a sitemap file cut short.
func (r *sitemapReader) logError(j *job.Job, url string, res sitemapResult) {
	var syn *sitemap.SyntaxError
	var lim *sitemap.LimitError
	switch {
	case res.err == nil:
	case errors.As(res.err, &syn):
		r.log.Warn("sitemap malformed: the rest of it is skipped", "job", j.ID, "url", url, "kept", res.sum.Entries, "err", res.err)
	case errors.As(res.err, &lim):
		r.log.Warn("sitemap over a limit: the rest of it is skipped", "job", j.ID, "url", url, "kept", res.sum.Entries, "err", res.err)
	default:
		r.log.Warn("sitemap unreadable: the rest of it is skipped", "job", j.ID, "url", url, "kept", res.sum.Entries, "err", res.err)
	}
	if res.refused > 0 {
		r.log.Info("sitemap lists URLs it may not speak for (sitemaps.org host rule); ignored", "job", j.ID, "url", url, "refused", res.refused)
	}
}

// Crawl log errors of a sitemap file read in part (crawllog.Entry.Error,
// beside the fetch classes); Detail says what and where.
const (
	logSitemapMalformed = "sitemap-malformed"
	logSitemapLimit     = "sitemap-limit"
)

// logSitemap writes the crawl log line of a fetched sitemap file.
func (r *sitemapReader) logSitemap(j *job.Job, it frontier.Item, resp *fetch.Response, loc warc.Location, digest string, res sitemapResult) {
	if !r.clog.on() {
		return
	}
	e := &crawllog.Entry{Time: r.now().UTC(), Job: j.ID, URL: resp.URL, Status: resp.Status,
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
	r.clog.write(e)
}

// The node's side of the sitemap reader (sitemapNode).

// fetchSitemapFile fetches the sitemap file at su in l's slot, as a
// request of job j's (counted and observed), archives the answer and sets
// o from it. A failed fetch is logged in the crawl log, counted and set in
// o, and leaves f.resp nil. ok is false when it completed l itself
// (stopping: the file stays to be read; or the archive failed).
func (n *Node) fetchSitemapFile(ctx context.Context, l *frontier.Lease, j *job.Job, fileURL string, su *url.URL, o *frontier.Outcome) (f fetchedSitemap, ok bool) {
	start := n.opts.Now()
	resp, err := n.fetcher.Fetch(ctx, &fetch.Request{URL: su})
	j.Stats.Requests.Add(1)
	n.observe(n.fetchEvent(j, l.Item.Host, false, start, resp, err))
	if err != nil {
		n.clog.failure(j, sitemapLogItem(l, j), fileURL, false, start, err)
		if ctx.Err() != nil { // stopping: the file stays to be read
			n.complete(l, frontier.Outcome{Requeue: true, Failed: true})
			return fetchedSitemap{}, false
		}
		class := fetch.ClassOf(err)
		j.Stats.AddError(string(class))
		o.Failed, o.Timeout = class != fetch.ClassTimeout, class == fetch.ClassTimeout
		return fetchedSitemap{err: err, start: start}, true
	}
	sum, hasSum := payloadSum(resp)
	loc, ok := n.archive(j, resp, sum, hasSum, nil, nil, nil)
	if !ok {
		n.complete(l, frontier.Outcome{Requeue: true, Status: resp.Status})
		resp.Release()
		return fetchedSitemap{}, false
	}
	o.Status, o.ResponseTime, o.RetryAfter = resp.Status, resp.Duration, retryAfter(resp.Header, resp.Start)
	return fetchedSitemap{resp: resp, start: start, loc: loc, digest: digestOf(resp, sum, hasSum, false, sum)}, true
}

// admitListed passes the pages a sitemap file (fileURL) lists through
// job j's scope, its exclusions and its URL-seen gate (keys into b) and
// returns the new ones, at depth, as items at the job's top priority level. Unlike
// links, listed pages skip the shape-run and pattern-budget trap rules
// (the site itself lists them). The seen gate's answer is exact
// (urlseen.Durable never trusts its Bloom filter's "maybe" alone), so no
// false positive hides a listed page; pages seen already go to
// sitemapSeen with their lastmod. home is the host whose fetch b
// completes (admit).
func (n *Node) admitListed(b *store.Batch, j *job.Job, fileURL string, depth int, pages []sitemap.Entry, home string) ([]frontier.Item, error) {
	if len(pages) == 0 {
		return nil, nil
	}
	urls := make([]string, 0, len(pages))
	kept := make([]candidate, 0, len(pages))
	listed := make([]sitemap.Entry, 0, len(pages))
	for _, e := range pages {
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
		urls, kept, listed = append(urls, s), append(kept, cd), append(listed, e)
	}
	if n.outbox != nil {
		routed, err := n.routeForeign(b, j, urls, kept, func(candidate) int { return j.Level(0, levels) }, home)
		if err != nil {
			return nil, err
		}
		urls, kept, listed = unrouted(urls, routed), unrouted(kept, routed), unrouted(listed, routed)
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
			n.sitemapSeen(b, j, it, listed[i])
			continue
		}
		n.recrawl.listed(b, j, it, listed[i], false)
		items = append(items, it)
	}
	j.Stats.SitemapURLs.Add(int64(len(items)))
	return items, nil
}

// sitemapSeen is handed every page a sitemap lists that job j had seen
// already (queued or fetched), with the sitemap's entry for it, and b,
// the batch of the lease's completion: the page's record takes what the
// entry says (recrawlScheduler.listed: its stated interval; a lastmod
// after its last fetch brings its recrawl forward).
func (n *Node) sitemapSeen(b *store.Batch, j *job.Job, it frontier.Item, e sitemap.Entry) {
	j.Stats.SitemapKnown.Add(1)
	n.recrawl.listed(b, j, it, e, true)
}
