package usagepref

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/trawl-crawler/trawl/robots"
)

// The bounds of a tdmrep.json file.
const (
	// MaxTDMRepBytes is the size of a tdmrep.json body read; a longer
	// body is refused whole (a JSON array cut short is no array).
	MaxTDMRepBytes = 256 << 10
	// MaxTDMRules is the number of rules kept; later ones are counted
	// in TDMRep.Dropped and never match.
	MaxTDMRules = 1000
	// maxTDMRaw bounds the raw JSON kept of one rule.
	maxTDMRaw = 4096
)

// TDMRep is a parsed /.well-known/tdmrep.json file (W3C TDM Reservation
// Protocol, Community Group Final Report, "TDM File on the Origin
// Server"): a JSON array of rules, each with a location pattern, a
// tdm-reservation and an optional tdm-policy. A nil *TDMRep has no rules.
type TDMRep struct {
	// Rules are the file's rules, in file order, at most MaxTDMRules.
	Rules []TDMRule `json:"rules"`
	// Error says why the file as a whole could not be read (too long, not
	// a JSON array); Rules is then empty.
	Error string `json:"error,omitempty"`
	// Dropped counts rules beyond MaxTDMRules.
	Dropped int `json:"dropped,omitempty"`
}

// TDMRule is one rule of a tdmrep.json file.
type TDMRule struct {
	// Index is the rule's position in the file's array, from 0.
	Index int `json:"index"`
	// Location is the "location" member as written: a path pattern in
	// robots.txt notation ('*', a final '$'). A rule without a string
	// location never matches.
	Location string `json:"location"`
	// Reservation is 1 (TDM rights reserved) or 0 (not reserved); nil
	// when the member is missing or is anything but the number 0 or 1,
	// which the report calls a protocol error: the reservation is then
	// unset.
	Reservation *int `json:"reservation,omitempty"`
	// Policy is the "tdm-policy" URL as written, "" if none.
	Policy string `json:"policy,omitempty"`
	// Raw is the rule's JSON as served (at most 4 KiB; RawTruncated says
	// it was cut).
	Raw          string `json:"raw"`
	RawTruncated bool   `json:"raw_truncated,omitempty"`
	// Error says what is wrong with the rule, if anything.
	Error string `json:"error,omitempty"`

	pattern robots.Pattern
	valid   bool // has a string location
}

// ParseTDMRep reads a tdmrep.json body. It never fails: a body that is no
// JSON array yields a TDMRep with Error set and no rules, and a bad rule
// is kept with its Error.
func ParseTDMRep(body []byte) *TDMRep {
	f := &TDMRep{}
	if len(body) > MaxTDMRepBytes {
		f.Error = fmt.Sprintf("longer than %d bytes", MaxTDMRepBytes)
		return f
	}
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	var items []json.RawMessage
	if err := json.Unmarshal(body, &items); err != nil {
		f.Error = "not a JSON array: " + err.Error()
		return f
	}
	if len(items) > MaxTDMRules {
		f.Dropped = len(items) - MaxTDMRules
		items = items[:MaxTDMRules]
	}
	for i, raw := range items {
		f.Rules = append(f.Rules, parseTDMRule(i, raw))
	}
	return f
}

func parseTDMRule(i int, raw json.RawMessage) TDMRule {
	r := TDMRule{Index: i, Raw: string(raw)}
	if len(r.Raw) > maxTDMRaw {
		r.Raw, r.RawTruncated = r.Raw[:maxTDMRaw], true
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		r.Error = "not a JSON object"
		return r
	}
	var errs []string
	if loc := bytes.TrimSpace(m["location"]); len(loc) == 0 || loc[0] != '"' || json.Unmarshal(loc, &r.Location) != nil {
		errs = append(errs, "location is not a string")
	} else {
		r.pattern, r.valid = robots.CompilePattern(r.Location), true
	}
	switch v := string(bytes.TrimSpace(m["tdm-reservation"])); v {
	case "0", "1":
		n := int(v[0] - '0')
		r.Reservation = &n
	case "":
		errs = append(errs, "no tdm-reservation")
	default:
		errs = append(errs, "tdm-reservation is not 0 or 1")
	}
	if p, ok := m["tdm-policy"]; ok {
		if err := json.Unmarshal(p, &r.Policy); err != nil {
			errs = append(errs, "tdm-policy is not a string")
		}
	}
	r.Error = strings.Join(errs, "; ")
	return r
}

// Match returns the rule that applies to pathQuery (the percent-encoded
// path and optional query of a URL), by the report's rule: "The most
// specific match is the first in sequence", so the first rule, in file
// order, whose location matches. Locations match as robots.txt patterns
// do (robots.Pattern: prefix, '*', final '$', case-sensitive, escapes of
// unreserved characters decoded). ok is false when no rule matches: the
// reservation is then unset.
func (f *TDMRep) Match(pathQuery string) (rule TDMRule, ok bool) {
	if f == nil {
		return TDMRule{}, false
	}
	for _, r := range f.Rules {
		if r.valid && r.pattern.Match(pathQuery) {
			return r, true
		}
	}
	return TDMRule{}, false
}

// ParseTDMReservation reads a tdm-reservation value from an HTTP header
// field or a <meta> element: "1" or "0", SP and HTAB around ignored. ok is
// false for anything else (a protocol error: unset).
func ParseTDMReservation(v string) (reservation int, ok bool) {
	switch strings.Trim(v, " \t\n\f\r") {
	case "1":
		return 1, true
	case "0":
		return 0, true
	}
	return 0, false
}
