package apiclient

import (
	"context"
	"fmt"
	"net/http"

	"github.com/trawl-crawler/trawl/api/wire"
)

// The crawl routes' bodies are package wire's (docs/api/openapi.yaml),
// under the names this client has always given them.
type (
	CrawlRequest = wire.CrawlRequest
	Scope        = wire.Scope
	Limits       = wire.Limits
	Recrawl      = wire.Recrawl
	Requisites   = wire.Requisites
	Usage        = wire.Usage
	Freshness    = wire.Freshness
	Created      = wire.Created
	Crawl        = wire.Crawl
	CrawlList    = wire.CrawlList
	Stats        = wire.Stats
	Waiting      = wire.Waiting
)

// The crawl routes (docs/api/openapi.yaml: /v1/crawls...). Seeds and
// exclusions of a running crawl are in steer.go, the host and node routes
// in hosts.go.

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
