package frontier

import (
	"slices"
	"testing"
	"time"
)

// TestRetryGoesToTheTail: a fetch that failed and is retried (Requeue with
// Retry) goes after its host's other URLs, so one URL that keeps timing out
// does not hold up its host; a plain Requeue (the slot used for robots.txt)
// keeps its place at the head. Both stay counted as queued.
func TestRetryGoesToTheTail(t *testing.T) {
	for _, c := range []struct {
		name  string
		o     Outcome
		order []string
	}{
		{"retry", Outcome{Timeout: true, Requeue: true, Retry: true}, []string{"http://a/p0", "http://a/p1", "http://a/p2", "http://a/p0"}},
		{"requeue", Outcome{NotStarted: true, Requeue: true}, []string{"http://a/p0", "http://a/p0", "http://a/p1", "http://a/p2"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, clk := newTest(t, Options{Store: &MemStore{}, MinDelay: time.Second, MaxDelay: time.Minute})
			items := []Item{item("a", 0), item("a", 1), item("a", 2)}
			for i := range items {
				items[i].Job = 1
			}
			<-f.Add(nil, items...)
			var order []string
			first := true
			leaseUntilDone(t, f, clk, 20, func(l *Lease, _ int) {
				order = append(order, l.Item.URL)
				o := Outcome{Status: 200}
				if first {
					o, first = c.o, false
					if s := f.Job(1); s.InFlight != 1 || s.Queued != 2 {
						t.Errorf("before the retry: %+v", s)
					}
				}
				<-must(f.Complete(l, o, nil))
			})
			if !slices.Equal(order, c.order) {
				t.Errorf("leased %v, want %v", order, c.order)
			}
			if s := f.Job(1); !s.Done() || s.Dropped != 0 {
				t.Errorf("job at the end: %+v", s)
			}
		})
	}
}
