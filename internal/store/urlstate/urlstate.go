// Package urlstate is the durable state of one URL: what its fetches saw
// (time, status, validators, content digest, SimHash), a short change
// history and, while other crawls may take the last fetch instead of
// sending the request again, where it led (Leads), stored as the value of the URL's store.URLKey. Record is a
// plain value and Observe is pure (time comes in with the observation), so
// the package is safe for concurrent use; reading and writing the store is
// the caller's job. Encode and Decode define part of the on-disk format.
package urlstate

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/trawl-crawler/trawl/recrawl"
)

// Encoding of a per-URL record ('u' key value). Part of the on-disk format
// (store.FormatVersion, docs/design/storage.md):
//
//	+---------+
//	| 0x01    |  version. A value of exactly this byte is a URL that was
//	+---------+  seen (queued) and never fetched: the zero Record.
//	| flags   |  1 B: bit 0 = a digest follows; other bits are ignored
//	+---------+------------------------------------------------------+
//	| last fetch          varint, Unix ns (0 = never)                |
//	| status              uvarint, HTTP status, 0 if the fetch failed|
//	| error               uvarint length + bytes (fetch error class) |
//	| ETag                uvarint length + bytes                     |
//	| Last-Modified       uvarint length + bytes                     |
//	| digest              32 B SHA-256, only if flags bit 0           |
//	| SimHash             8 B, big-endian                            |
//	| fetches             uvarint                                    |
//	| changes             uvarint, at most fetches                   |
//	| history count       1 B, at most HistoryLen                    |
//	| history entries, oldest first, each:                           |
//	|   time              varint: the first entry Unix seconds, the  |
//	|                     others seconds since the entry before      |
//	|   status<<1|changed uvarint                                    |
//	| job                 uvarint: the job whose lease made the last |
//	|                     fetch (since format version 3)             |
//	+----------------------------------------------------------------+
//	| the recrawl tail, absent when it would be empty:               |
//	| tail flags          1 B: bit 0 = change history follows,       |
//	|                     bit 1 = a due recrawl follows,             |
//	|                     bit 2 = a depth follows,                   |
//	|                     bit 3 = leads follow,                      |
//	|                     bit 4 = a stated interval follows          |
//	| change history      recrawl.History.AppendBinary (<= 114 B)    |
//	| due                 varint, Unix s of the schedule entry's time|
//	| due job             uvarint, the job that owns the entry       |
//	| depth               uvarint, the depth of the item whose fetch |
//	|                     made the record (older code ignores it)    |
//	| leads               uvarint count, then each: bytes shared with|
//	|                     the lead before (uvarint), the rest's      |
//	|                     length (uvarint) and bytes (older code     |
//	|                     ignores them)                              |
//	| stated interval     uvarint seconds (older code ignores it)    |
//	+----------------------------------------------------------------+
//	| anything after this (or after the job, before tail flags'      |
//	| first use) is ignored: fields added by later code              |
//	+----------------------------------------------------------------+
const (
	version    = 0x01
	flagDigest = 1 << 0

	tailHistory = 1 << 0
	tailDue     = 1 << 1
	tailDepth   = 1 << 2
	tailLeads   = 1 << 3
	tailStated  = 1 << 4
)

// HistoryLen is how many observations History keeps; older ones are dropped.
const HistoryLen = 8

// MaxValidatorLen bounds a kept ETag or Last-Modified value. A longer one
// is not kept (a cut validator would never match), so the next fetch is
// unconditional.
const MaxValidatorLen = 512

// MaxErrorLen bounds the kept error class; a longer one is cut.
const MaxErrorLen = 64

// MaxLeadsLen bounds the bytes of the leads a record keeps (the URLs
// whole, before the encoding shares their common beginnings): a page
// whose links are longer keeps none (Observe), and another crawl wanting
// it fetches it again.
const MaxLeadsLen = 64 << 10

// maxStatus is the largest HTTP status code a record holds.
const maxStatus = 999

// ErrMalformed is wrapped by every Decode error.
var ErrMalformed = errors.New("urlstate: malformed record")

