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
	"reflect"
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

// Spec is what a job is asked to do. A zero field means what its comment
// says; a crawl a user asks for starts from Defaults, not from the zero
// Spec, and Validate is the one check of every field, whichever door the
// spec came through.
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
	// Defaults: DefaultMaxDepth (20).
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
	// 2.3.1.4). At most a year. Defaults: DefaultRobotsGiveUp (15 s, about
	// four attempts at a 1 s gap).
	RobotsGiveUp time.Duration `json:"robots_give_up,omitempty"`
	// MaxWait bounds how long a one-shot job waits for hosts that ask it
	// to (a Retry-After on a page or on robots.txt, a backoff earned by
	// failing, a robots.txt outage): once nothing at all may be fetched
	// within MaxWait, the URLs of hosts that wait longer are given up
	// (counted, logged as dropped), and the job ends. So a one-shot job is
	// never idle for longer than MaxWait because a server asked for more.
	// The crawler's own waits (gaps, Crawl-delay) are waited out. 0 means
	// never give up. A continuous job waits for every host. At most a
	// year. Defaults: DefaultMaxWait (30 s).
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
	// recrawl.DefaultMaxInterval (30 days); at most a year. Set only for a
	// continuous job.
	RecrawlMin time.Duration `json:"recrawl_min,omitempty"`
	RecrawlMax time.Duration `json:"recrawl_max,omitempty"`
	// RecrawlBudget is the recrawl fetches per hour a continuous job may
	// spend; the schedule spreads them over its pages for the best
	// average freshness. 0 means no budget: each page is revisited at the
	// interval its estimated change rate calls for under a fixed
	// multiplier.
	RecrawlBudget float64 `json:"recrawl_budget,omitempty"`
	// RecrawlSchedule names how a continuous job picks each page's next
	// interval: ScheduleFreshness (the default; "" means it) or
	// ScheduleNutch, the baseline trawl's freshness is measured against.
	RecrawlSchedule string `json:"recrawl_schedule,omitempty"`

	// Requisites fetches and archives the resources each page embeds
	// (images and srcset candidates, stylesheets and what they import
	// and use, scripts, fonts, icons, media and posters, frames:
	// links.Page.Requisites, css.Refs), on hosts within this reach of
	// the page's: RequisitesHost (the page's host), RequisitesSite (its
	// registered domain) or RequisitesAny. They go through the frontier
	// like pages (robots.txt, gaps, the URL-seen gate), ahead of the
	// host's links, and are not followed for links. "" fetches none.
	Requisites string `json:"requisites,omitempty"`
	// RequisiteHops bounds the references from a page to a requisite: 1
	// is what the page embeds, 2 what those embed (a stylesheet's font
	// or @import), and so on. 0 means DefaultRequisiteHops; set only with
	// Requisites.
	RequisiteHops int `json:"requisite_hops,omitempty"`

	// Purpose is what the crawl's content is for, as sites state their
	// wishes about it (package usagepref): PurposeArchive, PurposeSearch,
	// PurposeAITrain or PurposeAIInput. A capture whose site's statements
	// deny it is marked (its usage metadata record and crawl log line name
	// the purpose denied) and, with OnDenied DeniedSkip, not archived. ""
	// states none: every capture's statements are recorded, nothing is
	// honoured.
	Purpose string `json:"purpose,omitempty"`
	// OnDenied is what a crawl with a Purpose does with a capture whose
	// site denies it: DeniedMark (the default, "" means it) archives it,
	// marked; DeniedSkip does not archive it (its links are still
	// followed: the wish is about the use of the content). Set only with
	// Purpose.
	OnDenied string `json:"on_denied,omitempty"`
	// TDMRep fetches each origin's /.well-known/tdmrep.json (W3C TDM
	// Reservation Protocol) before its pages, archives it, and records its
	// rule for each capture with the capture's other statements: one
	// request per origin a day, shared by every job that reads it. A
	// crawl for PurposeAITrain reads it whatever this says (ReadsTDMRep):
	// a TDM reservation speaks to that purpose.
	TDMRep bool `json:"tdmrep,omitempty"`
}

