package recrawl

import (
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func mustNew(t testing.TB, o Options) *Policy {
	t.Helper()
	p, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestOptionsValidate(t *testing.T) {
	tests := []struct {
		o    Options
		want []string // substrings of the error; none for a valid Options
	}{
		{Options{}, nil},
		{Options{MinInterval: time.Minute, MaxInterval: time.Hour, Memory: math.Inf(1), Prior: -1}, nil},
		{Options{MinInterval: -1}, []string{"MinInterval = -1ns"}},
		{Options{MinInterval: 2 * time.Hour, MaxInterval: time.Hour}, []string{"MaxInterval = 1h0m0s: below MinInterval"}},
		{Options{MaxInterval: -time.Hour, InitialInterval: -1, Memory: 0.5, Prior: math.NaN()},
			[]string{"MaxInterval = -1h0m0s", "InitialInterval", "Memory = 0.5", "Prior = NaN"}},
	}
	for _, tt := range tests {
		err := tt.o.Validate()
		if len(tt.want) == 0 {
			if err != nil {
				t.Errorf("%+v.Validate() = %v, want nil", tt.o, err)
			}
			continue
		}
		for _, w := range tt.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%+v.Validate() = %v, want it to say %q", tt.o, err, w)
			}
		}
	}
	if _, err := New(Options{Memory: -3}); err == nil {
		t.Error("New accepted Memory = -3")
	}
}

// regular returns a History of n visits after the first, every interval,
// of which the first x saw a change.
func regular(p *Policy, n, x int, interval time.Duration) History {
	var h History
	h = p.Observe(h, Visit{At: t0})
	for i := range n {
		h = p.Observe(h, Visit{At: t0.Add(time.Duration(i+1) * interval), Changed: i < x})
	}
	return h
}

// TestRegularIsChoGarciaMolina checks that with no prior and no forgetting
// the irregular estimator gives Cho and Garcia-Molina's on regular
// intervals, whatever the order of the changes.
func TestRegularIsChoGarciaMolina(t *testing.T) {
	p := mustNew(t, Options{Prior: -1, Memory: math.Inf(1)})
	for _, tt := range []struct {
		n, x int
		I    time.Duration
	}{{1, 1, time.Hour}, {10, 0, day}, {10, 3, day}, {10, 10, day}, {50, 25, 6 * time.Hour}, {7, 6, 3 * day}} {
		e := p.Estimate(regular(p, tt.n, tt.x, tt.I))
		want := ChoGarciaMolina(tt.n, tt.x, tt.I)
		if math.Abs(float64(e.Rate-want)) > 1e-6*float64(want)+1e-12 {
			t.Errorf("n=%d X=%d I=%v: Estimate = %v, ChoGarciaMolina = %v", tt.n, tt.x, tt.I, e.Rate, want)
		}
	}
	if got, want := ChoGarciaMolina(10, 10, time.Hour), Rate(math.Log(21)); math.Abs(float64(got-want)) > 1e-12 {
		t.Errorf("ChoGarciaMolina(10, 10, 1h) = %v, want ln 21 = %v", got, want)
	}
}

const day = 24 * time.Hour

// TestEdgesAreFiniteAndSane: no visits, one visit, never changed, always
// changed.
func TestEdgesAreFiniteAndSane(t *testing.T) {
	p := mustNew(t, Options{})
	if e := p.Estimate(History{}); e.Intervals != 0 || e.Rate != 0 {
		t.Errorf("empty History: %+v", e)
	}
	if got := p.Interval(p.Estimate(History{}), 1, 10); got != p.Options().InitialInterval {
		t.Errorf("Interval without estimate = %v, want InitialInterval %v", got, p.Options().InitialInterval)
	}
	never := p.Estimate(regular(p, 10, 0, day))
	// Prior 0.25 over 10 days: about 1/40 days.
	if r := float64(never.Rate) * 24 * 40; never.Censored || r < 0.8 || r > 1.2 {
		t.Errorf("never changed in 10 days: %+v, want about 1/(40 days)", never)
	}
	always := p.Estimate(regular(p, 10, 10, day))
	if !always.Censored || always.Shortest != day || math.IsInf(float64(always.Rate), 0) || always.Rate < ChoGarciaMolina(10, 9, day) {
		t.Errorf("always changed: %+v", always)
	}
}

