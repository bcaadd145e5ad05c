package api

import "github.com/trawl-crawler/trawl/job"

// liveStats say whether a crawl waits and what it gave up waiting, in its
// stats and in GET /v1/stats's crawls: "waiting 59m for 1 host
// (robots.txt Retry-After)" when nothing of it may be fetched now, and the
// URLs it gave up because their host's robots.txt stayed unavailable
// (robots_gave_up) or because their host asked it to wait past its
// max_wait (wait_gave_up).
type liveStats struct {
	Waiting      *waitingView `json:"waiting,omitempty"`
	RobotsGaveUp int64        `json:"robots_gave_up"`
	WaitGaveUp   int64        `json:"wait_gave_up"`
}

// waitingView is job.Waiting on the wire, with the sentence a user reads.
type waitingView struct {
	job.Waiting
	Text string `json:"text"`
}

// liveStatsOf is p's liveStats; a crawl that is not running waits for
// nothing.
func liveStatsOf(p job.Progress, st job.State) liveStats {
	l := liveStats{RobotsGaveUp: p.Total.RobotsGaveUp, WaitGaveUp: p.Total.WaitGaveUp}
	if w := p.Waiting; w != nil && st == job.Running {
		l.Waiting = &waitingView{Waiting: *w, Text: w.String()}
	}
	return l
}
