package urlnorm

import (
	"fmt"
	"net/url"
	"strings"

	wgerrors "github.com/nlnwa/whatwg-url/errors"
	whatwg "github.com/nlnwa/whatwg-url/url"
)

// strictParser follows the WHATWG URL Standard. It holds only immutable
// options, so sharing it between goroutines is safe.
var strictParser = whatwg.NewParser()

// Parse parses ref the way a browser resolves a link (WHATWG URL Standard),
// against base, and returns the result as a *url.URL. If base is nil, ref
// must be an absolute URL. Only http and https results are returned; any
// other scheme (mailto:, javascript:, data:, ftp:, ...) is an error naming
// it. The result is not normalised: see Normalize and Canonical.
//
// A few WHATWG results cannot be held by net/url exactly, so their String
// differs from the browser's href: an empty fragment ("#") is lost; a '%'
// that starts no valid escape ("%zz") in the path or fragment becomes
// "%25"; '#' or '\' in the fragment, some characters in user info and '`',
// '{', '}' in the host are percent-encoded. Only the stray '%' changes what
// is fetched. The parse test lists each such conformance case.
func Parse(ref string, base *url.URL) (*url.URL, error) {
	return NewResolver(base).Parse(ref)
}

// A Resolver parses links against one base URL, as Parse does, parsing the
// base once for all of them (a page's links share its base). It is safe
// for concurrent use: the parsed base is only read.
type Resolver struct {
	base    *url.URL
	wbase   *whatwg.Url
	baseErr error
	fast    fastBase // the base as the fast path needs it; fast.ok false if it cannot be used
}

// NewResolver returns a Resolver for links against base; nil base takes
// absolute URLs only. A base that does not parse makes every Parse fail
// with an error naming it.
func NewResolver(base *url.URL) *Resolver {
	r := &Resolver{base: base}
	if base != nil {
		r.wbase, r.baseErr = strictParser.Parse(base.String())
		if r.baseErr == nil {
			r.fast = newFastBase(r.wbase)
		}
	}
	return r
}

// Parse parses ref against the Resolver's base: see the package function
// Parse.
func (r *Resolver) Parse(ref string) (*url.URL, error) {
	if u, ok := r.fast.resolve(ref); ok {
		return u, nil
	}
	return r.parseWHATWG(ref)
}

// parseWHATWG is Parse through the WHATWG parser, for every ref.
func (r *Resolver) parseWHATWG(ref string) (*url.URL, error) {
	if r.baseErr != nil {
		return nil, &Error{Op: "parse", URL: ref, Err: fmt.Errorf("base %q: %w", r.base.String(), shortReason(r.baseErr))}
	}
	w, err := strictParser.BasicParser(ref, r.wbase, nil, whatwg.NoState)
	if err != nil && wgerrors.Type(err) == wgerrors.DomainToASCII {
		// The current standard (and its tests) keep an all-ASCII host even
		// when one of its "xn--" labels is not valid Punycode; the library
		// rejects it. Retry leniently and accept only such hosts.
		if lw, ok := parseASCIIHostLeniently(ref, r.wbase); ok {
			w, err = lw, nil
		}
	}
	if err != nil {
		return nil, &Error{Op: "parse", URL: ref, Err: shortReason(err)}
	}
	switch s := w.Scheme(); s {
	case "http", "https":
	default:
		return nil, &Error{Op: "parse", URL: ref, Err: fmt.Errorf("scheme %q is not http or https", s)}
	}
	return fromWHATWG(w), nil
}

// shortReason replaces the library's long message by its error type and
// description, keeping the original as the cause.
func shortReason(err error) error {
	t := wgerrors.Type(err)
	if t == "" {
		return err
	}
	msg, ok := shortMessages[t]
	if !ok {
		msg = string(t)
	}
	if d := wgerrors.Description(err); d != "" {
		msg += ": " + d
	}
	return &reason{msg: msg, cause: err}
}

// parseASCIIHostLeniently parses ref with a parser that keeps a host whose
// IDNA conversion fails, and reports whether the result is one the standard
// accepts: the host as written (percent-decoded) is ASCII and passes
// asciiDomain. It runs only after a strict parse failed, so building a
// parser here costs nothing in the common case.
func parseASCIIHostLeniently(ref string, base *whatwg.Url) (*whatwg.Url, bool) {
	ascii := true
	p := whatwg.NewParser(whatwg.WithLaxHostParsing(), whatwg.WithPreParseHostFunc(func(_ *whatwg.Url, host string) string {
		if d, err := url.PathUnescape(host); err != nil || !isASCII(d) {
			ascii = false
		}
		return host
	}))
	w, err := p.BasicParser(ref, base, nil, whatwg.NoState)
	if err != nil || !ascii || !asciiDomain(w.Hostname()) {
		return nil, false
	}
	return w, true
}

