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
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/trawl-crawler/trawl/api"
	"github.com/trawl-crawler/trawl/internal/testkit/testweb"
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
		Scope: Scope{Domains: []string{web.Web().Options().Domain}, MaxDepth: new(3)}, Limits: Limits{MaxPages: 500}}
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
	host := steerAndHosts(t, c, id, web.Seeds())

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
		{"seeds without a token", func() error { _, err := anon.AddSeeds(ctx, id, []string{"http://a.test/"}); return err }, 401, "", "Bearer"},
		{"seeds of a cancelled crawl", func() error { _, err := c.AddSeeds(ctx, id, web.Seeds()[:1]); return err }, 409, "", "cancelled"},
		{"no seeds to add", func() error { _, err := c.AddSeeds(ctx, id, nil); return err }, 400, "seeds", "seed URLs"},
		{"seeds of an unknown crawl", func() error { _, err := c.AddSeeds(ctx, 999, []string{"http://a.test/"}); return err }, 404, "id", "no crawl 999"},
		{"exclusions of an unknown crawl", func() error { _, err := c.Exclusions(ctx, 999); return err }, 404, "id", "no crawl 999"},
		{"exclude without a token", func() error { _, err := anon.EditExclusions(ctx, id, []string{"x"}, nil); return err }, 401, "", "Bearer"},
		{"a bad host state", func() error { _, err := c.Hosts(ctx, HostQuery{State: "asleep"}); return err }, 400, "state", "asleep"},
		{"hosts of an unknown crawl", func() error { _, err := c.Hosts(ctx, HostQuery{Crawl: 999}); return err }, 404, "crawl", "no crawl 999"},
		{"a page too long", func() error { _, err := c.Hosts(ctx, HostQuery{Limit: 5000}); return err }, 400, "limit", "5000"},
		{"an unknown host", func() error { _, err := c.HostStatus(ctx, "nowhere.test"); return err }, 404, "host", "nowhere.test"},
		{"a policy without a token", func() error { _, err := anon.SetHostPolicy(ctx, host, HostPolicy{}); return err }, 401, "", "Bearer"},
		{"a negative least gap", func() error {
			ms := int64(-1)
			_, err := c.SetHostPolicy(ctx, host, HostPolicy{MinDelayMS: &ms})
			return err
		}, 400, "min_delay_ms", "want 0.."},
		{"too many in parallel", func() error { _, err := c.SetHostPolicy(ctx, host, HostPolicy{MaxParallel: 1000}); return err }, 400, "max_parallel", "1000"},
		{"pause the node without a token", func() error { _, err := anon.PauseNode(ctx); return err }, 401, "", "Bearer"},
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

