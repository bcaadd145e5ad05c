package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/trawl-crawler/trawl/internal/testkit/testweb"
	"github.com/trawl-crawler/trawl/node"
)

const testToken = "s3cret-token"

// apiClient sends requests to the API and checks every answer against
// docs/api/openapi.yaml (and every request meant to be valid, too).
type apiClient struct {
	t      *testing.T
	base   string
	router routers.Router
}

func newAPIClient(t *testing.T, base string) *apiClient {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromFile("../docs/api/openapi.yaml")
	if err != nil {
		t.Fatalf("load the OpenAPI file: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("the OpenAPI file is not valid OpenAPI 3: %v", err)
	}
	doc.Servers = openapi3.Servers{{URL: base}}
	router, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	return &apiClient{t: t, base: base, router: router}
}

// do sends a request (body: a string sent as is, or a value encoded as
// JSON; token "" sends none) and returns the status and the decoded body.
// valid says the request should pass the OpenAPI file's request checks.
func (c *apiClient) do(method, path, token string, body any, valid bool) (int, map[string]any) {
	c.t.Helper()
	var raw []byte
	switch b := body.(type) {
	case nil:
	case string:
		raw = []byte(b)
	default:
		raw, _ = json.Marshal(b)
	}
	req, _ := http.NewRequest(method, c.base+path, bytes.NewReader(raw))
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	route, params, err := c.router.FindRoute(req)
	if err != nil {
		c.t.Fatalf("%s %s: not a route of the OpenAPI file: %v", method, path, err)
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
	if valid {
		if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
			c.t.Errorf("%s %s: the request does not match the OpenAPI file: %v", method, path, err)
		}
		req.Body = io.NopCloser(bytes.NewReader(raw)) // validation read it
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	if err := openapi3filter.ValidateResponse(context.Background(), &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in, Status: resp.StatusCode, Header: resp.Header,
		Body: io.NopCloser(bytes.NewReader(got)), Options: &openapi3filter.Options{IncludeResponseStatus: true},
	}); err != nil {
		c.t.Errorf("%s %s -> %d %s: the answer does not match the OpenAPI file: %v", method, path, resp.StatusCode, got, err)
	}
	var out map[string]any
	if err := json.Unmarshal(got, &out); err != nil {
		c.t.Errorf("%s %s -> %d: body %q is not a JSON object", method, path, resp.StatusCode, got)
	}
	return resp.StatusCode, out
}

func errField(body map[string]any) (field, msg string) {
	e, _ := body["error"].(map[string]any)
	field, _ = e["field"].(string)
	msg, _ = e["message"].(string)
	return field, msg
}

// newNodeAPI serves the API over a started node that may crawl a small
// synthetic web (served too), with testToken; all of it is closed when
// the test ends.
func newNodeAPI(t *testing.T) (*testweb.Server, *node.Node, *apiClient) {
	t.Helper()
	web, err := testweb.Serve(testweb.Generate(testweb.Options{Seed: 5, Hosts: 6, Latency: -1}), testweb.ServeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { web.Close() })
	n, err := node.Open(node.Options{DataDir: t.TempDir(), MinDelay: 50 * time.Millisecond, Concurrency: 8,
		AllowNets: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, Hosts: web.Resolver()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	n.Start()
	srv := httptest.NewServer(New(Options{Node: func() Node { return n }, Token: testToken}))
	t.Cleanup(srv.Close)
	return web, n, newAPIClient(t, srv.URL)
}

// TestCrawlRoutes drives the crawl routes over a real node crawling a
// small synthetic web: every answer matches the OpenAPI file; bad input
// and missing tokens change nothing; pause, resume and cancel change the
// crawl's state, and an ended crawl cannot be resumed.
func TestCrawlRoutes(t *testing.T) {
	web, _, c := newNodeAPI(t)

	crawls := func() int {
		_, body := c.do("GET", "/v1/crawls", "", nil, true)
		list, _ := body["crawls"].([]any)
		return len(list)
	}
	good := map[string]any{"name": "api test", "seeds": web.Seeds(),
		"scope": map[string]any{"domains": []string{web.Web().Options().Domain}, "max_depth": 3,
			"max_urls_per_pattern": 100, "session_params": []string{"sid", "jsessionid"}}, "priority": 1}

	bad := []struct {
		name, token string
		body        any
		code        int
		field       string
	}{
		{"no token", "", good, 401, ""},
		{"wrong token", "nope", good, 401, ""},
		{"malformed JSON", testToken, `{"seeds": [`, 400, ""},
		{"empty body", testToken, ``, 400, ""},
		{"two values", testToken, `{"seeds":["http://a.test/"]} {}`, 400, ""},
		{"unknown field", testToken, `{"sedes": ["http://a.test/"]}`, 400, "sedes"},
		{"seeds not a list", testToken, `{"seeds": "http://a.test/"}`, 400, "seeds"},
		{"no seeds", testToken, `{"seeds": []}`, 400, "seeds"},
		{"bad seed", testToken, `{"seeds": ["ftp://a.test/"]}`, 400, "seeds[0]"},
		{"negative depth", testToken, `{"seeds": ["http://a.test/"], "scope": {"max_depth": -1}}`, 400, "scope.max_depth"},
		{"priority out of range", testToken, `{"seeds": ["http://a.test/"], "priority": 5}`, 400, "priority"},
		{"negative max pages", testToken, `{"seeds": ["http://a.test/"], "limits": {"max_pages": -2}}`, 400, "limits.max_pages"},
		{"bad domain", testToken, `{"seeds": ["http://a.test/"], "scope": {"domains": ["a b"]}}`, 400, "scope.domains[0]"},
		{"bad session parameter", testToken, `{"seeds": ["http://a.test/"], "scope": {"session_params": ["a=b"]}}`, 400, "scope.session_params[0]"},
		{"too large", testToken, `{"name": "` + strings.Repeat("x", MaxBodyBytes) + `", "seeds": ["http://a.test/"]}`, 413, ""},
	}
	for _, b := range bad {
		code, body := c.do("POST", "/v1/crawls", b.token, b.body, false)
		field, msg := errField(body)
		if code != b.code || field != b.field || msg == "" {
			t.Errorf("%s: POST /v1/crawls = %d, field %q, message %q; want %d naming %q", b.name, code, field, msg, b.code, b.field)
		}
	}
	if got := crawls(); got != 0 {
		t.Fatalf("after bad requests the node has %d crawls, want 0", got)
	}

	code, body := c.do("POST", "/v1/crawls", testToken, good, true)
	id, _ := body["crawl_id"].(float64)
	if code != 202 || id < 1 {
		t.Fatalf("POST /v1/crawls = %d %v, want 202 and a crawl_id", code, body)
	}
	path := "/v1/crawls/" + jsonNumber(id)
	if code, body := c.do("GET", path, "", nil, true); code != 200 || body["name"] != "api test" {
		t.Errorf("GET %s = %d %v", path, code, body)
	}
	if code, body := c.do("GET", path+"/stats", "", nil, true); code != 200 || body["crawl_id"] != id {
		t.Errorf("GET %s/stats = %d %v", path, code, body)
	}
	for _, step := range []struct {
		action, token string
		code          int
		state         string
	}{
		{"pause", "", 401, ""},
		{"pause", testToken, 200, "paused"},
		{"resume", testToken, 200, "running"},
		{"cancel", testToken, 200, "cancelled"},
		{"resume", testToken, 409, ""},
		{"pause", testToken, 409, ""},
	} {
		code, body := c.do("POST", path+"/"+step.action, step.token, nil, step.code == 200)
		if code != step.code || step.state != "" && body["state"] != step.state {
			t.Errorf("POST %s/%s = %d %v, want %d state %q", path, step.action, code, body, step.code, step.state)
		}
	}
	for _, p := range []struct {
		path  string
		code  int
		field string
	}{{"/v1/crawls/abc", 400, "id"}, {"/v1/crawls/0", 400, "id"}, {"/v1/crawls/999", 404, "id"}, {"/v1/crawls/999/stats", 404, "id"}} {
		code, body := c.do("GET", p.path, "", nil, false)
		if field, _ := errField(body); code != p.code || field != p.field {
			t.Errorf("GET %s = %d %v, want %d naming %q", p.path, code, body, p.code, p.field)
		}
	}
	if got := crawls(); got != 1 {
		t.Errorf("the node has %d crawls, want 1", got)
	}
}

// TestCrawlRoutesBeforeReady: while the node loads, the crawl routes say
// 503 and change nothing.
func TestCrawlRoutesBeforeReady(t *testing.T) {
	srv := httptest.NewServer(New(Options{Node: func() Node { return nil }, Token: testToken}))
	defer srv.Close()
	c := newAPIClient(t, srv.URL)
	for _, r := range []struct{ method, path string }{{"GET", "/v1/crawls"}, {"GET", "/v1/crawls/1"}, {"POST", "/v1/crawls/1/pause"}, {"GET", "/v1/stats"}} {
		if code, _ := c.do(r.method, r.path, testToken, nil, false); code != 503 {
			t.Errorf("%s %s before ready = %d, want 503", r.method, r.path, code)
		}
	}
	if code, _ := c.do("POST", "/v1/crawls", testToken, map[string]any{"seeds": []string{"http://a.test/"}}, true); code != 503 {
		t.Errorf("POST /v1/crawls before ready = %d, want 503", code)
	}
}

func jsonNumber(f float64) string {
	b, _ := json.Marshal(f)
	return string(b)
}
