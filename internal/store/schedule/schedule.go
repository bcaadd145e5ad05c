// Package schedule is the node's durable recrawl schedule: one entry per
// page waiting for its next fetch, stored under store.DueKey(due, host,
// url), so that the keys of one partition sort by due time and a scan from
// the partition's start to store.DueBefore(now) finds every page due.
//
// Invariants: a page has at most one entry, whose due time the page's URL
// record (urlstate.Record.Due) names, so that rescheduling deletes the old
// key in the batch that writes the new one. An entry handed to the
// frontier stays, marked Fed in the same batch as the frontier's item, until
// the fetch it asked for completes and reschedules the page: a crash between
// the two neither loses the page nor queues it twice. The package does no
// scheduling of its own (package recrawl decides the intervals); it reads
// and writes entries.
package schedule

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/trawl-crawler/trawl/internal/store"
	"github.com/trawl-crawler/trawl/internal/store/partition"
)

// Entry is one page's scheduled recrawl.
type Entry struct {
	// URL is the page's canonical URL; Host its politeness key.
	URL, Host string
	// Due is when the page is to be fetched again, whole seconds (it is
	// part of the key).
	Due time.Time
	// Job is the job that recrawls the page.
	Job uint32
	// Depth, ShapeRun and Level are the page's queue item fields when it
	// was first queued, for the item that recrawls it.
	Depth, ShapeRun int
	Level           uint8
	// Interval is the interval from the last fetch that set Due: the
	// schedule's planned fetches per hour are the sum of 1/Interval.
	Interval time.Duration
	// LastFetch is when the page was last fetched, whole seconds.
	LastFetch time.Time
	// Rate is the page's estimated changes per hour (recrawl.Rate), for
	// the expected freshness and age of its stored copy.
	Rate float64
	// Fed is when the entry was handed to the frontier as a queue item,
	// zero while it waits.
	Fed time.Time
	// Learned reports that Rate was estimated from the page's own
	// intervals between visits, not only from a prior or a first visit:
	// the estimates a group of pages pools into its prior.
	Learned bool
	// Own is the rate the page's own visits give, without the group
	// prior Rate was shrunk towards: what a group pools. 0 if not
	// learned, or in an entry written before the field existed.
	Own float64
	// Censored reports that every interval of the page's own seen so far
	// saw a change: Own is a lower bound on its rate, not an estimate.
	Censored bool
	// Requisite is the page's item's frontier.Item.Requisite: a resource
	// another page embeds, this many references from it (0: a page).
	Requisite int
	// Stated is the interval the site states for the page (a sitemap's
	// <changefreq>, urlstate.Record.Stated), 0 if none: the page's hint
	// group for the group priors.
	Stated time.Duration
}

// Key returns e's key.
func (e Entry) Key() []byte { return store.DueKey(e.Due, e.Host, e.URL) }

// Encoding of an entry's value:
//
//	+---------+------------------------------------------------+
//	| 0x01    | version                                        |
//	| job     | uvarint                                        |
//	| depth   | uvarint                                        |
//	| run     | uvarint, shape run                             |
//	| level   | 1 B                                            |
//	| interval| uvarint, seconds                               |
//	| last    | varint, Unix s of the last fetch               |
//	| rate    | 4 B, float32 bits, big-endian                  |
//	| fed     | varint, Unix s when handed to the frontier; 0  |
//	| flags   | 1 B, bit 0: Learned, bit 1: Censored, bit 2: a |
//	|         | stated interval follows, bit 3: a requisite's  |
//	|         | hops follow (absent in older entries)          |
//	| own     | 4 B, float32 bits, big-endian (absent in older) |
//	| stated  | uvarint, seconds (flags bit 2)                 |
//	| hops    | uvarint, Entry.Requisite (flags bit 3)         |
//	+---------+------------------------------------------------+
//	| anything after this is ignored (fields added later)      |
//	+----------------------------------------------------------+
const version = 0x01

