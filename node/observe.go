package node

import (
	"time"

	"github.com/trawl-crawler/trawl/fetch"
	"github.com/trawl-crawler/trawl/internal/store"
	"github.com/trawl-crawler/trawl/internal/store/urlseen"
	"github.com/trawl-crawler/trawl/job"
	"github.com/trawl-crawler/trawl/robotscache"
	"github.com/trawl-crawler/trawl/warc"
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

// ObserveAll returns an Options.OnFetch that hands each event to every
// observer in fns, in order, skipping nil ones: several consumers (the
// metrics, the dashboard) share the node's one hook, each added with
// opts.OnFetch = node.ObserveAll(opts.OnFetch, mine). It returns nil if
// every one is nil.
func ObserveAll(fns ...func(FetchEvent)) func(FetchEvent) {
	var set []func(FetchEvent)
	for _, f := range fns {
		if f != nil {
			set = append(set, f)
		}
	}
	switch len(set) {
	case 0:
		return nil
	case 1:
		return set[0]
	}
	return func(ev FetchEvent) {
		for _, f := range set {
			f(ev)
		}
	}
}

// Error classes the node counts besides fetch.Class: responses archived
// cut off or undecodable, counted under their status and as one of these.
const (
	ErrorTooLarge    = "too-large"    // the body passed MaxBodyBytes (or its decoded form the cap)
	ErrorBodyTimeout = "body-timeout" // FetchTimeout ended the body
	ErrorDecode      = "decode"       // its Content-Encoding could not be undone (fetch.Response.DecodeErr)
	ErrorBodyCut     = "body"         // the connection ended or failed before the body did (Truncated "disconnect", "unspecified")
)

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

// The counters of the node's parts, for metrics: each takes constant time,
// reading atomics (and, for the origins the keeper holds, its lock
// briefly).

// RobotsStats returns the robots.txt keeper's counts: cache hits and
// misses, store reads, origins held.
func (n *Node) RobotsStats() robotscache.KeeperStats { return n.robots.Stats() }

// WARCStats returns the WARC writer's counts for this run: bytes and
// records written, files, fsync rounds.
func (n *Node) WARCStats() warc.WriterStats { return n.warc.Stats() }

// StoreStats returns the store's durable commits for this run, with their
// latencies.
func (n *Node) StoreStats() store.Stats { return n.db.Stats() }

// FilterStats returns the figures of the store's Bloom filters, by name:
// "urls" (the URL-seen gate), "records" (URLs with a record) and
// "digests" (the content-seen gate's exact index).
func (n *Node) FilterStats() map[string]urlseen.FilterStats {
	return map[string]urlseen.FilterStats{
		"urls":    n.seen.FilterStats(),
		"records": n.state.Fetched.FilterStats(),
		"digests": n.state.Digests.FilterStats(),
	}
}
