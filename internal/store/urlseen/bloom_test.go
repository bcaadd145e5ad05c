package urlseen

import (
	"fmt"
	"hash/maphash"
	"sync"
	"testing"
)

// TestBlockedBloomRates: no false negatives, and a false-positive rate
// near the target at the expected count.
func TestBlockedBloomRates(t *testing.T) {
	for _, tc := range []struct {
		n    uint
		p    float64
		maxP float64 // the rate measured must stay below this
	}{
		{10_000, 0.01, 0.015},
		{200_000, 0.01, 0.015},
		{200_000, 0.001, 0.002},
	} {
		f := newBlockedBloom(tc.n, tc.p)
		for i := range tc.n {
			if f.testAndAdd(f.hashString(fmt.Sprintf("http://h%d.test/in/%d", i%97, i))) && i < 10 {
				t.Errorf("n=%d: key %d reported present before it was added (filter nearly empty)", tc.n, i)
			}
		}
		for i := range tc.n {
			k := fmt.Sprintf("http://h%d.test/in/%d", i%97, i)
			if !f.test(f.hashString(k)) || !f.test(f.hashBytes([]byte(k))) {
				t.Fatalf("n=%d: %s added but reported absent (a false negative)", tc.n, k)
			}
		}
		const probes = 200_000
		fp := 0
		for i := range probes {
			if f.test(f.hashString(fmt.Sprintf("http://h%d.test/out/%d", i%97, i))) {
				fp++
			}
		}
		if rate := float64(fp) / probes; rate > tc.maxP {
			t.Errorf("n=%d p=%v: false-positive rate %.4f, want below %v", tc.n, tc.p, rate, tc.maxP)
		} else {
			t.Logf("n=%d p=%v: false-positive rate %.4f (%d blocks)", tc.n, tc.p, rate, len(f.blocks))
		}
	}
}

// TestBlockedBloomConcurrent adds disjoint keys from several goroutines
// (as the seen gate's stripes do) and checks none is lost.
func TestBlockedBloomConcurrent(t *testing.T) {
	f := newBlockedBloom(1000, 0.01) // small, so goroutines share blocks
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 2000 {
				f.testAndAdd(f.hashString(fmt.Sprintf("g%d/%d", g, i)))
			}
		})
	}
	wg.Wait()
	for g := range 8 {
		for i := range 2000 {
			if !f.test(f.hashString(fmt.Sprintf("g%d/%d", g, i))) {
				t.Fatalf("g%d/%d lost", g, i)
			}
		}
	}
}

func BenchmarkBlockedBloomTestAndAdd(b *testing.B) {
	f := newBlockedBloom(10_000_000, 0.01)
	keys := make([]uint64, 1<<16)
	for i := range keys {
		keys[i] = f.hashString(fmt.Sprintf("http://h%07d.bench.test/p/%d", i%1000, i))
	}
	b.ResetTimer()
	for i := range b.N {
		f.testAndAdd(keys[i&(len(keys)-1)] + uint64(i>>16))
	}
}

// hashString is hashBytes of a string's bytes, without the copy.
func (f *blockedBloom) hashString(s string) uint64 { return maphash.String(f.seed, s) }
