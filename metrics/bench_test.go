package metrics

import (
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/trawl-crawler/trawl/api"
	"github.com/trawl-crawler/trawl/frontier"
	"github.com/trawl-crawler/trawl/job"
	"github.com/trawl-crawler/trawl/node"
)

// benchHosts is the size of the benchmarks' node: a
// stats call and a scrape must stay cheap with a million hosts known. Run with
// -args -hosts N to compare with N.
var benchHosts = flag.Int("hosts", 1_000_000, "hosts known to the benchmarks' node")

// fixture is a node whose frontier knows benchHosts hosts, one queued URL
// each, spread over three running crawls; built once per process by
// benchNode, closed by TestMain. It is never started (its hosts do not
// resolve), and its clock is a fake one that the builder moves on so that
// every host is due: the frontier's worst case for counting ready hosts.
var fixture struct {
	once  sync.Once
	n     *node.Node
	dir   string
	crawl job.ID
	err   error
}

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// benchNode returns the benchmarks' node, building it on first use: the
// crawls are submitted to a node, which is closed; their hosts' URLs are
// queued through the node's state opened on its own (as `trawl bench
// frontier` does, without the seen gate); the node is opened again,
// loading every host.
func benchNode(b *testing.B) *node.Node {
	b.Helper()
	fixture.once.Do(func() { fixture.err = buildBenchNode(b) })
	if fixture.err != nil {
		b.Fatal(fixture.err)
	}
	return fixture.n
}

func buildBenchNode(b *testing.B) error {
	dir, err := os.MkdirTemp("", "trawl-metrics-bench-")
	if err != nil {
		return err
	}
	fixture.dir = dir
	clock := &fakeClock{t: time.Now()}
	opts := node.Options{DataDir: dir, Now: clock.now, ExpectedURLs: uint(2 * *benchHosts), Logger: slog.New(slog.DiscardHandler)}
	n, err := node.Open(opts)
	if err != nil {
		return err
	}
	var crawls []job.ID
	for c := range 3 {
		j, err := n.Submit(job.Spec{Seeds: []string{fmt.Sprintf("http://seed%d.bench.test/", c)}, Domains: []string{"bench.test"}})
		if err != nil {
			n.Close()
			return err
		}
		crawls = append(crawls, j.ID)
	}
	if err := n.Close(); err != nil {
		return err
	}

	start := time.Now()
	st, err := node.OpenState(node.StateOptions{Dir: filepath.Join(dir, "state"), Frontier: frontier.Options{Levels: 3}, Logger: opts.Logger})
	if err != nil {
		return err
	}
	batch := make([]frontier.Item, 0, 1000)
	for h := range *benchHosts {
		host := "h" + strconv.Itoa(h) + ".bench.test"
		batch = append(batch, frontier.Item{URL: "http://" + host + "/", Host: host, Job: uint32(crawls[h%len(crawls)]), Depth: 1, Level: 1})
		if len(batch) == cap(batch) || h == *benchHosts-1 {
			if err := <-st.Frontier.Add(nil, batch...); err != nil {
				st.Close()
				return err
			}
			batch = batch[:0]
		}
	}
	if err := st.Close(); err != nil {
		return err
	}
	queued := time.Since(start)

	start = time.Now()
	if fixture.n, err = node.Open(opts); err != nil {
		return err
	}
	opened := time.Since(start)
	fixture.crawl = crawls[0]
	// Every host waits one gap after a start-up; let them all come due,
	// and have the frontier count them once.
	clock.advance(time.Minute)
	start = time.Now()
	fs := fixture.n.FrontierStats()
	first := time.Since(start)
	if fs.Hosts < *benchHosts || fs.Ready < *benchHosts {
		return fmt.Errorf("the node knows %d hosts, %d ready; want %d of each", fs.Hosts, fs.Ready, *benchHosts)
	}
	b.Logf("%d hosts queued in %v, node opened in %v; the first stats after every host came due at once took %v", fs.Hosts, queued.Round(time.Millisecond), opened.Round(time.Millisecond), first.Round(time.Microsecond))
	return nil
}

// closeBenchNode closes the benchmarks' node, if one was built, and removes
// its data.
func closeBenchNode() {
	if fixture.n != nil {
		fixture.n.Close()
	}
	if fixture.dir != "" {
		os.RemoveAll(fixture.dir)
	}
}

// serve runs one request through h and returns the recorder.
func serve(b *testing.B, h http.Handler, path string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	if rec.Code != http.StatusOK {
		b.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
	}
	return rec
}

// BenchmarkScrape: one GET /metrics of a node that knows -hosts
// hosts (a million), every one ready, in three crawls: "node" the node's
// collector alone, "all" the whole registry (with the Go runtime's and
// the process's collectors), as Prometheus scrapes it. The text is
// written to a recorder, not a socket.
func BenchmarkScrape(b *testing.B) {
	n := benchNode(b)
	src := func() Source { return n }
	m := New(src)
	for range 1000 {
		m.ObserveFetch(node.FetchEvent{Status: 200, Duration: 80 * time.Millisecond})
	}
	own := prometheus.NewRegistry()
	own.MustRegister(newCollector(src))
	for _, c := range []struct {
		name string
		h    http.Handler
	}{
		{"node", promhttp.HandlerFor(own, promhttp.HandlerOpts{})},
		{"all", m.Handler()},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			var size int
			for b.Loop() {
				size = serve(b, c.h, "/metrics").Body.Len()
			}
			b.ReportMetric(float64(size), "bytes/scrape")
			b.ReportMetric(float64(n.FrontierStats().Hosts), "hosts")
		})
	}
}

// BenchmarkStatsCall: one GET /v1/crawls/{id}/stats (package api, over
// the node's Progress: the job's counters and the frontier's) on the node
// of BenchmarkScrape.
func BenchmarkStatsCall(b *testing.B) {
	n := benchNode(b)
	h := api.New(api.Options{Node: func() api.Node { return n }})
	path := fmt.Sprintf("/v1/crawls/%d/stats", fixture.crawl)
	b.ReportAllocs()
	for b.Loop() {
		serve(b, h, path)
	}
	b.ReportMetric(float64(n.FrontierStats().Hosts), "hosts")
}
