package urlseen

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/trawl-crawler/trawl/internal/store"
	"github.com/trawl-crawler/trawl/internal/store/partition"
)

// DurableOptions configures NewDurable. The zero value is valid.
type DurableOptions struct {
	// ExpectedURLs sizes the Bloom filter. If zero, DefaultExpectedURLs.
	// More URLs than this only raise the false-positive rate (and so the
	// number of store reads), never drop a URL; at start-up a store that
	// holds more URLs than this gets a filter sized for twice them.
	ExpectedURLs uint
	// FalsePositiveRate is the filter's target rate at ExpectedURLs, in
	// (0, 1). If zero, DefaultFalsePositiveRate. Past ExpectedURLs the
	// filter grows in layers and its rate stays below twice this (see
	// filter).
	FalsePositiveRate float64
	// MaxFilterBytes caps the filter's growth within a run: past it the
	// filter answers "maybe" more and more often (each settled by a store
	// read) instead of taking more memory. Zero: no cap. The filter made
	// at start-up, for ExpectedURLs or twice the keys in the store, is
	// made whatever the cap.
	MaxFilterBytes int64
}

// Defaults for DurableOptions.
const (
	DefaultExpectedURLs      = 10_000_000
	DefaultFalsePositiveRate = 0.01
)

// Validate reports every bad field of o by name.
func (o DurableOptions) Validate() error {
	var errs []error
	if o.FalsePositiveRate < 0 || o.FalsePositiveRate >= 1 {
		errs = append(errs, fmt.Errorf("urlseen: DurableOptions.FalsePositiveRate = %v, want in (0, 1)", o.FalsePositiveRate))
	}
	if o.MaxFilterBytes < 0 {
		errs = append(errs, fmt.Errorf("urlseen: DurableOptions.MaxFilterBytes = %d, want >= 0 (0: no cap)", o.MaxFilterBytes))
	}
	return errors.Join(errs...)
}

func (o DurableOptions) withDefaults() DurableOptions {
	if o.ExpectedURLs == 0 {
		o.ExpectedURLs = DefaultExpectedURLs
	}
	if o.FalsePositiveRate == 0 {
		o.FalsePositiveRate = DefaultFalsePositiveRate
	}
	return o
}

// seenMarker is the value written under a new store.SeenKey: the key is
// the whole record. The per-URL record (store.URLKey, urlstate) is one per
// URL for all jobs and is written once the URL is fetched (or, for a page
// a sitemap lists with a changefreq, when it is listed: the record then
// holds only that).
var seenMarker = []byte{}

// Durable is the URL-seen gate over the store: a Bloom filter in memory in
// front of the exact set of store.SeenKey keys, one per job and URL: each
// job sees a URL once (two jobs may both want it; the node fetches it once). "Not in the filter" means
// new, answered from memory; "maybe in the filter" is settled by a store
// read, so a false positive never drops a new URL.
//
// Safe for concurrent use. Invariants: a URL is reported new at most once
// per store (across restarts, for URLs whose write was committed); every
// URL in the store or staged in an uncommitted batch is in the filter
// (for a partition whose keys were replaced under the gate, once
// LoadPartition returns).
//
// The filter needs no lock of its own (blockedBloom); store reads happen
// under a stripe lock only, so they never block URLs of other partitions.
type Durable struct {
	db      *store.DB
	filter  *filter
	n       atomic.Int64
	stripes [partition.Count]stripe
}

// stripe serialises the decisions for the URLs of one partition and holds
// those written into batches not yet committed, which a store read would
// miss.
//
// It also caches keys a store read found: the links every page of a site
// repeats (navigation, footers) are read again and again, and a map lookup
// costs a fiftieth of a store read. The seen keys are never deleted, so a
// cached key stays right for the life of the store, except when a
// partition's keys are replaced (a checkpoint read): LoadPartition then
// empties that partition's cache. The cache is two
// generations of at most hotKeys keys each: when hot fills it becomes warm
// and a new hot starts; a hit in warm moves the key back to hot. Its
// bound, over all stripes, is 2 x hotKeys x partition.Count keys.
type stripe struct {
	mu        sync.Mutex
	pending   map[string]struct{}
	hot, warm map[string]struct{}
}

