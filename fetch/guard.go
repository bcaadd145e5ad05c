package fetch

import (
	"net/netip"
)

// The IP guard. blockReason judges one address against guardNets: the
// first entry containing it either refuses it (with a reason) or, for the
// IPv6 ranges that carry IPv4 addresses, defers to the IPv4 addresses it
// carries. An Options.AllowNets prefix containing the address, or an IPv4
// address it carries, lets it through. The guard runs on every address a
// name resolves to (Resolve) and again on the address the socket is about
// to connect to (the dialer's Control hook), so neither DNS rebinding nor
// a path around Resolve reaches a refused address.

// guardNet is one range of guardNets: refused with reason, or, if carried
// is set, judged by the IPv4 addresses carried returns.
type guardNet struct {
	prefix  netip.Prefix
	reason  string
	via     string                        // how carried addresses are named in reasons
	carried func(a [16]byte) []netip.Addr // nil: refuse with reason
}

// guardNets are the ranges the guard refuses unless allowed, from the IANA
// IPv4 and IPv6 Special-Purpose Address Registries (RFC 6890, updated by
// RFC 8190), every entry whose "Globally Reachable" is false or that is
// deprecated, plus cloud metadata and multicast. More specific entries
// come first: the first match decides. Globally reachable anycast
// services inside a refused block (192.0.0.9 and 192.0.0.10 in
// 192.0.0.0/24; AMT, AS112, ORCHIDv2 and drone DETs in 2001::/23) are
// refused with the block: they serve no web pages.
var guardNets = []guardNet{
	// Cloud metadata (AWS, GCP, Azure instance metadata; AWS's IPv6
	// endpoint), ahead of link-local and unique local.
	{prefix: pfx("169.254.169.254/32"), reason: "cloud metadata"},
	{prefix: pfx("fd00:ec2::254/128"), reason: "cloud metadata"},

	// IPv4.
	{prefix: pfx("0.0.0.0/32"), reason: "unspecified"},                 // RFC 1122 §3.2.1.3: this host
	{prefix: pfx("0.0.0.0/8"), reason: "this network"},                 // RFC 791, RFC 1122
	{prefix: pfx("10.0.0.0/8"), reason: "private"},                     // RFC 1918
	{prefix: pfx("100.64.0.0/10"), reason: "carrier-grade NAT"},        // RFC 6598
	{prefix: pfx("127.0.0.0/8"), reason: "loopback"},                   // RFC 1122
	{prefix: pfx("169.254.0.0/16"), reason: "link-local"},              // RFC 3927
	{prefix: pfx("172.16.0.0/12"), reason: "private"},                  // RFC 1918
	{prefix: pfx("192.0.0.0/24"), reason: "IETF protocol assignments"}, // RFC 6890 (DS-Lite RFC 7335, NAT64 discovery RFC 8880 inside)
	{prefix: pfx("192.0.2.0/24"), reason: "documentation"},             // RFC 5737 TEST-NET-1
	{prefix: pfx("192.88.99.0/24"), reason: "deprecated 6to4 relay"},   // RFC 7526
	{prefix: pfx("192.168.0.0/16"), reason: "private"},                 // RFC 1918
	{prefix: pfx("198.18.0.0/15"), reason: "benchmarking"},             // RFC 2544
	{prefix: pfx("198.51.100.0/24"), reason: "documentation"},          // RFC 5737 TEST-NET-2
	{prefix: pfx("203.0.113.0/24"), reason: "documentation"},           // RFC 5737 TEST-NET-3
	{prefix: pfx("224.0.0.0/4"), reason: "multicast"},                  // RFC 5771
	{prefix: pfx("255.255.255.255/32"), reason: "broadcast"},           // RFC 8190, RFC 919
	{prefix: pfx("240.0.0.0/4"), reason: "reserved"},                   // RFC 1112 §4

	// IPv6.
	{prefix: pfx("::/128"), reason: "unspecified"}, // RFC 4291
	{prefix: pfx("::1/128"), reason: "loopback"},   // RFC 4291
	// IPv4-mapped (RFC 4291) addresses are unmapped before the guard
	// looks; IPv4-compatible ones (deprecated, RFC 4291 §2.5.5.1)
	// carry an IPv4 address in their low 32 bits.
	{prefix: pfx("::/96"), via: "IPv4-compatible", carried: low32},
	{prefix: pfx("64:ff9b::/96"), via: "NAT64", carried: low32},     // RFC 6052
	{prefix: pfx("64:ff9b:1::/48"), reason: "local-use NAT64"},      // RFC 8215
	{prefix: pfx("100::/64"), reason: "discard-only"},               // RFC 6666
	{prefix: pfx("100:0:0:1::/64"), reason: "dummy prefix"},         // RFC 9780
	{prefix: pfx("2001::/32"), via: "Teredo", carried: teredo},      // RFC 4380
	{prefix: pfx("2001:2::/48"), reason: "benchmarking"},            // RFC 5180
	{prefix: pfx("2001:10::/28"), reason: "deprecated ORCHID"},      // RFC 4843
	{prefix: pfx("2001::/23"), reason: "IETF protocol assignments"}, // RFC 2928
	{prefix: pfx("2001:db8::/32"), reason: "documentation"},         // RFC 3849
	{prefix: pfx("2002::/16"), via: "6to4", carried: sixToFour},     // RFC 3056
	{prefix: pfx("3fff::/20"), reason: "documentation"},             // RFC 9637
	{prefix: pfx("5f00::/16"), reason: "segment routing SID"},       // RFC 9602
	{prefix: pfx("fc00::/7"), reason: "private"},                    // RFC 4193 unique local
	{prefix: pfx("fe80::/10"), reason: "link-local"},                // RFC 4291
	{prefix: pfx("fec0::/10"), reason: "deprecated site-local"},     // RFC 3879
	{prefix: pfx("ff00::/8"), reason: "multicast"},                  // RFC 4291
}

