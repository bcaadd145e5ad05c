package urlnorm

import (
	"net/netip"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
)

// idnaProfile converts host names to ASCII as the WHATWG URL Standard does
// (UTS #46, non-transitional, without STD3 rules so '_' is allowed).
var idnaProfile = idna.New(
	idna.MapForLookup(),
	idna.BidiRule(),
	idna.CheckJoiners(true),
	idna.CheckHyphens(false),
	idna.StrictDomainName(false),
	idna.VerifyDNSLength(false),
	idna.Transitional(false),
)

// trackingParams are query keys that only identify a campaign or a click;
// every key starting with "utm_" is stripped too. Keys match case-sensitively.
var trackingParams = map[string]bool{
	"gclid": true, "fbclid": true, "msclkid": true, "dclid": true, "yclid": true,
	"_ga": true, "mc_cid": true, "mc_eid": true,
}

// Normalize returns the canonical form of u, the key for seen-checks; u is
// not modified. The canonical form has:
//   - scheme and host in lower case, the host converted to ASCII (IDNA,
//     Punycode) and an IPv6 address in its RFC 5952 form;
//   - no user info (a crawler never fetches with embedded credentials),
//     no fragment, no default port (80 for http, 443 for https);
//   - a path without dot segments (RFC 3986 5.2.4), "/" if empty;
//   - percent-encoding normalised in path and query: escapes of unreserved
//     characters decoded, other escapes in upper-case hex, characters that
//     must not appear raw encoded, a '%' that starts no valid escape encoded
//     as %25; reserved characters (%2F, %3F, %26, %3D, %23, %25, ...) are
//     never decoded;
//   - no empty query parameters and no tracking parameters (utm_*, gclid,
//     fbclid, msclkid, dclid, yclid, _ga, mc_cid, mc_eid); the remaining
//     ones sorted by key, keeping the order of values of a repeated key; no
//     '?' if nothing remains.
//
// Normalize is idempotent. A URL with an opaque part (such as "mailto:x")
// only has its scheme lowered and fragment dropped. Normalize(nil) is nil.
func Normalize(u *url.URL) *url.URL {
	if u == nil {
		return nil
	}
	scheme := strings.ToLower(u.Scheme)
	if u.Opaque != "" {
		return &url.URL{Scheme: scheme, Opaque: u.Opaque, RawQuery: u.RawQuery, ForceQuery: u.ForceQuery}
	}
	n := &url.URL{Scheme: scheme, Host: normalizeHostPort(scheme, u.Host)}
	p := normalizePath(u.EscapedPath())
	n.Path = unescapeOrKeep(p)
	if n.EscapedPath() != p {
		n.RawPath = p
	}
	n.RawQuery = normalizeQuery(u.RawQuery)
	return n
}

// normalizeHostPort lowers and IDNA-converts the host and drops a default
// or empty port.
func normalizeHostPort(scheme, hostport string) string {
	host, port := splitHostPort(hostport)
	host = canonicalHost(host)
	if port != "" {
		if n, err := strconv.Atoi(port); err == nil && n >= 0 {
			port = strconv.Itoa(n) // drop leading zeros
		}
	}
	if port == "" || (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		return host
	}
	return host + ":" + port
}

// splitHostPort splits "host:port" or "[v6]:port"; the host keeps its
// brackets. An absent port is "".
func splitHostPort(hostport string) (host, port string) {
	host = hostport
	if strings.HasPrefix(hostport, "[") {
		if i := strings.LastIndexByte(hostport, ']'); i >= 0 {
			host = hostport[:i+1]
			if rest := hostport[i+1:]; strings.HasPrefix(rest, ":") {
				port = rest[1:]
			}
		}
		return host, port
	}
	if i := strings.LastIndexByte(hostport, ':'); i >= 0 {
		return hostport[:i], hostport[i+1:]
	}
	return host, ""
}

// canonicalHost lowers a host name and converts it to ASCII. An IPv6
// literal keeps its brackets and is written in RFC 5952 form. A name that
// IDNA rejects is only lowered.
func canonicalHost(host string) string {
	if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		if a, err := netip.ParseAddr(host[1 : len(host)-1]); err == nil && a.Is6() {
			return "[" + a.String() + "]"
		}
		return strings.ToLower(host)
	}
	if isASCII(host) {
		return strings.ToLower(host)
	}
	if a, err := idnaProfile.ToASCII(host); err == nil && a != "" {
		return strings.ToLower(a)
	}
	return strings.ToLower(host)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// normalizePath normalises the escaping of an escaped path, removes its dot
// segments and makes it absolute.
func normalizePath(p string) string {
	p = normalizeEscapes(p, pathRaw)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return removeDotSegments(p)
}

// normalizeQuery normalises the escaping of each parameter, drops empty and
// tracking parameters, and sorts the rest by key (stable).
func normalizeQuery(q string) string {
	if q == "" {
		return ""
	}
	type param struct{ key, kv string }
	var params []param
	for kv := range strings.SplitSeq(q, "&") {
		if kv == "" {
			continue
		}
		kv = normalizeEscapes(kv, queryRaw)
		key, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(key, "utm_") || trackingParams[key] {
			continue
		}
		params = append(params, param{key, kv})
	}
	sort.SliceStable(params, func(i, j int) bool { return params[i].key < params[j].key })
	var b strings.Builder
	for i, p := range params {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(p.kv)
	}
	return b.String()
}

// Byte classes for normalizeEscapes.
const (
	unreserved = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
	// pathRaw: pchar (RFC 3986 3.3) and '/'.
	pathRaw = unreserved + "!$&'()*+,;=:@/"
	// queryRaw: query characters (RFC 3986 3.4) except '\'', which the
	// WHATWG parser encodes in http(s) queries; encoding it here keeps the
	// canonical form a fixed point of Parse.
	queryRaw = unreserved + "!$&()*+,;=:@/?"
)

const upperhex = "0123456789ABCDEF"

// normalizeEscapes rewrites s so that escapes of unreserved characters are
// decoded, other escapes use upper-case hex, a '%' that starts no valid
// escape becomes "%25", and every byte outside raw is encoded.
func normalizeEscapes(s, raw string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%' && i+2 < len(s) && ishex(s[i+1]) && ishex(s[i+2]):
			d := unhex(s[i+1])<<4 | unhex(s[i+2])
			if strings.IndexByte(unreserved, d) >= 0 {
				b.WriteByte(d)
			} else {
				b.WriteByte('%')
				b.WriteByte(upperhex[d>>4])
				b.WriteByte(upperhex[d&15])
			}
			i += 2
		case c != '%' && strings.IndexByte(raw, c) >= 0:
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(upperhex[c>>4])
			b.WriteByte(upperhex[c&15])
		}
	}
	return b.String()
}

func ishex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// removeDotSegments implements RFC 3986 section 5.2.4 on an absolute path.
func removeDotSegments(p string) string {
	if !strings.Contains(p, ".") {
		return p
	}
	segs := strings.Split(p[1:], "/")
	out := make([]string, 0, len(segs))
	for i, s := range segs {
		last := i == len(segs)-1
		switch s {
		case ".":
			if last {
				out = append(out, "")
			}
		case "..":
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
