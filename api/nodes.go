package api

import (
	"encoding/json"
	"net/http"
)

// Member is one live member of a fleet, for GET /v1/nodes.
type Member struct {
	Name    string          `json:"name"`
	Leaving bool            `json:"leaving"`        // handing its partitions on, to leave
	Info    json.RawMessage `json:"info,omitempty"` // what it published: {"api": its API's address}
	Owns    []int           `json:"owns"`           // the partitions the fleet's owner table gives it
}

// nodesView is GET /v1/nodes's answer.
type nodesView struct {
	Fleet      bool     `json:"fleet"` // false: a node on its own, which serves every partition
	Self       string   `json:"self,omitempty"`
	Partitions int      `json:"partitions,omitempty"` // the fleet's partition count
	Nodes      []Member `json:"nodes"`
}

// nodes serves GET /v1/nodes: the fleet's members as this member last saw
// them, and the partitions each owns.
type nodes struct {
	self       string
	partitions int
	members    func() []Member
}

func (h nodes) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	if h.members == nil {
		writeJSON(w, http.StatusOK, nodesView{Nodes: []Member{}})
		return
	}
	ms := h.members()
	if ms == nil {
		ms = []Member{}
	}
	for i := range ms {
		if ms[i].Owns == nil {
			ms[i].Owns = []int{} // the schema's array, also for a member that owns none
		}
	}
	writeJSON(w, http.StatusOK, nodesView{Fleet: true, Self: h.self, Partitions: h.partitions, Nodes: ms})
}
