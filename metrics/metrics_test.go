package metrics

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.uber.org/goleak"

	"github.com/trawl-crawler/trawl/internal/testkit/testweb"
	"github.com/trawl-crawler/trawl/job"
	"github.com/trawl-crawler/trawl/node"
	"github.com/trawl-crawler/trawl/warc"
)

func TestMain(m *testing.M) {
	code := m.Run()
	closeBenchNode() // the benchmarks' node, if one was built
	if code == 0 {
		if err := goleak.Find(); err != nil {
			os.Stderr.WriteString("goleak: " + err.Error() + "\n")
			code = 1
		}
	}
	os.Exit(code)
}

// scrape serves m's handler and parses what it writes with the
// Prometheus text parser.
func scrape(t *testing.T, m *Metrics) map[string]*dto.MetricFamily {
	t.Helper()
	srv := httptest.NewServer(m.Handler())
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

// labelValues are the values each label may take: a bounded set, never a
// host or a URL. crawl is checked against the node's crawls.
var labelValues = map[string]*regexp.Regexp{
	"crawl":     regexp.MustCompile(`^[0-9]+$`),
	"class":     regexp.MustCompile(`^([1-5]xx|request|dns|blocked|connect|timeout|tls|protocol|body|canceled|robots-unavailable|bad-location|redirect-chain|internal|other|too-large|body-timeout)$`),
	"state":     regexp.MustCompile(`^(known|active|ready|waiting|parked|backoff|queued|in_flight|held|scheduled|due|overdue)$`),
	"kind":      regexp.MustCompile(`^(page|robots|exact|near|take|takeover|adopt|release|drop)$`),
	"result":    regexp.MustCompile(`^(response|error|saved|failed|published|replayed|lost)$`),
	"direction": regexp.MustCompile(`^(in|out)$`),
	"where":     regexp.MustCompile(`^(local|remote)$`),
	"filter":    regexp.MustCompile(`^(urls|records|digests)$`),
}

// units are the base units a name may carry, as its last word (before
// _total on a counter).
var units = []string{"seconds", "bytes"}

// checkConventions checks every trawl_ family of a scrape: names (prefix,
// _total on counters and only there, a unit as the last word, histograms
// in seconds), help, and label names and values (bounded sets; crawl one
// of crawls).
func checkConventions(t *testing.T, fams map[string]*dto.MetricFamily, crawls map[string]bool) {
	t.Helper()
	for name, f := range fams {
		if !strings.HasPrefix(name, "trawl_") {
			if !strings.HasPrefix(name, "go_") && !strings.HasPrefix(name, "process_") {
				t.Errorf("metric %s: want the trawl_ prefix", name)
			}
			continue
		}
		base := name
		switch f.GetType() {
		case dto.MetricType_COUNTER:
			if !strings.HasSuffix(name, "_total") {
				t.Errorf("counter %s: want the _total suffix", name)
			}
			base = strings.TrimSuffix(name, "_total")
		case dto.MetricType_GAUGE:
			if strings.HasSuffix(name, "_total") {
				t.Errorf("gauge %s: _total is for counters", name)
			}
		case dto.MetricType_HISTOGRAM:
			if !strings.HasSuffix(name, "_seconds") {
				t.Errorf("histogram %s: want a time in _seconds", name)
			}
		default:
			t.Errorf("metric %s: type %v, want a counter, gauge or histogram", name, f.GetType())
		}
		for _, u := range units {
			if strings.Contains(base+"_", "_"+u+"_") && !strings.HasSuffix(base, "_"+u) {
				t.Errorf("metric %s: the unit %s must be its last word (before _total)", name, u)
			}
		}
		if f.GetHelp() == "" {
			t.Errorf("metric %s has no help", name)
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				re := labelValues[l.GetName()]
				switch {
				case re == nil:
					t.Errorf("metric %s has label %s: not one of the bounded ones", name, l.GetName())
				case !re.MatchString(l.GetValue()):
					t.Errorf("metric %s has %s=%q: not in the label's bounded set %s", name, l.GetName(), l.GetValue(), re)
				case l.GetName() == "crawl" && !crawls[l.GetValue()]:
					t.Errorf("metric %s has crawl=%q: not a crawl of the node", name, l.GetValue())
				}
			}
		}
	}
}

