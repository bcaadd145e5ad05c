package api

import (
	"github.com/trawl-crawler/trawl/api/wire"
	"github.com/trawl-crawler/trawl/job"
)

// liveStatsOf says whether a crawl waits and what it gave up waiting, in
// its stats and in GET /v1/stats's crawls: "waiting 59m for 1 host
// (robots.txt Retry-After)" when nothing of it may be fetched now (nil for
// a crawl that is not running: it waits for nothing), and the URLs it gave
// up because their host's robots.txt stayed unavailable (robots_gave_up)
// or because their host asked it to wait past its max_wait (wait_gave_up).
func liveStatsOf(p job.Progress, st job.State) (waiting *wire.Waiting, robotsGaveUp, waitGaveUp int64) {
	if w := p.Waiting; w != nil && st == job.Running {
		waiting = &wire.Waiting{ForSeconds: w.Seconds, Until: w.Until, Hosts: w.Hosts, Reason: w.Reason, Why: w.Why, Text: w.String()}
	}
	return waiting, p.Total.RobotsGaveUp, p.Total.WaitGaveUp
}
