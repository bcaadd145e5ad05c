package recrawl

import (
	"testing"
	"time"
)

// TestPaceSpreadsAWave: a wave of due visits far above the planned rate
// goes out at Headroom times it, tick after tick, whatever the tick; and
// the fractions left over add up, so a low rate is not rounded away.
func TestPaceSpreadsAWave(t *testing.T) {
	for _, tick := range []time.Duration{50 * time.Millisecond, time.Second} {
		var p Pace
		p.SetPlanned(36_000) // 10 a second
		now := t0
		p.Allow(now)
		backlog, out := 1000, 0
		worst := 0
		var inSecond int
		secondStart := now
		for range int(20 * time.Second / tick) {
			now = now.Add(tick)
			if now.Sub(secondStart) >= time.Second {
				worst = max(worst, inSecond)
				inSecond, secondStart = 0, now
			}
			n := min(p.Allow(now), backlog)
			backlog -= n
			out += n
			inSecond += n
		}
		if want := int(Headroom * 10 * 20); out < want-1 || out > want+1 {
			t.Errorf("tick %v: %d out in 20 s, want %d", tick, out, want)
		}
		if worst > int(Headroom*10)+1 {
			t.Errorf("tick %v: %d in one second, want at most %d", tick, worst, int(Headroom*10)+1)
		}
	}
}

func TestPaceOffAndFloor(t *testing.T) {
	var p Pace
	if n := p.Allow(t0); n != -1 {
		t.Errorf("no planned rate: Allow = %d, want -1 (no pacing)", n)
	}
	p.SetPlanned(1) // one an hour: the floor of one a second applies
	p.Allow(t0)
	if n := p.Allow(t0.Add(time.Second)); n != 1 {
		t.Errorf("a low rate: %d in a second, want 1", n)
	}
	// A pause is not paid back at once.
	p.SetPlanned(3600) // 1 a second
	p.Allow(t0)
	if n := p.Allow(t0.Add(time.Hour)); n > 3 {
		t.Errorf("after an hour's pause: %d at once, want at most %v", n, Headroom*maxPaceGap.Seconds())
	}
	p.SetPlanned(0)
	if n := p.Allow(t0.Add(2 * time.Hour)); n != -1 {
		t.Errorf("pacing turned off: Allow = %d, want -1", n)
	}
}

// TestPaceFollowsWhatGoesOut: when visits go out slower than planned (a
// tenth of it here), the allowance follows the rate they go out at, not
// the plan; when they come faster again it grows by Headroom per
// PaceMemory, up to Headroom times the plan.
func TestPaceFollowsWhatGoesOut(t *testing.T) {
	var p Pace
	p.SetPlanned(36_000) // 10 a second
	now := t0
	p.Allow(now)
	for range 300 { // 5 minutes at one a second out
		now = now.Add(time.Second)
		if n := p.Allow(now); n > 0 {
			p.Out(1)
		} else {
			p.Out(0)
		}
	}
	if n := p.Allow(now.Add(time.Second)); n > 2 {
		t.Errorf("after 5 minutes at 1 a second out: %d allowed in a second, want at most 2 (Headroom times 1)", n)
	}
	p.Out(1)
	// Every allowance spent: the mean climbs back to the plan.
	for range 600 {
		now = now.Add(time.Second)
		p.Out(max(p.Allow(now), 0))
	}
	if n := p.Allow(now.Add(time.Second)); n < 14 || n > 16 {
		t.Errorf("after 10 minutes spending all it allows: %d in a second, want Headroom times the plan, 15", n)
	}
}