// steerAndHosts drives the steering, host and node calls over a crawl
// still running: each answer decodes strictly and says what was asked.
// It returns a host the node knows, for the refusals' tests.
func steerAndHosts(t *testing.T, c *Client, id uint32, seeds []string) string {
	t.Helper()
	ctx := context.Background()
	seeded, err := c.AddSeeds(ctx, id, append([]string{seeds[0] + "added-by-test"}, seeds...))
	if err != nil || seeded.Added+seeded.AlreadySeen != len(seeds)+1 || seeded.AlreadySeen < len(seeds) {
		t.Errorf("AddSeeds = %+v, %v; want the %d seeds already seen", seeded, err, len(seeds))
	}
	strict[Seeded](t, "AddSeeds", seeded.Raw)
	x, err := c.Exclusions(ctx, id)
	if err != nil || x.Patterns == nil || len(x.Patterns) != 0 {
		t.Errorf("Exclusions = %+v, %v; want none", x, err)
	}
	strict[Exclusions](t, "Exclusions", x.Raw)
	x, err = c.EditExclusions(ctx, id, []string{`/private/`, `\.pdf$`}, nil)
	if err != nil || !slices.Equal(x.Patterns, []string{`/private/`, `\.pdf$`}) {
		t.Errorf("EditExclusions(add) = %+v, %v", x, err)
	}
	x, err = c.EditExclusions(ctx, id, nil, []string{`/private/`})
	if err != nil || !slices.Equal(x.Patterns, []string{`\.pdf$`}) {
		t.Errorf("EditExclusions(remove) = %+v, %v", x, err)
	}
	strict[Exclusions](t, "EditExclusions", x.Raw)
	for _, tc := range []struct {
		name        string
		add, remove []string
		field       string
	}{{"a bad pattern", []string{"("}, nil, "add[0]"}, {"an unknown pattern", nil, []string{"nope"}, "remove[0]"}} {
		_, err := c.EditExclusions(ctx, id, tc.add, tc.remove)
		if e := (*Error)(nil); !errors.As(err, &e) || e.Status != 400 || e.Field != tc.field {
			t.Errorf("EditExclusions with %s: err = %v, want a 400 naming %q", tc.name, err, tc.field)
		}
	}

	var hosts HostList
	for deadline := time.Now().Add(20 * time.Second); len(hosts.Hosts) == 0; time.Sleep(20 * time.Millisecond) {
		if hosts, err = c.Hosts(ctx, HostQuery{Crawl: id, Limit: 2}); err != nil || time.Now().After(deadline) {
			t.Fatalf("Hosts = %+v, %v; want the crawl's hosts", hosts, err)
		}
	}
	strict[HostList](t, "Hosts", hosts.Raw)
	all := len(hosts.Hosts)
	for q := (HostQuery{Crawl: id, Limit: 2, Cursor: hosts.NextCursor}); q.Cursor != ""; {
		page, err := c.Hosts(ctx, q)
		if err != nil {
			t.Fatalf("Hosts(%+v): %v", q, err)
		}
		strict[HostList](t, "Hosts (a later page)", page.Raw)
		all, q.Cursor = all+len(page.Hosts), page.NextCursor
	}
	if all < len(seeds) {
		t.Errorf("Hosts over every page: %d hosts, want at least the seeds' %d", all, len(seeds))
	}
	host := hosts.Hosts[0].Host
	d, err := c.HostStatus(ctx, host)
	if err != nil || d.Host.Host != host || d.QueuedByCrawl == nil || d.HeldByCrawl == nil || d.Robots == nil {
		t.Errorf("HostStatus(%q) = %+v, %v", host, d, err)
	}
	strict[HostDetail](t, "HostStatus", d.Raw)

	ms := int64(250)
	set, err := c.SetHostPolicy(ctx, host, HostPolicy{MinDelayMS: &ms, MaxParallel: 2, Paused: true})
	if err != nil || set.Host != host || set.Policy.MinDelayMS == nil || *set.Policy.MinDelayMS != 250 || set.Policy.MaxParallel != 2 || !set.Policy.Paused {
		t.Errorf("SetHostPolicy = %+v, %v; want the policy sent", set, err)
	}
	strict[PolicySet](t, "SetHostPolicy", set.Raw)
	if d, _ := c.HostStatus(ctx, host); !d.Policy.Paused || d.Policy.MaxParallel != 2 {
		t.Errorf("after SetHostPolicy the host's policy is %+v", d.Policy)
	}
	if set, err := c.SetHostPolicy(ctx, host, HostPolicy{}); err != nil || set.Policy != (HostPolicy{}) {
		t.Errorf("SetHostPolicy({}) = %+v, %v; want the defaults", set, err)
	}

	for _, step := range []struct {
		name   string
		do     func(context.Context) (NodeState, error)
		paused bool
	}{{"Node", c.Node, false}, {"PauseNode", c.PauseNode, true}, {"Node", c.Node, true}, {"ResumeNode", c.ResumeNode, false}} {
		got, err := step.do(ctx)
		if err != nil || got.Paused != step.paused {
			t.Errorf("%s = %+v, %v; want paused %v", step.name, got, err, step.paused)
		}
		strict[NodeState](t, step.name, got.Raw)
	}
	return host
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
	c.Hosts(ctx, HostQuery{State: "ready"})
	c.SetHostPolicy(ctx, "a.test:8080", HostPolicy{})
	c.Node(ctx)
	c.PauseNode(ctx)
	c.Exclusions(ctx, 1)
	c.EditExclusions(ctx, 1, []string{"x"}, nil)
	want := map[string]string{"GET /prefix/v1/crawls": "", "GET /prefix/v1/crawls/1": "",
		"POST /prefix/v1/crawls/1/pause": "Bearer abc", "POST /prefix/v1/crawls": "Bearer abc",
		"GET /prefix/v1/hosts": "", "PUT /prefix/v1/hosts/a.test:8080/policy": "Bearer abc",
		"GET /prefix/v1/node": "", "POST /prefix/v1/node/pause": "Bearer abc",
		"GET /prefix/v1/crawls/1/exclusions": "", "POST /prefix/v1/crawls/1/exclusions": "Bearer abc"}
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
