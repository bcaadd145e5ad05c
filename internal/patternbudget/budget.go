// Package patternbudget counts URLs per key (a job and a URL pattern) in
// memory that does not grow with the crawl: a count-min sketch of a fixed
// number of 32-bit counters. A count is never under the true one (each
// key's counters all see its every Add); collisions can only raise it, so
// a budget cut may come early, never late.
//
// A Budget is safe for concurrent use: its counters are atomics and it
// holds no lock.
package patternbudget

import (
	"errors"
	"fmt"
	"hash/maphash"
	"sync/atomic"
)

// Defaults of Options: 4 rows of 2^18 counters, 4 MiB.
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
	if o.Rows < 0 || o.Rows > 16 {
		errs = append(errs, fmt.Errorf("patternbudget: Rows %d not in 0..16", o.Rows))
	}
	if o.Width < 0 || o.Width > 1<<28 {
		errs = append(errs, fmt.Errorf("patternbudget: Width %d not in 0..2^28", o.Width))
	}
	return errors.Join(errs...)
}

// Budget is a count-min sketch over (job, key) pairs.
type Budget struct {
	seeds []maphash.Seed    // one per row
	rows  [][]atomic.Uint32 // rows × width counters
	mask  uint64
}

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
		b.rows = append(b.rows, make([]atomic.Uint32, w))
	}
	return b
}

// Bytes is the memory the counters take.
func (b *Budget) Bytes() int { return 4 * len(b.rows) * len(b.rows[0]) }

// saturated is where a counter stops growing, far above any budget.
const saturated = 1 << 31

// Add counts one more URL of key for job and returns the estimated count
// so far, this one included: at least the true count.
func (b *Budget) Add(job uint32, key string) uint32 {
	est := uint32(saturated)
	for i, row := range b.rows {
		c := &row[b.slot(i, job, key)]
		v := c.Load()
		if v < saturated {
			v = c.Add(1)
		}
		est = min(est, v)
	}
	return est
}

// Count returns the estimated count of key for job without adding to it.
func (b *Budget) Count(job uint32, key string) uint32 {
	est := uint32(saturated)
	for i, row := range b.rows {
		est = min(est, row[b.slot(i, job, key)].Load())
	}
	return est
}

// Admit counts one more URL of key for job and reports whether the count
// is still within max.
func (b *Budget) Admit(job uint32, key string, max int) bool {
	return int64(b.Add(job, key)) <= int64(max)
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
