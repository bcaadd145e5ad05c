package dashboard_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/trawl-crawler/trawl/api"
	"github.com/trawl-crawler/trawl/dashboard"
	"github.com/trawl-crawler/trawl/internal/hostrank"
	"github.com/trawl-crawler/trawl/internal/testweb"
	"github.com/trawl-crawler/trawl/job"
	"github.com/trawl-crawler/trawl/node"
)

const browserToken = "dashboard-test-token"

// TestDashboardInBrowser opens the dashboard in headless Chromium over a
// node crawling the synthetic web: the page loads without a script error
// or a CSP violation, takes the token from the link's fragment (and drops
// the fragment), shows numbers that change while the crawl runs, and its
// Pause and Resume buttons pause and resume the crawl (checked on the node).
// A screenshot taken during the crawl goes to the artifact directory
// ($TRAWL_ARTIFACTS, else test-artifacts/ at the repository's root).
//
// Chromium is required, not optional: scripts/test.sh installs Debian's
// package when it is missing.
func TestDashboardInBrowser(t *testing.T) {
	chromium := chromiumPath(t)
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
	n, err := node.Open(node.Options{DataDir: t.TempDir(), MinDelay: 100 * time.Millisecond, Concurrency: 8,
		AllowNets: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, Hosts: web.Resolver(),
		OnFetch: func(ev node.FetchEvent) { hosts.Observe(ev.Host, ev.Duration) }})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	j, err := n.Submit(job.Spec{Name: "browser test", Seeds: web.Seeds(), Domains: []string{web.Web().Options().Domain}, MaxDepth: 12})
	if err != nil {
		t.Fatal(err)
	}
	n.Start()
	srv := httptest.NewServer(api.New(api.Options{Node: func() api.Node { return n }, Token: browserToken,
		HostRanking: hosts, Dashboard: dashboard.Handler()}))
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

	// A few more samples, so that the screenshot's charts have lines.
	waitPage("8 samples in the page", `Number(document.body.dataset.samples) >= 8`, 30*time.Second)
	shot, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	path := filepath.Join(artifactDir(t), "dashboard.png")
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

	closeBrowser()
	<-listening
	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
		t.Errorf("browser console: %s", p)
	}
	t.Logf("browser test took %v", time.Since(began).Round(time.Millisecond))
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

// chromiumPath finds Debian's chromium (or Chrome), or fails the test:
// CI installs it (scripts/test.sh), so its absence is an error, not a skip.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("no chromium on PATH: install it (apt-get install -y chromium; scripts/test.sh does)")
	return ""
}

// artifactDir is where the test keeps what a reviewer looks at after a
// run: $TRAWL_ARTIFACTS, else test-artifacts/ at the repository's root
// (git-ignored).
func artifactDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("TRAWL_ARTIFACTS")
	if dir == "" {
		root, err := repoRoot()
		if err != nil {
			t.Fatal(err)
		}
		dir = filepath.Join(root, "test-artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// repoRoot is the nearest directory up from here that holds go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("no go.mod above " + dir)
		}
		dir = up
	}
}
