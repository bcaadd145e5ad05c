package apiclient

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
)

// Nodes is GET /v1/nodes's answer: the fleet the server is a member of.
type Nodes struct {
	Fleet      bool     `json:"fleet"` // false: a node on its own
	Self       string   `json:"self,omitempty"`
	Partitions int      `json:"partitions,omitempty"` // the fleet's partition count
	Nodes      []Member `json:"nodes"`
	// Peers are the fleet's embedded JetStream servers (none for a fleet
	// of one, or one on an outside NATS server).
	Peers []Peer `json:"peers"`

	Raw json.RawMessage `json:"-"`
}

// Peer is a server of a fleet's embedded JetStream cluster.
type Peer struct {
	Name          string  `json:"name"`
	Member        bool    `json:"member"` // a live member runs it
	Current       bool    `json:"current"`
	Offline       bool    `json:"offline"`
	ActiveSeconds float64 `json:"active_seconds"`
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

// RemovePeer removes a member gone for good from the fleet's JetStream
// peers.
func (c *Client) RemovePeer(ctx context.Context, name string) error {
	_, _, err := c.call(ctx, http.MethodDelete, "/v1/nodes/"+url.PathEscape(name), nil, nil)
	return err
}
