package fetch

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestBlockReason(t *testing.T) {
	cases := []struct {
		addr  string
		allow string // optional prefix
		want  string
	}{
		{"93.184.215.14", "", ""},
		{"2606:2800:21f:cb07:6820:80da:af6b:8b2c", "", ""},
		{"127.0.0.1", "", "loopback"},
		{"127.255.0.9", "", "loopback"},
		{"::1", "", "loopback"},
		{"::ffff:127.0.0.1", "", "loopback"}, // IPv4-mapped
		{"10.1.2.3", "", "private"},
		{"172.16.0.1", "", "private"},
		{"172.31.255.255", "", "private"},
		{"172.32.0.1", "", ""},
		{"192.168.1.1", "", "private"},
		{"fd12::1", "", "private"},
		{"100.64.0.1", "", "carrier-grade NAT"},
		{"100.128.0.1", "", ""},
		{"169.254.1.1", "", "link-local"},
		{"fe80::1%eth0", "", "link-local"},
		{"169.254.169.254", "", "cloud metadata"},
		{"fd00:ec2::254", "", "cloud metadata"},
		{"0.0.0.0", "", "unspecified"},
		{"0.1.2.3", "", "this network"},
		{"::", "", "unspecified"},
		{"224.0.0.1", "", "multicast"},
		{"239.255.255.250", "", "multicast"},
		{"ff02::1", "", "multicast"},
		{"ff0e::1", "", "multicast"},
		{"255.255.255.255", "", "broadcast"},
		{"255.255.255.254", "", "reserved"},
		{"240.0.0.1", "", "reserved"},
		// Benchmarking, documentation, protocol assignments.
		{"198.18.0.1", "", "benchmarking"},
		{"198.19.255.255", "", "benchmarking"},
		{"198.20.0.1", "", ""},
		{"198.17.255.255", "", ""},
		{"192.0.2.7", "", "documentation"},
		{"198.51.100.7", "", "documentation"},
		{"203.0.113.7", "", "documentation"},
		{"203.0.114.7", "", ""},
		{"2001:db8::1", "", "documentation"},
		{"3fff::1", "", "documentation"},
		{"192.0.0.1", "", "IETF protocol assignments"},
		{"192.0.0.170", "", "IETF protocol assignments"},
		{"192.0.1.1", "", ""},
		{"192.88.99.1", "", "deprecated 6to4 relay"},
		{"100::1", "", "discard-only"},
		{"100::ffff:ffff:ffff:ffff", "", "discard-only"},
		{"100:0:0:1::1", "", "dummy prefix"},
		{"2001:2::1", "", "benchmarking"},
		{"2001:10::1", "", "deprecated ORCHID"},
		{"2001:1::1", "", "IETF protocol assignments"},
		{"2001:1ff::1", "", "IETF protocol assignments"},
		{"2001:200::1", "", ""}, // just past 2001::/23
		{"5f00::1", "", "segment routing SID"},
		{"fec0::1", "", "deprecated site-local"},
		{"64:ff9b:1::a00:1", "", "local-use NAT64"},
		{"64:ff9b:1::5db8:d70e", "", "local-use NAT64"},
		// IPv4 carried in IPv6: NAT64, IPv4-compatible, 6to4, Teredo.
		{"64:ff9b::a00:1", "", "private via NAT64 10.0.0.1"},
		{"64:ff9b::7f00:1", "", "loopback via NAT64 127.0.0.1"},
		{"64:ff9b::5db8:d70e", "", ""}, // NAT64 of a public address
		{"::7f00:1", "", "loopback via IPv4-compatible 127.0.0.1"},
		{"::a9fe:a9fe", "", "cloud metadata via IPv4-compatible 169.254.169.254"},
		{"::0.0.0.2", "", "this network via IPv4-compatible 0.0.0.2"},
		{"::5db8:d70e", "", ""},
		{"2002:7f00:1::", "", "loopback via 6to4 127.0.0.1"},
		{"2002:a9fe:a9fe:1::1", "", "cloud metadata via 6to4 169.254.169.254"},
		{"2002:c0a8:101::5", "", "private via 6to4 192.168.1.1"},
		{"2002:5db8:d70e::1", "", ""},
		// Teredo 2001:0:SERVER:flags:port:~CLIENT.
		{"2001:0:5db8:d70e:0:0:80ff:fffe", "", "loopback via Teredo 127.0.0.1"}, // client 127.0.0.1
		{"2001:0:7f00:1:0:0:a247:28f1", "", "loopback via Teredo 127.0.0.1"},    // server 127.0.0.1
		{"2001:0:5db8:d70e:0:0:f5ff:fffe", "", "private via Teredo 10.0.0.1"},   // client 10.0.0.1
		{"2001:0:5db8:d70e:8000:f227:a247:28f1", "", ""},                        // both public
		{"2001:0:5db8:d70e:0:0:5601:5601", "", "cloud metadata via Teredo 169.254.169.254"},
		// AllowNets.
		{"127.0.0.1", "127.0.0.0/8", ""},
		{"127.77.0.1", "127.77.0.0/16", ""},
		{"127.0.0.1", "127.77.0.0/16", "loopback"},
		{"::ffff:127.0.0.1", "127.0.0.0/8", ""},
		{"10.0.0.1", "127.0.0.0/8", "private"},
		{"169.254.169.254", "169.254.169.254/32", ""},
		{"198.18.3.4", "198.18.0.0/15", ""},
		{"2001:db8::1", "2001:db8::/48", ""},
		{"64:ff9b::7f00:1", "127.0.0.0/8", ""},  // the carried address is allowed
		{"64:ff9b::7f00:1", "64:ff9b::/96", ""}, // the address itself is allowed
		{"2002:7f00:1::", "127.0.0.0/8", ""},    // 6to4 of an allowed address
		{"2002:7f00:1::", "10.0.0.0/8", "loopback via 6to4 127.0.0.1"},
		{"::1", "127.0.0.0/8", "loopback"}, // IPv6 loopback is not 127/8
		{"fd00::1", "fd00::/8", ""},
	}
	for _, c := range cases {
		var allow []netip.Prefix
		if c.allow != "" {
			allow = []netip.Prefix{netip.MustParsePrefix(c.allow)}
		}
		if got := blockReason(netip.MustParseAddr(c.addr), allow); got != c.want {
			t.Errorf("blockReason(%q, %q) = %q, want %q", c.addr, c.allow, got, c.want)
		}
	}
}

