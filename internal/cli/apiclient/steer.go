package apiclient

import (
	"context"
	"fmt"
	"net/http"

	"github.com/trawl-crawler/trawl/api/wire"
)

// The steering routes' bodies are package wire's.
type (
	Seeded     = wire.SeedsAdded
	Exclusions = wire.Exclusions
)

// The routes that steer a running crawl (docs/api/openapi.yaml:
// /v1/crawls/{id}/seeds and /v1/crawls/{id}/exclusions). Each needs the
// token but the listing of patterns; a crawl that has ended refuses them
// with a 409 *Error, a bad URL or pattern with a 400 naming its field.

// AddSeeds queues seeds in a crawl that has not ended, through its
// exclusions and the URLs it has seen.
func (c *Client) AddSeeds(ctx context.Context, id uint32, seeds []string) (Seeded, error) {
	var s Seeded
	body := wire.Seeds{Seeds: seeds}
	_, raw, err := c.call(ctx, http.MethodPost, fmt.Sprintf("/v1/crawls/%d/seeds", id), body, &s)
	s.Raw = raw
	return s, err
}

// Exclusions returns a crawl's exclusion patterns.
func (c *Client) Exclusions(ctx context.Context, id uint32) (Exclusions, error) {
	return c.exclusions(ctx, http.MethodGet, id, nil)
}

// EditExclusions adds and removes exclusion patterns of a crawl that has
// not ended, and returns the patterns after the change.
func (c *Client) EditExclusions(ctx context.Context, id uint32, add, remove []string) (Exclusions, error) {
	body := wire.ExclusionEdit{Add: add, Remove: remove}
	return c.exclusions(ctx, http.MethodPost, id, body)
}

func (c *Client) exclusions(ctx context.Context, method string, id uint32, body any) (Exclusions, error) {
	var x Exclusions
	_, raw, err := c.call(ctx, method, fmt.Sprintf("/v1/crawls/%d/exclusions", id), body, &x)
	x.Raw = raw
	return x, err
}
