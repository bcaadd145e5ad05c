package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/trawl-crawler/trawl/internal/cli/config"
	"github.com/trawl-crawler/trawl/internal/cli/urlcmd"
)

func init() {
	register("url", "parse and normalise URLs", cmdURL)
}

// cmdURLNormalize runs `trawl url normalize`; URLs come from standard
// input when none are given.
var cmdURLNormalize = leafCommand("url normalize", urlUsage, nil, func(fs *flag.FlagSet, o *urlcmd.Normalize) {
	fs.StringVar(&o.Base, "base", "", "resolve each URL against this absolute http(s) `URL`")
}, func(o *urlcmd.Normalize, args []string, _ map[string]config.Source, stdout, stderr io.Writer) int {
	o.URLs = args
	return o.Main(stdout, stderr)
})

const urlUsage = `usage: trawl url normalize [--base BASE] [URL...]

Prints the canonical form of each URL, one line per input, or
"invalid: REASON" for a URL that cannot be parsed or is not http(s).
Each URL is parsed as a browser parses a link (WHATWG), against BASE if
given. With no URL arguments, URLs are read from standard input, one per
line. Exits 1 if any URL was invalid, 2 on a usage error.

Examples:
  trawl url normalize 'HTTP://Example.ORG:80/a/../b?#frag'
  trawl url normalize --base https://example.org/docs/ ../img/x.png page2.html
  trawl url normalize < urls.txt
`

// cmdURL runs `trawl url SUBCOMMAND`.
func cmdURL(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, urlUsage)
		return 2
	}
	switch args[0] {
	case "normalize", "normalise":
		return cmdURLNormalize(args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stderr, urlUsage)
		return 0
	default:
		fmt.Fprintf(stderr, "trawl url: unknown subcommand %q\n\n%s", args[0], urlUsage)
		return 2
	}
}
