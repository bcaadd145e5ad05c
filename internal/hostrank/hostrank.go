// Package hostrank ranks the hosts a node sends requests to by recent
// activity, for the dashboard: the busiest (requests, exponentially
// decayed) and the slowest (moving average of response times).
//
// Memory is bounded whatever the number of hosts: each of Options.Shards
// shards keeps at most Options.K hosts per ranking. The busiest are chosen
// by the space-saving algorithm over decayed counts: a host with over 1/K
// of its shard's recent requests is always kept, and a kept host's rate is
// overstated by at most its Busy.Over. The slowest are a heuristic: a
// host enters when one of its responses is slower than the fastest
// average kept (or takes the place of a host out of the window), so a
// host slow on average but never once slower than that floor can be
// missed. Hosts not fetched within Options.Window are not listed.
//
// A Ranking is safe for concurrent use. Observe, on the crawl's hot path,
// locks one shard (chosen by a hash of the host) and scans at most its 2K
// entries, without a map or an allocation. It does no I/O; time comes
// from Options.Now.
package hostrank

import (
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"slices"
	"strings"
	"sync"
	"time"
)

// Options configures New. A zero field takes the default named.
type Options struct {
	// K is how many hosts each shard keeps per ranking; ask Busiest and
	// Slowest for at most K (all n may come from one shard). Zero means
	// DefaultK; at most MaxK, as each ranking is scanned on every request.
	K int
	// Shards is the number of independently locked parts, a power of two:
	// at most 2 x K x Shards hosts are kept. Zero means DefaultShards.
	Shards int
	// HalfLife is how fast the busiest ranking forgets: a request counts
	// half as much HalfLife later. Zero means DefaultHalfLife.
	HalfLife time.Duration
	// Window is how recently a host must have been fetched to be listed.
	// Zero means DefaultWindow.
	Window time.Duration
	// Smoothing is the weight of the newest response time in a host's
	// moving average, in (0, 1]; 1 keeps only the last. Zero means
	// DefaultSmoothing.
	Smoothing float64
	// Now is the clock. Default: the monotonic clock alone (time.Since,
	// half the cost of time.Now on some virtual machines).
	Now func() time.Time
}

// Defaults of Options.
const (
	DefaultK         = 16
	MaxK             = 64
	DefaultShards    = 8
	DefaultHalfLife  = time.Minute
	DefaultWindow    = time.Minute
	DefaultSmoothing = 0.2
)

// Validate reports every bad field by name.
func (o Options) Validate() error {
	var errs []error
	bad := func(field string, v any, why string) {
		errs = append(errs, fmt.Errorf("hostrank: option %s = %v: %s", field, v, why))
	}
	if o.K < 0 || o.K > MaxK {
		bad("K", o.K, fmt.Sprintf("want 0 (default %d) up to %d", DefaultK, MaxK))
	}
	if o.Shards < 0 || o.Shards&(o.Shards-1) != 0 {
		bad("Shards", o.Shards, "want 0 (default) or a power of two")
	}
	if o.HalfLife < 0 {
		bad("HalfLife", o.HalfLife, "negative")
	}
	if o.Window < 0 {
		bad("Window", o.Window, "negative")
	}
	if o.Smoothing < 0 || o.Smoothing > 1 || math.IsNaN(o.Smoothing) {
		bad("Smoothing", o.Smoothing, "want 0 (default) up to 1")
	}
	return errors.Join(errs...)
}

func (o Options) withDefaults() Options {
	if o.K == 0 {
		o.K = DefaultK
	}
	if o.Shards == 0 {
		o.Shards = DefaultShards
	}
	if o.HalfLife == 0 {
		o.HalfLife = DefaultHalfLife
	}
	if o.Window == 0 {
		o.Window = DefaultWindow
	}
	if o.Smoothing == 0 {
		o.Smoothing = DefaultSmoothing
	}
	return o
}