// hotKeys bounds a stripe's cache generation: 2 x 256 x 256 = 131,072
// keys at most, about 15 MB of URLs.
const hotKeys = 256

// cached reports whether key is in s's cache, keeping it hot if so.
// s.mu must be held.
func (s *stripe) cached(key []byte) bool {
	if _, ok := s.hot[string(key)]; ok {
		return true
	}
	if _, ok := s.warm[string(key)]; ok {
		s.remember(string(key))
		return true
	}
	return false
}

// remember adds key, known to be in the store, to s's cache. s.mu must be
// held.
func (s *stripe) remember(key string) {
	if len(s.hot) >= hotKeys {
		s.warm, s.hot = s.hot, make(map[string]struct{}, hotKeys)
	}
	s.hot[key] = struct{}{}
}

// NewDurable returns the seen gate over db, rebuilding the filter by one
// streaming scan of the seen keys in the store (their bytes are never all in
// memory at once).
func NewDurable(db *store.DB, opts DurableOptions) (*Durable, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	d := &Durable{db: db}
	for i := range d.stripes {
		d.stripes[i].pending = make(map[string]struct{})
		d.stripes[i].hot = make(map[string]struct{})
	}
	size := opts.ExpectedURLs
	for {
		d.filter = newFilter(size, opts.FalsePositiveRate, opts.MaxFilterBytes)
		n, err := d.load()
		if err != nil {
			return nil, err
		}
		if n <= size {
			d.n.Store(int64(n))
			d.filter.grow()
			return d, nil
		}
		size = 2 * n // the store outgrew the filter: rescan into a bigger one
	}
}

// load adds every URL in the store to d.filter and counts them: the
// partitions' key ranges are read side by side, one goroutine per CPU
// (start-up reads every seen key: about 0.35 µs a key on one core).
func (d *Durable) load() (uint, error) {
	workers := min(runtime.GOMAXPROCS(0), partition.Count)
	counts := make([]uint, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := partition.Count*w/workers, partition.Count*(w+1)/workers
		wg.Go(func() { counts[w], errs[w] = d.loadRange(partition.ID(lo), hi) })
	}
	wg.Wait()
	var n uint
	for _, c := range counts {
		n += c
	}
	return n, errors.Join(errs...)
}

// loadRange adds the seen keys of partitions [lo, hi) to d.filter and
// counts them.
func (d *Durable) loadRange(lo partition.ID, hi int) (uint, error) {
	upper := store.KindPrefix(store.KindSeen + 1)
	if hi < partition.Count {
		upper = store.PartitionPrefix(store.KindSeen, partition.ID(hi))
	}
	it, err := d.db.NewRangeIter(store.PartitionPrefix(store.KindSeen, lo), upper)
	if err != nil {
		return 0, fmt.Errorf("urlseen: load seen URLs: %w", err)
	}
	var n uint
	for it.First(); it.Valid(); it.Next() {
		k := it.Key()
		i := bytes.IndexByte(k[min(3, len(k)):], 0)
		if len(k) < 3 || i < 0 {
			it.Close()
			return 0, fmt.Errorf("urlseen: load seen URLs: malformed key %q", k)
		}
		d.filter.testAndAdd(d.filter.hash(k))
		n++
	}
	if err := it.Close(); err != nil {
		return 0, fmt.Errorf("urlseen: load seen URLs: %w", err)
	}
	return n, nil
}

