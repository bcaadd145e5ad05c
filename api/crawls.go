package api

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

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

// crawlRequest is POST /v1/crawls's body (docs/api/openapi.yaml).
type crawlRequest struct {
	Name  string   `json:"name"`
	Seeds []string `json:"seeds"`
	Scope struct {
		Domains           []string `json:"domains"`
		MaxDepth          int      `json:"max_depth"`
		MaxURLsPerPattern int      `json:"max_urls_per_pattern"`
		SessionParams     []string `json:"session_params"`
		KeepSessionIDs    bool     `json:"keep_session_ids"`
	} `json:"scope"`
	Priority int `json:"priority"`
	Limits   struct {
		MaxPages      int     `json:"max_pages"`
		RobotsGiveUpS float64 `json:"robots_give_up_s"`
	} `json:"limits"`
	Continuous bool        `json:"continuous"`
	Recrawl    recrawlView `json:"recrawl"`
}

// recrawlView is a continuous crawl's recrawl bounds and budget, in a
// request and in a crawl's view: 0 takes the default (job.Spec's
// RecrawlMin, RecrawlMax and RecrawlBudget).
type recrawlView struct {
	MinS          float64 `json:"min_s"`
	MaxS          float64 `json:"max_s"`
	BudgetPerHour float64 `json:"budget_per_hour"`
}

// maxRecrawlS bounds recrawl.min_s and recrawl.max_s: a year.
const maxRecrawlS = 365 * 24 * 3600

// check returns the request field at fault and why, or "" if r is valid
// for a crawl that is continuous or not.
func (r recrawlView) check(continuous bool) (field, msg string) {
	if !continuous {
		for _, f := range []struct {
			name string
			v    float64
		}{{"min_s", r.MinS}, {"max_s", r.MaxS}, {"budget_per_hour", r.BudgetPerHour}} {
			if f.v != 0 {
				return "recrawl." + f.name, fmt.Sprintf("%v: the recrawl settings apply to a continuous crawl: set \"continuous\": true", f.v)
			}
		}
		return "", ""
	}
	switch {
	case r.MinS < 0 || r.MinS > maxRecrawlS:
		return "recrawl.min_s", fmt.Sprintf("%v: want 0 (the default, an hour) up to a year, in seconds", r.MinS)
	case r.MaxS < 0 || r.MaxS > maxRecrawlS:
		return "recrawl.max_s", fmt.Sprintf("%v: want 0 (the default, 30 days) up to a year, in seconds", r.MaxS)
	case r.BudgetPerHour < 0:
		return "recrawl.budget_per_hour", fmt.Sprintf("%v: want 0 (no budget) or a positive number of recrawl fetches per hour", r.BudgetPerHour)
	}
	return "", ""
}

// seconds is s seconds as a Duration (s within maxRecrawlS).
func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// crawlView is a crawl as the API shows it.
type crawlView struct {
	ID         job.ID   `json:"id"`
	Name       string   `json:"name,omitempty"`
	State      string   `json:"state"`
	StopReason string   `json:"stop_reason,omitempty"`
	Seeds      []string `json:"seeds"`
	Domains    []string `json:"domains"`
	MaxDepth   int      `json:"max_depth"`
	MaxPages   int      `json:"max_pages"`
	Priority   int      `json:"priority"`
	// Continuous and Recrawl are set for a continuous crawl only.
	Continuous bool         `json:"continuous,omitempty"`
	Recrawl    *recrawlView `json:"recrawl,omitempty"`
}

// statsView is GET /v1/crawls/{id}/stats's body.
type statsView struct {
	CrawlID          job.ID           `json:"crawl_id"`
	State            string           `json:"state"`
	Fetched          int64            `json:"fetched"`
	Requests         int64            `json:"requests"`
	RobotsFetches    int64            `json:"robots_fetches"`
	Shared           int64            `json:"shared"`
	Bytes            int64            `json:"bytes"`
	Discovered       int64            `json:"discovered"`
	Queued           int              `json:"queued"`
	InFlight         int              `json:"in_flight"`
	Held             int              `json:"held"`
	Dropped          int              `json:"dropped"`
	OutOfScope       int64            `json:"out_of_scope"`
	Excluded         int64            `json:"excluded"`
	RobotsDisallowed int64            `json:"robots_disallowed"`
	Revisits         int64            `json:"revisits"`
	NearDuplicates   int64            `json:"near_duplicates"`
	PagesPerSecond   float64          `json:"pages_per_s"`
	ElapsedSeconds   float64          `json:"elapsed_s"`
	ErrorsByClass    map[string]int64 `json:"errors_by_class"`
	StatusByClass    map[string]int64 `json:"status_by_class"`
	Hosts            int              `json:"hosts"`
	HostsActive      int              `json:"hosts_active"`
	HostsWaiting     int              `json:"hosts_waiting"`
	HostsBackoff     int              `json:"hosts_backoff"`
	recrawlStats
	liveStats
}

