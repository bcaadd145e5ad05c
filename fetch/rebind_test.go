package fetch

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// rebinder is a DNS server that changes its answer: first answers
// addresses (one lookup each), then the last one for ever. It counts
// lookups.
type rebinder struct {
	answers [][]netip.Addr
	calls   atomic.Int64
}

func (r *rebinder) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	n := int(r.calls.Add(1)) - 1
	return r.answers[min(n, len(r.answers)-1)], nil
}

// TestDNSRebinding: a name answers an allowed address (standing for a
// public one: AllowNets admits it), then 127.0.0.1, outside AllowNets,
// where a canary listens on the same port. Trawl fetches the first, is
// refused the second (ClassBlocked) and never connects to the canary;
// every fetch dials the one address the guard judged.
func TestDNSRebinding(t *testing.T) {
	public := netip.MustParseAddr("127.0.0.2")
	// The allowed server on 127.0.0.2, a canary on 127.0.0.1 at its port.
	var canary net.Listener
	var pub *server
	for i := 0; i < 20 && canary == nil; i++ {
		ln, err := net.Listen("tcp", netip.AddrPortFrom(public, 0).String())
		if err != nil {
			t.Skipf("no 127.0.0.2 on this machine: %v", err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		c, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			ln.Close()
			continue
		}
		canary = c
		pub = startOn(t, ln, okHandler("<html>public</html>"))
	}
	if canary == nil {
		t.Fatal("no port free on both 127.0.0.1 and 127.0.0.2")
	}
	var canaryConns atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := canary.Accept()
			if err != nil {
				return
			}
			canaryConns.Add(1)
			c.Close()
		}
	}()
	defer func() { canary.Close(); <-done }()
	port := strconv.Itoa(canary.Addr().(*net.TCPAddr).Port)
	raw := "http://rebind.example:" + port + "/"
	loopback1 := netip.MustParseAddr("127.0.0.1")

	for _, tc := range []struct {
		name    string
		answers [][]netip.Addr
		want    []Class // per fetch, the DNS cache expiring between fetches
	}{
		{"public, then loopback", [][]netip.Addr{{public}, {loopback1}}, []Class{"", ClassBlocked, ClassBlocked}},
		{"loopback first in one answer", [][]netip.Addr{{loopback1, public}}, []Class{"", ""}},
		{"loopback, then public", [][]netip.Addr{{loopback1}, {public}}, []Class{ClassBlocked, ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newFakeClock()
			r := &rebinder{answers: tc.answers}
			o := testOptions()
			o.AllowNets = []netip.Prefix{netip.PrefixFrom(public, 32)}
			o.Resolver, o.Now, o.DNSCacheTTL = r, clock.Now, time.Second
			f := newFetcher(t, o)
			for i, want := range tc.want {
				resp, err := get(t, f, raw)
				if got := ClassOf(err); got != want {
					t.Errorf("fetch %d = %v, %v; want class %q", i, resp, err, want)
				}
				if err == nil && resp.IP != public {
					t.Errorf("fetch %d connected to %v, want %v", i, resp.IP, public)
				}
				clock.Advance(2 * time.Second) // the cached answer expires
				f.Close()                      // and no kept-alive connection is reused: the next fetch dials
			}
			if n := r.calls.Load(); n != int64(len(tc.want)) {
				t.Errorf("%d lookups for %d fetches, want one each", n, len(tc.want))
			}
		})
	}
	if n := canaryConns.Load(); n != 0 {
		t.Errorf("the canary on 127.0.0.1:%s got %d connections, want 0", port, n)
	}
	if pub.conns.Load() == 0 {
		t.Errorf("the allowed server got no connection: the test proves nothing")
	}
	// The dial hook judges the address actually dialled, whatever resolved.
	f := newFetcher(t, o2(public))
	if err := f.control("tcp4", "127.0.0.1:"+port, nil); ClassOf(err) != ClassBlocked {
		t.Errorf("control(127.0.0.1) = %v, want class blocked", err)
	}
}

func o2(allow netip.Addr) Options {
	o := testOptions()
	o.AllowNets = []netip.Prefix{netip.PrefixFrom(allow, 32)}
	return o
}

// startOn serves h on ln, counting connections.
func startOn(t *testing.T, ln net.Listener, h http.Handler) *server {
	t.Helper()
	s := &server{Server: &httptest.Server{Listener: ln, Config: &http.Server{Handler: h}}}
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}