// shortMessages replaces the library's longest error texts.
var shortMessages = map[wgerrors.ErrorType]string{
	wgerrors.MissingSchemeNonRelativeURL:          "missing scheme (a relative reference needs a base URL)",
	wgerrors.IPv4InIPv6InvalidCodePoint:           "invalid IPv4 part in an IPv6 address",
	wgerrors.IPv6InvalidCodePoint:                 "invalid code point in an IPv6 address",
	wgerrors.SpecialSchemeMissingFollowingSolidus: "scheme not followed by \"//\"",
}

// asciiDomain reports whether a host kept by the lax parser is one the
// standard accepts: ASCII, non-empty, free of forbidden domain code points
// (the lax parser would have percent-encoded those), not ending in a number
// (which would have made it an IPv4 address).
func asciiDomain(h string) bool {
	if h == "" {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if c <= 0x20 || c >= 0x7f || strings.IndexByte("#%/:<>?@[\\]^|", c) >= 0 {
			return false
		}
	}
	labels := strings.Split(h, ".")
	if len(labels) > 1 && labels[len(labels)-1] == "" {
		labels = labels[:len(labels)-1]
	}
	last := strings.ToLower(labels[len(labels)-1])
	if last == "" {
		return true
	}
	if strings.HasPrefix(last, "0x") {
		return strings.Trim(last[2:], "0123456789abcdef") != ""
	}
	return strings.Trim(last, "0123456789") != ""
}

// fromWHATWG converts a parsed WHATWG URL to net/url's representation.
func fromWHATWG(w *whatwg.Url) *url.URL {
	u := &url.URL{Scheme: w.Scheme()}
	if name, pass := w.Username(), w.Password(); name != "" || pass != "" {
		if pass != "" {
			u.User = url.UserPassword(unescapeOrKeep(name), unescapeOrKeep(pass))
		} else {
			u.User = url.User(unescapeOrKeep(name))
		}
	}
	// The lax retry may keep upper-case ASCII; every other host is lower
	// case already.
	u.Host = hostPort(w)
	setPath(u, w.Pathname())
	u.RawQuery = w.Query()
	if u.RawQuery == "" && strings.HasSuffix(w.Href(true), "?") {
		u.ForceQuery = true
	}
	setFragment(u, w.Fragment())
	return u
}

// setFragment sets u's fragment from a WHATWG fragment, keeping its
// escapes in RawFragment where net/url would write it otherwise.
func setFragment(u *url.URL, fragment string) {
	if f := escapeStrayPercent(fragment); f != "" {
		u.Fragment = unescapeOrKeep(f)
		if u.EscapedFragment() != f {
			u.RawFragment = f
		}
	}
}

// hostPort is w's host, lower-cased, and its port if it has one (WHATWG
// drops a scheme's default port).
func hostPort(w *whatwg.Url) string {
	h := strings.ToLower(w.Hostname())
	if port := w.Port(); port != "" {
		h += ":" + port
	}
	return h
}

// setPath sets u's path from a WHATWG pathname, keeping its escapes in
// RawPath where net/url would write the path otherwise.
func setPath(u *url.URL, pathname string) {
	p := escapeStrayPercent(pathname)
	u.Path = unescapeOrKeep(p)
	if u.EscapedPath() != p {
		u.RawPath = p
	}
}

// escapeStrayPercent encodes as "%25" each '%' in s that starts no valid
// escape. WHATWG keeps such a '%' verbatim; net/url cannot hold it, so this
// is the nearest URL net/url can represent.
func escapeStrayPercent(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && (i+2 >= len(s) || !ishex(s[i+1]) || !ishex(s[i+2])) {
			b.WriteString("%25")
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unescapeOrKeep percent-decodes s, taking a stray '%' literally.
func unescapeOrKeep(s string) string {
	if d, err := url.PathUnescape(escapeStrayPercent(s)); err == nil {
		return d
	}
	return s
}

// Canonical parses ref against base (see Parse) and returns the string form
// of its canonical URL (see Normalize).
func Canonical(ref string, base *url.URL) (string, error) {
	u, err := Parse(ref, base)
	if err != nil {
		return "", err
	}
	return Normalize(u).String(), nil
}
