package node

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/crawllog"
	"github.com/trawl-crawler/trawl/job"
)

// TestOneShotCrawlEndsDespiteLongWaits: hosts that ask a one-shot crawl to
// wait an hour (robots.txt 503 with Retry-After: 3600, pages answering 429
// with Retry-After: 3600 or a date an hour ahead) and a host that fails
// until its backoff grows long do not keep the crawl from ending: once
// nothing else may be fetched within MaxWait, their URLs are given up,
// counted and logged, and the crawl ends. No host is asked again before
// the time it gave. Before the liveness rule the crawl idled for the hour.
func TestOneShotCrawlEndsDespiteLongWaits(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a crawl of a synthetic web; the full suite runs it")
	}
	t.Parallel()
	type request struct {
		host, path string
		at         time.Time
	}
	var (
		mu  sync.Mutex
		log []request
	)
	retryDate := time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := net.SplitHostPort(r.Host)
		mu.Lock()
		log = append(log, request{host, r.URL.Path, time.Now()})
		mu.Unlock()
		page := func() {
			w.Header().Set("Content-Type", "text/html")
			var b strings.Builder
			b.WriteString("<html><body><p>page " + r.URL.Path + " of " + host + "</p>")
			if r.URL.Path == "/" {
				for i := range 4 {
					fmt.Fprintf(&b, `<a href="/p%d">p%d</a> `, i, i)
				}
			}
			io.WriteString(w, b.String())
		}
		switch {
		case host == "robots503.test" && r.URL.Path == "/robots.txt":
			w.Header().Set("Retry-After", "3600")
			w.WriteHeader(http.StatusServiceUnavailable)
		case r.URL.Path == "/robots.txt", r.URL.Path == "/sitemap.xml":
			http.NotFound(w, r)
		case host == "ra.test" && r.URL.Path != "/":
			w.Header().Set("Retry-After", "3600")
			w.WriteHeader(http.StatusTooManyRequests)
		case host == "radate.test" && r.URL.Path != "/":
			w.Header().Set("Retry-After", retryDate)
			w.WriteHeader(http.StatusServiceUnavailable)
		case host == "failing.test" && r.URL.Path != "/":
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			page()
		}
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	hosts := map[string][]netip.Addr{}
	var seeds []string
	for _, h := range []string{"robots503.test", "ra.test", "radate.test", "failing.test", "ok.test"} {
		hosts[h] = []netip.Addr{netip.MustParseAddr("127.0.0.1")}
		seeds = append(seeds, "http://"+h+":"+port+"/")
	}
	const maxWait = 2 * time.Second
	dir := t.TempDir()
	h := &harness{
		opts: Options{
			DataDir:          dir,
			MinDelay:         50 * time.Millisecond,
			MaxDelay:         10 * time.Minute,
			MaxAdaptiveDelay: time.Second,
			Concurrency:      8,
			AllowNets:        loopback,
			Hosts:            hosts,
		},
		// RobotsGiveUp 0, as an API crawl has it: only MaxWait ends the
		// waits.
		spec: job.Spec{Name: "crawl", Seeds: seeds, MaxWait: maxWait},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := time.Now()
	var state job.State
	var reason string
	h.ended = func(n *Node, j *job.Job) { state, reason = j.State() }
	sum := h.run(t, ctx)
	took := time.Since(start)
	if ctx.Err() != nil {
		t.Fatalf("the crawl did not end by itself in 60 s (queued %d, in flight %d)", sum.Queued, sum.InFlight)
	}
	if state != job.Finished || reason != job.ReasonExhausted {
		t.Errorf("job ended %s (%s), want finished (exhausted)", state, reason)
	}
	// The failing host backs off 100 ms, 200 ms, ... past 2 s: about 4 s
	// of its own waits, then at most MaxWait + giveUpEvery idle.
	if took > 20*time.Second {
		t.Errorf("the crawl took %v; its bound here is about %v", took, 4*time.Second+maxWait+giveUpEvery)
	}
	// ra.test and radate.test give up their 4 pages (the first, whose
	// retry was due in an hour, too), robots503.test its seed, and
	// failing.test the pages left (its retries too, at its queue's tail)
	// once failures in a row took its backoff past MaxWait.
	if sum.WaitGaveUpOn != 4 || sum.WaitGaveUp < 10 || sum.WaitGaveUp > 13 {
		t.Errorf("gave up %d URLs on %d hosts, want 10 to 13 on 4", sum.WaitGaveUp, sum.WaitGaveUpOn)
	}
	mu.Lock()
	defer mu.Unlock()
	// Nothing was asked again of a host that said to wait an hour.
	asked := map[string]int{}
	for _, r := range log {
		asked[r.host+r.path]++
	}
	for _, c := range []struct {
		key  string
		want int
	}{
		{"robots503.test/robots.txt", 1}, {"robots503.test/", 0},
		{"ra.test/", 1}, {"ra.test/p0", 1},
		{"radate.test/", 1}, {"radate.test/p0", 1},
		{"ok.test/p3", 1},
	} {
		if asked[c.key] != c.want {
			t.Errorf("%s requested %d times, want %d", c.key, asked[c.key], c.want)
		}
	}
	if n := asked["ra.test/p1"] + asked["ra.test/p2"] + asked["ra.test/p3"]; n != 0 {
		t.Errorf("ra.test asked %d more times after its Retry-After: 3600", n)
	}
	// Each URL given up is in the crawl log, with why.
	why := map[string]int{}
	err := crawllog.Scan(filepath.Join(dir, "logs"), crawllog.Filter{}, func(e crawllog.Entry) error {
		if e.Dropped == crawllog.DropWait {
			why[e.Detail]++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if why["Retry-After"] != 8 || why["robots.txt unavailable"] != 1 || why["backoff"] < 1 || why["backoff"] > 4 || len(why) != 3 {
		t.Errorf("crawl log drops for waits: %v, want 8 Retry-After, 1 robots.txt unavailable, 1 to 4 backoff", why)
	}
	if int64(why["Retry-After"]+why["robots.txt unavailable"]+why["backoff"]) != sum.WaitGaveUp {
		t.Errorf("the crawl log has %v drops for waits, the summary %d", why, sum.WaitGaveUp)
	}
}

// TestProgressSaysWhatTheCrawlWaitsFor: a crawl whose only host answers
// robots.txt with 503 and Retry-After: 3600, and that waits for ever
// (MaxWait 0), says so in its progress: waiting about an hour for 1 host,
// for a robots.txt Retry-After.
func TestProgressSaysWhatTheCrawlWaitsFor(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "3600")
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	n, err := Open(Options{DataDir: t.TempDir(), MinDelay: 10 * time.Millisecond, AllowNets: loopback,
		Hosts: map[string][]netip.Addr{"parked.test": {netip.MustParseAddr("127.0.0.1")}}})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	j, err := n.Submit(job.Spec{Seeds: []string{"http://parked.test:" + port + "/"}})
	if err != nil {
		t.Fatal(err)
	}
	n.Start()
	deadline := time.Now().Add(20 * time.Second)
	for {
		p, _ := n.Progress(j.ID)
		if w := p.Waiting; w != nil {
			if w.Reason != "robots-retry-after" || w.Hosts != 1 || w.Seconds < 3500 || w.Seconds > 3600 {
				t.Fatalf("waiting %+v, want about 3600 s for 1 host, reason robots-retry-after", *w)
			}
			if got, want := w.String(), "waiting 1h00m for 1 host (robots.txt Retry-After)"; got != want && got != "waiting 59m for 1 host (robots.txt Retry-After)" {
				t.Errorf("said %q, want %q", got, want)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 20 s the progress still says nothing of the wait: %+v", p)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestProgressSaysWhatABusyNodesCrawlWaitsFor: while another crawl keeps
// the node busy, a crawl whose only host is parked by a robots.txt
// Retry-After still says what it waits for. The busy crawl's host asks
// for a Crawl-delay of 2 s, so between its fetches the whole node is idle
// and the soonest host it waits for is the busy crawl's: the parked crawl
// must still say it waits for its own host, not for the other crawl's
// (under load the busy host's gap had grown past a second for slow
// responses and the parked crawl reported that).
func TestProgressSaysWhatABusyNodesCrawlWaitsFor(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := net.SplitHostPort(r.Host)
		switch {
		case host == "parked.test":
			w.Header().Set("Retry-After", "3600")
			w.WriteHeader(http.StatusServiceUnavailable)
		case r.URL.Path == "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nCrawl-delay: 2\n")
		case r.URL.Path == "/sitemap.xml":
			http.NotFound(w, r)
		default: // an endless chain of pages, one every gap
			n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/"))
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, `<html><body><p>page %d</p><a href="/%d">next</a></body></html>`, n, n+1)
		}
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	lo := []netip.Addr{netip.MustParseAddr("127.0.0.1")}
	// The adaptive gap is capped as in the crawl harness: under load a
	// response of a second would otherwise hold busy.test's second page
	// ten seconds past its Crawl-delay.
	n, err := Open(Options{DataDir: t.TempDir(), MinDelay: 20 * time.Millisecond, AllowNets: loopback,
		MaxAdaptiveDelay: 100 * time.Millisecond,
		Hosts:            map[string][]netip.Addr{"parked.test": lo, "busy.test": lo}})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	busy, err := n.Submit(job.Spec{Name: "busy", Seeds: []string{"http://busy.test:" + port + "/0"}})
	if err != nil {
		t.Fatal(err)
	}
	j, err := n.Submit(job.Spec{Name: "parked", Seeds: []string{"http://parked.test:" + port + "/"}})
	if err != nil {
		t.Fatal(err)
	}
	n.Start()
	deadline := time.Now().Add(60 * time.Second)
	for {
		b, _ := n.Progress(busy.ID)
		p, _ := n.Progress(j.ID)
		if w := p.Waiting; w != nil && b.Pages >= 2 {
			if w.Reason != "robots-retry-after" || w.Seconds < 3500 || w.Seconds > 3600 {
				t.Fatalf("waiting %+v, want about 3600 s, reason robots-retry-after", *w)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 60 s the parked crawl's progress says %+v (want what it waits for), the busy one has %d pages (want 2)", p, b.Pages)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