// recrawlStats are a crawl's recrawl figures, in its stats and in GET
// /v1/stats's crawls: the counts over every run, and for a continuous
// crawl whether it waits for recrawls and the schedule's last figures.
type recrawlStats struct {
	Continuous         bool           `json:"continuous,omitempty"`
	WaitingForRecrawls bool           `json:"waiting_for_recrawls,omitempty"`
	Recrawls           int64          `json:"recrawls"`
	NotModified        int64          `json:"not_modified"`
	Changed            int64          `json:"changed"`
	Freshness          *job.Freshness `json:"freshness,omitempty"`
}

// recrawlStatsOf is p's recrawl figures, from its total counts and, while
// st is running, whether it waits.
func recrawlStatsOf(p job.Progress, st job.State) recrawlStats {
	return recrawlStats{Continuous: p.Continuous, WaitingForRecrawls: st == job.Running && p.WaitingForRecrawls(),
		Recrawls: p.Total.Recrawls, NotModified: p.Total.NotModified, Changed: p.Total.Changed, Freshness: p.Freshness}
}

func viewOf(j *job.Job) crawlView {
	st, reason := j.State()
	v := crawlView{ID: j.ID, Name: j.Spec.Name, State: string(st), StopReason: reason,
		Seeds: j.Spec.Seeds, Domains: j.Spec.Domains, MaxDepth: j.Spec.MaxDepth,
		MaxPages: j.Spec.MaxPages, Priority: j.Spec.Priority}
	if v.Domains == nil {
		v.Domains = []string{}
	}
	if s := j.Spec; s.Continuous {
		v.Continuous = true
		v.Recrawl = &recrawlView{MinS: s.RecrawlMin.Seconds(), MaxS: s.RecrawlMax.Seconds(), BudgetPerHour: s.RecrawlBudget}
	}
	return v
}

