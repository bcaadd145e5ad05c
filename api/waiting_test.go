package api

import (
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/job"
	"github.com/trawl-crawler/trawl/node"
)

// TestStatsSayWhatACrawlWaitsFor: a crawl whose only host answers
// robots.txt with 503 and Retry-After: 3600 (and that never gives up:
// max wait 0) says, in its stats and in GET /v1/stats, that it waits about
// an hour for 1 host because of a robots.txt Retry-After; every answer
// matches the OpenAPI file.
func TestStatsSayWhatACrawlWaitsFor(t *testing.T) {
	t.Parallel()
	parked := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "3600")
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer parked.Close()
	_, port, _ := net.SplitHostPort(parked.Listener.Addr().String())
	n, err := node.Open(node.Options{DataDir: t.TempDir(), MinDelay: 10 * time.Millisecond,
		AllowNets: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		Hosts:     map[string][]netip.Addr{"parked.test": {netip.MustParseAddr("127.0.0.1")}}})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	j, err := n.Submit(job.Spec{Seeds: []string{"http://parked.test:" + port + "/"}})
	if err != nil {
		t.Fatal(err)
	}
	n.Start()
	srv := httptest.NewServer(New(Options{Node: func() Node { return n }, Token: testToken}))
	defer srv.Close()
	c := newAPIClient(t, srv.URL)
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, body := c.do("GET", "/v1/crawls/"+jsonNumber(float64(j.ID))+"/stats", "", nil, true)
		if w, ok := body["waiting"].(map[string]any); ok {
			if w["reason"] != "robots-retry-after" || w["hosts"] != 1.0 {
				t.Errorf("waiting %v, want 1 host, reason robots-retry-after", w)
			}
			if s, _ := w["for_s"].(float64); s < 3500 || s > 3600 {
				t.Errorf("waiting for %v s, want about 3600", w["for_s"])
			}
			if text, _ := w["text"].(string); !strings.HasSuffix(text, "for 1 host (robots.txt Retry-After)") {
				t.Errorf("text %q", text)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 20 s the crawl's stats still say nothing of the wait: %v", body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	_, body := c.do("GET", "/v1/stats", "", nil, true)
	crawls, _ := body["crawls"].([]any)
	if len(crawls) != 1 {
		t.Fatalf("GET /v1/stats lists %d crawls, want 1", len(crawls))
	}
	if w, _ := crawls[0].(map[string]any)["waiting"].(map[string]any); w == nil || w["reason"] != "robots-retry-after" {
		t.Errorf("GET /v1/stats's crawl: waiting %v, want reason robots-retry-after", w)
	}
}
