package fetch

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/trawl-crawler/trawl/urlnorm"
)

// ssrfSpellings are ways a URL can spell a loopback address. {4} is the
// port of a service on 127.0.0.1, {6} that of one on [::1].
var ssrfSpellings = []struct {
	name, url string
}{
	{"dotted", "http://127.0.0.1:{4}/"},
	{"decimal", "http://2130706433:{4}/"},
	{"octal", "http://0177.0.0.1:{4}/"},
	{"octal whole", "http://017700000001:{4}/"},
	{"hex short", "http://0x7f.1:{4}/"},
	{"hex whole", "http://0x7f000001:{4}/"},
	{"hex parts", "http://0x7F.0.0.0x1:{4}/"},
	{"short", "http://127.1:{4}/"},
	{"three parts", "http://127.0.1:{4}/"},
	{"octal short trailing dot", "http://0177.1.:{4}/"},
	{"trailing dot", "http://127.0.0.1.:{4}/"},
	{"percent-encoded", "http://%31%32%37.0.0.1:{4}/"},
	{"fullwidth", "http://１２７．０．０．１:{4}/"},
	{"ideographic full stop", "http://127。0。0。1:{4}/"},
	{"circled digits", "http://①②⑦.0.0.1:{4}/"},
	{"zero", "http://0:{4}/"}, // 0.0.0.0: Linux connects it to the local host
	{"unspecified", "http://0.0.0.0:{4}/"},
	{"IPv6 unspecified", "http://[::]:{6}/"},
	{"backslash", "http://127.0.0.1\\@evil.example:{4}/"},
	{"localhost", "http://localhost:{4}/"},
	{"localhost upper", "http://LOCALHOST:{4}/"},
	{"localhost trailing dot", "http://localhost.:{4}/"},
	{"name in Hosts", "http://evil.test:{4}/"},
	{"name via resolver", "http://rebind.test:{4}/"},
	{"IPv6 loopback", "http://[::1]:{6}/"},
	{"IPv6 loopback long", "http://[0:0:0:0:0:0:0:1]:{6}/"},
	{"IPv6 loopback zone", "http://[::1%25lo]:{6}/"},
	{"IPv4-mapped dotted", "http://[::ffff:127.0.0.1]:{4}/"},
	{"IPv4-mapped hex", "http://[::ffff:7f00:1]:{4}/"},
	{"IPv4-compatible", "http://[::127.0.0.1]:{4}/"},
	{"NAT64", "http://[64:ff9b::127.0.0.1]:{4}/"},
	{"6to4", "http://[2002:7f00:1::]:{4}/"},
	{"Teredo", "http://[2001:0:5db8:d70e:0:0:80ff:fffe]:{4}/"},
}

// loopbackServers starts a counting server on 127.0.0.1 and, if the
// machine has IPv6 loopback, one on [::1]. The second is nil otherwise.
func loopbackServers(t *testing.T) (v4, v6 *server) {
	t.Helper()
	v4 = newServer(t, okHandler("<html>secret</html>"))
	ln, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Logf("no IPv6 loopback: %v", err)
		return v4, nil
	}
	v6 = &server{Server: httptest.NewUnstartedServer(okHandler("<html>secret</html>"))}
	v6.Listener.Close()
	v6.Listener = ln
	v6.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			v6.conns.Add(1)
		}
	}
	v6.Start()
	t.Cleanup(v6.Close)
	return v4, v6
}

func port(s *server) string {
	if s == nil {
		return "1"
	}
	return strconv.Itoa(s.Listener.Addr().(*net.TCPAddr).Port)
}