// ReadsTDMRep reports whether the job reads each origin's TDMRep file:
// asked for (TDMRep), or implied by its purpose (PurposeAITrain).
func (s Spec) ReadsTDMRep() bool { return s.TDMRep || s.Purpose == PurposeAITrain }

// The purposes of Spec.Purpose: the categories usagepref.Summary reads.
const (
	PurposeArchive = "archive"  // noarchive
	PurposeSearch  = "search"   // Content-Usage search, Content-Signal search, noindex
	PurposeAITrain = "ai-train" // Content-Usage train-ai, Content-Signal ai-train, noai, TDMRep
	PurposeAIInput = "ai-input" // Content-Signal ai-input, noai
)

// What Spec.OnDenied does with a capture whose site denies the purpose.
const (
	DeniedMark = "mark" // archive it, marked as denied
	DeniedSkip = "skip" // do not archive it
)

// The reaches of Spec.Requisites.
const (
	RequisitesHost = "host" // the page's host only
	RequisitesSite = "site" // hosts of the page's registered domain (urlnorm.RegisteredDomain)
	RequisitesAny  = "any"  // any host, as a browser would load them
)

// DefaultRequisiteHops is the default of Spec.RequisiteHops: enough for
// a page's stylesheet, one it imports, and that one's fonts and images.
const DefaultRequisiteHops = 3

// maxRequisiteHops bounds Spec.RequisiteHops.
const maxRequisiteHops = 10

// The recrawl schedules (Spec.RecrawlSchedule).
const (
	// ScheduleFreshness learns each page's change rate and spreads the
	// recrawls for the best average freshness (recrawl.Policy), within a
	// budget if one is set.
	ScheduleFreshness = "freshness"
	// ScheduleNutch is Apache Nutch's adaptive schedule (recrawl.Nutch):
	// a page's interval shrinks by a fifth when a visit saw a change and
	// grows by a fifth when it did not. It takes no budget.
	ScheduleNutch = "nutch"
)

// RecrawlMinOrDefault is RecrawlMin, or recrawl.DefaultMinInterval if
// it is zero.
func (s Spec) RecrawlMinOrDefault() time.Duration {
	if s.RecrawlMin > 0 {
		return s.RecrawlMin
	}
	return recrawl.DefaultMinInterval
}

// The defaults of the Spec fields whose zero means something else (no
// limit, never): Defaults holds them.
const (
	DefaultMaxDepth     = 20
	DefaultRobotsGiveUp = 15 * time.Second
	// DefaultMaxWait: waits a server asks for up to half a minute are
	// honoured, longer ones given up once nothing else is left.
	DefaultMaxWait = 30 * time.Second
)

// maxDuration bounds RobotsGiveUp, RecrawlMin and RecrawlMax: a year.
const maxDuration = 365 * 24 * time.Hour

// Defaults is the spec every door starts a crawl from before the user's
// settings are laid over it: `trawl crawl`'s flags and config file, `trawl
// crawls create`, POST /v1/crawls (a key left out keeps its default) and so
// a fleet's crawls. A zero Spec field means what its comment says (no
// limit, never, or a default of its own); the fields set here are those
// whose default is not their zero. A field with such a default adds one
// line here.
func Defaults() Spec {
	return Spec{
		MaxDepth:     DefaultMaxDepth,
		RobotsGiveUp: DefaultRobotsGiveUp,
		MaxWait:      DefaultMaxWait,
	}
}

// FieldError is one bad Spec field, as Validate and the steering calls
// (AddSeeds, EditExclusions) report it: the field's Spec name, the element
// at fault of a list field, and why, in words that read after whatever
// name a door gives the field: `trawl crawl`'s flag (--max-depth), the
// API's JSON path (scope.max_depth), a config file's key.
type FieldError struct {
	Field string // the field's name in Spec: "Seeds", "MaxDepth"
	Index int    // the element at fault in a list field (Seeds[Index]); -1: the field as a whole
	// Why says what is wrong and what would be right: `"ftp://x/" is not
	// an http or https URL`. Another field it names is written {Field},
	// for In to put in the door's words.
	Why string
}

