package robotscache

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/trawl-crawler/trawl/internal/store"
	"github.com/trawl-crawler/trawl/robots"
)

// clock is a fake clock for the keeper.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

const (
	kHost   = "h.test"
	kOrigin = "https://h.test:443"
	kAgent  = "trawl"
)

var kBody = []byte("User-agent: *\nDisallow: /private\nCrawl-delay: 3\n")

func memDB(t *testing.T) *store.DB {
	t.Helper()
	db, err := store.Open("state", store.Options{FS: vfs.NewMem(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatalf("store.Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func newKeeper(t *testing.T, db *store.DB, c *clock, opts KeeperOptions) *Keeper {
	t.Helper()
	opts.DB, opts.Now = db, c.Now
	k, err := NewKeeper(opts)
	if err != nil {
		t.Fatalf("NewKeeper: %v", err)
	}
	return k
}

// fetch runs one robots.txt request through k as a caller does: Check
// must say Fetch (of wantURL, if not empty); Begin; Done with ans at the
// clock's time; the batch is committed.
func fetch(t *testing.T, k *Keeper, ans Answer, wantURL string) Result {
	t.Helper()
	v := k.Check(kHost, kOrigin)
	if v.Action != Fetch {
		t.Fatalf("Check = %+v, want Fetch", v)
	}
	if wantURL != "" && v.URL.String() != wantURL {
		t.Fatalf("Check URL = %q, want %q", v.URL, wantURL)
	}
	if err := k.Begin(kHost, kOrigin); err != nil {
		t.Fatalf("Begin: %v", err)
	}
	b := k.opts.DB.NewBatch()
	res, err := k.Done(b, kHost, kOrigin, ans)
	if err != nil {
		t.Fatalf("Done: %v", err)
	}
	if err := k.opts.DB.Commit(b); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	return res
}

func allowed(p *robots.Policy, path string) bool {
	return p.Allowed(kAgent, &url.URL{Scheme: "https", Host: kHost, Path: path})
}

func stored(t *testing.T, db *store.DB) record {
	t.Helper()
	v, err := db.Get(store.RobotsKey(kHost, kOrigin))
	if err != nil {
		t.Fatalf("Get record: %v", err)
	}
	r, err := decodeRecord(v)
	if err != nil {
		t.Fatalf("decodeRecord: %v", err)
	}
	return r
}

// TestKeeperStatus: RFC 9309 2.3.1, the answer's status to a policy.
func TestKeeperStatus(t *testing.T) {
	tests := []struct {
		name        string
		ans         Answer
		unavailable bool // Wait until the first retry
		private     bool // /private allowed
	}{
		{"200 parses", Answer{Status: 200, Body: kBody}, false, false},
		{"204 empty file", Answer{Status: 204}, false, true},
		{"404 allows all (2.3.1.3)", Answer{Status: 404, Body: kBody}, false, true},
		{"401 allows all (2.3.1.3)", Answer{Status: 401}, false, true},
		{"403 allows all (2.3.1.3)", Answer{Status: 403}, false, true},
		{"410 allows all (2.3.1.3)", Answer{Status: 410}, false, true},
		{"301 without Location allows all (2.3.1.2)", Answer{Status: 301}, false, true},
		{"302 to ftp allows all (2.3.1.2)", Answer{Status: 302, Location: "ftp://h.test/robots.txt"}, false, true},
		{"301 to a URL longer than a stored hop allows all", Answer{Status: 301, Location: "/" + strings.Repeat("x", maxHopURL)}, false, true},
		{"429 unreachable (2.3.1.4)", Answer{Status: 429}, true, false},
		{"500 unreachable (2.3.1.4)", Answer{Status: 500, Body: kBody}, true, false},
		{"503 unreachable (2.3.1.4)", Answer{Status: 503}, true, false},
		{"network error unreachable (2.3.1.4)", Answer{Err: errors.New("connection refused")}, true, false},
		{"body cut off unreachable", Answer{Status: 200, Body: kBody, Err: errors.New("body cut off")}, true, false},
		{"1xx unreachable", Answer{Status: 100}, true, false},
		{"no status unreachable", Answer{}, true, false},
		{"6xx unreachable", Answer{Status: 600}, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClock()
			k := newKeeper(t, memDB(t), c, KeeperOptions{})
			res := fetch(t, k, tt.ans, kOrigin+"/robots.txt")
			if res.Unavailable != tt.unavailable || res.Redirect {
				t.Fatalf("Done(%+v) = %+v, want Unavailable %v", tt.ans, res, tt.unavailable)
			}
			v := k.Check(kHost, kOrigin)
			if tt.unavailable {
				if res.Policy != nil || v.Action != Wait || !v.Until.Equal(c.Now().Add(DefaultRetryBase)) || v.Attempts != 1 || !v.OutageSince.Equal(c.Now()) {
					t.Errorf("after %+v: Done policy %v, Check = %+v; want Wait until now+%s, 1 attempt, outage since now", tt.ans, res.Policy, v, DefaultRetryBase)
				}
				return
			}
			if v.Action != Apply || v.Policy != res.Policy || v.Attempts != 0 || !v.OutageSince.IsZero() {
				t.Fatalf("after %+v: Check = %+v, want Apply of Done's policy", tt.ans, v)
			}
			if got := allowed(v.Policy, "/private/x"); got != tt.private {
				t.Errorf("after %+v: Allowed(/private/x) = %v, want %v", tt.ans, got, tt.private)
			}
			if !allowed(v.Policy, "/public") {
				t.Errorf("after %+v: Allowed(/public) = false", tt.ans)
			}
		})
	}
}

// TestKeeperCrawlDelay: the policy carries the Crawl-delay to feed the
// frontier.
func TestKeeperCrawlDelay(t *testing.T) {
	k := newKeeper(t, memDB(t), newClock(), KeeperOptions{})
	res := fetch(t, k, Answer{Status: 200, Body: kBody}, "")
	if d, ok := res.Policy.CrawlDelay(kAgent); !ok || d != 3*time.Second {
		t.Errorf("CrawlDelay = %v, %v; want 3s", d, ok)
	}
}

// TestKeeperBackoff: each consecutive unreachable answer doubles the wait,
// from RetryBase up to RetryMax; the URLs wait, none is dropped.
func TestKeeperBackoff(t *testing.T) {
	for _, tt := range []struct {
		base, max time.Duration
		want      []time.Duration
	}{
		{0, 0, []time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute, 16 * time.Minute, 32 * time.Minute, time.Hour, time.Hour, time.Hour}},
		{10 * time.Second, 45 * time.Second, []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, 45 * time.Second, 45 * time.Second}},
		{time.Minute, time.Minute, []time.Duration{time.Minute, time.Minute}},
	} {
		c := newClock()
		k := newKeeper(t, memDB(t), c, KeeperOptions{RetryBase: tt.base, RetryMax: tt.max})
		start := c.Now()
		for i, want := range tt.want {
			res := fetch(t, k, Answer{Status: 503}, "")
			if got := res.RetryAt.Sub(c.Now()); !res.Unavailable || got != want || res.Attempts != i+1 || !res.OutageSince.Equal(start) {
				t.Fatalf("base %s max %s: failure %d: Done = %+v (wait %s), want wait %s, attempts %d, outage since %v", tt.base, tt.max, i+1, res, got, want, i+1, start)
			}
			c.Advance(want - time.Nanosecond)
			if v := k.Check(kHost, kOrigin); v.Action != Wait || !v.Until.Equal(res.RetryAt) {
				t.Fatalf("failure %d: Check just before RetryAt = %+v, want Wait until %v", i+1, v, res.RetryAt)
			}
			c.Advance(time.Nanosecond)
		}
		// One good answer ends the outage.
		res := fetch(t, k, Answer{Status: 200, Body: kBody}, "")
		if res.Unavailable || res.Attempts != 0 || !res.OutageSince.IsZero() || res.Policy == nil {
			t.Errorf("good answer after failures: Done = %+v, want a policy and no outage", res)
		}
	}
}

// TestKeeperTTL: a good answer applies for TTL from its fetch time, then
// is fetched again (RFC 9309 2.4).
func TestKeeperTTL(t *testing.T) {
	for _, ttl := range []time.Duration{0, time.Hour} {
		want := ttl
		if want == 0 {
			want = DefaultTTL
		}
		c := newClock()
		k := newKeeper(t, memDB(t), c, KeeperOptions{TTL: ttl})
		fetch(t, k, Answer{Status: 200, Body: kBody, At: c.Now().Add(-time.Minute)}, "")
		c.Advance(want - time.Minute - time.Nanosecond)
		if v := k.Check(kHost, kOrigin); v.Action != Apply {
			t.Fatalf("TTL %s: Check just before expiry = %+v, want Apply", want, v)
		}
		c.Advance(time.Nanosecond)
		res := fetch(t, k, Answer{Status: 200, Body: []byte("User-agent: *\nDisallow: /other\n")}, kOrigin+"/robots.txt")
		if allowed(res.Policy, "/other") || !allowed(res.Policy, "/private") {
			t.Errorf("TTL %s: refetched policy not applied", want)
		}
	}
}

// TestKeeperOutage: RFC 9309 2.3.1.4. Unreachable for less than Outage:
// nothing may be fetched. From Outage on: the last good copy (or no
// restrictions without one), refetched every TTL; kept across a restart.
func TestKeeperOutage(t *testing.T) {
	for _, tt := range []struct {
		name     string
		copy     bool
		private  bool // /private allowed by the fallback
		restarts bool
	}{
		{"with a good copy", true, false, false},
		{"without a copy", false, true, false},
		{"with a good copy, restarted", true, false, true},
		{"without a copy, restarted", false, true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := newClock()
			db := memDB(t)
			opts := KeeperOptions{Outage: 30 * 24 * time.Hour}
			k := newKeeper(t, db, c, opts)
			if tt.copy {
				fetch(t, k, Answer{Status: 200, Body: kBody}, "")
				c.Advance(DefaultTTL)
			}
			start := c.Now()
			var res Result
			for c.Now().Sub(start) < opts.Outage {
				res = fetch(t, k, Answer{Status: 500}, "")
				if res.Policy != nil {
					t.Fatalf("outage of %s: Done = %+v, want no policy before %s", c.Now().Sub(start), res, opts.Outage)
				}
				c.Set(res.RetryAt)
			}
			if tt.restarts {
				k = newKeeper(t, db, c, opts)
			}
			res = fetch(t, k, Answer{Err: io.ErrUnexpectedEOF}, "")
			if res.Policy == nil || !res.Unavailable || !res.OutageSince.Equal(start) || !res.RetryAt.Equal(c.Now().Add(DefaultTTL)) {
				t.Fatalf("after %s unreachable: Done = %+v, want the fallback policy until now+TTL", c.Now().Sub(start), res)
			}
			if got := allowed(res.Policy, "/private"); got != tt.private {
				t.Errorf("fallback Allowed(/private) = %v, want %v", got, tt.private)
			}
			c.Advance(DefaultTTL - time.Nanosecond)
			if tt.restarts {
				k = newKeeper(t, db, c, opts)
			}
			v := k.Check(kHost, kOrigin)
			if v.Action != Apply || allowed(v.Policy, "/private") != tt.private || !v.OutageSince.Equal(start) {
				t.Fatalf("during fallback: Check = %+v, want Apply of the fallback, outage since %v", v, start)
			}
			if tt.restarts && !v.Loaded {
				t.Errorf("fallback after a restart: Loaded = false")
			}
			c.Advance(time.Nanosecond)
			// Still unreachable: the fallback again for TTL.
			if res := fetch(t, k, Answer{Status: 503}, ""); res.Policy == nil || allowed(res.Policy, "/private") != tt.private {
				t.Fatalf("refetch in fallback: Done = %+v, want the fallback again", res)
			}
			c.Advance(DefaultTTL)
			// Back: the outage ends.
			res = fetch(t, k, Answer{Status: 200, Body: []byte("User-agent: *\nDisallow: /new\n")}, "")
			if res.Unavailable || !res.OutageSince.IsZero() || res.Attempts != 0 || allowed(res.Policy, "/new") {
				t.Errorf("back after the outage: Done = %+v", res)
			}
		})
	}
}

