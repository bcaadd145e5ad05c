package usagepref

import (
	"mime"
	"net/http"
	"strings"

	"github.com/trawl-crawler/trawl/links"
	"github.com/trawl-crawler/trawl/robots"
)

// FormatVersion is the version of the JSON form of Preferences. It is part
// of the WARC metadata record and the crawl log: a change to a field's
// name or meaning takes a new version.
const FormatVersion = 1

// The bounds of one capture's record.
const (
	// MaxValueBytes is the length of a value kept and parsed: a longer
	// header value, robots.txt value or meta content is cut (Truncated).
	MaxValueBytes = 4096
	// MaxHeaderValues is the number of lines of one header field read.
	MaxHeaderValues = 16
	// MaxSignals is the number of signals one record keeps; the rest are
	// counted in Preferences.Dropped.
	MaxSignals = 128
)

// Where a signal came from (Signal.Source).
const (
	SourceRobots = "robots.txt"
	SourceHeader = "header"
	SourceMeta   = "meta"
	SourceTDMRep = "tdmrep.json"
)

// Preferences is what one capture's site says about the use of its
// content: every applicable signal as served, and a summary derived from
// them. Its JSON form (FormatVersion) is stable: signals in a fixed order,
// maps with sorted keys.
type Preferences struct {
	Format int `json:"format"`
	// Agent is the product token the signals were selected for.
	Agent string `json:"agent"`
	// Path is the path and query the signals were selected for.
	Path string `json:"path"`
	// Signals are the applicable signals, in this order: robots.txt
	// lines in file order; header fields (Content-Usage, X-Robots-Tag,
	// TDM-Reservation, TDM-Policy), each line in order; meta elements in
	// document order; the tdmrep.json rule that applies.
	Signals []Signal `json:"signals"`
	// Dropped counts signals beyond MaxSignals.
	Dropped int     `json:"dropped,omitempty"`
	Summary Summary `json:"summary"`
}

// Signal is one statement as served and as read.
type Signal struct {
	// Source is robots.txt, header, meta or tdmrep.json.
	Source string `json:"source"`
	// Name is the robots.txt key or the meta name as written, or the
	// header field's canonical name; "" for a tdmrep.json rule.
	Name string `json:"name,omitempty"`
	// Value is the value exactly as served (robots.txt: after the colon,
	// comment cut and trimmed; meta: entities decoded; tdmrep.json: the
	// rule's JSON), at most MaxValueBytes.
	Value     string `json:"value"`
	Truncated bool   `json:"truncated,omitempty"`
	// Line is the robots.txt line number; Group the user-agent values of
	// the group it is in.
	Line  int      `json:"line,omitempty"`
	Group []string `json:"group,omitempty"`
	// Rule is the tdmrep.json rule's index (TDMRule.Index).
	Rule *int `json:"rule,omitempty"`

	// What was read, by kind. One at most is set.
	Usage         *UsageRule        `json:"usage,omitempty"`          // Content-Usage
	ContentSignal *ContentSignal    `json:"content_signal,omitempty"` // Content-Signal
	Robots        []RobotsDirective `json:"robots,omitempty"`         // X-Robots-Tag, robots meta
	TDM           *TDM              `json:"tdm,omitempty"`            // TDMRep
}

// TDM is a TDMRep statement: from a header field, a meta element or a
// tdmrep.json rule.
type TDM struct {
	// Reservation is 1 or 0; nil when unset (absent or a protocol error).
	Reservation *int `json:"reservation,omitempty"`
	// Policy is the tdm-policy URL as written.
	Policy string `json:"policy,omitempty"`
	// Error says what was wrong with the statement.
	Error string `json:"error,omitempty"`
}

// Summary is derived from the signals for one agent and path. Each
// category combines every statement about it as the aipref vocabulary
// does (Combine: any Deny wins, then any Allow, else Unknown).
type Summary struct {
	// AITrain: Content-Usage train-ai, Content-Signal ai-train, the
	// noai directive (Deny), noimageai on an image/* response (Deny),
	// and the TDMRep reservation in force (1 Deny, 0 Allow).
	AITrain Pref `json:"ai_train"`
	// AIInput: Content-Signal ai-input, noai (Deny).
	AIInput Pref `json:"ai_input"`
	// Search: Content-Usage search, Content-Signal search, noindex or
	// none (Deny).
	Search Pref `json:"search"`
	// Archive: noarchive (Deny); nothing states Allow.
	Archive Pref `json:"archive"`
	// TDMReservation and TDMPolicy are TDMRep's values in force after its
	// own precedence: meta over header over tdmrep.json, a later source
	// without a value leaving the earlier one in place.
	TDMReservation *int   `json:"tdm_reservation,omitempty"`
	TDMPolicy      string `json:"tdm_policy,omitempty"`
}