// TestGuardRefusesBeforeDial maps names to forbidden addresses and checks
// that Fetch fails with ClassBlocked and that the loopback server, where a
// dial would have landed for 127.0.0.1, saw no connection.
func TestGuardRefusesBeforeDial(t *testing.T) {
	srv := newServer(t, okHandler("<html></html>"))
	port := strconv.Itoa(srv.Listener.Addr().(*net.TCPAddr).Port)
	cases := []string{"127.0.0.1", "::1", "10.0.0.1", "192.168.0.10", "169.254.169.254",
		"fd00:ec2::254", "100.64.1.1", "0.0.0.0", "::ffff:127.0.0.1", "224.0.0.251"}
	hosts := map[string][]netip.Addr{}
	for i, a := range cases {
		hosts[fmt.Sprintf("evil%d.test", i)] = []netip.Addr{netip.MustParseAddr(a)}
	}
	f := newFetcher(t, Options{UserAgent: testUA, Hosts: hosts}) // no AllowNets
	for i, a := range cases {
		raw := fmt.Sprintf("http://evil%d.test:%s/", i, port)
		resp, err := get(t, f, raw)
		if got := ClassOf(err); got != ClassBlocked || resp != nil {
			t.Errorf("Fetch(%q) [%s] = %v, %v; want class %q", raw, a, resp, err, ClassBlocked)
		}
	}
	// Literal addresses are guarded too.
	for _, raw := range []string{srv.URL + "/", "http://[::1]:" + port + "/", "http://169.254.169.254/latest/meta-data/"} {
		if _, err := get(t, f, raw); ClassOf(err) != ClassBlocked {
			t.Errorf("Fetch(%q) error = %v, want class %q", raw, err, ClassBlocked)
		}
	}
	// DNS rebinding: the resolver's answer is checked, not the name.
	res := &fakeResolver{addrs: map[string][]netip.Addr{"rebind.test": {netip.MustParseAddr("127.0.0.1")}}}
	f2 := newFetcher(t, Options{UserAgent: testUA, Resolver: res})
	if _, err := get(t, f2, "http://rebind.test:"+port+"/"); ClassOf(err) != ClassBlocked {
		t.Errorf("Fetch(rebind.test) error = %v, want class %q", err, ClassBlocked)
	}
	if n := srv.conns.Load(); n != 0 {
		t.Errorf("server accepted %d connections, want 0", n)
	}
}

