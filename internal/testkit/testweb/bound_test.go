package testweb

import (
	"slices"
	"testing"
	"time"
)

// TestBounds: each host's bound counts the robots.txt requests it needs
// before its rules are known (two for the 301 and the 429 hosts) and its
// crawlable URLs, and is that many requests less one times max(gap,
// Crawl-delay); Critical is the largest. URLs robots.txt disallows, and
// hosts with none crawlable, count nothing.
func TestBounds(t *testing.T) {
	b := newBuilder("t.test")
	kinds := []struct {
		name  string
		kind  robotsKind
		pages int
	}{
		{"plain.t.test", robotsPrefix, 3},
		{"moved.t.test", robotsRedirect, 3},
		{"busy.t.test", robotsTooMany, 3},
		{"slow.t.test", robotsCrawlDelay, 2},
		{"shut.t.test", robotsServerError, 4},
	}
	var seeds []string
	for _, k := range kinds {
		h := b.host(k.name, k.kind)
		home := b.res(h, "/", kindHTML)
		for i := 1; i < k.pages; i++ {
			addLink(home, b.res(h, "/p"+string(rune('0'+i)), kindHTML))
		}
		addLink(home, b.res(h, "/private/x", kindHTML)) // every kind here disallows /private/
		seeds = append(seeds, "http://"+k.name+"/")
	}
	gap := 10 * time.Millisecond
	r := Analyze(b.w, nil, AnalyzeOptions{Seeds: seeds, Agent: "trawl", Gap: gap})
	want := []Bound{
		{"plain.t.test", 1 + 3, gap, 3 * gap},
		{"moved.t.test", 2 + 3, gap, 4 * gap},
		{"busy.t.test", 2 + 3, gap, 4 * gap},
		{"slow.t.test", 1 + 2, 2 * time.Second, 4 * time.Second},
	}
	if got := r.Bounds(gap); !slices.Equal(got, want) {
		t.Errorf("Bounds(%v) =\n%+v\nwant\n%+v", gap, got, want)
	}
	if got := r.Critical(gap); got != want[3] {
		t.Errorf("Critical(%v) = %+v, want the Crawl-delay host %+v", gap, got, want[3])
	}
	// With a gap over the Crawl-delay, the host with the most requests
	// sets it.
	if got := r.Critical(time.Second); got.Duration != 4*time.Second || got.Host != "moved.t.test" {
		t.Errorf("Critical(1s) = %+v, want 4s on moved.t.test (5 requests)", got)
	}
	if got := r.CriticalPath(gap); got != 4*time.Second {
		t.Errorf("CriticalPath = %v, want 4s", got)
	}
}
