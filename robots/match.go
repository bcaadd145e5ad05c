package robots

import (
	"net/url"
	"slices"
	"strings"
)

// Allowed reports whether agent (the crawler's product token, such as
// "trawl") may fetch pathQuery, the percent-encoded path and optional query
// of a URL ("/a/b?c=d"). An empty pathQuery means "/".
//
// Matching follows RFC 9309 2.2.2: rules match by prefix, '*' matches any
// sequence of octets and a final '$' anchors the end; the longest matching
// rule (in octets of its normalised pattern) wins and an allow rule wins a
// tie; no matching rule means allowed; "/robots.txt" is always allowed. Rule
// and path are compared in one normal form: escapes of unreserved characters
// decoded, other escapes upper-cased, raw non-ASCII and unsafe octets
// percent-encoded, and literal '*' and '$' in the URL written as %2A and %24,
// so a rule's %2A matches a literal '*'.
//
// Matching costs one map lookup per distinct literal rule length plus a
// linear scan per wildcard rule; there is no backtracking.
func (r *Robots) Allowed(agent, pathQuery string) bool {
	p := normalizePath(pathQuery)
	if p == "/robots.txt" {
		return true
	}
	if r == nil {
		return true
	}
	return r.matcherFor(agent).allowed(p)
}

// AllowedURL is Allowed for u's escaped path and raw query.
func (r *Robots) AllowedURL(agent string, u *url.URL) bool {
	return r.Allowed(agent, pathQueryOf(u))
}

// pathQueryOf returns the part of u that rules are matched against.
func pathQueryOf(u *url.URL) string {
	if u == nil {
		return "/"
	}
	p := u.EscapedPath()
	if u.RawQuery != "" || u.ForceQuery {
		p += "?" + u.RawQuery
	}
	return p
}

// normalizePath turns a path+query into the form rules are matched against.
func normalizePath(pq string) string {
	if i := strings.IndexByte(pq, '#'); i >= 0 {
		pq = pq[:i]
	}
	if pq == "" || pq[0] == '?' {
		pq = "/" + pq
	}
	return normalize(pq, false)
}

// Bits of a literal rule table entry: a pattern may appear as both an allow
// and a disallow rule.
const (
	bitAllow    = 1
	bitDisallow = 2
)

// matcher is the compiled rule set of one agent: the union of the rules of
// every group selected for it.
type matcher struct {
	agent string // as asked; compared ignoring ASCII case

	literal map[string]uint8 // patterns without '*' or final '$'
	litLens []int            // distinct lengths of literal, longest first
	exact   map[string]uint8 // patterns ending in '$' without '*', '$' removed
	wild    []wildRule       // patterns with '*', longest first, allow first

	// A wildcard rule can only match a path that contains each of its
	// literal segments. Each rule with a segment of 3 or more octets is
	// filed under the rarest 3-octet substring ("gram") of its segments;
	// a query looks up the distinct grams of the path and tries only the
	// rules found, plus those in always. Indices point into wild.
	byGram map[uint32][]int32
	always []int32
}

// wildRule is a pattern with at least one '*', split at the stars.
type wildRule struct {
	segs     []string
	anchored bool // the pattern ended in '$'
	length   int  // octets of the normalised pattern, '*' and '$' included
	allow    bool
}

// matcherFor returns the compiled rules for agent, building them on first
// use. Concurrent callers may both build; either result is correct.
func (r *Robots) matcherFor(agent string) *matcher {
	if m := r.last.Load(); m != nil && asciiEqualFold(m.agent, agent) {
		return m
	}
	m := &matcher{agent: agent, literal: map[string]uint8{}, exact: map[string]uint8{}}
	lens := map[int]bool{}
	for _, gi := range r.selectGroups(agent) {
		for _, ru := range r.groups[gi].rules {
			bit := uint8(bitDisallow)
			if ru.allow {
				bit = bitAllow
			}
			p := ru.pattern
			anchored := strings.HasSuffix(p, "$")
			switch {
			case !strings.Contains(p, "*") && !anchored:
				m.literal[p] |= bit
				lens[len(p)] = true
			case !strings.Contains(p, "*"):
				m.exact[p[:len(p)-1]] |= bit
			default:
				body := p
				if anchored {
					body = p[:len(p)-1]
				}
				m.wild = append(m.wild, wildRule{
					segs:     strings.Split(body, "*"),
					anchored: anchored,
					length:   len(p),
					allow:    ru.allow,
				})
			}
		}
	}
	for n := range lens {
		m.litLens = append(m.litLens, n)
	}
	slices.Sort(m.litLens)
	slices.Reverse(m.litLens)
	slices.SortStableFunc(m.wild, func(a, b wildRule) int {
		if a.length != b.length {
			return b.length - a.length
		}
		if a.allow != b.allow {
			if a.allow {
				return -1
			}
			return 1
		}
		return 0
	})
	m.indexWild()
	r.last.Store(m)
	return m
}

// gram packs the 3 octets at s[i:] into a key.
func gram(s string, i int) uint32 {
	return uint32(s[i])<<16 | uint32(s[i+1])<<8 | uint32(s[i+2])
}