// TestSSRFSpellings fetches every spelling of a loopback address with a
// Fetcher that allows none of loopback: canonicalised by urlnorm (as the
// node does) each is refused with ClassBlocked; parsed by net/url alone
// (no canonical form) each still fails before any connection. Neither
// service sees a connection.
func TestSSRFSpellings(t *testing.T) {
	v4, v6 := loopbackServers(t)
	res := &fakeResolver{addrs: map[string][]netip.Addr{
		"rebind.test": {netip.MustParseAddr("127.0.0.1")},
		"localhost":   {netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1")},
	}}
	f := newFetcher(t, Options{UserAgent: testUA, Resolver: res,
		Hosts:     map[string][]netip.Addr{"evil.test": {netip.MustParseAddr("127.0.0.1")}},
		AllowNets: []netip.Prefix{netip.MustParsePrefix("127.77.0.0/16")}}) // not the services'
	for _, c := range ssrfSpellings {
		raw := strings.NewReplacer("{4}", port(v4), "{6}", port(v6)).Replace(c.url)
		t.Run(c.name, func(t *testing.T) {
			u, err := urlnorm.Parse(raw, nil)
			switch {
			case err != nil && strings.Contains(raw, "%25"):
				// WHATWG URLs have no zone IDs: the link is dropped.
				t.Logf("urlnorm refuses %q: %v", raw, err)
			case err != nil:
				t.Fatalf("urlnorm.Parse(%q): %v", raw, err)
			default:
				u = urlnorm.Normalize(u)
				resp, err := f.Fetch(context.Background(), &Request{URL: u})
				if ClassOf(err) != ClassBlocked {
					t.Errorf("Fetch(%q) canonical %q = %v, %v; want class %q", raw, u, resp, err, ClassBlocked)
				}
			}
			gu, err := url.Parse(raw)
			if err != nil {
				t.Logf("net/url refuses %q: %v", raw, err)
				return
			}
			resp, err := f.Fetch(context.Background(), &Request{URL: gu})
			if c := ClassOf(err); c != ClassBlocked && c != ClassDNS && c != ClassRequest {
				t.Errorf("Fetch(%q) unnormalised = %v, %v; want class blocked, dns or request", raw, resp, err)
			}
		})
	}
	if n := v4.conns.Load(); n != 0 {
		t.Errorf("127.0.0.1 service accepted %d connections, want 0", n)
	}
	if v6 != nil && v6.conns.Load() != 0 {
		t.Errorf("[::1] service accepted %d connections, want 0", v6.conns.Load())
	}
}

// TestParseIPv4Number checks the WHATWG IPv4 number forms the resolver
// path reads, for URLs that did not pass through urlnorm.
func TestParseIPv4Number(t *testing.T) {
	cases := []struct {
		host string
		want string // "" for not an address
	}{
		{"2130706433", "127.0.0.1"},
		{"0177.0.0.1", "127.0.0.1"},
		{"0x7f.1", "127.0.0.1"},
		{"0X7F.0X0.0.1", "127.0.0.1"},
		{"127.1", "127.0.0.1"},
		{"127.0.1", "127.0.0.1"},
		{"0x7f000001", "127.0.0.1"},
		{"017700000001", "127.0.0.1"},
		{"0xa9fea9fe", "169.254.169.254"},
		{"10.0x10.1", "10.16.0.1"},
		{"0", "0.0.0.0"},
		{"0x", "0.0.0.0"},
		{"4294967295", "255.255.255.255"},
		{"4294967296", ""},
		{"256.0.0.1", ""},
		{"1.2.3.4.5", ""},
		{"1.2.65536", ""},
		{"1.2.65535", "1.2.255.255"},
		{"08.0.0.1", ""},
		{"1..1", ""},
		{"1.0x", "1.0.0.0"},
	}
	for _, c := range cases {
		a, ok := parseIPv4Number(c.host)
		got := ""
		if ok {
			got = a.String()
		}
		if got != c.want {
			t.Errorf("parseIPv4Number(%q) = %q, want %q", c.host, got, c.want)
		}
	}
	for host, want := range map[string]bool{"2130706433": true, "a.0x7f": true, "a.0x": true, "a.1": true,
		"a.test": false, "1.a": false, "0x7g": false, "a.": false} {
		if got := endsInNumber(host); got != want {
			t.Errorf("endsInNumber(%q) = %v, want %v", host, got, want)
		}
	}
}

// TestControlRefusesDial dials a forbidden address past Resolve, as any
// other path to the dialer would: the Control hook refuses it with
// ClassBlocked before connect, and an allowed address still connects.
func TestControlRefusesDial(t *testing.T) {
	srv := newServer(t, okHandler("<html></html>"))
	addr := srv.Listener.Addr().String()
	f := newFetcher(t, Options{UserAgent: testUA})
	_, err := f.dialer.DialContext(context.Background(), "tcp", addr)
	if ClassOf(err) != ClassBlocked {
		t.Errorf("dial %s: error %v, want class %q", addr, err, ClassBlocked)
	}
	if n := srv.conns.Load(); n != 0 {
		t.Errorf("server accepted %d connections, want 0", n)
	}
	ok := newFetcher(t, testOptions())
	c, err := ok.dialer.DialContext(context.Background(), "tcp", addr)
	if err != nil {
		t.Fatalf("dial %s with loopback allowed: %v", addr, err)
	}
	c.Close()
}

// TestParseIPv4NumberConformance reads every WHATWG vector (the urlnorm
// package's copy of /work/shared/conformance/url_whatwg_subset.json) whose
// ASCII host ends in a number: parseIPv4Number must give the vector's
// host, or refuse where the vector is a failure.
func TestParseIPv4NumberConformance(t *testing.T) {
	b, err := os.ReadFile("../urlnorm/testdata/url_whatwg_subset.json")
	if err != nil {
		t.Fatal(err)
	}
	var data struct {
		OK, Failures []struct {
			Input string  `json:"input"`
			Base  *string `json:"base"`
			Href  string  `json:"href"`
		}
	}
	if err := json.Unmarshal(b, &data); err != nil {
		t.Fatal(err)
	}
	checked := 0
	check := func(input, href string, fail bool) {
		u, err := url.Parse(input)
		if err != nil || u.Host == "" || strings.ContainsAny(u.Host, "[%") {
			return
		}
		host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
		for i := 0; i < len(host); i++ {
			if host[i] >= 0x80 {
				return // urlnorm maps it to ASCII first
			}
		}
		if !endsInNumber(host) {
			return
		}
		checked++
		a, ok := parseIPv4Number(host)
		if fail {
			if ok {
				t.Errorf("parseIPv4Number(%q) = %v; the vector %q is a failure", host, a, input)
			}
			return
		}
		w, err := url.Parse(href)
		if !ok || err != nil || a.String() != w.Hostname() {
			t.Errorf("parseIPv4Number(%q) = %v, %v; the vector %q gives %q", host, a, ok, input, href)
		}
	}
	for _, c := range data.OK {
		if c.Base == nil {
			check(c.Input, c.Href, false)
		}
	}
	for _, c := range data.Failures {
		if c.Base == nil {
			check(c.Input, "", true)
		}
	}
	if checked < 10 {
		t.Errorf("only %d vectors end in a number; want the IPv4 cases", checked)
	}
	t.Logf("%d vectors checked", checked)
}

// TestNoProxy: the Fetcher has no proxy option and ignores the proxy
// environment variables, so no proxy dials past the guard on its behalf:
// with HTTP_PROXY naming a (counting) proxy, a fetch goes straight to the
// server and the proxy sees nothing.
func TestNoProxy(t *testing.T) {
	proxy := newServer(t, okHandler("<html>proxy</html>"))
	srv := newServer(t, okHandler("<html>direct</html>"))
	t.Setenv("HTTP_PROXY", proxy.URL)
	t.Setenv("http_proxy", proxy.URL)
	o := testOptions()
	o.Hosts = map[string][]netip.Addr{"direct.test": {netip.MustParseAddr("127.0.0.1")}}
	f := newFetcher(t, o)
	resp, err := get(t, f, "http://direct.test:"+port(srv)+"/")
	if err != nil {
		t.Fatal(err)
	}
	if string(resp.Body) != "<html>direct</html>" || srv.conns.Load() != 1 || proxy.conns.Load() != 0 {
		t.Errorf("body %q, server %d connections, proxy %d; want the server's body, 1 and 0",
			resp.Body, srv.conns.Load(), proxy.conns.Load())
	}
}
