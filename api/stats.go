package api

import (
	"net/http"
	"time"

	"github.com/trawl-crawler/trawl/api/wire"
	"github.com/trawl-crawler/trawl/internal/hostrank"
)

// statsHosts is how many hosts GET /v1/stats lists in each ranking.
const statsHosts = 10

// nodeStats serves GET /v1/stats: the node as a whole, in one answer (what
// the dashboard shows). Counters count every run of the node; uptime_s is
// this process's monotonic clock, so a client finds rates over any window
// from two samples. A call
// costs O(crawls) plus the rankings' O(K x shards): it never walks the
// hosts or the queues.
type nodeStats struct {
	node    func() Node
	ranking *hostrank.Ranking // nil: no host rankings
	start   time.Time
}

func (s *nodeStats) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	n := s.node()
	if n == nil {
		writeError(w, http.StatusServiceUnavailable, "", "the node is still loading its state")
		return
	}
	v := wire.NodeStats{Time: time.Now().UTC(), UptimeSeconds: time.Since(s.start).Seconds(),
		ErrorsByClass: map[string]int64{}, StatusByClass: map[string]int64{},
		Crawls: []wire.CrawlProgress{}, Busiest: []wire.BusyHost{}, Slowest: []wire.SlowHost{}}
	for _, j := range n.Jobs() {
		p, ok := n.Progress(j.ID)
		if !ok {
			continue
		}
		st, reason := j.State()
		all := p.Total // every run's counts, as the crawl stats give them
		c := wire.CrawlProgress{ID: uint32(j.ID), Name: j.Spec.Name, State: string(st), StopReason: reason,
			Pages: all.Pages, Requests: all.Requests, Discovered: all.Discovered,
			Queued: p.Queued, InFlight: p.InFlight, Held: p.Held, MaxPages: j.Spec.MaxPages,
			Revisits: all.Revisits, NearDuplicates: all.NearDuplicates}
		r := recrawlStatsOf(p, st)
		c.Continuous, c.WaitingForRecrawls, c.Recrawls, c.NotModified, c.Changed, c.Freshness = r.continuous, r.waitingForRecrawls, r.recrawls, r.notModified, r.changed, r.freshness
		c.Waiting, c.RobotsGaveUp, c.WaitGaveUp = liveStatsOf(p, st)
		for _, k := range all.Errors {
			c.Errors += k
		}
		v.ErrorsByClass = wire.AddCounts(v.ErrorsByClass, all.Errors)
		v.StatusByClass = wire.AddCounts(v.StatusByClass, all.Status)
		t := &v.Totals
		t.Pages += all.Pages
		t.Fetched += all.Pages - all.Shared
		t.Requests += all.Requests
		t.Bytes += all.Bytes
		t.Discovered += all.Discovered
		t.OutOfScope += all.OutOfScope
		t.RobotsDisallowed += all.RobotsDisallowed
		t.Recrawls += all.Recrawls
		t.NotModified += all.NotModified
		t.Changed += all.Changed
		d := &v.Duplicates
		d.URLsSeenAgain += all.Duplicates
		d.SharedPages += all.Shared
		d.ExactPages += all.Revisits
		d.NearPages += all.NearDuplicates
		v.Crawls = append(v.Crawls, c)
	}
	d := &v.Duplicates
	if found := d.URLsSeenAgain + v.Totals.Discovered; found > 0 {
		d.URLRate = float64(d.URLsSeenAgain) / float64(found)
	}
	if v.Totals.Pages > 0 {
		d.SharedRate = float64(d.SharedPages) / float64(v.Totals.Pages)
	}
	if v.Totals.Fetched > 0 {
		d.ContentRate = float64(d.ExactPages+d.NearPages) / float64(v.Totals.Fetched)
	}
	v.NodePaused = n.NodePaused()
	fs := n.FrontierStats()
	v.Frontier.Queued, v.Frontier.InFlight, v.Frontier.Dropped = fs.Queued, fs.InFlight, fs.Dropped
	h := &v.Hosts
	h.Known, h.Active, h.Ready, h.Waiting, h.Parked, h.Backoff, h.Refilling = fs.Hosts, fs.Active, fs.Ready, fs.Waiting, fs.Parked, fs.Backoff, fs.Refilling
	if s.ranking != nil {
		for _, b := range s.ranking.Busiest(statsHosts) {
			v.Busiest = append(v.Busiest, wire.BusyHost{Host: b.Host, RequestsPerMin: 60 * b.Rate, OverBy: 60 * b.Over})
		}
		for _, e := range s.ranking.Slowest(statsHosts) {
			v.Slowest = append(v.Slowest, wire.SlowHost{Host: e.Host, MeanMS: float64(e.Mean) / float64(time.Millisecond), Samples: e.Samples})
		}
	}
	writeJSON(w, http.StatusOK, v)
}