// Record is what is known about one URL. The zero Record is a URL that has
// been seen but never fetched.
type Record struct {
	// LastFetch is when the last fetch (successful or not) began, in UTC;
	// zero if never fetched.
	LastFetch time.Time
	// Status is the HTTP status of the last fetch; 0 when it failed
	// without a response (see Error) or never happened.
	Status int
	// Error is the fetch error class of the last fetch ("timeout",
	// "connect", ... as fetch.Class), "" if it got a response.
	Error string

	// The fields below describe the last response received; a failed
	// fetch leaves them as they were, so they still serve as validators
	// and as the baseline for change detection.

	// ETag and LastModified are the validators as the server sent them,
	// "" if absent (or longer than MaxValidatorLen).
	ETag, LastModified string
	// Digest is the SHA-256 of the payload: the body after content
	// decoding (as transferred if decoding failed). Valid if HasDigest.
	Digest    [32]byte
	HasDigest bool
	// SimHash is the simhash.HTML fingerprint of an HTML payload's visible
	// text; 0 for other types or pages without text.
	SimHash uint64

	// Fetches counts the fetches recorded, failed ones included.
	Fetches uint32
	// Changes counts the fetches whose digest differed from the digest
	// known before them.
	Changes uint32
	// History holds the last HistoryLen observations, oldest first. Its
	// times are whole seconds.
	History []Event
	// Job is the job whose lease made the last fetch (0 if none). The
	// record is one per URL for every job of the node.
	Job uint32

	// Recrawl is the page's change history for the recrawl schedule; the
	// zero History until the node has seen the page twice (the first
	// visit is LastFetch).
	Recrawl recrawl.History
	// Due is when the page's recrawl is scheduled (the time of its
	// store.DueKey, whole seconds), zero if it is not; DueJob is the job
	// the schedule entry belongs to.
	Due    time.Time
	DueJob uint32

	// Depth is the depth (links followed from a seed) of the item whose
	// fetch made the record, for Job; valid if HasDepth. A shallower
	// path to a page whose links were cut by its crawl's depth limit
	// makes it worth fetching again (node.Fold).
	Depth    int
	HasDepth bool

	// Leads is where the last response led, for another crawl of the
	// node that wants the URL to take this fetch instead of sending the
	// request again; valid if HasLeads (kept only while other crawls may
	// want it). For a redirect (3xx but 304) the target, if it was
	// usable; for any other response the page's followable links,
	// canonical, in page order (none for a page that is not HTML). A
	// 304 keeps the leads of the content it confirms.
	Leads    []string
	HasLeads bool

	// Stated is how often the site says the page changes (a sitemap's
	// <changefreq> as an interval), 0 if it says nothing: the prior of
	// the page's recrawl rate until the page is seen (recrawl.HintPrior).
	// It is set before the first fetch for a page a sitemap lists, so a
	// record with no fetch may hold it; fetches keep it.
	Stated time.Duration
}

// maxStated bounds a stored stated interval (whole seconds).
const maxStated = 100 * 365 * 24 * time.Hour

// Event is one fetch in a Record's History.
type Event struct {
	At      time.Time // when the fetch began, UTC, whole seconds
	Status  int       // HTTP status, 0 if the fetch failed
	Changed bool      // the digest differed from the one known before
}

// Observation is the outcome of one fetch, to be folded into a Record.
type Observation struct {
	At     time.Time // when the fetch began
	Status int       // HTTP status; 0 if the fetch failed
	Error  string    // fetch error class if it failed, else ""
	// NotModified is set for a 304 answer to a conditional request: the
	// content (digest, SimHash) is the one already known.
	NotModified        bool
	ETag, LastModified string // response header values, "" if absent
	Digest             [32]byte
	HasDigest          bool   // a payload was read and Digest is its SHA-256
	SimHash            uint64 // simhash.HTML of the payload, 0 if not HTML
	Job                uint32 // the job whose lease made the fetch
	// Leads is where the response led (Record.Leads), kept if HasLeads
	// and no longer than MaxLeadsLen in all.
	Leads    []string
	HasLeads bool
}

