package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"go.uber.org/goleak"

	"github.com/trawl-crawler/trawl/internal/testkit/browser"
	"github.com/trawl-crawler/trawl/job"
	"github.com/trawl-crawler/trawl/node"
	"github.com/trawl-crawler/trawl/wacz"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The viewport both renderings are taken at.
const viewW, viewH = 1024, 768

// maxDiffShare is the share of pixels a replayed page may differ from
// its live rendering by (beyond pixelTolerance). Live and replay are the
// same document in the same Chromium at the same viewport, so they
// should match exactly, and do: the share measured is 0. The bound
// leaves room for a stray antialiased glyph edge and no more. The
// test's control measures what the loss of one requisite costs the home
// page: the web font 0.81 %, the <picture>'s crest 1.96 %, the body's
// background tile 9.15 %, the @imported stylesheet 41.81 %; 0.1 % (786
// pixels) lets none of them through, with a margin of eight for the
// smallest.
const maxDiffShare = 0.001

// pages are the site's pages, by path, with the title each has.
var pages = []struct{ path, title, name string }{
	{"/", "Harbour Lane Rowing Club", "home"},
	{"/about.html", "About the club", "about"},
	{"/sessions.html", "Sessions", "sessions"},
}

// TestReplay: a crawl with page requisites, exported as a WACZ, replays
// in ReplayWeb.page as the live site rendered: each page's screenshot
// in the replay matches the live one (share of differing pixels at most
// maxDiffShare), and the replayed document has its stylesheets (one
// @imported), its inline style, its images (srcset, <picture>), its web
// font and its script, all served from the archive: once the crawl has
// ended the site records any request as an escape, and the browser's
// proxy records any request leaving loopback; both must stay empty.
// Screenshots (live, replay, diff) go to the artifact directory
// ($TRAWL_ARTIFACTS, else test-artifacts/ at the repository's root).
//
// Chromium and tools/replay/node_modules (npm ci --prefix tools/replay)
// are required, not optional: scripts/test.sh installs both.
func TestReplay(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: crawls a site and replays it in Chromium through ReplayWeb.page; the full suite runs it")
	}
	chromium := browser.ChromiumPath(t)
	root := browser.RepoRoot(t)
	rwp := filepath.Join(root, "tools", "replay", "node_modules", "replaywebpage")
	for _, f := range []string{"ui.js", "sw.js"} {
		if _, err := os.Stat(filepath.Join(rwp, f)); err != nil {
			t.Fatalf("ReplayWeb.page missing (%v): run npm ci --prefix tools/replay (scripts/test.sh does)", err)
		}
	}
	arts := browser.ArtifactDir(t)

	site := serveSite(t, filepath.Join("testdata", "site"))
	archive := crawlAndExport(t, site.url)

	// Everything leaving loopback goes to this proxy, which refuses it
	// and records it: the replay must not need the internet (a CDN).
	outside := newRecorder(t, "outside")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		chromedp.NoSandbox, // root in CI containers; the pages are our own, on loopback
		chromedp.Flag("disable-gpu", true),
		chromedp.WindowSize(viewW, viewH),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.ProxyServer("http://"+outside.addr),
		// Chromium's own calls home (component updates, network time,
		// optimisation hints, accounts) are turned off, so that whatever
		// reaches the proxy came from a page or the replay.
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-domain-reliability", true),
		chromedp.Flag("no-pings", true),
		chromedp.Flag("disable-features", "Translate,BlinkGenPropertyTrees,NetworkTimeServiceQuerying,"+
			"OptimizationHints,OptimizationHintsFetching,OptimizationGuideModelDownloading,MediaRouter,"+
			"AccountConsistency,SigninInterceptBubble,PushMessaging"),
	)...)
	defer cancelAlloc()
	bctx, closeBrowser := chromedp.NewContext(actx)
	defer closeBrowser()
	if err := chromedp.Do(bctx); err != nil { // starts the browser
		t.Fatalf("start %s: %v", chromium, err)
	}

	live := map[string][]byte{}
	for _, p := range pages {
		shot, facts := renderLive(t, bctx, site.url+p.path, true)
		checkFacts(t, "live "+p.path, facts, p.title)
		live[p.path] = shot
	}

	// The control: the home page rendered live without one of its
	// requisites differs from the whole page by more than maxDiffShare,
	// so a replay that lacked it would fail.
	for _, missing := range []string{"/img/crest.png", "/fonts/DejaVuSansMono-Oblique.ttf", "/css/base.css", "/img/paper.png"} {
		site.withhold(missing)
		shot, _ := renderLive(t, bctx, site.url+"/", false)
		site.withhold("")
		n, total, _, err := diff(live["/"], shot)
		if err != nil {
			t.Fatal(err)
		}
		share := float64(n) / float64(total)
		t.Logf("control: / without %s differs in %d of %d pixels (%.2f %%)", missing, n, total, 100*share)
		if share <= maxDiffShare {
			t.Errorf("control: / without %s differs in only %.3f %% of its pixels, within the bound %.2f %%: the comparison cannot see it missing",
				missing, 100*share, 100*maxDiffShare)
		}
	}

	// From here on the site is gone: whatever reaches it escaped the
	// archive.
	site.stop()
	replay := serveReplay(t, rwp, archive)
	for _, p := range pages {
		shot, facts := renderReplay(t, bctx, replay, site.url+p.path)
		checkFacts(t, "replay "+p.path, facts, p.title)
		n, total, d, err := diff(live[p.path], shot)
		if err != nil {
			t.Fatalf("%s: %v", p.path, err)
		}
		for suffix, b := range map[string][]byte{"live": live[p.path], "replay": shot, "diff": d} {
			if err := os.WriteFile(filepath.Join(arts, "replay-"+p.name+"-"+suffix+".png"), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		share := float64(n) / float64(total)
		t.Logf("%s: %d of %d pixels differ (%.4f %%), bound %.2f %%", p.path, n, total, 100*share, 100*maxDiffShare)
		if share > maxDiffShare {
			t.Errorf("%s: replay differs from live in %d of %d pixels (%.3f %% > %.2f %%); see %s",
				p.path, n, total, 100*share, 100*maxDiffShare, filepath.Join(arts, "replay-"+p.name+"-diff.png"))
		}
	}
	// Every load of the replay's frame came from the service worker: none
	// reached the server, to be reloaded until the worker takes over.
	for _, r := range replay.requests() {
		if strings.HasPrefix(r, "GET /replay/ ") {
			t.Errorf("the replay's frame was loaded from the server, not the service worker: %q", r)
		}
	}
	if esc := site.escaped(); len(esc) > 0 {
		t.Errorf("requests reached the site during replay (escaped the archive): %q", esc)
	}
	var out, own []string
	for _, r := range outside.requests() {
		if slices.Contains(chromiumHosts, r.host) {
			own = append(own, r.line)
		} else {
			out = append(out, r.line)
		}
	}
	if len(own) > 0 {
		t.Logf("Chromium's own requests, refused by the proxy: %q", own)
	}
	if len(out) > 0 {
		t.Errorf("requests left loopback: %q", out)
	}
}

// site serves the files of a directory on loopback and logs each
// request; once stopped, it answers 410 and logs them as escapes.
type site struct {
	url      string
	mu       sync.Mutex
	stopped  bool
	escapes  []string
	withheld string // a path answered 404, for the control
}

func serveSite(t *testing.T, dir string) *site {
	t.Helper()
	s := &site{}
	files := http.FileServer(http.Dir(dir))
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		stopped, withheld := s.stopped, s.withheld == r.URL.Path
		if stopped {
			s.escapes = append(s.escapes, r.Method+" "+r.URL.String())
		}
		s.mu.Unlock()
		// Every rendering asks again: none is drawn from the browser's
		// cache of another.
		w.Header().Set("Cache-Control", "no-store")
		switch {
		case stopped:
			http.Error(w, "gone: the site is archived", http.StatusGone)
			return
		case withheld:
			http.NotFound(w, r)
			return
		}
		// Explicit types: the crawl archives them, and a replay serves
		// what the archive says.
		if ct := mime.TypeByExtension(path.Ext(r.URL.Path)); ct != "" {
			w.Header().Set("Content-Type", ct)
		}
		files.ServeHTTP(w, r)
	})
	s.url = "http://" + listen(t, h)
	return s
}