// TestKeeperRestart: a new keeper on the same store uses a copy for the
// rest of its TTL without fetching, and keeps counting failures.
func TestKeeperRestart(t *testing.T) {
	c := newClock()
	db := memDB(t)
	k := newKeeper(t, db, c, KeeperOptions{})
	fetch(t, k, Answer{Status: 200, Body: kBody}, "")

	c.Advance(23 * time.Hour)
	k = newKeeper(t, db, c, KeeperOptions{})
	v := k.Check(kHost, kOrigin)
	if v.Action != Apply || !v.Loaded || allowed(v.Policy, "/private") {
		t.Fatalf("restart within TTL: Check = %+v, want Apply of the stored copy, Loaded", v)
	}
	if d, ok := v.Policy.CrawlDelay(kAgent); !ok || d != 3*time.Second {
		t.Errorf("restart within TTL: CrawlDelay = %v, %v, want 3s", d, ok)
	}
	if v := k.Check(kHost, kOrigin); v.Action != Apply || v.Loaded {
		t.Errorf("second Check = %+v, want Apply, not Loaded", v)
	}

	c.Advance(time.Hour)
	k = newKeeper(t, db, c, KeeperOptions{})
	if v := k.Check(kHost, kOrigin); v.Action != Fetch {
		t.Fatalf("restart after TTL: Check = %+v, want Fetch", v)
	}
	k.Cancel(kHost, kOrigin)

	// Failures: attempts, outage start and the retry time survive.
	start := c.Now()
	fetch(t, k, Answer{Status: 503}, "")
	c.Advance(time.Minute)
	res := fetch(t, k, Answer{Status: 503}, "")
	k = newKeeper(t, db, c, KeeperOptions{})
	v = k.Check(kHost, kOrigin)
	if v.Action != Wait || !v.Until.Equal(res.RetryAt) || v.Attempts != 2 || !v.OutageSince.Equal(start) {
		t.Fatalf("restart in an outage: Check = %+v, want Wait until %v, 2 attempts, outage since %v", v, res.RetryAt, start)
	}
	c.Set(res.RetryAt)
	res = fetch(t, k, Answer{Status: 503}, "")
	if res.Attempts != 3 || !res.OutageSince.Equal(start) || res.RetryAt.Sub(c.Now()) != 4*time.Minute {
		t.Errorf("third failure after a restart: Done = %+v, want 3 attempts, outage since %v, 4m wait", res, start)
	}
	// The copy is still in the record, for the outage rule.
	if r := stored(t, db); r.copy == nil || string(r.copy.body) != string(kBody) {
		t.Errorf("record after failures = %+v, want the good copy kept", r)
	}
}

