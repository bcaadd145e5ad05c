package node

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/internal/store"
	"github.com/trawl-crawler/trawl/internal/store/urlstate"
	"github.com/trawl-crawler/trawl/internal/testkit/storetest"
	"github.com/trawl-crawler/trawl/internal/testkit/testweb"
	"github.com/trawl-crawler/trawl/job"
)

// storedURLs reads every 'u' value of a finished crawl's store, by URL.
func storedURLs(t *testing.T, dataDir string) map[string][]byte {
	t.Helper()
	db := storetest.OpenDir(t, filepath.Join(dataDir, "state"), store.Options{})
	defer db.Close()
	it, err := db.NewIter(store.KindPrefix(store.KindURL))
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	out := map[string][]byte{}
	for it.First(); it.Valid(); it.Next() {
		_, u, err := store.DecodeURLKey(it.Key())
		if err != nil {
			t.Fatal(err)
		}
		out[u] = bytes.Clone(it.Value())
	}
	if err := it.Error(); err != nil {
		t.Fatal(err)
	}
	return out
}

// storedSeen reads every seen key of a finished crawl's store: the URLs
// each job queued.
func storedSeen(t *testing.T, dataDir string) map[string]bool {
	t.Helper()
	db := storetest.OpenDir(t, filepath.Join(dataDir, "state"), store.Options{})
	defer db.Close()
	it, err := db.NewIter(store.KindPrefix(store.KindSeen))
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	out := map[string]bool{}
	for it.First(); it.Valid(); it.Next() {
		k, err := store.DecodeKey(it.Key())
		if err != nil {
			t.Fatal(err)
		}
		out[k.URL] = true
	}
	if err := it.Error(); err != nil {
		t.Fatal(err)
	}
	return out
}

// served is what a URL of the synthetic web answers.
type served struct {
	status int
	ctype  string
	body   []byte
}

// fetchDirect GETs urls from the synthetic web, redirects not followed.
func fetchDirect(t *testing.T, srv *testweb.Server, urls []string) map[string]served {
	t.Helper()
	hosts := srv.Resolver()
	var d net.Dialer
	client := &http.Client{
		Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, port, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, err
			}
			if ips := hosts[host]; len(ips) > 0 {
				addr = net.JoinHostPort(ips[0].String(), port)
			}
			return d.DialContext(ctx, network, addr)
		}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       30 * time.Second,
	}
	defer client.CloseIdleConnections()
	out := make(map[string]served, len(urls))
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for _, u := range urls {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			resp, err := client.Get(u)
			if err != nil {
				t.Errorf("GET %s: %v", u, err)
				return
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Errorf("GET %s: read body: %v", u, err)
				return
			}
			mu.Lock()
			out[u] = served{resp.StatusCode, resp.Header.Get("Content-Type"), body}
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}

