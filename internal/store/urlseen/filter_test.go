package urlseen

import (
	"fmt"
	"sync"
	"testing"
)

// fpRate is the share of probes, never added, that f calls maybe present.
func fpRate(f *filter, probes int) float64 {
	fp := 0
	for i := range probes {
		if f.test(f.hash(fmt.Appendf(nil, "http://h%d.test/out/%d", i%97, i))) {
			fp++
		}
	}
	return float64(fp) / float64(probes)
}

// fillFilter adds keys [0, n) to f and fails on a false negative among
// them afterwards.
func fillFilter(t *testing.T, f *filter, n int) {
	t.Helper()
	for i := range n {
		f.testAndAdd(f.hash(fmt.Appendf(nil, "http://h%d.test/in/%d", i%97, i)))
	}
	for i := range n {
		if k := fmt.Appendf(nil, "http://h%d.test/in/%d", i%97, i); !f.test(f.hash(k)) {
			t.Fatalf("%s added but reported absent (a false negative)", k)
		}
	}
}

// TestFilterGrows: a filter that takes up to 127 times the keys it was
// sized for keeps its false-positive rate below twice the target (127
// times fills 7 layers: every layer full, the worst point), where a
// filter that cannot grow answers "maybe" for nearly every new key (each
// a store read in the seen gate). Its memory per key is logged.
func TestFilterGrows(t *testing.T) {
	const p, n0 = 0.01, 2_500
	for _, times := range []int{1, 2, 16, 127} {
		f := newFilter(uint(n0), p, 0)
		f.grow()
		fillFilter(t, f, times*n0)
		rate := fpRate(f, 100_000)
		if rate > 2*p {
			t.Errorf("%dx the expected keys: false-positive rate %.4f, want below %v (twice the target)", times, rate, 2*p)
		}
		// Layers of 1, 2, 4, ... times n0: 16 n0 keys need 5 (15 n0 fit in 4).
		want := map[int]int{1: 1, 2: 2, 16: 5, 127: 7}[times]
		if got := f.count(); got != want {
			t.Errorf("%dx the expected keys: %d layers, want %d", times, got, want)
		}
		t.Logf("%2dx the expected keys: %d layers, false-positive rate %.4f, %.1f bits a key", times, f.count(), rate, float64(8*f.bytes())/float64(times*n0))
	}

	fixed := newFilter(uint(n0), p, 0) // never switched to growing, as while loading
	fillFilter(t, fixed, 16*n0)
	if rate := fpRate(fixed, 20_000); rate < 0.5 || fixed.count() != 1 {
		t.Errorf("a filter that may not grow, at 16x its keys: %d layers, false-positive rate %.4f; want 1 layer and a rate above 0.5 (else this test shows nothing)", fixed.count(), rate)
	}
}

// TestFilterCap: past maxBytes no layer is added; the filter saturates
// but never loses a key.
func TestFilterCap(t *testing.T) {
	const n0, p = 2_000, 0.01
	one := bloomBytes(n0, p)
	two := one + bloomBytes(2*n0, layerRate(p, 1)) // the first two layers
	three := two + bloomBytes(4*n0, layerRate(p, 2))
	for _, tc := range []struct {
		maxBytes   int64
		wantLayers int
	}{
		{1, 1},           // below the first layer: it is made anyway, and no other
		{two, 2},         // room for exactly two layers
		{three - 1, 2},   // not quite room for a third
		{0, 5},           // no cap
		{three * 100, 5}, // a cap never reached
	} {
		f := newFilter(n0, p, tc.maxBytes)
		f.grow()
		fillFilter(t, f, 16*n0)
		if got := f.count(); got != tc.wantLayers {
			t.Errorf("maxBytes %d: %d layers (%d bytes), want %d", tc.maxBytes, got, f.bytes(), tc.wantLayers)
		}
		if tc.maxBytes > one && f.bytes() > tc.maxBytes {
			t.Errorf("maxBytes %d: the filter takes %d bytes", tc.maxBytes, f.bytes())
		}
		// What the metrics show: the cap reached, or not.
		st, capped := f.stats(), tc.wantLayers < 5
		if st.Layers != f.count() || st.Bytes != f.bytes() || st.Capped != capped || st.Keys <= 0 || st.Keys > 16*n0 {
			t.Errorf("maxBytes %d: stats %+v; want %d layers, %d bytes, capped %v, and 1 to %d keys", tc.maxBytes, st, f.count(), f.bytes(), capped, 16*n0)
		}
	}
}

// TestFilterGrowsConcurrently adds disjoint keys from several goroutines
// while layers are added (run with -race): no key is lost, whichever
// layer took it.
func TestFilterGrowsConcurrently(t *testing.T) {
	f := newFilter(500, 0.01, 0)
	f.grow()
	const goroutines, each = 8, 4000
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				f.testAndAdd(f.hash(fmt.Appendf(nil, "g%d/%d", g, i)))
				if i%7 == 0 {
					f.test(f.hash(fmt.Appendf(nil, "g%d/%d", g, i/2)))
				}
			}
		})
	}
	wg.Wait()
	for g := range goroutines {
		for i := range each {
			if !f.test(f.hash(fmt.Appendf(nil, "g%d/%d", g, i))) {
				t.Fatalf("g%d/%d lost", g, i)
			}
		}
	}
	if f.count() < 5 {
		t.Errorf("%d layers after %d keys in a filter sized for 500; want at least 5", f.count(), goroutines*each)
	}
}

func BenchmarkFilterTest(b *testing.B) {
	for _, layers := range []int{1, 4} {
		b.Run(fmt.Sprintf("layers=%d", layers), func(b *testing.B) {
			const n0 = 100_000
			f := newFilter(n0, 0.01, 0)
			f.grow()
			for i := 0; f.count() < layers; i++ {
				f.testAndAdd(uint64(i) * 0x9e3779b97f4a7c15)
			}
			b.ResetTimer()
			for i := range b.N {
				f.test(uint64(i)*0xbf58476d1ce4e5b9 + 1) // mostly absent: every layer is read
			}
		})
	}
}
