package apiclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
)

// The crawl routes (docs/api/openapi.yaml: /v1/crawls...). Seeds and
// exclusions of a running crawl are in steer.go, the host and node routes
// in hosts.go.

// CrawlRequest is POST /v1/crawls's body. Zero fields take the server's
// defaults: no name, no domain limit (the seeds' hosts), no depth or page
// limit, priority 0.
type CrawlRequest struct {
	Name     string   `json:"name,omitempty"`
	Seeds    []string `json:"seeds"`
	Scope    Scope    `json:"scope,omitzero"`
	Priority int      `json:"priority,omitempty"` // -1 (low), 0 or 1 (high)
	Limits   Limits   `json:"limits,omitzero"`
}

// Scope is where a crawl may go.
type Scope struct {
	Domains  []string `json:"domains,omitempty"`   // these domains and their subdomains
	MaxDepth int      `json:"max_depth,omitempty"` // links followed from a seed; 0: no limit
}

// Limits end a crawl early.
type Limits struct {
	MaxPages      int     `json:"max_pages,omitempty"`        // 0: no limit
	RobotsGiveUpS float64 `json:"robots_give_up_s,omitempty"` // give up a host whose robots.txt stays unavailable this long; 0: never
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
	Raw        json.RawMessage `json:"-"` // the body as the server sent it, for a crawl a call returned alone
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
	NearDuplicates   int64            `json:"near_duplicates"` // pages near an archived one: links not followed
	PagesPerSecond   float64          `json:"pages_per_s"`
	ElapsedSeconds   float64          `json:"elapsed_s"`
	ErrorsByClass    map[string]int64 `json:"errors_by_class"`
	StatusByClass    map[string]int64 `json:"status_by_class"`
	Hosts            int              `json:"hosts"`
	HostsActive      int              `json:"hosts_active"`
	HostsWaiting     int              `json:"hosts_waiting"`
	HostsBackoff     int              `json:"hosts_backoff"`
	Raw              json.RawMessage  `json:"-"` // the body as the server sent it
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
