package apiclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/trawl-crawler/trawl/api"
	"github.com/trawl-crawler/trawl/internal/testweb"
	"github.com/trawl-crawler/trawl/node"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const testToken = "t0ken"

// strict decodes raw into a new T refusing unknown fields: the client's
// types must hold every field the server sends, or a --json-less caller
// silently loses it.
func strict[T any](t *testing.T, what string, raw []byte) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var v T
	if err := dec.Decode(&v); err != nil {
		t.Errorf("%s: the server's answer %s has a field the client's type lacks: %v", what, raw, err)
	}
}

// TestAgainstTheAPI drives every crawl call against package api over a
// real node crawling a small synthetic web: the answers decode into the
// client's types without a field left over, and the API's refusals come
// back as *Error with the status, the field and the API's message.
func TestAgainstTheAPI(t *testing.T) {
	web, err := testweb.Serve(testweb.Generate(testweb.Options{Seed: 5, Hosts: 6, Latency: -1}), testweb.ServeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	n, err := node.Open(node.Options{DataDir: t.TempDir(), MinDelay: 50 * time.Millisecond, Concurrency: 8,
		AllowNets: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, Hosts: web.Resolver()})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	n.Start()
	srv := httptest.NewServer(api.New(api.Options{Node: func() api.Node { return n }, Token: testToken}))
	defer srv.Close()
	ctx := context.Background()
	c, err := New(Options{Server: srv.URL + "/", Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	anon, _ := New(Options{Server: srv.URL})

	if p, err := c.Health(ctx); err != nil || p.Status != "ok" {
		t.Errorf("Health = %+v, %v; want ok", p, err)
	}
	if ready, p, err := c.Ready(ctx); err != nil || !ready || p.Status != "ready" {
		t.Errorf("Ready = %v, %+v, %v; want ready", ready, p, err)
	}
	req := CrawlRequest{Name: "client test", Seeds: web.Seeds(), Priority: 1,
		Scope: Scope{Domains: []string{web.Web().Options().Domain}, MaxDepth: 3}, Limits: Limits{MaxPages: 500}}
	created, err := c.CreateCrawl(ctx, req)
	if err != nil || created.CrawlID == 0 {
		t.Fatalf("CreateCrawl = %+v, %v", created, err)
	}
	strict[Created](t, "CreateCrawl", created.Raw)
	id := created.CrawlID

	list, err := c.Crawls(ctx)
	if err != nil || len(list.Crawls) != 1 || list.Crawls[0].ID != id || list.Crawls[0].Name != "client test" {
		t.Errorf("Crawls = %+v, %v; want the one crawl", list.Crawls, err)
	}
	strict[CrawlList](t, "Crawls", list.Raw)
	cr, err := c.Crawl(ctx, id)
	if err != nil || cr.MaxDepth != 3 || cr.MaxPages != 500 || cr.Priority != 1 || len(cr.Seeds) != len(req.Seeds) {
		t.Errorf("Crawl(%d) = %+v, %v; want the spec sent", id, cr, err)
	}
	strict[Crawl](t, "Crawl", cr.Raw)
	st, err := c.Stats(ctx, id)
	if err != nil || st.CrawlID != id || st.ErrorsByClass == nil {
		t.Errorf("Stats(%d) = %+v, %v", id, st, err)
	}
	strict[Stats](t, "Stats", st.Raw)

	for _, step := range []struct {
		name  string
		do    func(context.Context, uint32) (Crawl, error)
		state string
	}{{"Pause", c.Pause, "paused"}, {"Resume", c.Resume, "running"}, {"Cancel", c.Cancel, "cancelled"}} {
		got, err := step.do(ctx, id)
		if err != nil || got.State != step.state {
			t.Errorf("%s(%d) = %+v, %v; want state %s", step.name, id, got, err, step.state)
		}
		strict[Crawl](t, step.name, got.Raw)
	}

	for _, tc := range []struct {
		name          string
		call          func() error
		status        int
		field, inText string
	}{
		{"create without a token", func() error { _, err := anon.CreateCrawl(ctx, req); return err }, 401, "", "Bearer"},
		{"pause without a token", func() error { _, err := anon.Pause(ctx, id); return err }, 401, "", "Bearer"},
		{"no seeds", func() error { _, err := c.CreateCrawl(ctx, CrawlRequest{}); return err }, 400, "seeds", "seed"},
		{"bad priority", func() error {
			_, err := c.CreateCrawl(ctx, CrawlRequest{Seeds: []string{"http://a.test/"}, Priority: 7})
			return err
		}, 400, "priority", "want -1"},
		{"unknown crawl", func() error { _, err := c.Crawl(ctx, 999); return err }, 404, "id", "no crawl 999"},
		{"stats of an unknown crawl", func() error { _, err := c.Stats(ctx, 999); return err }, 404, "id", "no crawl 999"},
		{"resume a cancelled crawl", func() error { _, err := c.Resume(ctx, id); return err }, 409, "", "cancelled"},
	} {
		err := tc.call()
		var e *Error
		if !errors.As(err, &e) || e.Status != tc.status || e.Field != tc.field || !strings.Contains(e.Error(), tc.inText) {
			t.Errorf("%s: err = %v (%#v), want status %d, field %q, text with %q", tc.name, err, e, tc.status, tc.field, tc.inText)
			continue
		}
		if StatusOf(err) != tc.status || Unreachable(err) {
			t.Errorf("%s: StatusOf = %d, Unreachable = %v", tc.name, StatusOf(err), Unreachable(err))
		}
	}
	if list, _ := c.Crawls(ctx); len(list.Crawls) != 1 {
		t.Errorf("after refused calls the node has %d crawls, want 1", len(list.Crawls))
	}
}

// TestNoAnswer: nothing listening, and a server slower than the timeout,
// are *Error with Status 0 that say so.
func TestNoAnswer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	c, _ := New(Options{Server: closed, Timeout: 5 * time.Second})
	_, err = c.Crawls(context.Background())
	if !Unreachable(err) || StatusOf(err) != 0 || !strings.Contains(err.Error(), "no answer") || !strings.Contains(err.Error(), closed) {
		t.Errorf("Crawls on a closed port: err = %v, want an unreachable *Error naming %s", err, closed)
	}

	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer slow.Close()
	defer close(release)
	c, _ = New(Options{Server: slow.URL, Timeout: 50 * time.Millisecond})
	start := time.Now()
	_, err = c.Health(context.Background())
	if !Unreachable(err) || !strings.Contains(err.Error(), "no answer within 50ms") {
		t.Errorf("Health on a silent server: err = %v, want no answer within 50ms", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Health on a silent server took %v, want about the 50ms timeout", took)
	}
}

// TestAnswersThatAreNotTheAPIs: a proxy's plain-text error, or a 200 that
// is not JSON, still give an *Error that quotes what came back.
func TestAnswersThatAreNotTheAPIs(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/crawls" {
			w.Write([]byte("<html>hello</html>"))
			return
		}
		http.Error(w, "bad gateway from a proxy", http.StatusBadGateway)
	}))
	defer srv.Close()
	c, _ := New(Options{Server: srv.URL})
	_, err := c.Crawl(context.Background(), 1)
	if StatusOf(err) != 502 || !strings.Contains(err.Error(), "bad gateway from a proxy") || !strings.Contains(err.Error(), "GET /v1/crawls/1") {
		t.Errorf("Crawl via a failing proxy: err = %v", err)
	}
	_, err = c.Crawls(context.Background())
	if StatusOf(err) != 200 || !strings.Contains(err.Error(), "decode the answer") {
		t.Errorf("Crawls answered with HTML: err = %v", err)
	}
}

