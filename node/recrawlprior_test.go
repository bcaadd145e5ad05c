package node

import (
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/internal/store/schedule"
	"github.com/trawl-crawler/trawl/recrawl"
)

func TestGroupsOf(t *testing.T) {
	for _, tt := range []struct{ url, origin, section string }{
		{"https://a.example/news/2024/x.html", "https://a.example", "https://a.example/news/"},
		{"https://a.example/news/", "https://a.example", "https://a.example/news/"},
		{"https://a.example/about.html", "https://a.example", "https://a.example/"},
		{"https://a.example/", "https://a.example", "https://a.example/"},
		{"https://a.example", "https://a.example", "https://a.example/"},
		{"http://a.example:8080/p?x=/y/z", "http://a.example:8080", "http://a.example:8080/"},
		{"http://a.example/s/?q", "http://a.example", "http://a.example/s/"},
		{"http://[::1]:80/docs/a", "http://[::1]:80", "http://[::1]:80/docs/"},
	} {
		o, s := groupsOf(tt.url)
		if o != tt.origin || s != tt.section {
			t.Errorf("groupsOf(%q) = %q, %q; want %q, %q", tt.url, o, s, tt.origin, tt.section)
		}
	}
}

// A page's prior is its section's when the section has learned enough
// pages, else its origin's, else the job's; rates not learned from a
// page's own intervals are not pooled.
func TestGroupPriorsFallBack(t *testing.T) {
	var pp priorPools
	add := func(url string, rate float64, learned bool) {
		pp.add(schedule.Entry{URL: url, Rate: rate, Learned: learned, Interval: time.Minute})
	}
	for _, u := range []string{"/news/a", "/news/b", "/news/c"} { // a fast section
		add("http://a.test"+u, 60, true)
	}
	for _, u := range []string{"/docs/a", "/docs/b"} { // too few for a section prior
		add("http://a.test"+u, 0.1, true)
	}
	for _, u := range []string{"/x", "/y", "/z", "/w"} { // unlearned: not pooled
		add("http://b.test"+u, 1000, false)
	}
	g := pp.priors()
	if r := g.prior("http://a.test/news/new").Rate(); r != 60 {
		t.Errorf("news page: prior rate %v, want the section's 60", r)
	}
	docs, origin := g.prior("http://a.test/docs/new"), g.prior("http://a.test/other")
	if docs != origin || docs.Rate() <= 0.1 || docs.Rate() >= 60 {
		t.Errorf("docs page: prior %+v, want the origin's %+v, between its rates", docs, origin)
	}
	if got := g.prior("http://b.test/x"); got != g.job || got.Rate() == 1000 {
		t.Errorf("page of an origin with nothing learned: %+v, want the job's %+v", got, g.job)
	}
	var none *groupPriors
	if got := none.prior("http://a.test/"); got != (recrawl.Prior{}) {
		t.Errorf("no priors yet: %+v, want none", got)
	}
}
