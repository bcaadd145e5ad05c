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
	"github.com/trawl-crawler/trawl/urlnorm"
	"github.com/trawl-crawler/trawl/usagepref"
	"github.com/trawl-crawler/trawl/warc"
)

// TDMRep files (W3C TDM Reservation Protocol, "TDM File on the Origin
// Server"), for jobs that read them (job.Spec.ReadsTDMRep: asked for, or
// a crawl for AI training). Once an origin's robots.txt applies, the
// first lease of such a job fetches the origin's /.well-known/tdmrep.json
// in the host's slot (as robots.txt and sitemaps are fetched: the lease's
// item goes back to the queue, and the request counts towards the host's
// gap), archives it and keeps what it says for every capture of the
// origin (usageOf, through usagepref.Input.TDMRep) by every job that
// reads it, until it is fetched again a day later. Off by default: it is
// one more request per origin, which only some crawls need.
//
//	handle ── robots Apply ──▶ tdmTurn: job reads TDMRep, origin's file stale?
//	    no (a map lookup) ──▶ sitemaps, the page
//	    yes ──▶ fetch /.well-known/tdmrep.json ▶ WARC ▶ crawl log ▶
//	           usagepref.ParseTDMRep ▶ store.TDMRepKey, in the lease's
//	           completion batch
//
// What an answer means (the report leaves HTTP to HTTP):
//   - 2xx: the file; a body that is no JSON array, or was cut off, is a
//     file with an error and no rules (usagepref.TDMRep.Error).
//   - 3xx, 4xx: no file. A redirect is not followed: an origin's file is
//     its own (an http origin redirected to https gets its pages'
//     statements from the https origin's file, fetched in its own turn).
//   - 429, 5xx, no answer: no file for now, asked again an hour later; the
//     origin's pages are not held back (this is no robots.txt: what it
//     would say is recorded, not obeyed, unless a job states a purpose).
//   - disallowed by robots.txt: not fetched; no file, for a day.
//
// Invariants: at most one lease at a time fetches an origin's file (busy,
// from the claim until the lease's completion is durable); while it does,
// other leases of the origin go on without it (a host fetched by one
// lease at a time, the default, never meets this). The record is stored
// with the completion of the lease that fetched the file, so a restart
// neither fetches a fresh file again nor forgets it. The cache holds the
// parsed files only (the body is in the store), at most maxTDMFiles
// origins and about maxTDMBytes; past either, origins with no fetch in
// progress are dropped until a quarter is free, and read again from the
// store when needed.

// Timing and bounds of TDMRep files.
const (
	// tdmTTL is how long an answer applies before the file is fetched
	// again: a day, as for robots.txt (RFC 9309 2.4).
	tdmTTL = 24 * time.Hour
	// tdmRetry is how long after an unavailable answer (429, 5xx, no
	// answer) the file is asked for again.
	tdmRetry = time.Hour
	// maxTDMFiles and maxTDMBytes bound the origins whose file is held in
	// memory and the size of their parsed files (tdmFile.size): a file
	// may hold up to 256 KiB of rules.
	maxTDMFiles = 100_000
	maxTDMBytes = 64 << 20
)

// tdmRepPath is where an origin serves its TDMRep file.
const tdmRepPath = "/.well-known/tdmrep.json"

// tdmFile is what is known of an origin's TDMRep file.
type tdmFile struct {
	file   *usagepref.TDMRep // nil: no file (none, unavailable, not fetched)
	at     time.Time         // when it was fetched; zero: not fetched (disallowed)
	next   time.Time         // when it is fetched again; zero: never looked for
	status int               // the answer's status; 0: none
	cut    bool              // the body was cut off
	// body is a 2xx answer's decoded body, at most
	// usagepref.MaxTDMRepBytes+1 bytes, between the fetch (or the store)
	// and the record (or the parse); never kept in the cache
	body []byte
}

// size is about how many bytes of memory f holds.
func (f *tdmFile) size() int {
	n := 128 + len(f.body)
	if f.file != nil {
		n += len(f.file.Error)
		for _, r := range f.file.Rules {
			n += 160 + len(r.Raw) + 2*len(r.Location) + len(r.Policy) + len(r.Error)
		}
	}
	return n
}

