package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"

	"github.com/trawl-crawler/trawl/urlnorm"
)

// urlStdin is where `trawl url normalize` reads URLs when given none as
// arguments; tests replace it.
var urlStdin io.Reader = os.Stdin

func init() {
	register("url", "parse and normalise URLs", cmdURL)
	leaf("url normalize", func(fs *flag.FlagSet) { fs.String("base", "", "resolve each URL against this absolute http(s) `URL`") })
}

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

func cmdURLNormalize(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("url normalize", urlUsage, nil, stderr)
	leaves["url normalize"](fs)
	if _, code, ok := parseFlags(fs, args, nil, stderr); !ok {
		return code
	}
	baseFlag := fs.Lookup("base").Value.String()
	var base *url.URL
	if baseFlag != "" {
		b, err := urlnorm.Parse(baseFlag, nil)
		if err != nil {
			fmt.Fprintf(stderr, "trawl url normalize: --base: %v\n", err)
			return 2
		}
		base = b
	}

	w := bufio.NewWriter(stdout)
	invalid := false
	normalize := func(ref string) {
		c, err := urlnorm.Canonical(ref, base)
		if err != nil {
			invalid = true
			fmt.Fprintf(w, "invalid: %v\n", err)
			return
		}
		fmt.Fprintln(w, c)
	}
	if fs.NArg() > 0 {
		for _, ref := range fs.Args() {
			normalize(ref)
		}
	} else {
		sc := bufio.NewScanner(urlStdin)
		sc.Buffer(make([]byte, 64*1024), 1<<20)
		for sc.Scan() {
			normalize(sc.Text())
		}
		if err := sc.Err(); err != nil {
			w.Flush()
			fmt.Fprintf(stderr, "trawl url normalize: read standard input: %v\n", err)
			return 1
		}
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintf(stderr, "trawl url normalize: write: %v\n", err)
		return 1
	}
	if invalid {
		return 1
	}
	return 0
}