// TestTokenOnlyOnChanges: reads carry no Authorization header, changes do.
func TestTokenOnlyOnChanges(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]string{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.Method+" "+r.URL.Path] = r.Header.Get("Authorization")
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/v1/crawls" && r.Method == "GET":
			w.Write([]byte(`{"crawls": []}`))
		case r.URL.Path == "/v1/crawls":
			w.WriteHeader(202)
			w.Write([]byte(`{"crawl_id": 1}`))
		default:
			w.Write([]byte(`{"id": 1, "state": "paused", "seeds": [], "domains": [], "max_depth": 0, "max_pages": 0, "priority": 0}`))
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	c, _ := New(Options{Server: srv.URL + "/prefix", Token: "abc"})
	c.Crawls(ctx)
	c.Crawl(ctx, 1)
	c.Pause(ctx, 1)
	c.CreateCrawl(ctx, CrawlRequest{Seeds: []string{"http://a.test/"}})
	want := map[string]string{"GET /prefix/v1/crawls": "", "GET /prefix/v1/crawls/1": "",
		"POST /prefix/v1/crawls/1/pause": "Bearer abc", "POST /prefix/v1/crawls": "Bearer abc"}
	mu.Lock()
	defer mu.Unlock()
	for k, v := range want {
		if got, ok := seen[k]; !ok || got != v {
			t.Errorf("%s: Authorization %q (sent: %v), want %q", k, got, ok, v)
		}
	}
}

func TestNewRefusesBadOptions(t *testing.T) {
	for _, o := range []Options{{}, {Server: "127.0.0.1:8420"}, {Server: "ftp://x/"}, {Server: "http://"}, {Server: "http://x", Timeout: -1}} {
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v): no error", o)
		}
	}
}
