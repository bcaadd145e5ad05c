package usagepref

import (
	"fmt"
	"strings"
)

// Pref is a preference for one category of use: Unknown (the zero
// value), Allow or Deny (draft-ietf-aipref-vocab-07 section 3: "allowed",
// "disallowed" or "unknown"). Its JSON form is "unknown", "allow" or
// "deny".
type Pref uint8

const (
	Unknown Pref = iota
	Allow
	Deny
)

func (p Pref) String() string {
	switch p {
	case Allow:
		return "allow"
	case Deny:
		return "deny"
	}
	return "unknown"
}

// MarshalText writes "unknown", "allow" or "deny".
func (p Pref) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText reads what MarshalText writes.
func (p *Pref) UnmarshalText(b []byte) error {
	switch string(b) {
	case "unknown":
		*p = Unknown
	case "allow":
		*p = Allow
	case "deny":
		*p = Deny
	default:
		return fmt.Errorf("usagepref: preference %q: want unknown, allow or deny", b)
	}
	return nil
}

// Combine merges two statements about one category as
// draft-ietf-aipref-vocab-07 section 5.1 does: any Deny gives Deny, else
// any Allow gives Allow, else Unknown. So the most restrictive applies.
func Combine(a, b Pref) Pref {
	if a == Deny || b == Deny {
		return Deny
	}
	if a == Allow || b == Allow {
		return Allow
	}
	return Unknown
}

// The usage category labels of draft-ietf-aipref-vocab-07 section 6.1.
// Older drafts had others (all, bots, train-genai, ai-use, ai-output);
// they are kept in Usage.Prefs like any unknown label, and read by
// nothing (section 6.4: unknown labels are ignored).
const (
	LabelTrainAI = "train-ai"
	LabelSearch  = "search"
)

// Usage is one statement of preference in the aipref vocabulary's
// exemplary format (draft-ietf-aipref-vocab-07 section 6): an RFC 9651
// Dictionary such as "train-ai=n, search=y", as served in a Content-Usage
// header field or robots.txt rule (draft-ietf-aipref-attach-05).
type Usage struct {
	// Valid is false when the value is not a Dictionary; then every
	// preference is unknown (vocab section 6.5.1).
	Valid bool `json:"valid"`
	// Error says why the value is not valid.
	Error string `json:"error,omitempty"`
	// Prefs holds every member whose value is the Token y (Allow) or n
	// (Deny), known label or not, parameters disregarded (vocab section
	// 6.5). Members with any other value are unknown and left out.
	Prefs map[string]Pref `json:"prefs,omitempty"`
}

// Get returns the preference for a label: Unknown when absent.
func (u Usage) Get(label string) Pref { return u.Prefs[label] }

// ParseUsage reads a statement of preference. It never fails: a value
// that is no Dictionary gives a Usage that is not Valid. Labels and
// values are case-sensitive ("Train-AI=n" is a syntax error and "N" is
// not n), as the vocabulary asks.
func ParseUsage(value string) Usage {
	members, err := parseDictionary(value)
	if err != nil {
		return Usage{Error: err.Error()}
	}
	u := Usage{Valid: true}
	for _, m := range members {
		if m.kind != kindToken || m.token != "y" && m.token != "n" {
			continue
		}
		if u.Prefs == nil {
			u.Prefs = map[string]Pref{}
		}
		u.Prefs[m.key] = Allow
		if m.token == "n" {
			u.Prefs[m.key] = Deny
		}
	}
	return u
}

// UsageRule is one Content-Usage rule of robots.txt
// (draft-ietf-aipref-attach-05 section 3.2): an optional path, then a
// statement of preference.
type UsageRule struct {
	// Path is the path as written, "" when absent (the rule then applies
	// to every path, with a match length of 0).
	Path  string `json:"path,omitempty"`
	Usage Usage  `json:"usage"`
}

// ParseUsageRule splits a Content-Usage rule value: a value starting with
// '/' has a path up to the first SP or HTAB, and the rest (SP and HTAB
// trimmed) is the statement of preference; any other value is all
// preference. The value is as robots.Extra.Value gives it: comment cut
// at '#' and trimmed.
func ParseUsageRule(value string) UsageRule {
	var r UsageRule
	if strings.HasPrefix(value, "/") {
		i := strings.IndexAny(value, " \t")
		if i < 0 {
			i = len(value)
		}
		r.Path, value = value[:i], value[i:]
	}
	r.Usage = ParseUsage(strings.Trim(value, " \t"))
	return r
}

// The signals of Cloudflare's Content Signals Policy (contentsignals.org,
// published September 2025; also draft-romm-aipref-contentsignals-00).
const (
	SignalSearch  = "search"
	SignalAIInput = "ai-input"
	SignalAITrain = "ai-train"
)

// maxSignalItems bounds the items of one Content-Signal value.
const maxSignalItems = 64

// ContentSignal is one Content-Signal value, such as "search=yes,
// ai-train=no": comma-separated name=value items, yes or no.
type ContentSignal struct {
	// Prefs maps each signal name (lower-cased) given yes (Allow) or no
	// (Deny); a name given both is Deny (Combine). Names other than
	// search, ai-input and ai-train are kept and read by nothing.
	Prefs map[string]Pref `json:"prefs,omitempty"`
	// Invalid lists, as written, the items that are not name=yes or
	// name=no: they state nothing.
	Invalid []string `json:"invalid,omitempty"`
}

// ParseContentSignal reads a Content-Signal value. It never fails. Names
// and values are compared ignoring ASCII case, and SP and HTAB around
// items, names and values are ignored; empty items are skipped. At most
// 64 items are read.
func ParseContentSignal(value string) ContentSignal {
	var cs ContentSignal
	n := 0
	for item := range strings.SplitSeq(value, ",") {
		item = strings.Trim(item, " \t")
		if item == "" {
			continue
		}
		if n++; n > maxSignalItems {
			break
		}
		name, v, ok := strings.Cut(item, "=")
		name, v = asciiLower(strings.Trim(name, " \t")), strings.Trim(v, " \t")
		var p Pref
		switch {
		case !ok || name == "":
		case strings.EqualFold(v, "yes"):
			p = Allow
		case strings.EqualFold(v, "no"):
			p = Deny
		}
		if p == Unknown {
			cs.Invalid = append(cs.Invalid, item)
			continue
		}
		if cs.Prefs == nil {
			cs.Prefs = map[string]Pref{}
		}
		cs.Prefs[name] = Combine(cs.Prefs[name], p)
	}
	return cs
}
