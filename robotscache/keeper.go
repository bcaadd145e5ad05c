package robotscache

import (
	"container/list"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/trawl-crawler/trawl/internal/store"
	"github.com/trawl-crawler/trawl/robots"
)

// Defaults and limits of KeeperOptions.
const (
	DefaultTTL            = 24 * time.Hour
	MaxTTL                = 24 * time.Hour // RFC 9309 2.4
	DefaultOutage         = 30 * 24 * time.Hour
	DefaultRetryBase      = time.Minute
	DefaultRetryMax       = time.Hour
	DefaultLostAnswerWait = robots.MaxCrawlDelay
	DefaultClaimTimeout   = 5 * time.Minute
	DefaultMaxEntries     = 100_000
)

// KeeperOptions configures a Keeper. A zero field takes the default named.
type KeeperOptions struct {
	// DB keeps one record per origin (store.RobotsKey; layout in
	// record.go). Required by NewKeeper; Validate does not look at it, so
	// that options can be checked before the store is opened.
	DB *store.DB
	// TTL is how long a good answer (2xx, 4xx) applies, from its fetch
	// time, before it is fetched again. Default DefaultTTL; more than
	// MaxTTL is an error (RFC 9309 2.4).
	TTL time.Duration
	// RetryBase is the wait after the first unreachable answer (429, 5xx,
	// network error); it doubles with each consecutive one, up to
	// RetryMax. Defaults DefaultRetryBase and DefaultRetryMax.
	RetryBase, RetryMax time.Duration
	// Outage is how long robots.txt may stay unreachable before the last
	// good copy applies again, or no restrictions without one, refetched
	// every TTL (RFC 9309 2.3.1.4). Until then nothing may be fetched.
	// Default DefaultOutage.
	Outage time.Duration
	// LostAnswerWait is how long after a request recorded by Begin whose
	// answer was never recorded (a crash, or Cancel) the origin is left
	// alone: the answer, and the Crawl-delay in it, are lost. Default
	// DefaultLostAnswerWait, the longest Crawl-delay honoured.
	LostAnswerWait time.Duration
	// ClaimTimeout is how long a Fetch verdict holds the origin for its
	// caller; a claim neither Done nor Cancelled by then is cancelled, so
	// a lost caller cannot block the origin. Set it above the fetch
	// timeout. Default DefaultClaimTimeout.
	ClaimTimeout time.Duration
	// MaxEntries bounds the origins held in memory; past it the origin
	// used least recently is dropped (its state stays in the store, read
	// again when it is next checked). Origins with a fetch in progress
	// are never dropped, so they may exceed the bound. Default
	// DefaultMaxEntries.
	MaxEntries int
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// Logger receives unreadable records and outage transitions. Default:
	// discard.
	Logger *slog.Logger
}

