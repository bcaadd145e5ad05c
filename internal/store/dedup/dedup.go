// Package dedup is the node's content-seen gate: an exact index from a
// payload's SHA-256 to the archived original response (URL, date, WARC
// file and offset), and a near-duplicate index of SimHash fingerprints by
// their bands (simhash.BandKey), each fingerprint with the URL of the page
// it came from and the mask of its weakest bits (simhash.Accumulator.Weak):
// two pages are compared outside both their weak bits, which an edit of a
// few words flips most, so that a copy whose fingerprint an edit moved a
// few bits past the distance is still caught.
//
// Both live in the node's store, keyed by value (kinds 'd' and 'n'), never
// by host, so that a fleet shards them by value (partition.OfFingerprint;
// cluster/fpshard): a shard holds its partitions' digests and, of each
// fingerprint, the bands whose values are its (PartitionBands, NearBands,
// AddNearBands). Entries are written
// into the caller's batch: the node puts them in a page's completion
// batch, which commits only after the page's WARC records are durable, so
// an entry never names a record that a crash could lose. Two fetches of
// one payload completing at once may both be archived as originals; the
// index then keeps the last written. An Index keeps in memory only which
// band values the near index holds (32 KiB), and of a value that holds one
// fingerprint that fingerprint (2 MiB, and 32 KiB marking the values that
// hold more); it is safe for concurrent use.
package dedup

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/trawl-crawler/trawl/internal/store"
	"github.com/trawl-crawler/trawl/internal/store/partition"
	"github.com/trawl-crawler/trawl/simhash"
)

// Original is an archived response that later identical payloads refer
// to (WARC-Refers-To-Target-URI, -Date and the record's place).
type Original struct {
	URL      string
	Date     time.Time // the response's WARC-Date
	File     string    // WARC file name, without directory
	Offset   int64     // the response record's offset in File
	RecordID string    // the response record's WARC-Record-ID
	Job      uint32    // the job whose fetch archived it
}

const originalVersion = 1

// Encode returns o's stored form: version; URL length and URL; date (varint,
// Unix ns); file name length and name; offset (uvarint); record ID length
// and ID; job (uvarint).
func (o Original) Encode() []byte {
	b := []byte{originalVersion}
	b = binary.AppendUvarint(b, uint64(len(o.URL)))
	b = append(b, o.URL...)
	b = binary.AppendVarint(b, o.Date.UnixNano())
	b = binary.AppendUvarint(b, uint64(len(o.File)))
	b = append(b, o.File...)
	b = binary.AppendUvarint(b, uint64(max(o.Offset, 0)))
	b = binary.AppendUvarint(b, uint64(len(o.RecordID)))
	b = append(b, o.RecordID...)
	return binary.AppendUvarint(b, uint64(o.Job))
}

// ErrMalformed wraps every decoding error.
var ErrMalformed = errors.New("dedup: malformed stored entry")

// DecodeOriginal reads a stored Original.
func DecodeOriginal(b []byte) (Original, error) {
	if len(b) == 0 || b[0] != originalVersion {
		return Original{}, fmt.Errorf("%w: version", ErrMalformed)
	}
	r := reader{b: b[1:]}
	var o Original
	o.URL = r.str()
	o.Date = time.Unix(0, r.varint()).UTC()
	o.File = r.str()
	o.Offset = int64(r.uvarint())
	o.RecordID = r.str()
	job := r.uvarint()
	o.Job = uint32(job)
	if job > 1<<32-1 {
		r.err = ErrMalformed
	}
	if r.err != nil || len(r.b) != 0 || o.Offset < 0 {
		return Original{}, fmt.Errorf("%w: cut off or trailing bytes", ErrMalformed)
	}
	return o, nil
}

type reader struct {
	b   []byte
	err error
}

