package robots

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is a settable clock for tests.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func newTestCache(t *testing.T, opts CacheOptions) (*Cache, *fakeClock) {
	t.Helper()
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	opts.Now = clock.Now
	c, err := NewCache(opts)
	if err != nil {
		t.Fatalf("NewCache: %v", err)
	}
	return c, clock
}

var (
	okResult   = FetchResult{Status: 200, Body: []byte("user-agent: *\ndisallow: /private\n")}
	downResult = FetchResult{Status: 503}
	privateURL = &url.URL{Scheme: "https", Host: "h.test", Path: "/private"}
	publicURL  = &url.URL{Scheme: "https", Host: "h.test", Path: "/public"}
)

const origin = "https://h.test:443"

func TestCacheOptionsValidate(t *testing.T) {
	tests := []struct {
		opts CacheOptions
		want []string // field names the error must mention
	}{
		{CacheOptions{}, nil},
		{CacheOptions{TTL: time.Hour, Outage: time.Hour, RetryAfter: time.Second, MaxRetryAfter: time.Second, MaxEntries: 1}, nil},
		{CacheOptions{TTL: 25 * time.Hour}, []string{"TTL"}},
		{CacheOptions{TTL: -1, Outage: -1, RetryAfter: -1, MaxEntries: -1}, []string{"TTL", "Outage", "RetryAfter", "MaxEntries"}},
		{CacheOptions{RetryAfter: 2 * time.Hour}, []string{"MaxRetryAfter"}},
	}
	for _, tt := range tests {
		err := tt.opts.Validate()
		if (err != nil) != (len(tt.want) > 0) {
			t.Errorf("%+v.Validate() = %v, want error naming %q", tt.opts, err, tt.want)
			continue
		}
		for _, f := range tt.want {
			if !strings.Contains(err.Error(), "CacheOptions."+f) {
				t.Errorf("%+v.Validate() = %q, want it to name %s", tt.opts, err, f)
			}
		}
	}
	if _, err := NewCache(CacheOptions{TTL: 48 * time.Hour}); err == nil {
		t.Errorf("NewCache(TTL 48h) = nil error, want one")
	}
}

func TestCacheTTL(t *testing.T) {
	c, clock := newTestCache(t, CacheOptions{})
	if _, ok := c.Lookup(origin); ok {
		t.Fatalf("Lookup on empty cache: ok")
	}
	p := c.Store(origin, okResult)
	if p.Allowed("trawl", privateURL) || !p.Allowed("trawl", publicURL) {
		t.Errorf("Store(200) policy: /private allowed or /public disallowed")
	}
	clock.Advance(24*time.Hour - time.Second)
	if got, ok := c.Lookup(origin); !ok || got != p {
		t.Errorf("Lookup after 24h-1s = %v, %v, want the stored policy", got, ok)
	}
	clock.Advance(time.Second)
	if _, ok := c.Lookup(origin); ok {
		t.Errorf("Lookup after 24h: ok, want expired")
	}
	// 4xx: allow everything, for TTL.
	p = c.Store(origin, FetchResult{Status: 404})
	if !p.Allowed("trawl", privateURL) || p.Unavailable() {
		t.Errorf("Store(404): /private disallowed or unavailable")
	}
	if _, ok := c.Lookup(origin); !ok {
		t.Errorf("Lookup after Store(404): miss")
	}
	// At is honoured: a result fetched 23h ago expires in 1h.
	c.Store("https://old.test:443", FetchResult{Status: 200, At: clock.Now().Add(-23 * time.Hour)})
	clock.Advance(time.Hour)
	if _, ok := c.Lookup("https://old.test:443"); ok {
		t.Errorf("Lookup of a result fetched 24h ago: ok, want expired")
	}
}