// Observe returns r with the fetch o folded in: r itself (including its
// History's backing array) is not modified. A response (Status != 0)
// replaces the validators and, unless NotModified, the digest, SimHash
// and leads; a failed fetch keeps the validators and content and drops the
// leads. Changed is set when both the known and the new digest exist and
// differ.
func (r Record) Observe(o Observation) Record {
	at := o.At.UTC()
	r.LastFetch, r.Status, r.Error, r.Job = at, o.Status, o.Error, o.Job
	if r.Status < 0 || r.Status > maxStatus {
		r.Status = 0
	}
	if len(r.Error) > MaxErrorLen {
		r.Error = r.Error[:MaxErrorLen]
	}
	changed := false
	if o.Status == 0 || !o.NotModified {
		r.Leads, r.HasLeads = nil, false
		if o.Status != 0 && o.HasLeads && leadsLen(o.Leads) <= MaxLeadsLen {
			r.HasLeads = true
			if len(o.Leads) > 0 {
				r.Leads = o.Leads
			}
		}
	}
	if o.Status != 0 {
		if o.NotModified {
			// A 304 may update the validators; an absent one stays.
			if o.ETag != "" {
				r.ETag = KeptValidator(o.ETag)
			}
			if o.LastModified != "" {
				r.LastModified = KeptValidator(o.LastModified)
			}
		} else {
			r.ETag, r.LastModified = KeptValidator(o.ETag), KeptValidator(o.LastModified)
			changed = o.HasDigest && r.HasDigest && o.Digest != r.Digest
			r.Digest, r.HasDigest, r.SimHash = o.Digest, o.HasDigest, o.SimHash
			if !o.HasDigest {
				r.Digest = [32]byte{}
			}
		}
	}
	if r.Fetches < math.MaxUint32 {
		r.Fetches++
	}
	if changed && r.Changes < r.Fetches {
		r.Changes++
	}
	keep := min(len(r.History), HistoryLen-1)
	h := make([]Event, keep, keep+1)
	copy(h, r.History[len(r.History)-keep:])
	r.History = append(h, Event{At: at.Truncate(time.Second), Status: r.Status, Changed: changed})
	return r
}

func leadsLen(leads []string) int {
	n := 0
	for _, l := range leads {
		n += len(l)
	}
	return n
}

// KeptValidator is validator v as a Record keeps it: none past
// MaxValidatorLen.
func KeptValidator(v string) string {
	if len(v) > MaxValidatorLen {
		return ""
	}
	return v
}

// Encode returns the stored form of r. Times are kept to the nanosecond
// for LastFetch and to the second in History; a Status outside 0-999 is
// stored as 0, strings longer than their bounds are cut, and at most the
// last HistoryLen events are kept, so that Decode(Encode(r)) == r for any
// Record Observe builds.
func Encode(r Record) []byte {
	b := make([]byte, 0, 64+len(r.Error)+len(r.ETag)+len(r.LastModified)+4*len(r.History))
	flags := byte(0)
	if r.HasDigest {
		flags |= flagDigest
	}
	b = append(b, version, flags)
	b = binary.AppendVarint(b, unixNano(r.LastFetch))
	b = binary.AppendUvarint(b, status(r.Status))
	b = appendString(b, r.Error, MaxErrorLen)
	b = appendString(b, r.ETag, MaxValidatorLen)
	b = appendString(b, r.LastModified, MaxValidatorLen)
	if r.HasDigest {
		b = append(b, r.Digest[:]...)
	}
	b = binary.BigEndian.AppendUint64(b, r.SimHash)
	b = binary.AppendUvarint(b, uint64(r.Fetches))
	b = binary.AppendUvarint(b, uint64(min(r.Changes, r.Fetches)))
	hist := r.History
	if len(hist) > HistoryLen {
		hist = hist[len(hist)-HistoryLen:]
	}
	b = append(b, byte(len(hist)))
	var prev int64
	for i, e := range hist {
		s := e.At.Unix()
		if i == 0 {
			b = binary.AppendVarint(b, s)
		} else {
			b = binary.AppendVarint(b, s-prev)
		}
		prev = s
		sc := status(e.Status) << 1
		if e.Changed {
			sc |= 1
		}
		b = binary.AppendUvarint(b, sc)
	}
	b = binary.AppendUvarint(b, uint64(r.Job))
	var tail byte
	if r.Recrawl.Visits > 0 {
		tail |= tailHistory
	}
	if !r.Due.IsZero() {
		tail |= tailDue
	}
	if r.HasDepth && r.Depth >= 0 {
		tail |= tailDepth
	}
	if r.HasLeads {
		tail |= tailLeads
	}
	if r.Stated >= time.Second {
		tail |= tailStated
	}
	if tail == 0 {
		return b
	}
	b = append(b, tail)
	if tail&tailHistory != 0 {
		b = r.Recrawl.AppendBinary(b)
	}
	if tail&tailDue != 0 {
		b = binary.AppendVarint(b, r.Due.Unix())
		b = binary.AppendUvarint(b, uint64(r.DueJob))
	}
	if tail&tailDepth != 0 {
		b = binary.AppendUvarint(b, uint64(r.Depth))
	}
	if tail&tailLeads != 0 {
		b = appendLeads(b, r.Leads)
	}
	if tail&tailStated != 0 {
		b = binary.AppendUvarint(b, uint64(min(r.Stated, maxStated)/time.Second))
	}
	return b
}