// fresh reports whether f applies at now.
func (f *tdmFile) fresh(now time.Time) bool { return !f.next.IsZero() && now.Before(f.next) }

// tdmRecordVersion is the first byte of a stored tdmFile.
//
// Value of a store.TDMRepKey (part of the on-disk format; docs/design/storage.md):
//
//	+------+----------------+-------------+----------------+-------------+--------------+
//	| 0x01 | fetched at:    | next: varint| status:        | flags (1 B):| body: uvarint|
//	|      | varint Unix ns,| Unix ns     | uvarint, 0: no | 0x01 cut off| length, bytes|
//	|      | 0: not fetched |             | answer         |             |              |
//	+------+----------------+-------------+----------------+-------------+--------------+
//
// Trailing bytes after the body are ignored (a later version's).
const tdmRecordVersion = 0x01

const tdmFlagCut = 0x01

func (f *tdmFile) encode() []byte {
	b := make([]byte, 0, 1+3*binary.MaxVarintLen64+1+len(f.body))
	b = append(b, tdmRecordVersion)
	b = binary.AppendVarint(b, unixNano(f.at))
	b = binary.AppendVarint(b, unixNano(f.next))
	b = binary.AppendUvarint(b, uint64(f.status))
	var flags byte
	if f.cut {
		flags |= tdmFlagCut
	}
	b = append(b, flags)
	b = binary.AppendUvarint(b, uint64(len(f.body)))
	return append(b, f.body...)
}

// errTDMRecord is wrapped by every error of decodeTDMFile.
var errTDMRecord = errors.New("node: malformed TDMRep file record")

// decodeTDMFile reads a stored tdmFile and parses its body again.
func decodeTDMFile(v []byte) (tdmFile, error) {
	if len(v) == 0 || v[0] != tdmRecordVersion {
		return tdmFile{}, fmt.Errorf("%w: unknown version", errTDMRecord)
	}
	r := bytes.NewReader(v[1:])
	at, err1 := binary.ReadVarint(r)
	next, err2 := binary.ReadVarint(r)
	status, err3 := binary.ReadUvarint(r)
	flags, err4 := r.ReadByte()
	n, err5 := binary.ReadUvarint(r)
	if err := errors.Join(err1, err2, err3, err4, err5); err != nil {
		return tdmFile{}, fmt.Errorf("%w: %v", errTDMRecord, err)
	}
	if status > 999 || n > uint64(r.Len()) || n > usagepref.MaxTDMRepBytes+1 {
		return tdmFile{}, fmt.Errorf("%w: status %d, body of %d bytes", errTDMRecord, status, n)
	}
	f := tdmFile{at: fromUnixNano(at), next: fromUnixNano(next), status: int(status), cut: flags&tdmFlagCut != 0}
	if n > 0 {
		f.body = make([]byte, n)
		r.Read(f.body)
	}
	f.file = parseTDMAnswer(f.status, f.body, f.cut)
	return f, nil
}

// parseTDMAnswer is the file an answer of status with body gives: nil
// unless a 2xx; one with an error if its body was cut off.
func parseTDMAnswer(status int, body []byte, cut bool) *usagepref.TDMRep {
	if status < 200 || status > 299 {
		return nil
	}
	if cut {
		return &usagepref.TDMRep{Error: "body cut off"}
	}
	return usagepref.ParseTDMRep(body)
}

// tdmAnswer turns the answer to a fetch of the file (resp, or err) at now
// into what is known of it.
func tdmAnswer(resp *fetch.Response, err error, now time.Time) tdmFile {
	f := tdmFile{at: now, next: now.Add(tdmTTL)}
	if err != nil || resp == nil {
		f.next = now.Add(tdmRetry)
		return f
	}
	f.status = resp.Status
	switch {
	case resp.Status == 429 || resp.Status >= 500:
		f.next = now.Add(tdmRetry)
	case resp.Status >= 200 && resp.Status <= 299:
		f.cut = (resp.Truncated != "" && resp.Truncated != "length") || resp.DecodeErr != nil
		body := resp.Decoded
		if len(body) > usagepref.MaxTDMRepBytes+1 || resp.Truncated == "length" {
			// Longer than a file is read: one byte past the bound keeps
			// that verdict through the store.
			body = body[:min(len(body), usagepref.MaxTDMRepBytes+1)]
			if len(body) <= usagepref.MaxTDMRepBytes {
				f.cut = true
			}
		}
		f.body = bytes.Clone(body)
	}
	f.file = parseTDMAnswer(f.status, f.body, f.cut)
	return f
}