func TestCacheOutage(t *testing.T) {
	c, clock := newTestCache(t, CacheOptions{})
	c.Store(origin, okResult)
	clock.Advance(24 * time.Hour)

	// Unreachable: disallow all, retry after 1m, 2m, 4m ... capped at 1h.
	wantRetry := []time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute,
		16 * time.Minute, 32 * time.Minute, time.Hour, time.Hour}
	for i, retry := range wantRetry {
		p := c.Store(origin, downResult)
		if !p.Unavailable() || p.Allowed("trawl", publicURL) {
			t.Fatalf("failure %d: policy available or /public allowed", i+1)
		}
		clock.Advance(retry - time.Second)
		if got, ok := c.Lookup(origin); !ok || !got.Unavailable() {
			t.Errorf("failure %d: Lookup %s later = %v, %v, want the unavailable policy", i+1, retry-time.Second, got, ok)
		}
		clock.Advance(time.Second)
		if _, ok := c.Lookup(origin); ok {
			t.Errorf("failure %d: Lookup %s later: ok, want a retry", i+1, retry)
		}
	}

	// Still down after 30 days: the last good copy applies again.
	clock.Advance(30 * 24 * time.Hour)
	p := c.Store(origin, FetchResult{Err: errors.New("dial tcp: connection refused")})
	if p.Unavailable() || p.Allowed("trawl", privateURL) || !p.Allowed("trawl", publicURL) {
		t.Errorf("after 30 days down: want the cached copy (private disallowed, public allowed)")
	}
	clock.Advance(24*time.Hour - time.Second)
	if _, ok := c.Lookup(origin); !ok {
		t.Errorf("fallback policy expired before TTL")
	}

	// Back up: a new copy replaces it and the outage is over.
	p = c.Store(origin, FetchResult{Status: 200, Body: []byte("user-agent: *\ndisallow: /\n")})
	if p.Allowed("trawl", publicURL) {
		t.Errorf("after recovery: /public allowed, want the new file's disallow")
	}
	p = c.Store(origin, downResult)
	if !p.Unavailable() {
		t.Errorf("new outage right after recovery: want unavailable")
	}
}

func TestCacheOutageWithoutCopy(t *testing.T) {
	c, clock := newTestCache(t, CacheOptions{Outage: 48 * time.Hour})
	if p := c.Store(origin, downResult); !p.Unavailable() {
		t.Fatalf("first failure: want unavailable")
	}
	clock.Advance(47 * time.Hour)
	if p := c.Store(origin, FetchResult{Status: 429}); !p.Unavailable() {
		t.Errorf("47h down: want unavailable")
	}
	clock.Advance(time.Hour)
	if p := c.Store(origin, downResult); p.Unavailable() || !p.Allowed("trawl", privateURL) {
		t.Errorf("48h down with no copy: want no restrictions")
	}
}

func TestCacheEviction(t *testing.T) {
	c, _ := newTestCache(t, CacheOptions{MaxEntries: 3})
	for i := range 5 {
		c.Store(fmt.Sprintf("https://h%d.test:443", i), okResult)
	}
	if c.Len() != 3 {
		t.Errorf("Len() = %d, want 3", c.Len())
	}
	for i := range 5 {
		_, ok := c.Lookup(fmt.Sprintf("https://h%d.test:443", i))
		if want := i >= 2; ok != want {
			t.Errorf("Lookup(h%d) ok = %v, want %v", i, ok, want)
		}
	}
	// Storing again refreshes an origin's place.
	c.Store("https://h2.test:443", okResult)
	c.Store("https://h5.test:443", okResult)
	if _, ok := c.Lookup("https://h2.test:443"); !ok {
		t.Errorf("h2 evicted after being stored again")
	}
	if _, ok := c.Lookup("https://h3.test:443"); ok {
		t.Errorf("h3 kept, want it evicted as the oldest")
	}
}

func TestCacheConcurrent(t *testing.T) {
	c, clock := newTestCache(t, CacheOptions{MaxEntries: 50})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				o := fmt.Sprintf("https://h%d.test:443", (g*7+i)%80)
				if i%3 == 0 {
					c.Store(o, downResult)
				} else {
					c.Store(o, okResult)
				}
				if p, ok := c.Lookup(o); ok {
					p.Allowed("trawl", publicURL)
				}
				clock.Advance(time.Second)
			}
		}()
	}
	wg.Wait()
	if c.Len() > 50 {
		t.Errorf("Len() = %d, want <= 50", c.Len())
	}
}
