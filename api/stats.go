package api

import (
	"net/http"
	"time"

	"github.com/trawl-crawler/trawl/internal/hostrank"
	"github.com/trawl-crawler/trawl/job"
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

// nodeStatsView is GET /v1/stats's body (docs/api/openapi.yaml).
type nodeStatsView struct {
	Time          time.Time        `json:"time"`
	UptimeSeconds float64          `json:"uptime_s"`
	NodePaused    bool             `json:"node_paused"`
	Totals        totalsView       `json:"totals"`
	ErrorsByClass map[string]int64 `json:"errors_by_class"`
	StatusByClass map[string]int64 `json:"status_by_class"`
	Frontier      struct {
		Queued   int `json:"queued"`
		InFlight int `json:"in_flight"`
		Dropped  int `json:"dropped"`
	} `json:"frontier"`
	Hosts struct {
		Known     int `json:"known"`
		Active    int `json:"active"`
		Ready     int `json:"ready"`
		Waiting   int `json:"waiting"`
		Parked    int `json:"parked"`
		Backoff   int `json:"backoff"`
		Refilling int `json:"refilling"`
	} `json:"hosts"`
	Duplicates struct {
		URLsSeenAgain int64   `json:"urls_seen_again"`
		URLRate       float64 `json:"url_rate"`
		SharedPages   int64   `json:"shared_pages"`
		SharedRate    float64 `json:"shared_rate"`
		contentDuplicates
	} `json:"duplicates"`
	Crawls  []crawlProgress `json:"crawls"`
	Busiest []busyHost      `json:"busiest_hosts"`
	Slowest []slowHost      `json:"slowest_hosts"`
}

type totalsView struct {
	Pages            int64 `json:"pages"`
	Fetched          int64 `json:"fetched"`
	Requests         int64 `json:"requests"`
	Bytes            int64 `json:"bytes"`
	Discovered       int64 `json:"discovered"`
	OutOfScope       int64 `json:"out_of_scope"`
	RobotsDisallowed int64 `json:"robots_disallowed"`
	Recrawls         int64 `json:"recrawls"`
	NotModified      int64 `json:"not_modified"`
	Changed          int64 `json:"changed"`
}

type crawlProgress struct {
	ID         job.ID `json:"id"`
	Name       string `json:"name,omitempty"`
	State      string `json:"state"`
	StopReason string `json:"stop_reason,omitempty"`
	Pages      int64  `json:"pages"`
	Requests   int64  `json:"requests"`
	Errors     int64  `json:"errors"`
	Discovered int64  `json:"discovered"`
	Queued     int    `json:"queued"`
	InFlight   int    `json:"in_flight"`
	Held       int    `json:"held"`
	MaxPages   int    `json:"max_pages"`
	recrawlStats
	liveStats
	// Content duplicates over every run, named as in the crawl's stats.
	Revisits       int64 `json:"revisits"`
	NearDuplicates int64 `json:"near_duplicates"`
}

// contentDuplicates are the pages fetched whose content the node had
// archived already, over every crawl: exact copies (written as revisit
// records) and near ones (resemblance of main text), and their share of the pages fetched
// over the network (totals.fetched). A page shared from another crawl's
// fetch is never one: only a fetch is judged.
type contentDuplicates struct {
	ExactPages  int64   `json:"exact_pages"`
	NearPages   int64   `json:"near_pages"`
	ContentRate float64 `json:"content_rate"`
}

type busyHost struct {
	Host           string  `json:"host"`
	RequestsPerMin float64 `json:"requests_per_min"`
	OverBy         float64 `json:"over_by"`
}

type slowHost struct {
	Host    string  `json:"host"`
	MeanMS  float64 `json:"mean_ms"`
	Samples int64   `json:"samples"`
}

func (s *nodeStats) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	n := s.node()
	if n == nil {
		writeError(w, http.StatusServiceUnavailable, "", "the node is still loading its state")
		return
	}
	v := nodeStatsView{Time: time.Now().UTC(), UptimeSeconds: time.Since(s.start).Seconds(),
		ErrorsByClass: map[string]int64{}, StatusByClass: map[string]int64{},
		Crawls: []crawlProgress{}, Busiest: []busyHost{}, Slowest: []slowHost{}}
	for _, j := range n.Jobs() {
		p, ok := n.Progress(j.ID)
		if !ok {
			continue
		}
		st, reason := j.State()
		all := p.Total // every run's counts, as the crawl stats give them
		c := crawlProgress{ID: j.ID, Name: j.Spec.Name, State: string(st), StopReason: reason,
			Pages: all.Pages, Requests: all.Requests, Discovered: all.Discovered,
			Queued: p.Queued, InFlight: p.InFlight, Held: p.Held, MaxPages: j.Spec.MaxPages,
			recrawlStats: recrawlStatsOf(p, st), liveStats: liveStatsOf(p, st), Revisits: all.Revisits, NearDuplicates: all.NearDuplicates}
		for class, k := range all.Errors {
			v.ErrorsByClass[class] += k
			c.Errors += k
		}
		for class, k := range all.Status {
			v.StatusByClass[class] += k
		}
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
			v.Busiest = append(v.Busiest, busyHost{Host: b.Host, RequestsPerMin: 60 * b.Rate, OverBy: 60 * b.Over})
		}
		for _, e := range s.ranking.Slowest(statsHosts) {
			v.Slowest = append(v.Slowest, slowHost{Host: e.Host, MeanMS: float64(e.Mean) / float64(time.Millisecond), Samples: e.Samples})
		}
	}
	writeJSON(w, http.StatusOK, v)
}
