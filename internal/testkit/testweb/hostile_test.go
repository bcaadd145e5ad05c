package testweb

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/andybalholm/brotli"
)

// allHostile is a small web with every hostile kind on.
func allHostile(seed int64) Options {
	o := small(seed)
	o.HostileKinds = AllHostileKinds()
	return o
}

// answer is what a plain client got for one hostile URL.
type answer struct {
	status int
	header http.Header
	body   []byte
	err    error // from Do or from reading the body
}

// fetchRaw GETs u without content decoding, with a time-out.
func fetchRaw(t *testing.T, srv *Server, u string, timeout time.Duration) answer {
	t.Helper()
	c := client(t, srv)
	c.Timeout = timeout
	c.Transport.(*http.Transport).DisableCompression = true
	resp, err := c.Get(u)
	if err != nil {
		return answer{err: err}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	return answer{status: resp.StatusCode, header: resp.Header, body: body, err: err}
}

func TestHostileKindsOptions(t *testing.T) {
	if err := (Options{HostileKinds: []string{"junk", "no-such-kind"}}).Validate(); err == nil ||
		!strings.Contains(err.Error(), `HostileKinds: unknown kind "no-such-kind"`) {
		t.Errorf("Validate with an unknown kind = %v, want HostileKinds named", err)
	}
	// Hostile alone keeps its five hosts, at the same addresses, whatever
	// kinds were added after them.
	five := Generate(Options{Seed: 3, Hosts: 20, Hostile: true})
	all := Generate(Options{Seed: 3, Hosts: 20, Hostile: true, HostileKinds: AllHostileKinds()})
	var got5, gotAll []HostInfo
	for _, h := range five.Hosts() {
		if h.Hostile != "" {
			got5 = append(got5, h)
		}
	}
	for _, h := range all.Hosts() {
		if h.Hostile != "" {
			gotAll = append(gotAll, h)
		}
	}
	if len(got5) != 5 || len(gotAll) != len(AllHostileKinds()) {
		t.Fatalf("hostile hosts: %d with Hostile, %d with every kind; want 5 and %d", len(got5), len(gotAll), len(AllHostileKinds()))
	}
	for i, h := range got5 {
		if g := gotAll[i]; g.Name != h.Name || g.IP != h.IP {
			t.Errorf("hostile host %d: %s at %v with every kind, %s at %v with Hostile", i, g.Name, g.IP, h.Name, h.IP)
		}
	}
	ordinary := func(w *Web) []Page {
		return slices.DeleteFunc(w.Pages(), func(p Page) bool { return strings.HasPrefix(p.URL, "http://hostile-") })
	}
	if !slices.Equal(ordinary(five), ordinary(all)) {
		t.Errorf("adding kinds changed the ordinary hosts' pages")
	}
	linked := map[*resource]bool{}
	for _, h := range all.hosts {
		if h.hostile == notHostile {
			for _, l := range h.regular[0].body.links {
				linked[l.to] = true
			}
		}
	}
	for _, h := range gotAll {
		if !linked[all.byName[h.Name].res[0]] {
			t.Errorf("%s is linked from no home page", h.Name)
		}
	}
	one := Generate(Options{Seed: 3, Hosts: 20, HostileKinds: []string{"silent"}})
	var kinds []string
	for _, h := range one.Hosts() {
		if h.Hostile != "" {
			kinds = append(kinds, h.Hostile)
		}
	}
	if !slices.Equal(kinds, []string{"silent"}) {
		t.Errorf("HostileKinds [silent]: hostile hosts %v, want [silent]", kinds)
	}
}

// TestServeHostileKinds checks each kind's trouble as a plain client sees
// it, and that the request log records each request.
func TestServeHostileKinds(t *testing.T) {
	srv := serve(t, allHostile(4))
	w := srv.Web()
	hasErr := func(a answer) error {
		if a.err == nil {
			return fmt.Errorf("no error, want one")
		}
		return nil
	}
	status := func(want int, body func([]byte) bool) func(answer) error {
		return func(a answer) error {
			if a.err != nil || a.status != want || body != nil && !body(a.body) {
				return fmt.Errorf("status %d, %d bytes, err %v; want status %d and the kind's body", a.status, len(a.body), a.err, want)
			}
			return nil
		}
	}
	location := func(want string) func(answer) error {
		return func(a answer) error {
			if a.status != http.StatusFound || !strings.HasPrefix(a.header.Get("Location"), want) {
				return fmt.Errorf("status %d, Location %q; want 302 to %s...", a.status, a.header.Get("Location"), want)
			}
			return nil
		}
	}
	coded := func(coding string, min int) func(answer) error {
		return func(a answer) error {
			if a.err != nil || a.header.Get("Content-Encoding") != coding || len(a.body) < min {
				return fmt.Errorf("err %v, Content-Encoding %q, %d bytes; want %s, at least %d bytes", a.err, a.header.Get("Content-Encoding"), len(a.body), coding, min)
			}
			return nil
		}
	}
	contains := func(s string) func([]byte) bool { return func(b []byte) bool { return bytes.Contains(b, []byte(s)) } }
	port := fmt.Sprint(srv.Port())
	for _, tc := range []struct {
		kind, path string
		check      func(answer) error
	}{
		{"header-drip", "/", status(200, contains("trouble"))},
		{"short-length", "/", status(200, func(b []byte) bool { return len(b) == shortLength })},
		{"huge-header", "/", func(a answer) error {
			if a.err == nil && len(a.header.Get("X-Huge")) < hugeHeaderBytes {
				return fmt.Errorf("X-Huge has %d bytes, want %d", len(a.header.Get("X-Huge")), hugeHeaderBytes)
			}
			return nil // or the client refused the head, as it should
		}},
		{"many-headers", "/", func(a answer) error {
			if a.err != nil || len(a.header) < manyHeaders {
				return fmt.Errorf("err %v, %d headers; want %d", a.err, len(a.header), manyHeaders)
			}
			return nil
		}},
		{"redirect-loop", "/", location("http://hostile-redirect-loop.trawl.test:" + port + "/loop")},
		{"redirect-loop", "/loop", location("http://hostile-redirect-loop.trawl.test:" + port + "/")},
		{"redirect-chain", "/", location("http://hostile-redirect-chain.trawl.test:" + port + "/chain/1")},
		{"redirect-chain", "/chain/7", location("http://hostile-redirect-chain.trawl.test:" + port + "/chain/8")},
		{"redirect-chain", fmt.Sprintf("/chain/%d", chainHops), status(200, contains("end of the chain"))},
		{"redirect-chain", fmt.Sprintf("/chain/%d", chainHops+1), status(404, nil)},
		{"redirect-ftp", "/", location("ftp:")},
		{"redirect-javascript", "/", location("javascript:")},
		{"redirect-data", "/", location("data:")},
		{"redirect-loopback", "/", location("http://127.0.0.1:1/")},
		{"redirect-metadata", "/", location("http://169.254.169.254/")},
		{"redirect-ipv6-loopback", "/", location("http://[::1]/")},
		{"redirect-hex-ip", "/", location("http://0x7f000001/")},
		{"binary-html", "/", status(200, func(b []byte) bool { return len(b) == 64<<10 && !utf8.Valid(b) })},
		{"bad-utf8", "/", status(200, func(b []byte) bool { return !utf8.Valid(b) })},
		{"shift-jis", "/", status(200, func(b []byte) bool { return !utf8.Valid(b) && bytes.Contains(b, []byte("\x93\xfa\x96\x7b")) })}, // 日本
		{"windows-1252", "/", status(200, contains("\x80"))},                                                                            // €
		{"utf16-bom", "/", status(200, func(b []byte) bool { return bytes.HasPrefix(b, []byte{0xff, 0xfe, '<', 0}) })},
		{"utf16-no-bom", "/", status(200, func(b []byte) bool { return bytes.HasPrefix(b, []byte{0, '<', 0, 'h'}) })},
		{"deep-nesting", "/", status(200, func(b []byte) bool { return bytes.Count(b, []byte("<div>")) == deepNesting })},
		{"robots-huge", "/robots.txt", status(200, func(b []byte) bool {
			return len(b) == robotsHugeBytes && bytes.HasPrefix(b, []byte("User-agent: *\n"))
		})},
		{"robots-huge", "/", status(200, contains("hostile robots.txt"))},
		{"robots-bom", "/robots.txt", status(200, func(b []byte) bool { return bytes.HasPrefix(b, []byte("\xef\xbb\xbfUser-agent")) })},
		{"robots-nul", "/robots.txt", status(200, contains("\x00"))},
		{"robots-garbage", "/robots.txt", status(200, func(b []byte) bool { return len(b) == 4<<10 })},
		{"retry-after-seconds", "/", func(a answer) error {
			if a.status != 429 || a.header.Get("Retry-After") != "120" {
				return fmt.Errorf("status %d, Retry-After %q; want 429, 120", a.status, a.header.Get("Retry-After"))
			}
			return nil
		}},
		{"retry-after-date", "/", func(a answer) error {
			d, err := http.ParseTime(a.header.Get("Retry-After"))
			if a.status != 429 || err != nil || time.Until(d) < time.Minute {
				return fmt.Errorf("status %d, Retry-After %q; want 429 and a date two minutes on", a.status, a.header.Get("Retry-After"))
			}
			return nil
		}},
		{"retry-after-seconds", "/robots.txt", status(404, nil)},
		{"503-storm", "/", status(503, nil)},
		{"reset", "/", hasErr},
		{"silent", "/", func(a answer) error {
			if !errors.Is(a.err, io.EOF) && !strings.Contains(fmt.Sprint(a.err), "Timeout") {
				return fmt.Errorf("err %v, want the client's time-out", a.err)
			}
			return nil
		}},
		{"deflate-bomb", "/", coded("deflate", 1000)},
		{"gzip-bomb", "/", coded("gzip", 1000)},
		{"corrupt-brotli", "/", coded("br", 1)},
		{"brotli-bomb", "/", coded("br", 1000)},
		{"bad-location", "/", func(a answer) error {
			// net/http's client cannot parse the Location: it fails.
			if a.err == nil || !strings.Contains(a.err.Error(), "Location") {
				return fmt.Errorf("status %d, err %v; want the client's Location error", a.status, a.err)
			}
			return nil
		}},
	} {
		h := w.byName["hostile-"+tc.kind+"."+w.opts.Domain]
		if h == nil {
			t.Fatalf("no host for kind %s", tc.kind)
		}
		u := w.urlOf(h, tc.path)
		before := len(srv.Log())
		timeout := 500 * time.Millisecond // the silent host's answer
		if tc.kind != "silent" {
			timeout = 20 * time.Second // a bound, not an expectation: -race is slow
		}
		a := fetchRaw(t, srv, u, timeout)
		if err := tc.check(a); err != nil {
			t.Errorf("GET %s: %v", u, err)
		}
		log := srv.Log()
		if len(log) != before+1 || log[before].Host != h.name || log[before].Path != tc.path {
			t.Errorf("GET %s: log has %d new entries, want 1 for this request", u, len(log)-before)
		}
	}
}

// TestBombsInflate checks the bombs' framing on a few repetitions: each
// inflates whole, checksum included, to the chunk repeated.
func TestBombsInflate(t *testing.T) {
	chunk := bytes.Repeat([]byte("<!-- bomb -->\n"), 5000)
	for _, tc := range []struct {
		name string
		data []byte
		open func(io.Reader) (io.Reader, error)
	}{
		{"zlib", zlibRepeat(chunk, 3), func(r io.Reader) (io.Reader, error) { return zlib.NewReader(r) }},
		{"gzip", gzipRepeat(chunk, 3), func(r io.Reader) (io.Reader, error) { return gzip.NewReader(r) }},
	} {
		zr, err := tc.open(bytes.NewReader(tc.data))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got, err := io.ReadAll(zr)
		if err != nil || !bytes.Equal(got, bytes.Repeat(chunk, 3)) {
			t.Errorf("%s: inflated %d bytes, err %v; want the chunk 3 times (%d bytes)", tc.name, len(got), err, 3*len(chunk))
		}
	}
	d, gz := bombs()
	br := brotliBomb()
	if len(d) > bombBytes/400 || len(gz) > bombBytes/400 || len(br) > bombBytes/400 {
		t.Errorf("bombs are %d, %d and %d bytes compressed, want a ratio past 400", len(d), len(gz), len(br))
	}
	// The brotli bomb inflates, whole and valid, past bombBytes.
	n, err := io.Copy(io.Discard, brotli.NewReader(bytes.NewReader(br)))
	if err != nil || n <= bombBytes {
		t.Errorf("brotli bomb: inflated %d bytes, err %v; want past %d", n, err, bombBytes)
	}
}

// TestHostileServerCloses checks that Close returns while a silent host
// holds a connection, as it does for the slow ones.
func TestHostileServerCloses(t *testing.T) {
	srv, err := Serve(Generate(Options{Seed: 1, Hosts: 3, HostileKinds: []string{"silent"}}), ServeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := client(t, srv)
	got := make(chan error, 1)
	go func() {
		resp, err := c.Get(srv.Web().urlOf(srv.Web().byName["hostile-silent.trawl.test"], "/"))
		if err == nil {
			resp.Body.Close()
		}
		got <- err
	}()
	deadline := time.Now().Add(5 * time.Second)
	for len(srv.Log()) == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	closed := make(chan struct{})
	go func() { srv.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return within 5s with a silent connection open")
	}
	select {
	case err := <-got:
		t.Logf("GET on the silent host after Close: %v", err) // an error or the 503 of a closing server
	case <-time.After(5 * time.Second):
		t.Error("GET on the silent host still waiting 5s after Close")
	}
}

// TestAnalyzeHostileKinds checks that requests to the new hostile hosts
// are judged as those to the first five: never Extra, and robots-ready
// after their robots.txt answer.
func TestAnalyzeHostileKinds(t *testing.T) {
	srv := serve(t, allHostile(5))
	w := srv.Web()
	var hosts int
	for _, h := range w.hosts {
		if h.hostile == notHostile || h.hostile == hostileSilent {
			continue
		}
		hosts++
		fetchRaw(t, srv, w.urlOf(h, "/robots.txt"), 2*time.Second)
		fetchRaw(t, srv, w.urlOf(h, "/"), 2*time.Second)
		fetchRaw(t, srv, w.urlOf(h, "/not-linked-anywhere.html"), 2*time.Second)
	}
	rep := Analyze(w, srv.Log(), AnalyzeOptions{Agent: "Go-http-client"})
	if hosts != len(AllHostileKinds())-1 {
		t.Fatalf("%d hostile hosts fetched, want %d", hosts, len(AllHostileKinds())-1)
	}
	if len(rep.Extra) != 0 || len(rep.RobotsViolations) != 0 {
		t.Errorf("Analyze: Extra %v, robots violations %v; want none on hostile hosts", rep.Extra, rep.RobotsViolations)
	}
}

// TestHeaderDripEndsWhenTheClientLeaves: a client that gives up on the
// header drip (its time-out) ends the request in the log at once, not a
// drip interval or two later: a crawler's next request to the host, after
// its gap, is not in flight beside it.
func TestHeaderDripEndsWhenTheClientLeaves(t *testing.T) {
	srv, err := Serve(Generate(allHostile(4)), ServeOptions{DripBytes: 50, DripInterval: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	w := srv.Web()
	h := w.byName["hostile-header-drip."+w.opts.Domain]
	if h == nil {
		t.Fatal("no header-drip host")
	}
	before := len(srv.Log())
	a := fetchRaw(t, srv, w.urlOf(h, "/"), 300*time.Millisecond)
	left := time.Now()
	if a.err == nil {
		t.Fatalf("the drip answered within 300 ms: status %d", a.status)
	}
	var log []Request
	for deadline := time.Now().Add(10 * time.Second); (len(log) <= before || log[before].End.IsZero()) && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		log = srv.Log()
	}
	if len(log) != before+1 || log[before].End.IsZero() {
		t.Fatalf("log has %d new entries, want 1, ended", len(log)-before)
	}
	if late := log[before].End.Sub(left); late > 500*time.Millisecond {
		t.Errorf("the request ended in the log %v after the client left (drip interval 2 s)", late)
	}
}