// crawls serves the crawl routes over the node node() returns (nil until
// the node is ready: 503).
type crawls struct {
	node  func() Node
	token string
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
	return func(w http.ResponseWriter, r *http.Request) {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || c.token == "" || subtle.ConstantTimeCompare([]byte(got), []byte(c.token)) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="trawl"`)
			writeError(w, http.StatusUnauthorized, "", "this route changes the node: it needs Authorization: Bearer TOKEN (the token trawl serve was given or wrote)")
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
	out := struct {
		Crawls []crawlView `json:"crawls"`
	}{Crawls: []crawlView{}}
	for _, j := range n.Jobs() {
		out.Crawls = append(out.Crawls, viewOf(j))
	}
	writeJSON(w, http.StatusOK, out)
}

func (c *crawls) stats(w http.ResponseWriter, _ *http.Request, n Node, j *job.Job) {
	p, _ := n.Progress(j.ID)
	st, _ := j.State()
	t := p.Total // counts over every run of the node; the rate is this run's
	v := statsView{CrawlID: j.ID, State: string(st), Fetched: t.Pages, Requests: t.Requests, Bytes: t.Bytes,
		Discovered: t.Discovered, Queued: p.Queued, InFlight: p.InFlight, Held: p.Held, Dropped: p.Dropped,
		OutOfScope: t.OutOfScope, Excluded: t.Excluded, RobotsDisallowed: t.RobotsDisallowed, PagesPerSecond: p.PagesPerSecond,
		ElapsedSeconds: p.ElapsedSeconds, ErrorsByClass: t.Errors, StatusByClass: t.Status, RobotsFetches: t.RobotsFetches,
		Shared: t.Shared, Revisits: t.Revisits, NearDuplicates: t.NearDuplicates,
		Hosts: p.Hosts, HostsActive: p.HostsReady, HostsWaiting: p.HostsWaiting, HostsBackoff: p.HostsBackoff,
		recrawlStats: recrawlStatsOf(p, st), liveStats: liveStatsOf(p, st)}
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
	var req crawlRequest
	if code, field, msg := decodeBody(w, r, &req); code != 0 {
		writeError(w, code, field, msg)
		return
	}
	switch {
	case len(req.Seeds) == 0:
		writeError(w, http.StatusBadRequest, "seeds", "at least one seed URL is needed")
		return
	case req.Scope.MaxDepth < 0:
		writeError(w, http.StatusBadRequest, "scope.max_depth", fmt.Sprintf("%d is negative (0: no limit)", req.Scope.MaxDepth))
		return
	case req.Limits.MaxPages < 0:
		writeError(w, http.StatusBadRequest, "limits.max_pages", fmt.Sprintf("%d is negative (0: no limit)", req.Limits.MaxPages))
		return
	case req.Priority < -1 || req.Priority > 1:
		writeError(w, http.StatusBadRequest, "priority", fmt.Sprintf("%d: want -1 (low), 0 or 1 (high)", req.Priority))
		return
	case req.Limits.RobotsGiveUpS < 0 || req.Limits.RobotsGiveUpS > 365*24*3600:
		writeError(w, http.StatusBadRequest, "limits.robots_give_up_s", fmt.Sprintf("%v: want 0 (never) up to a year, in seconds", req.Limits.RobotsGiveUpS))
		return
	}
	if field, msg := req.Recrawl.check(req.Continuous); field != "" {
		writeError(w, http.StatusBadRequest, field, msg)
		return
	}
	spec := job.Spec{Name: req.Name, Seeds: req.Seeds, Domains: req.Scope.Domains, MaxDepth: req.Scope.MaxDepth,
		MaxURLsPerPattern: req.Scope.MaxURLsPerPattern, SessionParams: req.Scope.SessionParams, KeepSessionIDs: req.Scope.KeepSessionIDs,
		MaxPages: req.Limits.MaxPages, Priority: req.Priority,
		RobotsGiveUp: time.Duration(req.Limits.RobotsGiveUpS * float64(time.Second)),
		Continuous:   req.Continuous, RecrawlMin: seconds(req.Recrawl.MinS), RecrawlMax: seconds(req.Recrawl.MaxS),
		RecrawlBudget: req.Recrawl.BudgetPerHour}
	if err := spec.Validate(); err != nil {
		writeError(w, http.StatusBadRequest, specField(err), err.Error())
		return
	}
	j, err := n.Submit(spec) // the spec is valid: an error here is the node's
	if err != nil {
		writeError(w, http.StatusInternalServerError, "", err.Error())
		return
	}
	writeJSON(w, http.StatusAccepted, struct {
		CrawlID job.ID `json:"crawl_id"`
	}{j.ID})
}

// specFields maps job.Spec's field names to the request's JSON paths.
var specFields = map[string]string{"Name": "name", "Seeds": "seeds", "Domains": "scope.domains",
	"MaxDepth": "scope.max_depth", "SessionParams": "scope.session_params", "MaxPages": "limits.max_pages", "Priority": "priority", "RobotsGiveUp": "limits.robots_give_up_s",
	"RecrawlMin": "recrawl.min_s", "RecrawlMax": "recrawl.max_s", "RecrawlBudget": "recrawl.budget_per_hour"}

// specField names the request field of the first job.FieldError in err,
// or "".
func specField(err error) string {
	var fe *job.FieldError
	if errors.As(err, &fe) {
		return specFields[fe.Field]
	}
	return ""
}

// decodeBody reads a JSON body into v: at most MaxBodyBytes, one object,
// no unknown fields. On failure it returns the status, the field at fault
// (if known) and a message.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) (code int, field, msg string) {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		if dec.More() || dec.Decode(&struct{}{}) != io.EOF {
			return http.StatusBadRequest, "", "the body holds more than one JSON value"
		}
		return 0, "", ""
	}
	var tooBig *http.MaxBytesError
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &tooBig):
		return http.StatusRequestEntityTooLarge, "", fmt.Sprintf("the body is over %d bytes", MaxBodyBytes)
	case errors.As(err, &typeErr):
		return http.StatusBadRequest, typeErr.Field, fmt.Sprintf("%s: want a JSON %s, not %s", typeErr.Field, typeErr.Type, typeErr.Value)
	case errors.As(err, &syntaxErr):
		return http.StatusBadRequest, "", fmt.Sprintf("malformed JSON at byte %d: %v", syntaxErr.Offset, err)
	case errors.Is(err, io.EOF):
		return http.StatusBadRequest, "", "the body is empty: want a JSON object"
	}
	if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		f = strings.Trim(f, `"`)
		return http.StatusBadRequest, f, fmt.Sprintf("unknown field %q", f)
	}
	return http.StatusBadRequest, "", fmt.Sprintf("malformed JSON: %v", err)
}

func writeError(w http.ResponseWriter, code int, field, msg string) {
	writeJSON(w, code, Error{ErrorDetail{Field: field, Message: msg}})
}
