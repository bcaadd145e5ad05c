package testweb

import (
	"strings"
	"time"
)

// robotsKind is how a host answers /robots.txt. Which paths a kind disallows
// is decided here, by construction, next to the text that says so: the web
// never parses its own robots.txt files.
type robotsKind int

const (
	robotsAllowAll    robotsKind = iota // "Disallow:" (empty): everything allowed
	robotsPrefix                        // Disallow: /private/
	robotsConflict                      // Disallow: /docs/ + Allow: /docs/public/
	robotsWildcard                      // Disallow: /*.pdf$ and /*?sessionid=
	robotsAgent                         // a group for "trawl" differing from "*"
	robotsCrawlDelay                    // Crawl-delay: 2 and Disallow: /private/
	robotsNotFound                      // 404: everything allowed
	robotsServerError                   // 500 forever: nothing allowed
	robotsTooMany                       // 429 for the first robotsTooManyCount requests, then /private/ rules
	robotsRedirect                      // 301 to /robots-real.txt holding the /private/ rules
)

// robotsTooManyCount is how many robots.txt requests of a robotsTooMany host
// get 429 before one gets 200.
const robotsTooManyCount = 1

// ourAgent is the product token the agent-specific robots group names.
const ourAgent = "trawl"

var robotsKindNames = [...]string{
	robotsAllowAll:    "allow-all",
	robotsPrefix:      "disallow-prefix",
	robotsConflict:    "allow-disallow-conflict",
	robotsWildcard:    "wildcards",
	robotsAgent:       "agent-group",
	robotsCrawlDelay:  "crawl-delay",
	robotsNotFound:    "404",
	robotsServerError: "500-forever",
	robotsTooMany:     "429-then-200",
	robotsRedirect:    "301-to-robots-real",
}

func (k robotsKind) String() string { return robotsKindNames[k] }

const privateRules = "User-agent: *\nDisallow: /private/\n"

// robotsText is the body served with status 200 for the kind ("" if the
// kind never serves a 200 at /robots.txt itself).
func (k robotsKind) text() string {
	switch k {
	case robotsAllowAll:
		return "# everything is allowed\nUser-agent: *\nDisallow:\n"
	case robotsPrefix, robotsTooMany, robotsRedirect:
		return privateRules
	case robotsConflict:
		return "User-agent: *\nDisallow: /docs/\nAllow: /docs/public/\n"
	case robotsWildcard:
		return "User-agent: *\nDisallow: /*.pdf$\nDisallow: /*?sessionid=\n"
	case robotsAgent:
		return "User-agent: " + ourAgent + "\nDisallow: /no-trawl/\n\nUser-agent: *\nDisallow: /no-others/\n"
	case robotsCrawlDelay:
		return "User-agent: *\nCrawl-delay: 2\nDisallow: /private/\n"
	}
	return ""
}

// settlingRequests is how many robots requests a crawler from scratch
// sends a host of the kind (that has crawlable URLs) before it knows the
// rules: the 429s, then the answer, plus the redirect's target.
func (k robotsKind) settlingRequests() int {
	switch k {
	case robotsTooMany:
		return robotsTooManyCount + 1
	case robotsRedirect:
		return 2
	}
	return 1
}

// crawlDelay is the Crawl-delay the kind asks of every agent.
func (k robotsKind) crawlDelay() time.Duration {
	if k == robotsCrawlDelay {
		return 2 * time.Second
	}
	return 0
}

// isOurAgent reports whether a crawler with the given User-agent product
// token (or full User-Agent string) matches the "trawl" group: its product
// token, up to the first '/' or space, equals "trawl" ignoring case.
func isOurAgent(agent string) bool {
	tok, _, _ := strings.Cut(strings.TrimSpace(agent), " ")
	tok, _, _ = strings.Cut(tok, "/")
	return strings.EqualFold(tok, ourAgent)
}

// disallowed reports whether the rules of kind k forbid canonical path and
// query pq to a crawler with the given agent, once robots.txt was read
// successfully.
func (k robotsKind) disallowed(pq, agent string) bool {
	switch k {
	case robotsPrefix, robotsCrawlDelay, robotsTooMany, robotsRedirect:
		return strings.HasPrefix(pq, "/private/")
	case robotsConflict:
		return strings.HasPrefix(pq, "/docs/") && !strings.HasPrefix(pq, "/docs/public/")
	case robotsWildcard:
		return strings.HasSuffix(pq, ".pdf") || strings.Contains(pq, "?sessionid=")
	case robotsAgent:
		if isOurAgent(agent) {
			return strings.HasPrefix(pq, "/no-trawl/")
		}
		return strings.HasPrefix(pq, "/no-others/")
	case robotsServerError:
		return true
	}
	return false
}

// isSiteFile reports whether pq (canonical) is a file a crawler may ask
// every host for, beside robots.txt and sitemaps, though nothing links to
// it: the TDMRep file (W3C TDM Reservation Protocol). The web serves none
// (a 404).
func isSiteFile(pq string) bool { return pq == "/.well-known/tdmrep.json" }

// isRobotsPath reports whether a canonical path is one of the robots files.
func isRobotsPath(pq string) bool {
	return pq == "/robots.txt" || pq == "/robots-real.txt"
}