// TestURLStateOfCrawledWeb crawls a synthetic web and checks the 'u'
// record of every page the web's log shows fetched against what the web
// serves for it; URLs queued but never fetched have a seen key and no 'u'
// record.
func TestURLStateOfCrawledWeb(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a crawl of a synthetic web; the full suite runs it")
	}
	t.Parallel()
	h := newHarness(t, testweb.Options{Seed: 21, Hosts: 20, Latency: -1}, 10*time.Millisecond)
	sum := h.run(t, context.Background())
	if sum.StopReason != "exhausted" {
		t.Fatalf("StopReason = %q, want exhausted", sum.StopReason)
	}
	jobID := sum.Job
	// Fetches and last status per canonical URL, from the web's log.
	fetches := map[string]int{}
	lastStatus := map[string]int{}
	for _, r := range h.srv.Log() {
		if strings.HasPrefix(r.Path, "/robots") || r.Path == "/sitemap.xml" { // no pages: no URL records
			continue
		}
		u := canonicalOf(t, fmt.Sprintf("http://%s:%d%s", r.Host, h.srv.Port(), r.Path))
		fetches[u]++
		lastStatus[u] = r.Status
	}
	if len(fetches) < 50 {
		t.Fatalf("the web's log shows %d pages fetched, want a crawl of at least 50", len(fetches))
	}
	urls := make([]string, 0, len(fetches))
	for u := range fetches {
		urls = append(urls, u)
	}
	want := fetchDirect(t, h.srv, urls)
	stored := storedURLs(t, h.opts.DataDir)

	html := 0
	for _, u := range urls {
		v, ok := stored[u]
		if !ok {
			t.Errorf("%s: fetched but no 'u' key", u)
			continue
		}
		r, err := urlstate.Decode(v)
		if err != nil {
			t.Errorf("%s: Decode(%x): %v", u, v, err)
			continue
		}
		w := want[u]
		if r.Job != jobID {
			t.Errorf("%s: record names job %d, want %d", u, r.Job, jobID)
		}
		if int(r.Fetches) != fetches[u] || r.Status != lastStatus[u] || r.Status != w.status || r.Error != "" {
			t.Errorf("%s: record fetches %d status %d error %q; want %d fetches (web's log), status %d",
				u, r.Fetches, r.Status, r.Error, fetches[u], lastStatus[u])
		}
		if r.LastFetch.IsZero() || len(r.History) != min(fetches[u], urlstate.HistoryLen) {
			t.Errorf("%s: LastFetch %v, %d history events; want a time and %d", u, r.LastFetch, len(r.History), min(fetches[u], urlstate.HistoryLen))
		}
		// Every body is read, whatever its type (PDFs, images).
		if d := sha256.Sum256(w.body); !r.HasDigest || r.Digest != d {
			t.Errorf("%s: Digest %x (HasDigest %v), want sha256 of the served body %x", u, r.Digest, r.HasDigest, d)
		}
		isHTML := strings.HasPrefix(w.ctype, "text/html") && w.status == http.StatusOK
		if isHTML {
			html++
			if r.SimHash == 0 {
				t.Errorf("%s: SimHash 0 for an HTML page", u)
			}
		}
		if !strings.HasPrefix(w.ctype, "text/html") && r.SimHash != 0 {
			t.Errorf("%s: SimHash %#x for a %s response, want 0", u, r.SimHash, w.ctype)
		}
	}
	if html == 0 {
		t.Error("no HTML page among the fetched ones")
	}
	for u := range stored {
		if fetches[u] == 0 {
			t.Errorf("%s: never fetched, but it has a 'u' record", u)
		}
	}
	seenOnly, disallowed := 0, 0
	for u := range storedSeen(t, h.opts.DataDir) {
		if fetches[u] > 0 {
			continue
		}
		seenOnly++
		if h.srv.Web().Disallowed(u, "trawl") {
			disallowed++
		}
	}
	if disallowed == 0 {
		t.Errorf("no URL disallowed by robots.txt among the %d queued but never fetched; the test needs some", seenOnly)
	}
	t.Logf("%d URLs fetched (%d HTML), %d only queued (%d disallowed by robots.txt)", len(fetches), html, seenOnly, disallowed)
}