// LoadPartition makes the gate know partition p's seen keys as the store
// holds them now: call it after p's keys were replaced under the gate (a
// checkpoint read into the store, cluster/checkpoint), before URLs of p
// are added. It adds every seen key of p to the filter (without it, the
// filter's "definitely not" would call those URLs new without the exact
// check) and forgets p's cached keys (the cache trusts that seen keys are
// never deleted, which replacing a partition breaks). Len grows by the
// keys the filter did not hold yet.
//
// The filter has no deletes: the keys of a partition released (or
// replaced) stay in it. That costs only false "maybe" answers, which the
// exact check settles; Len is not lowered for them either, so after
// partitions move it is an estimate.
//
// Keys of p staged in batches not yet committed stay pending; the caller
// must not add URLs of p while the partition is being replaced.
func (d *Durable) LoadPartition(p partition.ID) error {
	s := &d.stripes[p]
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hot = make(map[string]struct{})
	s.warm = nil
	it, err := d.db.NewIter(store.PartitionPrefix(store.KindSeen, p))
	if err != nil {
		return fmt.Errorf("urlseen: load partition %d: %w", p, err)
	}
	var added int64
	for it.First(); it.Valid(); it.Next() {
		if !d.filter.testAndAdd(d.filter.hash(it.Key())) {
			added++
		}
	}
	d.n.Add(added)
	if err := it.Close(); err != nil {
		return fmt.Errorf("urlseen: load partition %d: %w", p, err)
	}
	return nil
}

// FilterStats returns the Bloom filter's figures: its memory, the layers
// it has grown to (1 within ExpectedURLs), its keys, whether its cap was
// reached.
func (d *Durable) FilterStats() FilterStats { return d.filter.stats() }

// Len implements Set: the number of URLs in the store or staged in batches
// (an estimate once partitions moved: see LoadPartition).
func (d *Durable) Len() int { return int(d.n.Load()) }

// Add implements Set for job 0. It commits the URL's key on its own without waiting
// for durability (store.DB.CommitNoSync): the key becomes durable with the
// next synced commit by anyone. A crawler that must not lose it should use
// AddTo or AddBatch with the batch that also queues the URL.
func (d *Durable) Add(url string) (bool, error) {
	b := d.db.NewBatch()
	isNew, err := d.AddTo(b, 0, url)
	if err != nil || !isNew {
		b.Close()
		return false, err
	}
	if err := d.db.CommitNoSync(b); err != nil {
		return false, fmt.Errorf("urlseen: add %s: %w", url, err)
	}
	return true, nil
}

// AddTo is Add for job, writing the URL's key into b instead of
// committing it: the URL is recorded exactly when b commits, atomically with
// whatever else b holds. Until b commits, the URL is not reported new again
// to job; if b is closed uncommitted, it may be again.
func (d *Durable) AddTo(b *store.Batch, job uint32, url string) (bool, error) {
	r, err := d.AddBatch(b, job, []string{url})
	if err != nil {
		return false, err
	}
	return r[0], nil
}

