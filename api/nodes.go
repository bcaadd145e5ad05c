package api

import (
	"context"
	"errors"
	"net/http"
	"time"

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
	peers      func(context.Context) ([]Peer, error)
}

// Peer is a server of a fleet's embedded JetStream cluster (package
// wire's).
type Peer = wire.Peer

// The failures of Options.RemovePeer the API answers with a status of its
// own; any other is a 500.
var (
	// ErrNoSuchPeer: the name is no server of the cluster (404).
	ErrNoSuchPeer = errors.New("no such peer")
	// ErrPeerRefused: the removal is not for this peer or this member (a
	// live member; a member on an outside NATS server) (409).
	ErrPeerRefused = errors.New("peer removal refused")
)

// peerAsk bounds GET /v1/nodes's question to the JetStream cluster.
const peerAsk = 5 * time.Second

func (h nodes) ServeHTTP(w http.ResponseWriter, r *http.Request) {
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
	ans := wire.Nodes{Fleet: true, Self: h.self, Partitions: h.partitions, Nodes: ms}
	if h.peers != nil {
		ctx, cancel := context.WithTimeout(r.Context(), peerAsk)
		defer cancel()
		ps, err := h.peers(ctx)
		if err != nil {
			writeError(w, http.StatusServiceUnavailable, "", "the fleet's JetStream peers: "+err.Error())
			return
		}
		live := map[string]bool{}
		for _, m := range ms {
			live[m.Name] = true
		}
		for i := range ps {
			ps[i].Member = live[ps[i].Name]
		}
		ans.Peers = ps
	}
	writeJSON(w, http.StatusOK, ans)
}

// removePeer serves DELETE /v1/nodes/{name}.
func removePeer(remove func(context.Context, string) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("name")
		if remove == nil {
			writeError(w, http.StatusConflict, "name", "this node is not a member of a fleet: it has no peers to remove")
			return
		}
		err := remove(r.Context(), name)
		switch {
		case err == nil:
			writeJSON(w, http.StatusOK, wire.Status{Status: "removed"})
		case errors.Is(err, ErrNoSuchPeer):
			writeError(w, http.StatusNotFound, "name", err.Error())
		case errors.Is(err, ErrPeerRefused):
			writeError(w, http.StatusConflict, "name", err.Error())
		default:
			writeError(w, http.StatusInternalServerError, "", err.Error())
		}
	}
}
