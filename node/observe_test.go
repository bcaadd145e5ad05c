package node

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/internal/testkit/testweb"
)

// TestOnFetchSeesEveryRequest: the observer hears of every request the
// job counted, robots.txt ones marked, failures with a class and
// responses with a status, and the bytes add up to the job's.
func TestOnFetchSeesEveryRequest(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a crawl of a synthetic web; the full suite runs it")
	}
	t.Parallel()
	h := newHarness(t, testweb.Options{Seed: 3, Hosts: 12, Hostile: true}, 20*time.Millisecond)
	var (
		mu             sync.Mutex
		events, robots int
		bytes          int64
	)
	h.opts.OnFetch = func(ev FetchEvent) {
		mu.Lock()
		defer mu.Unlock()
		events++
		if ev.Robots && ev.Status != 0 {
			robots++
		}
		if (ev.Status == 0) == (ev.Class == "") || ev.Host == "" || ev.Job == 0 || ev.Duration < 0 {
			t.Errorf("malformed event %+v", ev)
		}
		if !ev.Robots {
			bytes += ev.Bytes
		}
	}
	sum := h.run(t, context.Background())
	mu.Lock()
	defer mu.Unlock()
	if int64(events) != sum.Requests || int64(robots) != sum.RobotsFetches {
		t.Errorf("observed %d requests (%d robots.txt answers); the job counted %d (%d)", events, robots, sum.Requests, sum.RobotsFetches)
	}
	if events == 0 {
		t.Fatal("no events")
	}
	t.Logf("%d events, %d robots.txt answers, %d page bytes (job: %d bytes incl. robots.txt)", events, robots, bytes, sum.Bytes)
}

// TestObserveAll: every observer given hears every event, in order; nil
// ones are skipped.
func TestObserveAll(t *testing.T) {
	if ObserveAll() != nil || ObserveAll(nil, nil) != nil {
		t.Error("ObserveAll of no observer is not nil")
	}
	var got []string
	hear := func(name string) func(FetchEvent) {
		return func(ev FetchEvent) { got = append(got, name+":"+ev.Host) }
	}
	f := ObserveAll(nil, hear("a"), nil, hear("b"))
	f(FetchEvent{Host: "x.test"})
	f(FetchEvent{Host: "y.test"})
	if want := "a:x.test b:x.test a:y.test b:y.test"; strings.Join(got, " ") != want {
		t.Errorf("observers heard %q, want %q", strings.Join(got, " "), want)
	}
}
