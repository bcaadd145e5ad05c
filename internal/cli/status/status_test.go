package status

import (
	"strings"
	"testing"

	"github.com/trawl-crawler/trawl/internal/cli/apiclient"
)

// TestStatusSaysWhatACrawlWaitsFor: a running crawl that waits says what
// for, under the table; a fleet's sum keeps the soonest member's wait,
// and none while a member has a fetch in flight.
func TestStatusSaysWhatACrawlWaitsFor(t *testing.T) {
	hour := &apiclient.Waiting{ForSeconds: 3540, Hosts: 1, Reason: "robots-retry-after", Text: "waiting 59m for 1 host (robots.txt Retry-After)"}
	var b strings.Builder
	Print(&b, Report{Ready: true, Status: "ready", Crawls: []Crawl{
		{Crawl: apiclient.Crawl{ID: 1, State: "running"}, Stats: &apiclient.Stats{Queued: 1, Waiting: hour}},
		{Crawl: apiclient.Crawl{ID: 2, State: "running"}, Stats: &apiclient.Stats{Queued: 5, InFlight: 1}},
	}})
	if !strings.Contains(b.String(), "\ncrawl 1: waiting 59m for 1 host (robots.txt Retry-After)\n") || strings.Contains(b.String(), "crawl 2:") {
		t.Errorf("status:\n%s\nwant crawl 1's wait, and no line for crawl 2", b.String())
	}
	sum := &apiclient.Stats{}
	soon := &apiclient.Waiting{ForSeconds: 20, Hosts: 2, Text: "waiting 20s for 2 hosts (backoff after errors)"}
	sum.Add(apiclient.Stats{Queued: 1, Waiting: hour})
	sum.Add(apiclient.Stats{Queued: 2, Waiting: soon})
	if sum.Waiting != soon {
		t.Errorf("fleet sum waits %+v, want the soonest member's wait", sum.Waiting)
	}
	sum.Add(apiclient.Stats{Queued: 2, InFlight: 1})
	if sum.Waiting != nil {
		t.Errorf("fleet sum waits %+v while a member fetches, want no wait", sum.Waiting)
	}
}