// TestKeeperLostAnswer: a request recorded by Begin whose answer is never
// recorded (a crash) makes the next run wait LostAnswerWait from the
// request before contacting the origin.
func TestKeeperLostAnswer(t *testing.T) {
	for _, tt := range []struct {
		name    string
		wait    time.Duration
		crashAt string // "begin": after Begin; "done": after Done, before the batch commits
	}{
		{"crash after Begin", 0, "begin"},
		{"crash before the answer's batch commits", 0, "done"},
		{"LostAnswerWait set", 10 * time.Second, "begin"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := newClock()
			db := memDB(t)
			opts := KeeperOptions{LostAnswerWait: tt.wait}
			wait := tt.wait
			if wait == 0 {
				wait = robots.MaxCrawlDelay
			}
			k := newKeeper(t, db, c, opts)
			// An outage with a good copy first, so that the record carries
			// all of its fields.
			fetch(t, k, Answer{Status: 200, Body: kBody}, "")
			c.Advance(DefaultTTL)
			start := c.Now()
			fetch(t, k, Answer{Status: 503}, "")
			c.Advance(time.Minute)

			sent := c.Now()
			if v := k.Check(kHost, kOrigin); v.Action != Fetch {
				t.Fatalf("Check = %+v, want Fetch", v)
			}
			if err := k.Begin(kHost, kOrigin); err != nil {
				t.Fatal(err)
			}
			if r := stored(t, db); !r.pending || !r.at.Equal(sent) || r.attempts != 1 || !r.outageSince.Equal(start) || r.copy == nil {
				t.Fatalf("record after Begin = %+v, want pending at %v, 1 attempt, the outage and the copy", r, sent)
			}
			if tt.crashAt == "done" {
				b := db.NewBatch()
				if _, err := k.Done(b, kHost, kOrigin, Answer{Status: 200, Body: kBody}); err != nil {
					t.Fatal(err)
				}
				b.Close() // the crash loses it
			}

			c.Advance(time.Second)
			k = newKeeper(t, db, c, opts) // the next run
			v := k.Check(kHost, kOrigin)
			if v.Action != Wait || !v.Until.Equal(sent.Add(wait)) || v.Attempts != 1 || !v.OutageSince.Equal(start) {
				t.Fatalf("after the crash: Check = %+v, want Wait until %v (request + %s), 1 attempt", v, sent.Add(wait), wait)
			}
			c.Set(sent.Add(wait))
			res := fetch(t, k, Answer{Status: 503}, kOrigin+"/robots.txt")
			if res.Attempts != 2 || !res.OutageSince.Equal(start) {
				t.Errorf("after the wait: Done = %+v, want attempt 2 of the outage since %v", res, start)
			}
			if r := stored(t, db); r.pending || r.copy == nil {
				t.Errorf("record after the answer = %+v, want settled with the copy", r)
			}
		})
	}
}