func pfx(s string) netip.Prefix { return netip.MustParsePrefix(s) }

// low32 returns the IPv4 address in the low 32 bits (IPv4-compatible,
// NAT64 with a /96 prefix).
func low32(b [16]byte) []netip.Addr {
	return []netip.Addr{netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})}
}

// sixToFour returns the IPv4 address in bits 16 to 48 of a 6to4 address
// (RFC 3056 §2): 2002:V4ADDR::/48.
func sixToFour(b [16]byte) []netip.Addr {
	return []netip.Addr{netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})}
}

// teredo returns the two IPv4 addresses of a Teredo address (RFC 4380
// §4): the server's in bits 32 to 64 and the client's (its NAT's public
// address) in the low 32 bits, stored inverted.
func teredo(b [16]byte) []netip.Addr {
	return []netip.Addr{
		netip.AddrFrom4([4]byte{b[4], b[5], b[6], b[7]}),
		netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]}),
	}
}

// blockReason returns why the guard refuses a, or "" if a may be dialled.
// An IPv4-mapped address is judged as the IPv4 address it maps and a zone
// is ignored. a is permitted if an allow prefix contains it (or, for a
// range that carries IPv4 addresses, every carried address is permitted).
func blockReason(a netip.Addr, allow []netip.Prefix) string {
	if !a.IsValid() {
		return "invalid"
	}
	a = a.Unmap().WithZone("")
	for _, p := range allow {
		if p.Contains(a) {
			return ""
		}
	}
	for _, g := range guardNets {
		if !g.prefix.Contains(a) {
			continue
		}
		if g.carried == nil {
			return g.reason
		}
		for _, v4 := range g.carried(a.As16()) {
			if r := blockReason(v4, allow); r != "" {
				return r + " via " + g.via + " " + v4.String()
			}
		}
		return ""
	}
	return ""
}
