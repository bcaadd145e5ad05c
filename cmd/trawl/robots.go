package main

import (
	"fmt"
	"io"

	"github.com/trawl-crawler/trawl/internal/cli/urlcmd"
)

func init() {
	register("robots", "check URLs against a robots.txt file", cmdRobots)
}

// cmdRobots runs "trawl robots".
func cmdRobots(args []string, stdout, stderr io.Writer) int {
	for _, a := range args {
		if a == "-h" || a == "--help" || a == "-help" || (a == "help" && len(args) == 1) {
			fmt.Fprint(stderr, urlcmd.RobotsHelp)
			return 0
		}
	}
	if len(args) < 4 || args[0] != "check" {
		fmt.Fprint(stderr, urlcmd.RobotsHelp)
		return 2
	}
	return urlcmd.Robots{File: args[1], Agent: args[2], URLs: args[3:]}.Main(stdout, stderr)
}