// poissonHistory visits a page changing at rate r (per hour) n times at
// irregular intervals, exponential with the given mean, and returns the
// History.
func poissonHistory(p *Policy, rng *rand.Rand, r float64, n int, mean time.Duration, lm bool) History {
	var h History
	// A page that has been changing for long: its last change before
	// the first visit is as far back as its rate makes it.
	at, nextChange, lastChange := 0.0, rng.ExpFloat64()/r, -rng.ExpFloat64()/r
	for i := range n + 1 {
		if i > 0 {
			at += rng.ExpFloat64() * mean.Hours()
		}
		changed := false
		for nextChange <= at {
			changed, lastChange = true, nextChange
			nextChange += rng.ExpFloat64() / r
		}
		v := Visit{At: t0.Add(time.Duration(at * float64(time.Hour))), Changed: changed && i > 0}
		if lm {
			v.LastModified = t0.Add(time.Duration(lastChange * float64(time.Hour))).Truncate(time.Second)
		}
		h = p.Observe(h, v)
	}
	return h
}

// TestConvergesOnPoissonPages estimates simulated Poisson pages visited at
// irregular (exponential) intervals with means from a twelfth to twice the
// mean time between changes, without forgetting, 200 pages per case: the
// mean relative error (bias) stays within 5% and the root mean square
// error is under 16% after 200 visits and under 8% after 1000 (it falls as
// 1/sqrt(visits); the bias left is the binning of changed intervals).
func TestConvergesOnPoissonPages(t *testing.T) {
	p := mustNew(t, Options{Memory: math.Inf(1)})
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []struct {
		visits int
		rms    float64
	}{{200, 0.16}, {1000, 0.08}} {
		for _, tt := range []struct {
			rate float64 // per hour
			mean time.Duration
		}{{1.0 / 6, 2 * time.Hour}, {1.0 / 24, 12 * time.Hour}, {1.0 / 24, 48 * time.Hour}, {1.0 / 168, 2 * day}} {
			var sum, sq float64
			const pages = 200
			for range pages {
				e := p.Estimate(poissonHistory(p, rng, tt.rate, n.visits, tt.mean, false))
				d := (float64(e.Rate) - tt.rate) / tt.rate
				sum += d
				sq += d * d
			}
			bias, rms := sum/pages, math.Sqrt(sq/pages)
			if math.Abs(bias) > 0.05 || rms > n.rms {
				t.Errorf("rate 1/%.0fh, %d visits every %v on average: bias %.3f, rms %.3f; want within 0.05, under %.2f", 1/tt.rate, n.visits, tt.mean, bias, rms, n.rms)
			}
		}
	}
}

// TestLastModified: true dates are trusted and beat the digest on a page
// changing faster than it is visited; lying ones are not trusted.
func TestLastModified(t *testing.T) {
	p := mustNew(t, Options{})
	rng := rand.New(rand.NewPCG(3, 4))
	const r = 1.0 / 4 // every 4 hours, visited every 24 hours
	h := poissonHistory(p, rng, r, 40, 24*time.Hour, true)
	e := p.Estimate(h)
	if !e.LastModified || math.Abs(float64(e.Rate)-r)/r > 0.3 {
		t.Errorf("true Last-Modified: %+v, want it used and within 30%% of %v", e, r)
	}
	digest := p.Estimate(poissonHistory(p, rand.New(rand.NewPCG(3, 4)), r, 40, 24*time.Hour, false))
	if math.Abs(float64(digest.Rate)-r) < math.Abs(float64(e.Rate)-r) {
		t.Errorf("digest alone (%v) closer to %v than with Last-Modified (%v)", digest.Rate, r, e.Rate)
	}

	// Lying servers, visited daily, the page changing about weekly.
	lies := map[string]func(at, lastChange time.Time) time.Time{
		"request time":   func(at, _ time.Time) time.Time { return at },
		"in the future":  func(at, _ time.Time) time.Time { return at.Add(time.Hour) },
		"never advances": func(time.Time, time.Time) time.Time { return t0.Add(-day) },
		"a second ago":   func(at, _ time.Time) time.Time { return at.Add(-time.Second / 2) },
		"always new":     func(at, _ time.Time) time.Time { return at.Add(-time.Minute) },
	}
	for name, lie := range lies {
		rng := rand.New(rand.NewPCG(5, 6))
		var h History
		last := t0.Add(-day)
		for i := range 40 {
			at := t0.Add(time.Duration(i) * day)
			changed := i > 0 && rng.Float64() < 1-math.Exp(-1.0/7)
			if changed {
				last = at.Add(-time.Hour)
			}
			h = p.Observe(h, Visit{At: at, Changed: changed, LastModified: lie(at, last)})
		}
		if h.LastModifiedTrusted() || p.Estimate(h).LastModified {
			t.Errorf("Last-Modified %s: trusted", name)
		}
	}
}