func (r *reader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err, r.b = ErrMalformed, nil
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err, r.b = ErrMalformed, nil
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) str() string {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.err, r.b = ErrMalformed, nil
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

// Index is the content-seen gate over a store.
type Index struct {
	db *store.DB
	// occupied has bit v of word v/64 of occupied[band] set when a stored
	// fingerprint has value v in that band: a lookup skips the bands whose
	// value no stored fingerprint has, without a store read. 32 KiB, set
	// (AddNear) before the keys commit, so it never misses a stored key.
	// Once an index holds more than a few times 65,536 pages, most bits
	// are set and lookups read the store for every band.
	occupied [simhash.NumBands][1 << 16 / 64]atomic.Uint64
	// single holds, for a band value this index alone has occupied (by
	// AddNear) with one fingerprint, that fingerprint; multi has the value's
	// bit set once a second fingerprint came, or when the value was read
	// from the store (whose keys there may be many). A lookup need not read
	// a value that holds one fingerprint too far from its own
	// (MaxCandidateDistance): it counts the entry as scanned, as reading it
	// would have, so a lookup finds what it found reading it (but for an
	// add whose batch then failed to commit: counted, it was never there,
	// and can only end a crowded lookup's budget sooner). 2 MiB and 32 KiB; addMu
	// orders the adds, so a value's state changes by one add at a time.
	// Until an index holds a few times 65,536 pages most occupied values
	// hold one fingerprint, and a lookup reads the store only for near ones.
	single [simhash.NumBands][1 << 16]atomic.Uint64
	multi  [simhash.NumBands][1 << 16 / 64]atomic.Uint64
	addMu  sync.Mutex
}

// New returns the index kept in db, reading which band values the stored
// fingerprints hold: a seek per band value present, at most 2^16 per band.
func New(db *store.DB) (*Index, error) {
	x := &Index{db: db}
	if err := x.loadBands(0, 1<<16-1); err != nil {
		return nil, err
	}
	return x, nil
}

// LoadPartition notes which band values the stored fingerprints of
// partition p hold (partition.FingerprintRange): keys written into the
// store other than by AddNear, such as a checkpoint's, are found by Near
// only once loaded.
func (x *Index) LoadPartition(p partition.ID) error {
	lo, hi := partition.FingerprintRange(p)
	return x.loadBands(lo, hi)
}

// loadBands occupies the band values from lo to hi (inclusive) of every
// band that stored fingerprints hold.
func (x *Index) loadBands(lo, hi uint16) error {
	it, err := x.db.NewIter(store.KindPrefix(store.KindNear))
	if err != nil {
		return fmt.Errorf("dedup: load near bands: %w", err)
	}
	defer it.Close()
	for band := range simhash.NumBands {
		seek := []byte{byte(store.KindNear), byte(band), 0, 0}
		binary.BigEndian.PutUint16(seek[2:], lo)
		for it.SeekGE(seek); it.Valid(); it.SeekGE(seek) {
			k := it.Key()
			if len(k) < 1+simhash.BandPrefixLen || k[1] != byte(band) {
				break
			}
			v := binary.BigEndian.Uint16(k[2:])
			if v > hi {
				break
			}
			x.multi[band][v/64].Or(1 << (v % 64)) // how many the store holds is not read
			x.occupy(band, v)
			if v == 1<<16-1 {
				break
			}
			binary.BigEndian.PutUint16(seek[2:], v+1)
		}
	}
	if err := it.Error(); err != nil {
		return fmt.Errorf("dedup: load near bands: %w", err)
	}
	return nil
}

func (x *Index) occupy(band int, v uint16) { x.occupied[band][v/64].Or(1 << (v % 64)) }

func (x *Index) isOccupied(band int, v uint16) bool {
	return x.occupied[band][v/64].Load()&(1<<(v%64)) != 0
}

// occupyWith occupies band value v of band with fingerprint fp, noting
// whether the value holds fp alone (single) or more (multi). The caller
// holds addMu.
func (x *Index) occupyWith(band int, v uint16, fp uint64) {
	switch {
	case x.multi[band][v/64].Load()&(1<<(v%64)) != 0:
	case !x.isOccupied(band, v):
		x.single[band][v].Store(fp) // before the bit: a lookup that sees the bit sees fp
	case x.single[band][v].Load() != fp:
		x.multi[band][v/64].Or(1 << (v % 64))
	}
	x.occupy(band, v)
}

// onlyFar reports whether band value v of band holds one stored
// fingerprint alone and that one is farther than MaxCandidateDistance from
// fp: a lookup of fp would read it and pass it over.
func (x *Index) onlyFar(band int, v uint16, fp uint64) bool {
	if x.multi[band][v/64].Load()&(1<<(v%64)) != 0 {
		return false
	}
	return bits.OnesCount64(x.single[band][v].Load()^fp) > MaxCandidateDistance
}

// Exact returns the archived original of a payload whose SHA-256 is sum,
// and false if none is known.
func (x *Index) Exact(sum [sha256.Size]byte) (Original, bool, error) {
	v, err := x.db.Get(store.DigestKey(sum))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return Original{}, false, nil
	case err != nil:
		return Original{}, false, fmt.Errorf("dedup: look up digest: %w", err)
	}
	o, err := DecodeOriginal(v)
	if err != nil {
		return Original{}, false, err
	}
	return o, true, nil
}