// ErrMalformed wraps every Decode error.
var ErrMalformed = errors.New("schedule: malformed entry")

// maxField bounds depth and shape run, as the frontier's item codec does.
const maxField = 1 << 20

// Value returns the stored value of e.
func (e Entry) Value() []byte {
	b := make([]byte, 0, 44)
	b = append(b, version)
	b = binary.AppendUvarint(b, uint64(e.Job))
	b = binary.AppendUvarint(b, uint64(min(max(e.Depth, 0), maxField)))
	b = binary.AppendUvarint(b, uint64(min(max(e.ShapeRun, 0), maxField)))
	b = append(b, e.Level)
	b = binary.AppendUvarint(b, uint64(max(e.Interval, 0)/time.Second))
	b = binary.AppendVarint(b, unix(e.LastFetch))
	b = binary.BigEndian.AppendUint32(b, math.Float32bits(rate32(e.Rate)))
	b = binary.AppendVarint(b, unix(e.Fed))
	var flags byte
	if e.Learned {
		flags |= flagLearned
	}
	if e.Censored {
		flags |= flagCensored
	}
	stated := e.Stated / time.Second
	if stated > 0 {
		flags |= flagStated
	}
	if e.Requisite > 0 {
		flags |= flagRequisite
	}
	b = append(b, flags)
	b = binary.BigEndian.AppendUint32(b, math.Float32bits(rate32(e.Own)))
	if stated > 0 {
		b = binary.AppendUvarint(b, uint64(min(stated, maxStated)))
	}
	if e.Requisite > 0 {
		b = binary.AppendUvarint(b, uint64(min(e.Requisite, maxField)))
	}
	return b
}

// maxStated bounds a stated interval, in seconds (100 years).
const maxStated = 100 * 365 * 24 * 3600

// rate32 is r as stored: NaN, negative and infinite rates are unknown, 0.
func rate32(r float64) float32 {
	f := float32(r)
	if !(f >= 0) || math.IsInf(float64(f), 0) {
		return 0
	}
	return f
}

// The flags byte's bits: Entry.Learned and Entry.Censored; and whether a
// stated interval and a requisite's hops follow the own rate.
const (
	flagLearned   = 1 << 0
	flagCensored  = 1 << 1
	flagStated    = 1 << 2
	flagRequisite = 1 << 3
)

func unix(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}

func fromUnix(s int64) time.Time {
	if s == 0 {
		return time.Time{}
	}
	return time.Unix(s, 0).UTC()
}