// Ranking keeps the busiest and slowest hosts. Make one with New.
type Ranking struct {
	opts    Options
	seed    maphash.Seed
	origin  time.Time    // times are kept as nanoseconds since origin
	elapsed func() int64 // ns since origin
	lambda  float64      // decay per nanosecond: ln 2 / HalfLife
	shards  []shard
}

// shard is one locked part of a Ranking: the hosts whose hash picks it.
// Its two rankings are short arrays (K <= MaxK), searched by a scan that
// compares hashes first: no map, so no map writes as hosts come and go.
type shard struct {
	mu sync.Mutex
	// landmark is the time busy's weights are relative to: a request at
	// t adds exp(lambda*(t-landmark)) (forward decay, so that no stored
	// weight changes as time passes). When the exponent grows past
	// maxExponent, every weight is scaled down and landmark moved to now.
	landmark int64
	busy     []busy
	slow     []slow
	_        [64]byte // keep shards' locks on separate cache lines
}

type busy struct {
	hash uint64
	w    float64 // decayed request count, relative to landmark
	over float64 // the most w overstates the host's (space-saving)
	last int64   // last request, ns since origin
	host string
}

type slow struct {
	hash uint64
	mean float64 // moving average of response times, ns
	n    int64   // responses averaged since the host was kept
	last int64   // last response, ns since origin
	host string
}

// maxExponent bounds lambda*(t-landmark): exp(50) is about 5e21, far from
// float64's range, and the rescale it triggers happens once per
// 50/ln2 = 72 half-lives per shard.
const maxExponent = 50

// New returns an empty Ranking, or the error Validate reports.
func New(o Options) (*Ranking, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	o = o.withDefaults()
	r := &Ranking{opts: o, seed: maphash.MakeSeed(),
		lambda: math.Ln2 / float64(o.HalfLife), shards: make([]shard, o.Shards)}
	if now := o.Now; now != nil {
		r.origin = now()
		r.elapsed = func() int64 { return int64(now().Sub(r.origin)) }
	} else {
		r.origin = time.Now()
		r.elapsed = func() int64 { return int64(time.Since(r.origin)) }
	}
	for i := range r.shards {
		r.shards[i].busy = make([]busy, 0, o.K)
		r.shards[i].slow = make([]slow, 0, o.K)
	}
	return r, nil
}

// Observe records one request to host that took d (to the body's end or
// the failure).
func (r *Ranking) Observe(host string, d time.Duration) {
	now := r.elapsed()
	h := maphash.String(r.seed, host)
	s := &r.shards[h&uint64(len(r.shards)-1)]
	s.mu.Lock()
	s.countBusy(r.lambda, h, host, now)
	s.timeSlow(r.opts.Smoothing, now-int64(r.opts.Window), h, host, float64(d), now)
	s.mu.Unlock()
}

// countBusy counts a request to host at now.
func (s *shard) countBusy(lambda float64, h uint64, host string, now int64) {
	x := lambda * float64(now-s.landmark)
	if x > maxExponent || x < -maxExponent {
		s.rescale(x, now)
		x = 0
	}
	inc := math.Exp(x)
	for j := range s.busy {
		if b := &s.busy[j]; b.hash == h && b.host == host {
			b.w += inc
			b.last = now
			return
		}
	}
	if len(s.busy) < cap(s.busy) {
		s.busy = append(s.busy, busy{hash: h, w: inc, last: now, host: host})
		return
	}
	// Space-saving: the host takes the place of the least weight kept,
	// inheriting that weight as its possible overstatement.
	m, least := 0, s.busy[0].w
	for j := 1; j < len(s.busy); j++ {
		if w := s.busy[j].w; w < least {
			m, least = j, w
		}
	}
	s.busy[m] = busy{hash: h, w: least + inc, over: least, last: now, host: host}
}

// rescale moves the landmark to now: x is lambda*(now-landmark).
func (s *shard) rescale(x float64, now int64) {
	f := math.Exp(-x)
	for j := range s.busy {
		s.busy[j].w *= f
		s.busy[j].over *= f
	}
	s.landmark = now
}

