package testweb

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"
)

// builder makes hand-made webs for tests.
type builder struct{ w *Web }

func newBuilder(domain string) *builder {
	return &builder{&Web{opts: Options{Domain: domain}.withDefaults(), byName: make(map[string]*host)}}
}

func (b *builder) host(name string, rk robotsKind) *host {
	h := &host{idx: len(b.w.hosts), name: name, ip: hostIP(len(b.w.hosts)), robots: rk, byPQ: make(map[string]*resource)}
	b.w.hosts = append(b.w.hosts, h)
	b.w.byName[name] = h
	return h
}

func (b *builder) res(h *host, pq string, kind resKind) *resource {
	r := &resource{host: h, pq: pq, kind: kind, status: 200}
	switch kind {
	case kindHTML:
		r.body = &bodySpec{size: 100}
	case kindMissing:
		r.status = 404
	}
	h.res = append(h.res, r)
	h.byPQ[pq] = r
	return r
}

func (b *builder) redirect(h *host, pq string, to *resource) *resource {
	r := b.res(h, pq, kindRedirect)
	r.status, r.to, r.loc = 301, to, "http://"+to.host.name+portToken+to.pq
	return r
}

func addLink(from, to *resource) { linkAs(from, to, false, inAnchor) }

func linkAs(from, to *resource, nofollow bool, where placement) {
	from.body.links = append(from.body.links, link{raw: "http://" + to.host.name + portToken + to.pq, to: to, nofollow: nofollow, where: where})
}

// tinyWeb is a hand-made web with one of each case Reachable must get right.
func tinyWeb() *Web {
	b := newBuilder("t.test")
	a := b.host("a.t.test", robotsPrefix)
	bh := b.host("b.t.test", robotsServerError)
	d := b.host("d.t.test", robotsAgent)
	o := b.host("c.other.test", robotsAllowAll)

	home := b.res(a, "/", kindHTML)
	p1 := b.res(a, "/p1", kindHTML)
	addLink(home, p1)
	addLink(p1, b.res(a, "/deep", kindHTML))
	linkAs(home, b.res(a, "/nf", kindHTML), true, inAnchor)
	linkAs(home, b.res(a, "/c", kindHTML), false, inComment)
	linkAs(home, b.res(a, "/s", kindHTML), false, inScript)
	addLink(home, b.res(a, "/private/x", kindHTML))
	p2 := b.res(a, "/p2", kindHTML)
	addLink(home, b.redirect(a, "/r1", b.redirect(a, "/r2", p2)))
	l1 := b.redirect(a, "/loop1", home)
	l2 := b.redirect(a, "/loop2", l1)
	l1.to = l2
	addLink(home, l1)
	addLink(home, b.res(a, "/missing", kindMissing))
	addLink(home, b.res(a, "/calendar/2025/01", kindTrap))
	next := b.res(a, "/end", kindHTML)
	for i := 7; i >= 1; i-- {
		next = b.redirect(a, fmt.Sprintf("/long%d", i), next)
	}
	addLink(home, next)
	bhome := b.res(bh, "/", kindHTML)
	addLink(home, bhome)
	addLink(bhome, b.res(bh, "/b1", kindHTML))
	dhome := b.res(d, "/", kindHTML)
	addLink(home, dhome)
	addLink(dhome, b.res(d, "/no-trawl/x", kindHTML))
	addLink(dhome, b.res(d, "/no-others/y", kindHTML))
	addLink(home, b.res(o, "/", kindHTML))
	return b.w
}

