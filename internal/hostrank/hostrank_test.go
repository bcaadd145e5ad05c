package hostrank

import (
	"fmt"
	"hash/maphash"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// clock is a fake clock.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }
func newClock() *clock                   { return &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }
func mustNew(t testing.TB, o Options) *Ranking {
	t.Helper()
	r, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestOptionsValidate(t *testing.T) {
	for _, c := range []struct {
		name string
		o    Options
		bad  []string // fields named in the error
	}{
		{"zero", Options{}, nil},
		{"set", Options{K: 50, Shards: 4, HalfLife: time.Second, Window: time.Hour, Smoothing: 1}, nil},
		{"negative K", Options{K: -1}, []string{"K"}},
		{"K too big", Options{K: MaxK + 1}, []string{"K"}},
		{"shards not a power of two", Options{Shards: 6}, []string{"Shards"}},
		{"everything", Options{K: -1, Shards: -2, HalfLife: -1, Window: -1, Smoothing: 1.5}, []string{"K", "Shards", "HalfLife", "Window", "Smoothing"}},
		{"NaN smoothing", Options{Smoothing: math.NaN()}, []string{"Smoothing"}},
	} {
		err := c.o.Validate()
		if (err != nil) != (len(c.bad) > 0) {
			t.Errorf("%s: Validate() = %v, want an error naming %v", c.name, err, c.bad)
			continue
		}
		for _, f := range c.bad {
			if !strings.Contains(err.Error(), "option "+f+" = ") {
				t.Errorf("%s: Validate() = %v, does not name %s", c.name, err, f)
			}
		}
		if _, nerr := New(c.o); (nerr != nil) != (err != nil) {
			t.Errorf("%s: New's error %v, Validate's %v", c.name, nerr, err)
		}
	}
}

// step is one thing that happens to a Ranking in a table test: time
// passes, then host gets n requests of d each.
type step struct {
	after time.Duration
	host  string
	n     int
	d     time.Duration
}

func run(r *Ranking, c *clock, steps []step) {
	for _, s := range steps {
		c.advance(s.after)
		for range s.n {
			r.Observe(s.host, s.d)
		}
	}
}

func TestBusiest(t *testing.T) {
	const hl = 10 * time.Second
	lambda := math.Ln2 / hl.Seconds()
	for _, c := range []struct {
		name  string
		opts  Options
		steps []step
		want  []string  // hosts, busiest first
		rates []float64 // their rates (req/s), within 1e-9 relative; nil: not checked
	}{
		{name: "empty", want: []string{}},
		{name: "by count", steps: []step{{0, "a", 1, 0}, {0, "b", 3, 0}, {0, "c", 2, 0}},
			want: []string{"b", "c", "a"}, rates: []float64{3 * lambda, 2 * lambda, lambda}},
		{name: "ties by name", steps: []step{{0, "b", 2, 0}, {0, "a", 2, 0}}, want: []string{"a", "b"}},
		{name: "a half-life halves", steps: []step{{0, "a", 4, 0}, {hl, "b", 3, 0}},
			want: []string{"b", "a"}, rates: []float64{3 * lambda, 2 * lambda}},
		{name: "old activity fades", opts: Options{Window: time.Hour}, steps: []step{{0, "old", 100, 0}, {10 * hl, "new", 1, 0}},
			want: []string{"new", "old"}, rates: []float64{lambda, 100 * lambda / 1024}},
		{name: "outside the window", opts: Options{Window: hl}, steps: []step{{0, "old", 5, 0}, {hl + 1, "new", 1, 0}},
			want: []string{"new"}},
		{name: "at most K per shard, the heavy kept", opts: Options{K: 2, Shards: 1},
			steps: []step{{0, "heavy", 10, 0}, {0, "x", 1, 0}, {0, "y", 1, 0}, {0, "z", 1, 0}},
			want:  []string{"heavy", "z"}, rates: []float64{10 * lambda, 3 * lambda}}, // z inherits y's 2 (x's 1 + its own)
		{name: "rescaled after many half-lives", opts: Options{Window: 1000 * hl},
			steps: []step{{0, "a", 1, 0}, {100 * hl, "b", 2, 0}, {100 * hl, "a", 3, 0}},
			want:  []string{"a", "b"}, rates: []float64{3 * lambda, 2 * lambda * math.Pow(2, -100)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			clk := newClock()
			o := c.opts
			o.HalfLife, o.Now = hl, clk.now
			r := mustNew(t, o)
			run(r, clk, c.steps)
			got := r.Busiest(100)
			hosts := []string{}
			for _, b := range got {
				hosts = append(hosts, b.Host)
			}
			if !slices.Equal(hosts, c.want) {
				t.Fatalf("Busiest = %v, want hosts %v", got, c.want)
			}
			for i, want := range c.rates {
				if math.Abs(got[i].Rate-want) > 1e-9*want {
					t.Errorf("Busiest()[%d] = %+v, want rate %g", i, got[i], want)
				}
			}
			if n := len(r.Busiest(1)); n != min(1, len(c.want)) {
				t.Errorf("Busiest(1) has %d hosts", n)
			}
		})
	}
}

// TestBusiestRate: a host fetched steadily for many half-lives has its
// rate as Rate.
func TestBusiestRate(t *testing.T) {
	clk := newClock()
	r := mustNew(t, Options{HalfLife: 10 * time.Second, Now: clk.now})
	for range 2000 { // 200 s, 20 half-lives, at 10/s
		clk.advance(100 * time.Millisecond)
		r.Observe("steady", 0)
	}
	if got := r.Busiest(1)[0]; math.Abs(got.Rate-10) > 0.2 || got.Over != 0 {
		t.Errorf("Busiest = %+v, want a rate of 10/s, nothing over", got)
	}
}

// TestSpaceSavingBound: over random skewed streams, every host listed has
// its true decayed rate within [Rate-Over, Rate], and every host whose
// true rate is over a K-th of its shard's total is listed.
func TestSpaceSavingBound(t *testing.T) {
	const k, hl = 8, 5 * time.Second
	lambda := math.Ln2 / hl.Seconds()
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 1))
		clk := newClock()
		r := mustNew(t, Options{K: k, Shards: 1, HalfLife: hl, Window: time.Hour, Now: clk.now})
		type req struct {
			host string
			at   time.Time
		}
		var reqs []req
		hosts := 20 + rng.IntN(200)
		for range 3000 {
			clk.advance(time.Duration(rng.IntN(20)) * time.Millisecond)
			// Zipf-like: host i with weight ~ 1/(i+1).
			h := fmt.Sprintf("h%d", int(math.Exp(rng.Float64()*math.Log(float64(hosts))))-1)
			r.Observe(h, 0)
			reqs = append(reqs, req{h, clk.t})
		}
		truth, total := map[string]float64{}, 0.0
		for _, q := range reqs {
			v := lambda * math.Exp(-lambda*clk.t.Sub(q.at).Seconds())
			truth[q.host] += v
			total += v
		}
		listed := map[string]bool{}
		for _, b := range r.Busiest(k) {
			listed[b.Host] = true
			if tr := truth[b.Host]; tr > b.Rate*(1+1e-9) || tr < (b.Rate-b.Over)*(1-1e-9)-1e-12 {
				t.Errorf("seed %d: %+v: true rate %g not within [Rate-Over, Rate]", seed, b, tr)
			}
		}
		for h, tr := range truth {
			if tr > total/k && !listed[h] {
				t.Errorf("seed %d: %s has %.2f of the rate (over 1/%d) but is not listed", seed, h, tr/total, k)
			}
		}
	}
}

