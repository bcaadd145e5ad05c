package urlnorm

import (
	"net/url"
	"strings"

	whatwg "github.com/nlnwa/whatwg-url/url"
)

// The fast path resolves the links most pages are made of ("/a/b.html",
// "c.html?x=1", "?page=2") without the WHATWG parser, which costs a few
// microseconds and dozens of allocations a link. It takes only refs whose
// result it knows exactly: made of bytes the standard never percent-
// encodes or rewrites (safeByte), without a scheme, an authority, a
// fragment, an empty query or a dot segment, against an http(s) base
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
	ok     bool
	scheme string
	host   string // as fromWHATWG writes it
	path   string // the base's pathname
	dir    string // path through its last '/'
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
	return fastBase{ok: true, scheme: w.Scheme(), host: host, path: p, dir: p[:strings.LastIndexByte(p, '/')+1]}
}

// resolve returns ref resolved against b, and false if the fast path does
// not take it.
func (b *fastBase) resolve(ref string) (*url.URL, bool) {
	if !b.ok || ref == "" || !allSafe(ref) {
		return nil, false
	}
	path, query := ref, ""
	if i := strings.IndexByte(ref, '?'); i >= 0 {
		path, query = ref[:i], ref[i+1:]
		if query == "" {
			return nil, false // "x?": net/url needs ForceQuery
		}
	}
	switch {
	case path == "":
		path = b.path // "?q": the base's path, a new query
	case strings.HasPrefix(path, "//"):
		return nil, false // an authority
	case path[0] == '/':
	default:
		// A ':' before the first '/' may end a scheme.
		if c := strings.IndexByte(path, ':'); c >= 0 {
			if s := strings.IndexByte(path, '/'); s < 0 || c < s {
				return nil, false
			}
		}
		path = b.dir + path
	}
	if hasDotSegment(path) {
		return nil, false
	}
	u := &url.URL{Scheme: b.scheme, Host: b.host, RawQuery: query}
	setPath(u, path)
	return u, true
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
