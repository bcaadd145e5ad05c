// Package job describes one crawl run by a node: its Spec (seeds, scope,
// limits, priority), its state (running, paused, cancelled, finished), why
// it stopped, and its own counters.
//
// A Job does no I/O and holds no lock other than its own; its counters are
// updated by the node's workers without a shared lock (atomics), its state
// under its mutex. Many jobs share one node: politeness (each host's gap,
// robots.txt) belongs to the node, never to a job.
package job

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/trawl-crawler/trawl/recrawl"
	"github.com/trawl-crawler/trawl/scope"
	"github.com/trawl-crawler/trawl/urlnorm"
)

// ID names a job within a node. IDs are assigned by the node, from 1 up,
// and never reused in one data directory.
type ID = uint32

// DefaultMaxWait is a one-shot crawl's Spec.MaxWait unless it says
// otherwise: waits a server asks for up to half a minute are honoured,
// longer ones are given up once nothing else is left.
const DefaultMaxWait = 30 * time.Second

// Spec is what a job is asked to do. A zero field takes the default named.
type Spec struct {
	// Name is a label for people and for `trawl crawl`, which resumes the
	// job of its name in a data directory. Optional; at most 128 bytes.
	Name string `json:"name,omitempty"`
	// Seeds are the URLs the job starts from. At least one.
	Seeds []string `json:"seeds"`
	// Domains limits the job to these hosts and their subdomains.
	// Default: the seeds' hosts.
	Domains []string `json:"domains,omitempty"`
	// MaxDepth is the most links followed from a seed; 0 means no limit.
	MaxDepth int `json:"max_depth,omitempty"`
	// MaxShapeRun caps the pages in a row, within one URL shape, that
	// yield nothing new (no new link, no new text): the mark of calendars
	// and other endless page families, against pagination, which yields
	// (scope.NextShapeRun). Default scope.DefaultMaxShapeRun; negative
	// means no cap.
	MaxShapeRun int `json:"max_shape_run,omitempty"`
	// MaxURLsPerPattern is the URLs the job queues per host and URL
	// pattern (scope.Pattern: digits folded, path parameters and the
	// query's names and values dropped) before the pattern's pages must
	// earn more room by yielding something new (scope.PatternRoomPerYield
	// per page), which stops faceted listings, soft-404 directories and
	// session-ID copies of a site while families that yield (products,
	// posts, ?page=N listings) are crawled whole. Default
	// scope.DefaultMaxURLsPerPattern (64); negative means no cap. The
	// counts live in the node's memory: a resumed job counts afresh.
	MaxURLsPerPattern int `json:"max_urls_per_pattern,omitempty"`
	// SessionParams are the query and path parameter names (compared
	// without case) stripped from every URL the job finds, before its
	// URL-seen check, so that a site writing a new session ID into every
	// link shows each page once. Empty means scope.DefaultSessionParams
	// (jsessionid, phpsessid, sid, sessionid, aspsessionid); to strip
	// nothing, set KeepSessionIDs.
	SessionParams []string `json:"session_params,omitempty"`
	// KeepSessionIDs turns session-ID stripping off (SessionParams is
	// then ignored).
	KeepSessionIDs bool `json:"keep_session_ids,omitempty"`
	// MaxPages stops the job after this many page fetches in one run of
	// the node (robots.txt fetches do not count); 0 means no limit.
	MaxPages int `json:"max_pages,omitempty"`
	// Priority moves the job's URLs between the frontier's priority
	// levels: 1 is high (one level up), -1 low (one level down), 0 normal.
	// Within a host, higher levels are served more often, never
	// exclusively.
	Priority int `json:"priority,omitempty"`
	// RobotsGiveUp is how long the job waits for a host whose robots.txt
	// stays unavailable (429, 5xx, network errors: nothing may be
	// fetched) before it gives the host's URLs up, and never before its
	// robots.txt has been asked twice; the summary counts such hosts. 0
	// means never: the node keeps retrying with growing backoff and, after
	// 30 days of outage, applies the last good copy or none (RFC 9309
	// 2.3.1.4).
	RobotsGiveUp time.Duration `json:"robots_give_up,omitempty"`
	// MaxWait bounds how long a one-shot job waits for hosts that ask it
	// to (a Retry-After on a page or on robots.txt, a backoff earned by
	// failing, a robots.txt outage): once nothing at all may be fetched
	// within MaxWait, the URLs of hosts that wait longer are given up
	// (counted, logged as dropped), and the job ends. So a one-shot job is
	// never idle for longer than MaxWait because a server asked for more.
	// The crawler's own waits (gaps, Crawl-delay) are waited out. 0 means
	// never give up. A continuous job waits for every host.
	MaxWait time.Duration `json:"max_wait,omitempty"`
	// Exclude holds URL exclusion patterns (Exclusions): a URL one
	// matches is not fetched. An operator may change them while the job
	// runs (Job.EditExclusions); they apply to queued URLs too.
	Exclude []string `json:"exclude,omitempty"`

	// Continuous keeps the job running when its frontier is empty: it
	// recrawls the pages it fetched, each when its schedule (package
	// recrawl) says, until it is cancelled or stopped. A job that is not
	// continuous ends when its frontier is empty; the pages it fetched
	// keep their validators, so a later job's fetches are conditional.
	Continuous bool `json:"continuous,omitempty"`
	// RecrawlMin and RecrawlMax bound the interval between two fetches of
	// a page of a continuous job, however fast or slowly it changes.
	// Zero means recrawl.DefaultMinInterval (1 hour) and
	// recrawl.DefaultMaxInterval (30 days).
	RecrawlMin time.Duration `json:"recrawl_min,omitempty"`
	RecrawlMax time.Duration `json:"recrawl_max,omitempty"`
	// RecrawlBudget is the recrawl fetches per hour a continuous job may
	// spend; the schedule spreads them over its pages for the best
	// average freshness. 0 means no budget: each page is revisited at the
	// interval its estimated change rate calls for under a fixed
	// multiplier.
	RecrawlBudget float64 `json:"recrawl_budget,omitempty"`
}