// AddExact puts o as the original of payload sum into b. Only a response
// record goes here, never a revisit: a revisit refers to the response.
func (x *Index) AddExact(b *store.Batch, sum [sha256.Size]byte, o Original) error {
	return b.Set(store.DigestKey(sum), o.Encode())
}

// MaxBandScan bounds the stored fingerprints Near reads per probe, and
// MaxLookupScan those it reads in all: a band value shared by more pages
// than this (pages of one small vocabulary, whose fingerprints are alike) is
// not read to its end, and the probes past the budget are not read. The
// probes are read own bands first, so a lookup in a crowded region still
// reads the fingerprints most like its own; the cost of a lookup stays
// bounded wherever it falls.
const (
	MaxBandScan   = 16
	MaxLookupScan = 128
)

// MaxCandidateDistance is the farthest a stored fingerprint may be from
// the one looked up (Hamming distance) for Near to compare their
// sketches: the fingerprints of pages whose word pairs resemble each other
// at 0.6 are within about 12 bits, while unrelated pages are some 32 apart.
const MaxCandidateDistance = 20

// Match is a stored page near a page looked up.
type Match struct {
	URL string // the stored page
	Job uint32 // the job that archived it
	// Resemblance is the estimated Jaccard similarity of the two pages'
	// word 2-shingles (simhash.Resemblance), 0 to 1.
	Resemblance float64
}

// Probe is one band value a near lookup reads: band Band (0 to
// simhash.NumBands-1) holding Value.
type Probe struct {
	Band  int
	Value uint16
}

// Probes returns the band values a lookup of p reads: each band of p.FP
// as it is, then with every non-empty subset of its weak bits (p.Probe)
// flipped, fewest flips first: 4 x 2^simhash.ProbeBits in all. Two pages
// whose fingerprints differ only in bits weak in the one looked up, in at
// least one band, are found.
func Probes(p simhash.Print) []Probe {
	var weak [simhash.NumBands][]uint16
	for band := range simhash.NumBands {
		m := simhash.Band(p.Probe, band)
		for m != 0 {
			low := m & -m
			weak[band] = append(weak[band], low)
			m &^= low
		}
	}
	out := make([]Probe, 0, simhash.NumBands<<simhash.ProbeBits)
	for flips := 0; flips <= simhash.ProbeBits; flips++ {
		for band := range simhash.NumBands {
			w := weak[band]
			for sub := 0; sub < 1<<len(w); sub++ {
				if bits.OnesCount(uint(sub)) != flips {
					continue
				}
				v := simhash.Band(p.FP, band)
				for i, b := range w {
					if sub>>i&1 == 1 {
						v ^= b
					}
				}
				out = append(out, Probe{Band: band, Value: v})
			}
		}
	}
	return out
}

// RetitledResemblance is the resemblance a stored page whose title differs
// from the page looked up must reach to be its near duplicate: their main
// texts must be all but the same, and long enough to tell (both sketches
// with RetitledFilled bins filled: some 80 distinct word pairs or more).
// Distinct pages of a pattern (the reference pages of two like classes,
// which share most of their words) differ in their titles, which a page's
// copy keeps; a short page's sketch can match another's by chance.
const (
	RetitledResemblance = 0.98
	RetitledFilled      = 48
)

