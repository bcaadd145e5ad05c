// Package metrics exposes a node's counters to Prometheus: a collector that
// reads them at scrape time, so that a crawl pays nothing per page for its
// metrics beyond the atomic counters its jobs keep anyway, and a scrape
// costs O(crawls), whatever the number of hosts (the frontier keeps its
// host counts as they change).
//
// Names follow Prometheus conventions: the trawl_ prefix, _total on
// counters, base units (_bytes). Labels are bounded: crawl (a node's
// crawls), class (error classes and status classes, small fixed sets) and
// state (host and URL states); never a host or a URL.
package metrics

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/trawl-crawler/trawl/frontier"
	"github.com/trawl-crawler/trawl/job"
)

// Source is what the collector reads; *node.Node has it.
type Source interface {
	Jobs() []*job.Job
	Progress(job.ID) (job.Progress, bool)
	FrontierStats() frontier.Stats
}

// NewRegistry returns a registry with the node's collector (over the
// source src returns; nil while the node loads: no node metrics then) and
// the Go runtime's and the process's.
func NewRegistry(src func() Source) *prometheus.Registry {
	r := prometheus.NewRegistry()
	r.MustRegister(newCollector(src), collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return r
}

type desc struct {
	*prometheus.Desc
	kind prometheus.ValueType
}

func counter(name, help string, labels ...string) desc {
	return desc{prometheus.NewDesc(name, help, labels, nil), prometheus.CounterValue}
}

func gauge(name, help string, labels ...string) desc {
	return desc{prometheus.NewDesc(name, help, labels, nil), prometheus.GaugeValue}
}

// The node's metrics.
var (
	pages       = counter("trawl_pages_fetched_total", "Pages a crawl got (fetched for it, or shared by another crawl's fetch).", "crawl")
	bytes       = counter("trawl_fetched_bytes_total", "Body bytes a crawl archived.", "crawl")
	requests    = counter("trawl_requests_total", "HTTP requests sent for a crawl, robots.txt included.", "crawl")
	responses   = counter("trawl_responses_total", "Responses by status class (2xx, 3xx, 4xx, 5xx).", "crawl", "class")
	fetchErrors = counter("trawl_fetch_errors_total", "Failures by class (dns, connect, timeout, tls, robots-unavailable, ...).", "crawl", "class")
	robotsDeny  = counter("trawl_robots_disallowed_total", "URLs not fetched because robots.txt disallows them.", "crawl")
	discovered  = counter("trawl_urls_discovered_total", "Distinct URLs a crawl queued, seeds included.", "crawl")
	outOfScope  = counter("trawl_urls_out_of_scope_total", "Links outside a crawl's scope or over a trap cap.", "crawl")
	shared      = counter("trawl_pages_shared_total", "Pages a crawl got from another crawl's fetch of the same URL.", "crawl")
	crawlURLs   = gauge("trawl_crawl_urls", "A crawl's URLs by state: queued, in_flight, held (paused).", "crawl", "state")
	hosts       = gauge("trawl_hosts", "Hosts known to the node, by state: known, active, ready, waiting, parked, backoff.", "state")
	frontierN   = gauge("trawl_frontier_urls", "URLs in the node's frontier: queued, in_flight.", "state")
	all         = []desc{pages, bytes, requests, responses, fetchErrors, robotsDeny, discovered, outOfScope, shared, crawlURLs, hosts, frontierN}
)

type collector struct{ src func() Source }

func newCollector(src func() Source) *collector { return &collector{src: src} }

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range all {
		ch <- d.Desc
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	src := c.src()
	if src == nil {
		return
	}
	emit := func(d desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d.Desc, d.kind, v, labels...)
	}
	for _, j := range src.Jobs() {
		p, ok := src.Progress(j.ID)
		if !ok {
			continue
		}
		id := strconv.FormatUint(uint64(j.ID), 10)
		emit(pages, float64(p.Pages), id)
		emit(bytes, float64(p.Bytes), id)
		emit(requests, float64(p.Requests), id)
		emit(robotsDeny, float64(p.RobotsDisallowed), id)
		emit(discovered, float64(p.Discovered), id)
		emit(outOfScope, float64(p.OutOfScope), id)
		emit(shared, float64(p.Shared), id)
		for class, n := range p.Status {
			emit(responses, float64(n), id, class)
		}
		for class, n := range p.Errors {
			emit(fetchErrors, float64(n), id, class)
		}
		emit(crawlURLs, float64(p.Queued), id, "queued")
		emit(crawlURLs, float64(p.InFlight), id, "in_flight")
		emit(crawlURLs, float64(p.Held), id, "held")
	}
	fs := src.FrontierStats()
	for _, s := range []struct {
		state string
		n     int
	}{{"known", fs.Hosts}, {"active", fs.Active}, {"ready", fs.Ready}, {"waiting", fs.Waiting}, {"parked", fs.Parked}, {"backoff", fs.Backoff}} {
		emit(hosts, float64(s.n), s.state)
	}
	emit(frontierN, float64(fs.Queued), "queued")
	emit(frontierN, float64(fs.InFlight), "in_flight")
}
