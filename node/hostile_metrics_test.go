package node_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/trawl-crawler/trawl/job"
	"github.com/trawl-crawler/trawl/metrics"
	"github.com/trawl-crawler/trawl/node"
)

// The hostile crawl's metrics (node.HostileMetrics): metrics imports
// node, so they are made here, in the external test package, which the
// same test binary runs beside node's own tests.
func init() { node.HostileMetrics = hostileMetrics }

func hostileMetrics(running func() *node.Node) (func(node.FetchEvent), func(job.ID) (map[string]float64, error)) {
	m := metrics.New(func() metrics.Source {
		if n := running(); n != nil {
			return n
		}
		return nil // not a nil *Node in a non-nil interface
	})
	return m.ObserveFetch, func(crawl job.ID) (map[string]float64, error) {
		return scrapeFetchErrors(m, crawl)
	}
}

// scrapeFetchErrors GETs m's /metrics handler over loopback, as Prometheus
// would, and returns trawl_fetch_errors_total's value by class for crawl.
func scrapeFetchErrors(m *metrics.Metrics, crawl job.ID) (map[string]float64, error) {
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("the scrape does not parse as Prometheus text: %w", err)
	}
	fam, ok := fams["trawl_fetch_errors_total"]
	if !ok {
		return map[string]float64{}, nil // no crawl has an error yet
	}
	id := strconv.FormatUint(uint64(crawl), 10)
	got := map[string]float64{}
	for _, mt := range fam.GetMetric() {
		var c, class string
		for _, l := range mt.GetLabel() {
			switch l.GetName() {
			case "crawl":
				c = l.GetValue()
			case "class":
				class = l.GetValue()
			}
		}
		if c != id {
			continue
		}
		if _, dup := got[class]; dup {
			return nil, fmt.Errorf("trawl_fetch_errors_total{crawl=%q,class=%q} twice", c, class)
		}
		got[class] = mt.GetCounter().GetValue()
	}
	return got, nil
}
