package main

import (
	"fmt"
	"io"

	"github.com/trawl-crawler/trawl/internal/cli/urlcmd"
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
	return urlcmd.Robots{File: args[1], Agent: args[2], URLs: args[3:]}.Main(stdout, stderr)
}
