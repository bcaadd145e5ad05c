package recrawl

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// TestLevellerSmoothsPoissonDemand feeds a Leveller the entries of a
// Poisson stream of due times, one call a second, and checks what a
// crawl's fetch log would show: no second lets out more than twice the
// mean (unlevelled, a Poisson count at a mean of 6.7 peaks near 2.2 times
// it over ten minutes), everything is let out (the budget is spent), and no entry
// waits more than a few seconds.
func TestLevellerSmoothsPoissonDemand(t *testing.T) {
	for _, mean := range []float64{0.5, 6.7, 40} {
		rng := rand.New(rand.NewPCG(7, uint64(mean*10)))
		var l Leveller
		t0 := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
		l.Allow(t0, 0, 0)
		var backlog []int // due second of each held entry, oldest first
		secs, peak, total, rawPeak, maxWait := 600, 0, 0, 0, 0
		for s := 1; s <= secs; s++ {
			n := poisson(rng, mean)
			rawPeak = max(rawPeak, n)
			for range n {
				backlog = append(backlog, s)
			}
			out := min(l.Allow(t0.Add(time.Duration(s)*time.Second), n, len(backlog)), len(backlog))
			for _, due := range backlog[:out] {
				maxWait = max(maxWait, s-due)
			}
			backlog = backlog[out:]
			if s > 60 { // after the rate has settled, as a judged window is
				peak = max(peak, out)
			}
			total += out
		}
		got := float64(peak) / mean
		t.Logf("mean %.1f a second: peak second %d (%.2fx; unlevelled %d, %.2fx), longest wait %d s, %d held at the end",
			mean, peak, got, rawPeak, float64(rawPeak)/mean, maxWait, len(backlog))
		if mean >= 5 && got > 2 {
			t.Errorf("mean %.1f: peak second %d, %.2f times the mean: a storm", mean, peak, got)
		}
		if len(backlog) > int(2*mean)+2 || maxWait > 5 {
			t.Errorf("mean %.1f: %d entries still held at the end, longest wait %d s: the demand is not let out", mean, len(backlog), maxWait)
		}
		if r := l.Rate(); math.Abs(r-mean) > mean/2+1 {
			t.Errorf("mean %.1f: demand rate %.2f", mean, r)
		}
	}
}

// TestLevellerSpreadsAWave gives a Leveller in a steady state a wave of
// a thousand entries due in one second: they go out over the following
// seconds, less than half at once, and all of them within a minute.
func TestLevellerSpreadsAWave(t *testing.T) {
	var l Leveller
	t0 := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	l.Allow(t0, 0, 0)
	for s := 1; s <= 60; s++ {
		l.Allow(t0.Add(time.Duration(s)*time.Second), 5, 5)
	}
	held := 1000
	first := l.Allow(t0.Add(61*time.Second), held, held)
	if first >= held/2 {
		t.Fatalf("a wave of %d: %d let out at once", held, first)
	}
	held -= first
	s := 62
	for ; held > 0 && s < 200; s++ {
		held -= min(held, l.Allow(t0.Add(time.Duration(s)*time.Second), 0, held))
	}
	if held > 0 || s > 61+60 {
		t.Errorf("the wave took %d s to let out, %d still held", s-61, held)
	}
	t.Logf("a wave of 1000 at 5 a second: %d at once, all out in %d s", first, s-61)
}

// TestLevellerFirstCallAndStillClock: the first call lets everything out;
// a call whose clock did not move lets one out and keeps its entries for
// the demand.
func TestLevellerFirstCallAndStillClock(t *testing.T) {
	var l Leveller
	t0 := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	if n := l.Allow(t0, 500, 500); n != math.MaxInt {
		t.Errorf("first call: %d, want everything", n)
	}
	if n := l.Allow(t0, 50, 50); n != 1 {
		t.Errorf("still clock: %d, want 1", n)
	}
	l.Allow(t0.Add(time.Second), 0, 0)
	if l.Rate() <= 0 {
		t.Errorf("the still clock's entries were lost: rate %v", l.Rate())
	}
}

func poisson(rng *rand.Rand, mean float64) int {
	n, p, limit := 0, 1.0, math.Exp(-mean)
	for {
		p *= rng.Float64()
		if p < limit {
			return n
		}
		n++
	}
}

// TestLevellerDrainsABacklog: a backlog that no demand counts (after a
// restart, a pause, a partition taken over) drains within a dozen windows
// however small the demand, while the demand is still let out.
func TestLevellerDrainsABacklog(t *testing.T) {
	var l Leveller
	t0 := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	l.Allow(t0, 0, 0)
	held := 40_000 // an hour of a demand of 10 a second, none of it counted
	s := 1
	for ; held > 0 && s <= 3600; s++ {
		held += 10
		held -= min(held, l.Allow(t0.Add(time.Duration(s)*time.Second), 10, held))
	}
	if held > 0 || s > 120 {
		t.Errorf("a backlog of 40,000 with a demand of 10 a second: %d held after %d s", held, s-1)
	}
	t.Logf("a backlog of 40,000 drained in %d s", s-1)
}
