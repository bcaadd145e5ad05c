package api

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/trawl-crawler/trawl/api/wire"
	"github.com/trawl-crawler/trawl/frontier"
	"github.com/trawl-crawler/trawl/hostpolicy"
	"github.com/trawl-crawler/trawl/job"
	"github.com/trawl-crawler/trawl/node"
	"github.com/trawl-crawler/trawl/robotscache"
)

// The host and node routes: list hosts by state and crawl, show one,
// set its policy; pause and resume the whole node.
type hosts struct{ *crawls }

func (h hosts) register(mux *http.ServeMux) {
	mux.HandleFunc("GET /v1/hosts", h.list)
	mux.HandleFunc("GET /v1/hosts/{host}", h.show)
	mux.HandleFunc("PUT /v1/hosts/{host}/policy", h.mutation(h.setPolicy))
	mux.HandleFunc("GET /v1/node", h.nodeState)
	for _, a := range []struct {
		name string
		do   func(Node) error
	}{{"pause", Node.PauseNode}, {"resume", Node.ResumeNode}} {
		mux.HandleFunc("POST /v1/node/"+a.name, h.mutation(func(w http.ResponseWriter, r *http.Request) {
			n := h.ready(w)
			if n == nil {
				return
			}
			if err := a.do(n); err != nil {
				writeError(w, http.StatusInternalServerError, "", err.Error())
				return
			}
			h.nodeState(w, r)
		}))
	}
}

func policyOf(p hostpolicy.Policy) wire.Policy {
	v := wire.Policy{MaxParallel: p.MaxParallel, Paused: p.Paused}
	if p.HasMinDelay {
		ms := p.MinDelay.Milliseconds()
		v.MinDelayMS = &ms
	}
	return v
}

func hostViewOf(hi frontier.HostInfo) wire.Host {
	v := wire.Host{Host: hi.Host, State: hi.State, Queued: hi.Queued, InFlight: hi.InFlight, Leased: hi.Leased,
		Duplicates: hi.Duplicates, DelayMS: hi.Delay.Milliseconds(), DelayReason: hi.DelayReason, BackoffMS: hi.Backoff.Milliseconds(),
		CrawlDelayMS: hi.CrawlDelay.Milliseconds(), IP: hi.IP, Policy: policyOf(hi.Policy),
		DeadReason: hi.DeadReason, Failures: hi.Failures, FailingHow: hi.FailingHow}
	if !hi.NextAllowed.IsZero() {
		t := hi.NextAllowed.UTC()
		v.NextAllowed = &t
	}
	// Rounded up: a host that still waits never says 0.
	if v.WaitMS = (hi.Wait + time.Millisecond - 1).Milliseconds(); v.WaitMS > 0 {
		v.WaitReason = hi.DelayReason
	}
	return v
}

func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}

func robotsViewOf(s robotscache.OriginStatus, now time.Time) wire.RobotsStatus {
	v := wire.RobotsStatus{Origin: s.Origin, Pending: s.Pending, Attempts: s.Attempts, OutageSince: timeOrNil(s.OutageSince),
		LastAnswer: timeOrNil(s.LastAnswer), Error: s.Err}
	if s.HasCopy {
		v.Status, v.Fetched = s.Status, timeOrNil(s.Fetched)
		age := now.Sub(s.Fetched).Seconds()
		v.AgeS = &age
	}
	return v
}

func byCrawl(m map[job.ID]int) map[string]int {
	out := make(map[string]int, len(m))
	for id, n := range m {
		out[strconv.FormatUint(uint64(id), 10)] = n
	}
	return out
}

