// Package patternbudget keeps two counts per key (a job and a URL
// pattern) in memory that does not grow with the crawl: the URLs queued
// (Add) and the room earned (Earn), in a count-min sketch of a fixed
// number of pairs of 32-bit counters. Admit admits a URL while the URLs
// queued are within a base plus a share per unit of room earned.
//
// An estimate is never under the true count (each key's counters all see
// its every Add or Earn); collisions can only raise it. So a queued count
// cuts a pattern early, never late; an earned count can lend a pattern
// another's room, with the same odds (Options.Width).
//
// A Budget is safe for concurrent use: its counters are atomics and it
// holds no lock. Admit reads, then adds: two callers admitting the last
// URL of a key's room at once may both succeed.
package patternbudget

import (
	"errors"
	"fmt"
	"hash/maphash"
	"sync/atomic"
)

// Defaults of Options: 4 rows of 2^18 pairs of counters, 8 MiB.
const (
	DefaultRows  = 4
	DefaultWidth = 1 << 18
)

// Options size a Budget. The zero value of a field means its default.
type Options struct {
	// Rows is the number of hash rows (independent counters per key).
	// More rows make an overcount less likely. Zero means DefaultRows.
	Rows int
	// Width is the counters per row, rounded up to a power of two. With n
	// URLs counted in all, a key's count exceeds its true value by more
	// than 2.7n/Width with probability at most e^-Rows. Zero means
	// DefaultWidth.
	Width int
}

// Validate reports every bad field by name.
func (o Options) Validate() error {
	var errs []error
	if o.Rows < 0 || o.Rows > maxRows {
		errs = append(errs, fmt.Errorf("patternbudget: Rows %d not in 0..16", o.Rows))
	}
	if o.Width < 0 || o.Width > 1<<28 {
		errs = append(errs, fmt.Errorf("patternbudget: Width %d not in 0..2^28", o.Width))
	}
	return errors.Join(errs...)
}

// Budget is a count-min sketch over (job, key) pairs.
type Budget struct {
	seeds []maphash.Seed // one per row
	rows  [][]cell       // rows × width
	mask  uint64
}

// cell is a key's pair of counters in one row: the URLs queued and the
// room earned. Side by side, one cache line holds both.
type cell struct{ queued, earned atomic.Uint32 }

// New returns an empty Budget; it panics if opts is not valid (options
// are the caller's constants).
func New(opts Options) *Budget {
	if err := opts.Validate(); err != nil {
		panic(err)
	}
	if opts.Rows == 0 {
		opts.Rows = DefaultRows
	}
	if opts.Width == 0 {
		opts.Width = DefaultWidth
	}
	w := 1
	for w < opts.Width {
		w <<= 1
	}
	b := &Budget{mask: uint64(w - 1)}
	for range opts.Rows {
		b.seeds = append(b.seeds, maphash.MakeSeed())
		b.rows = append(b.rows, make([]cell, w))
	}
	return b
}

// Bytes is the memory the counters take.
func (b *Budget) Bytes() int { return 8 * len(b.rows) * len(b.rows[0]) }

// saturated is where a counter stops growing, far above any budget.
const saturated = 1 << 31

// maxRows is the most rows Options.Validate allows.
const maxRows = 16

// Add counts one more URL of key for job and returns the estimated count
// so far, this one included: at least the true count.
func (b *Budget) Add(job uint32, key string) uint32 {
	cs := b.cells(job, key)
	return add(cs[:len(b.rows)], func(c *cell) *atomic.Uint32 { return &c.queued })
}

// Earn counts one more unit of room earned by key for job and returns
// the estimated count so far, this one included.
func (b *Budget) Earn(job uint32, key string) uint32 {
	cs := b.cells(job, key)
	return add(cs[:len(b.rows)], func(c *cell) *atomic.Uint32 { return &c.earned })
}

// Count returns the estimated URLs of key queued for job and the room it
// earned, without adding to either.
func (b *Budget) Count(job uint32, key string) (queued, earned uint32) {
	cs := b.cells(job, key)
	return count(cs[:len(b.rows)])
}

// Room is the most URLs a key may have queued with base URLs to start
// with and per more for each unit of room earned.
func Room(base, per int, earned uint32) int64 {
	return int64(base) + int64(per)*int64(earned)
}

// Full reports whether key has queued for job every URL of its room
// (Room).
func (b *Budget) Full(job uint32, key string, base, per int) bool {
	q, e := b.Count(job, key)
	return int64(q) >= Room(base, per, e)
}

// Admit reports whether key has room for one more URL for job (Full is
// false) and, if so, counts it. A URL refused is not counted: room earned
// later goes to URLs found later, not to those refused before.
func (b *Budget) Admit(job uint32, key string, base, per int) bool {
	cs := b.cells(job, key)
	if q, e := count(cs[:len(b.rows)]); int64(q) >= Room(base, per, e) {
		return false
	}
	add(cs[:len(b.rows)], func(c *cell) *atomic.Uint32 { return &c.queued })
	return true
}

// cells returns key's cell in each row for job (the first len(b.rows)).
func (b *Budget) cells(job uint32, key string) (cs [maxRows]*cell) {
	for i, row := range b.rows {
		cs[i] = &row[b.slot(i, job, key)]
	}
	return cs
}

func add(cs []*cell, counter func(*cell) *atomic.Uint32) uint32 {
	est := uint32(saturated)
	for _, c := range cs {
		v := counter(c)
		n := v.Load()
		if n < saturated {
			n = v.Add(1)
		}
		est = min(est, n)
	}
	return est
}

func count(cs []*cell) (queued, earned uint32) {
	queued, earned = saturated, saturated
	for _, c := range cs {
		queued, earned = min(queued, c.queued.Load()), min(earned, c.earned.Load())
	}
	return queued, earned
}

func (b *Budget) slot(row int, job uint32, key string) uint64 {
	var h maphash.Hash
	h.SetSeed(b.seeds[row])
	var j [4]byte
	j[0], j[1], j[2], j[3] = byte(job), byte(job>>8), byte(job>>16), byte(job>>24)
	h.Write(j[:])
	h.WriteString(key)
	return h.Sum64() & b.mask
}
