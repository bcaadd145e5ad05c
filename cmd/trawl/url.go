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
var cmdURLNormalize = leafCommand("url normalize", urlcmd.NormalizeHelp, nil, func(fs *flag.FlagSet, o *urlcmd.Normalize) {
	fs.StringVar(&o.Base, "base", "", "resolve each URL against this absolute http(s) `URL`")
}, func(o *urlcmd.Normalize, args []string, _ map[string]config.Source, stdout, stderr io.Writer) int {
	o.URLs = args
	return o.Main(stdout, stderr)
})

// cmdURL runs `trawl url SUBCOMMAND`.
func cmdURL(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, urlcmd.NormalizeHelp)
		return 2
	}
	switch args[0] {
	case "normalize", "normalise":
		return cmdURLNormalize(args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stderr, urlcmd.NormalizeHelp)
		return 0
	default:
		fmt.Fprintf(stderr, "trawl url: unknown subcommand %q\n\n%s", args[0], urlcmd.NormalizeHelp)
		return 2
	}
}
