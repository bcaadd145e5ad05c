package metrics

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/trawl-crawler/trawl/internal/testweb"
	"github.com/trawl-crawler/trawl/job"
	"github.com/trawl-crawler/trawl/node"
)

// scrape serves reg's handler and parses what it writes with the
// Prometheus text parser.
func scrape(t *testing.T, src func() Source) map[string]*dto.MetricFamily {
	t.Helper()
	srv := httptest.NewServer(promhttp.HandlerFor(NewRegistry(src), promhttp.HandlerOpts{}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("the scrape does not parse as Prometheus text: %v", err)
	}
	return fams
}

// TestScrapeOfACrawl crawls a small synthetic web to its end, then scrapes:
// the text parses, every name and label follows the conventions (and no
// label is a host or URL), and the figures are the node's.
func TestScrapeOfACrawl(t *testing.T) {
	web, err := testweb.Serve(testweb.Generate(testweb.Options{Seed: 9, Hosts: 6, Latency: -1}), testweb.ServeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	n, err := node.Open(node.Options{DataDir: t.TempDir(), MinDelay: 5 * time.Millisecond, Concurrency: 8,
		AllowNets: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, Hosts: web.Resolver()})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	j, err := n.Submit(job.Spec{Seeds: web.Seeds(), Domains: []string{web.Web().Options().Domain}, MaxDepth: 4, RobotsGiveUp: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	n.Start()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	select {
	case <-j.Ended():
	case <-ctx.Done():
		t.Fatal("the crawl did not end in 60s")
	}
	fams := scrape(t, func() Source { return n })
	p, _ := n.Progress(j.ID)
	if p.Pages == 0 {
		t.Fatal("the crawl got no pages")
	}
	allowed := map[string]bool{"crawl": true, "class": true, "state": true}
	for name, f := range fams {
		if !strings.HasPrefix(name, "trawl_") {
			if !strings.HasPrefix(name, "go_") && !strings.HasPrefix(name, "process_") {
				t.Errorf("metric %s: want the trawl_ prefix", name)
			}
			continue
		}
		if f.GetType() == dto.MetricType_COUNTER && !strings.HasSuffix(name, "_total") {
			t.Errorf("counter %s: want the _total suffix", name)
		}
		if f.GetHelp() == "" {
			t.Errorf("metric %s has no help", name)
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if !allowed[l.GetName()] {
					t.Errorf("metric %s has label %s: only crawl, class and state are allowed (bounded sets)", name, l.GetName())
				}
			}
		}
	}
	value := func(name string, labels map[string]string) float64 {
		t.Helper()
		f := fams[name]
		if f == nil {
			t.Fatalf("no metric %s in the scrape", name)
		}
	next:
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if want, ok := labels[l.GetName()]; ok && want != l.GetValue() {
					continue next
				}
			}
			if c := m.GetCounter(); c != nil {
				return c.GetValue()
			}
			return m.GetGauge().GetValue()
		}
		t.Fatalf("no %s with labels %v", name, labels)
		return 0
	}
	crawl := map[string]string{"crawl": strconv.Itoa(int(j.ID))}
	for _, c := range []struct {
		name string
		want int64
	}{
		{"trawl_pages_fetched_total", p.Pages}, {"trawl_requests_total", p.Requests},
		{"trawl_fetched_bytes_total", p.Bytes}, {"trawl_urls_discovered_total", p.Discovered},
	} {
		if got := value(c.name, crawl); got != float64(c.want) {
			t.Errorf("%s = %v, want %d (the crawl's progress)", c.name, got, c.want)
		}
	}
	if got, want := value("trawl_responses_total", map[string]string{"crawl": crawl["crawl"], "class": "2xx"}), p.Status["2xx"]; got != float64(want) {
		t.Errorf("trawl_responses_total{class=2xx} = %v, want %d", got, want)
	}
	if got, want := value("trawl_hosts", map[string]string{"state": "known"}), n.FrontierStats().Hosts; got != float64(want) || want == 0 {
		t.Errorf("trawl_hosts{state=known} = %v, want %d", got, want)
	}
}

// TestScrapeBeforeReady: while the node loads, a scrape parses and holds
// the runtime's metrics only.
func TestScrapeBeforeReady(t *testing.T) {
	fams := scrape(t, func() Source { return nil })
	for name := range fams {
		if strings.HasPrefix(name, "trawl_") {
			t.Errorf("metric %s before the node is ready", name)
		}
	}
	if fams["go_goroutines"] == nil {
		t.Error("no go_goroutines: the runtime's collector is missing")
	}
}