// TestIntervalPolicy checks the allocation rule at its edges.
func TestIntervalPolicy(t *testing.T) {
	p := mustNew(t, Options{})
	known := func(r Rate) Estimate { return Estimate{Rate: r, Intervals: 10} }
	const mu = 10.0 // hours: pages changing more than every 10 h are dropped
	tests := []struct {
		name string
		e    Estimate
		w    float64
		want func(time.Duration) bool
	}{
		{"never changes", known(0), 1, func(d time.Duration) bool { return d == DefaultMaxInterval }},
		{"too fast", known(1.0 / 9), 1, func(d time.Duration) bool { return d == DefaultMaxInterval }},
		{"too fast unless important", known(1.0 / 9), 2, func(d time.Duration) bool { return d < DefaultMaxInterval }},
		{"slow", known(1.0 / 1e5), 1, func(d time.Duration) bool { return d == DefaultMaxInterval }},
		{"daily", known(1.0 / 24), 1, func(d time.Duration) bool { return d > 10*time.Hour && d < 48*time.Hour }},
		{"min clamp", known(1.0 / 24), 1e6, func(d time.Duration) bool { return d == DefaultMinInterval }},
		{"censored probe", Estimate{Rate: 1.0 / 40, Intervals: 2, Censored: true, Shortest: 72 * time.Hour}, 1,
			func(d time.Duration) bool { return d == 18*time.Hour }},
		{"censored past threshold", Estimate{Rate: 1, Intervals: 2, Censored: true, Shortest: time.Hour}, 1,
			func(d time.Duration) bool { return d == DefaultMaxInterval }},
	}
	for _, tt := range tests {
		if got := p.Interval(tt.e, tt.w, mu); !tt.want(got) {
			t.Errorf("%s: Interval(%+v, %v, %v) = %v", tt.name, tt.e, tt.w, mu, got)
		}
	}
	// Weighted pages get shorter intervals.
	if a, b := p.Interval(known(1.0/48), 1, mu), p.Interval(known(1.0/48), 3, mu); b >= a {
		t.Errorf("weight 3 interval %v not shorter than weight 1's %v", b, a)
	}
}

func TestHinv(t *testing.T) {
	for _, y := range []float64{1e-12, 1e-6, 0.01, 0.2, 0.25, 0.26, 0.5, 0.9, 0.999, 1 - 1e-12} {
		x := hinv(y)
		if got := -math.Expm1(-x) - x*math.Exp(-x); math.Abs(got-y) > 1e-9*max(y, 1e-3) {
			t.Errorf("hinv(%v) = %v: h = %v", y, x, got)
		}
	}
}

// population is a web like the benchmark's: rates log-uniform over 15
// minutes to a year, a tenth never changing.
func population(n int) []Demand {
	rng := rand.New(rand.NewPCG(7, 8))
	d := make([]Demand, n)
	for i := range d {
		d[i].Estimate.Intervals = 5
		if i%10 != 0 {
			d[i].Estimate.Rate = Rate(1 / math.Exp(math.Log(0.25)+rng.Float64()*math.Log(4*8760)))
		}
	}
	return d
}