// AddBatch checks urls (canonical URLs, as from urlnorm) against what job
// has seen and writes the key of each new one into b; isNew[i] reports
// whether urls[i] was new to job. A URL
// repeated within urls is new at most once. This is the fast path: checks
// answered from memory cost no store access, and every new key of a page's
// links goes into one batch. On error, no URL has been added and b holds
// none of urls' keys from this call.
//
// The answer is exact for every caller: the filter's "maybe seen" is
// always settled by the keys pending in uncommitted batches, the cache of
// keys read before, or a store read, never trusted alone. So URLs that
// must not be lost to a false positive (those a sitemap lists) need no
// mode of their own.
func (d *Durable) AddBatch(b *store.Batch, job uint32, urls []string) (isNew []bool, err error) {
	isNew = make([]bool, len(urls))
	hosts := make([]string, len(urls))
	for i, u := range urls {
		if hosts[i], err = hostOf(u); err != nil {
			return nil, err
		}
	}
	var staged []stagedKey // new keys, pending until b is done
	var key []byte
	for i, u := range urls {
		host := hosts[i]
		part := partition.Of(host)
		s := &d.stripes[part]
		key = store.AppendSeenKey(key[:0], job, host, u)

		s.mu.Lock()
		maybe := d.filter.testAndAdd(d.filter.hash(key))
		if maybe {
			_, pending := s.pending[string(key)]
			seen := pending || s.cached(key)
			if !seen {
				if seen, err = d.db.Has(key); err != nil {
					s.mu.Unlock()
					d.unstage(staged)
					return nil, fmt.Errorf("urlseen: check %s: %w", u, err)
				}
				if seen {
					s.remember(string(key))
				}
			}
			if seen {
				s.mu.Unlock()
				continue
			}
		}
		if err = b.Set(key, seenMarker); err != nil {
			s.mu.Unlock()
			d.unstage(staged)
			return nil, fmt.Errorf("urlseen: add %s: %w", u, err)
		}
		ks := string(key)
		s.pending[ks] = struct{}{}
		s.mu.Unlock()
		if staged == nil {
			// Room for every URL left: when one is new, most are.
			staged = make([]stagedKey, 0, len(urls)-i)
		}
		staged = append(staged, stagedKey{part, ks})
		isNew[i] = true
	}
	if len(staged) > 0 {
		d.n.Add(int64(len(staged)))
		b.OnDone(func(err error) {
			d.unpend(staged)
			if err != nil {
				d.n.Add(-int64(len(staged)))
			}
		})
	}
	return isNew, nil
}

// MaybeSeen reports whether the Bloom filter answers "maybe seen" for url
// (canonical) and job: true for every URL added, and for a share of the
// others (false positives) that AddBatch settles with an exact check.
// Diagnostics and tests use it to show a filter saturated.
func (d *Durable) MaybeSeen(job uint32, url string) bool {
	host, err := hostOf(url)
	if err != nil {
		return false
	}
	return d.filter.test(d.filter.hash(store.SeenKey(job, host, url)))
}

// stagedKey is a seen key written into a batch not yet done, and its
// partition's stripe.
type stagedKey struct {
	part partition.ID
	key  string
}

// unpend forgets staged keys whose batch is done: committed, they are in
// the store; failed or discarded, they were not recorded.
func (d *Durable) unpend(keys []stagedKey) {
	for _, k := range keys {
		s := &d.stripes[k.part]
		s.mu.Lock()
		delete(s.pending, k.key)
		s.mu.Unlock()
	}
}

// unstage undoes an AddBatch call that failed part way. Its keys stay in
// b, which the caller must then discard. (Its filter bits stay set: only a
// cost, a store read for those URLs later.)
func (d *Durable) unstage(keys []stagedKey) { d.unpend(keys) }

// errNoHost is wrapped by hostOf's errors.
var errNoHost = errors.New("not an absolute URL with a host")

// hostOf returns the politeness key of a canonical URL
// (scheme://host[:port]/...): the host, lower case already, without the port
// and any user info. It is urlnorm.HostKey for canonical URLs, without
// parsing the URL.
func hostOf(url string) (string, error) {
	i := strings.Index(url, "://")
	if i < 0 {
		return "", fmt.Errorf("urlseen: %q: %w", url, errNoHost)
	}
	auth := url[i+3:]
	if j := strings.IndexAny(auth, "/?#"); j >= 0 {
		auth = auth[:j]
	}
	if j := strings.LastIndexByte(auth, '@'); j >= 0 {
		auth = auth[j+1:]
	}
	host := auth
	if strings.HasPrefix(auth, "[") {
		if j := strings.IndexByte(auth, ']'); j >= 0 {
			host = auth[:j+1]
		}
	} else if j := strings.LastIndexByte(auth, ':'); j >= 0 {
		host = auth[:j]
	}
	if host == "" || strings.IndexByte(host, 0) >= 0 {
		return "", fmt.Errorf("urlseen: %q: %w", url, errNoHost)
	}
	return host, nil
}
