// Package wire holds the JSON bodies of trawl's HTTP control API, as
// docs/api/openapi.yaml describes them: the server (package api) writes
// and reads them, the Go client (internal/cli/apiclient) sends and decodes
// them, so that each body is written once.
//
// Invariants: every type named after a schema of openapi.yaml has one
// field per property of that schema and no other JSON field, and every
// required property is a field always written (no omitempty): the test
// of this package checks both against the YAML. A Raw field (json:"-") is
// the client's: the body as the server sent it, never encoded.
//
// The package holds data and the arithmetic over it that both sides need
// (Stats.Add, AddCounts); no HTTP, no node.
package wire

import "encoding/json"

// Error is the body of every error answer.
type Error struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail says what was wrong: a message, and the request field it
// concerns, if one.
type ErrorDetail struct {
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
}

// Status is the body of the probes GET /healthz ("ok") and GET /readyz
// ("ready" or "loading").
type Status struct {
	Status string          `json:"status"`
	Raw    json.RawMessage `json:"-"` // the body as the server sent it
}

// NodeState is the node's own state (GET /v1/node).
type NodeState struct {
	Paused bool            `json:"paused"` // no crawl is fetched
	Raw    json.RawMessage `json:"-"`      // the body as the server sent it
}

// Nodes is GET /v1/nodes's answer: the fleet the server is a member of.
type Nodes struct {
	Fleet      bool     `json:"fleet"` // false: a node on its own, which serves every partition
	Self       string   `json:"self,omitempty"`
	Partitions int      `json:"partitions,omitempty"` // the fleet's partition count
	Nodes      []Member `json:"nodes"`
	// Peers are the servers of the fleet's embedded JetStream cluster
	// (absent for a fleet of one, or one on an outside NATS server),
	// members gone for good among them until removed (DELETE
	// /v1/nodes/{name}).
	Peers []Peer `json:"peers,omitempty"`
}

// Peer is a server of a fleet's embedded JetStream cluster.
type Peer struct {
	Name    string `json:"name"`
	Member  bool   `json:"member"`  // a live member runs it
	Current bool   `json:"current"` // seen recently and caught up
	Offline bool   `json:"offline"` // not seen for a while
	// ActiveSeconds is how long ago the cluster last heard from it.
	ActiveSeconds float64 `json:"active_seconds"`
}

// Member is one live member of a fleet, as the answering member last saw
// it.
type Member struct {
	Name    string          `json:"name"`
	Leaving bool            `json:"leaving"`        // handing its partitions on, to leave
	Info    json.RawMessage `json:"info,omitempty"` // what it published: {"api": its API's address}
	Owns    []int           `json:"owns"`           // the partitions the fleet's owner table gives it
}

// TokenFile is the file in a server's data directory that holds the API
// token the server made for itself when given none; the clients on the
// same machine read it there.
const TokenFile = "api.token"