// Decode reads an entry from its key and value. Errors wrap ErrMalformed
// (or store.ErrMalformedKey for the key) and say what was wrong.
func Decode(key, value []byte) (Entry, error) {
	k, err := store.DecodeKey(key)
	if err != nil {
		return Entry{}, err
	}
	if k.Kind != store.KindDue {
		return Entry{}, fmt.Errorf("%w: key of kind %s", ErrMalformed, k.Kind)
	}
	e := Entry{URL: k.URL, Host: k.Host, Due: k.Due}
	if len(value) == 0 || value[0] != version {
		return Entry{}, fmt.Errorf("%w: %s: version byte %x", ErrMalformed, k.URL, value[:min(len(value), 1)])
	}
	b := value[1:]
	var bad string
	uv := func(field string, limit uint64) uint64 {
		if bad != "" {
			return 0
		}
		x, n := binary.Uvarint(b)
		if n <= 0 || x > limit {
			bad = field
			return 0
		}
		b = b[n:]
		return x
	}
	sv := func(field string) int64 {
		if bad != "" {
			return 0
		}
		x, n := binary.Varint(b)
		if n <= 0 {
			bad = field
			return 0
		}
		b = b[n:]
		return x
	}
	e.Job = uint32(uv("job", math.MaxUint32))
	e.Depth = int(uv("depth", maxField))
	e.ShapeRun = int(uv("shape run", maxField))
	if bad == "" {
		if len(b) < 1 {
			bad = "level"
		} else {
			e.Level, b = b[0], b[1:]
		}
	}
	e.Interval = time.Duration(uv("interval", math.MaxInt64/uint64(time.Second))) * time.Second
	e.LastFetch = fromUnix(sv("last fetch"))
	if bad == "" {
		if len(b) < 4 {
			bad = "rate"
		} else {
			r := math.Float32frombits(binary.BigEndian.Uint32(b))
			if !(r >= 0) || math.IsInf(float64(r), 0) {
				bad = "rate"
			}
			e.Rate, b = float64(r), b[4:]
		}
	}
	e.Fed = fromUnix(sv("fed"))
	if bad == "" && len(b) > 0 {
		flags := b[0]
		e.Learned, e.Censored, b = flags&flagLearned != 0, flags&flagCensored != 0, b[1:]
		if len(b) >= 4 {
			// Only what a group pools: an unreadable own rate is unknown,
			// not a reason to lose the entry.
			if r := math.Float32frombits(binary.BigEndian.Uint32(b)); r >= 0 && !math.IsInf(float64(r), 0) {
				e.Own = float64(r)
			}
			b = b[4:]
		}
		if flags&flagStated != 0 {
			x := uv("stated interval", maxStated)
			e.Stated = time.Duration(x) * time.Second
		}
		if flags&flagRequisite != 0 {
			e.Requisite = int(uv("requisite", maxField))
		}
	}
	if bad != "" {
		return Entry{}, fmt.Errorf("%w: %s: bad or cut %s", ErrMalformed, k.URL, bad)
	}
	return e, nil
}

// Put writes e into b.
func Put(b *store.Batch, e Entry) error { return b.Set(e.Key(), e.Value()) }

// Delete removes the entry of url (whose politeness key is host) due at
// due from b; deleting an entry that is not there does nothing.
func Delete(b *store.Batch, due time.Time, host, url string) error {
	return b.Delete(store.DueKey(due, host, url))
}

// Move writes e into b in place of its page's entry due at from (none
// if from is zero): a reschedule in one batch.
func Move(b *store.Batch, from time.Time, e Entry) error {
	if !from.IsZero() {
		if err := Delete(b, from, e.Host, e.URL); err != nil {
			return err
		}
	}
	return Put(b, e)
}

// Due calls fn, in due order, with each entry of partition part due at or
// before now, until fn returns false. An entry that does not decode is
// passed to bad (with its key) and skipped.
func Due(db *store.DB, part partition.ID, now time.Time, fn func(Entry) bool, bad func(key []byte, err error)) error {
	it, err := db.NewRangeIter(store.PartitionPrefix(store.KindDue, part), store.DueBefore(part, now.Add(time.Second)))
	if err != nil {
		return err
	}
	return walk(it, fn, bad)
}

// All calls fn with every entry of partition part, in due order, until
// fn returns false.
func All(db *store.DB, part partition.ID, fn func(Entry) bool, bad func(key []byte, err error)) error {
	it, err := db.NewIter(store.PartitionPrefix(store.KindDue, part))
	if err != nil {
		return err
	}
	return walk(it, fn, bad)
}

type iterator interface {
	First() bool
	Next() bool
	Key() []byte
	Value() []byte
	Error() error
	Close() error
}

func walk(it iterator, fn func(Entry) bool, bad func(key []byte, err error)) error {
	for ok := it.First(); ok; ok = it.Next() {
		e, err := Decode(it.Key(), it.Value())
		if err != nil {
			if bad != nil {
				bad(append([]byte(nil), it.Key()...), err)
			}
			continue
		}
		if !fn(e) {
			break
		}
	}
	return errors.Join(it.Error(), it.Close())
}

// Partitions is the number of partitions a full pass over the schedule
// visits: partition.Count.
const Partitions = partition.Count
