package main

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"

	"github.com/trawl-crawler/trawl/robots"
)

func init() {
	register("robots", "check URLs against a robots.txt file", cmdRobots)
}

const robotsUsage = `usage: trawl robots check ROBOTS_FILE USER_AGENT URL...

Parses ROBOTS_FILE as a robots.txt (RFC 9309) and prints, for each URL,
"allowed<TAB>URL" or "disallowed<TAB>URL" for the crawler whose product token
is USER_AGENT. A URL is an absolute http(s) URL or a path starting with "/".
Parse warnings go to stderr. Exit status: 0 if every input was read, 1 if the
file or a URL could not be, 2 on a usage error.

Examples:
  trawl robots check robots.txt trawl https://example.org/private/x /public/y
  curl -s https://example.org/robots.txt > r.txt && trawl robots check r.txt trawl /search?q=1
`

// cmdRobots runs "trawl robots".
func cmdRobots(args []string, stdout, stderr io.Writer) int {
	for _, a := range args {
		if a == "-h" || a == "--help" || a == "-help" || (a == "help" && len(args) == 1) {
			fmt.Fprint(stderr, robotsUsage)
			return 0
		}
	}
	if len(args) < 4 || args[0] != "check" {
		fmt.Fprint(stderr, robotsUsage)
		return 2
	}
	file, agent, urls := args[1], args[2], args[3:]

	body, err := readRobotsFile(file)
	if err != nil {
		fmt.Fprintf(stderr, "trawl robots: %v\n", err)
		return 1
	}
	r := robots.Parse(body)
	for _, w := range r.Warnings() {
		fmt.Fprintf(stderr, "trawl robots: %s: %s\n", file, w)
	}

	code := 0
	for _, raw := range urls {
		u, err := parseCheckURL(raw)
		if err != nil {
			fmt.Fprintf(stderr, "trawl robots: %v\n", err)
			code = 1
			continue
		}
		verdict := "disallowed"
		if r.AllowedURL(agent, u) {
			verdict = "allowed"
		}
		fmt.Fprintf(stdout, "%s\t%s\n", verdict, raw)
	}
	return code
}

// readRobotsFile reads at most one byte more than robots.MaxBytes, so that
// Parse sees and reports a longer file.
func readRobotsFile(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("read robots file: %w", err)
	}
	defer f.Close()
	body, err := io.ReadAll(io.LimitReader(f, robots.MaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read robots file %s: %w", name, err)
	}
	return body, nil
}

// parseCheckURL accepts an absolute http(s) URL or an absolute path.
func parseCheckURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("bad URL %q: %w", raw, errors.Unwrap(err))
	}
	switch {
	case u.Scheme == "http" || u.Scheme == "https":
		if u.Host == "" {
			return nil, fmt.Errorf("bad URL %q: no host", raw)
		}
	case u.Scheme == "" && u.Host == "" && len(raw) > 0 && raw[0] == '/':
	default:
		return nil, fmt.Errorf("bad URL %q: want an http(s) URL or a path starting with /", raw)
	}
	return u, nil
}
