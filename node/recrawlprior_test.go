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
	if r := g.prior("http://a.test/news/new", 0).Rate(); r != 60 {
		t.Errorf("news page: prior rate %v, want the section's 60", r)
	}
	docs, origin := g.prior("http://a.test/docs/new", 0), g.prior("http://a.test/other", 0)
	if docs != origin || docs.Rate() <= 0.1 || docs.Rate() >= 60 {
		t.Errorf("docs page: prior %+v, want the origin's %+v, between its rates", docs, origin)
	}
	if got := g.prior("http://b.test/x", 0); got != g.job || got.Rate() == 1000 {
		t.Errorf("page of an origin with nothing learned: %+v, want the job's %+v", got, g.job)
	}
	var none *groupPriors
	if got := none.prior("http://a.test/", 0); got != (recrawl.Prior{}) {
		t.Errorf("no priors yet: %+v, want none", got)
	}
}

// A page whose site states its interval starts from the statement until
// enough pages of its origin stating the same interval have been learned,
// then from what they showed, ahead of its section's prior; the pages'
// hint groups are per origin and per stated interval.
func TestHintGroups(t *testing.T) {
	const day = 24 * time.Hour
	var pp priorPools
	add := func(url string, rate float64, stated time.Duration) {
		pp.add(schedule.Entry{URL: url, Rate: rate, Own: rate, Learned: true, Interval: time.Hour, Stated: stated})
	}
	for _, u := range []string{"/news/a", "/news/b", "/news/c"} { // a fast section
		add("http://a.test"+u, 6, 0)
	}
	for _, u := range []string{"/news/d", "/docs/e", "/f"} { // say daily, change yearly
		add("http://a.test"+u, 1.0/(365*24), day)
	}
	add("http://a.test/news/g", 1, 7*day)             // says weekly: one page, no group yet
	for _, u := range []string{"/h1", "/h2", "/h3"} { // say hourly, changed at every daily visit
		pp.add(schedule.Entry{URL: "http://a.test" + u, Rate: 1.0 / 24, Own: 1.0 / 24, Learned: true, Censored: true, Stated: time.Hour})
	}
	g := pp.priors()
	if got, want := g.prior("http://a.test/h4", time.Hour), recrawl.HintPrior(time.Hour); got != want {
		t.Errorf("page stating hourly where such pages changed at every visit a day apart: %+v, want the statement's %+v (no evidence against it)", got, want)
	}
	lying := g.prior("http://a.test/news/new", day)
	if r := float64(lying.Rate()); r > 1.0/(300*24) || r < 1.0/(400*24) {
		t.Errorf("page stating daily where such pages change yearly: prior rate %v, want about one a year (the hint group's)", r)
	}
	if got, want := g.prior("http://a.test/news/new", 7*day), recrawl.HintPrior(7*day); got != want {
		t.Errorf("page stating weekly, too few such pages learned: %+v, want the statement's %+v", got, want)
	}
	if got, want := g.prior("http://b.test/x", day), recrawl.HintPrior(day); got != want {
		t.Errorf("page of another origin stating daily: %+v, want the statement's %+v, not a.test's group", got, want)
	}
	if r := g.prior("http://a.test/news/new", 0).Rate(); r <= 1 {
		t.Errorf("page stating nothing in the fast section: prior rate %v, want the section's (near 6)", r)
	}
	var none *groupPriors
	if got, want := none.prior("http://a.test/", time.Hour), recrawl.HintPrior(time.Hour); got != want {
		t.Errorf("no priors fitted yet, page stating hourly: %+v, want the statement's %+v", got, want)
	}
	// A site that states one value for every page tells them no apart:
	// its pages take their section's prior.
	for _, u := range []string{"/news/a", "/news/b", "/news/c"} {
		pp.add(schedule.Entry{URL: "http://c.test" + u, Rate: 6, Own: 6, Learned: true, Stated: day})
	}
	for _, u := range []string{"/old/a", "/old/b", "/old/c"} {
		pp.add(schedule.Entry{URL: "http://c.test" + u, Rate: 0.001, Own: 0.001, Learned: true, Stated: day})
	}
	// Six pages stating one value might be the first of a site stating
	// several: still believed (their hint group's fit, the mean of both
	// sections' rates, not the news section's).
	if r := pp.priors().prior("http://c.test/news/new", day).Rate(); r < 2 || r > 4 {
		t.Errorf("six pages stating daily: prior rate %v, want their hint group's (about 3)", r)
	}
	for _, u := range []string{"/old/d", "/old/e"} {
		pp.add(schedule.Entry{URL: "http://c.test" + u, Rate: 0.001, Own: 0.001, Learned: true, Stated: day})
	}
	g = pp.priors()
	if news, old := g.prior("http://c.test/news/new", day).Rate(), g.prior("http://c.test/old/new", day).Rate(); news < 1 || old > 0.01 {
		t.Errorf("a site stating daily everywhere: news page prior rate %v, archive page %v; want their sections' (6, 0.001)", news, old)
	}
}

// A group's prior is fitted to what its pages' own visits show, never to
// estimates it shrank itself: refitting from pages whose visits did not
// change gives the same prior. Pooling the shrunk estimates fed each
// prior back into itself: at every scan the pool's spread narrowed, its
// weight grew and every page was pulled harder to its group's mean
// (static pages kept fast, fast ones slowed).
func TestGroupPriorIsAFixedPoint(t *testing.T) {
	pol, err := recrawl.New(recrawl.Options{MinInterval: 20 * time.Second, MaxInterval: 3 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	// Twelve pages of one section, changing every 30 s to never, each
	// visited every minute for ten minutes.
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var hs []recrawl.History
	for i := range 12 {
		var h recrawl.History
		every := 30 * (i + 1) // seconds between changes; the last never change
		for k := range 11 {
			at := t0.Add(time.Duration(k) * time.Minute)
			changed := i < 8 && k > 0 && (k*60)/every != ((k-1)*60)/every
			h = pol.Observe(h, recrawl.Visit{At: at, Changed: changed})
		}
		hs = append(hs, h)
	}
	var pr recrawl.Prior
	for round := range 4 {
		var pp priorPools
		for i, h := range hs {
			e := entryRates(pol, h, pol.EstimateWith(h, pr))
			e.URL = "http://a.test/s/" + string(rune('a'+i))
			pp.add(e)
		}
		next := pp.priors().sections["http://a.test/s/"]
		if !(next.Rate() > 0) {
			t.Fatalf("round %d: no section prior fitted", round)
		}
		if round > 0 && next != pr {
			t.Fatalf("round %d: the prior moved from %+v to %+v though no page was visited", round, pr, next)
		}
		pr = next
	}
}
