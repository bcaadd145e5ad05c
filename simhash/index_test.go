package simhash

import (
	"bytes"
	"math/bits"
	"math/rand/v2"
	"testing"
)

// TestIndexFindsEveryNearFingerprint: against a linear scan, over random
// stored fingerprints and queries made by flipping 0 to 5 random bits of
// a stored one: Near reports exactly the stored fingerprints within the
// distance asked (up to MaxNear), each once.
func TestIndexFindsEveryNearFingerprint(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	x := NewIndex[int]()
	var stored []uint64
	for i := range 3000 {
		fp := rng.Uint64()
		if i%10 == 0 && len(stored) > 0 { // near copies of earlier ones
			fp = flip(rng, stored[rng.IntN(len(stored))], rng.IntN(5))
		}
		stored = append(stored, fp)
		x.Add(fp, i)
	}
	for q := range 4000 {
		query := flip(rng, stored[rng.IntN(len(stored))], rng.IntN(6))
		maxDist := q % (MaxNear + 1)
		want := map[int]bool{}
		for i, fp := range stored {
			if bits.OnesCount64(fp^query) <= maxDist {
				want[i] = true
			}
		}
		got := map[int]bool{}
		x.Near(query, maxDist, func(fp uint64, d int, v int) bool {
			if got[v] {
				t.Fatalf("query %x: entry %d reported twice", query, v)
			}
			if d != Distance(fp, query) || d > maxDist || fp != stored[v] {
				t.Fatalf("query %x: reported %x at distance %d for entry %d", query, fp, d, v)
			}
			got[v] = true
			return true
		})
		if len(got) != len(want) {
			t.Fatalf("query %x within %d: found %d, a scan finds %d", query, maxDist, len(got), len(want))
		}
	}
}

func flip(rng *rand.Rand, fp uint64, n int) uint64 {
	for _, b := range rng.Perm(64)[:n] {
		fp ^= 1 << b
	}
	return fp
}

func TestIndexStopsEarly(t *testing.T) {
	x := NewIndex[string]()
	x.Add(0, "a")
	x.Add(1, "b")
	x.Add(3, "c")
	n := 0
	if !x.Near(0, MaxNear, func(uint64, int, string) bool { n++; return false }) || n != 1 {
		t.Errorf("Near went on after fn returned false: %d calls", n)
	}
	if x.Near(^uint64(0), MaxNear, func(uint64, int, string) bool { return true }) {
		t.Error("Near found something 61+ bits away")
	}
	if x.Len() != 3 {
		t.Errorf("Len = %d", x.Len())
	}
}

// TestBandKey: a band's fingerprints share the key prefix, and the keys
// of one band sort by band value, then by fingerprint.
func TestBandKey(t *testing.T) {
	a, b := uint64(0x1111_2222_3333_4444), uint64(0x9999_2222_3333_0000)
	ka, kb := BandKey(nil, a, 1), BandKey(nil, b, 1)
	if len(ka) != BandPrefixLen+8 || !bytes.Equal(ka[:BandPrefixLen], kb[:BandPrefixLen]) {
		t.Fatalf("band 1 keys %x and %x do not share a prefix", ka, kb)
	}
	if got := BandKey(nil, a, 0); !bytes.Equal(got[:BandPrefixLen], []byte{0, 0x44, 0x44}) {
		t.Errorf("band 0 key of %x = %x", a, got)
	}
	if bytes.Compare(ka, kb) >= 0 {
		t.Errorf("keys of one band value do not sort by fingerprint")
	}
}

func BenchmarkIndexNear(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	x := NewIndex[int32]()
	for i := range 1_000_000 {
		x.Add(rng.Uint64(), int32(i))
	}
	qs := make([]uint64, 1024)
	for i := range qs {
		qs[i] = rng.Uint64()
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		x.Near(qs[i%len(qs)], MaxNear, func(uint64, int, int32) bool { return true })
	}
}