// Near returns the stored page most like p: among the stored pages found
// under p's probes (Probes) whose fingerprints are within
// MaxCandidateDistance of p's, the one whose sketch resembles p's most, if
// that resemblance is at least minResemblance, and at least
// RetitledResemblance if its title differs from p's; false if none is.
func (x *Index) Near(p simhash.Print, minResemblance float64) (Match, bool, error) {
	return x.NearProbes(p, Probes(p), minResemblance)
}

// NearProbes is Near over the given probes only: the part of a lookup
// that one shard of a fleet's index answers (partition.OfFingerprint of
// each probe's value).
func (x *Index) NearProbes(p simhash.Print, probes []Probe, minResemblance float64) (Match, bool, error) {
	best := Match{Resemblance: -1}
	var val []byte          // the best candidate's stored value, decoded at the end
	var it *pebble.Iterator // one for every probe read, made at the first
	var seen fpSet          // fingerprints compared already (under another probe)
	prefix := make([]byte, 0, 1+simhash.BandPrefixLen)
	scanned := 0
probing:
	for _, pr := range probes {
		if scanned >= MaxLookupScan {
			break
		}
		if pr.Band < 0 || pr.Band >= simhash.NumBands || !x.isOccupied(pr.Band, pr.Value) {
			continue
		}
		if x.onlyFar(pr.Band, pr.Value, p.FP) {
			scanned++ // its one entry, read and passed over by distance
			continue
		}
		if it == nil {
			var err error
			if it, err = x.db.NewIter(store.KindPrefix(store.KindNear)); err != nil {
				return Match{}, false, fmt.Errorf("dedup: near lookup: %w", err)
			}
			defer it.Close()
		}
		prefix = append(prefix[:0], byte(store.KindNear), byte(pr.Band))
		prefix = binary.BigEndian.AppendUint16(prefix, pr.Value)
		n := 0
		for it.SeekGE(prefix); it.Valid() && n < MaxBandScan && scanned < MaxLookupScan && bytes.HasPrefix(it.Key(), prefix); it.Next() {
			n++
			scanned++
			k := it.Key()
			fp := binary.BigEndian.Uint64(k[len(k)-8:])
			if bits.OnesCount64(fp^p.FP) > MaxCandidateDistance || !seen.add(fp) {
				continue
			}
			e, ok := decodeNearHead(it.Value())
			if !ok {
				continue // an entry of an older format: not comparable
			}
			r, ok := Compare(p, simhash.Print{FP: fp, Title: e.title, Heading: e.heading, Sketch: e.sketch})
			if ok && r > best.Resemblance {
				best.Resemblance = r
				val = append(val[:0], it.Value()...)
				if r >= 1 {
					break probing
				}
			}
		}
		if err := it.Error(); err != nil {
			return Match{}, false, fmt.Errorf("dedup: near lookup: %w", err)
		}
	}
	if best.Resemblance < minResemblance || val == nil {
		return Match{}, false, nil
	}
	e, _ := decodeNearHead(val)
	best.Job, best.URL = e.job, string(e.url)
	return best, true, nil
}

// fpSet is a small set of fingerprints: a lookup's candidates, at most
// MaxLookupScan. Zero is kept apart.
type fpSet struct {
	slots   [2 * MaxLookupScan]uint64
	hasZero bool
}

// add adds fp and reports whether it was not there.
func (s *fpSet) add(fp uint64) bool {
	if fp == 0 {
		had := s.hasZero
		s.hasZero = true
		return !had
	}
	const m = 2*MaxLookupScan - 1
	for i := (fp * 0x9E3779B97F4A7C15) >> 54 & m; ; i = (i + 1) & m {
		switch s.slots[i] {
		case fp:
			return false
		case 0:
			s.slots[i] = fp
			return true
		}
	}
}

