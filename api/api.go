// Package api is trawl's HTTP control API, served by `trawl serve`: JSON
// routes over a running node. It holds no crawl state of its own; every
// answer is read from the node when asked.
//
// The routes and their bodies are described in docs/api/openapi.yaml, which
// the tests check every answer against. GET /healthz answers 200 while the
// process serves HTTP at all; GET /readyz answers 200 once the node's
// state is loaded (a restart with a large store takes a while) and 503
// before. The crawl routes create, list, show, pause, resume and cancel
// crawls, read their counters, add seeds and edit exclusion patterns; the
// host routes list hosts by state and crawl (paged by cursor, each call
// bounded), show one host and set its policy; the node routes pause and
// resume the whole node. GET /v1/crawls/{id}/wacz streams a crawl's
// archive as a WACZ file (export.go). GET /v1/stats is the whole node in one answer
// (the dashboard's poll). Every route that changes anything needs the
// bearer token (401 without it). GET /metrics is the Prometheus scrape
// (package metrics), if Options.Metrics is set; GET / is the dashboard,
// if Options.Dashboard is set. Bodies are at most MaxBodyBytes, one JSON
// object without unknown fields; a bad request gets a 400 naming the field
// and changes nothing.
//
// Every answer is JSON with Content-Type application/json; an unknown path
// is a 404 and a wrong method a 405, each with an "error" object naming
// what was wrong.
package api

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/trawl-crawler/trawl/api/wire"
	"github.com/trawl-crawler/trawl/internal/hostrank"
)

// Options configures New.
type Options struct {
	// Node returns the node, or nil while it is still loading (then
	// /readyz and the crawl routes answer 503). Required.
	Node func() Node
	// Token is the bearer token every route that changes anything needs
	// (and GET /v1/crawls/{id}/wacz). Empty: no such route can be used.
	Token string
	// DataDir is the node's data directory, whose WARC files GET
	// /v1/crawls/{id}/wacz exports. Empty: that route answers 404.
	DataDir string
	// Metrics, if set, serves GET /metrics (package metrics).
	Metrics http.Handler
	// HostRanking, if set, ranks the busiest and slowest hosts for GET
	// /v1/stats (fed by the node's OnFetch).
	HostRanking *hostrank.Ranking
	// Dashboard, if set, serves GET / and GET /dashboard/... (package
	// dashboard).
	Dashboard http.Handler
	// Members, if set, lists the fleet this node is a member of (named
	// Self) for GET /v1/nodes; nil: the node is on its own.
	Members    func() []Member
	Self       string
	Partitions int // the fleet's partition count, for GET /v1/nodes
	// Peers, if set, lists the fleet's embedded JetStream servers for GET
	// /v1/nodes (Member filled in here); RemovePeer, if set, removes one
	// gone for good for DELETE /v1/nodes/{name} (its errors wrapping
	// ErrNoSuchPeer or ErrPeerRefused answer 404 and 409).
	Peers      func(context.Context) ([]Peer, error)
	RemovePeer func(ctx context.Context, name string) error
}

// New returns the API's handler.
func New(o Options) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, wire.Status{Status: "ok"})
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if o.Node() == nil {
			writeJSON(w, http.StatusServiceUnavailable, wire.Status{Status: "loading"})
			return
		}
		writeJSON(w, http.StatusOK, wire.Status{Status: "ready"})
	})
	c := &crawls{node: o.Node, token: o.Token, dataDir: o.DataDir}
	c.register(mux)
	c.registerSteering(mux)
	c.registerExport(mux)
	hosts{c}.register(mux)
	if o.Metrics != nil {
		mux.Handle("GET /metrics", o.Metrics)
	}
	mux.Handle("GET /v1/stats", &nodeStats{node: o.Node, ranking: o.HostRanking, start: time.Now()})
	mux.Handle("GET /v1/nodes", nodes{self: o.Self, partitions: o.Partitions, members: o.Members, peers: o.Peers})
	mux.Handle("DELETE /v1/nodes/{name}", c.mutation(removePeer(o.RemovePeer)))
	if o.Dashboard != nil {
		mux.Handle("GET /{$}", o.Dashboard)
		mux.Handle("GET /dashboard/", o.Dashboard)
	}
	return jsonErrors(mux)
}

// Error is the body of every error answer, and ErrorDetail what it says
// was wrong (package wire's).
type (
	Error       = wire.Error
	ErrorDetail = wire.ErrorDetail
)

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v) // the client may be gone; nothing to do then
}

// jsonErrors turns the mux's own plain-text 404 and 405 answers into JSON
// errors.
func jsonErrors(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pattern := mux.Handler(r); pattern == "" {
			// No route: ServeMux would answer 404, or 405 (with Allow)
			// if another method matches the path.
			rec := &statusOnly{header: http.Header{}}
			mux.ServeHTTP(rec, r)
			for k, v := range rec.header {
				if k == "Allow" {
					w.Header()[k] = v
				}
			}
			msg := "no such route: " + r.Method + " " + r.URL.Path
			if rec.code == http.StatusMethodNotAllowed {
				msg = "method " + r.Method + " not allowed on " + r.URL.Path
			}
			writeJSON(w, rec.code, Error{Error: ErrorDetail{Message: msg}})
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// statusOnly records the status and headers a handler writes, dropping
// its body.
type statusOnly struct {
	header http.Header
	code   int
}

func (s *statusOnly) Header() http.Header { return s.header }
func (s *statusOnly) WriteHeader(code int) {
	if s.code == 0 {
		s.code = code
	}
}
func (s *statusOnly) Write(b []byte) (int, error) {
	if s.code == 0 {
		s.code = http.StatusOK
	}
	return len(b), nil
}
