package dashboard_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/trawl-crawler/trawl/dashboard"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestHandler(t *testing.T) {
	srv := httptest.NewServer(dashboard.Handler())
	defer srv.Close()
	get := func(method, path string, h http.Header) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, nil)
		for k, v := range h {
			req.Header[k] = v
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	for _, c := range []struct {
		method, path string
		code         int
		ctype        string
	}{
		{"GET", "/", 200, "text/html; charset=utf-8"},
		{"GET", "/dashboard/index.html", 200, "text/html; charset=utf-8"},
		{"GET", "/dashboard/app.js", 200, "text/javascript; charset=utf-8"},
		{"GET", "/dashboard/app.css", 200, "text/css; charset=utf-8"},
		{"GET", "/dashboard/icon.svg", 200, "image/svg+xml"},
		{"HEAD", "/", 200, "text/html; charset=utf-8"},
		{"GET", "/dashboard/nope.js", 404, "text/plain; charset=utf-8"},
		{"GET", "/dashboard/", 404, "text/plain; charset=utf-8"},
		{"GET", "/app.js", 404, "text/plain; charset=utf-8"},
		{"POST", "/", 405, "text/plain; charset=utf-8"},
	} {
		resp, body := get(c.method, c.path, nil)
		h := resp.Header
		if resp.StatusCode != c.code || h.Get("Content-Type") != c.ctype {
			t.Errorf("%s %s = %d %q, want %d %q", c.method, c.path, resp.StatusCode, h.Get("Content-Type"), c.code, c.ctype)
		}
		if h.Get("Content-Security-Policy") != dashboard.CSP || h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Referrer-Policy") != "no-referrer" {
			t.Errorf("%s %s: security headers %v", c.method, c.path, h)
		}
		if c.code != 200 {
			continue
		}
		if h.Get("Cache-Control") != "no-cache" || h.Get("ETag") == "" {
			t.Errorf("%s %s: Cache-Control %q, ETag %q; want no-cache and an ETag", c.method, c.path, h.Get("Cache-Control"), h.Get("ETag"))
		}
		if c.method == "HEAD" {
			continue
		}
		if body == "" {
			t.Errorf("%s %s: empty body", c.method, c.path)
		}
		// A browser that has the file asks again with its ETag: 304.
		again, rest := get("GET", c.path, http.Header{"If-None-Match": {h.Get("ETag")}})
		if again.StatusCode != http.StatusNotModified || rest != "" {
			t.Errorf("GET %s with its ETag = %d, %d bytes; want 304 and none", c.path, again.StatusCode, len(rest))
		}
	}
}

// TestPageIsSelfContained: the page loads nothing from elsewhere (every
// src and href is one of the files served, or an API path), and the
// script puts no server text into the page as HTML.
func TestPageIsSelfContained(t *testing.T) {
	srv := httptest.NewServer(dashboard.Handler())
	defer srv.Close()
	fetch := func(path string) string {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	page := fetch("/")
	refs := regexp.MustCompile(`(?:src|href)="([^"]*)"`).FindAllStringSubmatch(page, -1)
	if len(refs) < 3 {
		t.Fatalf("the page has %d references, want its script, style sheet and icon", len(refs))
	}
	for _, m := range refs {
		ref := m[1]
		switch {
		case ref == "/v1/stats" || ref == "/v1/nodes" || ref == "/metrics":
		case strings.HasPrefix(ref, dashboard.Prefix):
			resp, err := http.Get(srv.URL + ref)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Errorf("the page refers to %s, which answers %d", ref, resp.StatusCode)
			}
		default:
			t.Errorf("the page refers to %q, outside its own files and the API", ref)
		}
	}
	if strings.Contains(page, "<script>") || strings.Contains(page, "style=") {
		t.Error("the page has an inline script or style, which its CSP refuses")
	}
	js := fetch("/dashboard/app.js")
	for _, bad := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"} {
		if strings.Contains(js, bad) {
			t.Errorf("app.js uses %s: server text must go in as text", bad)
		}
	}
	css := fetch("/dashboard/app.css")
	if strings.Contains(css, "@import") || strings.Contains(css, "url(") {
		t.Error("app.css loads something (@import or url())")
	}
}
