package apiclient

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// The host and node routes (docs/api/openapi.yaml: /v1/hosts..., /v1/node...).

// HostQuery selects GET /v1/hosts's page. Zero fields select nothing:
// every state, every crawl, the first page, the server's page size (100).
type HostQuery struct {
	State  string // dead, paused, parked, backoff, waiting, ready or idle
	Crawl  uint32 // hosts where this crawl has queued a URL
	Cursor string // NextCursor of the page before
	Limit  int    // hosts a page at most, 1..1000
}

// HostPolicy is an operator's standing order for one host. A nil
// MinDelayMS and a zero MaxParallel keep the node's defaults, so the zero
// HostPolicy is the defaults.
type HostPolicy struct {
	MinDelayMS  *int64 `json:"min_delay_ms"`           // the host's own least gap between fetches
	MaxParallel int    `json:"max_parallel,omitempty"` // fetches in flight at once
	Paused      bool   `json:"paused"`
}

// Host is a host as GET /v1/hosts lists it.
type Host struct {
	Host         string     `json:"host"`
	State        string     `json:"state"`
	Queued       int        `json:"queued"`
	InFlight     int        `json:"in_flight"`
	Leased       int        `json:"leased"`
	Duplicates   int        `json:"duplicates"`             // of the pages leased, exact or near duplicates
	NextAllowed  *time.Time `json:"next_allowed,omitempty"` // nil: no gap to wait
	DelayMS      int64      `json:"delay_ms"`
	DelayReason  string     `json:"delay_reason,omitempty"`
	WaitMS       int64      `json:"wait_ms"`               // how long from now until NextAllowed; 0 once it has passed
	WaitReason   string     `json:"wait_reason,omitempty"` // why the host waits, while WaitMS > 0 (a delay reason)
	BackoffMS    int64      `json:"backoff_ms"`
	CrawlDelayMS int64      `json:"crawl_delay_ms"`
	IP           string     `json:"ip,omitempty"`
	Policy       HostPolicy `json:"policy"`
	DeadReason   string     `json:"dead_reason,omitempty"` // why a dead host was given up: host-dropped, budget, duplicates, failing
	Failures     int        `json:"failures,omitempty"`    // its latest fetches in a row that ended without a response
	FailingHow   string     `json:"failing_how,omitempty"` // how they ended: timeout, network
}

// HostList is a page of GET /v1/hosts.
type HostList struct {
	Hosts []Host `json:"hosts"`
	// NextCursor, if not empty, is where the listing goes on; a page may
	// be short of the limit and still have one.
	NextCursor string          `json:"next_cursor,omitempty"`
	Raw        json.RawMessage `json:"-"` // the body as the server sent it
}

// RobotsStatus is one origin's robots.txt state, as a host's detail shows it.
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
	QueuedByCrawl   map[string]int `json:"queued_by_crawl"`    // by crawl id, in flight included
	InFlightByCrawl map[string]int `json:"in_flight_by_crawl"` // of those, in flight
	HeldByCrawl     map[string]int `json:"held_by_crawl"`
	// QueuedCounted is false when the host had more items than the
	// server counts: QueuedByCrawl is then a lower bound.
	QueuedCounted bool            `json:"queued_counted"`
	Robots        []RobotsStatus  `json:"robots"`
	Raw           json.RawMessage `json:"-"` // the body as the server sent it
}

// PolicySet is PUT /v1/hosts/{host}/policy's answer: the policy stored.
type PolicySet struct {
	Host   string          `json:"host"` // as the server normalised it
	Policy HostPolicy      `json:"policy"`
	Raw    json.RawMessage `json:"-"` // the body as the server sent it
}

// NodeState is the node's own state (GET /v1/node).
type NodeState struct {
	Paused bool            `json:"paused"` // no crawl is fetched
	Raw    json.RawMessage `json:"-"`      // the body as the server sent it
}

// Hosts returns a page of the hosts the node knows.
func (c *Client) Hosts(ctx context.Context, q HostQuery) (HostList, error) {
	v := url.Values{}
	if q.State != "" {
		v.Set("state", q.State)
	}
	if q.Crawl != 0 {
		v.Set("crawl", strconv.FormatUint(uint64(q.Crawl), 10))
	}
	if q.Cursor != "" {
		v.Set("cursor", q.Cursor)
	}
	if q.Limit != 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	path := "/v1/hosts"
	if len(v) > 0 {
		path += "?" + v.Encode()
	}
	var l HostList
	_, raw, err := c.call(ctx, http.MethodGet, path, nil, &l)
	l.Raw = raw
	return l, err
}

// HostStatus returns one host's detail; a 404 *Error if the node knows
// nothing of it.
func (c *Client) HostStatus(ctx context.Context, host string) (HostDetail, error) {
	var d HostDetail
	_, raw, err := c.call(ctx, http.MethodGet, "/v1/hosts/"+url.PathEscape(host), nil, &d)
	d.Raw = raw
	return d, err
}

// SetHostPolicy replaces a host's policy with p (the zero HostPolicy
// restores the node's defaults). It needs the token.
func (c *Client) SetHostPolicy(ctx context.Context, host string, p HostPolicy) (PolicySet, error) {
	var s PolicySet
	_, raw, err := c.call(ctx, http.MethodPut, "/v1/hosts/"+url.PathEscape(host)+"/policy", p, &s)
	s.Raw = raw
	return s, err
}

// Node returns the node's own state.
func (c *Client) Node(ctx context.Context) (NodeState, error) {
	return c.node(ctx, http.MethodGet, "/v1/node")
}

// PauseNode stops leasing on the whole node (fetches in flight finish)
// and returns its state after the change. It needs the token.
func (c *Client) PauseNode(ctx context.Context) (NodeState, error) {
	return c.node(ctx, http.MethodPost, "/v1/node/pause")
}

// ResumeNode undoes PauseNode.
func (c *Client) ResumeNode(ctx context.Context) (NodeState, error) {
	return c.node(ctx, http.MethodPost, "/v1/node/resume")
}

func (c *Client) node(ctx context.Context, method, path string) (NodeState, error) {
	var s NodeState
	_, raw, err := c.call(ctx, method, path, nil, &s)
	s.Raw = raw
	return s, err
}
