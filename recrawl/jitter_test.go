package recrawl

import (
	"math"
	"testing"
	"time"
)

func TestJitter(t *testing.T) {
	p := mustNew(t, Options{MinInterval: time.Minute, MaxInterval: time.Hour})
	iv := 30 * time.Minute
	var sum float64
	lo, hi := time.Duration(math.MaxInt64), time.Duration(0)
	buckets := make([]int, 10)
	const n = 10000
	for k := range uint64(n) {
		j := p.Jitter(iv, k)
		if j != p.Jitter(iv, k) {
			t.Fatalf("key %d: two draws differ", k)
		}
		lo, hi = min(lo, j), max(hi, j)
		sum += float64(j)
		buckets[int((float64(j)/float64(iv)-0.8)/0.4*10)]++
	}
	if lo < 24*time.Minute || hi > 36*time.Minute {
		t.Errorf("jittered 30m spans %v..%v, want within ±20%%", lo, hi)
	}
	if mean := time.Duration(sum / n); mean < 29*time.Minute+30*time.Second || mean > 30*time.Minute+30*time.Second {
		t.Errorf("mean %v, want about 30m: the budget unchanged", mean)
	}
	for i, c := range buckets {
		if c < n/10*8/10 || c > n/10*12/10 {
			t.Errorf("tenth %d of the range drew %d of %d: not spread evenly (%v)", i, c, n, buckets)
		}
	}
	// The clamps hold.
	for k := range uint64(100) {
		if j := p.Jitter(59*time.Minute, k); j > time.Hour {
			t.Fatalf("59m jittered to %v, past MaxInterval", j)
		}
		if j := p.Jitter(61*time.Second, k); j < time.Minute {
			t.Fatalf("61s jittered to %v, under MinInterval", j)
		}
	}
	// At a bound, draws past it are reflected inside: evenly spread over
	// the 20% below MaxInterval (above MinInterval), none piled on it.
	for _, c := range []struct {
		iv       time.Duration
		from, to time.Duration
	}{
		{time.Hour, 48 * time.Minute, time.Hour},
		{time.Duration(math.MaxInt64), 48 * time.Minute, time.Hour},
		{time.Minute, time.Minute, 72 * time.Second},
		{time.Second, time.Minute, 72 * time.Second},
	} {
		at, tenths := 0, make([]int, 10)
		for k := range uint64(n) {
			j := p.Jitter(c.iv, k)
			if j < c.from || j > c.to {
				t.Fatalf("%v jittered to %v, want within %v..%v", c.iv, j, c.from, c.to)
			}
			if j == c.from || j == c.to {
				at++
			}
			tenths[min(9, int(float64(j-c.from)/float64(c.to-c.from)*10))]++
		}
		if at > n/100 {
			t.Errorf("%v: %d of %d draws on a bound, want them spread (%v)", c.iv, at, n, tenths)
		}
		for i, cnt := range tenths {
			if cnt < n/10*8/10 || cnt > n/10*12/10 {
				t.Errorf("%v: tenth %d of %v..%v drew %d of %d: not even (%v)", c.iv, i, c.from, c.to, cnt, n, tenths)
			}
		}
	}
}

// TestJitterFirstSpreadsWider: a first interval spreads over ±50% with the
// same mean, within the bounds.
func TestJitterFirstSpreadsWider(t *testing.T) {
	p := mustNew(t, Options{MinInterval: 20 * time.Second, MaxInterval: 3 * time.Minute})
	iv := time.Minute
	var sum float64
	lo, hi := time.Duration(math.MaxInt64), time.Duration(0)
	const n = 10000
	for k := range uint64(n) {
		j := p.JitterFirst(iv, k)
		lo, hi = min(lo, j), max(hi, j)
		sum += float64(j)
	}
	if lo < 30*time.Second || lo > 31*time.Second || hi < 89*time.Second || hi > 90*time.Second {
		t.Errorf("first interval 1m spans %v..%v, want about 30s..90s", lo, hi)
	}
	if mean := time.Duration(sum / n); mean < 59*time.Second || mean > 61*time.Second {
		t.Errorf("mean %v, want about 1m", mean)
	}
}
