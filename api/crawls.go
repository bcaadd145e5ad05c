package api

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/trawl-crawler/trawl/api/wire"
	"github.com/trawl-crawler/trawl/frontier"
	"github.com/trawl-crawler/trawl/hostpolicy"
	"github.com/trawl-crawler/trawl/job"
	"github.com/trawl-crawler/trawl/node"
)

// Node is what the routes need of a node; *node.Node has it. A crawl
// created with the name of an existing one revives that crawl under the
// new spec: the same id, its seen URLs and counts kept (Submit's rule,
// which lets `trawl crawl` resume a crawl by name).
type Node interface {
	Submit(job.Spec) (*job.Job, error)
	Jobs() []*job.Job
	Job(job.ID) *job.Job
	Progress(job.ID) (job.Progress, bool)
	Pause(job.ID) error
	Resume(job.ID) error
	Cancel(job.ID) error
	AddSeeds(job.ID, []string) (int, error)
	EditExclusions(id job.ID, add, remove []string) (*job.Exclusions, error)

	SetHostPolicy(host string, p hostpolicy.Policy) (string, error)
	HostStatus(host string) (*node.HostStatus, bool, error)
	Hosts(node.HostFilter) ([]frontier.HostInfo, frontier.HostCursor, error)
	PauseNode() error
	ResumeNode() error
	NodePaused() bool
	FrontierStats() frontier.Stats // for GET /v1/stats
}

// MaxBodyBytes bounds a request body.
const MaxBodyBytes = 1 << 20

// POST /v1/crawls's body is a wire.CrawlRequest (docs/api/openapi.yaml).
// A key the body leaves out (or gives as null) keeps the value
// requestOf(job.Defaults()) gave it: the crawl's default, as at every
// other door. A 0 given means what the spec's zero means (no limit,
// never).

// requestOf is s in the request's shape: what a body that leaves every
// key out asks for when s is job.Defaults().
func requestOf(s job.Spec) wire.CrawlRequest {
	var r wire.CrawlRequest
	r.Name, r.Seeds, r.Priority, r.Continuous = s.Name, s.Seeds, s.Priority, s.Continuous
	r.Scope.Domains, r.Scope.MaxDepth, r.Scope.MaxURLsPerPattern = s.Domains, ptr(s.MaxDepth), ptr(s.MaxURLsPerPattern)
	r.Scope.SessionParams, r.Scope.KeepSessionIDs = s.SessionParams, s.KeepSessionIDs
	r.Limits.MaxPages, r.Limits.RobotsGiveUpS, r.Limits.MaxWaitS = s.MaxPages, ptr(s.RobotsGiveUp.Seconds()), ptr(s.MaxWait.Seconds())
	r.Recrawl = recrawlOf(s)
	r.Requisites = wire.Requisites{Reach: s.Requisites, MaxHops: s.RequisiteHops}
	r.Usage = wire.Usage{Purpose: s.Purpose, OnDenied: s.OnDenied, TDMRep: s.TDMRep}
	return r
}

// specOf is the job.Spec r asks for; requestOf's inverse. A key given as
// null (a nil pointer) keeps def's value, as if left out.
func specOf(r wire.CrawlRequest, def job.Spec) job.Spec {
	return job.Spec{Name: r.Name, Seeds: r.Seeds, Domains: r.Scope.Domains, MaxDepth: or(r.Scope.MaxDepth, def.MaxDepth),
		MaxURLsPerPattern: or(r.Scope.MaxURLsPerPattern, def.MaxURLsPerPattern), SessionParams: r.Scope.SessionParams, KeepSessionIDs: r.Scope.KeepSessionIDs,
		MaxPages: r.Limits.MaxPages, Priority: r.Priority, RobotsGiveUp: secondsOr(r.Limits.RobotsGiveUpS, def.RobotsGiveUp), MaxWait: secondsOr(r.Limits.MaxWaitS, def.MaxWait),
		Continuous: r.Continuous, RecrawlMin: seconds(r.Recrawl.MinS), RecrawlMax: seconds(r.Recrawl.MaxS),
		RecrawlBudget: r.Recrawl.BudgetPerHour, RecrawlSchedule: r.Recrawl.Schedule,
		Requisites: r.Requisites.Reach, RequisiteHops: r.Requisites.MaxHops, Purpose: r.Usage.Purpose, OnDenied: r.Usage.OnDenied, TDMRep: r.Usage.TDMRep}
}

