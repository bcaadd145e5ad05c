package api

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/node"
)

// TestHostWaitShown: hosts parked for an hour by a Retry-After: 3600, one
// on its robots.txt (503), one on its pages (429), are listed and shown
// with how long they wait and why ("wait_ms" near an hour, "wait_reason"
// robots-retry-after and retry-after), the same after a restart; every
// answer is valid against the OpenAPI file. Before, the reasons were not in
// its enum, no field said how long the host still waits, and a restart
// lost the reason.
func TestHostWaitShown(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := net.SplitHostPort(r.Host)
		switch {
		case host == "robots.test" && r.URL.Path == "/robots.txt":
			w.Header().Set("Retry-After", "3600")
			w.WriteHeader(http.StatusServiceUnavailable)
		case r.URL.Path == "/robots.txt", r.URL.Path == "/sitemap.xml":
			http.NotFound(w, r)
		case host == "page.test" && r.URL.Path != "/":
			w.Header().Set("Retry-After", "3600")
			w.WriteHeader(http.StatusTooManyRequests)
		default:
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, `<a href="/a">a</a> <a href="/b">b</a>`)
		}
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	lo := []netip.Addr{netip.MustParseAddr("127.0.0.1")}
	opts := node.Options{DataDir: t.TempDir(), MinDelay: 50 * time.Millisecond, Concurrency: 4,
		AllowNets: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, Hosts: map[string][]netip.Addr{"robots.test": lo, "page.test": lo}}
	open := func() (*node.Node, *apiClient) {
		n, err := node.Open(opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.Close() })
		api := httptest.NewServer(New(Options{Node: func() Node { return n }, Token: testToken}))
		t.Cleanup(api.Close)
		return n, newAPIClient(t, api.URL)
	}
	n, c := open()
	n.Start()
	if code, body := c.do("POST", "/v1/crawls", testToken, map[string]any{"seeds": []string{"http://robots.test:" + port + "/", "http://page.test:" + port + "/"}}, true); code != 202 {
		t.Fatalf("POST /v1/crawls = %d %v", code, body)
	}
	want := map[string]string{"robots.test": "robots-retry-after", "page.test": "retry-after"}
	// parked reports whether every host of want waits most of an hour.
	parked := func(hosts []any) bool {
		n := 0
		for _, h := range hosts {
			h := h.(map[string]any)
			if at, err := time.Parse(time.RFC3339Nano, str(h["next_allowed"])); err == nil && time.Until(at) > 50*time.Minute && want[str(h["host"])] != "" {
				n++
			}
		}
		return n == len(want)
	}
	var hosts []any
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		_, body := c.do("GET", "/v1/hosts", "", nil, true)
		if hosts, _ = body["hosts"].([]any); parked(hosts) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the hosts were not parked for an hour within 30 s: %v", body)
		}
	}
	check := func(when string, c *apiClient, hosts []any) {
		t.Helper()
		for _, h := range hosts {
			h := h.(map[string]any)
			name := str(h["host"])
			wait, _ := h["wait_ms"].(float64)
			if wait < float64(50*time.Minute/time.Millisecond) || wait > float64(time.Hour/time.Millisecond) || h["wait_reason"] != want[name] || h["delay_reason"] != want[name] {
				t.Errorf("%s: GET /v1/hosts: %s waits %v ms for %v (delay %v ms for %v); want about an hour for %s", when, name, h["wait_ms"], h["wait_reason"], h["delay_ms"], h["delay_reason"], want[name])
			}
			code, d := c.do("GET", "/v1/hosts/"+name, "", nil, true)
			if dw, _ := d["wait_ms"].(float64); code != 200 || dw > wait || dw < wait-60_000 || d["wait_reason"] != want[name] {
				t.Errorf("%s: GET /v1/hosts/%s = %d, waits %v ms for %v; the list said %v ms", when, name, code, d["wait_ms"], d["wait_reason"], wait)
			}
			// The per-crawl counts add up to the totals.
			sum := func(field string) float64 {
				n := 0.0
				for _, v := range d[field].(map[string]any) {
					n += v.(float64)
				}
				return n
			}
			if d["queued_counted"] != true || sum("queued_by_crawl") != d["queued"].(float64)+d["in_flight"].(float64) || sum("in_flight_by_crawl") != d["in_flight"] {
				t.Errorf("%s: GET /v1/hosts/%s: by crawl %v queued, %v in flight; totals %v queued, %v in flight", when, name, d["queued_by_crawl"], d["in_flight_by_crawl"], d["queued"], d["in_flight"])
			}
		}
	}
	check("while crawling", c, hosts)
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	// After a restart (not started: the crawl would give the hosts up),
	// the hosts still wait, for the same reasons.
	_, c = open()
	_, body := c.do("GET", "/v1/hosts", "", nil, true)
	hosts, _ = body["hosts"].([]any)
	if !parked(hosts) {
		t.Fatalf("after a restart the hosts are not parked: %v", body)
	}
	check("after a restart", c, hosts)
}

func str(v any) string { s, _ := v.(string); return s }
