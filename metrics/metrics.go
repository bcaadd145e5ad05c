// Package metrics exposes a node's counters to Prometheus. A collector
// reads them at scrape time (the jobs' progress, the frontier's host
// counts, the robots.txt keeper's, the WARC writer's and the store's), so
// a crawl pays nothing per page for its metrics beyond the atomic counters
// those parts keep anyway; the one thing observed as it happens is the
// fetch latency histogram, one observation per request (ObserveFetch, the
// node's OnFetch). A scrape costs O(crawls), whatever the number of hosts
// (the frontier keeps its host counts as they change). Safe for concurrent
// use.
//
// Names follow Prometheus conventions: the trawl_ prefix, base units as a
// suffix (_seconds, _bytes) before _total on counters. Labels are bounded:
// crawl (a node's crawls), class (error and status classes, small fixed
// sets), state (host and URL states), kind (page, robots; for content
// duplicates exact, near) and result (response, error); never a host or a
// URL. A continuous crawl's freshness gauges (trawl_recrawl_urls,
// trawl_crawl_freshness_ratio, trawl_crawl_mean_age_seconds) are its
// recrawl schedule's last figures, absent until the schedule has scanned
// once. Duplicates are counted twice over, as they differ:
// trawl_urls_duplicate_total counts URLs found again (no request sent),
// trawl_pages_duplicate_total pages fetched whose content was archived
// already, by kind: exact (written as revisit records) or near (SimHash).
// A fleet member adds its trawl_fleet_* figures (AddFleet, fleet.go).
package metrics

import (
	"net/http"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/trawl-crawler/trawl/frontier"
	"github.com/trawl-crawler/trawl/internal/store"
	"github.com/trawl-crawler/trawl/internal/store/urlseen"
	"github.com/trawl-crawler/trawl/job"
	"github.com/trawl-crawler/trawl/node"
	"github.com/trawl-crawler/trawl/robotscache"
	"github.com/trawl-crawler/trawl/warc"
)

// Source is what the collector reads; *node.Node has it.
type Source interface {
	Jobs() []*job.Job
	Progress(job.ID) (job.Progress, bool)
	FrontierStats() frontier.Stats
	RobotsStats() robotscache.KeeperStats
	WARCStats() warc.WriterStats
	StoreStats() store.Stats
	FilterStats() map[string]urlseen.FilterStats
}

// FetchBuckets are the upper bounds, in seconds, of the fetch latency
// histogram: from a nearby server's answer to node.Options.FetchTimeout's
// default (60 s).
var FetchBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

// Metrics is a node's metrics: a registry with the node's collector and
// the Go runtime's and the process's, and the fetch latency histogram
// that ObserveFetch feeds.
type Metrics struct {
	reg     *prometheus.Registry
	fetches *prometheus.HistogramVec
	// byKind[robots][failed] are fetches' four series, looked up once.
	byKind [2][2]prometheus.Observer
}

