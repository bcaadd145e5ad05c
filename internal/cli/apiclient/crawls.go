package apiclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// The crawl routes (docs/api/openapi.yaml: /v1/crawls...). Seeds and
// exclusions of a running crawl are in steer.go, the host and node routes
// in hosts.go.

// CrawlRequest is POST /v1/crawls's body. Fields left zero (nil) are left
// out and take the crawl's defaults (job.Defaults): no name, the seeds'
// hosts, depth 20, no page limit, robots.txt given up after 15 s,
// priority 0, not continuous.
type CrawlRequest struct {
	Name     string   `json:"name,omitempty"`
	Seeds    []string `json:"seeds"`
	Scope    Scope    `json:"scope,omitzero"`
	Priority int      `json:"priority,omitempty"` // -1 (low), 0 or 1 (high)
	Limits   Limits   `json:"limits,omitzero"`
	// Continuous crawls never end by themselves: once every page is
	// fetched they recrawl each as its change rate calls for, within
	// Recrawl, until cancelled or the server stops.
	Continuous bool    `json:"continuous,omitempty"`
	Recrawl    Recrawl `json:"recrawl,omitzero"` // only for a continuous crawl (a 400 otherwise)
}

// Recrawl is a continuous crawl's recrawl bounds and budget; zero fields
// take the server's defaults.
type Recrawl struct {
	MinS          float64 `json:"min_s,omitempty"`           // least time between two fetches of a page, in seconds; 0: an hour
	MaxS          float64 `json:"max_s,omitempty"`           // most time between two fetches of a page; 0: 30 days
	BudgetPerHour float64 `json:"budget_per_hour,omitempty"` // recrawl fetches per hour; 0: no budget
}

// Freshness is what the recrawl schedule knows of a continuous crawl's
// pages as of At: gauges, recomputed now and then.
type Freshness struct {
	At        time.Time `json:"at"`
	Scheduled int64     `json:"scheduled"`  // pages waiting for a recrawl
	Due       int64     `json:"due"`        // recrawls whose time has come
	Overdue   int64     `json:"overdue"`    // of Due, those more than the crawl's MinS late
	Freshness float64   `json:"freshness"`  // expected share of stored copies that match the live page, 0 to 1
	MeanAgeS  float64   `json:"mean_age_s"` // expected time since the live page differed from the stored copy, averaged, in seconds
}

// Scope is where a crawl may go.
type Scope struct {
	Domains  []string `json:"domains,omitempty"`   // these domains and their subdomains
	MaxDepth *int     `json:"max_depth,omitempty"` // links followed from a seed; nil: the default, 20; 0: no limit
}

// Limits end a crawl early.
type Limits struct {
	MaxPages      int      `json:"max_pages,omitempty"`        // 0: no limit
	RobotsGiveUpS *float64 `json:"robots_give_up_s,omitempty"` // give up a host whose robots.txt stays unavailable this long; nil: the default, 15; 0: never
	MaxWaitS      *float64 `json:"max_wait_s,omitempty"`       // give up hosts that ask to wait longer, once nothing else is due; nil: the default, 30; 0: never
}

// Created is POST /v1/crawls's answer.
type Created struct {
	CrawlID uint32          `json:"crawl_id"`
	Raw     json.RawMessage `json:"-"` // the body as the server sent it
}

// Crawl is a crawl as the API shows it.
type Crawl struct {
	ID         uint32          `json:"id"`
	Name       string          `json:"name,omitempty"`
	State      string          `json:"state"` // running, paused, cancelled, finished, failed
	StopReason string          `json:"stop_reason,omitempty"`
	Seeds      []string        `json:"seeds"`
	Domains    []string        `json:"domains"`
	MaxDepth   int             `json:"max_depth"`
	MaxPages   int             `json:"max_pages"`
	Priority   int             `json:"priority"`
	Continuous bool            `json:"continuous,omitempty"`
	Recrawl    *Recrawl        `json:"recrawl,omitempty"` // set for a continuous crawl
	Raw        json.RawMessage `json:"-"`                 // the body as the server sent it, for a crawl a call returned alone
}

// CrawlList is GET /v1/crawls's answer.
type CrawlList struct {
	Crawls []Crawl         `json:"crawls"` // by id
	Raw    json.RawMessage `json:"-"`      // the body as the server sent it
}

// Stats are a crawl's counters (GET /v1/crawls/{id}/stats).
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

// Waiting is what a crawl waits for while nothing of it may be fetched.
type Waiting struct {
	ForSeconds float64   `json:"for_s"`
	Until      time.Time `json:"until"`
	Hosts      int       `json:"hosts"`  // hosts with work, all waiting
	Reason     string    `json:"reason"` // why the soonest waits: retry-after, robots-retry-after, backoff, ...
	Why        string    `json:"why"`    // the reason in words
	Text       string    `json:"text"`   // "waiting 59m for 1 host (robots.txt Retry-After)"
}

// Crawls lists every crawl the node knows.
func (c *Client) Crawls(ctx context.Context) (CrawlList, error) {
	var l CrawlList
	_, raw, err := c.call(ctx, http.MethodGet, "/v1/crawls", nil, &l)
	l.Raw = raw
	return l, err
}

// Crawl returns one crawl; a 404 *Error if there is none with that id.
func (c *Client) Crawl(ctx context.Context, id uint32) (Crawl, error) {
	return c.crawl(ctx, http.MethodGet, fmt.Sprintf("/v1/crawls/%d", id))
}

// Stats returns a crawl's counters.
func (c *Client) Stats(ctx context.Context, id uint32) (Stats, error) {
	var s Stats
	_, raw, err := c.call(ctx, http.MethodGet, fmt.Sprintf("/v1/crawls/%d/stats", id), nil, &s)
	s.Raw = raw
	return s, err
}

// CreateCrawl starts a crawl (or, given the name of an existing crawl,
// returns that crawl: the server's rule). It needs the token.
func (c *Client) CreateCrawl(ctx context.Context, r CrawlRequest) (Created, error) {
	var out Created
	_, raw, err := c.call(ctx, http.MethodPost, "/v1/crawls", r, &out)
	out.Raw = raw
	return out, err
}

// Pause pauses a crawl and returns it as it is after the change; a 409
// *Error if it has ended. It needs the token.
func (c *Client) Pause(ctx context.Context, id uint32) (Crawl, error) {
	return c.crawl(ctx, http.MethodPost, fmt.Sprintf("/v1/crawls/%d/pause", id))
}

// Resume resumes a paused crawl, as Pause.
func (c *Client) Resume(ctx context.Context, id uint32) (Crawl, error) {
	return c.crawl(ctx, http.MethodPost, fmt.Sprintf("/v1/crawls/%d/resume", id))
}

// Cancel ends a crawl for good, as Pause.
func (c *Client) Cancel(ctx context.Context, id uint32) (Crawl, error) {
	return c.crawl(ctx, http.MethodPost, fmt.Sprintf("/v1/crawls/%d/cancel", id))
}

func (c *Client) crawl(ctx context.Context, method, path string) (Crawl, error) {
	var cr Crawl
	_, raw, err := c.call(ctx, method, path, nil, &cr)
	cr.Raw = raw
	return cr, err
}
