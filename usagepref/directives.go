package usagepref

import (
	"strings"

	"github.com/trawl-crawler/trawl/robots"
)

// RobotsDirective is one directive of an X-Robots-Tag header value or a
// robots <meta> element, as Google documents them
// (developers.google.com/search/docs/crawling-indexing/robots-meta-tag):
// noindex, nofollow, none, noarchive, nosnippet, max-snippet: 20, ...,
// and the de-facto noai and noimageai.
type RobotsDirective struct {
	// Agent is the user agent the directive is scoped to, as written;
	// "" for every agent.
	Agent string `json:"agent,omitempty"`
	// Name is the directive, ASCII lower-cased.
	Name string `json:"name"`
	// Value is the value of a valued directive (max-snippet,
	// max-image-preview, max-video-preview, unavailable_after), trimmed.
	Value string `json:"value,omitempty"`
}

// valuedDirectives take a value after a colon; in an X-Robots-Tag they are
// not user-agent prefixes (as in links.XRobotsTag).
var valuedDirectives = [...]string{"unavailable_after", "max-snippet", "max-image-preview", "max-video-preview"}

func isValued(name string) bool {
	for _, d := range valuedDirectives {
		if strings.EqualFold(name, d) {
			return true
		}
	}
	return false
}

// maxDirectives bounds the directives read from one value.
const maxDirectives = 64

// ParseXRobotsTag reads one X-Robots-Tag header value. Items are
// separated by commas. An item "name: rest", where name is a product
// token (robots.ProductToken) and not a valued directive, scopes the rest
// of the value to the user agent name ("googlebot: noindex, nofollow" is
// two directives for googlebot); a valued directive keeps its value
// ("max-snippet: 20"); any other item with a colon (a piece of a date cut
// at its comma) is ignored. Within an item, directives are separated by
// ASCII whitespace. This is the reading of links.XRobotsTag, which tests
// hold it to. At most 64 directives are kept.
func ParseXRobotsTag(value string) []RobotsDirective {
	var out []RobotsDirective
	agent := ""
	for item := range strings.SplitSeq(value, ",") {
		item = strings.Trim(item, " \t")
		if name, rest, ok := strings.Cut(item, ":"); ok {
			name = strings.TrimRight(name, " \t")
			switch {
			case isValued(name):
				out = appendDirective(out, RobotsDirective{Agent: agent, Name: asciiLower(name), Value: strings.Trim(rest, " \t")})
				continue
			case name == "" || robots.ProductToken(name) != name:
				continue
			}
			agent, item = name, rest
		}
		for tok := range strings.FieldsFuncSeq(item, isHTMLSpace) {
			out = appendDirective(out, RobotsDirective{Agent: agent, Name: asciiLower(tok)})
		}
	}
	return out
}

// ParseRobotsMeta reads the content of a <meta name=NAME> robots element:
// directives separated by commas or ASCII whitespace. Name "robots"
// (ignoring ASCII case) speaks to every agent; any other name (a crawler's
// own, such as "googlebot") scopes the directives to that agent. A
// directive "max-snippet:20" keeps its value.
func ParseRobotsMeta(name, content string) []RobotsDirective {
	agent := strings.Trim(name, " \t\n\f\r")
	if strings.EqualFold(agent, "robots") {
		agent = ""
	}
	var out []RobotsDirective
	for tok := range strings.FieldsFuncSeq(content, func(r rune) bool { return r == ',' || isHTMLSpace(r) }) {
		d := RobotsDirective{Agent: agent, Name: asciiLower(tok)}
		if n, v, ok := strings.Cut(tok, ":"); ok && isValued(n) {
			d.Name, d.Value = asciiLower(n), v
		}
		out = appendDirective(out, d)
	}
	return out
}

// isHTMLSpace: ASCII whitespace as HTML defines it.
func isHTMLSpace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\f' || r == '\r'
}

func appendDirective(ds []RobotsDirective, d RobotsDirective) []RobotsDirective {
	if len(ds) >= maxDirectives || d.Name == "" {
		return ds
	}
	return append(ds, d)
}

// RobotsFlags are the directives that apply to one agent.
type RobotsFlags struct {
	NoIndex, NoFollow, NoArchive, NoSnippet, NoAI, NoImageAI bool
}

// FlagsFor returns the directives of ds that apply to agent (those for
// every agent and those scoped to agent, ignoring ASCII case). "none" is
// noindex and nofollow.
func FlagsFor(ds []RobotsDirective, agent string) RobotsFlags {
	var f RobotsFlags
	for _, d := range ds {
		if d.Agent != "" && (agent == "" || !strings.EqualFold(d.Agent, agent)) {
			continue
		}
		switch d.Name {
		case "noindex":
			f.NoIndex = true
		case "nofollow":
			f.NoFollow = true
		case "none":
			f.NoIndex, f.NoFollow = true, true
		case "noarchive":
			f.NoArchive = true
		case "nosnippet":
			f.NoSnippet = true
		case "noai":
			f.NoAI = true
		case "noimageai":
			f.NoImageAI = true
		}
	}
	return f
}

// asciiLower lower-cases ASCII letters only, leaving other bytes as they
// are.
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