// New returns the metrics of the node src returns (nil while the node
// loads: no node metrics then, and none are lost, since they are read from
// the node).
func New(src func() Source) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		// No crawl label: a fetch's latency is its host's and the
		// network's, whichever crawl asked, and a histogram per crawl
		// would keep 14 series per crawl for the process's life.
		fetches: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "trawl_fetch_duration_seconds",
			Help:    "Requests sent, from the request's start to the body's end (response) or the failure (error), by kind (page, robots) and result (response, error).",
			Buckets: FetchBuckets,
		}, []string{"kind", "result"}),
	}
	for i, kind := range []string{"page", "robots"} {
		for k, result := range []string{"response", "error"} {
			m.byKind[i][k] = m.fetches.WithLabelValues(kind, result)
		}
	}
	m.reg.MustRegister(newCollector(src), m.fetches,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// ObserveFetch records one request the node sent; pass it as (or with
// node.ObserveAll, among) node.Options.OnFetch. It takes no lock.
func (m *Metrics) ObserveFetch(ev node.FetchEvent) {
	m.byKind[b2i(ev.Robots)][b2i(ev.Status == 0)].Observe(ev.Duration.Seconds())
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Handler serves a scrape in Prometheus's text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
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

// The node's metrics read at scrape time.
var (
	// Per crawl, from job.Progress.
	pages       = counter("trawl_pages_fetched_total", "Pages a crawl got (fetched for it, or shared by another crawl's fetch).", "crawl")
	bytes       = counter("trawl_fetched_bytes_total", "Body bytes a crawl archived.", "crawl")
	requests    = counter("trawl_requests_total", "HTTP requests sent for a crawl, robots.txt included.", "crawl")
	responses   = counter("trawl_responses_total", "Responses by status class (2xx, 3xx, 4xx, 5xx).", "crawl", "class")
	fetchErrors = counter("trawl_fetch_errors_total", "Failures by class (dns, connect, timeout, tls, robots-unavailable, ...).", "crawl", "class")
	robotsDeny  = counter("trawl_robots_disallowed_total", "URLs not fetched because robots.txt disallows them.", "crawl")
	discovered  = counter("trawl_urls_discovered_total", "Distinct URLs a crawl queued, seeds included.", "crawl")
	duplicates  = counter("trawl_urls_duplicate_total", "URLs a crawl found again (links, redirect targets, seeds) and dropped: its URL-seen gate had them.", "crawl")
	outOfScope  = counter("trawl_urls_out_of_scope_total", "Links outside a crawl's scope or over a trap cap.", "crawl")
	shared      = counter("trawl_pages_shared_total", "Pages a crawl got from another crawl's fetch of the same URL.", "crawl")
	contentDups = counter("trawl_pages_duplicate_total", "Pages a crawl fetched whose content the node had archived already, by kind: exact (same payload: written as a revisit record, not parsed) or near (main text resembling an archived page's: archived in full).", "crawl", "kind")
	crawlURLs   = gauge("trawl_crawl_urls", "A crawl's URLs by state: queued, in_flight, held (paused).", "crawl", "state")
	recrawls    = counter("trawl_recrawls_total", "Fetches of pages the node had fetched before.", "crawl")
	notModified = counter("trawl_recrawls_not_modified_total", "Recrawls answered 304 Not Modified (conditional requests): no body.", "crawl")
	changed     = counter("trawl_recrawls_changed_total", "Recrawls whose content differed from the stored copy.", "crawl")
	// Per continuous crawl, from its recrawl schedule's last scan (absent
	// before the first).
	recrawlURLs = gauge("trawl_recrawl_urls", "A continuous crawl's pages in its recrawl schedule: scheduled, due (time has come), overdue (of due, later than the crawl's least recrawl interval).", "crawl", "state")
	freshness   = gauge("trawl_crawl_freshness_ratio", "A continuous crawl's expected share of stored copies that match the live page (0 to 1).", "crawl")
	meanAge     = gauge("trawl_crawl_mean_age_seconds", "A continuous crawl's expected time since the live page first differed from the stored copy, averaged over its pages (0 while they match).", "crawl")
	// The node's, from its parts.
	hosts        = gauge("trawl_hosts", "Hosts known to the node, by state: known, active, ready, waiting, parked, backoff.", "state")
	frontierN    = gauge("trawl_frontier_urls", "URLs in the node's frontier: queued, in_flight.", "state")
	robotsHits   = counter("trawl_robots_cache_hits_total", "robots.txt checks answered by a copy in force, held in memory or read from the store.")
	robotsMisses = counter("trawl_robots_cache_misses_total", "robots.txt checks that had robots.txt fetched: none known, expired, or retried after a failure.")
	robotsLoads  = counter("trawl_robots_cache_loads_total", "robots.txt checks of an origin not held in memory, which read the store.")
	robotsHeld   = gauge("trawl_robots_cache_origins", "Origins whose robots.txt state is held in memory.")
	warcBytes    = counter("trawl_warc_written_bytes_total", "Bytes of WARC records written (gzip members, as stored), since the node started.")
	warcRecords  = counter("trawl_warc_records_total", "WARC records written (warcinfo, response, request), since the node started.")
	warcFiles    = counter("trawl_warc_files_total", "WARC files begun, since the node started.")
	warcSyncs    = counter("trawl_warc_syncs_total", "Rounds of WARC fsyncs, each shared by the exchanges written meanwhile, since the node started.")
	filterBytes  = gauge("trawl_filter_bytes", "Memory of the node's Bloom filters, by filter: urls (the URL-seen gate), records (URLs with a record), digests (the content-seen gate's exact index).", "filter")
	filterLayers = gauge("trawl_filter_layers", "Layers of a Bloom filter: 1 within the keys it was sized for (--expected-urls), one more each time its keys double past them.", "filter")
	filterKeys   = gauge("trawl_filter_keys", "Keys a Bloom filter took since the node started, loaded from the store or added.", "filter")
	filterCapped = gauge("trawl_filter_capped", "1 once a Bloom filter's memory cap stopped its growth: its false-positive rate, and the store reads new keys cost, then rise with its keys.", "filter")
	commitTime   = prometheus.NewDesc("trawl_store_commit_duration_seconds", "Durable commits of the node's store (a synced batch, or the WAL sync that makes the frontier's applied groups durable), from the call to durable.", nil, nil)
	all          = []desc{pages, bytes, requests, responses, fetchErrors, robotsDeny, discovered, duplicates, outOfScope, shared, contentDups, crawlURLs,
		recrawls, notModified, changed, recrawlURLs, freshness, meanAge,
		hosts, frontierN, robotsHits, robotsMisses, robotsLoads, robotsHeld, warcBytes, warcRecords, warcFiles, warcSyncs,
		filterBytes, filterLayers, filterKeys, filterCapped}
)

type collector struct{ src func() Source }

func newCollector(src func() Source) *collector { return &collector{src: src} }

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range all {
		ch <- d.Desc
	}
	ch <- commitTime
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
		emit(duplicates, float64(p.Duplicates), id)
		emit(outOfScope, float64(p.OutOfScope), id)
		emit(shared, float64(p.Shared), id)
		emit(contentDups, float64(p.Revisits), id, "exact")
		emit(contentDups, float64(p.NearDuplicates), id, "near")
		for class, n := range p.Status {
			emit(responses, float64(n), id, class)
		}
		for class, n := range p.Errors {
			emit(fetchErrors, float64(n), id, class)
		}
		emit(crawlURLs, float64(p.Queued), id, "queued")
		emit(crawlURLs, float64(p.InFlight), id, "in_flight")
		emit(crawlURLs, float64(p.Held), id, "held")
		emit(recrawls, float64(p.Recrawls), id)
		emit(notModified, float64(p.NotModified), id)
		emit(changed, float64(p.Changed), id)
		if f := p.Freshness; f != nil {
			emit(recrawlURLs, float64(f.Scheduled), id, "scheduled")
			emit(recrawlURLs, float64(f.Due), id, "due")
			emit(recrawlURLs, float64(f.Overdue), id, "overdue")
			emit(freshness, f.Freshness, id)
			emit(meanAge, f.MeanAge.Seconds(), id)
		}
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

	rs := src.RobotsStats()
	emit(robotsHits, float64(rs.Hits))
	emit(robotsMisses, float64(rs.Misses))
	emit(robotsLoads, float64(rs.Loads))
	emit(robotsHeld, float64(rs.Origins))

	ws := src.WARCStats()
	emit(warcBytes, float64(ws.Bytes))
	emit(warcRecords, float64(ws.Records))
	emit(warcFiles, float64(ws.Files))
	emit(warcSyncs, float64(ws.Syncs))

	for name, f := range src.FilterStats() {
		emit(filterBytes, float64(f.Bytes), name)
		emit(filterLayers, float64(f.Layers), name)
		emit(filterKeys, float64(f.Keys), name)
		capped := 0.0
		if f.Capped {
			capped = 1
		}
		emit(filterCapped, capped, name)
	}

	ss := src.StoreStats()
	buckets := make(map[float64]uint64, len(ss.CommitBuckets))
	for i, n := range ss.CommitBuckets {
		buckets[store.CommitBuckets[i]] = n
	}
	ch <- prometheus.MustNewConstHistogram(commitTime, ss.Commits, ss.CommitSeconds, buckets)
}
