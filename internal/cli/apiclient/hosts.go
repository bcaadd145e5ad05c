package apiclient

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/trawl-crawler/trawl/api/wire"
)

// The host and node routes' bodies are package wire's.
type (
	HostPolicy   = wire.Policy
	Host         = wire.Host
	HostList     = wire.HostPage
	RobotsStatus = wire.RobotsStatus
	HostDetail   = wire.HostDetail
	PolicySet    = wire.PolicySet
	NodeState    = wire.NodeState
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