// timeSlow folds a response time d (ns) of host at now into the slowest
// ranking; a host last fetched before stale is out of the window.
func (s *shard) timeSlow(smoothing float64, stale int64, h uint64, host string, d float64, now int64) {
	for j := range s.slow {
		if e := &s.slow[j]; e.hash == h && e.host == host {
			e.mean += smoothing * (d - e.mean)
			e.n++
			e.last = now
			return
		}
	}
	if len(s.slow) < cap(s.slow) {
		s.slow = append(s.slow, slow{hash: h, mean: d, n: 1, last: now, host: host})
		return
	}
	// The host takes the place of one out of the window, or else of the
	// fastest kept, if it is slower.
	m, fastest := -1, d
	for j := range s.slow {
		e := &s.slow[j]
		if e.last < stale {
			m = j
			break
		}
		if e.mean < fastest {
			m, fastest = j, e.mean
		}
	}
	if m >= 0 {
		s.slow[m] = slow{hash: h, mean: d, n: 1, last: now, host: host}
	}
}

// Busy is a host in the busiest ranking.
type Busy struct {
	Host string
	// Rate is the host's requests per second, exponentially weighted
	// (Options.HalfLife): lambda times its decayed count, which is its
	// rate for a host fetched steadily for a few half-lives and less for
	// one that started recently.
	Rate float64
	// Over is the most Rate may overstate the host's (the weight it
	// inherited when it entered the ranking, decayed since): the host's
	// rate is within [Rate-Over, Rate].
	Over float64
}

// Slow is a host in the slowest ranking.
type Slow struct {
	Host string
	// Mean is the moving average of its response times (to the body's end
	// or the failure), each newest weighing Options.Smoothing.
	Mean time.Duration
	// Samples is how many responses the average has seen since the host
	// entered the ranking.
	Samples int64
}

// Busiest returns up to n hosts fetched within the window, the highest
// rate first (ties by name).
func (r *Ranking) Busiest(n int) []Busy {
	now := r.elapsed()
	stale := now - int64(r.opts.Window)
	var out []Busy
	for i := range r.shards {
		s := &r.shards[i]
		s.mu.Lock()
		f := r.lambda * math.Exp(-r.lambda*float64(now-s.landmark)) * float64(time.Second)
		for _, b := range s.busy {
			if b.last >= stale {
				out = append(out, Busy{Host: b.host, Rate: b.w * f, Over: b.over * f})
			}
		}
		s.mu.Unlock()
	}
	slices.SortFunc(out, func(a, b Busy) int {
		if a.Rate != b.Rate {
			if a.Rate > b.Rate {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Host, b.Host)
	})
	return out[:min(n, len(out))]
}

// Slowest returns up to n hosts fetched within the window, the highest
// mean response time first (ties by name).
func (r *Ranking) Slowest(n int) []Slow {
	now := r.elapsed()
	stale := now - int64(r.opts.Window)
	var out []Slow
	for i := range r.shards {
		s := &r.shards[i]
		s.mu.Lock()
		for _, e := range s.slow {
			if e.last >= stale {
				out = append(out, Slow{Host: e.host, Mean: time.Duration(e.mean), Samples: e.n})
			}
		}
		s.mu.Unlock()
	}
	slices.SortFunc(out, func(a, b Slow) int {
		if a.Mean != b.Mean {
			if a.Mean > b.Mean {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Host, b.Host)
	})
	return out[:min(n, len(out))]
}

// kept returns how many hosts the rankings hold (a host in both counts
// twice), at most 2 x K x Shards (for tests of the bound).
func (r *Ranking) kept() int {
	n := 0
	for i := range r.shards {
		s := &r.shards[i]
		s.mu.Lock()
		n += len(s.busy) + len(s.slow)
		s.mu.Unlock()
	}
	return n
}