// Input is one capture and its site's statements. Every field may be
// empty.
type Input struct {
	// Agent is the crawler's product token (robots.ProductToken).
	Agent string
	// PathQuery is the capture URL's percent-encoded path and query.
	PathQuery string
	// Robots is the origin's robots.txt in force at the fetch, nil if
	// none.
	Robots *robots.Robots
	// Header is the response's header.
	Header http.Header
	// Metas are the page's use-stating meta elements (links.Page.Metas).
	Metas []links.Meta
	// TDMRep is the origin's /.well-known/tdmrep.json, nil if none.
	TDMRep *TDMRep
}

// Gather selects and reads every signal that applies to the capture. It is
// pure and never panics.
func Gather(in Input) Preferences {
	g := gatherer{p: Preferences{Format: FormatVersion, Agent: in.Agent, Path: in.PathQuery, Signals: []Signal{}}}
	g.robots(in)
	g.headers(in.Header)
	for _, m := range in.Metas {
		g.meta(m)
	}
	g.tdmrep(in)
	g.summarise(in)
	return g.p
}

type gatherer struct {
	p Preferences
	// TDMRep values by source, for its precedence.
	tdmFile, tdmHeader, tdmMeta TDM
}

func (g *gatherer) add(s Signal) {
	if len(g.p.Signals) >= MaxSignals {
		g.p.Dropped++
		return
	}
	g.p.Signals = append(g.p.Signals, s)
}

// clipValue cuts v at MaxValueBytes.
func clipValue(v string) (string, bool) {
	if len(v) <= MaxValueBytes {
		return v, false
	}
	return v[:MaxValueBytes], true
}

// robots adds the robots.txt lines that apply: those of the groups
// selected for the agent (RFC 9309 2.2.1), if the path may be crawled at
// all. Content-Signal lines all apply; of the Content-Usage rules, those
// whose path matches with the longest pattern (draft-ietf-aipref-attach-05
// section 3.1), several if their paths are equal.
func (g *gatherer) robots(in Input) {
	if in.Robots == nil || !in.Robots.Allowed(in.Agent, in.PathQuery) {
		return
	}
	type usage struct {
		e    robots.Extra
		rule UsageRule
		n    int
	}
	var usages []usage
	best := -1
	for _, e := range in.Robots.ExtrasFor(in.Agent) {
		v, cut := clipValue(e.Value)
		switch asciiLower(e.Key) {
		case "content-signal":
			cs := ParseContentSignal(v)
			g.add(Signal{Source: SourceRobots, Name: e.Key, Value: v, Truncated: cut, Line: e.Line,
				Group: in.Robots.GroupAgents(e.Group), ContentSignal: &cs})
		case "content-usage":
			r := ParseUsageRule(v)
			pat := robots.CompilePattern(r.Path)
			if !pat.Match(in.PathQuery) {
				continue
			}
			usages = append(usages, usage{e, r, pat.Len()})
			best = max(best, pat.Len())
		}
	}
	for _, u := range usages {
		if u.n != best {
			continue
		}
		v, cut := clipValue(u.e.Value)
		g.add(Signal{Source: SourceRobots, Name: u.e.Key, Value: v, Truncated: cut, Line: u.e.Line,
			Group: in.Robots.GroupAgents(u.e.Group), Usage: &u.rule})
	}
	// Keep file order across both kinds.
	sortByLine(g.p.Signals)
}

func sortByLine(s []Signal) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j].Line < s[j-1].Line; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// headerOrder is the order header fields are recorded in.
var headerOrder = [...]string{"Content-Usage", "X-Robots-Tag", "Tdm-Reservation", "Tdm-Policy"}

func (g *gatherer) headers(h http.Header) {
	for _, name := range headerOrder {
		values := h.Values(name)
		if len(values) > MaxHeaderValues {
			g.p.Dropped += len(values) - MaxHeaderValues
			values = values[:MaxHeaderValues]
		}
		for _, raw := range values {
			v, cut := clipValue(raw)
			s := Signal{Source: SourceHeader, Name: name, Value: v, Truncated: cut}
			switch name {
			case "Content-Usage":
				s.Usage = &UsageRule{Usage: ParseUsage(v)}
			case "X-Robots-Tag":
				s.Robots = ParseXRobotsTag(v)
			case "Tdm-Reservation":
				s.TDM = tdmReservation(v)
				g.tdmHeader = mergeTDM(g.tdmHeader, *s.TDM)
			case "Tdm-Policy":
				s.TDM = &TDM{Policy: strings.Trim(v, " \t")}
				g.tdmHeader = mergeTDM(g.tdmHeader, *s.TDM)
			}
			g.add(s)
		}
	}
}

