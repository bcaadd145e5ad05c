package dashboard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/trawl-crawler/trawl/api"
	"github.com/trawl-crawler/trawl/dashboard"
	"github.com/trawl-crawler/trawl/internal/hostrank"
	"github.com/trawl-crawler/trawl/internal/testkit/browser"
	"github.com/trawl-crawler/trawl/internal/testkit/testweb"
	"github.com/trawl-crawler/trawl/job"
	"github.com/trawl-crawler/trawl/node"
)

const browserToken = "dashboard-test-token"

// TestDashboardInBrowser opens the dashboard in headless Chromium over a
// node crawling the synthetic web: the page loads without a script error
// or a CSP violation, takes the token from the link's fragment (and drops
// the fragment), shows numbers that change while the crawl runs, shows
// the /v1/stats answers' own figures (pages/s, one figure in the tile and
// at the chart's end, over at least 5 s; the content duplicates the crawl
// met, exact and near; links to known URLs), and its
// Pause and Resume buttons pause and resume the crawl (checked on the node).
// A second, continuous crawl of one seed shows in the continuous crawls'
// table, waiting for recrawls, with its recrawl counts and the schedule's
// freshness figures once they are set. The node is on its own: the fleet's
// panel stays hidden. Then the same node behind a second API that says it
// is one of a fleet of three (one leaving): the panel shows each member,
// and the summary says when the partitions owned are not all of them.
// A screenshot taken during the crawl goes to the artifact directory
// ($TRAWL_ARTIFACTS, else test-artifacts/ at the repository's root).
//
// Chromium is required, not optional: scripts/test.sh installs Debian's
// package when it is missing.
func TestDashboardInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: Chromium drives the dashboard; the full suite runs it")
	}
	chromium := browser.ChromiumPath(t)
	began := time.Now()

	// A web whose crawl lasts far longer than the test: three big hosts
	// of 400 pages at a 100 ms gap.
	web, err := testweb.Serve(testweb.Generate(testweb.Options{Seed: 9, Hosts: 12, BigPages: 400}), testweb.ServeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	hosts, err := hostrank.New(hostrank.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// A host parked an hour by its robots.txt's Retry-After, for a crawl
	// that waits for it (max wait 0): the page says what that crawl waits
	// for while the others keep the node busy.
	parked := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "3600")
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer parked.Close()
	resolve := web.Resolver()
	resolve["parked.test"] = []netip.Addr{netip.MustParseAddr("127.0.0.1")}
	n, err := node.Open(node.Options{DataDir: t.TempDir(), MinDelay: 100 * time.Millisecond, Concurrency: 8,
		AllowNets: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, Hosts: resolve,
		OnFetch: func(ev node.FetchEvent) { hosts.Observe(ev.Host, ev.Duration) }})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	j, err := n.Submit(job.Spec{Name: "browser test", Seeds: web.Seeds(), Domains: []string{web.Web().Options().Domain}, MaxDepth: 12})
	if err != nil {
		t.Fatal(err)
	}
	// The continuous crawl: one seed's pages, then waiting for recrawls.
	cj, err := n.Submit(job.Spec{Name: "fresh", Seeds: web.Seeds()[:1], Domains: []string{web.Web().Options().Domain}, MaxDepth: 1, Continuous: true})
	if err != nil {
		t.Fatal(err)
	}
	_, parkedPort, _ := net.SplitHostPort(parked.Listener.Addr().String())
	pj, err := n.Submit(job.Spec{Name: "parked", Seeds: []string{"http://parked.test:" + parkedPort + "/"}})
	if err != nil {
		t.Fatal(err)
	}
	n.Start()
	answers := &statsLog{byUptime: map[float64]statsAnswer{}}
	srv := httptest.NewServer(answers.wrap(api.New(api.Options{Node: func() api.Node { return n }, Token: browserToken,
		HostRanking: hosts, Dashboard: dashboard.Handler()})))
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		chromedp.NoSandbox, // root in CI containers; the page is our own, on loopback
		chromedp.Flag("disable-gpu", true),
		chromedp.WindowSize(1280, 1200),
		chromedp.UserDataDir(t.TempDir()),
	)...)
	defer cancelAlloc()
	bctx, closeBrowser := chromedp.NewContext(actx)
	defer closeBrowser()
	if err := chromedp.Do(bctx); err != nil { // starts the browser and the tab
		t.Fatalf("start %s: %v", chromium, err)
	}

	// Every console error, uncaught exception and browser log error
	// (failed loads, CSP violations) is a failure.
	var (
		mu       sync.Mutex
		problems []string
	)
	console := chromedp.Console(bctx)
	listening := make(chan struct{})
	go func() {
		defer close(listening)
		for m, err := range console {
			if err != nil {
				return
			}
			// checkFleet makes GET /v1/nodes answer 500 on purpose: the
			// browser logs each of those loads.
			if strings.HasSuffix(m.URL, "/v1/nodes") && strings.Contains(m.String(), "status of 500") {
				continue
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				mu.Lock()
				problems = append(problems, m.String()+" at "+m.URL)
				mu.Unlock()
			}
		}
	}()
	defer func() { closeBrowser(); <-listening }()

	step := func(what string, timeout time.Duration, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		sctx, cancel := context.WithTimeout(bctx, timeout)
		defer cancel()
		if err := chromedp.Do(sctx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	eval := func(expr string) string {
		t.Helper()
		sctx, cancel := context.WithTimeout(bctx, 10*time.Second)
		defer cancel()
		v, err := chromedp.Run(sctx, chromedp.Evaluate[string](expr))
		if err != nil {
			t.Fatalf("evaluate %s: %v", expr, err)
		}
		return v
	}
	// waitPage polls a page expression (evaluated by DevTools, so the
	// page's CSP, which forbids eval, does not apply) until it is "true".
	waitPage := func(what, expr string, timeout time.Duration) {
		t.Helper()
		waitFor(t, what, timeout, func() bool { return eval("String(!!("+expr+"))") == "true" })
	}

	step("open the dashboard", 60*time.Second,
		chromedp.Navigate(srv.URL+"/#token="+browserToken),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-crawl="1"]`)))
	if got := eval(`localStorage.getItem('trawl.token') || ''`); got != browserToken {
		t.Errorf("the page stored token %q, want the fragment's %q", got, browserToken)
	}
	if got := eval(`location.href`); strings.Contains(got, "#") {
		t.Errorf("the address still has the fragment: %s", got)
	}
	// A node on its own: /v1/nodes answered, and no fleet panel.
	waitPage("the page to read /v1/nodes", `document.body.dataset.fleet === 'false'`, 15*time.Second)
	if got := eval(`String(document.getElementById('fleet-section').hidden) + ' ' + document.getElementById('fleet-section').offsetHeight`); got != "true 0" {
		t.Errorf("a node on its own: the fleet panel's hidden and height = %s, want true 0", got)
	}

	// Numbers that change while the crawl runs: pages fetched, and the
	// host rankings fill in.
	first := eval(`document.getElementById('pages-total').textContent`)
	waitPage("pages fetched to change from "+first,
		`document.getElementById('pages-total').textContent !== `+strconv.Quote(first)+
			` && document.querySelectorAll('#busiest td.n').length > 0`+
			` && document.querySelectorAll('#slowest td.n').length > 0`, 60*time.Second)
	waitPage("a pages/s figure", `/^[0-9.,]+$/.test(document.getElementById('pages-rate').textContent)`, 30*time.Second)
	second := eval(`document.getElementById('pages-total').textContent`)
	t.Logf("pages fetched shown: %s, then %s", first, second)
	if st, _ := j.State(); st != job.Running {
		t.Fatalf("the crawl is %s before the pause: the web is too small for this test", st)
	}

	// The continuous crawl's row: no schedule figures before its first
	// scan, then the ones set here, as the scheduler would.
	recrawlRow := `[...document.querySelectorAll('#recrawl tr')].map((tr) => tr.textContent).join('|')`
	waitPage("the continuous crawl's row, waiting for recrawls",
		`document.getElementById('recrawl-section').hidden === false && `+recrawlRow+`.includes('waiting for recrawls')`, 60*time.Second)
	if row := eval(recrawlRow); !strings.Contains(row, "–") {
		t.Errorf("the continuous crawl's row before the schedule's figures = %q, want – for them", row)
	}
	cj.Stats.Recrawls.Add(1234)
	cj.Stats.NotModified.Add(1000)
	cj.Stats.Changed.Add(77)
	cj.Stats.SetFreshness(job.Freshness{At: time.Now(), Scheduled: 4321, Due: 12, Overdue: 3, Freshness: 0.875, MeanAge: 2*time.Hour + 5*time.Minute})
	cells := `[...document.querySelectorAll('#recrawl tr td')].map((td) => td.textContent).join(',')`
	want := "2,fresh,waiting for recrawls,1,234,1,000,77,4,321,12,3,87.5%,2h 5m"
	waitPage("the continuous crawl's recrawl counts and freshness", cells+` === `+strconv.Quote(want), 15*time.Second)
	if st := eval(`document.querySelector('tr[data-crawl="2"] td.state').textContent`); st != "running (waiting for recrawls)" {
		t.Errorf("the crawls table shows the continuous crawl as %q, want running (waiting for recrawls)", st)
	}
	// The parked crawl says what it waits for.
	parkedState := fmt.Sprintf(`document.querySelector('tr[data-crawl="%d"] td.state').textContent`, pj.ID)
	waitPage("the parked crawl's wait", parkedState+`.endsWith('for 1 host (robots.txt Retry-After))')`, 30*time.Second)
	if st := eval(parkedState); !strings.HasPrefix(st, "running (waiting ") {
		t.Errorf("the crawls table shows the parked crawl as %q, want running (waiting 59m for 1 host (robots.txt Retry-After))", st)
	}

	// A few more samples, so that the screenshot's charts have lines.
	waitPage("8 samples in the page", `Number(document.body.dataset.samples) >= 8`, 30*time.Second)

	// The figures the page shows are the answers' own: pages/s in the
	// tile and at the chart's end are one figure, over a window of at
	// least 5 s, and the content duplicates (once the crawl has met
	// some of the web's copies) are the answer's counts. Checked on
	// three successive samples.
	waitPage("content duplicates, exact and near, on the page",
		`Number(document.getElementById('dup-exact').textContent.replace(/,/g, '')) > 0 && `+
			`Number(document.getElementById('dup-near').textContent.replace(/,/g, '')) > 0`, 90*time.Second)
	var last string
	for range 3 {
		waitPage("a new sample", `document.getElementById('pages-rate').dataset.t !== `+strconv.Quote(last), 15*time.Second)
		last = checkFigures(t, eval(shownFigures), answers)
	}
	shot, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	path := filepath.Join(browser.ArtifactDir(t), "dashboard.png")
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot of the dashboard during the crawl: %s", path)

	step("click Pause", 10*time.Second, chromedp.Click(chromedp.CSS(`button[data-crawl="1"][data-action="pause"]`)))
	waitFor(t, "the crawl to be paused", 15*time.Second, func() bool { st, _ := j.State(); return st == job.Paused })
	waitPage("the page to show the crawl paused", `document.querySelector('tr[data-crawl="1"]').dataset.state === 'paused'`, 15*time.Second)
	step("click Resume", 10*time.Second, chromedp.Click(chromedp.CSS(`button[data-crawl="1"][data-action="resume"]`)))
	waitFor(t, "the crawl to run again", 15*time.Second, func() bool { st, _ := j.State(); return st == job.Running })
	waitPage("the page to show the crawl running", `document.querySelector('tr[data-crawl="1"]').dataset.state === 'running'`, 15*time.Second)
	if msg := eval(`document.getElementById('message').textContent`); msg != "crawl 1 is running" {
		t.Errorf("the page says %q after Resume, want \"crawl 1 is running\"", msg)
	}

	checkFleet(t, bctx, n, hosts, step, eval, waitPage)

	closeBrowser()
	<-listening
	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
		t.Errorf("browser console: %s", p)
	}
	t.Logf("browser test took %v", time.Since(began).Round(time.Millisecond))
}

// statsLog keeps the GET /v1/stats answers a handler sent, by their
// uptime_s: what the page was given, to judge what it shows.
type statsLog struct {
	mu       sync.Mutex
	byUptime map[float64]statsAnswer
}

// statsAnswer is what the checks read of a /v1/stats answer.
type statsAnswer struct {
	UptimeS float64 `json:"uptime_s"`
	Totals  struct {
		Fetched int64 `json:"fetched"`
	} `json:"totals"`
	Duplicates struct {
		ExactPages  int64   `json:"exact_pages"`
		NearPages   int64   `json:"near_pages"`
		ContentRate float64 `json:"content_rate"`
		URLRate     float64 `json:"url_rate"`
	} `json:"duplicates"`
}

// wrap returns h, with its /v1/stats answers kept in l.
func (l *statsLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/stats" {
			h.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		var a statsAnswer
		if rec.Code == http.StatusOK && json.Unmarshal(rec.Body.Bytes(), &a) == nil {
			l.mu.Lock()
			l.byUptime[a.UptimeS] = a
			l.mu.Unlock()
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	})
}

func (l *statsLog) at(t *testing.T, uptime string) statsAnswer {
	t.Helper()
	u, err := strconv.ParseFloat(uptime, 64)
	if err != nil {
		t.Fatalf("the page names sample %q: %v", uptime, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	a, ok := l.byUptime[u]
	if !ok {
		t.Fatalf("the page names sample uptime_s=%s, which /v1/stats never answered", uptime)
	}
	return a
}

// shownFigures is a page expression: what the page shows of pages/s and
// duplicates, and the samples (uptime_s) it says the rate is from, read at
// one instant.
const shownFigures = `JSON.stringify((() => {
  const $ = (id) => document.getElementById(id);
  return {t: $('pages-rate').dataset.t || '', from: $('pages-rate').dataset.from || '',
    rate: $('pages-rate').textContent, chart: $('chart-pages-now').textContent,
    exact: $('dup-exact').textContent, near: $('dup-near').textContent,
    content: $('dup-content-rate').textContent, urls: $('url-seen-rate').textContent};
})())`

// checkFigures judges what the page shows (shownFigures' JSON) against
// the answers it was given, and returns the sample it is of.
func checkFigures(t *testing.T, shown string, answers *statsLog) string {
	t.Helper()
	var f struct{ T, From, Rate, Chart, Exact, Near, Content, URLs string }
	if err := json.Unmarshal([]byte(shown), &f); err != nil {
		t.Fatalf("the page's figures %s: %v", shown, err)
	}
	b := answers.at(t, f.T)
	a := answers.at(t, f.From)
	if span := b.UptimeS - a.UptimeS; span < 5 {
		t.Errorf("pages/s %s is over %.3f s (samples %s to %s), want at least 5 s", f.Rate, span, f.From, f.T)
	}
	want := float64(b.Totals.Fetched-a.Totals.Fetched) / (b.UptimeS - a.UptimeS)
	if !near(t, f.Rate, want) {
		t.Errorf("the pages/s tile shows %s, want %.4f: %d pages fetched between samples %s and %s", f.Rate, want,
			b.Totals.Fetched-a.Totals.Fetched, f.From, f.T)
	}
	if f.Chart != f.Rate {
		t.Errorf("the pages/s chart ends at %s, the tile shows %s: want one figure", f.Chart, f.Rate)
	}
	for _, c := range []struct {
		what, shown string
		want        float64
	}{
		{"exact content duplicates", f.Exact, float64(b.Duplicates.ExactPages)},
		{"near content duplicates", f.Near, float64(b.Duplicates.NearPages)},
		{"content duplicates, % of pages fetched", strings.TrimSuffix(f.Content, "%"), 100 * b.Duplicates.ContentRate},
		{"links to known URLs, % of links found", strings.TrimSuffix(f.URLs, "%"), 100 * b.Duplicates.URLRate},
	} {
		if !near(t, c.shown, c.want) {
			t.Errorf("%s: the page shows %s, the answer (uptime_s=%s) says %v", c.what, c.shown, f.T, c.want)
		}
	}
	t.Logf("sample %s: %s pages/s over %s..%s; content duplicates %s (%s exact, %s near)", f.T, f.Rate, f.From, f.T, f.Content, f.Exact, f.Near)
	return f.T
}

// near reports whether shown, a number as the page prints it (digit
// groups, some decimals), is want rounded to its decimals.
func near(t *testing.T, shown string, want float64) bool {
	t.Helper()
	v, err := strconv.ParseFloat(strings.ReplaceAll(shown, ",", ""), 64)
	if err != nil {
		t.Errorf("the page shows %q: not a number", shown)
		return false
	}
	unit := 1.0
	if i := strings.IndexByte(shown, '.'); i >= 0 {
		unit = math.Pow(10, -float64(len(shown)-i-1))
	}
	return math.Abs(v-want) <= unit/2+1e-9
}

// checkFleet opens the dashboard of a second API over the same node, one
// whose Members say it is n1 of a fleet of three, n3 leaving, and checks
// the fleet panel's rows and summary: all 256 partitions owned, then (the
// members changed under the page) some moving.
func checkFleet(t *testing.T, bctx context.Context, n *node.Node, hosts *hostrank.Ranking,
	step func(string, time.Duration, ...chromedp.Action[chromedp.Void]),
	eval func(string) string, waitPage func(string, string, time.Duration)) {
	t.Helper()
	span := func(from, to int) []int {
		var ps []int
		for p := from; p < to; p++ {
			ps = append(ps, p)
		}
		return ps
	}
	info := func(addr string) json.RawMessage {
		b, _ := json.Marshal(map[string]string{"api": addr})
		return b
	}
	var members atomic.Pointer[[]api.Member]
	settled := []api.Member{
		{Name: "n2", Info: info("http://127.0.0.2:7410"), Owns: span(100, 200)},
		{Name: "n1", Info: info("http://127.0.0.1:7410"), Owns: span(0, 100)},
		{Name: "n3", Leaving: true, Info: info("http://127.0.0.3:7410"), Owns: span(200, 256)},
	}
	members.Store(&settled)
	h := api.New(api.Options{Node: func() api.Node { return n }, Token: browserToken,
		HostRanking: hosts, Dashboard: dashboard.Handler(),
		Members: func() []api.Member { return *members.Load() }, Self: "n1"})
	var failNodes atomic.Bool // GET /v1/nodes answers 500
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if failNodes.Load() && r.URL.Path == "/v1/nodes" {
			http.Error(w, "broken", http.StatusInternalServerError)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()

	step("open the fleet member's dashboard", 30*time.Second,
		chromedp.Navigate(srv.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS(`#fleet tr[data-member="n3"]`)))
	if got := eval(`document.body.dataset.fleet`); got != "true" {
		t.Errorf("a fleet member's page: data-fleet = %q, want true", got)
	}
	// Each row's cells, and its link.
	rowsExpr := `[...document.querySelectorAll('#fleet tr')].map((tr) => [...tr.cells].map((td) => td.textContent).join(',') +
		' -> ' + (tr.querySelector('a') ? tr.querySelector('a').href : '')).join('|')`
	want := "n1 (this page),member,100,127.0.0.1:7410 -> http://127.0.0.1:7410/|" +
		"n2,member,100,127.0.0.2:7410 -> http://127.0.0.2:7410/|" +
		"n3,leaving,56,127.0.0.3:7410 -> http://127.0.0.3:7410/"
	if got := eval(rowsExpr); got != want {
		t.Errorf("the fleet's rows:\n got %s\nwant %s", got, want)
	}
	if got := eval(`document.querySelector('#fleet tr[data-self]').dataset.member + ' ' + document.querySelector('#fleet tr[data-leaving]').dataset.member`); got != "n1 n3" {
		t.Errorf("the rows marked self and leaving: %s, want n1 n3", got)
	}
	summary := `document.getElementById('fleet-summary').textContent + ' [' + document.getElementById('fleet-summary').className + ']'`
	if got := eval(summary); got != "3 members, 256 partitions owned []" {
		t.Errorf("the fleet's summary = %q, want \"3 members, 256 partitions owned\" (no warning)", got)
	}
	// The rest of the page still works beside the panel.
	waitPage("the crawls' rows beside the fleet", `document.querySelector('tr[data-crawl="1"]') !== null`, 15*time.Second)

	// n3 has handed 40 of its partitions to n2, 10 are between owners, and
	// n4 has joined.
	moving := []api.Member{
		{Name: "n1", Info: info("http://127.0.0.1:7410"), Owns: span(0, 100)},
		{Name: "n2", Info: info("http://127.0.0.2:7410"), Owns: span(100, 240)},
		{Name: "n3", Leaving: true, Info: info("http://127.0.0.3:7410"), Owns: span(250, 256)},
		{Name: "n4", Info: info("http://127.0.0.4:7410")}, // just joined: owns nothing yet ("owns": null)
	}
	members.Store(&moving)
	wantMoving := "4 members, 246 of 256 partitions owned: partitions are moving [warn]"
	waitPage("the summary to say partitions are moving", summary+` === `+strconv.Quote(wantMoving), 15*time.Second)
	if got := eval(`[...document.querySelectorAll('#fleet td.n')].map((td) => td.textContent).join(',')`); got != "100,140,6,0" {
		t.Errorf("the partitions owned while moving = %s, want 100,140,6,0", got)
	}

	// /v1/nodes fails: the summary says so, the rows stay, and the rest of
	// the page goes on updating.
	failNodes.Store(true)
	waitPage("the summary to say /v1/nodes failed",
		`document.getElementById('fleet-summary').className === 'bad' && document.getElementById('fleet-summary').textContent.includes('500')`, 15*time.Second)
	samples := eval(`document.body.dataset.samples`)
	waitPage("more samples while /v1/nodes fails", `document.body.dataset.samples !== `+strconv.Quote(samples)+
		` && document.getElementById('status').className === 'ok'`, 15*time.Second)
	if got := eval(`document.querySelectorAll('#fleet tr[data-member]').length + ' ' + document.getElementById('fleet-section').hidden`); got != "4 false" {
		t.Errorf("the fleet panel while /v1/nodes fails: rows and hidden = %s, want 4 false", got)
	}
	failNodes.Store(false)
	waitPage("the summary back after /v1/nodes recovers", summary+` === `+strconv.Quote(wantMoving), 15*time.Second)
	shot, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	path := filepath.Join(browser.ArtifactDir(t), "dashboard-fleet.png")
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot of a fleet member's dashboard: %s", path)
}

// waitFor polls cond every 50 ms until it holds, or fails the test after
// timeout.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