// lint runs Prometheus's own linter (promlint, as `promtool check
// metrics` does) over the trawl_ families of a scrape.
func lint(t *testing.T, fams map[string]*dto.MetricFamily) {
	t.Helper()
	var own []*dto.MetricFamily
	for name, f := range fams {
		if strings.HasPrefix(name, "trawl_") {
			own = append(own, f)
		}
	}
	problems, err := promlint.NewWithMetricFamilies(own).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
}

// sample is one series of a scrape, found by name and labels.
func sample(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels map[string]string) *dto.Metric {
	t.Helper()
	f := fams[name]
	if f == nil {
		t.Fatalf("no metric %s in the scrape", name)
	}
next:
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for k, want := range labels {
			if have[k] != want {
				continue next
			}
		}
		return m
	}
	t.Fatalf("no %s with labels %v", name, labels)
	return nil
}

// value is a counter's or gauge's value.
func value(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	t.Helper()
	m := sample(t, fams, name, labels)
	if c := m.GetCounter(); c != nil {
		return c.GetValue()
	}
	return m.GetGauge().GetValue()
}

// TestScrapeOfACrawl crawls a small synthetic web to its end, with the
// metrics observing its fetches, then scrapes: the text parses, every name
// and label follows the conventions, and every figure is the node's.
func TestScrapeOfACrawl(t *testing.T) {
	web, err := testweb.Serve(testweb.Generate(testweb.Options{Seed: 9, Hosts: 6, Latency: -1}), testweb.ServeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	var n *node.Node
	m := New(func() Source {
		if n == nil {
			return nil
		}
		return n
	})
	n, err = node.Open(node.Options{DataDir: t.TempDir(), MinDelay: 5 * time.Millisecond, Concurrency: 8,
		AllowNets: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, Hosts: web.Resolver(),
		OnFetch: m.ObserveFetch})
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
	// The crawl has ended and its completions are durable: nothing moves
	// but the store, which the idle node still commits to now and then.
	before := n.StoreStats()
	fams := scrape(t, m)
	p, _ := n.Progress(j.ID)
	if p.Pages == 0 || p.Duplicates == 0 {
		t.Fatalf("the crawl got %d pages and found %d URLs again; want some of each", p.Pages, p.Duplicates)
	}
	id := strconv.Itoa(int(j.ID))
	checkConventions(t, fams, map[string]bool{id: true})
	lint(t, fams)

	rs, ws, ss, fs := n.RobotsStats(), n.WARCStats(), n.StoreStats(), n.FrontierStats()
	filters := n.FilterStats()
	crawl := map[string]string{"crawl": id}
	urls := map[string]string{"filter": "urls"}
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   int64
	}{
		{"trawl_filter_bytes", urls, filters["urls"].Bytes},
		{"trawl_filter_layers", urls, int64(filters["urls"].Layers)},
		{"trawl_filter_keys", urls, filters["urls"].Keys},
		{"trawl_filter_capped", urls, 0},
		{"trawl_filter_keys", map[string]string{"filter": "records"}, filters["records"].Keys},
		{"trawl_filter_keys", map[string]string{"filter": "digests"}, filters["digests"].Keys},
		{"trawl_pages_fetched_total", crawl, p.Pages},
		{"trawl_requests_total", crawl, p.Requests},
		{"trawl_fetched_bytes_total", crawl, p.Bytes},
		{"trawl_urls_discovered_total", crawl, p.Discovered},
		{"trawl_urls_duplicate_total", crawl, p.Duplicates},
		{"trawl_pages_duplicate_total", map[string]string{"crawl": id, "kind": "exact"}, p.Revisits},
		{"trawl_pages_duplicate_total", map[string]string{"crawl": id, "kind": "near"}, p.NearDuplicates},
		{"trawl_urls_out_of_scope_total", crawl, p.OutOfScope},
		{"trawl_robots_disallowed_total", crawl, p.RobotsDisallowed},
		{"trawl_responses_total", map[string]string{"crawl": id, "class": "2xx"}, p.Status["2xx"]},
		{"trawl_crawl_urls", map[string]string{"crawl": id, "state": "queued"}, int64(p.Queued)},
		{"trawl_hosts", map[string]string{"state": "known"}, int64(fs.Hosts)},
		{"trawl_frontier_urls", map[string]string{"state": "queued"}, int64(fs.Queued)},
		{"trawl_robots_cache_hits_total", nil, rs.Hits},
		{"trawl_robots_cache_misses_total", nil, rs.Misses},
		{"trawl_robots_cache_loads_total", nil, rs.Loads},
		{"trawl_robots_cache_origins", nil, int64(rs.Origins)},
		{"trawl_warc_written_bytes_total", nil, ws.Bytes},
		{"trawl_warc_records_total", nil, ws.Records},
		{"trawl_warc_files_total", nil, ws.Files},
		{"trawl_warc_syncs_total", nil, int64(ws.Syncs)},
	} {
		if got := value(t, fams, c.name, c.labels); got != float64(c.want) {
			t.Errorf("%s%v = %v, want %d (the node's)", c.name, c.labels, got, c.want)
		}
	}
	// The node's parts counted what the crawl did: the seen gate took
	// every URL it found new, in one layer (the crawl is far below the
	// URLs it was sized for).
	if f := filters["urls"]; f.Keys < p.Discovered || f.Layers != 1 || f.Bytes == 0 || filters["records"].Keys < p.Pages {
		t.Errorf("filters %+v after %d URLs discovered and %d pages: want the URL gate's keys at least those, in 1 layer, and the records' at least the pages", filters, p.Discovered, p.Pages)
	}
	if rs.Hits == 0 || rs.Misses == 0 || ws.Records < 2*p.Requests {
		t.Errorf("robots.txt hits %d, misses %d; WARC records %d for %d requests: want hits, misses and two records a response", rs.Hits, rs.Misses, ws.Records, p.Requests)
	}
	if onDisk := warcBytesOnDisk(t, n.WARCFiles()); ws.Bytes != onDisk {
		t.Errorf("trawl_warc_written_bytes_total = %d, the WARC files hold %d", ws.Bytes, onDisk)
	}

	// Every request is in the fetch histogram, once.
	var fetches uint64
	for _, s := range fams["trawl_fetch_duration_seconds"].GetMetric() {
		fetches += s.GetHistogram().GetSampleCount()
	}
	if fetches != uint64(p.Requests) {
		t.Errorf("trawl_fetch_duration_seconds counts %d fetches, the crawl sent %d requests", fetches, p.Requests)
	}
	robots := sample(t, fams, "trawl_fetch_duration_seconds", map[string]string{"kind": "robots", "result": "response"}).GetHistogram()
	if robots.GetSampleCount() != uint64(p.RobotsFetches) || robots.GetSampleSum() <= 0 {
		t.Errorf("robots.txt responses in the histogram: %d, sum %vs; the crawl got %d", robots.GetSampleCount(), robots.GetSampleSum(), p.RobotsFetches)
	}
	commits := sample(t, fams, "trawl_store_commit_duration_seconds", nil).GetHistogram()
	if got := commits.GetSampleCount(); got < before.Commits || got > ss.Commits || got == 0 {
		t.Errorf("trawl_store_commit_duration_seconds counts %d commits, the store %d to %d", got, before.Commits, ss.Commits)
	}
}

