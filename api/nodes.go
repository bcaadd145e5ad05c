package api

import (
	"net/http"

	"github.com/trawl-crawler/trawl/api/wire"
)

// Member is one live member of a fleet, for GET /v1/nodes (package
// wire's).
type Member = wire.Member

// nodes serves GET /v1/nodes: the fleet's members as this member last saw
// them, and the partitions each owns.
type nodes struct {
	self       string
	partitions int
	members    func() []Member
}

func (h nodes) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	if h.members == nil {
		writeJSON(w, http.StatusOK, wire.Nodes{Nodes: []Member{}})
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
	writeJSON(w, http.StatusOK, wire.Nodes{Fleet: true, Self: h.self, Partitions: h.partitions, Nodes: ms})
}
