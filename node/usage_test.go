package node

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/crawllog"
	"github.com/trawl-crawler/trawl/job"
	"github.com/trawl-crawler/trawl/usagepref"
	"github.com/trawl-crawler/trawl/warc"
)

// usageTDMRep is usageSite's /.well-known/tdmrep.json: the first rule
// that matches a path applies, so /tdm/open.html is open and the rest of
// /tdm/ reserved.
const usageTDMRep = `[
  {"location": "/tdm/open.html", "tdm-reservation": 0},
  {"location": "/tdm/*",   "tdm-reservation": 1, "tdm-policy": "https://policy.test/tdm.json"}
]`

// usageRule is rule i of usageTDMRep exactly as served.
func usageRule(i int) string {
	lines := strings.Split(usageTDMRep, "\n")
	return strings.TrimSuffix(strings.TrimSpace(lines[1+i]), ",")
}

// usageSite serves pages whose site says, in each way it can, what their
// content may be used for: a Content-Usage line of robots.txt for one
// path, an X-Robots-Tag header, a TDMRep meta element, a tdmrep.json for
// two pages; one page says nothing. It returns the site and the paths
// requested, in order.
func usageSite(t *testing.T) (string, func() []string) {
	t.Helper()
	var (
		mu        sync.Mutex
		requested []string
	)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	html := func(w http.ResponseWriter, body string) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<!doctype html>"+body)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		requested = append(requested, r.URL.Path)
		mu.Unlock()
		switch r.URL.Path {
		case "/robots.txt":
			io.WriteString(w, "User-agent: *\nAllow: /\nContent-Usage: /no-ai/ train-ai=n\nContent-Signal: search=yes\n")
		case "/.well-known/tdmrep.json":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, usageTDMRep)
		case "/index.html":
			html(w, `<a href="/no-ai/a.html">a</a><a href="/headed.html">h</a><a href="/meta.html">m</a><a href="/plain.html">p</a>`+
				`<a href="/tdm/a.html">t</a><a href="/tdm/open.html">o</a>`)
		case "/no-ai/a.html", "/plain.html", "/tdm/a.html", "/tdm/open.html":
			html(w, "<p>page</p>")
		case "/headed.html":
			w.Header().Set("X-Robots-Tag", "noarchive")
			html(w, "<p>headed</p>")
		case "/meta.html":
			html(w, `<meta name="tdm-reservation" content="1"><p>meta</p>`)
		default:
			http.NotFound(w, r)
		}
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String(), func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(requested)
	}
}