// Error returns "job: Field[Index]: Why", fields named as in Spec.
func (e *FieldError) Error() string {
	return "job: " + e.Path() + ": " + e.In(func(f string) string { return f })
}

// In is Why with each {Field} it names written as name(Field): a flag,
// a JSON path. Braces around anything but a Spec field's name (in a
// pattern or a URL quoted in Why) are left as they are.
func (e *FieldError) In(name func(field string) string) string {
	var b strings.Builder
	rest := e.Why
	for {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			break
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			break
		}
		if f := rest[i+1 : i+j]; specFields[f] {
			b.WriteString(rest[:i] + name(f))
		} else {
			b.WriteString(rest[:i+j+1])
		}
		rest = rest[i+j+1:]
	}
	return b.String() + rest
}

// specFields are the names of Spec's fields.
var specFields = func() map[string]bool {
	m := map[string]bool{}
	for _, f := range reflect.VisibleFields(reflect.TypeFor[Spec]()) {
		m[f.Name] = true
	}
	return m
}()

// Path is the field's Spec name with the element's index: "Seeds[3]".
func (e *FieldError) Path() string {
	if e.Index < 0 {
		return e.Field
	}
	return fmt.Sprintf("%s[%d]", e.Field, e.Index)
}

// FieldErrors returns the *FieldError values in err (one, or those joined
// by errors.Join), in order.
func FieldErrors(err error) []*FieldError {
	var out []*FieldError
	var walk func(error)
	walk = func(err error) {
		var fe *FieldError
		switch e := err.(type) {
		case nil:
		case interface{ Unwrap() []error }:
			for _, x := range e.Unwrap() {
				walk(x)
			}
		default:
			if errors.As(err, &fe) {
				out = append(out, fe)
			}
		}
	}
	walk(err)
	return out
}

// fieldErrors collects FieldErrors.
type fieldErrors []error

func (e *fieldErrors) field(name, why string, args ...any) {
	*e = append(*e, &FieldError{name, -1, fmt.Sprintf(why, args...)})
}

func (e *fieldErrors) elem(name string, i int, why string, args ...any) {
	*e = append(*e, &FieldError{name, i, fmt.Sprintf(why, args...)})
}

// Validate reports every bad field, each a *FieldError (FieldErrors takes
// them apart): seeds must be absolute http(s) URLs within the crawl's own
// scope (its domains, and the trap limits a link would meet), which is the
// check AddSeeds makes of a seed added later. Each field checks its values
// here and nowhere else.
func (s Spec) Validate() error {
	errs := s.check()
	us, hosts, seedErrs := s.parseSeeds()
	errs = append(errs, seedErrs...)
	if len(errs) == 0 { // the scope is known once the rest is valid
		rules := s.rules(s.domainsOr(hosts))
		for i, u := range us {
			if why := outOfScope(rules, u); why != "" {
				errs.elem("Seeds", i, "%s", why)
			}
		}
	}
	return errors.Join(errs...)
}

// domainsOr is the crawl's domains: Domains, or hosts (the seeds') if
// there are none.
func (s Spec) domainsOr(hosts []string) []string {
	if len(s.Domains) > 0 {
		return s.Domains
	}
	return hosts
}