// Compare returns how much the page of print s resembles the page looked
// up, of print p (simhash.Resemblance), and whether s may be p's near
// duplicate at all: their fingerprints are within MaxCandidateDistance,
// and if their titles differ (or, p's title being its site's, their
// headings, or p has none: simhash.Print.SharedTitle) they resemble each
// other at RetitledResemblance, over RetitledFilled bins at least.
func Compare(p, s simhash.Print) (float64, bool) {
	if bits.OnesCount64(p.FP^s.FP) > MaxCandidateDistance {
		return 0, false
	}
	r := simhash.Resemblance(p.Sketch, s.Sketch)
	if s.Title == p.Title && (!p.SharedTitle || s.Heading == p.Heading && p.Heading != 0) {
		return r, true
	}
	return r, r >= RetitledResemblance && min(p.Sketch.Filled(), s.Sketch.Filled()) >= RetitledFilled
}

// nearVersion is the first byte of a near entry's value. Entries of the
// format before it (a page's visible-text SimHash and its weak bits) began
// with their job number, never 0; Near skips them, as their fingerprints
// are not comparable.
const nearVersion = 0

// nearEntry is a near entry's value: the job that archived the page, the
// hashes of its title and heading, its sketch and its URL (a slice of the
// value decoded).
type nearEntry struct {
	job            uint32
	title, heading uint64
	sketch         simhash.Sketch
	url            []byte
}

// encodeNear returns a near entry's value: nearVersion; job (uvarint);
// title hash (8 B, BE); heading hash (8 B, BE); sketch
// (simhash.SketchBytes: Sketch.AppendTo); URL.
func encodeNear(p simhash.Print, url string, job uint32) []byte {
	v := make([]byte, 0, 1+5+16+simhash.SketchBytes+len(url))
	v = append(v, nearVersion)
	v = binary.AppendUvarint(v, uint64(job))
	v = binary.BigEndian.AppendUint64(v, p.Title)
	v = binary.BigEndian.AppendUint64(v, p.Heading)
	v = p.Sketch.AppendTo(v)
	return append(v, url...)
}

func decodeNearHead(v []byte) (nearEntry, bool) {
	if len(v) == 0 || v[0] != nearVersion {
		return nearEntry{}, false
	}
	job, n := binary.Uvarint(v[1:])
	if n <= 0 || job > 1<<32-1 {
		return nearEntry{}, false
	}
	v = v[1+n:]
	if len(v) < 16 {
		return nearEntry{}, false
	}
	e := nearEntry{job: uint32(job), title: binary.BigEndian.Uint64(v), heading: binary.BigEndian.Uint64(v[8:])}
	var ok bool
	if e.sketch, ok = simhash.DecodeSketch(v[16:]); !ok {
		return nearEntry{}, false
	}
	e.url = v[16+simhash.SketchBytes:]
	return e, true
}

// Bands is a set of band numbers: bit i stands for band i.
type Bands uint8

// AllBands holds every band of a fingerprint.
const AllBands Bands = 1<<simhash.NumBands - 1

// Has reports whether band is in s.
func (s Bands) Has(band int) bool { return s&(1<<band) != 0 }

// PartitionBands returns the bands of fp whose values are partition p's
// (partition.OfFingerprint): the bands a shard of the index over p holds.
func PartitionBands(fp uint64, p partition.ID) Bands {
	var s Bands
	for band := range simhash.NumBands {
		if partition.OfFingerprint(simhash.Band(fp, band)) == p {
			s |= 1 << band
		}
	}
	return s
}

// AddNear puts the print p of the page at url, archived by job, into b: a
// key under each band of its fingerprint (store.NearKey), whose value is
// the job, the print's sketch and the URL (encodeNear).
func (x *Index) AddNear(b *store.Batch, p simhash.Print, url string, job uint32) error {
	return x.AddNearBands(b, p, url, job, AllBands)
}

// AddNearBands is AddNear under the bands in bands only: the keys one shard
// of a fleet's index holds (PartitionBands).
func (x *Index) AddNearBands(b *store.Batch, p simhash.Print, url string, job uint32, bands Bands) error {
	v := encodeNear(p, url, job)
	x.addMu.Lock()
	for band := range simhash.NumBands {
		if bands.Has(band) {
			x.occupyWith(band, simhash.Band(p.FP, band), p.FP) // before b commits
		}
	}
	x.addMu.Unlock()
	for band := range simhash.NumBands {
		if !bands.Has(band) {
			continue
		}
		if err := b.Set(store.NearKey(p.FP, band), v); err != nil {
			return err
		}
	}
	return nil
}
