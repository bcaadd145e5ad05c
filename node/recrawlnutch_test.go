package node

import (
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/internal/store/urlstate"
	"github.com/trawl-crawler/trawl/recrawl"
)

// TestNutchInterval walks one page through the Nutch schedule as the node
// keeps it: the interval (read back from the record's due time where the
// schedule entry's is not known) is shrunk by a fifth after a fetch whose
// digest differed, grown by a fifth after one whose digest did not (or a
// 304), within the bounds; the entry's own interval wins over a due time
// a sitemap brought forward, and a failed fetch leaves it as it was.
func TestNutchInterval(t *testing.T) {
	n := recrawl.Nutch{Initial: time.Minute, Min: 20 * time.Second, Max: 3 * time.Minute}
	t0 := time.Date(2026, 6, 1, 0, 0, 0, 400_000_000, time.UTC)
	digest := func(b byte) urlstate.Observation {
		return urlstate.Observation{Status: 200, HasDigest: true, Digest: [32]byte{b}}
	}
	rec := urlstate.Record{}
	at := t0
	for i, step := range []struct {
		obs  urlstate.Observation
		want time.Duration
	}{
		{digest(1), time.Minute},                           // first fetch: the initial interval
		{digest(1), 72 * time.Second},                      // same digest: grown
		{digest(2), 57*time.Second + 600*time.Millisecond}, // changed: shrunk
		{urlstate.Observation{Status: 304, NotModified: true}, 69*time.Second + 120*time.Millisecond},
		{digest(3), 55*time.Second + 296*time.Millisecond},
	} {
		prev := rec
		o := step.obs
		o.At = at
		rec = prev.Observe(o)
		got := nutchInterval(n, 0, prev, rec)
		// The entry's due time is whole seconds (reschedule): the next
		// interval is read from it, so allow a second either way.
		if d := got - step.want; d < -time.Second || d > time.Second {
			t.Errorf("fetch %d: interval %v, want %v", i+1, got, step.want)
		}
		rec.Due = rec.LastFetch.Add(got).Truncate(time.Second)
		at = rec.Due.Add(300 * time.Millisecond)
	}
	// The bounds hold whatever the history.
	rec = urlstate.Record{LastFetch: t0, Due: t0.Add(25 * time.Second).Truncate(time.Second), HasDigest: true, Digest: [32]byte{1}}
	next := rec.Observe(urlstate.Observation{At: t0.Add(26 * time.Second), Status: 200, HasDigest: true, Digest: [32]byte{9}})
	if got := nutchInterval(n, 0, rec, next); got != n.Min {
		t.Errorf("a changed page at 25 s: interval %v, want the minimum %v", got, n.Min)
	}
	rec.Due = t0.Add(170 * time.Second).Truncate(time.Second)
	next = rec.Observe(urlstate.Observation{At: t0.Add(171 * time.Second), Status: 200, HasDigest: true, Digest: [32]byte{1}})
	if got := nutchInterval(n, 0, rec, next); got != n.Max {
		t.Errorf("an unchanged page at 170 s: interval %v, want the maximum %v", got, n.Max)
	}
	// A sitemap's lastmod brought the page forward: its due time is 5 s
	// after its fetch, its entry still says 2 minutes. Unchanged: grown
	// from the 2 minutes, not from the 5 s.
	rec = urlstate.Record{LastFetch: t0, Due: t0.Add(5 * time.Second).Truncate(time.Second), HasDigest: true, Digest: [32]byte{1}}
	next = rec.Observe(urlstate.Observation{At: t0.Add(6 * time.Second), Status: 200, HasDigest: true, Digest: [32]byte{1}})
	if got, want := nutchInterval(n, 2*time.Minute, rec, next), 144*time.Second; got != want {
		t.Errorf("a page brought forward, unchanged: interval %v, want %v (its 2 minutes grown)", got, want)
	}
	// A failed fetch (no response): the interval stays, whatever the last
	// answer said.
	changed := rec.Observe(urlstate.Observation{At: t0.Add(time.Minute), Status: 200, HasDigest: true, Digest: [32]byte{7}})
	failed := changed.Observe(urlstate.Observation{At: t0.Add(2 * time.Minute), Error: "timeout"})
	if got := nutchInterval(n, 90*time.Second, changed, failed); got != 90*time.Second {
		t.Errorf("a failed fetch: interval %v, want the 90 s it had", got)
	}
}