// TestKeeperCancel: a claim given up before Begin lets the next caller
// fetch at once; after Begin the answer may have been lost.
func TestKeeperCancel(t *testing.T) {
	c := newClock()
	k := newKeeper(t, memDB(t), c, KeeperOptions{})
	if v := k.Check(kHost, kOrigin); v.Action != Fetch {
		t.Fatalf("Check = %+v, want Fetch", v)
	}
	k.Cancel(kHost, kOrigin)
	if v := k.Check(kHost, kOrigin); v.Action != Fetch {
		t.Fatalf("Check after Cancel before Begin = %+v, want Fetch", v)
	}
	if err := k.Begin(kHost, kOrigin); err != nil {
		t.Fatal(err)
	}
	k.Cancel(kHost, kOrigin)
	if v := k.Check(kHost, kOrigin); v.Action != Wait || !v.Until.Equal(c.Now().Add(robots.MaxCrawlDelay)) {
		t.Fatalf("Check after Cancel after Begin = %+v, want Wait until now+%s", v, robots.MaxCrawlDelay)
	}
	if err := k.Begin(kHost, kOrigin); err == nil {
		t.Error("Begin without a claim = nil error")
	}
}

// TestKeeperClaimTimeout: a claim neither done nor cancelled expires.
func TestKeeperClaimTimeout(t *testing.T) {
	c := newClock()
	k := newKeeper(t, memDB(t), c, KeeperOptions{ClaimTimeout: time.Minute})
	k.Check(kHost, kOrigin)
	c.Advance(time.Minute - time.Nanosecond)
	if v := k.Check(kHost, kOrigin); v.Action != Wait {
		t.Fatalf("Check within the claim = %+v, want Wait", v)
	}
	c.Advance(time.Nanosecond)
	if v := k.Check(kHost, kOrigin); v.Action != Fetch {
		t.Fatalf("Check after the claim timed out = %+v, want Fetch", v)
	}
}

