package robots

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// MaxBytes is how much of a robots.txt body Parse reads. RFC 9309 2.5 asks
// crawlers to parse at least 500 KiB; bytes beyond this limit are ignored,
// and so is a line that the limit cuts in two.
const MaxBytes = 500 << 10

// MaxCrawlDelay caps a Crawl-delay value. Crawl-delay is not part of RFC
// 9309; trawl reads it as a decimal number of seconds and clamps larger
// values to one minute, so that a single file cannot park a host queue for
// hours. The crawler's own politeness gap still applies on top.
const MaxCrawlDelay = time.Minute

// maxWarnings bounds the warnings kept for one file; the rest are counted.
const maxWarnings = 100

// MaxExtras bounds the extension lines (Extras) kept for one file; the rest
// are counted in a warning.
const MaxExtras = 1024

// Robots is one parsed robots.txt file. The zero value and a nil *Robots
// allow everything.
type Robots struct {
	groups   []group
	byAgent  map[string][]int // ASCII-lowercased user-agent value -> group indices
	star     []int            // groups naming "*"
	sitemaps []string
	warnings []string
	extras   []Extra

	// last caches the compiled rules of the most recently asked agent; a
	// crawler asks with a single product token, so this is built once.
	last atomic.Pointer[matcher]
}

// group is one group of records: the user-agent lines that open it and the
// rules that follow them.
type group struct {
	agents     []string
	rules      []rule
	crawlDelay time.Duration
	hasDelay   bool
}

// rule is one allow or disallow line, its pattern already normalised.
type rule struct {
	allow   bool
	pattern string
}

// directive is a recognised record key.
type directive int

const (
	dirUnknown directive = iota
	dirUserAgent
	dirAllow
	dirDisallow
	dirSitemap
	dirCrawlDelay
)

func directiveOf(key string) directive {
	switch asciiLower(key) {
	case "user-agent":
		return dirUserAgent
	case "allow":
		return dirAllow
	case "disallow":
		return dirDisallow
	case "sitemap":
		return dirSitemap
	case "crawl-delay":
		return dirCrawlDelay
	}
	return dirUnknown
}