// TestURLStateValidatorsAndErrors checks that ETag and Last-Modified are
// kept and that failed fetches are recorded with their class.
func TestURLStateValidatorsAndErrors(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a crawl of a synthetic web; the full suite runs it")
	}
	t.Parallel()
	const lastMod = "Mon, 30 Nov 2026 10:00:00 GMT"
	pages := map[string]string{
		"/":  `<html><body><p>index page</p><a href="/a">a</a> <a href="/b">b</a> <a href="/cut">cut</a> <a href="/slow">slow</a> <a href="/gone">gone</a></body></html>`,
		"/a": "<html><body><p>page a has validators</p></body></html>",
		"/b": "plain text without validators",
	}
	var mu sync.Mutex
	hits := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Path]++
		mu.Unlock()
		switch r.URL.Path {
		case "/robots.txt", "/gone":
			http.NotFound(w, r)
		case "/a":
			w.Header().Set("ETag", `"v1-a"`)
			w.Header().Set("Last-Modified", lastMod)
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, pages[r.URL.Path])
		case "/b":
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, pages[r.URL.Path])
		case "/cut": // not an HTTP response
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				io.WriteString(conn, "no status line here\r\n\r\n")
				conn.Close()
			}
		case "/slow": // answers after the crawler gave up
			<-r.Context().Done()
		default:
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, pages["/"])
		}
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	base := "http://site.test:" + port
	dir := t.TempDir()
	h := &harness{
		opts: Options{
			DataDir:      dir,
			MinDelay:     5 * time.Millisecond,
			Concurrency:  4,
			AllowNets:    loopback,
			Hosts:        map[string][]netip.Addr{"site.test": {netip.MustParseAddr("127.0.0.1")}},
			FetchTimeout: 300 * time.Millisecond,
		},
		spec: job.Spec{Seeds: []string{base + "/"}},
	}
	h.run(t, context.Background())
	stored := storedURLs(t, dir)
	attempts := map[string]int{} // the crawler's own count: one crawl-log line per attempt
	timeouts := map[string]int{} // of those, the ones its time-out ended
	for _, e := range readCrawlLog(t, h) {
		if e.Dropped == "" {
			attempts[e.URL]++
			if e.Status == 0 && e.Error == "timeout" {
				timeouts[e.URL]++
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, c := range []struct {
		path, etag, lastMod string
		status              int
		errClass            string
		body                string // "" when no digest is expected
		simhash             bool
	}{
		{"/", "", "", 200, "", pages["/"], true},
		{"/a", `"v1-a"`, lastMod, 200, "", pages["/a"], true},
		{"/b", "", "", 200, "", pages["/b"], false},
		{"/gone", "", "", 404, "", "404 page not found\n", false},
		{"/cut", "", "", 0, "protocol", "", false},
		{"/slow", "", "", 0, "timeout", "", false},
	} {
		u := base + c.path
		r, err := urlstate.Decode(stored[u])
		if err != nil {
			t.Errorf("%s: Decode(%x): %v", u, stored[u], err)
			continue
		}
		if r.ETag != c.etag || r.LastModified != c.lastMod || r.Status != c.status || r.Error != c.errClass {
			t.Errorf("%s: ETag %q Last-Modified %q status %d error %q; want %q %q %d %q",
				u, r.ETag, r.LastModified, r.Status, r.Error, c.etag, c.lastMod, c.status, c.errClass)
		}
		// Fetches counts attempts, as the crawl log does. The server sees
		// each of them, except that an attempt which times out may expire
		// before its request reaches the handler (seen under -race load:
		// 3 attempts, 2 requests). Under load any page's attempt may time
		// out (300 ms) and be retried, not /slow's alone.
		if int(r.Fetches) != attempts[u] || r.Fetches == 0 {
			t.Errorf("%s: Fetches = %d, want %d (attempts in the crawl log)", u, r.Fetches, attempts[u])
		}
		if seen := hits[c.path]; seen > int(r.Fetches) || seen < int(r.Fetches)-timeouts[u] {
			t.Errorf("%s: the server saw %d requests, the record counts %d fetches, %d of them timed out", u, seen, r.Fetches, timeouts[u])
		}
		if c.body != "" && (!r.HasDigest || r.Digest != sha256.Sum256([]byte(c.body))) {
			t.Errorf("%s: Digest %x (HasDigest %v), want sha256 of %q", u, r.Digest, r.HasDigest, c.body)
		}
		if c.body == "" && r.HasDigest {
			t.Errorf("%s: HasDigest after failed fetches only", u)
		}
		if (r.SimHash != 0) != c.simhash {
			t.Errorf("%s: SimHash %#x, want non-zero = %v", u, r.SimHash, c.simhash)
		}
	}
}

// TestURLStateAcrossRestart crawls a web, closes the node, and crawls it
// again with a new job on the same data directory: each URL's record
// counts the fetches of both runs, as the web's log does. The second run
// reads records the first wrote, so the filter that lets a first fetch
// skip that read (State.Fetched) must have loaded them.
func TestURLStateAcrossRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a crawl of a synthetic web; the full suite runs it")
	}
	t.Parallel()
	h := newHarness(t, testweb.Options{Seed: 22, Hosts: 8, Latency: -1}, 5*time.Millisecond)
	for run := range 2 {
		h.spec.Name = fmt.Sprintf("crawl %d", run)
		sum := h.run(t, context.Background())
		if sum.StopReason != "exhausted" {
			t.Fatalf("run %d: StopReason = %q, want exhausted", run, sum.StopReason)
		}
		t.Logf("run %d: job %d, %d pages", run, sum.Job, sum.Pages)
	}
	fetches := map[string]int{}
	for _, r := range h.srv.Log() {
		if !strings.HasPrefix(r.Path, "/robots") && r.Path != "/sitemap.xml" { // no pages: no URL records
			fetches[canonicalOf(t, fmt.Sprintf("http://%s:%d%s", r.Host, h.srv.Port(), r.Path))]++
		}
	}
	stored := storedURLs(t, h.opts.DataDir)
	twice := 0
	for u, n := range fetches {
		r, err := urlstate.Decode(stored[u])
		if err != nil {
			t.Errorf("%s: %v", u, err)
			continue
		}
		if int(r.Fetches) != n {
			t.Errorf("%s: record counts %d fetches, the web's log %d", u, r.Fetches, n)
		}
		if n >= 2 {
			twice++
		}
	}
	if twice < 20 {
		t.Errorf("%d URLs fetched in both runs, want a web of at least 20 crawled twice", twice)
	}
}
