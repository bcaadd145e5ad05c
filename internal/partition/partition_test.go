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
