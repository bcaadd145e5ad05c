package wire

import (
	"encoding/json"
	"time"
)

// The counters: a crawl's (GET /v1/crawls/{id}/stats) and the whole
// node's (GET /v1/stats).

// Stats are a crawl's counters (GET /v1/crawls/{id}/stats). Counts are
// over every run of the node; PagesPerSecond and ElapsedSeconds are this
// run's.
type Stats struct {
	CrawlID          uint32           `json:"crawl_id"`
	State            string           `json:"state"`
	Fetched          int64            `json:"fetched"`        // pages the crawl got
	Requests         int64            `json:"requests"`       // robots.txt included
	RobotsFetches    int64            `json:"robots_fetches"` // of them, robots.txt
	Shared           int64            `json:"shared"`         // of the pages, answered by another crawl's fetch
	Bytes            int64            `json:"bytes"`
	Discovered       int64            `json:"discovered"`
	Queued           int              `json:"queued"`
	InFlight         int              `json:"in_flight"`
	Held             int              `json:"held"`
	Dropped          int              `json:"dropped"`
	OutOfScope       int64            `json:"out_of_scope"`
	Excluded         int64            `json:"excluded"` // URLs an exclusion pattern dropped
	RobotsDisallowed int64            `json:"robots_disallowed"`
	Revisits         int64            `json:"revisits"`        // pages whose payload was archived already (revisit records)
	NearDuplicates   int64            `json:"near_duplicates"` // pages whose main text resembles an archived one's
	PagesPerSecond   float64          `json:"pages_per_s"`
	ElapsedSeconds   float64          `json:"elapsed_s"`
	ErrorsByClass    map[string]int64 `json:"errors_by_class"`
	StatusByClass    map[string]int64 `json:"status_by_class"`
	Hosts            int              `json:"hosts"`
	HostsActive      int              `json:"hosts_active"`
	HostsWaiting     int              `json:"hosts_waiting"`
	HostsBackoff     int              `json:"hosts_backoff"`
	// Continuous crawls only: WaitingForRecrawls while one runs with
	// nothing queued, in flight or held; Freshness once the schedule has
	// figures.
	Continuous         bool       `json:"continuous,omitempty"`
	WaitingForRecrawls bool       `json:"waiting_for_recrawls,omitempty"`
	Recrawls           int64      `json:"recrawls"`     // fetches of pages fetched before
	NotModified        int64      `json:"not_modified"` // of recrawls, 304 answers
	Changed            int64      `json:"changed"`      // of recrawls, pages that had changed
	Freshness          *Freshness `json:"freshness,omitempty"`
	// Waiting, while nothing of a running crawl may be fetched now: what
	// it waits for. RobotsGaveUp and WaitGaveUp count the URLs it gave up
	// because a host's robots.txt stayed unavailable, or because a host
	// asked it to wait past its max wait.
	Waiting      *Waiting        `json:"waiting,omitempty"`
	RobotsGaveUp int64           `json:"robots_gave_up"`
	WaitGaveUp   int64           `json:"wait_gave_up"`
	Raw          json.RawMessage `json:"-"` // the body as the server sent it
}

// Add adds o, another fleet member's share of the same crawl, to s: the
// fleet's sum of a crawl's stats (each member's are its own: the pages it
// fetched, its partitions' queue). Counts add up, elapsed time is the
// longest, and the fleet waits for the soonest of its members' waits, and
// not at all while a member has a fetch in flight.
func (s *Stats) Add(o Stats) {
	s.Fetched += o.Fetched
	s.Requests += o.Requests
	s.RobotsFetches += o.RobotsFetches
	s.Bytes += o.Bytes
	s.Discovered += o.Discovered
	s.Queued += o.Queued
	s.InFlight += o.InFlight
	s.Held += o.Held
	s.PagesPerSecond += o.PagesPerSecond
	s.ElapsedSeconds = max(s.ElapsedSeconds, o.ElapsedSeconds)
	s.Hosts += o.Hosts
	s.HostsActive += o.HostsActive
	s.HostsWaiting += o.HostsWaiting
	s.HostsBackoff += o.HostsBackoff
	s.RobotsGaveUp += o.RobotsGaveUp
	s.WaitGaveUp += o.WaitGaveUp
	if w := o.Waiting; w != nil && (s.Waiting == nil || w.ForSeconds < s.Waiting.ForSeconds) {
		s.Waiting = w
	}
	if s.InFlight > 0 {
		s.Waiting = nil
	}
	s.ErrorsByClass = AddCounts(s.ErrorsByClass, o.ErrorsByClass)
	s.StatusByClass = AddCounts(s.StatusByClass, o.StatusByClass)
}

