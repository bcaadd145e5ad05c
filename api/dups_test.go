package api

import (
	"crypto/sha256"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/trawl-crawler/trawl/internal/testkit/testweb"
	"github.com/trawl-crawler/trawl/job"
	"github.com/trawl-crawler/trawl/metrics"
	"github.com/trawl-crawler/trawl/node"
)

// TestContentDuplicatesReported: a crawl of a synthetic web with labelled
// exact and near copies reports its content duplicates in GET /v1/stats
// (node-wide and in the crawl's row), in GET /v1/crawls/{id}/stats and in
// the Prometheus scrape, and the counts are the web's own, worked out here
// without the node: exact, the pages fetched whose bytes (read again from
// the web) equal a page's fetched before; near, the labelled near copies
// fetched beside a member of their family (the copy, or its original
// after it: whichever came later). The web has no lookalikes, so no
// distinct page is near another.
func TestContentDuplicatesReported(t *testing.T) {
	web, err := testweb.Serve(testweb.Generate(testweb.Options{Seed: 11, Hosts: 10, Latency: -1}), testweb.ServeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	n, err := node.Open(node.Options{DataDir: t.TempDir(), MinDelay: 10 * time.Millisecond, Concurrency: 8,
		AllowNets: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, Hosts: web.Resolver()})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	j, err := n.Submit(job.Spec{Name: "dups", Seeds: web.Seeds(), Domains: []string{web.Web().Options().Domain}, MaxDepth: 8})
	if err != nil {
		t.Fatal(err)
	}
	n.Start()
	m := metrics.New(func() metrics.Source { return n })
	srv := httptest.NewServer(New(Options{Node: func() Node { return n }, Token: testToken, Metrics: m.Handler()}))
	defer srv.Close()
	c := newAPIClient(t, srv.URL)
	select {
	case <-j.Ended():
	case <-time.After(2 * time.Minute):
		t.Fatal("the crawl did not end in 2 minutes")
	}

	exact, near := webDuplicates(t, web)
	t.Logf("the web's count: %d exact copies of a page fetched before, %d near copies", exact, near)
	if exact == 0 || near == 0 {
		t.Fatalf("the web gave %d exact and %d near copies: too few to judge", exact, near)
	}

	code, body := c.do("GET", "/v1/stats", "", nil, true)
	if code != 200 {
		t.Fatalf("GET /v1/stats = %d %v", code, body)
	}
	totals := body["totals"].(map[string]any)
	dups := body["duplicates"].(map[string]any)
	row := body["crawls"].([]any)[0].(map[string]any)
	code, cs := c.do("GET", "/v1/crawls/"+strconv.Itoa(int(j.ID))+"/stats", testToken, nil, true)
	if code != 200 {
		t.Fatalf("GET /v1/crawls/%d/stats = %d %v", j.ID, code, cs)
	}
	scraped := scrapeDuplicates(t, srv.URL+"/metrics")
	for _, w := range []struct {
		what string
		got  any
		want float64
	}{
		{"/v1/stats duplicates.exact_pages", dups["exact_pages"], float64(exact)},
		{"/v1/stats duplicates.near_pages", dups["near_pages"], float64(near)},
		{"/v1/stats duplicates.content_rate", dups["content_rate"], float64(exact+near) / totals["fetched"].(float64)},
		{"/v1/stats crawls[0].revisits", row["revisits"], float64(exact)},
		{"/v1/stats crawls[0].near_duplicates", row["near_duplicates"], float64(near)},
		{"/v1/crawls/{id}/stats revisits", cs["revisits"], float64(exact)},
		{"/v1/crawls/{id}/stats near_duplicates", cs["near_duplicates"], float64(near)},
		{`/metrics trawl_pages_duplicate_total{kind="exact"}`, scraped["exact"], float64(exact)},
		{`/metrics trawl_pages_duplicate_total{kind="near"}`, scraped["near"], float64(near)},
	} {
		if g, ok := w.got.(float64); !ok || g != w.want {
			t.Errorf("%s = %v, want %v", w.what, w.got, w.want)
		}
	}
}

// webDuplicates counts, from the web's request log and its labels, the
// 2xx answers to GETs (robots.txt aside) whose bytes equal an earlier
// one's, and the labelled near copies fetched with 2xx beside another
// member of their family (the original or its exact copy).
func webDuplicates(t *testing.T, web *testweb.Server) (exact, near int) {
	t.Helper()
	log := web.Log()               // before the bodies are read again, which adds to it
	exactOf := map[string]string{} // an original -> its exact copy
	for _, p := range web.Web().Pages() {
		if p.DuplicateOf != "" {
			exactOf[p.DuplicateOf] = p.URL
		}
	}
	port := ":" + strconv.Itoa(web.Port())
	seen := map[[sha256.Size]byte]bool{}
	got := map[string]bool{} // "host/path?query" answered 2xx
	for _, q := range log {
		if q.Method != http.MethodGet || q.Path == "/robots.txt" {
			continue
		}
		if q.Status < 200 || q.Status > 299 {
			continue
		}
		got[q.Host+q.Path] = true
		rec := httptest.NewRecorder()
		web.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://"+q.Host+port+q.Path, nil))
		sum := sha256.Sum256(rec.Body.Bytes())
		if seen[sum] {
			exact++
		}
		seen[sum] = true
	}
	fetchedOK := func(raw string) bool {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatalf("the web lists %q: %v", raw, err)
		}
		return got[u.Hostname()+u.RequestURI()]
	}
	for _, p := range web.Web().Pages() {
		if p.NearDuplicateOf == "" || !fetchedOK(p.URL) {
			continue
		}
		if fetchedOK(p.NearDuplicateOf) || fetchedOK(exactOf[p.NearDuplicateOf]) {
			near++
		}
	}
	return exact, near
}

// scrapeDuplicates reads trawl_pages_duplicate_total from a scrape, by
// its kind label.
func scrapeDuplicates(t *testing.T, addr string) map[string]any {
	t.Helper()
	resp, err := http.Get(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("GET /metrics does not parse: %v", err)
	}
	out := map[string]any{}
	f := fams["trawl_pages_duplicate_total"]
	if f == nil {
		return out
	}
	for _, m := range f.GetMetric() {
		out[label(m, "kind")] = m.GetCounter().GetValue()
	}
	return out
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}