// tdmFiles holds what is known of each origin's TDMRep file, in memory as
// a cache of the store. Safe for concurrent use; mu is never held during
// I/O.
type tdmFiles struct {
	db *store.DB

	mu    sync.Mutex
	m     map[string]*tdmFile // by origin
	bytes int                 // the size of the files in m
	busy  map[string]bool     // origins whose file a lease is fetching
}

func newTDMFiles(db *store.DB) *tdmFiles {
	return &tdmFiles{db: db, m: make(map[string]*tdmFile), busy: make(map[string]bool)}
}

// get returns what is known of origin's file (politeness key host): from
// memory, else from the store (a zero tdmFile if it has none).
func (t *tdmFiles) get(host, origin string) (*tdmFile, error) {
	t.mu.Lock()
	f := t.m[origin]
	t.mu.Unlock()
	if f != nil {
		return f, nil
	}
	f = &tdmFile{}
	v, err := t.db.Get(store.TDMRepKey(host, origin))
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		return f, err
	default:
		g, err := decodeTDMFile(v)
		if err != nil {
			return f, err
		}
		g.body = nil // parsed
		f = &g
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if g := t.m[origin]; g != nil {
		return g, nil
	}
	t.put(origin, f)
	return f, nil
}

// put keeps f (without its body) as origin's; past maxTDMFiles or
// maxTDMBytes it first drops origins with no fetch in progress until a
// quarter of each is free. t.mu must be held.
func (t *tdmFiles) put(origin string, f *tdmFile) {
	f.body = nil
	if old := t.m[origin]; old != nil {
		t.bytes -= old.size()
	}
	t.m[origin] = f
	t.bytes += f.size()
	if len(t.m) <= maxTDMFiles && t.bytes <= maxTDMBytes {
		return
	}
	for o, g := range t.m {
		if len(t.m) <= maxTDMFiles*3/4 && t.bytes <= maxTDMBytes*3/4 {
			break
		}
		if o != origin && !t.busy[o] {
			t.bytes -= g.size()
			delete(t.m, o)
		}
	}
}

// claim reports whether the caller is to fetch origin's file now (what
// the cache holds of it, else f, is not fresh at now, and no other lease
// fetches it), and marks it busy if so.
func (t *tdmFiles) claim(origin string, f *tdmFile, now time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if cur := t.m[origin]; cur != nil {
		f = cur // another lease may have settled it since f was read
	}
	if f.fresh(now) || t.busy[origin] {
		return false
	}
	t.busy[origin] = true
	return true
}

// settle records f as origin's (once its record is durable; nil leaves
// what the cache holds) and ends the claim.
func (t *tdmFiles) settle(origin string, f *tdmFile) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if f != nil {
		t.put(origin, f)
	}
	delete(t.busy, origin)
}

// tdmRules is the TDMRep file of u's origin for a capture of job j, for
// usageOf: nil if j does not read TDMRep files (then at no cost: it runs
// for every capture) or none is known.
func (n *Node) tdmRules(j *job.Job, u *url.URL) *usagepref.TDMRep {
	if !j.Spec.ReadsTDMRep() {
		return nil
	}
	origin := u.Scheme + "://" + u.Host
	f, err := n.tdm.get(urlnorm.HostKey(u), origin)
	if err != nil {
		n.opts.Logger.Warn("read TDMRep file record", "origin", origin, "err", err)
	}
	return f.file
}