func (o KeeperOptions) withDefaults() KeeperOptions {
	if o.TTL == 0 {
		o.TTL = DefaultTTL
	}
	if o.RetryBase == 0 {
		o.RetryBase = DefaultRetryBase
	}
	if o.RetryMax == 0 {
		o.RetryMax = max(DefaultRetryMax, o.RetryBase)
	}
	if o.Outage == 0 {
		o.Outage = DefaultOutage
	}
	if o.LostAnswerWait == 0 {
		o.LostAnswerWait = DefaultLostAnswerWait
	}
	if o.ClaimTimeout == 0 {
		o.ClaimTimeout = DefaultClaimTimeout
	}
	if o.MaxEntries == 0 {
		o.MaxEntries = DefaultMaxEntries
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Validate reports every bad setting of o by name (all but DB).
func (o KeeperOptions) Validate() error {
	var errs []error
	bad := func(field string, v any, why string) {
		errs = append(errs, fmt.Errorf("robots: KeeperOptions.%s = %v: %s", field, v, why))
	}
	if o.TTL < 0 || o.TTL > MaxTTL {
		bad("TTL", o.TTL, fmt.Sprintf("want 0 (default) or up to %s (RFC 9309 2.4)", MaxTTL))
	}
	if o.RetryBase < 0 {
		bad("RetryBase", o.RetryBase, "negative")
	}
	if o.RetryMax < 0 || (o.RetryMax > 0 && o.RetryMax < o.RetryBase) {
		bad("RetryMax", o.RetryMax, "negative or below RetryBase")
	}
	if o.Outage < 0 {
		bad("Outage", o.Outage, "negative")
	}
	if o.LostAnswerWait < 0 {
		bad("LostAnswerWait", o.LostAnswerWait, "negative")
	}
	if o.ClaimTimeout < 0 {
		bad("ClaimTimeout", o.ClaimTimeout, "negative")
	}
	if o.MaxEntries < 0 {
		bad("MaxEntries", o.MaxEntries, "negative")
	}
	return errors.Join(errs...)
}

// Action is what a Verdict tells the caller to do.
type Action int

const (
	// Apply: Verdict.Policy decides whether the URL may be fetched.
	Apply Action = iota + 1
	// Wait: put the URL back untouched, not to be tried before
	// Verdict.Until.
	Wait
	// Fetch: fetch Verdict.URL in this lease's slot (Begin, the request,
	// then Done), and put the URL back.
	Fetch
)

func (a Action) String() string {
	switch a {
	case Apply:
		return "apply"
	case Wait:
		return "wait"
	case Fetch:
		return "fetch"
	}
	return fmt.Sprintf("Action(%d)", int(a))
}

// Verdict is the answer of Check.
type Verdict struct {
	Action Action
	// Policy is the policy that applies (Apply only): a parsed robots.txt,
	// no restrictions (4xx), or the fallback of a long outage.
	Policy *robots.Policy
	// Loaded is set (Apply only) when Policy was read from the store by
	// this Check, not settled by Done in this process: feed its
	// Crawl-delay to the frontier.
	Loaded bool
	// Until is when to try again (Wait only). It is now when another
	// caller is fetching this origin's robots.txt.
	Until time.Time
	// URL is what to fetch (Fetch only): origin + "/robots.txt", or the
	// next hop of a redirect chain. It is the caller's to keep.
	URL *url.URL
	// Attempts counts the consecutive unreachable answers so far.
	Attempts int
	// OutageSince is when robots.txt became unreachable; zero while it is
	// not.
	OutageSince time.Time
}

// Answer is the outcome of one robots.txt request.
type Answer struct {
	Status   int    // HTTP status; ignored when Err is set
	Body     []byte // response body; only read for a 2xx status
	Location string // Location header; only read for a 3xx status
	// Err is a network error, or a body cut off short of its end: the
	// file is unreachable.
	Err error
	At  time.Time // when the answer came; zero means the keeper's clock
}

// Result is what Done made of an Answer.
type Result struct {
	// Redirect is set when the answer was a redirect to follow: the next
	// Check of the origin returns Fetch with URL set to it (in the host's
	// next slot).
	Redirect bool
	URL      *url.URL // the next hop, when Redirect; the caller's to keep
	// Policy is the policy that now applies: from a good answer, or the
	// fallback once an outage has lasted KeeperOptions.Outage. Nil while
	// the origin may not be crawled (Redirect, or unreachable before the
	// outage rule).
	Policy *robots.Policy
	// Unavailable is set when the answer was unreachable (RFC 9309
	// 2.3.1.4: 429, 5xx, network error).
	Unavailable bool
	// RetryAt is, when Unavailable, the next attempt: after the backoff,
	// or at the end of the fallback policy's TTL.
	RetryAt     time.Time
	Attempts    int       // consecutive unreachable answers, this one included
	OutageSince time.Time // start of the outage; zero when not Unavailable
}

// Keeper owns robots.txt for a crawler: it says, before each fetch,
// whether an origin's policy is known, must be waited for or must be
// fetched; it turns each answer into a policy by RFC 9309, keeps it for
// TTL, backs off unreachable origins, applies the outage rule and keeps
// its state in the store so that a restart neither refetches a fresh copy
// nor forgets an outage or a request whose answer was lost. It is safe for
// concurrent use and holds at most MaxEntries origins in memory.
type Keeper struct {
	opts    KeeperOptions
	started time.Time // records pending since before were an earlier run's

	// What Check found (KeeperStats), counted without mu's help so that
	// Stats does not take it.
	hits, misses, loads atomic.Int64

	// mu guards entries, order and every *originState. It is never held
	// during store I/O.
	mu      sync.Mutex
	entries map[string]*list.Element // origin -> element holding *originState
	order   *list.List               // front: used least recently
}

// originState is what the keeper knows about one origin.
type originState struct {
	origin, host string

	// now < until: policy applies, or, if nil, nothing may be fetched
	// (backoff, lost answer). now >= until: fetch.
	policy *robots.Policy
	until  time.Time
	good   *robots.Policy // last good answer, for the outage rule; nil if none known
	at     time.Time      // last settled answer, good or unreachable

	attempts    int       // consecutive unreachable answers
	outageSince time.Time // the first of them; zero when attempts == 0

	// A fetch in progress: claimed by a Fetch verdict at claimAt, its
	// request recorded by Begin at began.
	claimed bool
	claimAt time.Time
	began   time.Time

	// Redirect progress: the hop to fetch, the hops followed so far and
	// when the last redirect came. Stored with the record, so a stop
	// between hops does not ask for /robots.txt again.
	next  string
	hops  int
	hopAt time.Time

	// carry is the stored copy, read from the store when a record without
	// it might overwrite it, until the answer settles. carried says it has
	// been read (carry nil: there is none).
	carry   *storedCopy
	carried bool
}

// target is the URL to fetch next for e.
func (e *originState) target() string {
	if e.next != "" {
		return e.next
	}
	return e.origin + "/robots.txt"
}

// NewKeeper returns a keeper over opts.DB, or the errors of opts.Validate
// and a nil DB.
func NewKeeper(opts KeeperOptions) (*Keeper, error) {
	err := opts.Validate()
	if opts.DB == nil {
		err = errors.Join(err, errors.New("robots: KeeperOptions.DB = nil: required"))
	}
	if err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	return &Keeper{
		opts:    opts,
		started: opts.Now(),
		entries: make(map[string]*list.Element),
		order:   list.New(),
	}, nil
}

// Check says what to do about a URL of origin ("scheme://host:port")
// whose politeness key (urlnorm.HostKey) is host: apply a policy, wait,
// or fetch robots.txt. A Fetch verdict claims the origin for its caller,
// who must call Done (or Cancel) next; meanwhile other callers get Wait
// with Until = now. The first Check of an origin not in memory reads its
// record from the store.
func (k *Keeper) Check(host, origin string) Verdict {
	now := k.opts.Now()
	loaded := false
	k.mu.Lock()
	e := k.get(origin)
	if e == nil {
		k.mu.Unlock()
		k.loads.Add(1)
		fresh, err := k.load(host, origin)
		if err != nil {
			k.opts.Logger.Warn("robots.txt record unreadable from the store", "origin", origin, "err", err)
			return Verdict{Action: Wait, Until: now.Add(k.opts.RetryBase)}
		}
		k.mu.Lock()
		if e = k.get(origin); e == nil {
			e, loaded = fresh, true
			k.insert(e)
		}
	}
	defer k.mu.Unlock()

	if e.claimed {
		if now.Sub(e.claimAt) < k.opts.ClaimTimeout {
			return k.verdict(e, Verdict{Action: Wait, Until: now})
		}
		k.opts.Logger.Warn("robots.txt fetch neither done nor cancelled; claim dropped", "origin", origin, "claimed", e.claimAt)
		k.release(e)
	}
	if now.Before(e.until) {
		if e.policy != nil {
			k.hits.Add(1)
			return k.verdict(e, Verdict{Action: Apply, Policy: e.policy, Loaded: loaded})
		}
		return k.verdict(e, Verdict{Action: Wait, Until: e.until})
	}
	target, err := url.Parse(e.target())
	if err != nil {
		// origin is not scheme://host[:port]: there is nothing to fetch,
		// and nothing of it is crawled.
		k.opts.Logger.Warn("robots.txt URL does not parse", "origin", origin, "err", err)
		return k.verdict(e, Verdict{Action: Wait, Until: now.Add(k.opts.TTL)})
	}
	e.claimed, e.claimAt, e.began = true, now, time.Time{}
	k.misses.Add(1)
	return k.verdict(e, Verdict{Action: Fetch, URL: target})
}

func (k *Keeper) verdict(e *originState, v Verdict) Verdict {
	v.Attempts, v.OutageSince = e.attempts, e.outageSince
	return v
}

// Begin records durably (a synced commit) that the request Check asked
// for is about to be sent, with the attempts so far and the copy kept, so
// that a run after a crash that loses the answer leaves the origin alone
// for LostAnswerWait. Call it after a Fetch verdict and before the
// request; if it fails, do not send the request, and Cancel.
func (k *Keeper) Begin(host, origin string) error {
	now := k.opts.Now()
	k.mu.Lock()
	e := k.get(origin)
	if e == nil || !e.claimed {
		k.mu.Unlock()
		return fmt.Errorf("robots: begin fetch of %s: not claimed by Check", origin)
	}
	k.mu.Unlock()
	if err := k.carry(e, host, origin); err != nil {
		return fmt.Errorf("robots: begin fetch of %s: %w", origin, err)
	}
	k.mu.Lock()
	rec := record{pending: true, attempts: e.attempts, at: now, outageSince: e.outageSince, copy: e.carry}
	rec.hops, rec.hopAt, rec.next = e.hops, e.hopAt, e.next
	k.mu.Unlock()

	b := k.opts.DB.NewBatch()
	defer b.Close()
	if err := b.Set(store.RobotsKey(host, origin), encodeRecord(rec)); err != nil {
		return fmt.Errorf("robots: begin fetch of %s: %w", origin, err)
	}
	if err := k.opts.DB.Commit(b); err != nil {
		return fmt.Errorf("robots: begin fetch of %s: %w", origin, err)
	}
	k.mu.Lock()
	e.began = now
	k.mu.Unlock()
	return nil
}

// carry reads e's stored copy into e.carry, unless it has been read.
func (k *Keeper) carry(e *originState, host, origin string) error {
	k.mu.Lock()
	done := e.carried
	k.mu.Unlock()
	if done {
		return nil
	}
	var c *storedCopy
	v, err := k.opts.DB.Get(store.RobotsKey(host, origin))
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		return err
	default:
		if r, err := decodeRecord(v); err == nil {
			c = r.copy
		}
	}
	k.mu.Lock()
	if !e.carried {
		e.carry, e.carried = c, true
	}
	k.mu.Unlock()
	return nil
}

// Done records the answer to the request of a Fetch verdict: it releases
// the origin, works out the policy, and puts the origin's new record into
// b, which the caller commits (with the lease's completion, say). Until b
// is durable, the record Begin wrote stands: a crash before then is a
// lost answer.
//
// By RFC 9309 2.3.1: a 2xx answer is parsed; a 4xx other than 429 means
// no restrictions; a 3xx with a Location (relative ones resolved against
// the hop's URL) is followed, up to robots.MaxRedirects hops, and a longer chain
// or one that cannot be followed means no restrictions (2.3.1.2); 429,
// 5xx, any other status and Err mean unreachable: nothing may be fetched
// until RetryAt, RetryBase doubling per consecutive failure up to
// RetryMax, until the outage has lasted Outage; then the last good copy
// applies, or no restrictions without one, each for TTL.
func (k *Keeper) Done(b *store.Batch, host, origin string, ans Answer) (Result, error) {
	if ans.At.IsZero() {
		ans.At = k.opts.Now()
	}
	at := ans.At
	good := ans.Err == nil && robots.GoodStatus(ans.Status)
	redirect := good && ans.Status >= 300 && ans.Status <= 399

	k.mu.Lock()
	e := k.get(origin)
	if e == nil { // Done without Check: start from nothing
		e = &originState{origin: origin, host: host}
		k.insert(e)
	}
	k.mu.Unlock()
	if !good || redirect {
		// The record put below may replace the stored copy: carry it.
		if err := k.carry(e, host, origin); err != nil {
			k.opts.Logger.Warn("stored robots.txt copy unreadable; the record loses it", "origin", origin, "err", err)
		}
	}

	k.mu.Lock()
	hop := e.target()
	e.claimed, e.began = false, time.Time{}
	k.trim(k.entries[origin])
	var (
		res Result
		rec record
	)
	switch {
	case redirect:
		next, ok := nextHop(hop, ans.Location)
		if ok && e.hops < robots.MaxRedirects {
			e.hops++
			e.next, e.hopAt = next.String(), at
			res.Redirect, res.URL = true, next
			rec = record{attempts: e.attempts, at: e.at, outageSince: e.outageSince, copy: e.carry,
				hops: e.hops, hopAt: e.hopAt, next: e.next}
			break
		}
		// RFC 9309 2.3.1.2: more than robots.MaxRedirects consecutive redirects
		// (or one that cannot be followed) MAY be taken as unavailable,
		// which 2.3.1.3 defines as no restrictions.
		fallthrough
	case good:
		body := ans.Body
		if ans.Status > 299 {
			body = nil
		}
		c := &storedCopy{status: ans.Status, fetched: at, body: body[:min(len(body), robots.MaxBytes+1)]}
		p := c.policy()
		e.policy, e.good, e.until, e.at = p, p, at.Add(k.opts.TTL), at
		e.attempts, e.outageSince = 0, time.Time{}
		res.Policy = p
		rec = record{at: at, copy: c}
	default:
		e.attempts++
		if e.outageSince.IsZero() {
			e.outageSince = at
		}
		e.at = at
		k.afterFailure(e)
		res.Policy, res.Unavailable, res.RetryAt = e.policy, true, e.until
		rec = record{attempts: e.attempts, at: at, outageSince: e.outageSince, copy: e.carry}
	}
	if !res.Redirect {
		e.next, e.hops, e.hopAt = "", 0, time.Time{}
		e.carry, e.carried = nil, false
	}
	res.Attempts, res.OutageSince = e.attempts, e.outageSince
	k.mu.Unlock()

	if res.Unavailable {
		k.opts.Logger.Info("robots.txt unreachable", "origin", origin, "attempts", res.Attempts, "outage_since", res.OutageSince, "retry_at", res.RetryAt, "fallback", res.Policy != nil)
	}
	key := store.RobotsKey(host, origin)
	var err error
	if rec.attempts == 0 && rec.copy == nil && rec.hops == 0 {
		err = b.Delete(key) // nothing known: no pending record either
	} else {
		err = b.Set(key, encodeRecord(rec))
	}
	if err != nil {
		return res, fmt.Errorf("robots: record answer of %s: %w", hop, err)
	}
	return res, nil
}

// afterFailure sets e's policy and until after an unreachable answer at
// e.at: nothing may be fetched until the backoff has passed, or, once the
// outage has lasted Outage, the last good copy (or no restrictions)
// applies for TTL (RFC 9309 2.3.1.4).
func (k *Keeper) afterFailure(e *originState) {
	if e.at.Sub(e.outageSince) >= k.opts.Outage {
		e.policy = e.good
		if e.policy == nil {
			e.policy = robots.AllowAll(e.at)
		}
		e.until = e.at.Add(k.opts.TTL)
		return
	}
	e.policy, e.until = nil, e.at.Add(k.backoff(e.attempts))
}

// backoff is the wait after the n-th consecutive unreachable answer.
func (k *Keeper) backoff(n int) time.Duration {
	d := k.opts.RetryBase
	for i := 1; i < n && d < k.opts.RetryMax; i++ {
		d *= 2
	}
	return min(d, k.opts.RetryMax)
}

// Cancel gives up the fetch of a Fetch verdict without an answer (the
// request failed to start, or the crawl is stopping). If Begin recorded
// the request, it may have been sent and its answer is lost: the origin
// is left alone for LostAnswerWait, as after a crash.
func (k *Keeper) Cancel(host, origin string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if e := k.get(origin); e != nil && e.claimed {
		k.release(e)
		k.trim(nil)
	}
}

// release drops e's claim. k.mu must be held.
func (k *Keeper) release(e *originState) {
	if !e.began.IsZero() {
		e.policy, e.until = nil, e.began.Add(k.opts.LostAnswerWait)
	}
	e.claimed, e.began = false, time.Time{}
}

// load reads origin's record from the store into a new state.
func (k *Keeper) load(host, origin string) (*originState, error) {
	e := &originState{origin: origin, host: host}
	v, err := k.opts.DB.Get(store.RobotsKey(host, origin))
	if errors.Is(err, store.ErrNotFound) {
		e.carried = true // and there is no copy to carry
		return e, nil
	}
	if err != nil {
		return nil, fmt.Errorf("robots: read record of %s: %w", origin, err)
	}
	r, err := decodeRecord(v)
	if err != nil {
		k.opts.Logger.Warn("stored robots.txt record unreadable; fetching again", "origin", origin, "err", err)
		return e, nil
	}
	if r.copy != nil {
		e.good = r.copy.policy()
	}
	e.attempts, e.outageSince, e.at = r.attempts, r.outageSince, r.at
	if r.hops > 0 && k.opts.Now().Sub(r.hopAt) < k.opts.TTL {
		// A redirect chain was being followed: go on with its next hop.
		// One older than TTL is stale and starts again at /robots.txt.
		e.next, e.hops, e.hopAt = r.next, r.hops, r.hopAt
	}
	switch {
	case r.pending:
		// A request went out and its answer, with its Crawl-delay, was
		// lost (a crash, or a cancelled fetch).
		e.until = r.at.Add(k.opts.LostAnswerWait)
		if r.at.Before(k.started) {
			k.opts.Logger.Info("robots.txt answer lost by an earlier run; waiting", "origin", origin, "sent", r.at, "until", e.until)
		}
	case r.attempts > 0:
		k.afterFailure(e)
	case r.copy != nil:
		e.policy, e.until = e.good, r.copy.fetched.Add(k.opts.TTL)
	}
	return e, nil
}

// get returns origin's state, marking it used, or nil. k.mu must be held.
func (k *Keeper) get(origin string) *originState {
	el, ok := k.entries[origin]
	if !ok {
		return nil
	}
	k.order.MoveToBack(el)
	return el.Value.(*originState)
}

// insert adds e, then trims. k.mu must be held.
func (k *Keeper) insert(e *originState) {
	last := k.order.PushBack(e)
	k.entries[e.origin] = last
	k.trim(last)
}

// trim drops the least recently used origins other than keep and those
// with a fetch in progress while there are more than MaxEntries, so there
// are at most MaxEntries plus the fetches in progress. k.mu must be held.
func (k *Keeper) trim(keep *list.Element) {
	for el := k.order.Front(); el != nil && k.order.Len() > k.opts.MaxEntries; {
		next := el.Next()
		if old := el.Value.(*originState); el != keep && !old.claimed {
			k.order.Remove(el)
			delete(k.entries, old.origin)
		}
		el = next
	}
}

// Len returns the number of origins held in memory.
func (k *Keeper) Len() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.order.Len()
}

