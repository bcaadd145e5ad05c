package scope

import (
	"net/url"
	"strings"
)

// DefaultSessionParams are the session parameter names StripSession
// removes when Rules.SessionParams is nil: Java's jsessionid (usually a
// ";jsessionid=" path parameter), PHP's phpsessid, classic ASP's
// aspsessionid, and the generic sid and sessionid. Compared without
// regard to case.
var DefaultSessionParams = []string{"jsessionid", "phpsessid", "sid", "sessionid", "aspsessionid"}

// sessionParams is r's list after its default.
func (r Rules) sessionParams() []string {
	if r.SessionParams == nil {
		return DefaultSessionParams
	}
	return r.SessionParams
}

// MinSessionIDLength is the shortest value StripSession takes for a
// session ID. Servers hand out long random tokens (PHP 26 or 32
// characters, Java 32, classic ASP 24); a short value under one of the
// names ("sid=12", a section) is kept.
const MinSessionIDLength = 16

// looksLikeSession reports whether v could be a session ID: at least
// MinSessionIDLength letters, digits, '-', '_' or '.'.
func looksLikeSession(v string) bool {
	if len(v) < MinSessionIDLength {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// StripSession returns u without session IDs: query parameters and path
// parameters (";name=value" in a path segment) whose name is one of
// r.SessionParams and whose value looks like a session ID (at least
// MinSessionIDLength letters, digits, '-', '_' or '.'). A site that writes a new session into every link
// otherwise shows each of its pages under endless URLs. It returns u
// itself if there is nothing to strip, else a new URL; u must be
// canonical (urlnorm.Normalize), and so is the result (the query stays
// sorted).
func (r Rules) StripSession(u *url.URL) *url.URL {
	names := r.sessionParams()
	if len(names) == 0 {
		return u
	}
	isSession := func(kv string) bool {
		k, v, _ := strings.Cut(kv, "=")
		if !looksLikeSession(v) {
			return false
		}
		for _, n := range names {
			if strings.EqualFold(k, n) {
				return true
			}
		}
		return false
	}
	// Most URLs have no path parameter and no session parameter in their
	// query: they are returned as they are, without building anything.
	hasParam := strings.IndexByte(u.Path, ';') >= 0 || strings.IndexByte(u.RawPath, ';') >= 0
	inQuery := false
	for kv := range strings.SplitSeq(u.RawQuery, "&") {
		if isSession(kv) {
			inQuery = true
			break
		}
	}
	if !hasParam && !inQuery {
		return u
	}
	p, q := u.EscapedPath(), u.RawQuery
	newP, newQ := p, q
	if strings.IndexByte(p, ';') >= 0 {
		segs := strings.Split(p, "/")
		for i, seg := range segs {
			parts := strings.Split(seg, ";")
			kept := parts[:1]
			for _, param := range parts[1:] {
				if !isSession(param) {
					kept = append(kept, param)
				}
			}
			segs[i] = strings.Join(kept, ";")
		}
		newP = strings.Join(segs, "/")
	}
	if inQuery {
		var kept []string
		for kv := range strings.SplitSeq(q, "&") {
			if !isSession(kv) {
				kept = append(kept, kv)
			}
		}
		newQ = strings.Join(kept, "&")
	}
	if newP == p && newQ == q {
		return u
	}
	v := *u
	v.RawQuery = newQ
	v.ForceQuery = false
	if newP != p {
		path, err := url.PathUnescape(newP)
		if err != nil {
			return u // cannot happen for a canonical path
		}
		v.Path, v.RawPath = path, newP
		if v.EscapedPath() == path {
			v.RawPath = ""
		}
	}
	return &v
}