// appendLeads appends leads, each as the bytes it shares with the one
// before and the rest: links of one page mostly share scheme, host and
// the start of a path.
func appendLeads(b []byte, leads []string) []byte {
	b = binary.AppendUvarint(b, uint64(len(leads)))
	prev := ""
	for _, l := range leads {
		p := 0
		for p < len(l) && p < len(prev) && l[p] == prev[p] {
			p++
		}
		b = binary.AppendUvarint(b, uint64(p))
		b = appendString(b, l[p:], len(l))
		prev = l
	}
	return b
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func status(s int) uint64 {
	if s < 0 || s > maxStatus {
		return 0
	}
	return uint64(s)
}

func appendString(b []byte, s string, limit int) []byte {
	if len(s) > limit {
		s = s[:limit]
	}
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// Decode reads a stored record. A value of exactly one version byte is the
// zero Record (seen, never fetched). Bytes after the last known field are
// ignored. Errors wrap ErrMalformed and say what was wrong.
func Decode(v []byte) (Record, error) {
	var r Record
	if len(v) == 0 {
		return r, fmt.Errorf("%w: empty value", ErrMalformed)
	}
	if v[0] != version {
		return r, fmt.Errorf("%w: version %d, want %d", ErrMalformed, v[0], version)
	}
	if len(v) == 1 {
		return r, nil
	}
	d := decoder{b: v[2:]}
	flags := v[1]
	if ns := d.varint("last fetch"); ns != 0 {
		r.LastFetch = time.Unix(0, ns).UTC()
	}
	r.Status = d.status("status")
	r.Error = d.string("error", MaxErrorLen)
	r.ETag = d.string("ETag", MaxValidatorLen)
	r.LastModified = d.string("Last-Modified", MaxValidatorLen)
	if flags&flagDigest != 0 {
		copy(r.Digest[:], d.bytes("digest", 32))
		r.HasDigest = true
	}
	if s := d.bytes("SimHash", 8); s != nil {
		r.SimHash = binary.BigEndian.Uint64(s)
	}
	r.Fetches = d.uint32("fetches")
	r.Changes = d.uint32("changes")
	if d.err == nil && r.Changes > r.Fetches {
		d.fail(fmt.Sprintf("changes %d > fetches %d", r.Changes, r.Fetches))
	}
	n := 0
	if c := d.bytes("history count", 1); c != nil {
		n = int(c[0])
		if n > HistoryLen {
			d.fail(fmt.Sprintf("history count %d > %d", n, HistoryLen))
		}
	}
	if d.err == nil && n > 0 {
		r.History = make([]Event, n)
		var at int64
		for i := range r.History {
			s := d.varint("history time")
			if i == 0 {
				at = s
			} else {
				at += s
			}
			sc := d.uvarint("history status")
			if d.err != nil {
				break
			}
			if sc>>1 > maxStatus {
				d.fail(fmt.Sprintf("history status %d > %d", sc>>1, maxStatus))
				break
			}
			r.History[i] = Event{At: time.Unix(at, 0).UTC(), Status: int(sc >> 1), Changed: sc&1 == 1}
		}
	}
	if d.err == nil {
		r.Job = d.uint32("job")
	}
	if d.err == nil && len(d.b) > 0 {
		d.tail(&r)
	}
	if d.err != nil {
		return Record{}, d.err
	}
	return r, nil
}

// tail reads the recrawl tail into r.
func (d *decoder) tail(r *Record) {
	flags := d.bytes("tail flags", 1)[0]
	if flags&tailHistory != 0 {
		h, rest, err := recrawl.DecodeHistory(d.b)
		if err != nil {
			d.fail(fmt.Sprintf("change history at byte %d: %v", 2+d.off, err))
			return
		}
		if h.Visits > 0 { // a history of no visits is none (Encode leaves it out)
			r.Recrawl = h
		}
		d.off += len(d.b) - len(rest)
		d.b = rest
	}
	if flags&tailDue != 0 {
		r.Due = time.Unix(d.varint("due"), 0).UTC()
		r.DueJob = d.uint32("due job")
		if r.Due.IsZero() { // year 1: no due time (Encode leaves it out)
			r.DueJob = 0
		}
	}
	if flags&tailDepth != 0 {
		v := d.uvarint("depth")
		if d.err == nil && v > maxDepth {
			d.fail(fmt.Sprintf("depth %d > %d", v, maxDepth))
			return
		}
		r.Depth, r.HasDepth = int(v), d.err == nil
	}
	if flags&tailLeads != 0 {
		r.Leads, r.HasLeads = d.leads(), d.err == nil
	}
	if flags&tailStated != 0 && d.err == nil {
		v := d.uvarint("stated interval")
		if d.err == nil && v > uint64(maxStated/time.Second) {
			d.fail(fmt.Sprintf("stated interval %d s > %d", v, uint64(maxStated/time.Second)))
			return
		}
		r.Stated = time.Duration(v) * time.Second
	}
}

// leads reads what appendLeads wrote.
func (d *decoder) leads() []string {
	n := d.uvarint("leads count")
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b))/2 { // each lead takes 2 bytes at least
		d.fail(fmt.Sprintf("leads count %d > %d bytes left / 2", n, len(d.b)))
		return nil
	}
	if n == 0 {
		return nil
	}
	leads := make([]string, 0, n)
	prev := ""
	for range n {
		p := d.uvarint("lead's shared length")
		if d.err == nil && p > uint64(len(prev)) {
			d.fail(fmt.Sprintf("lead's shared length %d > %d, the lead before", p, len(prev)))
		}
		rest := d.string("lead", MaxLeadsLen)
		if d.err != nil {
			return nil
		}
		prev = prev[:p] + rest
		leads = append(leads, prev)
	}
	return leads
}