// RecrawlMinOrDefault is RecrawlMin, or recrawl.DefaultMinInterval if
// it is zero.
func (s Spec) RecrawlMinOrDefault() time.Duration {
	if s.RecrawlMin > 0 {
		return s.RecrawlMin
	}
	return recrawl.DefaultMinInterval
}

// FieldError is one Spec field Validate rejects. Field is the field's name
// in Spec ("Seeds", "MaxDepth"), for callers that show it under another
// name (the API's JSON paths).
type FieldError struct {
	Field string
	Err   error // the message, naming the field and the value
}

func (e *FieldError) Error() string { return e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

// Validate reports every bad field by name, each a *FieldError. Seeds must
// parse as absolute http(s) URLs.
func (s Spec) Validate() error {
	var errs []error
	bad := func(field string, v any, why string) {
		errs = append(errs, &FieldError{field, fmt.Errorf("job: %s = %v: %s", field, v, why)})
	}
	if len(s.Name) > 128 {
		bad("Name", fmt.Sprintf("%.20q...", s.Name), "longer than 128 bytes")
	}
	if len(s.Seeds) == 0 {
		bad("Seeds", "[]", "at least one seed is needed")
	}
	if _, _, err := s.parseSeeds(); err != nil {
		errs = append(errs, err)
	}
	for _, d := range s.Domains {
		if d == "" || strings.ContainsAny(d, "/:?# ") {
			bad("Domains", fmt.Sprintf("%q", d), "not a host name")
		}
	}
	if s.MaxDepth < 0 {
		bad("MaxDepth", s.MaxDepth, "negative")
	}
	if s.MaxPages < 0 {
		bad("MaxPages", s.MaxPages, "negative")
	}
	if s.Priority < -1 || s.Priority > 1 {
		bad("Priority", s.Priority, "want -1 (low), 0 (normal) or 1 (high)")
	}
	if s.RobotsGiveUp < 0 {
		bad("RobotsGiveUp", s.RobotsGiveUp, "negative")
	}
	if s.MaxWait < 0 {
		bad("MaxWait", s.MaxWait, "negative")
	}
	if s.RecrawlMin < 0 {
		bad("RecrawlMin", s.RecrawlMin, "negative")
	}
	if s.RecrawlMax < 0 {
		bad("RecrawlMax", s.RecrawlMax, "negative")
	}
	if s.RecrawlMin > 0 && s.RecrawlMax > 0 && s.RecrawlMin > s.RecrawlMax {
		bad("RecrawlMin", s.RecrawlMin, fmt.Sprintf("above RecrawlMax %v", s.RecrawlMax))
	}
	if s.RecrawlBudget < 0 || math.IsNaN(s.RecrawlBudget) || math.IsInf(s.RecrawlBudget, 0) {
		bad("RecrawlBudget", s.RecrawlBudget, "want 0 (none) or a positive number of fetches per hour")
	}
	for _, p := range s.SessionParams {
		if p == "" || strings.ContainsAny(p, "=&;/?# ") {
			bad("SessionParams", fmt.Sprintf("%q", p), "not a parameter name")
		}
	}
	if err := checkPatterns("Exclude", s.Exclude); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// ParseSeeds checks and canonicalises seed URLs as Validate does for
// Spec.Seeds; errors are *FieldError values for "Seeds".
func ParseSeeds(seeds []string) ([]*url.URL, error) {
	us, _, err := Spec{Seeds: seeds}.parseSeeds()
	return us, err
}

// parseSeeds canonicalises the seeds and returns them with their hosts
// (the default scope).
func (s Spec) parseSeeds() ([]*url.URL, []string, error) {
	var seeds []*url.URL
	var hosts []string
	var errs []error
	for _, raw := range s.Seeds {
		u, err := urlnorm.Parse(strings.TrimSpace(raw), nil)
		if err == nil && u.Scheme != "http" && u.Scheme != "https" {
			err = fmt.Errorf("scheme %q: want http or https", u.Scheme)
		}
		if err != nil {
			errs = append(errs, &FieldError{"Seeds", fmt.Errorf("job: seed %q: %w", raw, err)})
			continue
		}
		u = urlnorm.Normalize(u)
		seeds = append(seeds, u)
		hosts = append(hosts, urlnorm.HostKey(u))
	}
	return seeds, hosts, errors.Join(errs...)
}

// rules are the job's scope rules, defaults filled in.
func (s Spec) rules(domains []string) scope.Rules {
	r := scope.Rules{Domains: domains, MaxDepth: s.MaxDepth, MaxShapeRun: s.MaxShapeRun,
		MaxURLsPerPattern: s.MaxURLsPerPattern}
	if len(s.SessionParams) > 0 {
		r.SessionParams = s.SessionParams
	}
	if s.KeepSessionIDs {
		r.SessionParams = []string{}
	}
	return r.WithDefaults()
}

// State is where a job is in its life.
type State string

// The states of a job. Running, Paused and the three ends; a job that has
// ended never runs again.
const (
	Running   State = "running"
	Paused    State = "paused"
	Cancelled State = "cancelled"
	Finished  State = "finished" // exhausted, or a limit reached
	Failed    State = "failed"   // stopped by an error
)

// Ended reports whether s is a final state.
func (s State) Ended() bool { return s == Cancelled || s == Finished || s == Failed }

// Stop reasons, as a summary reports them.
const (
	ReasonExhausted = "exhausted" // nothing left to fetch
	ReasonMaxPages  = "max-pages"
	ReasonSignal    = "signal"    // the node stopped while the job ran
	ReasonCancelled = "cancelled" // cancelled by an operator
	ReasonError     = "error"
)

// Job is one crawl on a node. Create it with New.
type Job struct {
	ID      ID
	Spec    Spec
	Created time.Time
	Scope   scope.Rules
	Seeds   []*url.URL // canonical seeds
	Stats   Stats

	excl atomic.Pointer[Exclusions] // Spec.Exclude compiled

	mu     sync.Mutex
	state  State
	reason string
	err    error
	ended  chan struct{} // closed once the state is final
}

// New returns a running job of spec, which must be valid.
func New(id ID, spec Spec, created time.Time) (*Job, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	seeds, hosts, _ := spec.parseSeeds()
	domains := spec.Domains
	if len(domains) == 0 {
		domains = hosts
	}
	j := &Job{
		ID:      id,
		Spec:    spec,
		Created: created,
		Seeds:   seeds,
		Scope:   spec.rules(domains),
		state:   Running,
		ended:   make(chan struct{}),
	}
	x, err := CompileExclusions(spec.Exclude)
	if err != nil {
		return nil, err
	}
	j.excl.Store(x)
	j.Stats.init()
	j.Stats.continuous = spec.Continuous
	return j, nil
}

// Excludes reports whether one of the job's exclusion patterns matches
// url (a canonical URL). Safe for concurrent use with EditExclusions.
func (j *Job) Excludes(url string) bool { return j.excl.Load().Excludes(url) }

// Exclusions returns the job's exclusion patterns now.
func (j *Job) Exclusions() *Exclusions { return j.excl.Load() }

// SetExclusions replaces the job's exclusion patterns (the set x, made
// by CompileExclusions or Edit); Record reflects it at once.
func (j *Job) SetExclusions(x *Exclusions) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.excl.Store(x)
	j.Spec.Exclude = x.Patterns()
}

// State returns the job's state and, once it ended, why.
func (j *Job) State() (State, string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.state, j.reason
}

// Err is the error that stopped the job, if any.
func (j *Job) Err() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.err
}

