package patternbudget

import (
	"fmt"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestAdmit(t *testing.T) {
	b := New(Options{})
	for i := 1; i <= 5; i++ {
		if got, want := b.Admit(1, "a.test/page#.html", 3), i <= 3; got != want {
			t.Errorf("Admit #%d with max 3 = %v, want %v", i, got, want)
		}
	}
	if !b.Admit(2, "a.test/page#.html", 3) {
		t.Errorf("another job's first URL of the pattern was refused")
	}
	if !b.Admit(1, "b.test/page#.html", 3) {
		t.Errorf("another host's first URL of the pattern was refused")
	}
	if got := b.Count(1, "a.test/page#.html"); got != 5 {
		t.Errorf("Count = %d after 5 Adds, want 5", got)
	}
	if got := b.Bytes(); got != 4*DefaultRows*DefaultWidth {
		t.Errorf("Bytes = %d, want %d", got, 4*DefaultRows*DefaultWidth)
	}
}

// TestNeverUndercounts fills a deliberately small sketch with many keys
// and checks that every estimate is at least the true count, and that
// most are exact.
func TestNeverUndercounts(t *testing.T) {
	b := New(Options{Rows: 4, Width: 1 << 12})
	truth := map[string]uint32{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 5000 {
				k := fmt.Sprintf("h%d.test/p%d", w, i%700)
				b.Add(uint32(w%2), k)
				mu.Lock()
				truth[fmt.Sprintf("%d %s", w%2, k)]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	exact := 0
	for k, n := range truth {
		var job uint32
		var key string
		fmt.Sscanf(k, "%d %s", &job, &key)
		got := b.Count(job, key)
		if got < n {
			t.Fatalf("Count(%d, %q) = %d, below the true %d", job, key, got, n)
		}
		if got == n {
			exact++
		}
	}
	if exact*10 < len(truth)*9 {
		t.Errorf("%d of %d counts exact, want at least 90%%", exact, len(truth))
	}
}

func TestOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		o  Options
		ok bool
	}{
		{Options{}, true},
		{Options{Rows: 2, Width: 1000}, true},
		{Options{Rows: -1}, false},
		{Options{Width: 1 << 30}, false},
	} {
		if err := tc.o.Validate(); (err == nil) != tc.ok {
			t.Errorf("Validate(%+v) = %v, want ok %v", tc.o, err, tc.ok)
		}
	}
}