func TestSlowest(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		name  string
		opts  Options
		steps []step
		want  []Slow
	}{
		{name: "empty", want: []Slow{}},
		{name: "by mean", steps: []step{{0, "a", 1, 10 * ms}, {0, "b", 1, 30 * ms}, {0, "c", 1, 20 * ms}},
			want: []Slow{{"b", 30 * ms, 1}, {"c", 20 * ms, 1}, {"a", 10 * ms, 1}}},
		{name: "moving average", opts: Options{Smoothing: 0.5}, steps: []step{{0, "a", 1, 100 * ms}, {0, "a", 1, 20 * ms}, {0, "b", 1, 50 * ms}},
			want: []Slow{{"a", 60 * ms, 2}, {"b", 50 * ms, 1}}},
		{name: "a slower host takes the fastest's place", opts: Options{K: 2, Shards: 1},
			steps: []step{{0, "a", 1, 10 * ms}, {0, "b", 1, 30 * ms}, {0, "c", 1, 20 * ms}},
			want:  []Slow{{"b", 30 * ms, 1}, {"c", 20 * ms, 1}}},
		{name: "a faster one does not", opts: Options{K: 2, Shards: 1},
			steps: []step{{0, "a", 1, 10 * ms}, {0, "b", 1, 30 * ms}, {0, "c", 1, 5 * ms}},
			want:  []Slow{{"b", 30 * ms, 1}, {"a", 10 * ms, 1}}},
		{name: "a stale host gives its place to any", opts: Options{K: 2, Shards: 1, Window: time.Second},
			steps: []step{{0, "old", 1, 900 * ms}, {0, "b", 1, 30 * ms}, {2 * time.Second, "b", 1, 30 * ms}, {0, "fast", 1, ms}},
			want:  []Slow{{"b", 30 * ms, 2}, {"fast", ms, 1}}},
		{name: "outside the window", opts: Options{Window: time.Second},
			steps: []step{{0, "old", 1, 900 * ms}, {2 * time.Second, "new", 1, ms}},
			want:  []Slow{{"new", ms, 1}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			clk := newClock()
			o := c.opts
			o.Now = clk.now
			r := mustNew(t, o)
			run(r, clk, c.steps)
			got := r.Slowest(100)
			if got == nil {
				got = []Slow{}
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("Slowest = %v, want %v", got, c.want)
			}
		})
	}
}

