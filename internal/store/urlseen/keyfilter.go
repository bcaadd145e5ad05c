package urlseen

import (
	"fmt"

	"github.com/trawl-crawler/trawl/internal/store"
	"github.com/trawl-crawler/trawl/internal/store/partition"
)

// KeyFilter answers, from memory, whether the store may hold a key of one
// kind: false means it certainly does not, so the caller can skip the
// store read. The node keeps one over the per-URL records (store.KindURL):
// in a crawl most fetches are first fetches, with no record to read, and
// that read was a fiftieth of a page's CPU.
//
// Invariant: every key of the kind in the store is in the filter. It holds
// if the filter is loaded from the store at start-up (NewKeyFilter) and
// every writer of such a key calls Add before the batch holding it
// commits. Keys deleted from the store stay in the filter (a needless
// read, never a wrong answer). Safe for concurrent use.
type KeyFilter struct {
	f *filter
}

// NewKeyFilter loads the keys of kind in db into a filter sized as the
// seen gate's is, by opts: for opts.ExpectedURLs keys, or for twice the
// keys in db if it holds more, at opts.FalsePositiveRate. Past that size
// it grows as the seen gate's does, up to opts.MaxFilterBytes.
func NewKeyFilter(db *store.DB, kind store.Kind, opts DurableOptions) (*KeyFilter, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	size := opts.ExpectedURLs
	for {
		k := &KeyFilter{f: newFilter(size, opts.FalsePositiveRate, opts.MaxFilterBytes)}
		n, err := k.load(db, kind)
		if err != nil {
			return nil, err
		}
		if n <= size {
			k.f.grow()
			return k, nil
		}
		size = 2 * n // the store outgrew the filter: rescan into a bigger one
	}
}

// load adds every key of kind in db and counts them.
func (k *KeyFilter) load(db *store.DB, kind store.Kind) (uint, error) {
	n, err := k.loadPrefix(db, store.KindPrefix(kind))
	if err != nil {
		return 0, fmt.Errorf("urlseen: load %c keys: %w", kind, err)
	}
	return n, nil
}

// loadPrefix adds every key under prefix in db and counts them.
func (k *KeyFilter) loadPrefix(db *store.DB, prefix []byte) (uint, error) {
	it, err := db.NewIter(prefix)
	if err != nil {
		return 0, err
	}
	var n uint
	for it.First(); it.Valid(); it.Next() {
		k.f.testAndAdd(k.f.hash(it.Key()))
		n++
	}
	return n, it.Close()
}

// LoadPartition adds the keys of kind under partition p in db: a
// partition's keys written by another node (restored from a checkpoint)
// keep the invariant once loaded, before anything reads them.
func (k *KeyFilter) LoadPartition(db *store.DB, kind store.Kind, p partition.ID) error {
	if _, err := k.loadPrefix(db, store.PartitionPrefix(kind, p)); err != nil {
		return fmt.Errorf("urlseen: load %c keys of partition %d: %w", kind, p, err)
	}
	return nil
}

// MayHave reports whether the store may hold key (false: certainly not).
func (k *KeyFilter) MayHave(key []byte) bool { return k.f.test(k.f.hash(key)) }

// FilterStats returns the filter's figures (see Durable.FilterStats).
func (k *KeyFilter) FilterStats() FilterStats { return k.f.stats() }

// Add records that key is about to be written; call it before the batch
// that writes key commits.
func (k *KeyFilter) Add(key []byte) { k.f.testAndAdd(k.f.hash(key)) }
