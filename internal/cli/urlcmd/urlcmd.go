// Package urlcmd is what trawl makes of a URL, offline: `trawl url
// normalize` prints URLs' canonical forms (package urlnorm), and `trawl
// robots check` whether a robots.txt file (package robots) allows them to
// a crawler. Each reads its inputs whole, prints one line per input in
// order, and keeps going past a bad one.
package urlcmd

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"

	"github.com/trawl-crawler/trawl/robots"
	"github.com/trawl-crawler/trawl/urlnorm"
)

// Normalize are `trawl url normalize`'s flags and arguments.
type Normalize struct {
	Base  string    // resolve each URL against this absolute http(s) URL; "" none
	URLs  []string  // the URLs; none: read them from Stdin, one a line
	Stdin io.Reader // nil: os.Stdin
}

// Main prints the canonical form of each URL, or "invalid: REASON", and
// returns the exit status: 0, 1 if any URL was invalid or the input could
// not be read, 2 for a bad Base.
func (o Normalize) Main(stdout, stderr io.Writer) int {
	var base *url.URL
	if o.Base != "" {
		b, err := urlnorm.Parse(o.Base, nil)
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
	if len(o.URLs) > 0 {
		for _, ref := range o.URLs {
			normalize(ref)
		}
	} else {
		in := o.Stdin
		if in == nil {
			in = os.Stdin
		}
		sc := bufio.NewScanner(in)
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

// Robots are `trawl robots check`'s arguments.
type Robots struct {
	File  string   // the robots.txt file
	Agent string   // the crawler's product token
	URLs  []string // absolute http(s) URLs or paths starting with "/"
}

// Main prints "allowed<TAB>URL" or "disallowed<TAB>URL" for each URL,
// the file's parse warnings on stderr, and returns the exit status: 0 if
// every input was read, 1 if the file or a URL could not be.
func (o Robots) Main(stdout, stderr io.Writer) int {
	body, err := readRobotsFile(o.File)
	if err != nil {
		fmt.Fprintf(stderr, "trawl robots: %v\n", err)
		return 1
	}
	r := robots.Parse(body)
	for _, w := range r.Warnings() {
		fmt.Fprintf(stderr, "trawl robots: %s: %s\n", o.File, w)
	}
	code := 0
	for _, raw := range o.URLs {
		u, err := parseCheckURL(raw)
		if err != nil {
			fmt.Fprintf(stderr, "trawl robots: %v\n", err)
			code = 1
			continue
		}
		verdict := "disallowed"
		if r.AllowedURL(o.Agent, u) {
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

// RobotsHelp is `trawl robots --help`.
const RobotsHelp = `usage: trawl robots check ROBOTS_FILE USER_AGENT URL...

Parses ROBOTS_FILE as a robots.txt (RFC 9309) and prints, for each URL,
"allowed<TAB>URL" or "disallowed<TAB>URL" for the crawler whose product token
is USER_AGENT. A URL is an absolute http(s) URL or a path starting with "/".
Parse warnings go to stderr. Exit status: 0 if every input was read, 1 if the
file or a URL could not be, 2 on a usage error.

Examples:
  trawl robots check robots.txt trawl https://example.org/private/x /public/y
  curl -s https://example.org/robots.txt > r.txt && trawl robots check r.txt trawl /search?q=1
`

// NormalizeHelp is `trawl url --help`, before its flags.
const NormalizeHelp = `usage: trawl url normalize [--base BASE] [URL...]

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
