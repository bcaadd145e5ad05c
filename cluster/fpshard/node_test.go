package fpshard_test

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/cluster/fpshard"
	"github.com/trawl-crawler/trawl/internal/partition"
	"github.com/trawl-crawler/trawl/job"
	"github.com/trawl-crawler/trawl/node"
)

// copiesServer serves one page on every host: the same bytes on a.test
// and b.test, and on c.test the same text with one word changed.
func copiesServer(t *testing.T) (port string) {
	t.Helper()
	var words []string
	for i := range 120 {
		words = append(words, fmt.Sprintf("word%d", i*7919%1000))
	}
	page := func(text string) string {
		return "<!doctype html><html><head><title>copies</title></head><body><p>" + text + "</p></body></html>"
	}
	same := page(strings.Join(words, " "))
	words[60] = "changed"
	near := page(strings.Join(words, " "))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/page.html" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		host, _, _ := net.SplitHostPort(r.Host)
		if host == "c.test" {
			fmt.Fprint(w, near)
			return
		}
		fmt.Fprint(w, same)
	}))
	t.Cleanup(srv.Close)
	_, port, _ = net.SplitHostPort(srv.Listener.Addr().String())
	return port
}

// crawl runs one job of n over seeds and waits for its end.
func crawl(t *testing.T, n *node.Node, seeds ...string) *job.Job {
	t.Helper()
	j, err := n.Submit(job.Spec{Name: "copies", Seeds: seeds, Domains: []string{"a.test", "b.test", "c.test"}, RobotsGiveUp: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-j.Ended():
	case <-time.After(30 * time.Second):
		t.Fatal("the crawl did not end in 30 s")
	}
	return j
}

// TestNodesShareDuplicates: two nodes on one fleet's content index, the
// first holding every fingerprint partition, the second none. A page the
// first archived is found by the second: an exact copy on another host is
// archived as a revisit, and a near copy judged a near-duplicate.
func TestNodesShareDuplicates(t *testing.T) {
	s := startServer(t)
	port := copiesServer(t)
	lo := netip.MustParseAddr("127.0.0.1")
	open := func(name string, serves ...partition.ID) (*node.Node, *fpshard.Shard) {
		n, err := node.Open(node.Options{
			DataDir: t.TempDir(), MinDelay: 10 * time.Millisecond, Concurrency: 2,
			AllowNets: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
			Hosts:     map[string][]netip.Addr{"a.test": {lo}, "b.test": {lo}, "c.test": {lo}},
			UserAgent: "trawl/0.1 (fpshard test " + name + ")", Logger: slog.New(slog.DiscardHandler),
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.Close() })
		nc, err := s.Connect()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		sh, err := fpshard.New(fpshard.Options{Conn: nc, Index: n.Dedup(), DB: n.DB()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(sh.Close)
		for _, p := range serves {
			if err := sh.Serve(p); err != nil {
				t.Fatal(err)
			}
		}
		if err := nc.Flush(); err != nil {
			t.Fatal(err)
		}
		n.SetContentIndex(sh)
		n.Start()
		return n, sh
	}
	first, firstShard := open("first", span(0, partition.Count)...)
	second, secondShard := open("second")

	j1 := crawl(t, first, "http://a.test:"+port+"/page.html")
	if got := j1.Stats.Revisits.Load(); got != 0 {
		t.Fatalf("first crawl: %d revisits, want 0", got)
	}
	j2 := crawl(t, second, "http://b.test:"+port+"/page.html", "http://c.test:"+port+"/page.html")
	if got := j2.Stats.Revisits.Load(); got != 1 {
		t.Errorf("second crawl: %d revisits, want 1 (b.test's copy of a.test's page)", got)
	}
	if got := j2.Stats.NearDuplicates.Load(); got != 1 {
		t.Errorf("second crawl: %d near-duplicates, want 1 (c.test's page)", got)
	}
	st1, st2 := firstShard.Stats(), secondShard.Stats()
	if st2.LookupsRemote == 0 || st2.RemoteMisses != 0 || st2.LookupsLocal != 0 || st1.Served == 0 || st1.AddsLocal == 0 {
		t.Errorf("stats: first %+v, second %+v", st1, st2)
	}
}