func TestReachableTiny(t *testing.T) {
	w := tinyWeb()
	all := []string{"http://a.t.test/", "http://a.t.test/p1", "http://a.t.test/deep", "http://a.t.test/r1",
		"http://a.t.test/r2", "http://a.t.test/p2", "http://a.t.test/loop1", "http://a.t.test/loop2",
		"http://a.t.test/missing", "http://a.t.test/long1", "http://a.t.test/long2", "http://a.t.test/long3",
		"http://a.t.test/long4", "http://a.t.test/long5", "http://a.t.test/long6",
		"http://d.t.test/", "http://d.t.test/no-others/y"}
	depth1 := slices.DeleteFunc(slices.Clone(all), func(s string) bool {
		return s == "http://a.t.test/deep" || strings.HasPrefix(s, "http://d.t.test/no")
	})
	for _, tc := range []struct {
		name     string
		seeds    []string
		agent    string
		maxDepth int
		want     []string
	}{
		{"all", []string{"http://a.t.test/"}, "trawl", 0, all},
		{"agent token with version", []string{"HTTP://A.T.TEST/#x"}, "Trawl/1.0", 0, all},
		{"other agent", []string{"http://a.t.test/"}, "otherbot", 0,
			append(slices.DeleteFunc(slices.Clone(all), func(s string) bool { return s == "http://d.t.test/no-others/y" }), "http://d.t.test/no-trawl/x")},
		{"depth 1", []string{"http://a.t.test/"}, "trawl", 1, depth1},
		{"depth 0 means unlimited, seed 404", []string{"http://a.t.test/p2", "http://a.t.test/nowhere"}, "trawl", 0,
			[]string{"http://a.t.test/p2", "http://a.t.test/nowhere"}},
		{"disallowed seed", []string{"http://b.t.test/", "http://a.t.test/private/x"}, "trawl", 0, nil},
		{"seed out of domain", []string{"http://c.other.test/", "http://x.nowhere/"}, "trawl", 0, nil},
	} {
		got := sortedKeys(w.Reachable(tc.seeds, tc.agent, tc.maxDepth))
		slices.Sort(tc.want)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: Reachable(%q, %q, %d) =\n%q\nwant\n%q", tc.name, tc.seeds, tc.agent, tc.maxDepth, got, tc.want)
		}
	}
}

var t0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func rq(host, path string, startMs, endMs, status int) Request {
	return Request{Host: host, IP: ipOf(host), Method: "GET", Path: path, Start: t0.Add(time.Duration(startMs) * time.Millisecond),
		End: t0.Add(time.Duration(endMs) * time.Millisecond), UserAgent: "trawl/0.1 (+http://x.test/bot)", Status: status}
}

var tinyIPs = map[string]netip.Addr{"a.t.test": hostIP(0), "b.t.test": hostIP(1), "d.t.test": hostIP(2), "c.other.test": hostIP(3)}

func ipOf(host string) netip.Addr { return tinyIPs[host] }

func TestAnalyze(t *testing.T) {
	w := tinyWeb()
	w.hosts[2].ip = w.hosts[0].ip // a and d share an address
	tinyIPs["d.t.test"] = w.hosts[0].ip
	type counts struct {
		gapViolations, maxConc, robotsViolations, repeats, robotsRepeats, outOfScope, extra, traps, missing, problems int
	}
	politeA := []Request{rq("a.t.test", "/robots.txt", 0, 5, 200), rq("a.t.test", "/", 20, 25, 200), rq("a.t.test", "/p1", 40, 45, 200)}
	all := w.Reachable([]string{"http://a.t.test/"}, "trawl", 0)
	var full []Request
	ms := 0
	for _, h := range []string{"a.t.test", "d.t.test"} {
		full = append(full, rq(h, "/robots.txt", ms, ms+1, 200))
		ms += 10
		for _, u := range sortedKeys(all) {
			if pq, ok := strings.CutPrefix(u, "http://"+h); ok {
				full = append(full, rq(h, pq, ms, ms+1, 200))
				ms += 10
			}
		}
	}
	for _, tc := range []struct {
		name string
		log  []Request
		opts AnalyzeOptions
		want counts
	}{
		{"polite start", politeA, AnalyzeOptions{Gap: 10 * time.Millisecond},
			counts{maxConc: 1, missing: len(all) - 2}},
		{"full crawl", full, AnalyzeOptions{Gap: 10 * time.Millisecond, MinCoverage: 1}, counts{maxConc: 1}},
		{"gap too small", politeA, AnalyzeOptions{Gap: 30 * time.Millisecond},
			counts{gapViolations: 2, maxConc: 1, missing: len(all) - 2, problems: 2}},
		{"overlap", []Request{rq("a.t.test", "/robots.txt", 0, 5, 200), rq("a.t.test", "/", 10, 50, 200), rq("a.t.test", "/p1", 20, 30, 200)},
			AnalyzeOptions{}, counts{maxConc: 2, missing: len(all) - 2, problems: 1}},
		{"shared IP overlap", []Request{rq("a.t.test", "/robots.txt", 0, 50, 200), rq("d.t.test", "/robots.txt", 10, 20, 200)},
			AnalyzeOptions{MaxParallelPerIP: 1}, counts{maxConc: 1, missing: len(all), problems: 1}},
		{"disallowed and early", []Request{rq("a.t.test", "/", 0, 5, 200), rq("a.t.test", "/robots.txt", 10, 15, 200), rq("a.t.test", "/private/x", 20, 25, 200)},
			AnalyzeOptions{}, counts{maxConc: 1, robotsViolations: 2, missing: len(all) - 1, problems: 2}},
		{"500 host", []Request{rq("b.t.test", "/robots.txt", 0, 5, 500), rq("b.t.test", "/robots.txt", 100, 105, 500), rq("b.t.test", "/", 200, 205, 200)},
			AnalyzeOptions{}, counts{maxConc: 1, robotsViolations: 1, missing: len(all), problems: 1}},
		{"repeats", append(slices.Clone(politeA), rq("a.t.test", "/p1?utm_source=x", 60, 65, 200), rq("a.t.test", "/robots.txt", 80, 85, 200)),
			AnalyzeOptions{}, counts{maxConc: 1, repeats: 1, robotsRepeats: 1, missing: len(all) - 2, problems: 2}},
		{"out of scope and extra and trap", append(slices.Clone(politeA), rq("c.other.test", "/", 50, 55, 200), rq("x.example", "/", 60, 65, 421),
			rq("a.t.test", "/nf", 70, 75, 200), rq("a.t.test", "/calendar/2025/01", 90, 95, 200), rq("a.t.test", "/calendar/2025/02", 110, 115, 200)),
			AnalyzeOptions{}, counts{maxConc: 1, outOfScope: 2, extra: 1, traps: 2, missing: len(all) - 2, problems: 3}},
		{"coverage", politeA, AnalyzeOptions{MinCoverage: 0.5}, counts{maxConc: 1, missing: len(all) - 2, problems: 1}},
		{"a TDMRep file is no extra, but is held to robots.txt and one request", append(slices.Clone(politeA), rq("a.t.test", "/.well-known/tdmrep.json", 60, 65, 404),
			rq("a.t.test", "/.well-known/tdmrep.json", 80, 85, 404)),
			AnalyzeOptions{}, counts{maxConc: 1, repeats: 1, missing: len(all) - 2, problems: 1}},
	} {
		tc.opts.Seeds = []string{"http://a.t.test/"}
		tc.opts.Agent = "trawl"
		r := Analyze(w, tc.log, tc.opts)
		var got counts
		for _, h := range r.Hosts {
			got.gapViolations += len(h.GapViolations)
			got.maxConc = max(got.maxConc, h.MaxConcurrency)
		}
		got.robotsViolations, got.repeats, got.robotsRepeats = len(r.RobotsViolations), len(r.Repeats), len(r.RobotsRepeats)
		got.outOfScope, got.extra, got.missing, got.problems = len(r.OutOfScope), len(r.Extra), len(r.Missing), len(r.Problems())
		for _, n := range r.TrapFetches {
			got.traps += n
		}
		if got != tc.want {
			t.Errorf("%s: Analyze counts = %+v, want %+v\nproblems: %q\n%s", tc.name, got, tc.want, r.Problems(), r)
		}
	}
}