// TestKeeperRedirects: RFC 9309 2.3.1.2, up to robots.MaxRedirects hops followed
// (relative Locations resolved against the hop), each in its own Check;
// one more means unavailable, no restrictions. Progress is stored: a
// restart mid-chain goes on with the next hop, unless the chain is older
// than TTL.
func TestKeeperRedirects(t *testing.T) {
	c := newClock()
	db := memDB(t)
	k := newKeeper(t, db, c, KeeperOptions{})
	hops := []struct{ location, want string }{
		{"/a/robots.txt", "https://h.test:443/a/robots.txt"},
		{"b.txt", "https://h.test:443/a/b.txt"},
		{"http://other.test/r.txt#frag", "http://other.test/r.txt"},
		{"//third.test/x?y", "http://third.test/x?y"},
		{" https://h.test/final ", "https://h.test/final"},
	}
	hopURL := kOrigin + "/robots.txt"
	for i, h := range hops {
		res := fetch(t, k, Answer{Status: 301, Location: h.location}, hopURL)
		if !res.Redirect || res.URL.String() != h.want || res.Policy != nil {
			t.Fatalf("hop %d: Done(301 %q) = %+v, want Redirect to %q", i+1, h.location, res, h.want)
		}
		hopURL = h.want
	}
	// The chain so far survives a restart: the next run asks for the hop,
	// not /robots.txt again (a crawler that forgot the answers would).
	if r := stored(t, db); r.pending || r.hops != robots.MaxRedirects || r.next != hopURL || !r.hopAt.Equal(c.Now()) {
		t.Errorf("record after %d redirects = %+v, want the hop to %s, not pending", robots.MaxRedirects, r, hopURL)
	}
	k2 := newKeeper(t, db, c, KeeperOptions{})
	if v := k2.Check(kHost, kOrigin); v.Action != Fetch || v.URL.String() != hopURL {
		t.Errorf("restart mid-chain: Check = %+v, want Fetch of the hop %s", v, hopURL)
	}
	k2.Cancel(kHost, kOrigin)
	later := newClock()
	later.Set(c.Now().Add(DefaultTTL))
	if v := newKeeper(t, db, later, KeeperOptions{}).Check(kHost, kOrigin); v.Action != Fetch || v.URL.String() != kOrigin+"/robots.txt" {
		t.Errorf("restart TTL after the chain's last hop: Check = %+v, want Fetch of /robots.txt", v)
	}
	// The sixth redirect: unavailable, no restrictions, for TTL.
	res := fetch(t, k, Answer{Status: 302, Location: "/again"}, hopURL)
	if res.Redirect || res.Unavailable || res.Policy == nil || !allowed(res.Policy, "/private") {
		t.Fatalf("redirect %d: Done = %+v, want allow-all settled", robots.MaxRedirects+1, res)
	}
	if v := k.Check(kHost, kOrigin); v.Action != Apply {
		t.Errorf("after the chain: Check = %+v, want Apply", v)
	}
	c.Advance(DefaultTTL)
	// A chain that ends in a file: its rules apply to the origin.
	fetch(t, k, Answer{Status: 307, Location: "https://cdn.test/robots.txt"}, kOrigin+"/robots.txt")
	res = fetch(t, k, Answer{Status: 200, Body: kBody}, "https://cdn.test/robots.txt")
	if res.Policy == nil || allowed(res.Policy, "/private") {
		t.Errorf("chain ending in a file: Done = %+v, want its rules", res)
	}
	if v := k.Check(kHost, kOrigin); v.Action != Apply || allowed(v.Policy, "/private") {
		t.Errorf("after the chain: Check = %+v, want Apply of the file's rules", v)
	}
}

