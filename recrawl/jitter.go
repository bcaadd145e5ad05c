package recrawl

import (
	"math"
	"time"
)

// DefaultJitter is the spread Policy.Jitter applies: ±20% of an interval.
// FirstJitter is the wider spread of a page's first interval, after its
// first visit (Policy.JitterFirst).
const (
	DefaultJitter = 0.2
	FirstJitter   = 0.5
)

// Jitter spreads interval (first held to [MinInterval, MaxInterval]) over
// ±DefaultJitter of itself, by a uniform draw determined by key (a hash of
// the URL and its visit count: replaying a visit gives the same interval).
// Pages fetched together in a crawl's first pass would otherwise come due
// together, at the same interval, every time: a recrawl storm. The mean
// interval, and so the budget a schedule spends, is unchanged away from
// the bounds. A draw past a bound is reflected back inside it, not
// clamped: the many pages a schedule sends to MaxInterval (those seen not
// to change) spread evenly below it instead of half of them landing on it
// at once, a wave at every maximum interval.
func (p *Policy) Jitter(interval time.Duration, key uint64) time.Duration {
	return p.jitter(interval, key, DefaultJitter)
}

// JitterFirst is Jitter for a page's first interval, spread over
// ±FirstJitter. A crawl's first pass gives its pages their first interval
// within seconds of each other, mostly the same one (InitialInterval, or
// their group's): at ±20% the pages of a first pass fetched in 20 s and
// given one minute come due within 24 s, a wave at several times the
// crawl's mean rate, and each later round echoes it.
func (p *Policy) JitterFirst(interval time.Duration, key uint64) time.Duration {
	return p.jitter(interval, key, FirstJitter)
}

func (p *Policy) jitter(interval time.Duration, key uint64, spread float64) time.Duration {
	lo, hi := float64(p.o.MinInterval), float64(p.o.MaxInterval)
	iv := min(max(float64(interval), lo), hi)
	u := float64(splitmix64(key)>>11) / (1 << 53) // uniform in [0, 1)
	h := iv * (1 - spread + 2*spread*u)
	switch {
	case h > hi:
		h = 2*hi - h
	case h < lo:
		h = 2*lo - h
	}
	if h >= float64(math.MaxInt64) {
		return p.o.MaxInterval
	}
	return min(max(time.Duration(h), p.o.MinInterval), p.o.MaxInterval)
}

// splitmix64 is SplitMix64's finaliser (Steele, Lea and Flood, 2014): a
// well-mixed 64-bit value from any key, so neighbouring keys draw
// unrelated factors.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