// recrawlOf is s's recrawl bounds and budget on the wire.
func recrawlOf(s job.Spec) wire.Recrawl {
	return wire.Recrawl{MinS: s.RecrawlMin.Seconds(), MaxS: s.RecrawlMax.Seconds(), BudgetPerHour: s.RecrawlBudget, Schedule: s.RecrawlSchedule}
}

func ptr[T any](v T) *T { return &v }

// or is *p, or def if p is nil.
func or[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

// secondsOr is seconds(*s), or def if s is nil.
func secondsOr(s *float64, def time.Duration) time.Duration {
	if s == nil {
		return def
	}
	return seconds(*s)
}

// specPaths maps job.Spec's field names to the request's JSON paths;
// every field a request sets has one.
var specPaths = map[string]string{"Name": "name", "Seeds": "seeds", "Domains": "scope.domains",
	"MaxDepth": "scope.max_depth", "MaxURLsPerPattern": "scope.max_urls_per_pattern", "SessionParams": "scope.session_params",
	"KeepSessionIDs": "scope.keep_session_ids", "MaxPages": "limits.max_pages", "Priority": "priority",
	"RobotsGiveUp": "limits.robots_give_up_s", "MaxWait": "limits.max_wait_s", "Continuous": "continuous",
	"RecrawlMin": "recrawl.min_s", "RecrawlMax": "recrawl.max_s", "RecrawlBudget": "recrawl.budget_per_hour",
	"RecrawlSchedule": "recrawl.schedule", "Requisites": "requisites.reach", "RequisiteHops": "requisites.max_hops",
	"Purpose": "usage.purpose", "OnDenied": "usage.on_denied", "TDMRep": "usage.tdmrep"}

// seconds is s seconds as a Duration; beyond a Duration's range, the
// nearest end of it (which job.Spec.Validate refuses).
func seconds(s float64) time.Duration {
	ns := s * float64(time.Second)
	switch {
	case ns >= math.MaxInt64:
		return math.MaxInt64
	case ns <= math.MinInt64:
		return math.MinInt64
	}
	return time.Duration(ns)
}

// recrawlStats are a crawl's recrawl figures, in its stats and in GET
// /v1/stats's crawls: the counts over every run, and for a continuous
// crawl whether it waits for recrawls and the schedule's last figures.
type recrawlStats struct {
	continuous, waitingForRecrawls bool
	recrawls, notModified, changed int64
	freshness                      *wire.Freshness
}

// recrawlStatsOf is p's recrawl figures, from its total counts and, while
// st is running, whether it waits.
func recrawlStatsOf(p job.Progress, st job.State) recrawlStats {
	r := recrawlStats{continuous: p.Continuous, waitingForRecrawls: st == job.Running && p.WaitingForRecrawls(),
		recrawls: p.Total.Recrawls, notModified: p.Total.NotModified, changed: p.Total.Changed}
	if f := p.Freshness; f != nil {
		r.freshness = &wire.Freshness{At: f.At, Scheduled: f.Scheduled, Due: f.Due, Overdue: f.Overdue, Freshness: f.Freshness, MeanAgeS: f.MeanAgeSeconds}
	}
	return r
}

// viewOf is j as the API shows it.
func viewOf(j *job.Job) wire.Crawl {
	st, reason := j.State()
	v := wire.Crawl{ID: uint32(j.ID), Name: j.Spec.Name, State: string(st), StopReason: reason,
		Seeds: j.Spec.Seeds, Domains: j.Spec.Domains, MaxDepth: j.Spec.MaxDepth,
		MaxPages: j.Spec.MaxPages, Priority: j.Spec.Priority}
	if v.Domains == nil {
		v.Domains = []string{}
	}
	if s := j.Spec; s.Continuous {
		v.Continuous = true
		r := recrawlOf(s)
		v.Recrawl = &r
	}
	if s := j.Spec; s.Requisites != "" {
		v.Requisites = &wire.Requisites{Reach: s.Requisites, MaxHops: s.MaxRequisiteHops()}
	}
	if s := j.Spec; s.Purpose != "" || s.TDMRep {
		onDenied := s.OnDenied
		if onDenied == "" && s.Purpose != "" {
			onDenied = job.DeniedMark
		}
		v.Usage = &wire.Usage{Purpose: s.Purpose, OnDenied: onDenied, TDMRep: s.ReadsTDMRep()}
	}
	return v
}

// crawls serves the crawl routes over the node node() returns (nil until
// the node is ready: 503).
type crawls struct {
	node    func() Node
	token   string
	dataDir string // for GET /v1/crawls/{id}/wacz; "" none
}

func (c *crawls) register(mux *http.ServeMux) {
	mux.HandleFunc("GET /v1/crawls", c.list)
	mux.HandleFunc("POST /v1/crawls", c.mutation(c.create))
	mux.HandleFunc("GET /v1/crawls/{id}", c.withJob(func(w http.ResponseWriter, _ *http.Request, _ Node, j *job.Job) {
		writeJSON(w, http.StatusOK, viewOf(j))
	}))
	mux.HandleFunc("GET /v1/crawls/{id}/stats", c.withJob(c.stats))
	for _, a := range []struct {
		name string
		do   func(Node, job.ID) error
	}{{"pause", Node.Pause}, {"resume", Node.Resume}, {"cancel", Node.Cancel}} {
		mux.HandleFunc("POST /v1/crawls/{id}/"+a.name, c.mutation(c.withJob(func(w http.ResponseWriter, _ *http.Request, n Node, j *job.Job) {
			if err := a.do(n, j.ID); err != nil {
				if errors.Is(err, job.ErrEnded) {
					st, _ := j.State()
					writeError(w, http.StatusConflict, "", fmt.Sprintf("crawl %d is %s: it cannot be %sd", j.ID, st, strings.TrimSuffix(a.name, "e")))
					return
				}
				writeError(w, http.StatusInternalServerError, "", err.Error())
				return
			}
			writeJSON(w, http.StatusOK, viewOf(j))
		})))
	}
}

// mutation requires the bearer token.
func (c *crawls) mutation(h http.HandlerFunc) http.HandlerFunc {
	return c.withToken("this route changes the node", h)
}

// withToken requires the bearer token; what says why in the 401.
func (c *crawls) withToken(what string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || c.token == "" || subtle.ConstantTimeCompare([]byte(got), []byte(c.token)) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="trawl"`)
			writeError(w, http.StatusUnauthorized, "", what+": it needs Authorization: Bearer TOKEN (the token trawl serve was given or wrote)")
			return
		}
		h(w, r)
	}
}

// ready returns the node, or answers 503 and returns nil.
func (c *crawls) ready(w http.ResponseWriter) Node {
	n := c.node()
	if n == nil {
		writeError(w, http.StatusServiceUnavailable, "", "the node is still loading its state")
	}
	return n
}

// withJob resolves {id}: 400 if it is not a crawl id, 404 if unknown.
func (c *crawls) withJob(h func(http.ResponseWriter, *http.Request, Node, *job.Job)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		n := c.ready(w)
		if n == nil {
			return
		}
		id, err := strconv.ParseUint(r.PathValue("id"), 10, 32)
		if err != nil || id == 0 {
			writeError(w, http.StatusBadRequest, "id", fmt.Sprintf("%q is not a crawl id (a positive integer)", r.PathValue("id")))
			return
		}
		j := n.Job(job.ID(id))
		if j == nil {
			writeError(w, http.StatusNotFound, "id", fmt.Sprintf("no crawl %d", id))
			return
		}
		h(w, r, n, j)
	}
}

func (c *crawls) list(w http.ResponseWriter, _ *http.Request) {
	n := c.ready(w)
	if n == nil {
		return
	}
	out := wire.CrawlList{Crawls: []wire.Crawl{}}
	for _, j := range n.Jobs() {
		out.Crawls = append(out.Crawls, viewOf(j))
	}
	writeJSON(w, http.StatusOK, out)
}

func (c *crawls) stats(w http.ResponseWriter, _ *http.Request, n Node, j *job.Job) {
	p, _ := n.Progress(j.ID)
	st, _ := j.State()
	t := p.Total // counts over every run of the node; the rate is this run's
	v := wire.Stats{CrawlID: uint32(j.ID), State: string(st), Fetched: t.Pages, Requests: t.Requests, Bytes: t.Bytes,
		Discovered: t.Discovered, Queued: p.Queued, InFlight: p.InFlight, Held: p.Held, Dropped: p.Dropped,
		OutOfScope: t.OutOfScope, Excluded: t.Excluded, RobotsDisallowed: t.RobotsDisallowed, PagesPerSecond: p.PagesPerSecond,
		ElapsedSeconds: p.ElapsedSeconds, ErrorsByClass: t.Errors, StatusByClass: t.Status, RobotsFetches: t.RobotsFetches,
		Shared: t.Shared, Revisits: t.Revisits, NearDuplicates: t.NearDuplicates,
		Hosts: p.Hosts, HostsActive: p.HostsReady, HostsWaiting: p.HostsWaiting, HostsBackoff: p.HostsBackoff}
	r := recrawlStatsOf(p, st)
	v.Continuous, v.WaitingForRecrawls, v.Recrawls, v.NotModified, v.Changed, v.Freshness = r.continuous, r.waitingForRecrawls, r.recrawls, r.notModified, r.changed, r.freshness
	v.Waiting, v.RobotsGaveUp, v.WaitGaveUp = liveStatsOf(p, st)
	if v.ErrorsByClass == nil {
		v.ErrorsByClass = map[string]int64{}
	}
	if v.StatusByClass == nil {
		v.StatusByClass = map[string]int64{}
	}
	writeJSON(w, http.StatusOK, v)
}

func (c *crawls) create(w http.ResponseWriter, r *http.Request) {
	n := c.ready(w)
	if n == nil {
		return
	}
	def := job.Defaults()
	req := requestOf(def)
	if code, field, msg := decodeBody(w, r, &req); code != 0 {
		writeError(w, code, field, msg)
		return
	}
	spec := specOf(req, def)
	if err := spec.Validate(); err != nil {
		writeFieldErrors(w, err, specPaths)
		return
	}
	j, err := n.Submit(spec) // the spec is valid: an error here is the node's
	if err != nil {
		writeError(w, http.StatusInternalServerError, "", err.Error())
		return
	}
	writeJSON(w, http.StatusAccepted, wire.Created{CrawlID: uint32(j.ID)})
}

// writeFieldErrors answers 400 for err's *job.FieldError values, each
// named by its JSON path (paths maps Spec field names to the body's, an
// element's index added: "seeds[3]") and joined by "; "; the answer's
// field is the first one's path.
func writeFieldErrors(w http.ResponseWriter, err error, paths map[string]string) {
	var first string
	var msgs []string
	for i, fe := range job.FieldErrors(err) {
		p := paths[fe.Field]
		if p == "" {
			p = "body"
		}
		if fe.Index >= 0 {
			p += fmt.Sprintf("[%d]", fe.Index)
		}
		if i == 0 {
			first = p
		}
		msgs = append(msgs, p+": "+fe.In(func(f string) string {
			if p, ok := paths[f]; ok {
				return p
			}
			return f
		}))
	}
	if len(msgs) == 0 {
		writeError(w, http.StatusBadRequest, "", err.Error())
		return
	}
	writeError(w, http.StatusBadRequest, first, strings.Join(msgs, "; "))
}

func writeError(w http.ResponseWriter, code int, field, msg string) {
	writeJSON(w, code, Error{Error: ErrorDetail{Field: field, Message: msg}})
}
