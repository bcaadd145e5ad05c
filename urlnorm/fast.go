package urlnorm

import (
	"net/url"
	"strings"

	whatwg "github.com/nlnwa/whatwg-url/url"
)

// The fast path resolves the links most pages are made of ("/a/b.html",
// "c.html?x=1", "?page=2", "#top", "http://host:8080/x") without the
// WHATWG parser, which costs a few microseconds and dozens of allocations
// a link. It takes only refs whose result it knows exactly: made of bytes
// the standard never percent-encodes or rewrites (safeByte), without user
// info, an empty query or fragment, a dot segment, or a host the standard
// would treat as an IP address or IDNA label, against an http(s) base
// without user info. Anything else goes to the WHATWG parser. Its result
// is the WHATWG parser's, field for field (FuzzFastPath).

// safeByte marks the bytes a fast ref may hold: letters, digits and the
// RFC 3986 unreserved and sub-delimiter characters and ':', '@', '/', '?',
// less the apostrophe (percent-encoded in the query of special schemes).
var safeByte = func() (t [256]bool) {
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = true, true
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for _, c := range "-._~!$&()*+,;=:@/?" {
		t[c] = true
	}
	return t
}()

// fastBase is a Resolver's base as the fast path needs it; the zero value
// takes no ref.
type fastBase struct {
	ok         bool
	scheme     string
	host       string // as fromWHATWG writes it
	path       string // the base's pathname
	dir        string // path through its last '/'
	query      string // the base's query, for a fragment-only ref
	emptyQuery bool   // the base ends in "?": net/url would need ForceQuery
}

// newFastBase returns w as a fast base, or the zero value if w is not an
// http(s) URL without user info whose pathname is made of safe bytes.
func newFastBase(w *whatwg.Url) fastBase {
	switch w.Scheme() {
	case "http", "https":
	default:
		return fastBase{}
	}
	p := w.Pathname()
	if w.Username() != "" || w.Password() != "" || !strings.HasPrefix(p, "/") || !allSafe(p) || strings.IndexByte(p, '?') >= 0 {
		return fastBase{}
	}
	host := hostPort(w)
	if host == "" {
		return fastBase{}
	}
	q := w.Query()
	return fastBase{ok: true, scheme: w.Scheme(), host: host, path: p, dir: p[:strings.LastIndexByte(p, '/')+1],
		query: q, emptyQuery: q == "" && strings.HasSuffix(w.Href(true), "?")}
}

// resolve returns ref resolved against b, and false if the fast path does
// not take it.
func (b *fastBase) resolve(ref string) (*url.URL, bool) {
	if !b.ok || ref == "" {
		return nil, false
	}
	rest, frag, hasFrag := strings.Cut(ref, "#")
	if !allSafe(rest) || hasFrag && (frag == "" || !allSafe(frag)) {
		return nil, false // ("x#": net/url cannot hold an empty fragment)
	}
	scheme, host := b.scheme, b.host
	path, query, hasQuery := rest, "", false
	if i := strings.IndexByte(rest, '?'); i >= 0 {
		path, query, hasQuery = rest[:i], rest[i+1:], true
		if query == "" {
			return nil, false // "x?": net/url needs ForceQuery
		}
	}
	switch {
	case path == "" && !hasQuery: // "#f": the base's path and query
		if b.emptyQuery {
			return nil, false
		}
		path, query = b.path, b.query
	case path == "": // "?q": the base's path, a new query
		path = b.path
	case path[0] == '/' && !strings.HasPrefix(path, "//"):
	default:
		s, authority, ok := absolute(path)
		if ok {
			if s != "" {
				scheme = s
			}
			var p string
			if host, p, ok = fastAuthority(scheme, authority); !ok {
				return nil, false
			}
			path = p
			break
		}
		// A relative path; a ':' before the first '/' may end a scheme,
		// and "//" starts an authority the fast path did not take.
		if c := strings.IndexByte(path, ':'); c >= 0 {
			if s := strings.IndexByte(path, '/'); s < 0 || c < s {
				return nil, false
			}
		}
		if strings.HasPrefix(path, "//") {
			return nil, false
		}
		path = b.dir + path
	}
	if hasDotSegment(path) {
		return nil, false
	}
	u := &url.URL{Scheme: scheme, Host: host, RawQuery: query}
	setPath(u, path)
	if hasFrag {
		setFragment(u, frag)
	}
	return u, true
}

// absolute splits a ref (query and fragment cut off) that starts with
// "http://", "https://" (any case) or "//" into its scheme (lower case; ""
// for "//") and the rest after the slashes, and reports whether it does.
func absolute(ref string) (scheme, rest string, ok bool) {
	switch {
	case len(ref) >= 7 && strings.EqualFold(ref[:7], "http://"):
		return "http", ref[7:], true
	case len(ref) >= 8 && strings.EqualFold(ref[:8], "https://"):
		return "https", ref[8:], true
	case strings.HasPrefix(ref, "//"):
		return "", ref[2:], true
	}
	return "", "", false
}

// fastAuthority takes "host[:port][/path]" after the slashes of an
// absolute ref and returns the host as fromWHATWG writes it and the path
// ("/" if none), or false if the host is not a plain DNS name: labels of
// ASCII letters, digits and inner hyphens, not "xn--", the last beginning
// with a letter (a number would make it an IPv4 address), and the port digits
// without a leading zero, at most 65535 (dropped if the scheme's default).
func fastAuthority(scheme, s string) (host, path string, ok bool) {
	auth, path := s, "/"
	if i := strings.IndexByte(s, '/'); i >= 0 {
		auth, path = s[:i], s[i:]
	}
	name, port, hasPort := strings.Cut(auth, ":")
	if name == "" || len(name) > 253 || hasPort && !fastPort(port) {
		return "", "", false
	}
	name = strings.ToLower(name)
	last := ""
	for label := range strings.SplitSeq(name, ".") {
		if label == "" || label[0] == '-' || label[len(label)-1] == '-' || strings.HasPrefix(label, "xn--") {
			return "", "", false
		}
		for i := 0; i < len(label); i++ {
			if c := label[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
				return "", "", false
			}
		}
		last = label
	}
	if last[0] < 'a' {
		// The last label begins with a digit: the standard reads numbers
		// ("1", "0x1f") as IPv4 addresses, and the library more ("0-0").
		return "", "", false
	}
	if hasPort && !(scheme == "http" && port == "80" || scheme == "https" && port == "443") {
		name += ":" + port
	}
	return name, path, true
}

// fastPort reports whether p is a port the fast path writes as it is:
// 1 to 5 digits, no leading zero, at most 65535.
func fastPort(p string) bool {
	if p == "" || len(p) > 5 || p[0] == '0' {
		return false
	}
	n := 0
	for i := 0; i < len(p); i++ {
		if p[i] < '0' || p[i] > '9' {
			return false
		}
		n = n*10 + int(p[i]-'0')
	}
	return n <= 65535
}

func allSafe(s string) bool {
	for i := 0; i < len(s); i++ {
		if !safeByte[s[i]] {
			return false
		}
	}
	return true
}

// hasDotSegment reports whether path has a "." or ".." segment.
func hasDotSegment(path string) bool {
	for path != "" {
		seg := path
		if i := strings.IndexByte(path, '/'); i >= 0 {
			seg, path = path[:i], path[i+1:]
		} else {
			path = ""
		}
		if seg == "." || seg == ".." {
			return true
		}
	}
	return false
}
