package fpshard_test

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/cluster/fpshard"
	"github.com/trawl-crawler/trawl/internal/store/partition"
	"github.com/trawl-crawler/trawl/internal/testkit/jstest"
	"github.com/trawl-crawler/trawl/internal/testkit/warccheck"
	"github.com/trawl-crawler/trawl/job"
	"github.com/trawl-crawler/trawl/node"
	"github.com/trawl-crawler/trawl/warc"
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
	s := jstest.Start(t)
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

// TestNotModifiedWithoutOwner: a node on a fleet's content index whose
// fingerprint partitions no member serves (every lookup unanswered) still
// refers its 304 revisits to the page's capture: the shard keeps a copy
// of each original the node archived in its own store, which the node
// falls back on.
func TestNotModifiedWithoutOwner(t *testing.T) {
	s := jstest.Start(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/page.html" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("ETag", `"v1"`)
		if r.Header.Get("If-None-Match") == `"v1"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<!doctype html><html><head><title>same</title></head><body><p>unchanged words</p></body></html>")
	}))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	dir := t.TempDir()
	n, err := node.Open(node.Options{
		DataDir: dir, MinDelay: 10 * time.Millisecond, Concurrency: 1, RecrawlTick: 50 * time.Millisecond,
		AllowNets: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		Hosts:     map[string][]netip.Addr{"a.test": {netip.MustParseAddr("127.0.0.1")}},
		UserAgent: "trawl/0.1 (fpshard test)", Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			n.Close()
		}
	})
	nc, err := s.Connect()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	// No member serves the partition: a short MoveWait, not the
	// default seconds a moving partition is given to find its owner.
	sh, err := fpshard.New(fpshard.Options{Conn: nc, Index: n.Dedup(), DB: n.DB(), Timeout: 100 * time.Millisecond, MoveWait: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sh.Close)
	n.SetContentIndex(sh)
	n.Start()
	j, err := n.Submit(job.Spec{Name: "304", Seeds: []string{"http://a.test:" + port + "/page.html"}, Domains: []string{"a.test"},
		RobotsGiveUp: time.Second, Continuous: true, RecrawlMin: time.Second, RecrawlMax: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a 304", func() bool { return j.Stats.NotModified.Load() >= 1 })
	if err := n.Cancel(j.ID); err != nil {
		t.Fatal(err)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	closed = true
	if st := sh.Stats(); st.LookupsLocal != 0 || st.RemoteMisses == 0 {
		t.Errorf("shard stats %+v: want every lookup remote and unanswered", st)
	}
	files, err := filepath.Glob(filepath.Join(dir, "warc", "*.warc.gz"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := warccheck.Validate(files...)
	if err != nil {
		t.Fatal(err)
	}
	revisits := 0
	for _, r := range rep.Revisits {
		if r.Profile != warc.ProfileServerNotModified {
			continue
		}
		revisits++
		if r.RefersToURI != r.URI || r.RefersTo == "" {
			t.Errorf("304 revisit of %s refers to %q (%s): want its capture", r.URI, r.RefersToURI, r.RefersTo)
		}
	}
	if revisits == 0 {
		t.Errorf("no server-not-modified revisit in %d WARC files", len(files))
	}
}
