package robots

import (
	"errors"
	"net/url"
	"slices"
	"testing"
	"time"
)

func TestFromResult(t *testing.T) {
	body := []byte("user-agent: *\ndisallow: /private\ncrawl-delay: 3\nsitemap: https://h.test/s.xml\n")
	tests := []struct {
		name        string
		r           FetchResult
		unavailable bool
		private     bool // /private allowed
		public      bool // /public allowed
		robotsTxt   bool // /robots.txt allowed
	}{
		{"200", FetchResult{Status: 200, Body: body}, false, false, true, true},
		{"206", FetchResult{Status: 206, Body: body}, false, false, true, true},
		{"204 empty", FetchResult{Status: 204}, false, true, true, true},
		{"404", FetchResult{Status: 404, Body: body}, false, true, true, true},
		{"401", FetchResult{Status: 401}, false, true, true, true},
		{"410", FetchResult{Status: 410}, false, true, true, true},
		{"429", FetchResult{Status: 429}, true, false, false, true},
		{"500", FetchResult{Status: 500, Body: body}, true, false, false, true},
		{"503", FetchResult{Status: 503}, true, false, false, true},
		// RFC 9309 2.3.1.2: more than five redirects MAY be taken as
		// unavailable (2.3.1.3: no restrictions).
		{"301 too many redirects", FetchResult{Status: 301}, false, true, true, true},
		{"100", FetchResult{Status: 100}, true, false, false, true},
		{"0", FetchResult{}, true, false, false, true},
		{"network error", FetchResult{Status: 200, Body: body, Err: errors.New("connection refused")}, true, false, false, true},
	}
	for _, tt := range tests {
		p := FromResult(tt.r)
		if got := p.Unavailable(); got != tt.unavailable {
			t.Errorf("%s: FromResult(%+v).Unavailable() = %v, want %v", tt.name, tt.r.Status, got, tt.unavailable)
		}
		for path, want := range map[string]bool{"/private/x": tt.private, "/public": tt.public, "/robots.txt": tt.robotsTxt} {
			u := &url.URL{Scheme: "https", Host: "h.test", Path: path}
			if got := p.Allowed("trawl", u); got != want {
				t.Errorf("%s: FromResult(status %d).Allowed(%q) = %v, want %v", tt.name, tt.r.Status, path, got, want)
			}
		}
	}

	p := FromResult(FetchResult{Status: 200, Body: body})
	if d, ok := p.CrawlDelay("trawl"); d != 3*time.Second || !ok {
		t.Errorf("CrawlDelay = %v, %v, want 3s, true", d, ok)
	}
	if got, want := p.Sitemaps(), []string{"https://h.test/s.xml"}; !slices.Equal(got, want) {
		t.Errorf("Sitemaps() = %q, want %q", got, want)
	}
	if p.Robots() == nil || p.Status() != 200 {
		t.Errorf("Robots() = %v, Status() = %d, want a parsed file and 200", p.Robots(), p.Status())
	}
	q := FromResult(FetchResult{Status: 503, Body: body})
	if _, ok := q.CrawlDelay("trawl"); ok || q.Sitemaps() != nil || q.Robots() != nil {
		t.Errorf("503 policy has crawl-delay, sitemaps or a file; want none")
	}
	var nilPolicy *Policy
	if !nilPolicy.Allowed("trawl", &url.URL{Path: "/x"}) || nilPolicy.Unavailable() {
		t.Errorf("nil policy: want allow all, available")
	}
}
