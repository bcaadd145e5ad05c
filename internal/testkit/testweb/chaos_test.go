package testweb

import (
	"context"
	"io"
	"net"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestChaosIsDeterministic: a seed gives one web, draws and pages alike.
func TestChaosIsDeterministic(t *testing.T) {
	for _, seed := range []int64{1, 2, 77} {
		a, b := Chaos(seed, ChaosOptions{Long: true}), Chaos(seed, ChaosOptions{Long: true})
		if !reflect.DeepEqual(a.ChaosHosts(), b.ChaosHosts()) {
			t.Errorf("seed %d: two webs drew differently:\n%v\n%v", seed, a.ChaosHosts(), b.ChaosHosts())
		}
		for i, h := range a.hosts {
			var pa, pb []string
			for _, p := range h.chaos.order {
				pa = append(pa, p.pq+string(a.renderChaos(p, 0)))
			}
			for _, p := range b.hosts[i].chaos.order {
				pb = append(pb, p.pq+string(b.renderChaos(p, 0)))
			}
			if !slices.Equal(pa, pb) {
				t.Errorf("seed %d host %s: pages differ between two webs", seed, h.name)
			}
		}
	}
}

// TestChaosDefaultSeedsDrawEverything: the seeds CI runs (node's
// chaosDefaultSeeds, 1 to 4) draw every behaviour and shape but the
// hour-long ones, and seed 6 with Long draws those: the default run means
// something.
func TestChaosDefaultSeedsDrawEverything(t *testing.T) {
	drawn := map[string]bool{}
	for seed := int64(1); seed <= 4; seed++ {
		for _, h := range Chaos(seed, ChaosOptions{}).ChaosHosts() {
			for _, d := range h.Draws {
				drawn[d] = true
			}
		}
	}
	for _, h := range Chaos(6, ChaosOptions{Long: true}).ChaosHosts() {
		for _, d := range h.Draws {
			drawn[d] = true
		}
	}
	all := []string{chaosRobotsOK, chaosRobots404, chaosRobotsDelay, chaosRobots503Once, chaosRobots503Retry,
		chaosRobots429Date, chaosRobots500Forever, chaosRobotsHours, chaosRobotsTimeout,
		chaosPage429Once, chaosPage503Hours, chaosPageTimeout, chaosPageReset, chaosPageDrip, chaosPageHuge,
		chaosPageLying, chaosPageChain, chaosPageLoop, chaosPageCrossHost, chaosPageExactDup, chaosPageNearDup,
		chaosPageCalendar, chaosPageSitemap, chaosPageChanging, chaosPageCharset, chaosPageMissing}
	for _, s := range []string{chaosShapeBlog, chaosShapeForum, chaosShapeCatalogue, chaosShapeDocs} {
		all = append(all, "shape "+s)
	}
	for _, b := range all {
		if !drawn[b] {
			t.Errorf("no default seed draws %s", b)
		}
	}
}

// TestJudgeChaosCatchesAnImpoliteCrawler: a client that asks a page before
// robots.txt, asks it twice at once and again at once, and asks a
// disallowed URL is caught on each count, by host and URL.
func TestJudgeChaosCatchesAnImpoliteCrawler(t *testing.T) {
	web := Chaos(2, ChaosOptions{})
	srv, err := Serve(web, ServeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	res := srv.Resolver()
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, port, _ := net.SplitHostPort(addr)
			return (&net.Dialer{}).DialContext(ctx, network, net.JoinHostPort(res[host][0].String(), port))
		}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(u string) {
		resp, err := client.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	var h *host // a robots-ok host: /private/ is disallowed
	for _, c := range web.hosts {
		if c.chaos.robots == chaosRobotsOK {
			h = c
			break
		}
	}
	home := web.urlOf(h, "/")
	get(home)
	get(web.urlOf(h, "/robots.txt"))
	get(home)
	get(web.urlOf(h, "/private/secret.html"))
	v := JudgeChaos(srv, ChaosJudgeOptions{Seeds: []string{home}, Gap: time.Second, Took: time.Second, Ended: true})
	want := map[string]string{"robots": "before robots.txt was read", "repeat": "fetched a 2th time", "gap": "want at least 1s"}
	got := map[string]bool{}
	for _, f := range v.Failures {
		if w, ok := want[f.Invariant]; ok && strings.Contains(f.Detail, w) && f.Host == h.name {
			got[f.Invariant] = true
		}
		if f.Invariant == "robots" && strings.HasSuffix(f.URL, "/private/secret.html") && strings.Contains(f.Detail, "disallowed") {
			got["disallowed"] = true
		}
	}
	for _, inv := range []string{"robots", "repeat", "gap", "disallowed"} {
		if !got[inv] {
			t.Errorf("the judge missed the %s failure; its verdict:\n%s", inv, v)
		}
	}
	if v.Coverage >= 1 || v.OK() {
		t.Errorf("a crawl of two URLs covered %.3f of the reachable set and passed: %s", v.Coverage, v)
	}
}
