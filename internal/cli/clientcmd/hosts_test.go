package clientcmd

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/trawl-crawler/trawl/internal/testkit/golden"
)

// hostsPage is a page of GET /v1/hosts as the server sends it: hosts dead
// for each reason, live ones failing each way, and ones not failing.
const hostsPage = `{"hosts":[
 {"host":"a.test","state":"ready","queued":12,"in_flight":1,"leased":3,"duplicates":0,"delay_ms":1000,"delay_reason":"min-delay","wait_ms":0,"backoff_ms":0,"crawl_delay_ms":0,"policy":{"min_delay_ms":null,"paused":false}},
 {"host":"parked.test","state":"backoff","queued":58,"in_flight":0,"leased":0,"duplicates":0,"next_allowed":"2026-12-03T16:50:06Z","delay_ms":3600000,"delay_reason":"robots-retry-after","wait_ms":3541200,"wait_reason":"robots-retry-after","backoff_ms":100,"crawl_delay_ms":0,"policy":{"min_delay_ms":null,"paused":false}},
 {"host":"ra.test","state":"backoff","queued":3,"in_flight":0,"leased":1,"duplicates":0,"next_allowed":"2026-12-03T16:50:06Z","delay_ms":3600000,"delay_reason":"retry-after","wait_ms":3599600,"wait_reason":"retry-after","backoff_ms":100,"crawl_delay_ms":0,"policy":{"min_delay_ms":null,"paused":false}},
 {"host":"slow.test","state":"backoff","queued":40,"in_flight":0,"leased":7,"duplicates":0,"delay_ms":8000,"delay_reason":"backoff","backoff_ms":8000,"crawl_delay_ms":0,"policy":{"min_delay_ms":null,"paused":false},"failures":3,"failing_how":"timeout"},
 {"host":"reset.test","state":"waiting","queued":2,"in_flight":1,"leased":1,"duplicates":0,"delay_ms":2000,"delay_reason":"backoff","wait_ms":1450,"wait_reason":"backoff","backoff_ms":2000,"crawl_delay_ms":0,"policy":{"min_delay_ms":null,"paused":false},"failures":1,"failing_how":"network"},
 {"host":"gone.test","state":"dead","queued":0,"in_flight":0,"leased":20,"duplicates":0,"delay_ms":600000,"delay_reason":"backoff","backoff_ms":600000,"crawl_delay_ms":0,"policy":{"min_delay_ms":null,"paused":false},"dead_reason":"failing","failures":20,"failing_how":"network"},
 {"host":"big.test","state":"dead","queued":0,"in_flight":0,"leased":500,"duplicates":2,"delay_ms":0,"backoff_ms":0,"crawl_delay_ms":0,"policy":{"min_delay_ms":null,"paused":false},"dead_reason":"budget"},
 {"host":"copies.test","state":"dead","queued":0,"in_flight":0,"leased":9,"duplicates":8,"delay_ms":0,"backoff_ms":0,"crawl_delay_ms":0,"policy":{"min_delay_ms":null,"paused":false},"dead_reason":"duplicates"},
 {"host":"robots.test","state":"dead","queued":0,"in_flight":0,"leased":0,"duplicates":0,"delay_ms":0,"backoff_ms":0,"crawl_delay_ms":0,"policy":{"min_delay_ms":2000,"paused":true},"dead_reason":"host-dropped"}
]}`

// hostDetail is GET /v1/hosts/{host} for a live host failing, for a
// dead one, and for one parked by its robots.txt's Retry-After, of two
// crawls with URLs in flight.
func hostDetail(host string) string {
	if host == "parked.test" {
		return `{"host":"parked.test","state":"backoff","queued":58,"in_flight":2,"leased":40,"duplicates":0,"next_allowed":"2026-12-03T16:50:06Z","delay_ms":3600000,"delay_reason":"robots-retry-after","wait_ms":3541200,"wait_reason":"robots-retry-after","backoff_ms":100,"crawl_delay_ms":0,"policy":{"min_delay_ms":null,"paused":false},"queued_by_crawl":{"1":43,"2":17},"in_flight_by_crawl":{"1":2},"held_by_crawl":{},"queued_counted":true,"robots":[]}`
	}
	failing := `"state":"backoff","failures":4,"failing_how":"timeout"`
	if host == "gone.test" {
		failing = `"state":"dead","dead_reason":"failing","failures":20,"failing_how":"network"`
	}
	return `{"host":"` + host + `",` + failing + `,"queued":3,"in_flight":0,"leased":5,"duplicates":0,"delay_ms":16000,"delay_reason":"backoff","backoff_ms":16000,"crawl_delay_ms":0,"policy":{"min_delay_ms":null,"paused":false},"queued_by_crawl":{"1":3},"held_by_crawl":{},"queued_counted":true,"robots":[]}`
}

// TestHostsListFailing: trawl hosts list and show say why a dead host was
// given up, and how a live one is failing.
func TestHostsListFailing(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/v1/hosts":
			fmt.Fprint(w, hostsPage)
		case strings.HasPrefix(r.URL.Path, "/v1/hosts/"):
			fmt.Fprint(w, hostDetail(strings.TrimPrefix(r.URL.Path, "/v1/hosts/")))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	o := Options{Server: srv.URL, Getenv: func(string) string { return "" }}
	var b strings.Builder
	for _, c := range []struct {
		cmd  string
		run  Run
		args []string
	}{
		{"hosts list", new(HostsList).Run, nil},
		{"hosts show", HostsShow, []string{"slow.test"}},
		{"hosts show", HostsShow, []string{"gone.test"}},
		{"hosts show", HostsShow, []string{"parked.test"}},
	} {
		var out, errb bytes.Buffer
		code := Main(context.Background(), o, c.cmd, c.run, c.args, &out, &errb)
		fmt.Fprintf(&b, "trawl %s\n----\n%sexit %d\n", strings.Join(append([]string{c.cmd}, c.args...), " "), out.String(), code)
		if errb.Len() > 0 {
			fmt.Fprintf(&b, "stderr: %s", errb.String())
		}
		b.WriteString("\n")
	}
	golden.Check(t, "hosts.golden", b.String())
	// A host parked an hour by its robots.txt's Retry-After says so, and
	// its per-crawl counts add up to its totals.
	for _, line := range []string{
		"parked.test  backoff                        58      0          in 59m1s (robots.txt Retry-After)  1h0m0s (robots-retry-after)  default",
		"state        backoff: 58 queued, 2 in flight, 40 leased (0 duplicates)",
		"by crawl     crawl 1: 41 queued + 2 in flight, crawl 2: 17 queued; held none",
		"next fetch   in 59m1s (robots.txt Retry-After)",
	} {
		if !strings.Contains(b.String(), line+"\n") {
			t.Errorf("no line %q in:\n%s", line, b.String())
		}
	}
}
