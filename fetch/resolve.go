package fetch

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Resolver looks up the addresses of a host name. *net.Resolver satisfies it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// dnsCache holds successful lookups for a TTL. It is bounded: when full, the
// entry inserted (or refreshed) longest ago is evicted. Failures are not
// cached. Safe for concurrent use.
type dnsCache struct {
	ttl  time.Duration
	size int
	now  func() time.Time

	mu    sync.Mutex
	items map[string]*list.Element // host → element of order holding *dnsEntry
	order *list.List               // oldest first
}

type dnsEntry struct {
	host    string
	addrs   []netip.Addr
	expires time.Time
}

func newDNSCache(ttl time.Duration, size int, now func() time.Time) *dnsCache {
	return &dnsCache{ttl: ttl, size: size, now: now, items: make(map[string]*list.Element), order: list.New()}
}

func (c *dnsCache) get(host string) ([]netip.Addr, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[host]
	if !ok {
		return nil, false
	}
	e := el.Value.(*dnsEntry)
	if !c.now().Before(e.expires) {
		c.order.Remove(el)
		delete(c.items, host)
		return nil, false
	}
	return e.addrs, true
}

func (c *dnsCache) put(host string, addrs []netip.Addr) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[host]; ok {
		c.order.Remove(el)
		delete(c.items, host)
	}
	for len(c.items) >= c.size {
		oldest := c.order.Front()
		c.order.Remove(oldest)
		delete(c.items, oldest.Value.(*dnsEntry).host)
	}
	c.items[host] = c.order.PushBack(&dnsEntry{host: host, addrs: addrs, expires: c.now().Add(c.ttl)})
}

func (c *dnsCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.items)
}

// Resolve returns the address Fetch would dial for host: an IP literal as
// is, else the first address from Options.Hosts, the DNS cache or the
// Resolver (in that order) that the IP guard permits. Errors are *Error
// with ClassDNS or ClassBlocked. The lookup is bounded by ConnectTimeout.
func (f *Fetcher) Resolve(ctx context.Context, host string) (netip.Addr, error) {
	addrs, err := f.lookup(ctx, host)
	if err != nil {
		return netip.Addr{}, &Error{Class: ClassDNS, URL: host, Err: err}
	}
	var reasons []string
	for _, a := range addrs {
		r := blockReason(a, f.opts.AllowNets)
		if r == "" {
			return a, nil
		}
		reasons = append(reasons, a.String()+" ("+r+")")
	}
	return netip.Addr{}, &Error{Class: ClassBlocked, URL: host,
		Err: fmt.Errorf("IP guard refused %s", strings.Join(reasons, ", "))}
}

// lookup returns all addresses of host, unmapped, without guard checks.
func (f *Fetcher) lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "" {
		return nil, errors.New("empty host")
	}
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return []netip.Addr{a.Unmap()}, nil
	}
	if endsInNumber(host) {
		// A URL not canonicalised by urlnorm may spell an IPv4 address
		// as a browser reads it ("2130706433", "0x7f.1", "0177.0.0.1");
		// a system resolver (inet_aton) would read it the same way.
		a, ok := parseIPv4Number(host)
		if !ok {
			return nil, fmt.Errorf("host %q ends in a number but is not an IPv4 address", host)
		}
		return []netip.Addr{a}, nil
	}
	if addrs, ok := f.opts.Hosts[host]; ok {
		return addrs, nil
	}
	if addrs, ok := f.dns.get(host); ok {
		return addrs, nil
	}
	ctx, cancel := context.WithTimeout(ctx, f.opts.ConnectTimeout)
	defer cancel()
	found, err := f.resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		var de *net.DNSError
		if errors.As(err, &de) {
			return nil, err // its message names the lookup and the host
		}
		return nil, fmt.Errorf("lookup %s: %w", host, err)
	}
	if len(found) == 0 {
		return nil, fmt.Errorf("lookup %s: no addresses", host)
	}
	addrs := make([]netip.Addr, len(found))
	for i, a := range found {
		addrs[i] = a.Unmap()
	}
	f.dns.put(host, addrs)
	return addrs, nil
}

// control is the dialer's Control hook: it runs on the socket about to
// connect, with the address actually dialled, and refuses it unless the
// IP guard permits it. Resolve has judged the address already; this is the
// last word, for any path that reaches the dialer.
func (f *Fetcher) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &Error{Class: ClassBlocked, URL: address, Err: fmt.Errorf("IP guard: dial %s %q: not an address", network, address)}
	}
	if r := blockReason(ap.Addr(), f.opts.AllowNets); r != "" {
		return &Error{Class: ClassBlocked, URL: address, Err: fmt.Errorf("IP guard refused dialling %s (%s)", ap.Addr(), r)}
	}
	return nil
}

// dial is the Transport's DialContext: resolve (cached, guard-checked), then
// connect to that one address within ConnectTimeout. Its errors are *Error
// so that Fetch can classify them.
func (f *Fetcher) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, &Error{Class: ClassConnect, URL: addr, Err: err}
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return nil, &Error{Class: ClassConnect, URL: addr, Err: fmt.Errorf("bad port %q", portStr)}
	}
	ip, err := f.Resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	conn, err := f.dialer.DialContext(ctx, network, netip.AddrPortFrom(ip, uint16(port)).String())
	if err != nil {
		var fe *Error
		if errors.As(err, &fe) && fe.Class == ClassBlocked {
			return nil, fe // refused by control
		}
		class := ClassConnect
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			class = ClassTimeout
		}
		return nil, &Error{Class: class, URL: addr, Err: err}
	}
	return conn, nil
}

// endsInNumber reports whether host's last label is a number (decimal, or
// hexadecimal after "0x"), which makes the WHATWG URL host parser read the
// whole host as an IPv4 address.
func endsInNumber(host string) bool {
	last := host[strings.LastIndexByte(host, '.')+1:]
	if last == "" {
		return false
	}
	digits := "0123456789"
	if strings.HasPrefix(last, "0x") {
		last, digits = last[2:], "0123456789abcdef"
	}
	for i := 0; i < len(last); i++ {
		if strings.IndexByte(digits, last[i]) < 0 {
			return false
		}
	}
	return true
}

// parseIPv4Number parses host as the WHATWG URL Standard's IPv4 parser
// (and inet_aton) does: one to four dot-separated parts, each decimal,
// octal (leading 0) or hexadecimal (0x), the last filling the remaining
// bytes ("127.1" is 127.0.0.1, "2130706433" too).
func parseIPv4Number(host string) (netip.Addr, bool) {
	parts := strings.Split(host, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var nums []uint64
	for _, p := range parts {
		base := 10
		switch {
		case strings.HasPrefix(p, "0x") || strings.HasPrefix(p, "0X"):
			p, base = p[2:], 16
			if p == "" {
				p = "0"
			}
		case len(p) > 1 && p[0] == '0':
			p, base = p[1:], 8
		}
		n, err := strconv.ParseUint(p, base, 32)
		if err != nil || p == "" {
			return netip.Addr{}, false
		}
		nums = append(nums, n)
	}
	last := nums[len(nums)-1]
	if last >= 1<<(8*(5-len(nums))) {
		return netip.Addr{}, false
	}
	v := uint32(last)
	for i, n := range nums[:len(nums)-1] {
		if n > 255 {
			return netip.Addr{}, false
		}
		v |= uint32(n) << (8 * (3 - i))
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}
