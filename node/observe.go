package node

import (
	"time"

	"github.com/trawl-crawler/trawl/fetch"
	"github.com/trawl-crawler/trawl/job"
)

// FetchEvent describes one request a worker sent (a page or a
// robots.txt), for observers outside the crawl loop: metrics, the
// dashboard's host activity. It holds no body and nothing per URL.
type FetchEvent struct {
	Job    job.ID
	Host   string // politeness key (urlnorm.HostKey)
	Robots bool   // a robots.txt fetch
	// Status is the HTTP status, or 0 when the fetch failed (Class says how).
	Status int
	Class  fetch.Class // "" for a response
	// Bytes is the body as transferred (0 for a failure).
	Bytes int64
	// Duration is from the request's start to the body's end or the failure.
	Duration time.Duration
}

// observe hands ev to Options.OnFetch, if set.
func (n *Node) observe(ev FetchEvent) {
	if n.opts.OnFetch != nil {
		n.opts.OnFetch(ev)
	}
}

// fetchEvent builds the event of a fetch of host for j that started at
// start and ended with resp or err.
func (n *Node) fetchEvent(j *job.Job, host string, robotsTxt bool, start time.Time, resp *fetch.Response, err error) FetchEvent {
	ev := FetchEvent{Job: j.ID, Host: host, Robots: robotsTxt}
	if resp != nil {
		ev.Status, ev.Bytes, ev.Duration = resp.Status, int64(len(resp.Body)), resp.Duration
		return ev
	}
	ev.Class = fetch.ClassOf(err)
	ev.Duration = n.opts.Now().Sub(start)
	return ev
}
