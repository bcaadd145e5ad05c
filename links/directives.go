package links

import (
	"bytes"
	"strings"

	"github.com/trawl-crawler/trawl/robots"
)

// robotsDirectives reads the content of a <meta name=robots> element: tokens
// separated by commas or ASCII whitespace, case-insensitive. Unknown tokens
// (index, follow, max-snippet:20, ...) are ignored.
func robotsDirectives(content []byte) (noIndex, noFollow bool) {
	for len(content) > 0 {
		i := 0
		for i < len(content) && content[i] != ',' && !isSpace(content[i]) {
			i++
		}
		ni, nf := directive(content[:i])
		noIndex = noIndex || ni
		noFollow = noFollow || nf
		if i == len(content) {
			break
		}
		content = content[i+1:]
	}
	return noIndex, noFollow
}

// directive interprets one robots token.
func directive(tok []byte) (noIndex, noFollow bool) {
	switch {
	case equivFold(tok, "noindex"):
		return true, false
	case equivFold(tok, "nofollow"):
		return false, true
	case equivFold(tok, "none"):
		return true, true
	}
	return false, false
}

// valuedDirectives are robots directives written "name: value". In an
// X-Robots-Tag they must not be mistaken for a user-agent prefix.
var valuedDirectives = [...]string{"unavailable_after", "max-snippet", "max-image-preview", "max-video-preview"}

// XRobotsTag reads the values of the X-Robots-Tag response headers (one
// element per header line) for the crawler whose product token is agent.
//
// Each value is a comma-separated list of directives. An item of the form
// "name: directive", where name is a product token and not a directive that
// takes a value (unavailable_after, max-snippet, ...), switches the rest of
// that value to apply only to the user agent name; items before any such
// prefix apply to every agent. Any other item containing a colon is a valued
// directive or a fragment of a date and is ignored. So "googlebot: noindex, nofollow" is two
// directives for googlebot. Directives apply when unprefixed or when the
// prefix equals agent, case-insensitively. "none" means noindex and nofollow;
// unknown directives, dates and other values are ignored. A flag, once set
// by any value, stays set.
func XRobotsTag(values []string, agent string) (noIndex, noFollow bool) {
	for _, v := range values {
		applies := true // until an agent prefix says otherwise
		for item := range strings.SplitSeq(v, ",") {
			item = strings.Trim(item, " \t")
			if name, rest, ok := strings.Cut(item, ":"); ok {
				name = strings.TrimRight(name, " \t")
				if !isProductToken(name) || isValuedDirective(name) {
					// A valued directive ("max-snippet: 20"), or a piece of
					// a date cut at its comma ("01-Jan-2040 12:00:00 GMT").
					continue
				}
				applies = agent != "" && strings.EqualFold(name, agent)
				item = rest
			}
			if !applies {
				continue
			}
			ni, nf := robotsDirectives([]byte(item))
			noIndex = noIndex || ni
			noFollow = noFollow || nf
		}
	}
	return noIndex, noFollow
}

func isValuedDirective(name string) bool {
	for _, d := range valuedDirectives {
		if strings.EqualFold(name, d) {
			return true
		}
	}
	return false
}

// isProductToken reports whether s is a whole RFC 9309 product token
// (robots.ProductToken: letters, '_' and '-'; no digits, 2.2.1). A prefix
// with a digit ("MJ12bot: nofollow") is therefore not read as naming an
// agent and its item is ignored, while later unprefixed items in the value
// apply to every agent: the mistake can only make the crawler more careful.
func isProductToken(s string) bool {
	return s != "" && robots.ProductToken(s) == s
}

// refreshURL returns the URL of a <meta http-equiv=refresh> content value
// such as "5; url='/next'", following the shape of the HTML standard's
// algorithm for shared declarative refresh steps: a number, then ";" or ","
// and an optional "url=", then the URL, optionally in quotes. ok is false if
// there is no URL (a plain reload) or the value is not a refresh.
func refreshURL(content []byte) (ref []byte, ok bool) {
	s := trimSpace(content)
	i := 0
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	if i == 0 && (len(s) == 0 || s[0] != '.') {
		return nil, false
	}
	for i < len(s) && ('0' <= s[i] && s[i] <= '9' || s[i] == '.') {
		i++
	}
	s = s[i:]
	if len(s) > 0 && !isSpace(s[0]) && s[0] != ';' && s[0] != ',' {
		return nil, false
	}
	s = trimSpace(s)
	if len(s) > 0 && (s[0] == ';' || s[0] == ',') {
		s = trimSpace(s[1:])
	}
	if len(s) >= 3 && equivFold(s[:3], "url") {
		if t := trimSpace(s[3:]); len(t) > 0 && t[0] == '=' {
			s = trimSpace(t[1:])
		}
	}
	if len(s) > 0 && (s[0] == '\'' || s[0] == '"') {
		q := s[0]
		s = s[1:]
		if j := bytes.IndexByte(s, q); j >= 0 {
			s = s[:j]
		}
	}
	s = trimSpace(s)
	return s, len(s) > 0
}