// TestScrapeOfAContinuousCrawl: a crawl's recrawl counters are scraped
// for every crawl, and a continuous crawl's freshness gauges once its
// schedule has figures, not before.
func TestScrapeOfAContinuousCrawl(t *testing.T) {
	var n *node.Node
	m := New(func() Source { return n })
	n, err := node.Open(node.Options{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	j, err := n.Submit(job.Spec{Seeds: []string{"http://a.test/"}, Continuous: true})
	if err != nil {
		t.Fatal(err)
	}
	id := strconv.Itoa(int(j.ID))
	fams := scrape(t, m)
	for _, name := range []string{"trawl_recrawl_urls", "trawl_crawl_freshness_ratio", "trawl_crawl_mean_age_seconds"} {
		if fams[name] != nil {
			t.Errorf("%s before the schedule's first scan", name)
		}
	}
	j.Stats.Recrawls.Add(12)
	j.Stats.NotModified.Add(8)
	j.Stats.Changed.Add(3)
	j.Stats.SetFreshness(job.Freshness{At: time.Now(), Scheduled: 40, Due: 6, Overdue: 2, Freshness: 0.85, MeanAge: 150 * time.Second})
	fams = scrape(t, m)
	checkConventions(t, fams, map[string]bool{id: true})
	lint(t, fams)
	crawl := map[string]string{"crawl": id}
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"trawl_recrawls_total", crawl, 12},
		{"trawl_recrawls_not_modified_total", crawl, 8},
		{"trawl_recrawls_changed_total", crawl, 3},
		{"trawl_recrawl_urls", map[string]string{"crawl": id, "state": "scheduled"}, 40},
		{"trawl_recrawl_urls", map[string]string{"crawl": id, "state": "due"}, 6},
		{"trawl_recrawl_urls", map[string]string{"crawl": id, "state": "overdue"}, 2},
		{"trawl_crawl_freshness_ratio", crawl, 0.85},
		{"trawl_crawl_mean_age_seconds", crawl, 150},
	} {
		if got := value(t, fams, c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
}

// warcBytesOnDisk sums the sizes of files (WARCFiles: the one being
// written carries warc.OpenSuffix).
func warcBytesOnDisk(t *testing.T, files []string) int64 {
	t.Helper()
	var sum int64
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			st, err = os.Stat(f + warc.OpenSuffix)
		}
		if err != nil {
			t.Fatal(err)
		}
		sum += st.Size()
	}
	return sum
}