func TestAnalyzeDetails(t *testing.T) {
	w := tinyWeb()
	log := []Request{rq("a.t.test", "/robots.txt", 0, 5, 200), rq("a.t.test", "/", 12, 14, 200), rq("a.t.test", "/p1", 20, 24, 200)}
	log[2].UserAgent = "curl/8"
	r := Analyze(w, log, AnalyzeOptions{Seeds: []string{"http://a.t.test/"}, Agent: "trawl", Gap: 10 * time.Millisecond})
	h := r.Hosts[0]
	if h.Host != "a.t.test" || h.MinGap != 8*time.Millisecond || h.ExpectedGap != 10*time.Millisecond || h.RobotsRequests != 1 || h.Requests != 3 {
		t.Errorf("host report = %+v, want a.t.test with MinGap 8ms, ExpectedGap 10ms, 3 requests, 1 robots", h)
	}
	if len(h.GapViolations) != 1 || h.GapViolations[0].First.Path != "/" || h.GapViolations[0].Second.Path != "/p1" {
		t.Errorf("gap violations = %+v, want / then /p1", h.GapViolations)
	}
	if len(r.BadAgent) != 1 {
		t.Errorf("BadAgent = %+v, want the curl request", r.BadAgent)
	}
	if want := map[string]bool{"http://a.t.test/": true, "http://a.t.test/p1": true}; !maps.Equal(r.Fetched, want) {
		t.Errorf("Fetched = %v, want %v", r.Fetched, want)
	}
	// a.t.test has 15 crawlable URLs, d.t.test 2: 15 gaps of 10ms after
	// robots.txt.
	if got := r.CriticalPath(10 * time.Millisecond); got != 150*time.Millisecond {
		t.Errorf("CriticalPath(10ms) = %v, want 150ms", got)
	}
	if s := r.String(); !strings.Contains(s, "gap violations 1") {
		t.Errorf("String() = %q, want it to mention the gap violation", s)
	}
}
