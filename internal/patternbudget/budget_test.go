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
	const key = "a.test/page#.html"
	for i := 1; i <= 5; i++ {
		if got, want := b.Admit(1, key, 3, 2), i <= 3; got != want {
			t.Errorf("Admit #%d with base 3 = %v, want %v", i, got, want)
		}
	}
	if !b.Admit(2, key, 3, 2) {
		t.Errorf("another job's first URL of the pattern was refused")
	}
	if !b.Admit(1, "b.test/page#.html", 3, 2) {
		t.Errorf("another host's first URL of the pattern was refused")
	}
	if q, e := b.Count(1, key); q != 3 || e != 0 {
		t.Errorf("Count = %d queued, %d earned after 3 URLs admitted and 2 refused, want 3 and 0", q, e)
	}
	// Each unit earned makes room for 2 more, and only 2.
	b.Earn(1, key)
	for i := 1; i <= 3; i++ {
		if got, want := b.Admit(1, key, 3, 2), i <= 2; got != want {
			t.Errorf("Admit #%d after one unit earned = %v, want %v", i, got, want)
		}
	}
	if !b.Full(1, key, 3, 2) || b.Full(1, key, 3, 3) {
		t.Errorf("Full: 5 queued, 1 earned: want full with 2 per unit, not with 3")
	}
	if q, e := b.Count(1, key); q != 5 || e != 1 {
		t.Errorf("Count = %d queued, %d earned, want 5 and 1", q, e)
	}
	if q, e := b.Count(2, key); q != 1 || e != 0 {
		t.Errorf("another job's Count = %d queued, %d earned, want 1 and 0", q, e)
	}
	if got := b.Bytes(); got != 8*DefaultRows*DefaultWidth {
		t.Errorf("Bytes = %d, want %d", got, 8*DefaultRows*DefaultWidth)
	}
}

func TestRoom(t *testing.T) {
	for _, tc := range []struct {
		base, per int
		earned    uint32
		want      int64
	}{
		{64, 4, 0, 64},
		{64, 4, 10, 104},
		{64, 0, 10, 64},
		{1, 4, 1 << 31, 1 + 4<<31}, // no overflow
	} {
		if got := Room(tc.base, tc.per, tc.earned); got != tc.want {
			t.Errorf("Room(%d, %d, %d) = %d, want %d", tc.base, tc.per, tc.earned, got, tc.want)
		}
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
				b.Earn(uint32(w%2), k)
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
		got, earned := b.Count(job, key)
		if got < n || earned < n {
			t.Fatalf("Count(%d, %q) = %d queued, %d earned, below the true %d", job, key, got, earned, n)
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
