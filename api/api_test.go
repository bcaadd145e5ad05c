package api

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/trawl-crawler/trawl/job"
)

func TestProbes(t *testing.T) {
	var ready atomic.Bool
	srv := httptest.NewServer(New(Options{Node: func() Node {
		if ready.Load() {
			return noJobs{}
		}
		return nil
	}}))
	defer srv.Close()
	get := func(method, path string) (int, map[string]any, http.Header) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("%s %s: Content-Type %q, want application/json", method, path, ct)
		}
		var body map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
			t.Errorf("%s %s: body is not JSON: %v", method, path, err)
		}
		return resp.StatusCode, body, resp.Header
	}
	for _, c := range []struct {
		method, path string
		ready        bool
		code         int
		field, want  string
	}{
		{"GET", "/healthz", false, 200, "status", "ok"},
		{"GET", "/readyz", false, 503, "status", "loading"},
		{"GET", "/readyz", true, 200, "status", "ready"},
		{"GET", "/healthz", true, 200, "status", "ok"},
		{"GET", "/nope", true, 404, "", ""},
		{"POST", "/healthz", true, 405, "", ""},
	} {
		ready.Store(c.ready)
		code, body, h := get(c.method, c.path)
		if code != c.code {
			t.Errorf("%s %s (ready %v) = %d, want %d", c.method, c.path, c.ready, code, c.code)
		}
		if c.field != "" && body[c.field] != c.want {
			t.Errorf("%s %s (ready %v): %s = %v, want %q", c.method, c.path, c.ready, c.field, body[c.field], c.want)
		}
		if c.code >= 400 && c.field == "" {
			e, _ := body["error"].(map[string]any)
			if msg, _ := e["message"].(string); msg == "" {
				t.Errorf("%s %s: error body %v has no message", c.method, c.path, body)
			}
		}
		if c.code == 405 && h.Get("Allow") == "" {
			t.Errorf("%s %s: 405 without Allow", c.method, c.path)
		}
	}
}

// noJobs is a node without crawls, for the probes.
type noJobs struct{ Node }

func (noJobs) Jobs() []*job.Job { return nil }