func (s *site) stop() {
	s.mu.Lock()
	s.stopped = true
	s.mu.Unlock()
}

// withhold makes the site answer 404 for path ("": for none).
func (s *site) withhold(path string) {
	s.mu.Lock()
	s.withheld = path
	s.mu.Unlock()
}

func (s *site) escaped() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.escapes)
}

// listen serves h on a loopback port until the test ends and returns
// the address.
func listen(t *testing.T, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	done := make(chan struct{})
	go func() { defer close(done); srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close(); <-done })
	return ln.Addr().String()
}

// chromiumHosts are the hosts Chromium calls by itself, whatever page it
// shows, and that no flag of Chromium 156 turns off for good: the
// component updater and the Google accounts probe. A request to them
// says nothing about the replay.
var chromiumHosts = []string{"update.googleapis.com", "accounts.google.com", "clients2.google.com",
	"optimizationguide-pa.googleapis.com"}

// recorder answers every request 403 and records it.
type recorder struct {
	addr string
	mu   sync.Mutex
	log  []request
}

type request struct{ host, line string }

func newRecorder(t *testing.T, name string) *recorder {
	rec := &recorder{}
	rec.addr = listen(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.mu.Lock()
		host := r.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		rec.log = append(rec.log, request{host, r.Method + " " + r.Host + r.URL.RequestURI()})
		rec.mu.Unlock()
		http.Error(w, name+": refused", http.StatusForbidden)
	}))
	return rec
}