// TestKeeperConcurrentCheck: while one caller fetches an origin's
// robots.txt, every other Check of it waits (Until = now); other origins
// are not held up.
func TestKeeperConcurrentCheck(t *testing.T) {
	c := newClock()
	db := memDB(t)
	k := newKeeper(t, db, c, KeeperOptions{})
	if v := k.Check(kHost, kOrigin); v.Action != Fetch {
		t.Fatalf("Check = %+v, want Fetch", v)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for i := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if v := k.Check(kHost, kOrigin); v.Action != Wait || !v.Until.Equal(c.Now()) {
				errs <- fmt.Sprintf("Check during the fetch = %+v, want Wait until now", v)
			}
			other := fmt.Sprintf("https://o%d.test:443", i)
			if v := k.Check(fmt.Sprintf("o%d.test", i), other); v.Action != Fetch || v.URL.String() != other+"/robots.txt" {
				errs <- fmt.Sprintf("Check of %s = %+v, want Fetch", other, v)
			}
		}()
	}
	if err := k.Begin(kHost, kOrigin); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	b := db.NewBatch()
	defer b.Close()
	if _, err := k.Done(b, kHost, kOrigin, Answer{Status: 200, Body: kBody}); err != nil {
		t.Fatal(err)
	}
	if v := k.Check(kHost, kOrigin); v.Action != Apply {
		t.Errorf("Check after Done = %+v, want Apply", v)
	}
}

