package testweb

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"
)

// client returns an HTTP client that dials the web's names through
// Resolver and does not follow redirects.
func client(t *testing.T, srv *Server) *http.Client {
	t.Helper()
	names := srv.Resolver()
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, port, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, err
			}
			ips := names[strings.ToLower(host)]
			if len(ips) == 0 {
				return nil, fmt.Errorf("test dialer: no address for %q", host)
			}
			var d net.Dialer
			return d.DialContext(ctx, network, net.JoinHostPort(ips[0].String(), port))
		},
		DisableKeepAlives: true,
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{
		Transport:     tr,
		Timeout:       10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

func serve(t *testing.T, o Options) *Server {
	t.Helper()
	srv, err := Serve(Generate(o), ServeOptions{DripBytes: 4, DripInterval: time.Millisecond, EndlessBytes: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

func get(t *testing.T, c *http.Client, u string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest("GET", u, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("User-Agent", "trawl/0.1")
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, err.Error()
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, resp.Header, "read error: " + err.Error()
	}
	return resp.StatusCode, resp.Header, string(b)
}

// hostWith returns the name of the first host matching f.
func hostWith(t *testing.T, w *Web, f func(*host) bool) *host {
	t.Helper()
	for _, h := range w.hosts {
		if f(h) {
			return h
		}
	}
	t.Fatal("no host matches")
	return nil
}

func TestServe(t *testing.T) {
	srv := serve(t, small(1))
	w := srv.Web()
	c := client(t, srv)
	if srv.Port() == 0 || w.Port() != srv.Port() {
		t.Fatalf("Port() = %d, web port %d, want equal and non-zero", srv.Port(), w.Port())
	}
	if seeds := srv.Seeds(); len(seeds) == 0 || !strings.Contains(seeds[0], fmt.Sprintf(":%d/", srv.Port())) {
		t.Fatalf("Seeds() = %q, want URLs with the port", seeds)
	}
	robots := func(k robotsKind) string {
		return w.urlOf(hostWith(t, w, func(h *host) bool { return h.robots == k }), "/robots.txt")
	}
	home := w.urlOf(w.hosts[0], "/")
	dup := hostWith(t, w, func(h *host) bool { return h.big })
	var orig, copy string
	for _, r := range dup.res {
		if of, ok := strings.CutPrefix(r.note, "exact duplicate of "); ok {
			orig, copy = w.urlOf(dup, of), r.url(w)
		}
	}
	moved := dup.byPQ["/old/page0.html"]
	trap := hostWith(t, w, func(h *host) bool { return h.trap })
	for _, tc := range []struct {
		url        string
		status     int
		header     string // "Key: value" expected in the response, or ""
		bodyPrefix string
	}{
		{home, 200, "Content-Type: text/html; charset=utf-8", "<!DOCTYPE html>"},
		{strings.Replace(home, "http://"+w.hosts[0].name, "http://"+strings.ToUpper(w.hosts[0].name), 1) + "?utm_source=x", 200, "", "<!DOCTYPE html>"},
		{w.urlOf(w.hosts[0], "/no/such/page"), 404, "", ""},
		{robots(robotsAllowAll), 200, "Content-Type: text/plain; charset=utf-8", "# everything is allowed"},
		{robots(robotsNotFound), 404, "", ""},
		{robots(robotsServerError), 500, "", ""},
		{robots(robotsTooMany), 429, "Retry-After: 1", ""},
		{robots(robotsTooMany), 200, "", "User-agent: *\nDisallow: /private/"},
		{robots(robotsRedirect), 301, "Location: /robots-real.txt", ""},
		{strings.Replace(robots(robotsRedirect), "robots.txt", "robots-real.txt", 1), 200, "", "User-agent: *\nDisallow: /private/"},
		{robots(robotsCrawlDelay), 200, "", "User-agent: *\nCrawl-delay: 2"},
		{w.urlOf(trap, "/calendar/2031/12"), 200, "", "<!DOCTYPE html>"},
		{w.urlOf(trap, "/calendar/2031/13"), 404, "", ""},
		{moved.url(w), 301, "Location: " + w.withPort(moved.loc), ""},
		{fmt.Sprintf("http://elsewhere.example:%d/", srv.Port()), 0, "", ""},
	} {
		status, hdr, body := get(t, c, tc.url)
		if status != tc.status || !strings.HasPrefix(body, tc.bodyPrefix) {
			t.Errorf("GET %s = %d %.60q, want %d %q", tc.url, status, body, tc.status, tc.bodyPrefix)
		}
		if k, v, ok := strings.Cut(tc.header, ": "); ok && hdr.Get(k) != v {
			t.Errorf("GET %s: header %s = %q, want %q", tc.url, k, hdr.Get(k), v)
		}
	}
	if orig == "" {
		t.Fatal("big host has no exact duplicate")
	}
	if _, _, a := get(t, c, orig); a != func() string { _, _, b := get(t, c, copy); return b }() {
		t.Errorf("GET %s and %s differ, want byte-identical duplicates", orig, copy)
	}

	// Unknown Host header on a known address: 421.
	req, _ := http.NewRequest("GET", home, nil)
	req.Host = "nobody.trawl.test"
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("GET with Host nobody.trawl.test = %d, want 421", resp.StatusCode)
	}

	log := srv.Log()
	if len(log) != 17 { // 14 from the table (one could not be dialled), 2 duplicates, one 421
		t.Fatalf("Log() has %d entries, want 17", len(log))
	}
	first := log[0]
	if first.Host != w.hosts[0].name || first.IP != w.hosts[0].ip || first.Method != "GET" || first.Path != "/" ||
		first.UserAgent != "trawl/0.1" || first.Status != 200 || first.Bytes < int64(w.opts.MinPageBytes) || first.End.Before(first.Start) {
		t.Errorf("Log()[0] = %+v, want GET / on %s from trawl/0.1, 200, a full page", first, w.hosts[0].name)
	}
	if log[1].Path != "/?utm_source=x" || log[1].Host != w.hosts[0].name {
		t.Errorf("Log()[1] = %+v, want the request target as sent and the host in lower case", log[1])
	}
	for i := 1; i < len(log); i++ {
		if log[i].Start.Before(log[i-1].Start) {
			t.Errorf("Log() not in arrival order at %d", i)
		}
	}
	if err := srv.Close(); err != nil {
		t.Errorf("Close() = %v", err)
	}
	if _, err := c.Get(home); err == nil {
		t.Errorf("GET after Close succeeded, want an error")
	}
}

func TestServeHostile(t *testing.T) {
	o := small(2)
	o.Hostile = true
	srv := serve(t, o)
	w := srv.Web()
	c := client(t, srv)
	for _, tc := range []struct {
		kind string
		ok   bool // whether the body reads without error
		min  int  // least body length
	}{
		{"junk", true, 30 << 10},
		{"lying-length", false, 0},
		{"slow-drip", true, 4},
		{"endless", true, 64 << 10},
		{"bad-gzip", false, 0},
	} {
		u := w.urlOf(w.byName["hostile-"+tc.kind+"."+w.opts.Domain], "/")
		status, _, body := get(t, c, u)
		if failed := strings.HasPrefix(body, "read error") || status == 0; failed == tc.ok || len(body) < tc.min {
			t.Errorf("GET %s = %d, %d bytes (%.40q); want ok=%v and at least %d bytes", u, status, len(body), body, tc.ok, tc.min)
		}
	}
}

func TestServeFixedPortAndClose(t *testing.T) {
	w := Generate(small(3))
	srv, err := Serve(w, ServeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	// The web keeps its port: serving it again binds the same one.
	srv2, err := Serve(w, ServeOptions{})
	if err != nil {
		t.Fatalf("Serve again on port %d: %v", w.Port(), err)
	}
	defer srv2.Close()
	if srv2.Port() != srv.Port() {
		t.Errorf("second Serve port = %d, want %d", srv2.Port(), srv.Port())
	}
	big, err := Serve(Generate(Options{Seed: 1, Hostile: true}), ServeOptions{})
	if err != nil {
		t.Fatalf("Serve the default web: %v", err)
	}
	defer big.Close()
	if n := len(big.Resolver()); n != 305 {
		t.Errorf("default web with hostile hosts: Resolver has %d names, want 305", n)
	}
	if _, err := Serve(w, ServeOptions{MaxLog: -1}); err == nil || !strings.Contains(err.Error(), "MaxLog") {
		t.Errorf("Serve with MaxLog -1: err = %v, want it named", err)
	}
}

// TestCrawlMatchesGroundTruth crawls the served web with a small, naive,
// sequential crawler built from the standard library and x/net/html, and
// checks that Analyze finds a complete and polite crawl: the HTML the web
// serves and the link graph the ground truth walks agree.
func TestCrawlMatchesGroundTruth(t *testing.T) {
	o := small(6)
	o.Hostile = true
	srv := serve(t, o)
	w, c := srv.Web(), client(t, srv)
	const agent = "trawl"
	type job struct {
		u    string
		hops int
	}
	ready := map[string]bool{} // host → robots read and fetching allowed
	blocked := map[string]bool{}
	seen := map[string]bool{}
	var queue []job
	enqueue := func(raw string, base *url.URL, hops int) {
		ref, err := url.Parse(raw)
		if err != nil {
			return
		}
		abs := base.ResolveReference(ref)
		if !strings.EqualFold(abs.Scheme, "http") || !inDomain(canonHost(abs.Hostname()), w.opts.Domain) {
			return
		}
		name, port, pq, err := canonAbsolute(abs.String())
		if err != nil || isTrapPath(pq) {
			return
		}
		key := fmt.Sprintf("http://%s:%d%s", name, port, pq)
		if !seen[key] {
			seen[key] = true
			queue = append(queue, job{key, hops})
		}
	}
	readRobots := func(h *url.URL) {
		name := h.Hostname()
		for try, path := 0, "/robots.txt"; try < 5 && !ready[name] && !blocked[name]; try++ {
			status, hdr, _ := get(t, c, "http://"+h.Host+path)
			switch {
			case status == 429:
			case status >= 500 || status == 0:
				blocked[name] = true
			case status >= 300 && status < 400:
				path = hdr.Get("Location")
			default:
				ready[name] = true
			}
		}
	}
	for _, s := range srv.Seeds() {
		enqueue(s, &url.URL{}, 0)
	}
	for len(queue) > 0 {
		j := queue[0]
		queue = queue[1:]
		u, _ := url.Parse(j.u)
		readRobots(u)
		if !ready[u.Hostname()] || w.Disallowed(j.u, agent) {
			continue
		}
		req, _ := http.NewRequest("GET", j.u, nil)
		req.Header.Set("User-Agent", agent+"/0.1")
		resp, err := c.Do(req)
		if err != nil {
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if loc := resp.Header.Get("Location"); resp.StatusCode/100 == 3 && loc != "" && j.hops < maxRedirectHops {
			enqueue(loc, u, j.hops+1)
			continue
		}
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") || strings.HasPrefix(u.Hostname(), "hostile-") {
			continue
		}
		base := u
		z := html.NewTokenizer(strings.NewReader(string(body)))
		for tt := z.Next(); tt != html.ErrorToken; tt = z.Next() {
			if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
				continue
			}
			tok := z.Token()
			attr := map[string]string{}
			for _, a := range tok.Attr {
				attr[a.Key] = a.Val
			}
			switch tok.Data {
			case "base":
				if b, err := url.Parse(attr["href"]); err == nil {
					base = u.ResolveReference(b)
				}
			case "a":
				if href, ok := attr["href"]; ok && !strings.Contains(attr["rel"], "nofollow") {
					enqueue(href, base, 0)
				}
			}
		}
		if !errors.Is(z.Err(), io.EOF) {
			t.Fatalf("tokenize %s: %v", j.u, z.Err())
		}
	}
	r := Analyze(w, srv.Log(), AnalyzeOptions{Seeds: srv.Seeds(), Agent: agent, MinCoverage: 1})
	// The naive crawler ignores Crawl-delay: exactly those hosts must show
	// gap violations, and nothing else may be wrong.
	var p []string
	delayed := 0
	for _, prob := range r.Problems() {
		name, _, _ := strings.Cut(strings.TrimPrefix(prob, "host "), ":")
		if h := w.byName[name]; h != nil && h.robots == robotsCrawlDelay {
			delayed++
			continue
		}
		p = append(p, prob)
	}
	if len(p) > 0 {
		t.Fatalf("naive crawl: %d problems:\n%s\n%s", len(p), strings.Join(p[:min(20, len(p))], "\n"), r)
	}
	if delayed == 0 {
		t.Errorf("naive crawl ignored Crawl-delay: 2, but Analyze found no gap violation")
	}
	if len(r.Reachable) < 100 {
		t.Errorf("crawlable set has %d URLs, want a web of at least 100", len(r.Reachable))
	}
	t.Logf("%s", r)
}

// TestServeWireOptions: with Gzip a regular page goes gzipped to a client
// that accepts gzip and as it is to one that does not; with Chunked it goes
// without a Content-Length; either way its bytes are the page's.
func TestServeWireOptions(t *testing.T) {
	for _, so := range []ServeOptions{{Gzip: true}, {Chunked: true}, {Gzip: true, Chunked: true}} {
		srv, err := Serve(Generate(small(1)), so)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Close() })
		u := srv.Web().urlOf(srv.Web().hosts[0], "/")
		want := string(srv.Web().renderHTML(srv.Web().hosts[0].byPQ["/"]))
		for _, accept := range []string{"gzip, deflate, br", "identity", "gzip;q=0"} {
			req, _ := http.NewRequest("GET", u, nil)
			req.Header.Set("Accept-Encoding", accept) // set: the transport does not decode
			resp, err := client(t, srv).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			gz := so.Gzip && accept == "gzip, deflate, br"
			if got := resp.Header.Get("Content-Encoding") == "gzip"; got != gz {
				t.Errorf("%+v, Accept-Encoding %q: Content-Encoding %q", so, accept, resp.Header.Get("Content-Encoding"))
			}
			if chunked := resp.ContentLength < 0; chunked != so.Chunked {
				t.Errorf("%+v, Accept-Encoding %q: Content-Length %d, Transfer-Encoding %q", so, accept, resp.ContentLength, resp.TransferEncoding)
			}
			body := string(raw)
			if gz {
				zr, err := gzip.NewReader(bytes.NewReader(raw))
				if err != nil {
					t.Fatalf("%+v: %v", so, err)
				}
				b, err := io.ReadAll(zr)
				if err != nil {
					t.Fatalf("%+v: %v", so, err)
				}
				body = string(b)
			}
			if body != want {
				t.Errorf("%+v, Accept-Encoding %q: the body is not the page's bytes", so, accept)
			}
		}
	}
}

// TestExtraLinks: ExtraLinks adds links to regular pages, to their own
// host and others, and leaves the web's pages as they were.
func TestExtraLinks(t *testing.T) {
	o := small(1)
	base := Generate(o)
	o.ExtraLinks = 20
	more := Generate(o)
	if !reflect.DeepEqual(base.Pages(), more.Pages()) {
		t.Fatal("ExtraLinks changed the web's pages")
	}
	h := more.hosts[0]
	count := func(w *Web) (links, otherHost int) {
		for _, l := range w.hosts[0].regular[1].body.links {
			links++
			if l.to != nil && l.to.host != h {
				otherHost++
			}
		}
		return
	}
	n0, _ := count(base)
	n1, other := count(more)
	if n1 < n0+15 || other == 0 {
		t.Errorf("a page with ExtraLinks 20 has %d links (%d to other hosts), without %d", n1, other, n0)
	}
	o.ExtraLinks = -1
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "ExtraLinks") {
		t.Errorf("Validate(ExtraLinks -1) = %v, want an error naming ExtraLinks", err)
	}
}