// KeeperStats counts the verdicts of a Keeper's Checks since NewKeeper.
// Wait verdicts (an origin backing off, or being fetched by another
// caller) are neither hits nor misses.
type KeeperStats struct {
	// Hits are Checks answered with a policy in force (Apply), whether
	// held in memory or read from the store by the Check.
	Hits int64
	// Misses are Checks that found no policy in force and sent their
	// caller to fetch robots.txt (Fetch): an origin never fetched, a copy
	// past its TTL, a retry after an unreachable answer, the next hop of
	// a redirect.
	Misses int64
	// Loads are Checks of an origin not held in memory, which read its
	// record from the store (finding one or not).
	Loads int64
	// Origins is the number held in memory now (Len).
	Origins int
}

// Stats returns the keeper's counts. It takes constant time.
func (k *Keeper) Stats() KeeperStats {
	return KeeperStats{Hits: k.hits.Load(), Misses: k.misses.Load(), Loads: k.loads.Load(), Origins: k.Len()}
}

// nextHop resolves a redirect's Location against the URL it answered.
// ok is false when it is not an http or https URL with a host.
func nextHop(hop, location string) (*url.URL, bool) {
	base, err := url.Parse(hop)
	if err != nil {
		return nil, false
	}
	location = strings.TrimSpace(location)
	ref, err := url.Parse(location)
	if err != nil || location == "" {
		return nil, false
	}
	u := base.ResolveReference(ref)
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, false
	}
	u.Fragment, u.RawFragment = "", ""
	if len(u.String()) > maxHopURL {
		return nil, false // longer than a stored hop may be: not followed
	}
	return u, true
}