// Parse reads a robots.txt body. It never fails. It reads at most MaxBytes
// bytes, skips a leading UTF-8 byte order mark, accepts CR, LF and CRLF line
// ends, drops comments from '#' on, matches keys case-insensitively and
// trims whitespace around keys and values.
//
// Consecutive user-agent lines open a group; allow and disallow lines belong
// to the group(s) above them; rules before the first user-agent line are
// ignored. Sitemap lines are global. Crawl-delay belongs to the current group.
// Records other than user-agent, allow and disallow (crawl-delay, sitemap,
// unknown keys) neither end nor split a group (RFC 9309 2.2.4). Lines with
// other keys (Content-Usage, Content-Signal, ...) change no rule; they are
// kept as written, with the group they fall in (Extras).
//
// Two leniencies beyond RFC 9309 are kept because they can only make the
// crawler more careful: a partial byte order mark (EF or EF BB) at the start
// is skipped like a full one, and a known key followed by whitespace instead
// of a colon ("disallow /") is accepted, with a warning.
func Parse(body []byte) *Robots {
	r := &Robots{byAgent: map[string][]int{}}
	truncated := false
	if len(body) > MaxBytes {
		cutAtLineEnd := body[MaxBytes] == '\n' || body[MaxBytes] == '\r'
		body = body[:MaxBytes]
		truncated = true
		// Drop the line the limit cut in two: half a rule may mean
		// something else than the whole one.
		if !cutAtLineEnd {
			body = body[:lastLineEnd(body)+1]
		}
	}
	body = skipBOM(body)

	var (
		cur      = -1    // index of the current group, -1 before any user-agent
		inAgents = false // the last group record was a user-agent line
		dropped  = 0     // warnings beyond maxWarnings
		extraN   = 0     // extension lines seen, kept or not
		seenMap  = map[string]bool{}
	)
	warn := func(line int, format string, args ...any) {
		if len(r.warnings) >= maxWarnings {
			dropped++
			return
		}
		r.warnings = append(r.warnings, fmt.Sprintf("line %d: ", line)+fmt.Sprintf(format, args...))
	}

	lineNo := 0
	for len(body) > 0 {
		lineNo++
		var line []byte
		line, body = nextLine(body)
		raw := line
		if i := indexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		text := strings.TrimSpace(string(line))
		if text == "" {
			continue
		}
		key, value, ok := strings.Cut(text, ":")
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		d := directiveOf(key)
		if !ok {
			// Leniency: "disallow /" for "disallow: /".
			k, v := text, ""
			if i := strings.IndexAny(text, " \t"); i >= 0 {
				k, v = text[:i], text[i+1:]
			}
			d = directiveOf(k)
			if d == dirUnknown || v == "" {
				warn(lineNo, "no colon, ignored: %q", clip(text))
				continue
			}
			key, value = k, strings.TrimSpace(v)
			warn(lineNo, "missing colon after %q, accepted", key)
		}
		switch d {
		case dirUserAgent:
			if cur < 0 || !inAgents {
				r.groups = append(r.groups, group{})
				cur = len(r.groups) - 1
			}
			g := &r.groups[cur]
			g.agents = append(g.agents, value)
			inAgents = true
			switch {
			case value == "*":
				r.star = append(r.star, cur)
			case value == "":
				warn(lineNo, "empty user-agent")
			default:
				if ProductToken(value) != value {
					warn(lineNo, "user-agent %q is not a product token; it matches only a crawler that uses exactly this name", clip(value))
				}
				k := asciiLower(value)
				r.byAgent[k] = appendOnce(r.byAgent[k], cur)
			}
		case dirAllow, dirDisallow:
			if cur < 0 {
				warn(lineNo, "%s before any user-agent, ignored", asciiLower(key))
				continue
			}
			inAgents = false
			if value == "" {
				// An empty value disallows (or allows) nothing.
				continue
			}
			g := &r.groups[cur]
			g.rules = append(g.rules, rule{allow: d == dirAllow, pattern: normalize(value, true)})
		case dirSitemap:
			if value == "" {
				warn(lineNo, "empty sitemap")
				continue
			}
			if !seenMap[value] {
				seenMap[value] = true
				r.sitemaps = append(r.sitemaps, value)
			}
		case dirCrawlDelay:
			if cur < 0 {
				warn(lineNo, "crawl-delay before any user-agent, ignored")
				continue
			}
			// Crawl-delay is not an RFC 9309 record, so it neither ends
			// nor splits a group (2.2.4: "parsing of other records MUST
			// NOT interfere with the parsing of explicitly defined
			// records"): in "User-agent: a, Crawl-delay: 5, User-agent:
			// b, Disallow: /x" a and b share one group, delay and rule.
			delay, err := parseDelay(value)
			if err != "" {
				warn(lineNo, "crawl-delay %q: %s", clip(value), err)
				continue
			}
			if delay > MaxCrawlDelay {
				warn(lineNo, "crawl-delay %q capped to %s", clip(value), MaxCrawlDelay)
				delay = MaxCrawlDelay
			}
			g := &r.groups[cur]
			if !g.hasDelay || delay > g.crawlDelay {
				g.crawlDelay, g.hasDelay = delay, true
			}
		default:
			// An extension line (Content-Usage, Content-Signal, ...): kept
			// beside the rules, with its group, and matching is untouched.
			if key == "" {
				warn(lineNo, "empty key, ignored")
				continue
			}
			extraN++
			if len(r.extras) < MaxExtras {
				r.extras = append(r.extras, Extra{Line: lineNo, Key: key, Value: value, Group: cur, Raw: string(raw)})
			}
			if !knownExtension(key) {
				warn(lineNo, "unknown directive %q, ignored", clip(key))
			}
		}
	}
	if extraN > len(r.extras) {
		r.warnings = append(r.warnings, fmt.Sprintf("%d extension lines beyond the first %d not kept", extraN-len(r.extras), MaxExtras))
	}
	if dropped > 0 {
		r.warnings = append(r.warnings, fmt.Sprintf("%d more warnings not shown", dropped))
	}
	if truncated {
		r.warnings = append(r.warnings, fmt.Sprintf("file longer than %d bytes: the rest is ignored", MaxBytes))
	}
	return r
}

// Warnings returns what Parse found odd, in file order, each prefixed with
// its line number: unknown directives, lines without a colon, rules before
// any user-agent, bad crawl-delay values, truncation. At most about 100 are
// kept. The caller must not modify the slice.
func (r *Robots) Warnings() []string {
	if r == nil {
		return nil
	}
	return r.warnings
}