// TestKeeperConcurrentUse runs many callers over a few origins with the
// race detector: at most one Fetch per origin at a time.
func TestKeeperConcurrentUse(t *testing.T) {
	c := newClock()
	db := memDB(t)
	// The clock jumps an hour now and then (so that answers expire); claims
	// must not time out meanwhile.
	k := newKeeper(t, db, c, KeeperOptions{MaxEntries: 3, ClaimTimeout: 1000 * time.Hour})
	var (
		mu       sync.Mutex
		fetching = map[string]bool{}
		wg       sync.WaitGroup
	)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				n := (w + i) % 5
				host, origin := fmt.Sprintf("o%d.test", n), fmt.Sprintf("https://o%d.test:443", n)
				if v := k.Check(host, origin); v.Action == Fetch {
					mu.Lock()
					if fetching[origin] {
						t.Errorf("two Fetch verdicts for %s at once", origin)
					}
					fetching[origin] = true
					mu.Unlock()
					if err := k.Begin(host, origin); err != nil {
						t.Error(err)
					}
					b := db.NewBatch()
					ans := Answer{Status: 503}
					if i%3 == 0 {
						ans = Answer{Status: 200, Body: kBody}
					}
					mu.Lock()
					fetching[origin] = false
					mu.Unlock()
					if _, err := k.Done(b, host, origin, ans); err != nil {
						t.Error(err)
					}
					if err := db.Commit(b); err != nil {
						t.Error(err)
					}
				}
				if i%50 == 0 {
					c.Advance(time.Hour)
				}
			}
		}()
	}
	wg.Wait()
	if n := k.Len(); n > 3 {
		t.Errorf("Len = %d, want at most MaxEntries 3 (no fetch in progress)", n)
	}
}

// TestKeeperEviction: MaxEntries bounds memory; an origin dropped from it
// is read back from the store; one with a fetch in progress is kept.
func TestKeeperEviction(t *testing.T) {
	c := newClock()
	db := memDB(t)
	k := newKeeper(t, db, c, KeeperOptions{MaxEntries: 2})
	fetch(t, k, Answer{Status: 200, Body: kBody}, "")
	if v := k.Check("a.test", "https://a.test:443"); v.Action != Fetch { // claimed: kept
		t.Fatalf("Check a = %+v", v)
	}
	k.Check("b.test", "https://b.test:443")
	k.Cancel("b.test", "https://b.test:443")
	k.Check("c.test", "https://c.test:443")
	k.Cancel("c.test", "https://c.test:443")
	if n := k.Len(); n != 2 {
		t.Errorf("Len = %d, want 2", n)
	}
	if v := k.Check("a.test", "https://a.test:443"); v.Action != Wait {
		t.Errorf("Check a (fetch in progress) = %+v, want Wait: its claim was dropped", v)
	}
	v := k.Check(kHost, kOrigin)
	if v.Action != Apply || !v.Loaded || allowed(v.Policy, "/private") {
		t.Errorf("Check of an evicted origin = %+v, want Apply of the stored copy, Loaded", v)
	}
}