// check is Validate without the seeds (parsed and in scope).
func (s Spec) check() fieldErrors {
	var errs fieldErrors
	if len(s.Name) > 128 {
		errs.field("Name", "%.20q... is longer than 128 bytes", s.Name)
	}
	if len(s.Seeds) == 0 {
		errs.field("Seeds", "at least one seed URL is needed")
	}
	for i, d := range s.Domains {
		if d == "" || strings.ContainsAny(d, "/:?# ") {
			errs.elem("Domains", i, "%q is not a host name: want one such as example.org", d)
		}
	}
	nonNegative := func(field string, v int) {
		if v < 0 {
			errs.field(field, "%d is negative: want 0 (no limit) or more", v)
		}
	}
	nonNegative("MaxDepth", s.MaxDepth)
	nonNegative("MaxPages", s.MaxPages)
	if s.Priority < -1 || s.Priority > 1 {
		errs.field("Priority", "%d: want -1 (low), 0 (normal) or 1 (high)", s.Priority)
	}
	upToAYear := func(field string, d time.Duration, zero string) {
		switch {
		case d < 0:
			errs.field(field, "%v is negative: want 0 (%s) up to a year", d, zero)
		case d > maxDuration:
			errs.field(field, "%v is over a year: want 0 (%s) up to a year", d, zero)
		}
	}
	upToAYear("RobotsGiveUp", s.RobotsGiveUp, "never")
	upToAYear("MaxWait", s.MaxWait, "never give up")
	if !s.Continuous {
		for _, f := range []struct {
			name string
			set  bool
			v    any
		}{{"RecrawlMin", s.RecrawlMin != 0, s.RecrawlMin}, {"RecrawlMax", s.RecrawlMax != 0, s.RecrawlMax}, {"RecrawlBudget", s.RecrawlBudget != 0, s.RecrawlBudget},
			{"RecrawlSchedule", s.RecrawlSchedule != "", fmt.Sprintf("%q", s.RecrawlSchedule)}} {
			if f.set {
				errs.field(f.name, "%v: only a continuous crawl recrawls: set {Continuous}", f.v)
			}
		}
	}
	upToAYear("RecrawlMin", s.RecrawlMin, "an hour")
	upToAYear("RecrawlMax", s.RecrawlMax, "30 days")
	if s.RecrawlMin > 0 && s.RecrawlMax > 0 && s.RecrawlMin > s.RecrawlMax {
		errs.field("RecrawlMin", "%v is above {RecrawlMax} %v", s.RecrawlMin, s.RecrawlMax)
	}
	if s.RecrawlBudget < 0 || math.IsNaN(s.RecrawlBudget) || math.IsInf(s.RecrawlBudget, 0) {
		errs.field("RecrawlBudget", "%v: want 0 (none) or a positive number of fetches per hour", s.RecrawlBudget)
	}
	switch s.RecrawlSchedule {
	case "", ScheduleFreshness:
	case ScheduleNutch:
		if s.RecrawlBudget != 0 {
			errs.field("RecrawlBudget", "%v: the %s schedule takes no budget: want 0, or {RecrawlSchedule} %s", s.RecrawlBudget, ScheduleNutch, ScheduleFreshness)
		}
	default:
		errs.field("RecrawlSchedule", "%q is not a schedule: want %s (the default) or %s", s.RecrawlSchedule, ScheduleFreshness, ScheduleNutch)
	}
	switch s.Requisites {
	case "", RequisitesHost, RequisitesSite, RequisitesAny:
	default:
		errs.field("Requisites", "%q is not a reach: want %s, %s or %s (or none)", s.Requisites, RequisitesHost, RequisitesSite, RequisitesAny)
	}
	switch {
	case s.RequisiteHops != 0 && s.Requisites == "":
		errs.field("RequisiteHops", "%d: only a crawl that fetches requisites counts their hops: set {Requisites}", s.RequisiteHops)
	case s.RequisiteHops < 0 || s.RequisiteHops > maxRequisiteHops:
		errs.field("RequisiteHops", "%d: want 0 (the default, %d) up to %d", s.RequisiteHops, DefaultRequisiteHops, maxRequisiteHops)
	}
	switch s.Purpose {
	case "", PurposeArchive, PurposeSearch, PurposeAITrain, PurposeAIInput:
	default:
		errs.field("Purpose", "%q is not a purpose: want %s, %s, %s or %s (or none)", s.Purpose, PurposeArchive, PurposeSearch, PurposeAITrain, PurposeAIInput)
	}
	switch {
	case s.OnDenied != "" && s.Purpose == "":
		errs.field("OnDenied", "%q: only a crawl that states its purpose honours what sites deny: set {Purpose}", s.OnDenied)
	case s.OnDenied != "" && s.OnDenied != DeniedMark && s.OnDenied != DeniedSkip:
		errs.field("OnDenied", "%q: want %s (archive and mark; the default) or %s (do not archive)", s.OnDenied, DeniedMark, DeniedSkip)
	}
	for i, p := range s.SessionParams {
		if p == "" || strings.ContainsAny(p, "=&;/?# ") {
			errs.elem("SessionParams", i, "%q is not a parameter name: want one such as sid", p)
		}
	}
	if err := checkPatterns("Exclude", s.Exclude); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// outOfScope says why a seed u is outside rules, or "".
func outOfScope(rules scope.Rules, u *url.URL) string {
	err := rules.Check(u, 0)
	var rej *scope.Rejection
	switch {
	case err == nil:
		return ""
	case errors.As(err, &rej) && rej.Reason == scope.ReasonDomain:
		return fmt.Sprintf("%q is outside the crawl's domains (%s)", u.String(), strings.Join(rules.Domains, ", "))
	case errors.As(err, &rej):
		return fmt.Sprintf("%q is outside the crawl's scope: %s", u.String(), rej.Detail)
	}
	return fmt.Sprintf("%q: %v", u.String(), err)
}

// CheckSeeds checks and canonicalises seeds to add to j, as Validate
// checks a new spec's: absolute http(s) URLs within the job's scope.
// Errors are *FieldError values for "Seeds" naming each seed at fault.
func (j *Job) CheckSeeds(seeds []string) ([]*url.URL, error) {
	us, _, errs := Spec{Seeds: seeds}.parseSeeds()
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	for i, u := range us {
		if why := outOfScope(j.Scope, u); why != "" {
			errs.elem("Seeds", i, "%s", why)
		}
	}
	return us, errors.Join(errs...)
}

// parseSeeds canonicalises the seeds and returns them with their hosts
// (the default scope); a seed that does not parse is left out and its
// error returned.
func (s Spec) parseSeeds() ([]*url.URL, []string, fieldErrors) {
	var seeds []*url.URL
	var hosts []string
	var errs fieldErrors
	for i, raw := range s.Seeds {
		raw = strings.TrimSpace(raw)
		if pu, err := url.Parse(raw); err == nil && pu.Scheme == "" {
			errs.elem("Seeds", i, "%q is not an absolute http or https URL: want one such as https://example.org/", raw)
			continue
		} else if err == nil && pu.Scheme != "http" && pu.Scheme != "https" {
			errs.elem("Seeds", i, "%q is not an http or https URL", raw)
			continue
		}
		u, err := urlnorm.Parse(raw, nil)
		if err != nil {
			errs.elem("Seeds", i, "%q is not a URL: %v", raw, shortReason(err))
			continue
		}
		u = urlnorm.Normalize(u)
		seeds = append(seeds, u)
		hosts = append(hosts, urlnorm.HostKey(u))
	}
	return seeds, hosts, errs
}

// shortReason is the innermost error of err: what the parser said, without
// the operations around it.
func shortReason(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
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

// New returns a running job of spec, which must be valid (Validate). A
// stored spec whose seeds lie outside its own scope is accepted, as it was
// before Validate checked that: New checks every field but that, so that
// such a job still resumes (Restore) and is adopted by a fleet's members.
func New(id ID, spec Spec, created time.Time) (*Job, error) {
	errs := spec.check()
	seeds, hosts, seedErrs := spec.parseSeeds()
	if err := errors.Join(append(errs, seedErrs...)...); err != nil {
		return nil, err
	}
	domains := spec.domainsOr(hosts)
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

// MaxRequisiteHops is the most references from a page to a requisite the
// job fetches: 0 if it fetches none.
func (s Spec) MaxRequisiteHops() int {
	switch {
	case s.Requisites == "":
		return 0
	case s.RequisiteHops > 0:
		return s.RequisiteHops
	}
	return DefaultRequisiteHops
}

// RequisiteInReach reports whether the job fetches a requisite on host
// (a URL's host name) embedded by a page (or stylesheet) on host from.
func (s Spec) RequisiteInReach(from, host string) bool {
	switch s.Requisites {
	case RequisitesAny:
		return true
	case RequisitesSite:
		if from == host {
			return true
		}
		d := urlnorm.RegisteredDomain(from)
		return d != "" && d == urlnorm.RegisteredDomain(host)
	case RequisitesHost:
		return strings.EqualFold(from, host)
	}
	return false
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