// TestSolve checks the allocation meets the budget and beats uniform
// recrawl at the same budget in expected freshness.
func TestSolve(t *testing.T) {
	p := mustNew(t, Options{})
	d := population(2000)
	budget := Rate(2000.0 / 72)
	a := p.Solve(d, budget)
	if math.Abs(float64(a.Planned-budget)) > 0.01*float64(budget) {
		t.Errorf("Planned = %v, want %v", a.Planned, budget)
	}
	var opt, uni float64
	for i, x := range d {
		opt += Freshness(x.Estimate.Rate, a.Intervals[i])
		uni += Freshness(x.Estimate.Rate, 72*time.Hour)
	}
	if opt <= uni*1.05 {
		t.Errorf("expected freshness: optimal %.3f, uniform %.3f", opt/2000, uni/2000)
	}
	// Budgets out of reach either way.
	if a := p.Solve(d, 0.01); a.Planned <= 0.01 {
		t.Errorf("tiny budget: Planned %v, want the floor of MaxInterval for all", a.Planned)
	}
	if a := p.Solve(d, 1e9); a.Planned >= 1e9 {
		t.Errorf("huge budget: Planned %v", a.Planned)
	}
}

func TestNutch(t *testing.T) {
	n := Nutch{Initial: 10 * time.Hour, Min: 5 * time.Hour, Max: 15 * time.Hour}
	var pg Page
	steps := []struct {
		changed bool
		want    time.Duration
	}{
		{true, 10 * time.Hour}, // first visit: Initial
		{true, 8 * time.Hour},  // x0.8
		{true, 6*time.Hour + 24*time.Minute},
		{true, 5*time.Hour + 7*time.Minute + 12*time.Second},
		{true, 5 * time.Hour}, // clamped at Min
		{false, 6 * time.Hour},
		{false, 7*time.Hour + 12*time.Minute},
		{false, 8*time.Hour + 38*time.Minute + 24*time.Second},
		{false, 10*time.Hour + 22*time.Minute + 4*time.Second + 800*time.Millisecond},
		{false, 12*time.Hour + 26*time.Minute + 29*time.Second + 760*time.Millisecond},
		{false, 14*time.Hour + 55*time.Minute + 47*time.Second + 712*time.Millisecond},
		{false, 15 * time.Hour}, // clamped at Max
	}
	at := t0
	for i, s := range steps {
		var got time.Duration
		pg, got = n.Visit(pg, Visit{At: at, Changed: s.changed})
		if d := got - s.want; d < -time.Millisecond || d > time.Millisecond {
			t.Errorf("visit %d (changed %v): interval %v, want %v", i, s.changed, got, s.want)
		}
		at = at.Add(got)
	}
	if _, got := Uniform(time.Hour).Visit(Page{}, Visit{At: t0}); got != time.Hour {
		t.Errorf("Uniform(1h) = %v", got)
	}
}

// FuzzObserve feeds arbitrary visit sequences: no panic, and the estimate
// is a finite rate >= 0 whatever the times and dates.
func FuzzObserve(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add([]byte{0, 0, 0, 255, 255, 255, 128, 1, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		p := mustNew(t, Options{Memory: 4})
		var h History
		at := t0
		for len(b) >= 3 {
			at = at.Add(time.Duration(int8(b[0])) * 7 * time.Minute)
			v := Visit{At: at, Changed: b[1]&1 == 1}
			if b[1]&2 != 0 {
				v.LastModified = at.Add(time.Duration(int8(b[2])) * time.Minute)
			}
			h = p.Observe(h, v)
			e := p.Estimate(h)
			if r := float64(e.Rate); math.IsNaN(r) || math.IsInf(r, 0) || r < 0 {
				t.Fatalf("rate %v after %d visits", r, h.Visits)
			}
			if d := p.Interval(e, 1, 5); d < DefaultMinInterval || d > DefaultMaxInterval {
				t.Fatalf("interval %v out of the clamps", d)
			}
			b = b[3:]
		}
	})
}