func (h hosts) list(w http.ResponseWriter, r *http.Request) {
	n := h.ready(w)
	if n == nil {
		return
	}
	q := r.URL.Query()
	f := node.HostFilter{State: q.Get("state"), Limit: 100}
	if f.State != "" && !slices.Contains(frontier.HostStates, f.State) {
		writeError(w, http.StatusBadRequest, "state", fmt.Sprintf("%q: want one of %v", f.State, frontier.HostStates))
		return
	}
	if s := q.Get("crawl"); s != "" {
		id, err := strconv.ParseUint(s, 10, 32)
		if err != nil || id == 0 {
			writeError(w, http.StatusBadRequest, "crawl", fmt.Sprintf("%q is not a crawl id (a positive integer)", s))
			return
		}
		if n.Job(job.ID(id)) == nil {
			writeError(w, http.StatusNotFound, "crawl", fmt.Sprintf("no crawl %d", id))
			return
		}
		f.Job = job.ID(id)
	}
	if s := q.Get("limit"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 || v > node.MaxHostsPage {
			writeError(w, http.StatusBadRequest, "limit", fmt.Sprintf("%q: want 1..%d", s, node.MaxHostsPage))
			return
		}
		f.Limit = v
	}
	if s := q.Get("cursor"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v < 0 {
			writeError(w, http.StatusBadRequest, "cursor", fmt.Sprintf("%q is not a cursor this server gave", s))
			return
		}
		f.Cursor = frontier.HostCursor(v)
	}
	page, next, err := n.Hosts(f)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "", err.Error())
		return
	}
	// NextCursor, if present, is where the listing goes on (the page may
	// be short: a call looks at a bounded number of hosts).
	out := wire.HostPage{Hosts: make([]wire.Host, 0, len(page))}
	for _, hi := range page {
		out.Hosts = append(out.Hosts, hostViewOf(hi))
	}
	if next >= 0 {
		out.NextCursor = strconv.FormatInt(int64(next), 10)
	}
	writeJSON(w, http.StatusOK, out)
}

func (h hosts) show(w http.ResponseWriter, r *http.Request) {
	n := h.ready(w)
	if n == nil {
		return
	}
	s, known, err := n.HostStatus(r.PathValue("host"))
	switch {
	case errors.Is(err, node.ErrBadHost):
		writeError(w, http.StatusBadRequest, "host", err.Error())
		return
	case err != nil:
		writeError(w, http.StatusInternalServerError, "", err.Error())
		return
	case !known:
		writeError(w, http.StatusNotFound, "host", fmt.Sprintf("the node knows nothing of host %q", s.Host))
		return
	}
	now := time.Now()
	d := wire.HostDetail{Host: hostViewOf(s.HostInfo), QueuedByCrawl: byCrawl(s.QueuedByJob), InFlightByCrawl: byCrawl(s.InFlightByJob),
		HeldByCrawl:   byCrawl(s.HeldByJob),
		QueuedCounted: s.QueuedCounted, Robots: []wire.RobotsStatus{}}
	for _, o := range s.Robots {
		d.Robots = append(d.Robots, robotsViewOf(o, now))
	}
	writeJSON(w, http.StatusOK, d)
}

// policyFields maps hostpolicy.Policy's field names to the body's.
var policyFields = map[string]string{"MinDelay": "min_delay_ms", "MaxParallel": "max_parallel"}

func (h hosts) setPolicy(w http.ResponseWriter, r *http.Request) {
	n := h.ready(w)
	if n == nil {
		return
	}
	var req wire.Policy
	if code, field, msg := decodeBody(w, r, &req); code != 0 {
		writeError(w, code, field, msg)
		return
	}
	p := hostpolicy.Policy{MaxParallel: req.MaxParallel, Paused: req.Paused}
	if req.MinDelayMS != nil {
		ms := *req.MinDelayMS
		if ms < 0 || ms > hostpolicy.MaxMinDelay.Milliseconds() {
			writeError(w, http.StatusBadRequest, "min_delay_ms", fmt.Sprintf("%d: want 0..%d (pause the host for longer)", ms, hostpolicy.MaxMinDelay.Milliseconds()))
			return
		}
		p.MinDelay, p.HasMinDelay = time.Duration(ms)*time.Millisecond, true
	}
	if err := p.Validate(); err != nil {
		var fe *hostpolicy.FieldError
		errors.As(err, &fe)
		field := ""
		if fe != nil {
			field = policyFields[fe.Field]
		}
		writeError(w, http.StatusBadRequest, field, err.Error())
		return
	}
	host, err := n.SetHostPolicy(r.PathValue("host"), p)
	switch {
	case errors.Is(err, node.ErrBadHost):
		writeError(w, http.StatusBadRequest, "host", err.Error())
		return
	case err != nil:
		writeError(w, http.StatusInternalServerError, "", err.Error())
		return
	}
	writeJSON(w, http.StatusOK, wire.PolicySet{Host: host, Policy: policyOf(p)})
}

func (h hosts) nodeState(w http.ResponseWriter, _ *http.Request) {
	n := h.ready(w)
	if n == nil {
		return
	}
	writeJSON(w, http.StatusOK, wire.NodeState{Paused: n.NodePaused()})
}