// tdmTurn is handle's hook once origin's robots.txt (p) applies to l:
// if l's job j reads TDMRep files and origin's is not known or is stale,
// l's slot fetches it, l is completed (its item goes back to the queue)
// and tdmTurn reports true. For an origin whose file is fresh it costs a
// map lookup.
func (n *Node) tdmTurn(ctx context.Context, l *frontier.Lease, j *job.Job, origin string, p *robots.Policy) bool {
	if !j.Spec.ReadsTDMRep() {
		return false
	}
	host := l.Item.Host
	f, err := n.tdm.get(host, origin)
	if err != nil {
		n.opts.Logger.Warn("TDMRep file record unreadable; fetched again", "origin", origin, "err", err)
	}
	now := n.opts.Now()
	if !n.tdm.claim(origin, f, now) {
		return false
	}
	u, _ := url.Parse(origin + tdmRepPath) // origin is a canonical URL's
	if !p.Allowed(n.agent, u) {
		// Not fetched: none, for a day. Stored without waiting: if it is
		// lost, the next run decides the same at no request.
		g := &tdmFile{next: now.Add(tdmTTL)}
		b := n.db.NewBatch()
		if err := b.Set(store.TDMRepKey(host, origin), g.encode()); err == nil {
			err = n.db.CommitNoSync(b)
		}
		if err != nil {
			n.opts.Logger.Warn("store TDMRep file record", "origin", origin, "err", err)
		}
		n.tdm.settle(origin, g)
		return false
	}
	n.fetchTDMRep(ctx, l, j, host, origin, u)
	return true
}

// fetchTDMRep fetches origin's TDMRep file (at u) in l's slot, archives
// and logs the answer, and completes l with the file's record.
func (n *Node) fetchTDMRep(ctx context.Context, l *frontier.Lease, j *job.Job, host, origin string, u *url.URL) {
	var (
		kept   *tdmFile // what settles the claim: nil leaves the file as it was
		answer *tdmFile // what the answer says, for the crawl log
	)
	defer func() { n.tdm.settle(origin, kept) }()
	start := n.opts.Now()
	resp, err := n.fetcher.Fetch(ctx, &fetch.Request{URL: u})
	j.Stats.Requests.Add(1)
	n.observe(n.fetchEvent(j, host, false, start, resp, err))
	logIt := frontier.Item{Job: j.ID, Depth: l.Item.Depth, Via: l.Item.URL}
	o := frontier.Outcome{Requeue: true}
	if err != nil {
		n.clog.failure(j, logIt, u.String(), false, start, err)
		if ctx.Err() != nil { // stopping: fetched again next run
			n.complete(l, frontier.Outcome{Requeue: true, Failed: true})
			return
		}
		class := fetch.ClassOf(err)
		j.Stats.AddError(string(class))
		o.Failed, o.Timeout = class != fetch.ClassTimeout, class == fetch.ClassTimeout
		o.ResponseTime = n.opts.Now().Sub(start)
	} else {
		defer resp.Release()
		sum, hasSum := payloadSum(resp)
		loc, ok := n.archive(j, resp, sum, hasSum, nil, nil, nil)
		if !ok {
			n.complete(l, frontier.Outcome{Requeue: true, Status: resp.Status})
			return
		}
		o.Status, o.ResponseTime, o.RetryAfter = resp.Status, resp.Duration, retryAfter(resp.Header, resp.Start)
		defer func() { n.logTDMRep(j, logIt, resp, loc, digestOf(resp, sum, hasSum, false, sum), answer) }()
	}
	f := tdmAnswer(resp, err, n.opts.Now().UTC())
	answer = &f
	b := n.db.NewBatch()
	if err := b.Set(store.TDMRepKey(host, origin), f.encode()); err != nil {
		n.opts.Logger.Warn("store TDMRep file record", "origin", origin, "err", err)
	}
	if n.completeWith(l, j, o, b, nil) {
		kept = &f // durable: a restart reads the same
	}
}

// logTDMRep writes the crawl log line of a fetched TDMRep file f.
func (n *Node) logTDMRep(j *job.Job, it frontier.Item, resp *fetch.Response, loc warc.Location, digest string, f *tdmFile) {
	if !n.clog.on() {
		return
	}
	e := &crawllog.Entry{Time: n.opts.Now().UTC(), Job: j.ID, URL: resp.URL, Status: resp.Status,
		Bytes: int64(len(resp.Body)), MIME: resp.MediaType, Duration: resp.Duration, Depth: it.Depth, Via: it.Via,
		Digest: digest, WARC: filepath.Base(loc.File), Offset: loc.Offset}
	if f != nil && f.file != nil {
		if f.file.Error != "" {
			e.Detail = "tdmrep.json: " + f.file.Error
		} else {
			e.Detail = fmt.Sprintf("tdmrep.json: %d rules", len(f.file.Rules))
		}
	}
	n.clog.write(e)
}
