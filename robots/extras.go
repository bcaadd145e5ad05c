package robots

import "strings"

// Extra is one line of a robots.txt file whose key is none that RFC 9309
// defines nor Sitemap or Crawl-delay: an extension such as Content-Usage
// (draft-ietf-aipref-attach-05 section 3) or Content-Signal (Cloudflare's
// Content Signals Policy), or an unknown key. Extension lines change no
// rule and do not end or split a group (RFC 9309 2.2.4).
type Extra struct {
	// Line is the line's number in the file, from 1.
	Line int
	// Key is the key as written, with surrounding whitespace removed; its
	// case is kept (compare it ignoring ASCII case).
	Key string
	// Value is the text after the first colon up to a '#', CR or LF, with
	// surrounding whitespace removed.
	Value string
	// Group is the index of the group the line falls in (GroupAgents),
	// or -1 for a line before any user-agent line, which belongs to no
	// group.
	Group int
	// Raw is the whole line as served, comment included, without its
	// line end.
	Raw string
}

// knownExtension reports whether key is an extension trawl reads
// elsewhere, so that Parse does not warn about it.
func knownExtension(key string) bool {
	switch asciiLower(key) {
	case "content-usage", "content-signal":
		return true
	}
	return false
}

// Extras returns every extension line of the file, in file order: at most
// MaxExtras. The caller must not modify the slice.
func (r *Robots) Extras() []Extra {
	if r == nil {
		return nil
	}
	return r.extras
}

// ExtrasFor returns the extension lines of the groups selected for agent,
// as Allowed selects them (RFC 9309 2.2.1: the groups naming agent, else
// the "*" groups), in file order. Lines before any user-agent line are in
// no group and never returned.
func (r *Robots) ExtrasFor(agent string) []Extra {
	if r == nil || len(r.extras) == 0 {
		return nil
	}
	sel := r.selectGroups(agent)
	var out []Extra
	for _, e := range r.extras {
		for _, g := range sel {
			if e.Group == g {
				out = append(out, e)
				break
			}
		}
	}
	return out
}

// GroupAgents returns the user-agent values that open group i, as
// written, or nil if there is no such group.
func (r *Robots) GroupAgents(i int) []string {
	if r == nil || i < 0 || i >= len(r.groups) {
		return nil
	}
	return append([]string(nil), r.groups[i].agents...)
}

// Pattern is a robots.txt path pattern compiled for matching, as Allowed
// matches Allow and Disallow rules (RFC 9309 2.2.2 and 2.2.3): by prefix,
// '*' for any octets, a final '$' anchoring the end, in the normal form of
// Allowed. Other protocols reuse this notation: Content-Usage paths
// (draft-ietf-aipref-attach-05 section 3.1) and tdmrep.json locations (W3C
// TDMRep, "TDM File on the Origin Server"). The zero Pattern matches
// every path, with length 0.
type Pattern struct {
	norm string
	w    wildRule
}

// CompilePattern compiles a pattern as written in a file.
func CompilePattern(pattern string) Pattern {
	p := normalize(pattern, true)
	body, anchored := p, strings.HasSuffix(p, "$")
	if anchored {
		body = p[:len(p)-1]
	}
	return Pattern{norm: p, w: wildRule{segs: strings.Split(body, "*"), anchored: anchored, length: len(p)}}
}

// String returns the pattern in its normal form.
func (p Pattern) String() string { return p.norm }

// Len is the length in octets of the normal form, which longest-match
// rules compare.
func (p Pattern) Len() int { return len(p.norm) }

// Match reports whether the pattern matches pathQuery, the percent-encoded
// path and optional query of a URL ("" means "/").
func (p Pattern) Match(pathQuery string) bool {
	if p.norm == "" {
		return true
	}
	s := normalizePath(pathQuery)
	if len(p.w.segs) == 1 {
		if p.w.anchored {
			return s == p.w.segs[0]
		}
		return strings.HasPrefix(s, p.w.segs[0])
	}
	return p.w.match(s)
}