func tdmReservation(v string) *TDM {
	if n, ok := ParseTDMReservation(v); ok {
		return &TDM{Reservation: &n}
	}
	return &TDM{Error: "tdm-reservation is not 0 or 1"}
}

// mergeTDM adds a statement to the values of one source: a reservation of
// 1 from any line of it wins over 0, and the first policy stays.
func mergeTDM(cur, t TDM) TDM {
	if t.Reservation != nil && (cur.Reservation == nil || *t.Reservation > *cur.Reservation) {
		cur.Reservation = t.Reservation
	}
	if cur.Policy == "" {
		cur.Policy = t.Policy
	}
	return cur
}

func (g *gatherer) meta(m links.Meta) {
	s := Signal{Source: SourceMeta, Name: m.Name, Value: m.Content, Truncated: m.Truncated}
	switch {
	case strings.EqualFold(m.Name, "tdm-reservation"):
		s.TDM = tdmReservation(m.Content)
		g.tdmMeta = mergeTDM(g.tdmMeta, *s.TDM)
	case strings.EqualFold(m.Name, "tdm-policy"):
		s.TDM = &TDM{Policy: strings.Trim(m.Content, " \t\n\f\r")}
		g.tdmMeta = mergeTDM(g.tdmMeta, *s.TDM)
	default:
		s.Robots = ParseRobotsMeta(m.Name, m.Content)
	}
	g.add(s)
}

func (g *gatherer) tdmrep(in Input) {
	r, ok := in.TDMRep.Match(in.PathQuery)
	if !ok {
		return
	}
	t := TDM{Reservation: r.Reservation, Policy: r.Policy, Error: r.Error}
	g.tdmFile = t
	idx := r.Index
	g.add(Signal{Source: SourceTDMRep, Value: r.Raw, Truncated: r.RawTruncated, Rule: &idx, TDM: &t})
}

func (g *gatherer) summarise(in Input) {
	sum := &g.p.Summary
	image := false
	if in.Header != nil {
		if mt, _, err := mime.ParseMediaType(in.Header.Get("Content-Type")); err == nil {
			image = strings.HasPrefix(mt, "image/")
		}
	}
	for _, s := range g.p.Signals {
		if s.Usage != nil {
			sum.AITrain = Combine(sum.AITrain, s.Usage.Usage.Get(LabelTrainAI))
			sum.Search = Combine(sum.Search, s.Usage.Usage.Get(LabelSearch))
		}
		if cs := s.ContentSignal; cs != nil {
			sum.AITrain = Combine(sum.AITrain, cs.Prefs[SignalAITrain])
			sum.AIInput = Combine(sum.AIInput, cs.Prefs[SignalAIInput])
			sum.Search = Combine(sum.Search, cs.Prefs[SignalSearch])
		}
	}
	var ds []RobotsDirective
	for _, s := range g.p.Signals {
		ds = append(ds, s.Robots...)
	}
	f := FlagsFor(ds, in.Agent)
	if f.NoAI || f.NoImageAI && image {
		sum.AITrain = Deny
	}
	if f.NoAI {
		sum.AIInput = Deny
	}
	if f.NoIndex {
		sum.Search = Deny
	}
	if f.NoArchive {
		sum.Archive = Deny
	}
	// TDMRep: meta over header over file; a source without a value
	// leaves the earlier one in place.
	var t TDM
	for _, src := range []TDM{g.tdmFile, g.tdmHeader, g.tdmMeta} {
		if src.Reservation != nil {
			t.Reservation = src.Reservation
		}
		if src.Policy != "" {
			t.Policy = src.Policy
		}
	}
	if t.Reservation != nil {
		sum.TDMReservation = t.Reservation
		p := Allow
		if *t.Reservation == 1 {
			p = Deny
		}
		sum.AITrain = Combine(sum.AITrain, p)
	}
	// The report: a tdm-policy is not processed when TDM rights are not
	// reserved.
	if t.Reservation != nil && *t.Reservation == 1 {
		sum.TDMPolicy = t.Policy
	}
}