func (r *recorder) requests() []request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.log)
}

// crawlAndExport crawls the site with its requisites into a fresh data
// directory and exports it as a WACZ; it returns the WACZ's path.
func crawlAndExport(t *testing.T, seed string) string {
	t.Helper()
	dir := t.TempDir()
	n, err := node.Open(node.Options{DataDir: dir, MinDelay: 5 * time.Millisecond, Concurrency: 4,
		AllowNets: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, NoSitemaps: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	j, err := n.Submit(job.Spec{Name: "replay", Seeds: []string{seed + "/"}, Requisites: job.RequisitesAny})
	if err != nil {
		t.Fatal(err)
	}
	n.Start()
	select {
	case <-j.Ended():
	case <-time.After(time.Minute):
		t.Fatal("the crawl did not end in a minute")
	}
	if err := j.Err(); err != nil {
		t.Fatal(err)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	e, err := wacz.New(wacz.Options{Data: dir})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "archive.wacz")
	res, err := e.WriteFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if res.Pages != len(pages) {
		t.Errorf("the WACZ has %d pages, want %d", res.Pages, len(pages))
	}
	t.Logf("WACZ: %d captures, %d pages, %d bytes", res.Captures, res.Pages, res.Bytes)
	return out
}

// serveReplay serves ReplayWeb.page (ui.js, and its service worker
// sw.js under /replay/, the scope it replays in), the WACZ, and
// /embed?url=U: a page whose whole viewport is the replay of U. It
// returns the server's base URL. http://127.0.0.1 is a secure context,
// so the service worker may register.
func serveReplay(t *testing.T, rwp, archive string) *replayServer {
	t.Helper()
	rs := &replayServer{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /ui.js", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, filepath.Join(rwp, "ui.js"))
	})
	mux.HandleFunc("GET /replay/sw.js", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, filepath.Join(rwp, "sw.js"))
	})
	mux.HandleFunc("GET /archive.wacz", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, archive) // with range requests, which the replay reads by
	})
	mux.HandleFunc("GET /embed", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html>
<html><head><meta charset="utf-8"><title>replay</title>
<script src="/ui.js"></script>
<style>html, body { margin: 0; padding: 0; overflow: hidden } replay-web-page { display: block; width: 100vw; height: 100vh }</style>
</head><body>
<template><replay-web-page source="/archive.wacz" url="%s" replaybase="/replay/" embed="replayonly"></replay-web-page></template>
<script>
// The service worker first, active before the replay's frame loads, so
// that its first load is served by the worker.
(async () => {
	const reg = await navigator.serviceWorker.register("/replay/sw.js?serveIndex=1", {scope: "/replay/"});
	const sw = reg.installing || reg.waiting || reg.active;
	if (sw.state !== "activated") {
		await new Promise((done) => sw.addEventListener("statechange", () => sw.state === "activated" && done()));
	}
	document.body.append(document.querySelector("template").content.cloneNode(true));
})();
</script>
</body></html>`, html.EscapeString(r.URL.Query().Get("url")))
	})
	rs.url = "http://" + listen(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rs.mu.Lock()
		rs.log = append(rs.log, r.Method+" "+r.URL.Path+" "+r.Header.Get("Range"))
		rs.mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	return rs
}

// replayServer serves the replay and logs its requests, for a failure's
// message.
type replayServer struct {
	url string
	mu  sync.Mutex
	log []string
}

func (rs *replayServer) requests() []string {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return slices.Clone(rs.log)
}

// facts are what a rendered document says of itself.
type facts struct {
	Title      string   `json:"title"`
	Scripted   string   `json:"scripted"`   // set by js/app.js
	HeaderBg   string   `json:"headerBg"`   // from base.css, @imported by site.css
	HTMLBg     string   `json:"htmlBg"`     // from site.css
	NewsColor  string   `json:"newsColor"`  // from the inline <style>, home page only
	H1Font     string   `json:"h1Font"`     // from site.css
	FontFaces  []string `json:"fontFaces"`  // "family status" of document.fonts
	FontCheck  bool     `json:"fontCheck"`  // document.fonts.check of the web font
	Images     []string `json:"images"`     // currentSrc of each complete, decoded <img>
	Broken     []string `json:"broken"`     // <img> not complete or of no natural width
	Loaded     bool     `json:"loaded"`     // the load event has fired
	Ready      bool     `json:"ready"`      // loaded, fonts and images done
	StyleCount int      `json:"styleCount"` // document.styleSheets.length
}

// factsJS returns a document's facts; doc names the document.
const factsJS = `(function(doc) {
	const win = doc.defaultView;
	const q = (s) => doc.querySelector(s);
	const cs = (s, p) => { const e = q(s); return e ? win.getComputedStyle(e)[p] : ""; };
	const imgs = [...doc.images];
	const ok = imgs.filter((i) => i.complete && i.naturalWidth > 0);
	const faces = [...doc.fonts].map((f) => f.family.replace(/"/g, "") + " " + f.status);
	return {
		title: doc.title,
		scripted: doc.documentElement.getAttribute("data-scripted") || "",
		headerBg: cs("header", "backgroundImage"),
		htmlBg: cs("html", "backgroundImage"),
		newsColor: cs(".news", "color"),
		h1Font: cs("h1", "fontFamily"),
		fontFaces: faces,
		fontCheck: doc.fonts.check('16px "Harbour Mono"'),
		images: ok.map((i) => new URL(i.currentSrc).pathname),
		broken: imgs.filter((i) => !ok.includes(i)).map((i) => i.currentSrc || i.src),
		loaded: doc.readyState === "complete",
		ready: doc.readyState === "complete" && doc.fonts.status === "loaded" && ok.length === imgs.length &&
			faces.includes("Harbour Mono loaded"),
		styleCount: doc.styleSheets.length,
	};
})`

// checkFacts checks what a rendered page says of itself against the
// site's files.
func checkFacts(t *testing.T, what string, f facts, title string) {
	t.Helper()
	var bad []string
	check := func(ok bool, format string, args ...any) {
		if !ok {
			bad = append(bad, fmt.Sprintf(format, args...))
		}
	}
	check(f.Title == title, "title %q, want %q", f.Title, title)
	check(f.Scripted == "yes", "js/app.js did not run (data-scripted %q)", f.Scripted)
	check(strings.Contains(f.HeaderBg, "/img/waves.png"), "header background %q: base.css (@imported) not applied", f.HeaderBg)
	check(strings.Contains(f.HTMLBg, "/img/paper.png"), "html background %q: site.css not applied", f.HTMLBg)
	check(strings.Contains(f.H1Font, "Harbour Mono"), "h1 font-family %q", f.H1Font)
	check(slices.Contains(f.FontFaces, "Harbour Mono loaded") && f.FontCheck, "web font not loaded: faces %q, check %v", f.FontFaces, f.FontCheck)
	check(len(f.Broken) == 0, "images not loaded: %q", f.Broken)
	// The <picture>'s source, for a viewport of at least 600 px, not its
	// fallback <img>.
	// A replayed image's path is its archived URL's after the replay's
	// prefix.
	has := func(p string) bool {
		return slices.ContainsFunc(f.Images, func(i string) bool { return strings.HasSuffix(i, p) })
	}
	check(has("/img/crest.png"), "images %q: no /img/crest.png from <picture><source>", f.Images)
	check(has("/img/boat-320.png") || title == "About the club", "images %q: no srcset candidate /img/boat-320.png", f.Images)
	if title == "Harbour Lane Rowing Club" {
		check(f.NewsColor == "rgb(91, 30, 30)", "inline <style> not applied: .news color %q", f.NewsColor)
	}
	for _, b := range bad {
		t.Errorf("%s: %s", what, b)
	}
}

// evalJSON evaluates a JavaScript expression whose value is a JSON
// string into v.
func evalJSON(ctx context.Context, expr string, v any) error {
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		return err
	}
	if s == "" {
		return errNotYet
	}
	return json.Unmarshal([]byte(s), v)
}

var errNotYet = errors.New("not yet")

// waitFor polls fn every 100 ms until it returns true, an error other
// than errNotYet, or d passes.
func waitFor(ctx context.Context, d time.Duration, fn func() (bool, error)) error {
	deadline := time.Now().Add(d)
	var last error
	for {
		ok, err := fn()
		if err != nil && !errors.Is(err, errNotYet) {
			return err
		}
		if ok {
			return nil
		}
		last = err
		if time.Now().After(deadline) {
			if last == nil {
				last = errNotYet
			}
			return fmt.Errorf("not done in %v: %w", d, last)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// renderLive opens u in a new tab and returns its screenshot once the
// page has loaded (with whole, its fonts and images too) and its
// rendering is stable.
func renderLive(t *testing.T, bctx context.Context, u string, whole bool) ([]byte, facts) {
	t.Helper()
	tctx, closeTab := chromedp.NewContext(bctx)
	defer closeTab()
	if err := chromedp.Do(tctx, chromedp.EmulateViewport(viewW, viewH), chromedp.Navigate(u)); err != nil {
		t.Fatalf("live %s: %v", u, err)
	}
	var f facts
	err := waitFor(tctx, 20*time.Second, func() (bool, error) {
		err := evalJSON(tctx, "document.fonts.ready.then(() => JSON.stringify("+factsJS+"(document)))", &f)
		return err == nil && (f.Ready || !whole && f.Loaded), err
	})
	if err != nil {
		t.Fatalf("live %s: %v (last facts %+v)", u, err, f)
	}
	return stableShot(t, tctx, "live "+u, nil), f
}

// framesJS describes every frame reachable from the top document
// (through shadow roots), with the text its shadow roots show, for a
// failure's message.
const framesJS = `JSON.stringify((function() {
	const out = [];
	function walk(root, depth) {
		for (const el of root.querySelectorAll("*")) {
			if (el.shadowRoot) {
				out.push(depth + " <" + el.tagName.toLowerCase() + "> shadow text: " + el.shadowRoot.textContent.trim().slice(0, 300));
				walk(el.shadowRoot, depth + "  ");
			}
			if (el.tagName !== "IFRAME") continue;
			let doc;
			try { doc = el.contentDocument; } catch (e) { out.push(depth + " iframe " + el.src + ": " + e); continue; }
			out.push(depth + " iframe " + (doc ? doc.location.href + " " + doc.readyState +
				" sw controller " + !!(el.contentWindow.navigator.serviceWorker && el.contentWindow.navigator.serviceWorker.controller) +
				" html " + doc.documentElement.outerHTML.slice(0, 600) : el.src));
			if (doc) walk(doc, depth + "  ");
		}
	}
	walk(document, "");
	return out.join("\n");
})())`

// findReplayJS finds the replayed document: the innermost frame, through
// the embed's shadow roots and same-origin frames, whose path is a
// replay URL (/replay/w/COLL/TSmp_/URL). It returns the frame's window
// and its box in the top viewport, or null.
const findReplayJS = `(function() {
	function search(root, x, y) {
		for (const el of root.querySelectorAll("*")) {
			if (el.shadowRoot) {
				const r = search(el.shadowRoot, x, y);
				if (r) return r;
			}
			if (el.tagName !== "IFRAME") continue;
			let doc;
			try { doc = el.contentDocument; } catch (e) { continue; }
			if (!doc) continue;
			const box = el.getBoundingClientRect();
			const bx = x + box.left + el.clientLeft, by = y + box.top + el.clientTop;
			const inner = search(doc, bx, by);
			if (inner) return inner;
			if (/mp_\//.test(el.contentWindow.location.pathname)) {
				return {win: el.contentWindow, x: bx, y: by, w: el.clientWidth, h: el.clientHeight};
			}
		}
		return null;
	}
	return search(document, 0, 0);
})()`

// renderReplay opens the replay of u in a new tab and returns the
// screenshot of the replayed page's box once that page has loaded its
// fonts and images and the rendering is stable.
func renderReplay(t *testing.T, bctx context.Context, rs *replayServer, u string) ([]byte, facts) {
	t.Helper()
	tctx, closeTab := chromedp.NewContext(bctx)
	defer closeTab()
	if err := chromedp.Do(tctx, chromedp.EmulateViewport(viewW, viewH),
		chromedp.Navigate(rs.url+"/embed?url="+url.QueryEscape(u))); err != nil {
		t.Fatalf("replay %s: %v", u, err)
	}
	var got struct {
		X, Y, W, H float64
		Href       string
		Facts      facts
	}
	err := waitFor(tctx, 60*time.Second, func() (bool, error) {
		err := evalJSON(tctx, `(function() {
			const r = `+findReplayJS+`;
			// Not yet: no replay frame, or one between two documents.
			if (!r || !r.win.document || !r.win.document.documentElement) return "";
			return JSON.stringify({x: r.x, y: r.y, w: r.w, h: r.h, href: r.win.location.href,
				facts: `+factsJS+`(r.win.document)});
		})()`, &got)
		return err == nil && got.Facts.Ready, err
	})
	if err != nil {
		var frames string
		if ferr := evalJSON(tctx, framesJS, &frames); ferr != nil {
			frames = ferr.Error()
		}
		t.Fatalf("replay %s: %v (last: %+v)\nframes: %s\nreplay server's log: %q", u, err, got, frames, rs.requests())
	}
	t.Logf("replay %s in frame %s at %v,%v %vx%v", u, got.Href, got.X, got.Y, got.W, got.H)
	if got.W != viewW || got.H != viewH {
		t.Fatalf("replay %s: the replayed page's frame is %vx%v, not the %dx%d viewport", u, got.W, got.H, viewW, viewH)
	}
	clip := &page.Viewport{X: got.X, Y: got.Y, Width: got.W, Height: got.H, Scale: 1}
	return stableShot(t, tctx, "replay "+u, clip), got.Facts
}

// stableShot takes screenshots (of clip, or the viewport) until two in a
// row are the same, within 10 s: the page has stopped changing.
func stableShot(t *testing.T, ctx context.Context, what string, clip *page.Viewport) []byte {
	t.Helper()
	var prev, shot []byte
	err := waitFor(ctx, 10*time.Second, func() (bool, error) {
		r, err := chromedp.Call(ctx, page.CaptureScreenshot, page.CaptureScreenshotParams{
			Format: page.CaptureScreenshotFormatPng, Clip: clip})
		if err != nil {
			return false, err
		}
		shot = r.Data
		same := prev != nil && string(prev) == string(shot)
		prev = shot
		return same, nil
	})
	if err != nil {
		t.Fatalf("%s: screenshot: %v", what, err)
	}
	return shot
}