// TestUsagePreferences: every capture whose site states something of the
// use of its content has a metadata record naming its response, holding
// the statements exactly as served, and a summary in its crawl log line;
// a crawl whose purpose a site denies marks those captures or, skipping
// them, archives none of them while still following their links. For a
// crawl that reads TDMRep files, the origin's tdmrep.json is fetched
// once, after robots.txt and before any page, and archived; its first
// matching rule applies.
func TestUsagePreferences(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: crawls of a small site; the full suite runs it")
	}
	t.Parallel()
	all := []string{"/index.html", "/no-ai/a.html", "/headed.html", "/meta.html", "/plain.html", "/tdm/a.html", "/tdm/open.html"}
	for _, c := range []struct {
		name, purpose, onDenied string
		archived                []string // pages with a response record
		denied                  []string // pages whose crawl log line names the purpose denied
	}{
		{"no purpose", "", "", all, nil},
		{"ai-train, mark", job.PurposeAITrain, "", all, []string{"/meta.html", "/no-ai/a.html", "/tdm/a.html"}},
		{"ai-train, skip", job.PurposeAITrain, job.DeniedSkip, []string{"/index.html", "/headed.html", "/plain.html", "/tdm/open.html"},
			[]string{"/meta.html", "/no-ai/a.html", "/tdm/a.html"}},
		{"archive, skip", job.PurposeArchive, job.DeniedSkip, []string{"/index.html", "/no-ai/a.html", "/meta.html", "/plain.html", "/tdm/a.html", "/tdm/open.html"},
			[]string{"/headed.html"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			site, requested := usageSite(t)
			dir := t.TempDir()
			n, err := Open(Options{DataDir: dir, MinDelay: 5 * time.Millisecond, Concurrency: 2, AllowNets: loopback, NoSitemaps: true})
			if err != nil {
				t.Fatal(err)
			}
			defer n.Close()
			j, err := n.Submit(job.Spec{Seeds: []string{site + "/index.html"}, Purpose: c.purpose, OnDenied: c.onDenied, TDMRep: true})
			if err != nil {
				t.Fatal(err)
			}
			n.Start()
			select {
			case <-j.Ended():
			case <-time.After(time.Minute):
				t.Fatal("the crawl did not end")
			}
			if err := n.Close(); err != nil {
				t.Fatal(err)
			}
			responses, metas := readUsageRecords(t, dir, site)
			if got := requested(); len(got) != len(all)+2 || got[0] != "/robots.txt" || got[1] != "/.well-known/tdmrep.json" {
				t.Errorf("requests %q: want robots.txt, tdmrep.json, then each page once", got)
			}
			if _, ok := responses["/.well-known/tdmrep.json"]; !ok {
				t.Error("tdmrep.json not archived")
			}
			for _, p := range all {
				_, got := responses[p]
				want := false
				for _, a := range c.archived {
					want = want || a == p
				}
				if got != want {
					t.Errorf("%s: archived %v, want %v", p, got, want)
				}
			}
			// Exactly as served, whatever the purpose (only archived
			// captures carry a record).
			wantSignals := map[string][]string{
				"/no-ai/a.html":  {"robots.txt Content-Usage /no-ai/ train-ai=n", "robots.txt Content-Signal search=yes"},
				"/headed.html":   {"robots.txt Content-Signal search=yes", "header X-Robots-Tag noarchive"},
				"/meta.html":     {"robots.txt Content-Signal search=yes", "meta tdm-reservation 1"},
				"/plain.html":    {"robots.txt Content-Signal search=yes"},
				"/index.html":    {"robots.txt Content-Signal search=yes"},
				"/tdm/open.html": {"robots.txt Content-Signal search=yes", "tdmrep.json " + usageRule(0)},
				"/tdm/a.html":    {"robots.txt Content-Signal search=yes", "tdmrep.json " + usageRule(1)},
			}
			for p, rec := range metas {
				if rec.refersTo != responses[p] {
					t.Errorf("%s: metadata record refers to %q, its response is %q", p, rec.refersTo, responses[p])
				}
				var got []string
				for _, s := range rec.prefs.Signals {
					got = append(got, strings.Join(slices.DeleteFunc([]string{s.Source, s.Name, s.Value}, func(f string) bool { return f == "" }), " "))
				}
				if strings.Join(got, "; ") != strings.Join(wantSignals[p], "; ") {
					t.Errorf("%s: signals %q, want %q", p, got, wantSignals[p])
				}
			}
			if len(metas) != len(c.archived) {
				t.Errorf("%d metadata records, want one per archived capture (%d): every page's site states search=yes", len(metas), len(c.archived))
			}
			var denied []string
			for _, e := range readLogEntries(t, dir) {
				p := strings.TrimPrefix(e.URL, site)
				if e.Denied != "" {
					denied = append(denied, p)
					if e.Denied != c.purpose {
						t.Errorf("%s: denied %q, want the purpose %q", p, e.Denied, c.purpose)
					}
				}
				if p == tdmRepPath {
					if e.Detail != "tdmrep.json: 2 rules" || e.WARC == "" {
						t.Errorf("tdmrep.json crawl log line: detail %q, WARC %q", e.Detail, e.WARC)
					}
					continue
				}
				if e.Status == 200 && p != "/robots.txt" && !strings.Contains(e.Usage, "search=allow") {
					t.Errorf("%s: crawl log usage %q, want it to hold search=allow", p, e.Usage)
				}
				if want := map[string]string{"/tdm/a.html": "tdm=1", "/tdm/open.html": "tdm=0", "/no-ai/a.html": "ai-train=deny"}[p]; want != "" && !strings.Contains(e.Usage, want) {
					t.Errorf("%s: crawl log usage %q, want %s", p, e.Usage, want)
				}
				if p == "/no-ai/a.html" && !strings.Contains(e.Usage, "ai-train=deny") {
					t.Errorf("%s: crawl log usage %q, want ai-train=deny", p, e.Usage)
				}
				if _, archived := responses[p]; e.Status == 200 && archived != (e.WARC != "") {
					t.Errorf("%s: crawl log WARC %q, archived %v", p, e.WARC, archived)
				}
			}
			if strings.Join(sortedCopy(denied), ",") != strings.Join(c.denied, ",") {
				t.Errorf("denied in the crawl log: %q, want %q", denied, c.denied)
			}
		})
	}
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for k := i + 1; k < len(out); k++ {
			if out[k] < out[i] {
				out[i], out[k] = out[k], out[i]
			}
		}
	}
	return out
}

