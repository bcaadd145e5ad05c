package partition

import "testing"

func TestOfStableAndInRange(t *testing.T) {
	// Golden values: a change here re-homes every host of every existing crawl.
	cases := []struct {
		host string
		want ID
	}{
		{"example.com", 38},
		{"a.test", 14},
		{"www.bbc.co.uk", 73},
	}
	for _, c := range cases {
		if got := Of(c.host); got != c.want || got >= Count {
			t.Errorf("Of(%q) = %d, want %d (< %d)", c.host, got, c.want, Count)
		}
	}
	seen := map[ID]bool{}
	for i := 0; i < 5000; i++ {
		seen[Of(string(rune('a'+i%26))+string(rune('a'+i/26%26))+string(rune('a'+i/676))+".test")] = true
	}
	if len(seen) < Count*9/10 {
		t.Errorf("5000 hosts landed in %d partitions, want at least %d", len(seen), Count*9/10)
	}
}

// TestFingerprintRanges: for P = 256 (Count) and counts that do not divide
// 65536, every 16-bit value lands in the one partition whose range holds
// it, the ranges are contiguous, ordered and cover 0..65535.
func TestFingerprintRanges(t *testing.T) {
	for _, count := range []int{Count, 1, 3, 100, 255, 1000} {
		next := uint32(0) // the first value the next partition's range must start at
		for p := range count {
			lo, hi := fingerprintRange(ID(p), count)
			if uint32(lo) != next || hi < lo {
				t.Fatalf("count %d: fingerprintRange(%d) = %d..%d, want a range from %d", count, p, lo, hi, next)
			}
			for _, v := range []uint16{lo, hi, lo + (hi-lo)/2} {
				if got := ofFingerprint(v, count); got != ID(p) {
					t.Errorf("count %d: ofFingerprint(%d) = %d, want %d (range %d..%d)", count, v, got, p, lo, hi)
				}
			}
			if lo > 0 && ofFingerprint(lo-1, count) == ID(p) {
				t.Errorf("count %d: ofFingerprint(%d) = %d, below its range %d..%d", count, lo-1, p, lo, hi)
			}
			next = uint32(hi) + 1
		}
		if next != 1<<16 {
			t.Errorf("count %d: the ranges end at %d, want 65536", count, next)
		}
	}
	// Golden values for Count (256): the top byte.
	cases := []struct {
		v    uint16
		want ID
	}{{0, 0}, {0x00ff, 0}, {0x0100, 1}, {0xab12, 0xab}, {0xffff, 255}}
	for _, c := range cases {
		if got := OfFingerprint(c.v); got != c.want {
			t.Errorf("OfFingerprint(%#04x) = %d, want %d", c.v, got, c.want)
		}
	}
	if lo, hi := FingerprintRange(0xab); lo != 0xab00 || hi != 0xabff {
		t.Errorf("FingerprintRange(0xab) = %#x..%#x, want 0xab00..0xabff", lo, hi)
	}
	// A count that does not divide 65536: 100 partitions of 655 or 656 values.
	if lo, hi := fingerprintRange(1, 100); lo != 656 || hi != 1310 {
		t.Errorf("fingerprintRange(1, 100) = %d..%d, want 656..1310", lo, hi)
	}
}
