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

// crawlRequest is POST /v1/crawls's body (docs/api/openapi.yaml). A key
// the body leaves out keeps the value requestOf(job.Defaults()) gave it:
// the crawl's default, as at every other door. A 0 given means what the
// spec's zero means (no limit, never).
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
		MaxWaitS      float64 `json:"max_wait_s"`
	} `json:"limits"`
	Continuous bool        `json:"continuous"`
	Recrawl    recrawlView `json:"recrawl"`
}

// requestOf is s in the request's shape: what a body that leaves every
// key out asks for when s is job.Defaults().
func requestOf(s job.Spec) crawlRequest {
	var r crawlRequest
	r.Name, r.Seeds, r.Priority, r.Continuous = s.Name, s.Seeds, s.Priority, s.Continuous
	r.Scope.Domains, r.Scope.MaxDepth, r.Scope.MaxURLsPerPattern = s.Domains, s.MaxDepth, s.MaxURLsPerPattern
	r.Scope.SessionParams, r.Scope.KeepSessionIDs = s.SessionParams, s.KeepSessionIDs
	r.Limits.MaxPages, r.Limits.RobotsGiveUpS, r.Limits.MaxWaitS = s.MaxPages, s.RobotsGiveUp.Seconds(), s.MaxWait.Seconds()
	r.Recrawl = recrawlView{MinS: s.RecrawlMin.Seconds(), MaxS: s.RecrawlMax.Seconds(), BudgetPerHour: s.RecrawlBudget}
	return r
}

// spec is the job.Spec r asks for; requestOf's inverse.
func (r crawlRequest) spec() job.Spec {
	return job.Spec{Name: r.Name, Seeds: r.Seeds, Domains: r.Scope.Domains, MaxDepth: r.Scope.MaxDepth,
		MaxURLsPerPattern: r.Scope.MaxURLsPerPattern, SessionParams: r.Scope.SessionParams, KeepSessionIDs: r.Scope.KeepSessionIDs,
		MaxPages: r.Limits.MaxPages, Priority: r.Priority, RobotsGiveUp: seconds(r.Limits.RobotsGiveUpS), MaxWait: seconds(r.Limits.MaxWaitS),
		Continuous: r.Continuous, RecrawlMin: seconds(r.Recrawl.MinS), RecrawlMax: seconds(r.Recrawl.MaxS),
		RecrawlBudget: r.Recrawl.BudgetPerHour}
}

// specPaths maps job.Spec's field names to the request's JSON paths;
// every field a request sets has one.
var specPaths = map[string]string{"Name": "name", "Seeds": "seeds", "Domains": "scope.domains",
	"MaxDepth": "scope.max_depth", "MaxURLsPerPattern": "scope.max_urls_per_pattern", "SessionParams": "scope.session_params",
	"KeepSessionIDs": "scope.keep_session_ids", "MaxPages": "limits.max_pages", "Priority": "priority",
	"RobotsGiveUp": "limits.robots_give_up_s", "MaxWait": "limits.max_wait_s", "Continuous": "continuous",
	"RecrawlMin": "recrawl.min_s", "RecrawlMax": "recrawl.max_s", "RecrawlBudget": "recrawl.budget_per_hour"}

// recrawlView is a continuous crawl's recrawl bounds and budget, in a
// request and in a crawl's view: 0 takes the default (job.Spec's
// RecrawlMin, RecrawlMax and RecrawlBudget).
type recrawlView struct {
	MinS          float64 `json:"min_s"`
	MaxS          float64 `json:"max_s"`
	BudgetPerHour float64 `json:"budget_per_hour"`
}

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
	req := requestOf(job.Defaults())
	if code, field, msg := decodeBody(w, r, &req); code != 0 {
		writeError(w, code, field, msg)
		return
	}
	spec := req.spec()
	if err := spec.Validate(); err != nil {
		writeFieldErrors(w, err, specPaths)
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
	writeJSON(w, code, Error{ErrorDetail{Field: field, Message: msg}})
}