type usageMeta struct {
	refersTo string
	prefs    usagepref.Preferences
}

// readUsageRecords returns, by path on site, the record ID of each
// response (or revisit) record and each usage metadata record.
func readUsageRecords(t *testing.T, dir, site string) (responses map[string]string, metas map[string]usageMeta) {
	t.Helper()
	responses, metas = map[string]string{}, map[string]usageMeta{}
	files, _ := filepath.Glob(filepath.Join(dir, "warc", "*.warc.gz"))
	eachRecord(t, files, func(rec *warc.Record, block []byte) {
		p := strings.TrimPrefix(rec.TargetURI, site)
		switch rec.Type {
		case "response", "revisit": // a page with another's payload is a revisit
			responses[p] = rec.ID
		case "metadata":
			var m usageMeta
			if err := json.Unmarshal(block, &m.prefs); err != nil || rec.ContentType != usageMediaType {
				t.Errorf("%s: metadata record of type %q: %v", p, rec.ContentType, err)
			}
			m.refersTo = rec.RefersTo
			metas[p] = m
		}
	})
	return responses, metas
}

func readLogEntries(t *testing.T, dir string) []crawllog.Entry {
	t.Helper()
	var entries []crawllog.Entry
	err := crawllog.Scan(filepath.Join(dir, logDir), crawllog.Filter{
		OnBad: func(file string, line int, err error) { t.Errorf("crawl log %s:%d: %v", file, line, err) },
	}, func(e crawllog.Entry) error {
		entries = append(entries, e)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return entries
}

// TestUsageOfNotModified: a 304 to a recrawl's conditional fetch carries
// what its site says too: the revisit record is followed by a usage
// record referring to it, from robots.txt, the origin's tdmrep.json and
// the 304's own header fields.
func TestUsageOfNotModified(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: recrawls of a one-page site; the full suite runs it")
	}
	t.Parallel()
	site := etagSite(t, "User-agent: *\nAllow: /\nContent-Signal: search=yes\n", "<!doctype html><p>the same</p>", "noai", nil)
	dir := t.TempDir()
	n := openRecrawling(t, dir)
	j, err := n.Submit(job.Spec{Seeds: []string{site + "/p.html"}, Continuous: true, RecrawlMin: time.Second, RecrawlMax: time.Second,
		Purpose: job.PurposeAIInput})
	if err != nil {
		t.Fatal(err)
	}
	n.Start()
	waitFor(t, time.Minute, "two 304s", func() bool { return j.Stats.NotModified.Load() >= 2 })
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "warc", "*.warc.gz"))
	revisits := map[string]bool{}
	var metas []usageMeta
	eachRecord(t, files, func(rec *warc.Record, block []byte) {
		switch {
		case rec.Type == "revisit" && rec.Profile == warc.ProfileServerNotModified:
			revisits[rec.ID] = true
		case rec.Type == "metadata" && rec.TargetURI == site+"/p.html":
			var m usageMeta
			if err := json.Unmarshal(block, &m.prefs); err != nil {
				t.Error(err)
			}
			m.refersTo = rec.RefersTo
			metas = append(metas, m)
		}
	})
	if len(revisits) < 2 {
		t.Fatalf("%d server-not-modified revisits, want 2 or more", len(revisits))
	}
	of304 := 0
	for _, m := range metas {
		if !revisits[m.refersTo] {
			continue
		}
		of304++
		var got []string
		for _, s := range m.prefs.Signals {
			got = append(got, s.Source+" "+s.Name+" "+s.Value)
		}
		if want := "robots.txt Content-Signal search=yes; header X-Robots-Tag noai"; strings.Join(got, "; ") != want {
			t.Errorf("a 304's usage record: %q, want %q", got, want)
		}
	}
	if of304 != len(revisits) {
		t.Errorf("%d usage records refer to the %d 304 revisits, want one each", of304, len(revisits))
	}
	denied := 0
	for _, e := range readLogEntries(t, dir) {
		if e.Status == http.StatusNotModified {
			if e.Usage != "ai-train=deny,ai-input=deny,search=allow" || e.Denied != job.PurposeAIInput {
				t.Errorf("a 304's crawl log line: usage %q, denied %q", e.Usage, e.Denied)
			}
			denied++
		}
	}
	if denied < 2 {
		t.Errorf("%d 304s in the crawl log, want 2 or more", denied)
	}
}

