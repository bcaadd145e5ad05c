package api

import (
	"net/http/httptest"
	"net/url"
	"testing"
)

// TestHostAndSteeringRoutes drives the host, node, seed and exclusion
// routes over a real node: every answer matches the OpenAPI file; bad
// input gets a 400 naming the field and changes nothing; mutations
// without the token get a 401.
func TestHostAndSteeringRoutes(t *testing.T) {
	web, _, c := newNodeAPI(t)

	// The node, paused, so that the crawl's URLs stay queued.
	if code, body := c.do("POST", "/v1/node/pause", "", nil, false); code != 401 {
		t.Errorf("POST /v1/node/pause without a token = %d %v", code, body)
	}
	if code, body := c.do("POST", "/v1/node/pause", testToken, nil, true); code != 200 || body["paused"] != true {
		t.Fatalf("POST /v1/node/pause = %d %v", code, body)
	}
	if code, body := c.do("GET", "/v1/node", "", nil, true); code != 200 || body["paused"] != true {
		t.Errorf("GET /v1/node = %d %v", code, body)
	}
	domain := web.Web().Options().Domain
	code, body := c.do("POST", "/v1/crawls", testToken, map[string]any{"seeds": web.Seeds(),
		"scope": map[string]any{"domains": []string{domain}, "max_depth": 3}}, true)
	id, _ := body["crawl_id"].(float64)
	if code != 202 {
		t.Fatalf("POST /v1/crawls = %d %v", code, body)
	}
	crawl := "/v1/crawls/" + jsonNumber(id)

	// Hosts: the seeds' hosts are queued.
	code, body = c.do("GET", "/v1/hosts?limit=1000&crawl="+jsonNumber(id), "", nil, true)
	all, _ := body["hosts"].([]any)
	if code != 200 || len(all) == 0 {
		t.Fatalf("GET /v1/hosts = %d %v", code, body)
	}
	host := all[0].(map[string]any)["host"].(string)
	paged := 0
	for cursor, calls := "", 0; calls < 100; calls++ {
		q := "/v1/hosts?limit=1"
		if cursor != "" {
			q += "&cursor=" + cursor
		}
		_, body := c.do("GET", q, "", nil, true)
		page, _ := body["hosts"].([]any)
		paged += len(page)
		next, _ := body["next_cursor"].(string)
		if next == "" {
			break
		}
		cursor = next
	}
	if paged != len(all) {
		t.Errorf("paging one host at a time found %d hosts, one page of 1000 found %d", paged, len(all))
	}
	for _, b := range []struct {
		query, field string
		code         int
	}{
		{"state=bogus", "state", 400}, {"limit=0", "limit", 400}, {"limit=1001", "limit", 400},
		{"cursor=-3", "cursor", 400}, {"cursor=x", "cursor", 400}, {"crawl=abc", "crawl", 400}, {"crawl=999", "crawl", 404},
	} {
		code, body := c.do("GET", "/v1/hosts?"+b.query, "", nil, false)
		if field, _ := errField(body); code != b.code || field != b.field {
			t.Errorf("GET /v1/hosts?%s = %d %v, want %d naming %q", b.query, code, body, b.code, b.field)
		}
	}
	if code, body := c.do("GET", "/v1/hosts/"+host, "", nil, true); code != 200 || body["host"] != host {
		t.Errorf("GET /v1/hosts/%s = %d %v", host, code, body)
	} else if q, _ := body["queued_by_crawl"].(map[string]any); q[jsonNumber(id)] == nil {
		t.Errorf("GET /v1/hosts/%s: nothing queued for crawl %v: %v", host, id, body)
	}
	for _, h := range []struct {
		host, field string
		code        int
	}{{"nobody.test", "host", 404}, {url.PathEscape("a b"), "host", 400}, {"a.test:81", "host", 400}} {
		code, body := c.do("GET", "/v1/hosts/"+h.host, "", nil, false)
		if field, _ := errField(body); code != h.code || field != h.field {
			t.Errorf("GET /v1/hosts/%s = %d %v, want %d naming %q", h.host, code, body, h.code, h.field)
		}
	}

	// Policies.
	policy := "/v1/hosts/" + host + "/policy"
	for _, b := range []struct {
		name, token string
		body        any
		code        int
		field       string
	}{
		{"no token", "", `{"paused": true}`, 401, ""},
		{"negative delay", testToken, `{"min_delay_ms": -1}`, 400, "min_delay_ms"},
		{"delay too long", testToken, `{"min_delay_ms": 3600001}`, 400, "min_delay_ms"},
		{"fractional delay", testToken, `{"min_delay_ms": 1.5}`, 400, "min_delay_ms"},
		{"too parallel", testToken, `{"max_parallel": 65}`, 400, "max_parallel"},
		{"paused not a bool", testToken, `{"paused": "yes"}`, 400, "paused"},
		{"unknown field", testToken, `{"delay": 5}`, 400, "delay"},
		{"malformed", testToken, `{"paused": tru`, 400, ""},
	} {
		code, body := c.do("PUT", policy, b.token, b.body, false)
		if field, msg := errField(body); code != b.code || field != b.field || msg == "" {
			t.Errorf("%s: PUT %s = %d %v, want %d naming %q", b.name, policy, code, body, b.code, b.field)
		}
	}
	if code, body := c.do("PUT", "/v1/hosts/"+url.PathEscape("a b")+"/policy", testToken, `{"paused": true}`, false); code != 400 {
		t.Errorf("PUT policy of a bad host = %d %v", code, body)
	}
	if code, body := c.do("GET", "/v1/hosts?state=paused", "", nil, true); code != 200 || len(body["hosts"].([]any)) != 0 {
		t.Fatalf("refused policies changed something: %d %v", code, body)
	}
	code, body = c.do("PUT", policy, testToken, map[string]any{"min_delay_ms": 250, "max_parallel": 2, "paused": true}, true)
	if p, _ := body["policy"].(map[string]any); code != 200 || body["host"] != host || p["min_delay_ms"] != 250.0 || p["paused"] != true {
		t.Fatalf("PUT %s = %d %v", policy, code, body)
	}
	code, body = c.do("GET", "/v1/hosts?state=paused", "", nil, true)
	if l, _ := body["hosts"].([]any); code != 200 || len(l) != 1 || l[0].(map[string]any)["host"] != host {
		t.Errorf("GET /v1/hosts?state=paused = %d %v", code, body)
	}
	if code, body := c.do("PUT", policy, testToken, map[string]any{}, true); code != 200 || body["policy"].(map[string]any)["paused"] != false {
		t.Errorf("PUT %s {} = %d %v", policy, code, body)
	}

	// Seeds.
	seeds := crawl + "/seeds"
	for _, b := range []struct {
		name, token string
		body        any
		code        int
		field       string
	}{
		{"no token", "", `{"seeds": ["http://x.` + domain + `/"]}`, 401, ""},
		{"none", testToken, `{"seeds": []}`, 400, "seeds"},
		{"bad URL", testToken, `{"seeds": ["ftp://x.` + domain + `/"]}`, 400, "seeds[0]"},
		{"outside the domains", testToken, `{"seeds": ["http://elsewhere.example/"]}`, 400, "seeds[0]"},
		{"unknown field", testToken, `{"urls": []}`, 400, "urls"},
	} {
		code, body := c.do("POST", seeds, b.token, b.body, false)
		if field, msg := errField(body); code != b.code || field != b.field || msg == "" {
			t.Errorf("%s: POST %s = %d %v, want %d naming %q", b.name, seeds, code, body, b.code, b.field)
		}
	}
	newSeed := "http://" + host + "/added"
	if code, body := c.do("POST", seeds, testToken, map[string]any{"seeds": []string{newSeed, web.Seeds()[0]}}, true); code != 200 || body["added"] != 1.0 || body["already_seen"] != 1.0 {
		t.Errorf("POST %s = %d %v, want 1 added, 1 already seen", seeds, code, body)
	}

	// Exclusions.
	excl := crawl + "/exclusions"
	if code, body := c.do("GET", excl, "", nil, true); code != 200 || len(body["patterns"].([]any)) != 0 {
		t.Errorf("GET %s = %d %v", excl, code, body)
	}
	for _, b := range []struct {
		name, token string
		body        any
		code        int
		field       string
	}{
		{"no token", "", `{"add": ["x"]}`, 401, ""},
		{"bad pattern", testToken, `{"add": ["ok", "("]}`, 400, "add[1]"},
		{"empty pattern", testToken, `{"add": [""]}`, 400, "add[0]"},
		{"remove what is not there", testToken, `{"remove": ["zz"]}`, 400, "remove[0]"},
		{"add not a list", testToken, `{"add": "x"}`, 400, "add"},
	} {
		code, body := c.do("POST", excl, b.token, b.body, false)
		if field, msg := errField(body); code != b.code || field != b.field || msg == "" {
			t.Errorf("%s: POST %s = %d %v, want %d naming %q", b.name, excl, code, body, b.code, b.field)
		}
	}
	if code, body := c.do("GET", excl, "", nil, true); code != 200 || len(body["patterns"].([]any)) != 0 {
		t.Errorf("refused edits changed the exclusions: %d %v", code, body)
	}
	if code, body := c.do("POST", excl, testToken, map[string]any{"add": []string{`/private/`, `\?sid=`}}, true); code != 200 || len(body["patterns"].([]any)) != 2 {
		t.Errorf("POST %s = %d %v", excl, code, body)
	}
	if code, body := c.do("POST", excl, testToken, map[string]any{"remove": []string{`/private/`}}, true); code != 200 || len(body["patterns"].([]any)) != 1 {
		t.Errorf("POST %s remove = %d %v", excl, code, body)
	}

	// An ended crawl takes no seeds and no exclusions.
	c.do("POST", crawl+"/cancel", testToken, nil, true)
	if code, body := c.do("POST", seeds, testToken, map[string]any{"seeds": []string{newSeed + "2"}}, false); code != 409 {
		t.Errorf("POST %s to a cancelled crawl = %d %v, want 409", seeds, code, body)
	}
	if code, body := c.do("POST", excl, testToken, map[string]any{"add": []string{"y"}}, false); code != 409 {
		t.Errorf("POST %s to a cancelled crawl = %d %v, want 409", excl, code, body)
	}
	if code, body := c.do("POST", "/v1/node/resume", testToken, nil, true); code != 200 || body["paused"] != false {
		t.Errorf("POST /v1/node/resume = %d %v", code, body)
	}
}

// TestHostRoutesBeforeReady: the new routes say 503 while the node loads.
func TestHostRoutesBeforeReady(t *testing.T) {
	srv := httptest.NewServer(New(Options{Node: func() Node { return nil }, Token: testToken}))
	defer srv.Close()
	c := newAPIClient(t, srv.URL)
	for _, r := range []struct{ method, path string }{
		{"GET", "/v1/hosts"}, {"GET", "/v1/hosts/a.test"}, {"GET", "/v1/node"}, {"POST", "/v1/node/pause"},
		{"GET", "/v1/crawls/1/exclusions"},
	} {
		if code, _ := c.do(r.method, r.path, testToken, nil, false); code != 503 {
			t.Errorf("%s %s before ready = %d, want 503", r.method, r.path, code)
		}
	}
	if code, _ := c.do("PUT", "/v1/hosts/a.test/policy", testToken, map[string]any{"paused": true}, true); code != 503 {
		t.Errorf("PUT policy before ready = %d, want 503", code)
	}
}