func TestResolvePicksFirstAllowed(t *testing.T) {
	public := netip.MustParseAddr("93.184.215.14")
	f := newFetcher(t, Options{UserAgent: testUA, Hosts: map[string][]netip.Addr{
		"mixed.test": {netip.MustParseAddr("10.0.0.1"), public},
	}})
	got, err := f.Resolve(context.Background(), "MIXED.test")
	if err != nil || got != public {
		t.Errorf("Resolve(%q) = %v, %v, want %v", "MIXED.test", got, err, public)
	}
}

func TestResolveCache(t *testing.T) {
	clock := newFakeClock()
	res := &fakeResolver{addrs: map[string][]netip.Addr{}}
	for i := range 5 {
		res.addrs[fmt.Sprintf("h%d.test", i)] = []netip.Addr{netip.AddrFrom4([4]byte{93, 184, 0, byte(i)})}
	}
	f := newFetcher(t, Options{UserAgent: testUA, Resolver: res, DNSCacheTTL: time.Minute, DNSCacheSize: 3, Now: clock.Now})
	ctx := context.Background()
	resolve := func(host string) {
		t.Helper()
		want := res.addrs[host][0]
		if got, err := f.Resolve(ctx, host); err != nil || got != want {
			t.Fatalf("Resolve(%q) = %v, %v, want %v", host, got, err, want)
		}
	}
	steps := []struct {
		host  string
		calls int64 // lookups so far, after this step
	}{
		{"h0.test", 1},
		{"h0.test", 1}, // cached
		{"h1.test", 2},
		{"h2.test", 3},
		{"h3.test", 4}, // evicts h0, the oldest
		{"h1.test", 4},
		{"h0.test", 5}, // looked up again; evicts h1
		{"h1.test", 6},
	}
	for i, s := range steps {
		resolve(s.host)
		if got := res.calls.Load(); got != s.calls {
			t.Fatalf("step %d Resolve(%q): %d lookups, want %d", i, s.host, got, s.calls)
		}
	}
	if n := f.dns.len(); n != 3 {
		t.Errorf("cache holds %d entries, want 3", n)
	}
	clock.Advance(time.Minute)
	resolve("h1.test")
	if got := res.calls.Load(); got != 7 {
		t.Errorf("after TTL: %d lookups, want 7", got)
	}
	if _, err := f.Resolve(ctx, "missing.test"); ClassOf(err) != ClassDNS {
		t.Errorf("Resolve(%q) error = %v, want class %q", "missing.test", err, ClassDNS)
	}
}

func TestValidate(t *testing.T) {
	cases := []struct {
		name  string
		opts  Options
		wants []string // substrings of the error; none means valid
	}{
		{"minimal", Options{UserAgent: testUA}, nil},
		{"missing agent", Options{}, []string{"Options.UserAgent: required"}},
		{"agent newline", Options{UserAgent: "a\r\nX: y"}, []string{"Options.UserAgent"}},
		{"everything bad", Options{
			UserAgent:           testUA,
			Hosts:               map[string][]netip.Addr{"Upper.test": {netip.MustParseAddr("1.2.3.4")}, "empty.test": nil},
			AllowNets:           []netip.Prefix{{}},
			DNSCacheTTL:         -1,
			DNSCacheSize:        -1,
			ConnectTimeout:      -1,
			FirstByteTimeout:    -1,
			TotalTimeout:        -1,
			MaxBodyBytes:        -1,
			MaxDecodedBytes:     -1,
			MaxHeaderBytes:      -1,
			MaxIdleConnsPerHost: -1,
		}, []string{
			`Options.Hosts: key "Upper.test"`, `Options.Hosts: "empty.test" has no addresses`,
			"Options.AllowNets", "Options.DNSCacheTTL", "Options.DNSCacheSize", "Options.ConnectTimeout",
			"Options.FirstByteTimeout", "Options.TotalTimeout", "Options.MaxBodyBytes",
			"Options.MaxDecodedBytes", "Options.MaxHeaderBytes", "Options.MaxIdleConnsPerHost",
		}},
	}
	for _, c := range cases {
		err := c.opts.Validate()
		if len(c.wants) == 0 {
			if err != nil {
				t.Errorf("%s: Validate() = %v, want nil", c.name, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: Validate() = nil, want errors %q", c.name, c.wants)
			continue
		}
		for _, w := range c.wants {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: Validate() = %q, want it to contain %q", c.name, err, w)
			}
		}
		if _, nerr := New(c.opts); nerr == nil {
			t.Errorf("%s: New accepted invalid options", c.name)
		}
	}
}
