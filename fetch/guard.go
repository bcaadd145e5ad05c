package fetch

import (
	"net/netip"
)

// blockedNet is one range the IP guard refuses by default, with the reason
// given in errors.
type blockedNet struct {
	prefix netip.Prefix
	reason string
}

// blockedNets are refused unless an Options.AllowNets prefix contains the
// address. More specific entries come first so errors name the best reason.
// Sources: RFC 1122 (this network, loopback), RFC 1918 (private), RFC 6598
// (CGNAT), RFC 3927 / RFC 4291 (link-local), RFC 4193 (unique local),
// RFC 5771 / RFC 4291 (multicast), RFC 1112 (reserved 240/4, broadcast), AWS
// documentation for the instance metadata addresses.
var blockedNets = func() []blockedNet {
	list := []struct{ p, reason string }{
		{"169.254.169.254/32", "cloud metadata"},
		{"fd00:ec2::254/128", "cloud metadata"},
		{"0.0.0.0/8", "unspecified"},
		{"::/128", "unspecified"},
		{"127.0.0.0/8", "loopback"},
		{"::1/128", "loopback"},
		{"10.0.0.0/8", "private"},
		{"172.16.0.0/12", "private"},
		{"192.168.0.0/16", "private"},
		{"fc00::/7", "private"},
		{"100.64.0.0/10", "carrier-grade NAT"},
		{"169.254.0.0/16", "link-local"},
		{"fe80::/10", "link-local"},
		{"224.0.0.0/4", "multicast"},
		{"ff00::/8", "multicast"},
		{"240.0.0.0/4", "reserved"},
	}
	out := make([]blockedNet, len(list))
	for i, b := range list {
		out[i] = blockedNet{netip.MustParsePrefix(b.p), b.reason}
	}
	return out
}()

// nat64 is the well-known NAT64 prefix (RFC 6052); its addresses embed an
// IPv4 address in the low 32 bits, which is what the guard checks.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// guardAddr returns the address the guard judges: IPv4-mapped and NAT64
// addresses are reduced to the IPv4 address they carry, and zones dropped.
func guardAddr(a netip.Addr) netip.Addr {
	a = a.Unmap().WithZone("")
	if a.Is6() && nat64.Contains(a) {
		b := a.As16()
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	}
	return a
}

// blockReason returns why the guard refuses a, or "" if a may be dialled.
// An address inside an allow prefix is always permitted.
func blockReason(a netip.Addr, allow []netip.Prefix) string {
	if !a.IsValid() {
		return "invalid"
	}
	g := guardAddr(a)
	for _, p := range allow {
		if p.Contains(g) || p.Contains(a.WithZone("")) {
			return ""
		}
	}
	for _, b := range blockedNets {
		if b.prefix.Contains(g) {
			return b.reason
		}
	}
	return ""
}