// TestHistoryEncoding: a History observed over many visits reads back
// equal (times to their stored precision), leaves what follows it, and a
// corrupt encoding is refused by name.
func TestHistoryEncoding(t *testing.T) {
	p, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	var h History
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 50 {
		at = at.Add(time.Duration(1+rng.IntN(72)) * time.Hour)
		v := Visit{At: at, Changed: rng.IntN(3) == 0}
		if i%2 == 0 {
			v.LastModified = at.Add(-time.Duration(rng.IntN(3600)) * time.Second).Truncate(time.Second)
		}
		h = p.Observe(h, v)
	}
	for _, want := range []History{{}, h} {
		b := append(want.AppendBinary(nil), 0xAA, 0xBB)
		got, rest, err := DecodeHistory(b)
		if err != nil || string(rest) != "\xaa\xbb" || got != want || p.Estimate(got) != p.Estimate(want) {
			t.Errorf("DecodeHistory(AppendBinary(%+v)) = %+v, rest %x, %v", want, got, rest, err)
		}
	}
	good := h.AppendBinary(nil)
	nan := append([]byte(nil), good...)
	binary.LittleEndian.PutUint32(nan[len(nan)-4:], math.Float32bits(float32(math.NaN())))
	neg := append([]byte(nil), good...)
	binary.LittleEndian.PutUint32(neg[len(neg)-4:], math.Float32bits(-1))
	for name, b := range map[string][]byte{
		"empty": nil, "version": {2}, "cut": good[:len(good)-1], "NaN": nan, "negative": neg, "varint": {1, 0x80},
	} {
		if _, _, err := DecodeHistory(b); !errors.Is(err, ErrBadHistory) {
			t.Errorf("%s: DecodeHistory = %v, want ErrBadHistory", name, err)
		}
	}
}

func FuzzDecodeHistory(f *testing.F) {
	f.Add(History{}.AppendBinary(nil))
	f.Add(History{Last: time.Unix(1e9, 0), Visits: 3}.AppendBinary(nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, rest, err := DecodeHistory(b)
		if err != nil {
			return
		}
		again, rest2, err := DecodeHistory(append(h.AppendBinary(nil), rest...))
		if err != nil || again != h || string(rest2) != string(rest) {
			t.Fatalf("history does not round-trip: %+v -> %+v, %v", h, again, err)
		}
	})
}

// TestGapShare checks the share of the reachable gain on known figures.
func TestGapShare(t *testing.T) {
	for _, c := range []struct{ f, u, o, want float64 }{
		{0.79, 0.79, 0.85, 0},           // uniform itself
		{0.85, 0.79, 0.85, 1},           // the optimum
		{0.82, 0.79, 0.85, 0.5},         // half the reachable gain
		{0.781, 0.79, 0.846, -9.0 / 56}, // behind uniform: negative
		{0.8, 0.8, 0.8, 0},              // nothing reachable
		{0.9, 0.8, 0.7, 0},              // an optimum below uniform (noise): nothing reachable
	} {
		if got := GapShare(c.f, c.u, c.o); got < c.want-1e-9 || got > c.want+1e-9 {
			t.Errorf("GapShare(%v, %v, %v) = %v, want %v", c.f, c.u, c.o, got, c.want)
		}
	}
}

// TestReference checks uniform's and the optimum's freshness at a budget:
// uniform's is the closed form at len/budget hours; the optimum's is at
// least uniform's (uniform, within the bounds as here, is one of the
// allocations it chooses among) and spends the budget; on pages that all
// change alike the two agree.
func TestReference(t *testing.T) {
	p := mustNew(t, Options{MinInterval: time.Minute, MaxInterval: 24 * time.Hour})
	alike := []float64{1, 1, 1, 1}
	u, o := p.Reference(alike, 2) // every page every 2 hours
	if want := Freshness(1, 2*time.Hour); math.Abs(u-want) > 1e-9 || math.Abs(o-want) > 1e-6 {
		t.Errorf("alike pages: uniform %v, optimum %v; want both %v", u, o, want)
	}
	mixed := []float64{0, 0, 0.01, 0.1, 0.5, 2, 8, 30}
	u, o = p.Reference(mixed, 4)
	if !(o > u) || u <= 0 || o > 1 {
		t.Errorf("mixed pages: uniform %v, optimum %v; want 0 < uniform < optimum <= 1", u, o)
	}
	if u, o := p.Reference(nil, 4); u != 0 || o != 0 {
		t.Errorf("no pages: %v, %v", u, o)
	}
}