// TestBounded: a million distinct hosts leave at most K per shard in each
// ranking, none twice.
func TestBounded(t *testing.T) {
	clk := newClock()
	o := Options{K: 4, Shards: 4, Now: clk.now}
	r := mustNew(t, o)
	for i := range 1_000_000 {
		if i%1000 == 0 {
			clk.advance(time.Millisecond)
		}
		r.Observe(fmt.Sprintf("host-%d.test", i), time.Duration(i%977)*time.Microsecond)
	}
	if n, limit := r.kept(), 2*o.K*o.Shards; n > limit {
		t.Errorf("%d hosts kept, want at most %d", n, limit)
	}
	if b, s := len(r.Busiest(100)), len(r.Slowest(100)); b != o.K*o.Shards || s != o.K*o.Shards {
		t.Errorf("Busiest lists %d, Slowest %d; want %d each", b, s, o.K*o.Shards)
	}
	for i := range r.shards {
		s := &r.shards[i]
		seen := map[string]bool{}
		for _, b := range s.busy {
			if seen[b.host] || b.hash != maphash.String(r.seed, b.host) {
				t.Fatalf("shard %d: busy %s twice or with a wrong hash", i, b.host)
			}
			seen[b.host] = true
		}
		clear(seen)
		for _, e := range s.slow {
			if seen[e.host] || e.hash != maphash.String(r.seed, e.host) {
				t.Fatalf("shard %d: slow %s twice or with a wrong hash", i, e.host)
			}
			seen[e.host] = true
		}
	}
}

// TestConcurrent observes and reads from many goroutines (for -race).
func TestConcurrent(t *testing.T) {
	r := mustNew(t, Options{K: 4})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 5000 {
				r.Observe(fmt.Sprintf("h%d", (g*7919+i)%300), time.Duration(i))
			}
		})
	}
	wg.Go(func() {
		for range 200 {
			r.Busiest(10)
			r.Slowest(10)
		}
	})
	wg.Wait()
	if len(r.Busiest(10)) != 10 || len(r.Slowest(10)) != 10 {
		t.Errorf("Busiest %v, Slowest %v: want 10 each", r.Busiest(10), r.Slowest(10))
	}
}

// benchHosts are n host names as the frontier hands them out.
func benchHosts(n int) []string {
	hs := make([]string, n)
	for i := range hs {
		hs[i] = fmt.Sprintf("host-%d.example.org", i)
	}
	return hs
}

// BenchmarkObserve is the cost per request on the worker's path: a few
// hosts (every request finds its host kept), many (most evict one), and
// many from parallel workers. The many are 16K, not a million, so that the
// benchmark measures Observe, not its own cache misses reading a million
// names (a worker's host name is in cache when it calls Observe).
func BenchmarkObserve(b *testing.B) {
	for _, c := range []struct {
		name  string
		hosts int
	}{{"hosts=10", 10}, {"hosts=16K", 1 << 14}} {
		hs := benchHosts(c.hosts)
		b.Run(c.name, func(b *testing.B) {
			r := mustNew(b, Options{})
			i := 0
			for b.Loop() {
				r.Observe(hs[i%len(hs)], time.Duration(i&1023)*time.Microsecond)
				i++
			}
		})
	}
	hs := benchHosts(1 << 14)
	b.Run("hosts=16K/parallel", func(b *testing.B) {
		r := mustNew(b, Options{})
		b.RunParallel(func(pb *testing.PB) {
			i := rand.IntN(len(hs))
			for pb.Next() {
				r.Observe(hs[i&(len(hs)-1)], time.Duration(i&1023)*time.Microsecond)
				i++
			}
		})
	})
}

// BenchmarkRead is a /v1/stats call's cost for the rankings.
func BenchmarkRead(b *testing.B) {
	r := mustNew(b, Options{})
	for i, h := range benchHosts(100_000) {
		r.Observe(h, time.Duration(i%1000)*time.Microsecond)
	}
	for b.Loop() {
		r.Busiest(10)
		r.Slowest(10)
	}
}
