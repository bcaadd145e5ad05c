package urlseen

import (
	"math"
	"slices"
	"sync"
	"sync/atomic"
)

// filter is the Bloom filter behind the seen gate and the key filters: a
// list of blockedBloom layers that grows as keys are added, so that a
// crawl that outgrows the size it was opened with (ExpectedURLs, ten
// million by default) keeps its false-positive rate instead of answering
// "maybe" for nearly every new URL, each one a store read. This is a
// scalable Bloom filter (Almeida, Baquero, Preguiça and Hutchison, 2007):
//
//   - Layer 0 is sized for the expected keys n at the target rate p.
//   - When the newest layer has taken as many new keys as it was sized
//     for, a layer for twice as many is added (layerRate: p/2^(i+1) for
//     layer i >= 1). Only the newest layer takes keys; a key is "maybe
//     present" if any layer says so. Every layer but the newest is full
//     at its own rate, so the rate over all of them stays below p + p/4 +
//     p/8 + ... = 1.5p in theory. A blocked filter misses a low rate by
//     more than a high one (its 512-bit blocks fill unevenly: 1.1x at
//     p/4, 2.5x at p/256 measured), so measured it rises a little past
//     that: 1.44p at 15 times n, 1.58p at 255 times (TestFilterGrows
//     holds it under 2p at 127 times).
//   - A check costs one cache line per layer: one while the crawl is
//     within n keys, about log2(keys/n) + 1 past it.
//   - Memory is about 10 bits per key at p = 1% within n keys; full
//     layers past it take 15-21 bits a key (15 to 255 times n), and a
//     layer just added is mostly empty (TestFilterGrows logs it).
//
// Start-up rebuilds the filter from the store into a single layer (sized
// for twice the keys there if they outgrew n), so layers exist only
// within one run. With maxBytes > 0 the filter stops growing once a new
// layer would take it past maxBytes: from then on its rate rises with the
// keys, as a fixed filter's does (every "maybe" is settled by the store,
// so an answer is never wrong, only slower).
//
// Safe for concurrent use: the layer list is replaced whole (an atomic
// pointer), and a key added to a layer that has just stopped being the
// newest is still found there. Keys are never removed.
type filter struct {
	layers atomic.Pointer[[]*layer]
	p      float64 // layer 0's rate
	// maxBytes caps growth (0: none); growing is false while the filter
	// is loaded from the store, which sizes it itself.
	maxBytes int64
	growing  bool
	mu       sync.Mutex // serialises growth
}

// layer is one blockedBloom and how full it is.
type layer struct {
	*blockedBloom
	capacity atomic.Int64 // the keys it was sized for; MaxInt64 once it may not grow
	// added is written at every new key: on a cache line of its own, away
	// from the fields every check reads.
	_     [48]byte
	added atomic.Int64 // keys it took that it did not hold (false positives not counted)
}

// layerRate is the rate layer i of a filter at rate p is sized for: p for
// the first, p/2^(i+1) after it (see filter).
func layerRate(p float64, i int) float64 {
	if i == 0 {
		return p
	}
	return p / float64(uint64(1)<<min(i+1, 60))
}

// newLayer returns an empty layer sized for n keys at rate p.
func newLayer(n uint, p float64) *layer {
	l := &layer{blockedBloom: newBlockedBloom(n, p)}
	l.capacity.Store(int64(max(n, 1)))
	return l
}

// newFilter returns a filter of one layer sized for n keys at rate p (in
// (0, 1)), capped at maxBytes (0: no cap) once growth is switched on.
// The first layer is made whatever maxBytes says.
func newFilter(n uint, p float64, maxBytes int64) *filter {
	f := &filter{p: p, maxBytes: maxBytes}
	ls := []*layer{newLayer(n, p)}
	f.layers.Store(&ls)
	return f
}

// grow switches growth on (after the filter was loaded from the store).
// Not safe to call while the filter is in use.
func (f *filter) grow() { f.growing = true }

// hash is the hash the filter takes for key b (its layers share one seed).
func (f *filter) hash(b []byte) uint64 { return (*f.layers.Load())[0].hashBytes(b) }

// testAndAdd adds the key with hash h and reports whether it may have
// been added before (false: certainly not).
func (f *filter) testAndAdd(h uint64) bool {
	ls := *f.layers.Load()
	newest := ls[len(ls)-1]
	for _, l := range ls[:len(ls)-1] {
		if l.test(h) {
			return true
		}
	}
	if newest.testAndAdd(h) {
		return true
	}
	if newest.added.Add(1) > newest.capacity.Load() && f.growing {
		f.addLayer(newest)
	}
	return false
}

// test reports whether the key with hash h may have been added.
func (f *filter) test(h uint64) bool {
	for _, l := range *f.layers.Load() {
		if l.test(h) {
			return true
		}
	}
	return false
}

// addLayer adds a layer after full, if full is still the newest and the
// cap allows it; otherwise full stays the newest for good.
func (f *filter) addLayer(full *layer) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ls := *f.layers.Load()
	if ls[len(ls)-1] != full || full.capacity.Load() == math.MaxInt64 {
		return
	}
	n := uint(min(2*full.capacity.Load(), math.MaxInt64/4))
	p := layerRate(f.p, len(ls))
	if f.maxBytes > 0 && f.bytes()+bloomBytes(n, p) > f.maxBytes {
		full.capacity.Store(math.MaxInt64) // no more layers: it saturates
		return
	}
	next := newLayer(n, p)
	next.seed = ls[0].seed
	grown := append(slices.Clip(ls), next)
	f.layers.Store(&grown)
}

// bytes is the memory the layers' bits take.
func (f *filter) bytes() int64 { return f.stats().Bytes }

// count is the number of layers.
func (f *filter) count() int { return len(*f.layers.Load()) }

// FilterStats describes a seen gate's or key filter's Bloom filter.
type FilterStats struct {
	Bytes  int64 // the memory its layers' bits take
	Layers int   // 1 within the keys it was opened for; one more each time its keys double past them
	Keys   int64 // keys it took, loaded or added (false positives not counted)
	// Capped is true once its cap (MaxFilterBytes) stopped its growth:
	// from then on its false-positive rate, and the store reads new keys
	// cost, rise with the keys.
	Capped bool
}

// stats returns the filter's figures.
func (f *filter) stats() FilterStats {
	ls := *f.layers.Load()
	st := FilterStats{Layers: len(ls), Capped: ls[len(ls)-1].capacity.Load() == math.MaxInt64}
	for _, l := range ls {
		st.Bytes += int64(len(l.blocks)) * blockBytes
		st.Keys += l.added.Load()
	}
	return st
}

// FilterSize is the memory one filter layer takes for keys keys at
// false-positive rate rate (in (0, 1)): what a gate opened on a store of
// keys/2 keys, or sized for keys, takes (benchmarks' projections).
func FilterSize(keys uint, rate float64) int64 { return bloomBytes(keys, rate) }