// Ended is closed once the job reaches a final state.
func (j *Job) Ended() <-chan struct{} { return j.ended }

// ErrEnded is returned for a change asked of a job that has ended.
var ErrEnded = errors.New("job has ended")

// SetPaused pauses (true) or resumes (false) a job that has not ended,
// and returns the state it left.
func (j *Job) SetPaused(paused bool) (was State, err error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.state.Ended() {
		return j.state, fmt.Errorf("job %d: %w (%s)", j.ID, ErrEnded, j.reason)
	}
	was, j.state = j.state, Running
	if paused {
		j.state = Paused
	}
	return was, nil
}

// End moves the job to a final state with reason (and err, for Failed)
// and returns the state it left. ok is false if the job had already ended
// (the first end wins).
func (j *Job) End(s State, reason string, err error) (was State, ok bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.state.Ended() {
		return j.state, false
	}
	was = j.state
	j.state, j.reason, j.err = s, reason, err
	close(j.ended)
	return was, true
}

// Level is the frontier priority level of a URL of this job at depth:
// seeds first, then by depth, shifted by the job's priority, clamped to
// 0..levels-1. With the node's 3 levels and priority 0: seeds 0, their
// links 1, everything deeper 2; priority 1 lifts each a level (seeds
// and their links 0), -1 lowers one. The frontier uses levels to order
// each host's own URLs (frontier.Item.Level); a sitemap or a change-rate
// estimate that wants a URL sooner queues it at a lower level than its
// depth gives.
func (j *Job) Level(depth, levels int) int {
	return max(0, min(min(depth, levels-1)-j.Spec.Priority, levels-1))
}