// AddCounts adds the counts by class of add to sum, making sum if it is
// nil and add has any, and returns sum: errors_by_class and
// status_by_class summed over crawls (a node's) or over members (a
// fleet's).
func AddCounts(sum, add map[string]int64) map[string]int64 {
	for class, n := range add {
		if sum == nil {
			sum = map[string]int64{}
		}
		sum[class] += n
	}
	return sum
}

// NodeStats is GET /v1/stats's body: the node as a whole, what the
// dashboard shows.
type NodeStats struct {
	Time          time.Time        `json:"time"`
	UptimeSeconds float64          `json:"uptime_s"`
	NodePaused    bool             `json:"node_paused"`
	Totals        Totals           `json:"totals"`
	ErrorsByClass map[string]int64 `json:"errors_by_class"`
	StatusByClass map[string]int64 `json:"status_by_class"`
	Frontier      FrontierCounts   `json:"frontier"`
	Hosts         HostCounts       `json:"hosts"`
	Duplicates    Duplicates       `json:"duplicates"`
	Crawls        []CrawlProgress  `json:"crawls"`
	Busiest       []BusyHost       `json:"busiest_hosts"`
	Slowest       []SlowHost       `json:"slowest_hosts"`
}

// Totals are the node's counters summed over its crawls.
type Totals struct {
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

// FrontierCounts are the node's frontier's sizes.
type FrontierCounts struct {
	Queued   int `json:"queued"`
	InFlight int `json:"in_flight"`
	Dropped  int `json:"dropped"`
}

// HostCounts are the node's hosts by state.
type HostCounts struct {
	Known     int `json:"known"`
	Active    int `json:"active"`
	Ready     int `json:"ready"`
	Waiting   int `json:"waiting"`
	Parked    int `json:"parked"`
	Backoff   int `json:"backoff"`
	Refilling int `json:"refilling"`
}

// Duplicates are the node's duplicates of both kinds: URLs found again
// and pages shared between crawls, and content duplicates, the pages
// fetched whose content the node had archived already (exact copies,
// written as revisit records, and near ones), with their shares.
type Duplicates struct {
	URLsSeenAgain int64   `json:"urls_seen_again"`
	URLRate       float64 `json:"url_rate"`
	SharedPages   int64   `json:"shared_pages"`
	SharedRate    float64 `json:"shared_rate"`
	ExactPages    int64   `json:"exact_pages"`
	NearPages     int64   `json:"near_pages"`
	ContentRate   float64 `json:"content_rate"`
}

// CrawlProgress is one crawl in GET /v1/stats.
type CrawlProgress struct {
	ID                 uint32     `json:"id"`
	Name               string     `json:"name,omitempty"`
	State              string     `json:"state"`
	StopReason         string     `json:"stop_reason,omitempty"`
	Pages              int64      `json:"pages"`
	Requests           int64      `json:"requests"`
	Errors             int64      `json:"errors"`
	Discovered         int64      `json:"discovered"`
	Queued             int        `json:"queued"`
	InFlight           int        `json:"in_flight"`
	Held               int        `json:"held"`
	MaxPages           int        `json:"max_pages"`
	Continuous         bool       `json:"continuous,omitempty"`
	WaitingForRecrawls bool       `json:"waiting_for_recrawls,omitempty"`
	Recrawls           int64      `json:"recrawls"`
	NotModified        int64      `json:"not_modified"`
	Changed            int64      `json:"changed"`
	Freshness          *Freshness `json:"freshness,omitempty"`
	Waiting            *Waiting   `json:"waiting,omitempty"`
	RobotsGaveUp       int64      `json:"robots_gave_up"`
	WaitGaveUp         int64      `json:"wait_gave_up"`
	// Content duplicates over every run, named as in the crawl's stats.
	Revisits       int64 `json:"revisits"`
	NearDuplicates int64 `json:"near_duplicates"`
}

// BusyHost is one of the hosts with the most requests recently.
type BusyHost struct {
	Host           string  `json:"host"`
	RequestsPerMin float64 `json:"requests_per_min"`
	OverBy         float64 `json:"over_by"`
}

// SlowHost is one of the hosts with the slowest answers recently.
type SlowHost struct {
	Host    string  `json:"host"`
	MeanMS  float64 `json:"mean_ms"`
	Samples int64   `json:"samples"`
}
