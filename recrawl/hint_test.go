package recrawl

import (
	"math"
	"testing"
	"time"
)

func TestHintPrior(t *testing.T) {
	if pr := HintPrior(0); pr != (Prior{}) {
		t.Errorf("no interval stated: %+v, want the zero Prior", pr)
	}
	if pr := HintPrior(-time.Hour); pr != (Prior{}) {
		t.Errorf("negative interval: %+v, want the zero Prior", pr)
	}
	day := HintPrior(24 * time.Hour)
	if math.Abs(float64(day.Rate())-1.0/24) > 1e-12 || day.Changes != HintChanges {
		t.Fatalf("daily: %+v (rate %v), want %d change per 24 h", day, day.Rate(), HintChanges)
	}
	p := mustNew(t, Options{})
	visit := func(h History, at time.Duration, changed bool) History {
		return p.Observe(h, Visit{At: t0.Add(at), Changed: changed})
	}

	// Seen once: the stated rate.
	h := visit(History{}, 0, false)
	if e := p.EstimateWith(h, day); !e.FromPrior || math.Abs(float64(e.Rate)-1.0/24) > 1e-12 {
		t.Errorf("seen once, stated daily: %+v, want one change a day from the statement", e)
	}

	// Stated daily, unchanged at visits a day apart for ten days: the
	// page's own visits outweigh the statement.
	for d := 1; d <= 10; d++ {
		h = visit(h, time.Duration(d)*24*time.Hour, false)
	}
	if e := p.EstimateWith(h, day); !(e.Rate < 1.0/(5*24)) {
		t.Errorf("stated daily, unchanged for ten days: rate %v per hour (every %.0f h), want below one change in 5 days", e.Rate, 1/float64(e.Rate))
	}

	// Stated monthly, changed at every one of six visits an hour apart:
	// well above the statement after a few visits.
	month := HintPrior(30 * 24 * time.Hour)
	h = visit(History{}, 0, false)
	for k := 1; k <= 6; k++ {
		h = visit(h, time.Duration(k)*time.Hour, true)
	}
	if e := p.EstimateWith(h, month); !(e.Rate > 1.0/6) {
		t.Errorf("stated monthly, changed at six hourly visits: rate %v per hour, want above one change in 6 h", e.Rate)
	}
}
