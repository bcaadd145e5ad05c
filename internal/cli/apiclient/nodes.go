package apiclient

import (
	"context"
	"encoding/json"
	"net/http"
)

// Nodes is GET /v1/nodes's answer: the fleet the server is a member of.
type Nodes struct {
	Fleet      bool     `json:"fleet"` // false: a node on its own
	Self       string   `json:"self,omitempty"`
	Partitions int      `json:"partitions,omitempty"` // the fleet's partition count
	Nodes      []Member `json:"nodes"`

	Raw json.RawMessage `json:"-"`
}

// Member is one member of a fleet, as the answering member last saw it.
type Member struct {
	Name    string `json:"name"`
	Leaving bool   `json:"leaving"`
	Info    struct {
		API string `json:"api,omitempty"` // its API's base URL
	} `json:"info"`
	Owns []int `json:"owns"` // its partitions
}

// Nodes returns the fleet's members.
func (c *Client) Nodes(ctx context.Context) (Nodes, error) {
	var n Nodes
	_, raw, err := c.call(ctx, http.MethodGet, "/v1/nodes", nil, &n)
	n.Raw = raw
	return n, err
}