// TestSkippedPageIsAskedAgainWhole: a page its own meta element denies to
// a crawl that skips such pages is not archived, and its validators are
// not kept: each recrawl asks unconditionally and judges the whole page
// again, so no 304 (which has no meta elements) is archived as a revisit
// of a capture that is not in the archive. From a review, which found
// the page denied on its 200 and not on the 304s that followed.
func TestSkippedPageIsAskedAgainWhole(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: recrawls of a one-page site; the full suite runs it")
	}
	t.Parallel()
	var (
		mu                 sync.Mutex
		asked, conditional int
	)
	site := etagSite(t, "User-agent: *\nAllow: /\n", `<!doctype html><meta name="robots" content="noai"><p>the same</p>`, "",
		func(r *http.Request) {
			mu.Lock()
			defer mu.Unlock()
			asked++
			if r.Header.Get("If-None-Match") != "" {
				conditional++
			}
		})
	dir := t.TempDir()
	n := openRecrawling(t, dir)
	_, err := n.Submit(job.Spec{Seeds: []string{site + "/p.html"}, Continuous: true, RecrawlMin: time.Second, RecrawlMax: time.Second,
		Purpose: job.PurposeAITrain, OnDenied: job.DeniedSkip})
	if err != nil {
		t.Fatal(err)
	}
	n.Start()
	waitFor(t, time.Minute, "three fetches of the page", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return asked >= 3
	})
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if conditional != 0 {
		t.Errorf("%d of %d requests of a page never archived were conditional", conditional, asked)
	}
	mu.Unlock()
	files, _ := filepath.Glob(filepath.Join(dir, "warc", "*.warc.gz"))
	eachRecord(t, files, func(rec *warc.Record, _ []byte) {
		if rec.TargetURI == site+"/p.html" {
			t.Errorf("a %s record of a page the crawl skips", rec.Type)
		}
	})
	lines := 0
	for _, e := range readLogEntries(t, dir) {
		if e.URL == site+"/p.html" {
			lines++
			if e.Status != http.StatusOK || e.Denied != job.PurposeAITrain || e.WARC != "" {
				t.Errorf("crawl log: status %d, denied %q, WARC %q; want 200, denied ai-train, not archived", e.Status, e.Denied, e.WARC)
			}
		}
	}
	if lines < 3 {
		t.Errorf("%d crawl log lines of the page, want 3 or more", lines)
	}
}

// etagSite serves robots.txt (robotsTxt) and one page, /p.html: body
// with ETag "v1", a 304 to If-None-Match "v1", and the X-Robots-Tag
// xRobots (if not "") on both. seen, if not nil, is called with each
// request of the page. It returns the site's origin.
func etagSite(t *testing.T, robotsTxt, body, xRobots string, seen func(*http.Request)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			io.WriteString(w, robotsTxt)
		case "/p.html":
			if seen != nil {
				seen(r)
			}
			w.Header().Set("ETag", `"v1"`)
			if xRobots != "" {
				w.Header().Set("X-Robots-Tag", xRobots)
			}
			if r.Header.Get("If-None-Match") == `"v1"` {
				w.WriteHeader(http.StatusNotModified)
				return
			}
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, body)
		default:
			http.NotFound(w, r)
		}
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// openRecrawling opens a node in dir that looks for due pages every 50
// ms, closed at the test's end.
func openRecrawling(t *testing.T, dir string) *Node {
	t.Helper()
	n, err := Open(Options{DataDir: dir, MinDelay: 5 * time.Millisecond, AllowNets: loopback, NoSitemaps: true,
		RecrawlTick: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}