// maxDepth bounds a stored depth (a crawl's depth limit is far below).
const maxDepth = 1 << 20

// decoder reads fields in order and keeps the first error.
type decoder struct {
	b   []byte
	off int // bytes consumed, for error messages (after the 2-byte header)
	err error
}

func (d *decoder) fail(why string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", ErrMalformed, why)
	}
}

func (d *decoder) bytes(field string, n int) []byte {
	if d.err != nil {
		return nil
	}
	if len(d.b) < n {
		d.fail(fmt.Sprintf("%s at byte %d: %d bytes left, want %d", field, 2+d.off, len(d.b), n))
		return nil
	}
	out := d.b[:n]
	d.b, d.off = d.b[n:], d.off+n
	return out
}

func (d *decoder) uvarint(field string) uint64 {
	if d.err != nil {
		return 0
	}
	x, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail(fmt.Sprintf("%s at byte %d: bad or cut uvarint", field, 2+d.off))
		return 0
	}
	d.b, d.off = d.b[n:], d.off+n
	return x
}

func (d *decoder) varint(field string) int64 {
	if d.err != nil {
		return 0
	}
	x, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail(fmt.Sprintf("%s at byte %d: bad or cut varint", field, 2+d.off))
		return 0
	}
	d.b, d.off = d.b[n:], d.off+n
	return x
}

func (d *decoder) status(field string) int {
	x := d.uvarint(field)
	if x > maxStatus {
		d.fail(fmt.Sprintf("%s %d > %d", field, x, maxStatus))
		return 0
	}
	return int(x)
}

func (d *decoder) uint32(field string) uint32 {
	x := d.uvarint(field)
	if x > math.MaxUint32 {
		d.fail(fmt.Sprintf("%s %d > %d", field, x, uint32(math.MaxUint32)))
		return 0
	}
	return uint32(x)
}

func (d *decoder) string(field string, limit int) string {
	n := d.uvarint(field + " length")
	if d.err != nil {
		return ""
	}
	if n > uint64(limit) {
		d.fail(fmt.Sprintf("%s length %d > %d", field, n, limit))
		return ""
	}
	return string(d.bytes(field, int(n)))
}
