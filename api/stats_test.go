package api

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/frontier"
	"github.com/trawl-crawler/trawl/internal/hostrank"
	"github.com/trawl-crawler/trawl/internal/testkit/testweb"
	"github.com/trawl-crawler/trawl/job"
	"github.com/trawl-crawler/trawl/node"
)

// TestNodeStats: GET /v1/stats over a real node with two crawls of one
// synthetic web matches the OpenAPI file while they run, lists the hosts
// the ranking saw, and once they end adds up to the crawls' own counters.
func TestNodeStats(t *testing.T) {
	web, err := testweb.Serve(testweb.Generate(testweb.Options{Seed: 5, Hosts: 6, Latency: -1}), testweb.ServeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	hosts, err := hostrank.New(hostrank.Options{})
	if err != nil {
		t.Fatal(err)
	}
	n, err := node.Open(node.Options{DataDir: t.TempDir(), MinDelay: 20 * time.Millisecond, Concurrency: 8,
		AllowNets: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, Hosts: web.Resolver(),
		OnFetch: func(ev node.FetchEvent) { hosts.Observe(ev.Host, ev.Duration) }})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	var jobs []*job.Job
	for _, name := range []string{"one", "two"} {
		j, err := n.Submit(job.Spec{Name: name, Seeds: web.Seeds(), Domains: []string{web.Web().Options().Domain}, MaxDepth: 4})
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, j)
	}
	n.Start()
	srv := httptest.NewServer(New(Options{Node: func() Node { return n }, Token: testToken, HostRanking: hosts}))
	defer srv.Close()
	c := newAPIClient(t, srv.URL)

	stats := func() map[string]any {
		t.Helper()
		code, body := c.do("GET", "/v1/stats", "", nil, true)
		if code != 200 {
			t.Fatalf("GET /v1/stats = %d %v", code, body)
		}
		return body
	}
	num := func(body map[string]any, path string) float64 {
		var v any = body
		for _, k := range strings.Split(path, ".") {
			v = v.(map[string]any)[k]
		}
		return v.(float64)
	}
	deadline := time.Now().Add(30 * time.Second)
	for body := stats(); num(body, "totals.pages") == 0 || len(body["busiest_hosts"].([]any)) == 0; body = stats() {
		if time.Now().After(deadline) {
			t.Fatalf("no pages or no busy hosts after 30 s: %v", body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, j := range jobs {
		select {
		case <-j.Ended():
		case <-ctx.Done():
			t.Fatalf("crawl %d did not end in a minute", j.ID)
		}
	}

	body := stats()
	var pages, shared, requests, errs, again, found float64
	for _, j := range jobs {
		p, _ := n.Progress(j.ID)
		pages += float64(p.Total.Pages)
		shared += float64(p.Total.Shared)
		again += float64(p.Total.Duplicates)
		found += float64(p.Total.Duplicates + p.Total.Discovered)
		requests += float64(p.Total.Requests)
		for _, k := range p.Total.Errors {
			errs += float64(k)
		}
	}
	t.Logf("%v pages, %v of them shared, %v requests; %v URLs found again", pages, shared, requests, again)
	if again == 0 {
		t.Error("no URL found again: a web whose pages link to each other should give some")
	}
	for _, w := range []struct {
		path string
		want float64
	}{
		{"totals.pages", pages}, {"totals.fetched", pages - shared}, {"totals.requests", requests},
		{"duplicates.shared_pages", shared}, {"duplicates.shared_rate", shared / pages},
		{"duplicates.urls_seen_again", again}, {"duplicates.url_rate", again / found},
		{"frontier.queued", 0}, {"frontier.in_flight", 0},
	} {
		if got := num(body, w.path); got != w.want {
			t.Errorf("GET /v1/stats: %s = %v, want %v", w.path, got, w.want)
		}
	}
	var gotErrs float64
	for _, k := range body["errors_by_class"].(map[string]any) {
		gotErrs += k.(float64)
	}
	if gotErrs != errs {
		t.Errorf("GET /v1/stats: errors_by_class add up to %v, the crawls' to %v", gotErrs, errs)
	}
	crawls := body["crawls"].([]any)
	if len(crawls) != 2 {
		t.Fatalf("GET /v1/stats lists %d crawls, want 2", len(crawls))
	}
	for i, c := range crawls {
		c := c.(map[string]any)
		if c["state"] != "finished" || c["name"] != jobs[i].Spec.Name {
			t.Errorf("crawl %d in /v1/stats: %v, want %q finished", i+1, c, jobs[i].Spec.Name)
		}
	}
	if body["node_paused"] != false {
		t.Errorf("GET /v1/stats: node_paused = %v, want false", body["node_paused"])
	}
	if err := n.PauseNode(); err != nil {
		t.Fatal(err)
	}
	if got := stats()["node_paused"]; got != true {
		t.Errorf("GET /v1/stats after PauseNode: node_paused = %v, want true", got)
	}
	domain := "." + web.Web().Options().Domain
	for _, list := range []string{"busiest_hosts", "slowest_hosts"} {
		hs := body[list].([]any)
		if len(hs) == 0 || len(hs) > statsHosts {
			t.Errorf("%s lists %d hosts, want 1 to %d", list, len(hs), statsHosts)
		}
		for _, h := range hs {
			if name := h.(map[string]any)["host"].(string); !strings.HasSuffix(name, domain) {
				t.Errorf("%s lists %q, not a host of the web", list, name)
			}
		}
	}
}

// TestStatsAndDashboardRoutes: without a ranking the host lists are
// empty, not missing; the dashboard answers only where it is mounted, and
// the API's own 404s stay JSON.
func TestStatsAndDashboardRoutes(t *testing.T) {
	page := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("page " + r.URL.Path))
	})
	srv := httptest.NewServer(New(Options{Node: func() Node { return noJobs{} }, Dashboard: page}))
	defer srv.Close()
	c := newAPIClient(t, srv.URL)
	code, body := c.do("GET", "/v1/stats", "", nil, true)
	if code != 200 || len(body["busiest_hosts"].([]any)) != 0 || len(body["crawls"].([]any)) != 0 {
		t.Errorf("GET /v1/stats without a ranking = %d %v", code, body)
	}
	for _, r := range []struct {
		path, want string
		code       int
	}{{"/", "page /", 200}, {"/dashboard/app.js", "page /dashboard/app.js", 200}, {"/nope", `{"error"`, 404}} {
		resp, err := http.Get(srv.URL + r.path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != r.code || !strings.HasPrefix(string(b), r.want) {
			t.Errorf("GET %s = %d %q, want %d %q...", r.path, resp.StatusCode, b, r.code, r.want)
		}
	}
}

func (noJobs) FrontierStats() frontier.Stats { return frontier.Stats{} }
func (noJobs) NodePaused() bool              { return false }