// TestKeeperStats: Check's verdicts counted as hits (Apply), misses
// (Fetch) and neither (Wait), and its reads of the store as loads.
func TestKeeperStats(t *testing.T) {
	c := newClock()
	db := memDB(t)
	k := newKeeper(t, db, c, KeeperOptions{TTL: time.Hour})
	const aHost, aOrigin = "a.test", "https://a.test:443"
	for _, step := range []struct {
		what string
		do   func()
		want KeeperStats
	}{
		{"first fetch: a load finding nothing, a miss", func() { fetch(t, k, Answer{Status: 200, Body: kBody}, "") },
			KeeperStats{Misses: 1, Loads: 1, Origins: 1}},
		{"copy in memory: a hit", func() { k.Check(kHost, kOrigin) },
			KeeperStats{Hits: 1, Misses: 1, Loads: 1, Origins: 1}},
		{"another origin: a load and a miss", func() { k.Check(aHost, aOrigin) },
			KeeperStats{Hits: 1, Misses: 2, Loads: 2, Origins: 2}},
		{"its fetch in progress: a wait, neither", func() { k.Check(aHost, aOrigin) },
			KeeperStats{Hits: 1, Misses: 2, Loads: 2, Origins: 2}},
		{"past the TTL: a miss", func() { k.Cancel(aHost, aOrigin); c.Advance(time.Hour); fetch(t, k, Answer{Status: 404}, "") },
			KeeperStats{Hits: 1, Misses: 3, Loads: 2, Origins: 2}},
		{"a restart: the copy loaded from the store is a hit", func() { k = newKeeper(t, db, c, KeeperOptions{TTL: time.Hour}); k.Check(kHost, kOrigin) },
			KeeperStats{Hits: 1, Loads: 1, Origins: 1}},
	} {
		step.do()
		if got := k.Stats(); got != step.want {
			t.Fatalf("%s: Stats() = %+v, want %+v", step.what, got, step.want)
		}
	}
}

func TestKeeperOptionsValidate(t *testing.T) {
	db := memDB(t)
	tests := []struct {
		opts KeeperOptions
		bad  []string
	}{
		{KeeperOptions{DB: db}, nil},
		{KeeperOptions{DB: db, TTL: MaxTTL, RetryBase: time.Second, RetryMax: time.Second}, nil},
		{KeeperOptions{DB: db, RetryBase: 2 * time.Hour}, nil}, // RetryMax defaults to RetryBase then
		{KeeperOptions{}, nil}, // DB is NewKeeper's to check
		{KeeperOptions{DB: db, TTL: MaxTTL + 1}, []string{"TTL"}},
		{KeeperOptions{DB: db, TTL: -1, RetryBase: -1, Outage: -1, LostAnswerWait: -1, ClaimTimeout: -1, MaxEntries: -1},
			[]string{"TTL", "RetryBase", "Outage", "LostAnswerWait", "ClaimTimeout", "MaxEntries"}},
		{KeeperOptions{DB: db, RetryBase: time.Hour, RetryMax: time.Minute}, []string{"RetryMax"}},
		{KeeperOptions{DB: db, RetryMax: -1}, []string{"RetryMax"}},
	}
	for _, tt := range tests {
		err := tt.opts.Validate()
		if (err != nil) != (len(tt.bad) > 0) {
			t.Errorf("%+v.Validate() = %v, want errors for %q", tt.opts, err, tt.bad)
			continue
		}
		for _, f := range tt.bad {
			if !strings.Contains(err.Error(), "KeeperOptions."+f+" ") {
				t.Errorf("%+v.Validate() = %v, want it to name %s", tt.opts, err, f)
			}
		}
		_, nerr := NewKeeper(tt.opts)
		if wantErr := err != nil || tt.opts.DB == nil; (nerr != nil) != wantErr {
			t.Errorf("NewKeeper(%+v) = %v, Validate = %v", tt.opts, nerr, err)
		}
		if tt.opts.DB == nil && (nerr == nil || !strings.Contains(nerr.Error(), "KeeperOptions.DB ")) {
			t.Errorf("NewKeeper without a DB = %v, want it to name DB", nerr)
		}
	}
}