// Sitemaps returns the Sitemap URLs of the file, in order, without
// duplicates. They apply to every agent.
func (r *Robots) Sitemaps() []string {
	if r == nil || len(r.sitemaps) == 0 {
		return nil
	}
	return append([]string(nil), r.sitemaps...)
}

// CrawlDelay returns the Crawl-delay of the group(s) selected for agent (a
// product token), clamped to MaxCrawlDelay. ok is false when those groups
// carry none. When several selected groups carry one, the largest wins.
func (r *Robots) CrawlDelay(agent string) (d time.Duration, ok bool) {
	if r == nil {
		return 0, false
	}
	for _, gi := range r.selectGroups(agent) {
		g := &r.groups[gi]
		if g.hasDelay && (!ok || g.crawlDelay > d) {
			d, ok = g.crawlDelay, true
		}
	}
	return d, ok
}

// selectGroups returns the indices of the groups that apply to agent: those
// whose user-agent value equals agent, ignoring ASCII case (RFC 9309 2.2.1),
// or else the "*" groups.
func (r *Robots) selectGroups(agent string) []int {
	if agent != "" && agent != "*" {
		if gs := r.byAgent[asciiLower(agent)]; len(gs) > 0 {
			return gs
		}
	}
	return r.star
}

// parseDelay reads a non-negative decimal number of seconds.
func parseDelay(v string) (time.Duration, string) {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, "not a number of seconds"
	}
	if f < 0 {
		return 0, "negative"
	}
	if f > MaxCrawlDelay.Seconds() {
		return MaxCrawlDelay + 1, ""
	}
	return time.Duration(f * float64(time.Second)), ""
}

// skipBOM drops a leading UTF-8 byte order mark, or the start of one.
func skipBOM(b []byte) []byte {
	bom := "\xef\xbb\xbf"
	for i := 0; i < len(bom) && len(b) > 0 && b[0] == bom[i]; i++ {
		b = b[1:]
	}
	return b
}

// nextLine splits off the first line of b, accepting CR, LF and CRLF ends.
func nextLine(b []byte) (line, rest []byte) {
	for i, c := range b {
		switch c {
		case '\n':
			return b[:i], b[i+1:]
		case '\r':
			if i+1 < len(b) && b[i+1] == '\n' {
				return b[:i], b[i+2:]
			}
			return b[:i], b[i+1:]
		}
	}
	return b, nil
}

// lastLineEnd returns the index of the last CR or LF in b, or -1.
func lastLineEnd(b []byte) int {
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == '\n' || b[i] == '\r' {
			return i
		}
	}
	return -1
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

// ProductToken returns the robots.txt product token of a User-Agent
// value: its leading run of ASCII letters, '_' and '-', as written
// ("Trawl-Bot/1.2 (+https://x.test)" gives "Trawl-Bot"). It is "" when
// userAgent starts with anything else. Groups are matched against it
// ignoring ASCII case (RFC 9309 2.2.1), so its case does not matter.
//
// Digits end the token: RFC 9309 2.2.1 says the product token "MUST
// contain only uppercase and lowercase letters ("a-z" and "A-Z"),
// underscores ("_"), and hyphens ("-")", and its ABNF (identifier =
// 1*(%x2D / %x41-5A / %x5F / %x61-7A)) has no digits. A crawler named
// "bot2/1.0" therefore answers to "bot" in robots.txt, which is the name
// a conforming file can use for it. Where another party's name is read
// (a user-agent line, an X-Robots-Tag prefix), a name with a digit is not
// a product token: ProductToken(name) != name.
func ProductToken(userAgent string) string {
	for i := 0; i < len(userAgent); i++ {
		c := userAgent[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' || c == '-') {
			return userAgent[:i]
		}
	}
	return userAgent
}

// asciiLower lowercases ASCII letters only; product tokens are ASCII.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// asciiEqualFold compares two strings ignoring ASCII case.
func asciiEqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

func appendOnce(s []int, v int) []int {
	if len(s) > 0 && s[len(s)-1] == v {
		return s
	}
	return append(s, v)
}

// clip shortens s for a warning message.
func clip(s string) string {
	const n = 60
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
