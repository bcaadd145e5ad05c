package robots

import (
	"container/list"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Defaults of CacheOptions beyond those it shares with KeeperOptions.
const (
	DefaultRetryAfter    = DefaultRetryBase
	DefaultMaxRetryAfter = DefaultRetryMax
)

// CacheOptions configures a Cache. Zero fields take the defaults above.
//
// Deprecated: use Keeper and KeeperOptions. Cache is the in-memory half
// of the robots.txt handling that Keeper owns whole; it stays until its
// last caller (crawl) is gone.
type CacheOptions struct {
	// TTL is how long a fetched robots.txt (2xx or 4xx) is used before
	// Lookup asks for a refetch. Zero means DefaultTTL; more than MaxTTL is
	// an error.
	TTL time.Duration
	// Outage is how long robots.txt may stay unreachable before the cache
	// falls back on the last good copy, or on no restrictions if there is
	// none (RFC 9309 2.3.1.4). Until then everything is disallowed. Zero
	// means DefaultOutage.
	Outage time.Duration
	// RetryAfter is how long an unreachable result is kept before Lookup
	// asks for a refetch. It doubles with each consecutive failure, up to
	// MaxRetryAfter. Zero means DefaultRetryAfter.
	RetryAfter time.Duration
	// MaxRetryAfter caps the doubling of RetryAfter. Zero means
	// DefaultMaxRetryAfter.
	MaxRetryAfter time.Duration
	// MaxEntries bounds the number of origins kept; storing one more evicts
	// the origin stored least recently (its outage history goes with it).
	// Zero means DefaultMaxEntries.
	MaxEntries int
	// Now is the clock. Nil means time.Now.
	Now func() time.Time
}

// withDefaults returns o with zero fields filled in.
func (o CacheOptions) withDefaults() CacheOptions {
	if o.TTL == 0 {
		o.TTL = DefaultTTL
	}
	if o.Outage == 0 {
		o.Outage = DefaultOutage
	}
	if o.RetryAfter == 0 {
		o.RetryAfter = DefaultRetryAfter
	}
	if o.MaxRetryAfter == 0 {
		o.MaxRetryAfter = DefaultMaxRetryAfter
	}
	if o.MaxEntries == 0 {
		o.MaxEntries = DefaultMaxEntries
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Validate reports every bad field of o, after defaults are applied.
func (o CacheOptions) Validate() error {
	o = o.withDefaults()
	var errs []error
	bad := func(field string, format string, args ...any) {
		errs = append(errs, fmt.Errorf("robots: CacheOptions.%s: %s", field, fmt.Sprintf(format, args...)))
	}
	if o.TTL < 0 || o.TTL > MaxTTL {
		bad("TTL", "%s not in (0, %s]", o.TTL, MaxTTL)
	}
	if o.Outage < 0 {
		bad("Outage", "%s is negative", o.Outage)
	}
	if o.RetryAfter < 0 {
		bad("RetryAfter", "%s is negative", o.RetryAfter)
	}
	if o.MaxRetryAfter < 0 {
		bad("MaxRetryAfter", "%s is negative", o.MaxRetryAfter)
	} else if o.MaxRetryAfter < o.RetryAfter {
		bad("MaxRetryAfter", "%s is less than RetryAfter %s", o.MaxRetryAfter, o.RetryAfter)
	}
	if o.MaxEntries < 0 {
		bad("MaxEntries", "%d is negative", o.MaxEntries)
	}
	return errors.Join(errs...)
}

// Cache keeps the robots.txt policy of each origin ("scheme://host:port"),
// applies the RFC 9309 status, expiry and outage rules, and says when a
// policy must be fetched again. It is safe for concurrent use and holds at
// most MaxEntries origins.
//
// Deprecated: use Keeper, which also keeps the state in the store.
type Cache struct {
	opts CacheOptions

	mu      sync.Mutex
	entries map[string]*list.Element // origin -> element holding *entry
	order   *list.List               // front: stored least recently
}

// entry is the state of one origin.
type entry struct {
	origin      string
	policy      *Policy   // what Lookup returns
	expires     time.Time // Lookup misses from this instant on
	good        *Policy   // last policy from a 2xx or 4xx fetch, or nil
	failures    int       // consecutive unreachable fetches
	outageSince time.Time // At of the first of those failures
}

// NewCache returns an empty cache, or the errors of opts.Validate.
func NewCache(opts CacheOptions) (*Cache, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return &Cache{
		opts:    opts.withDefaults(),
		entries: map[string]*list.Element{},
		order:   list.New(),
	}, nil
}

// Store records a fetch of origin's robots.txt and returns the policy that
// now applies. A 2xx or 4xx result is used for TTL. An unreachable result
// disallows everything and expires after RetryAfter, doubling per
// consecutive failure; once the outage has lasted Outage or longer, the last
// good copy is used again (or no restrictions without one) and is refetched
// every TTL. r.At is the time of the fetch; zero means the cache's clock.
func (c *Cache) Store(origin string, r FetchResult) *Policy {
	if r.At.IsZero() {
		r.At = c.opts.Now()
	}
	p := FromResult(r)
	at := r.At

	c.mu.Lock()
	defer c.mu.Unlock()
	var e *entry
	if el, ok := c.entries[origin]; ok {
		e = el.Value.(*entry)
		c.order.MoveToBack(el)
	} else {
		e = &entry{origin: origin}
		c.entries[origin] = c.order.PushBack(e)
		for c.order.Len() > c.opts.MaxEntries {
			old := c.order.Remove(c.order.Front()).(*entry)
			delete(c.entries, old.origin)
		}
	}

	if !p.Unavailable() {
		e.policy, e.good = p, p
		e.failures, e.outageSince = 0, time.Time{}
		e.expires = at.Add(c.opts.TTL)
		return p
	}
	if e.failures == 0 {
		e.outageSince = at
	}
	e.failures++
	if at.Sub(e.outageSince) >= c.opts.Outage {
		if e.good != nil {
			e.policy = e.good
		} else {
			e.policy = allowAll(at)
		}
		e.expires = at.Add(c.opts.TTL)
		return e.policy
	}
	e.policy = p
	e.expires = at.Add(c.retryAfter(e.failures))
	return p
}

// retryAfter is the wait after the n-th consecutive failure, n >= 1.
func (c *Cache) retryAfter(n int) time.Duration {
	d := c.opts.RetryAfter
	for i := 1; i < n && d < c.opts.MaxRetryAfter; i++ {
		d *= 2
	}
	return min(d, c.opts.MaxRetryAfter)
}

// Lookup returns origin's current policy. ok is false when the origin is
// unknown or its policy has expired: the caller must fetch robots.txt again
// and Store the result before fetching anything else from the origin.
func (c *Cache) Lookup(origin string) (p *Policy, ok bool) {
	now := c.opts.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	el, found := c.entries[origin]
	if !found {
		return nil, false
	}
	e := el.Value.(*entry)
	if !now.Before(e.expires) {
		return nil, false
	}
	return e.policy, true
}

// Len returns the number of origins held, expired ones included.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
