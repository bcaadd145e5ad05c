package node

import (
	"time"

	"github.com/trawl-crawler/trawl/crawllog"
	"github.com/trawl-crawler/trawl/frontier"
	"github.com/trawl-crawler/trawl/job"
)

// Liveness: a one-shot job ends by itself. Hosts that ask it to wait (a
// Retry-After on a page or robots.txt, a backoff, a robots.txt outage)
// are waited for while anything else may be fetched; once nothing may be
// within the least MaxWait of the jobs running, the frontier gives up
// the URLs of such hosts for each job whose MaxWait they exceed
// (frontier.GiveUp), and the jobs end. So a one-shot job is never idle
// for longer than its MaxWait (plus giveUpEvery) because a server asked
// for more.

// giveUpEvery is how often an idle dispatcher asks the frontier to give
// up far work: it walks the hosts that wait.
const giveUpEvery = time.Second

// waitHorizon is job id's give-up horizon: its MaxWait if it is a running
// one-shot job, 0 (never give up) otherwise. The frontier calls it under
// its lock.
func (n *Node) waitHorizon(id uint32) time.Duration {
	j := n.Job(job.ID(id))
	if j == nil || j.Spec.Continuous {
		return 0
	}
	if st, _ := j.State(); st != job.Running {
		return 0
	}
	return j.Spec.MaxWait
}

// giveUpFar gives up, for the jobs running, the work that lies beyond
// their horizon, if nothing is due within the least of them; wait is how
// long until the frontier may lease something (Lease; < 0: nothing could
// become ready by time alone).
func (n *Node) giveUpFar(wait time.Duration) {
	least := time.Duration(0)
	for _, j := range n.Jobs() {
		if h := n.waitHorizon(uint32(j.ID)); h > 0 && (least == 0 || h < least) {
			least = h
		}
	}
	if least == 0 || wait >= 0 && wait <= least {
		return
	}
	if hosts := n.frontier.GiveUp(least, n.waitHorizon); hosts > 0 {
		n.opts.Logger.Info("nothing may be fetched within the crawl's wait horizon: giving up hosts that wait longer", "hosts", hosts, "max_wait", least)
	}
}

// gaveUpWaiting counts and logs a URL the frontier gave up because its
// host waits past its job's MaxWait (frontier.GiveUp). Called under the
// frontier's lock.
func (n *Node) gaveUpWaiting(it frontier.Item, why frontier.DropReason) {
	j := n.Job(job.ID(it.Job))
	if j == nil {
		return
	}
	detail := map[frontier.DropReason]string{
		frontier.DropRetryAfter: "Retry-After",
		frontier.DropBackoff:    "backoff",
		frontier.DropRobotsWait: "robots.txt unavailable",
	}[why]
	if j.Stats.GaveUpWaiting(it.Host) {
		n.opts.Logger.Info("host asks to wait past the crawl's max wait; its URLs are given up", "job", j.ID, "host", it.Host, "why", detail, "max_wait", j.Spec.MaxWait)
	}
	n.clog.drop(it, crawllog.DropWait, detail)
}

// anyMaxWait reports whether a running one-shot job has a MaxWait: an idle
// dispatcher then looks every giveUpEvery for work to give up.
func (n *Node) anyMaxWait() bool {
	for _, j := range n.Jobs() {
		if n.waitHorizon(j.ID) > 0 {
			return true
		}
	}
	return false
}
