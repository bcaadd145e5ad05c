package wire

import (
	"encoding/json"
	"time"
)

// The host routes' bodies (/v1/hosts...).

// Policy is an operator's standing order for one host, as the API shows
// and takes it. A nil MinDelayMS and a zero MaxParallel keep the node's
// defaults, so the zero Policy is the defaults.
type Policy struct {
	MinDelayMS  *int64 `json:"min_delay_ms"`           // the host's own least gap between fetches
	MaxParallel int    `json:"max_parallel,omitempty"` // fetches in flight at once
	Paused      bool   `json:"paused"`
}

// PolicySet is PUT /v1/hosts/{host}/policy's answer: the policy stored.
type PolicySet struct {
	Host   string          `json:"host"` // as the server normalised it
	Policy Policy          `json:"policy"`
	Raw    json.RawMessage `json:"-"` // the body as the server sent it
}

// Host is a host as GET /v1/hosts lists it (the schema HostSummary).
type Host struct {
	Host        string     `json:"host"`
	State       string     `json:"state"`
	Queued      int        `json:"queued"`
	InFlight    int        `json:"in_flight"`
	Leased      int        `json:"leased"`
	Duplicates  int        `json:"duplicates"`             // of the pages leased, exact or near duplicates
	NextAllowed *time.Time `json:"next_allowed,omitempty"` // nil: no gap to wait
	DelayMS     int64      `json:"delay_ms"`
	DelayReason string     `json:"delay_reason,omitempty"`
	// WaitMS is how long from now until NextAllowed (0: it has passed),
	// WaitReason why the host waits (a delay reason) while WaitMS > 0.
	WaitMS       int64  `json:"wait_ms"`
	WaitReason   string `json:"wait_reason,omitempty"`
	BackoffMS    int64  `json:"backoff_ms"`
	CrawlDelayMS int64  `json:"crawl_delay_ms"`
	IP           string `json:"ip,omitempty"`
	Policy       Policy `json:"policy"`
	// DeadReason is why a dead host was given up (host-dropped, budget,
	// duplicates, failing); Failures and FailingHow (timeout, network)
	// its latest fetches in a row that ended without a response, and how.
	DeadReason string `json:"dead_reason,omitempty"`
	Failures   int    `json:"failures,omitempty"`
	FailingHow string `json:"failing_how,omitempty"`
}

// HostPage is a page of GET /v1/hosts.
type HostPage struct {
	Hosts []Host `json:"hosts"`
	// NextCursor, if not empty, is where the listing goes on; a page may
	// be short of the limit and still have one.
	NextCursor string          `json:"next_cursor,omitempty"`
	Raw        json.RawMessage `json:"-"` // the body as the server sent it
}

// RobotsStatus is one origin's robots.txt state, as a host's detail shows
// it.
type RobotsStatus struct {
	Origin      string     `json:"origin"`
	Pending     bool       `json:"pending"`
	Attempts    int        `json:"attempts"`
	OutageSince *time.Time `json:"outage_since,omitempty"`
	LastAnswer  *time.Time `json:"last_answer,omitempty"`
	Status      int        `json:"status,omitempty"` // of the copy in use; 0: none
	Fetched     *time.Time `json:"fetched,omitempty"`
	AgeS        *float64   `json:"age_s,omitempty"`
	Error       string     `json:"error,omitempty"`
}

// HostDetail is GET /v1/hosts/{host}'s answer.
type HostDetail struct {
	Host
	// QueuedByCrawl counts the host's URLs per crawl id, in flight
	// included, and InFlightByCrawl those in flight: of the same moment
	// as the totals, so that they sum to queued + in_flight and to
	// in_flight.
	QueuedByCrawl   map[string]int `json:"queued_by_crawl"`
	InFlightByCrawl map[string]int `json:"in_flight_by_crawl"`
	HeldByCrawl     map[string]int `json:"held_by_crawl"`
	// QueuedCounted is false when the host had more items than the
	// server counts: QueuedByCrawl is then a lower bound.
	QueuedCounted bool            `json:"queued_counted"`
	Robots        []RobotsStatus  `json:"robots"`
	Raw           json.RawMessage `json:"-"` // the body as the server sent it
}