// Record is a job as the node keeps it in its store (JSON under
// store.JobKey): what is needed to resume it after a restart.
type Record struct {
	ID      ID        `json:"id"`
	Spec    Spec      `json:"spec"`
	Created time.Time `json:"created"`
	State   State     `json:"state"`
	Reason  string    `json:"reason,omitempty"`
	Error   string    `json:"error,omitempty"`
}

// Record returns what the node keeps of j.
func (j *Job) Record() Record {
	j.mu.Lock()
	defer j.mu.Unlock()
	r := Record{ID: j.ID, Spec: j.Spec, Created: j.Created, State: j.state, Reason: j.reason}
	if j.err != nil {
		r.Error = j.err.Error()
	}
	return r
}

// Encode returns r's stored form.
func (r Record) Encode() []byte {
	b, _ := json.Marshal(r) // a Record always marshals
	return b
}

// DecodeRecord reads a stored job. Unknown fields are errors: a record
// written by a newer trawl is not silently misread.
func DecodeRecord(v []byte) (Record, error) {
	var r Record
	dec := json.NewDecoder(strings.NewReader(string(v)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return Record{}, fmt.Errorf("job: decode stored job: %w", err)
	}
	if r.ID == 0 {
		return Record{}, errors.New("job: decode stored job: no id")
	}
	return r, nil
}

// Restore rebuilds a job from its stored record. A job that had not ended
// comes back in the state it had (running or paused).
func Restore(r Record) (*Job, error) {
	j, err := New(r.ID, r.Spec, r.Created)
	if err != nil {
		return nil, fmt.Errorf("job %d: stored spec: %w", r.ID, err)
	}
	switch r.State {
	case Running, "":
	case Paused:
		j.state = Paused
	default:
		var err error
		if r.Error != "" {
			err = errors.New(r.Error)
		}
		j.End(r.State, r.Reason, err)
	}
	return j, nil
}