// TestScrapeBeforeReady: while the node loads, a scrape parses and holds
// the runtime's metrics, and of trawl's only the fetch histogram, empty.
func TestScrapeBeforeReady(t *testing.T) {
	fams := scrape(t, New(func() Source { return nil }))
	checkConventions(t, fams, nil)
	for name, f := range fams {
		if !strings.HasPrefix(name, "trawl_") {
			continue
		}
		if name != "trawl_fetch_duration_seconds" {
			t.Errorf("metric %s before the node is ready", name)
			continue
		}
		if len(f.GetMetric()) != 4 {
			t.Errorf("%s has %d series, want the 4 kinds x results, each empty", name, len(f.GetMetric()))
		}
		for _, m := range f.GetMetric() {
			if n := m.GetHistogram().GetSampleCount(); n != 0 {
				t.Errorf("%s counts %d fetches before the node is ready", name, n)
			}
		}
	}
	if fams["go_goroutines"] == nil {
		t.Error("no go_goroutines: the runtime's collector is missing")
	}
}

// TestObserveFetch: an event lands in its kind's and result's series, in
// the bucket of its duration.
func TestObserveFetch(t *testing.T) {
	m := New(func() Source { return nil })
	for _, ev := range []node.FetchEvent{
		{Status: 200, Duration: 30 * time.Millisecond},
		{Status: 404, Duration: 30 * time.Millisecond},
		{Robots: true, Status: 200, Duration: 3 * time.Millisecond},
		{Class: "timeout", Duration: 61 * time.Second},
	} {
		m.ObserveFetch(ev)
	}
	fams := scrape(t, m)
	for _, c := range []struct {
		kind, result string
		count        uint64
		le           float64 // the smallest bound that counts them all
	}{
		{"page", "response", 2, 0.05},
		{"page", "error", 1, 0}, // past the top bound: in +Inf only
		{"robots", "response", 1, 0.005},
		{"robots", "error", 0, 0.005},
	} {
		h := sample(t, fams, "trawl_fetch_duration_seconds", map[string]string{"kind": c.kind, "result": c.result}).GetHistogram()
		if h.GetSampleCount() != c.count {
			t.Errorf("%s %s: %d fetches, want %d", c.kind, c.result, h.GetSampleCount(), c.count)
		}
		for _, b := range h.GetBucket() {
			want := uint64(0)
			if math.IsInf(b.GetUpperBound(), 1) || c.le > 0 && b.GetUpperBound() >= c.le {
				want = c.count
			}
			if b.GetCumulativeCount() != want {
				t.Errorf("%s %s: bucket le=%v counts %d, want %d", c.kind, c.result, b.GetUpperBound(), b.GetCumulativeCount(), want)
			}
		}
	}
}
