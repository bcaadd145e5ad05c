package testweb

import (
	"cmp"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// This file holds the web's own small canonicaliser. It is deliberately
// independent of package urlnorm: the web judges the crawler, so its ground
// truth must not share the crawler's code. It only needs to handle what a
// crawler sends (origin-form request targets) and the seed URLs of a test.

// trackingParams are the query keys the canonical form drops; utm_* too.
var trackingParams = map[string]bool{
	"gclid": true, "fbclid": true, "msclkid": true, "dclid": true, "yclid": true,
	"_ga": true, "mc_cid": true, "mc_eid": true,
}

func isTracking(key string) bool {
	k := strings.ToLower(key)
	return strings.HasPrefix(k, "utm_") || trackingParams[k]
}

func isUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// mustEscape reports whether byte c may not appear raw in a canonical path
// or query: controls, space, non-ASCII and the characters WHATWG escapes.
func mustEscape(c byte) bool {
	return c <= 0x20 || c >= 0x7f || strings.IndexByte("\"<>`{}#", c) >= 0
}

// canonEscapes normalises percent-encoding in s: escapes of unreserved
// characters are decoded, other escapes get upper-case hex, and bytes that
// must not appear raw are escaped. A '%' not followed by two hex digits is
// escaped as %25.
func canonEscapes(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%':
			if i+2 < len(s) {
				hi, ok1 := unhex(s[i+1])
				lo, ok2 := unhex(s[i+2])
				if ok1 && ok2 {
					d := hi<<4 | lo
					if isUnreserved(d) {
						b.WriteByte(d)
					} else {
						b.WriteByte('%')
						b.WriteByte(hex[d>>4])
						b.WriteByte(hex[d&15])
					}
					i += 2
					continue
				}
			}
			b.WriteString("%25")
		case mustEscape(c):
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// canonPath removes dot segments (also escaped ones) and normalises escapes.
// An empty path becomes "/".
func canonPath(p string) string {
	if p == "" || p[0] != '/' {
		p = "/" + p
	}
	segs := strings.Split(p[1:], "/")
	out := make([]string, 0, len(segs))
	for i, s := range segs {
		s = canonEscapes(s)
		last := i == len(segs)-1
		switch strings.ToLower(s) {
		case ".", "%2e":
			if last {
				out = append(out, "")
			}
		case "..", ".%2e", "%2e.", "%2e%2e":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, s)
		}
	}
	return "/" + strings.Join(out, "/")
}

// canonQuery drops tracking parameters and empty pairs, normalises escapes
// and sorts the pairs by key, stable for repeated keys. It returns "" for an
// empty result.
func canonQuery(q string) string {
	if q == "" {
		return ""
	}
	var pairs []string
	for p := range strings.SplitSeq(q, "&") {
		if p == "" {
			continue
		}
		p = canonEscapes(p)
		k, _, _ := strings.Cut(p, "=")
		if isTracking(k) {
			continue
		}
		pairs = append(pairs, p)
	}
	slices.SortStableFunc(pairs, func(a, b string) int {
		ka, _, _ := strings.Cut(a, "=")
		kb, _, _ := strings.Cut(b, "=")
		return cmp.Compare(ka, kb)
	})
	return strings.Join(pairs, "&")
}

// canonRequestURI returns the canonical path and query ("/p?a=1") of an
// origin-form request target as a server receives it; a fragment, which a
// client must not send, is dropped.
func canonRequestURI(uri string) string {
	uri, _, _ = strings.Cut(uri, "#")
	path, query, _ := strings.Cut(uri, "?")
	pq := canonPath(path)
	if q := canonQuery(query); q != "" {
		pq += "?" + q
	}
	return pq
}

// canonHost lower-cases a host name and strips a trailing dot.
func canonHost(h string) string {
	return strings.TrimSuffix(strings.ToLower(h), ".")
}

// splitHostPort splits a Host header value; a missing port gives port 0.
func splitHostPort(hostport string) (string, int) {
	h, p, err := net.SplitHostPort(hostport)
	if err != nil {
		return canonHost(hostport), 0
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		return canonHost(h), -1
	}
	return canonHost(h), n
}

// canonAbsolute parses an absolute http URL (a seed) and returns its host,
// port (0 if none; 80 is dropped) and canonical path and query.
func canonAbsolute(raw string) (host string, port int, pq string, err error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "", 0, "", fmt.Errorf("testweb: parse URL %q: %w", raw, err)
	}
	if !strings.EqualFold(u.Scheme, "http") || u.Host == "" {
		return "", 0, "", fmt.Errorf("testweb: parse URL %q: not an absolute http URL", raw)
	}
	host, port = splitHostPort(u.Host)
	if port == 80 {
		port = 0
	}
	target := u.EscapedPath()
	if u.RawQuery != "" {
		target += "?" + u.RawQuery
	}
	return host, port, canonRequestURI(target), nil
}
