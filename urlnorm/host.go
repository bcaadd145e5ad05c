package urlnorm

import (
	"net/netip"
	"net/url"
	"strings"

	"golang.org/x/net/publicsuffix"
)

// HostKey returns the politeness key of u: its host name in canonical form
// (lower case, ASCII), without scheme or port. An IPv6 address keeps its
// brackets ("[::1]"). http://a.test and https://a.test:8443 share a key.
func HostKey(u *url.URL) string {
	host, _ := splitHostPort(u.Host)
	return canonicalHost(host)
}

// RegisteredDomain returns the registered domain (eTLD+1, from the public
// suffix list, private suffixes included) of host, for per-domain budgets:
// "www.a.example.co.uk" gives "example.co.uk". host may carry a port, which
// is ignored. When there is no registrable domain the canonical host itself
// is returned: for an IP address ("10.0.0.1", "[::1]"), a single label
// ("localhost") or a public suffix ("co.uk"). Names under a TLD missing from
// the list follow the list's default rule: "www.a.test" gives "a.test". A
// trailing dot is ignored. An empty host gives "".
func RegisteredDomain(host string) string {
	if a, err := netip.ParseAddr(host); err == nil && a.Is6() {
		return "[" + a.String() + "]" // a bare IPv6 address
	}
	h, _ := splitHostPort(host)
	h = strings.TrimSuffix(canonicalHost(h), ".")
	if h == "" || strings.HasPrefix(h, "[") {
		return h
	}
	if _, err := netip.ParseAddr(h); err == nil {
		return h
	}
	d, err := publicsuffix.EffectiveTLDPlusOne(h)
	if err != nil {
		return h
	}
	return d
}
