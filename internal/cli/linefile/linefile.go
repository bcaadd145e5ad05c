// Package linefile reads the line files trawl's commands take: lists of
// seed URLs (Lines) and host maps in /etc/hosts format (Hosts).
//
// Both skip empty lines and lines starting with '#', after trimming
// surrounding white space; errors name the file and, for a bad line, its
// number (counting every line of the file).
package linefile

import (
	"bufio"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strings"
)

// numbered is a non-empty, non-comment line of a file and its number.
type numbered struct {
	n    int
	text string
}

// read reads the non-empty lines of path that are not # comments.
func read(path string) ([]numbered, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []numbered
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, numbered{n, line})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return out, nil
}

// Lines reads the non-empty lines of path that are not # comments.
func Lines(path string) ([]string, error) {
	lines, err := read(path)
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = l.text
	}
	return out, err
}

// Hosts reads "ADDRESS NAME..." lines (/etc/hosts format) into a map
// from each name, lower-cased, to its addresses in the file's order.
// Every bad line is reported (errors.Join); the good ones are kept.
func Hosts(path string) (map[string][]netip.Addr, error) {
	lines, err := read(path)
	if err != nil {
		return nil, err
	}
	m := make(map[string][]netip.Addr)
	var errs []error
	for _, line := range lines {
		fields := strings.Fields(line.text)
		if len(fields) < 2 {
			errs = append(errs, fmt.Errorf("%s: line %d: want ADDRESS NAME, got %q", path, line.n, line.text))
			continue
		}
		a, err := netip.ParseAddr(fields[0])
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: line %d: %w", path, line.n, err))
			continue
		}
		for _, name := range fields[1:] {
			name = strings.ToLower(name)
			m[name] = append(m[name], a)
		}
	}
	return m, errors.Join(errs...)
}