// indexWild fills byGram and always.
func (m *matcher) indexWild() {
	freq := map[uint32]int{}
	for i := range m.wild {
		for _, seg := range m.wild[i].segs {
			for j := 0; j+3 <= len(seg); j++ {
				freq[gram(seg, j)]++
			}
		}
	}
	m.byGram = map[uint32][]int32{}
	for i := range m.wild {
		best, bestN := uint32(0), -1
		for _, seg := range m.wild[i].segs {
			for j := 0; j+3 <= len(seg); j++ {
				if g := gram(seg, j); bestN < 0 || freq[g] < bestN {
					best, bestN = g, freq[g]
				}
			}
		}
		if bestN < 0 {
			m.always = append(m.always, int32(i))
		} else {
			m.byGram[best] = append(m.byGram[best], int32(i))
		}
	}
}

// candidates returns the indices into m.wild of the rules that may match p,
// ascending (so longest first), without duplicates. It appends to buf.
func (m *matcher) candidates(p string, buf []int32) []int32 {
	if len(m.byGram) == 0 {
		return m.always
	}
	var gbuf [256]uint32
	grams := gbuf[:0]
	for i := 0; i+3 <= len(p); i++ {
		grams = append(grams, gram(p, i))
	}
	slices.Sort(grams)
	grams = slices.Compact(grams)
	cand := append(buf, m.always...)
	for _, g := range grams {
		cand = append(cand, m.byGram[g]...)
	}
	slices.Sort(cand) // each rule is filed once, so no duplicates
	return cand
}

// allowed applies longest match, allow on a tie, to a normalised path.
func (m *matcher) allowed(p string) bool {
	best, allow := -1, true
	consider := func(n int, a bool) {
		if n > best || n == best && a {
			best, allow = n, a
		}
	}
	for _, n := range m.litLens {
		if n > len(p) {
			continue
		}
		if bits, ok := m.literal[p[:n]]; ok {
			consider(n, bits&bitAllow != 0)
			break
		}
	}
	if bits, ok := m.exact[p]; ok {
		consider(len(p)+1, bits&bitAllow != 0)
	}
	var buf [64]int32
	for _, i := range m.candidates(p, buf[:0]) {
		w := &m.wild[i]
		if w.length < best || w.length == best && allow {
			break // sorted: nothing later can win
		}
		if w.match(p) {
			consider(w.length, w.allow)
		}
	}
	return allow
}

// match reports whether the pattern matches a prefix of s (all of s when
// anchored). Each segment is placed at its leftmost possible position, which
// is optimal for '*' globs, so the cost is linear in len(s) per segment
// search and never exponential.
func (w *wildRule) match(s string) bool {
	first := w.segs[0]
	if !strings.HasPrefix(s, first) {
		return false
	}
	pos := len(first)
	last := len(w.segs) - 1
	for _, seg := range w.segs[1:last] {
		if seg == "" {
			continue
		}
		j := strings.Index(s[pos:], seg)
		if j < 0 {
			return false
		}
		pos += j + len(seg)
	}
	tail := w.segs[last]
	if w.anchored {
		return len(s)-pos >= len(tail) && strings.HasSuffix(s, tail)
	}
	return strings.Contains(s[pos:], tail)
}

// normalize writes a rule pattern (pattern true) or a URL path+query in the
// normal form used for matching:
//   - %XX escapes of unreserved characters (RFC 3986: ALPHA DIGIT - . _ ~)
//     are decoded, other escapes are upper-cased, and a '%' not followed by
//     two hex digits becomes %25;
//   - octets outside printable ASCII, and the characters RFC 3986 allows in
//     neither reserved nor unreserved sets (space " < > \ ^ ` { | }), are
//     percent-encoded;
//   - in a pattern, '*' stays a wildcard and a final '$' an anchor, while a
//     '$' elsewhere is literal (%24); in a URL, '*' and '$' are always
//     literal and become %2A and %24.
//
// A string already in normal form is returned without allocating.
func normalize(s string, pattern bool) string {
	i := 0
	for ; i < len(s); i++ {
		if !keep(s, i, pattern) {
			break
		}
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case keep(s, i, pattern):
			b.WriteByte(c)
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			v := unhex(s[i+1])<<4 | unhex(s[i+2])
			if unreserved(v) {
				b.WriteByte(v)
			} else {
				writeEscape(&b, v)
			}
			i += 2
		default:
			writeEscape(&b, c)
		}
	}
	return b.String()
}

// keep reports whether s[i] is already in normal form.
func keep(s string, i int, pattern bool) bool {
	c := s[i]
	switch c {
	case '%':
		// Kept only as an upper-case escape of a non-unreserved octet.
		if i+2 >= len(s) || !isUpperHex(s[i+1]) || !isUpperHex(s[i+2]) {
			return false
		}
		return !unreserved(unhex(s[i+1])<<4 | unhex(s[i+2]))
	case '*':
		return pattern
	case '$':
		return pattern && i == len(s)-1
	case ' ', '"', '<', '>', '\\', '^', '`', '{', '|', '}':
		return false
	}
	return c > ' ' && c < 0x7f
}

func writeEscape(b *strings.Builder, v byte) {
	const hex = "0123456789ABCDEF"
	b.WriteByte('%')
	b.WriteByte(hex[v>>4])
	b.WriteByte(hex[v&15])
}

func unreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func isUpperHex(c byte) bool {
	return '0' <= c && c <= '9' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}
