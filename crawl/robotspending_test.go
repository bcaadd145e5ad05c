package crawl

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/robots"
	"github.com/trawl-crawler/trawl/store"
)

func robotsAnswer(at time.Time) robots.FetchResult {
	return robots.FetchResult{Status: 200, Body: []byte("User-agent: *\nCrawl-delay: 1\n"), At: at.UTC()}
}

// TestRobotsPendingAfterCrash: a run that sent a robots.txt request and
// was killed before keeping the answer leaves a pending record. The next
// run must leave that host alone until MaxDelay after the lost request
// (its Crawl-delay is unknown), and must not wait for a host whose
// robots.txt was answered and kept.
func TestRobotsPendingAfterCrash(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	first := map[string]time.Time{} // host → first request this run
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		host, _, _ := net.SplitHostPort(r.Host)
		if _, ok := first[host]; !ok {
			first[host] = time.Now()
		}
		mu.Unlock()
		if r.URL.Path == "/robots.txt" {
			io.WriteString(w, "User-agent: *\nCrawl-delay: 1\n")
			return
		}
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<html><body>leaf</body></html>")
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	lost, kept := "http://lost.test:"+port, "http://kept.test:"+port
	dir := t.TempDir()

	// The state a killed run leaves: lost.test's robots.txt request was
	// sent 300 ms ago and never answered; kept.test's answer was kept.
	sent := time.Now().Add(-300 * time.Millisecond)
	db, err := store.Open(filepath.Join(dir, "state"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b := db.NewBatch()
	b.Set(store.RobotsKey("lost.test", lost), encodeRobotsPending(0, sent))
	b.Set(store.RobotsKey("kept.test", kept), encodeRobots(robotsAnswer(time.Now())))
	if err := db.Commit(b); err != nil {
		t.Fatal(err)
	}
	db.Close()

	const maxDelay = 1500 * time.Millisecond
	c, err := New(Options{
		Seeds:     []string{lost + "/", kept + "/"},
		DataDir:   dir,
		MinDelay:  10 * time.Millisecond,
		MaxDelay:  maxDelay,
		AllowNets: loopback,
		Hosts: map[string][]netip.Addr{
			"lost.test": {netip.MustParseAddr("127.0.0.1")},
			"kept.test": {netip.MustParseAddr("127.0.0.1")},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if at, ok := first["lost.test"]; !ok || at.Before(sent.Add(maxDelay)) {
		t.Errorf("lost.test first contacted %v after the lost request, want at least MaxDelay %v", at.Sub(sent), maxDelay)
	}
	if at, ok := first["kept.test"]; !ok || at.Sub(start) > maxDelay/2 {
		t.Errorf("kept.test first contacted %v after start, want no wait (its answer was kept)", at.Sub(start))
	}
}
