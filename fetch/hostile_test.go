package fetch_test

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/fetch"
	"github.com/trawl-crawler/trawl/internal/testkit/testweb"
)

// Bounds of the hostile fetches.
const (
	hostileFirstByte  = time.Second
	hostileTotal      = 2 * time.Second
	hostileMaxBody    = 4 << 20
	hostileMaxDecoded = 8 << 20
	// hostileBound is the most one fetch may take: the total time-out
	// and slack for a loaded machine under -race.
	hostileBound = hostileTotal + 3*time.Second
	// hostileMaxAlloc bounds the bytes allocated during one fetch (the
	// server's side, in this process, included): buffers grown by
	// doubling to the caps, and 16 MiB to spare. The bombs come closest
	// (25 MiB); 10,000 headers cost 5 MiB.
	hostileMaxAlloc = 2*(hostileMaxBody+hostileMaxDecoded) + 16<<20
)

// libcResolver answers as glibc's getaddrinfo does for the one
// inet_aton spelling the hostile web redirects to, and fails for every
// other name: no test reaches for real DNS.
type libcResolver struct{}

func (libcResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if host == "0x7f000001" {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	return nil, fmt.Errorf("lookup %s: no such host", host)
}

// hostileWeb serves every hostile kind beside a few ordinary hosts and
// returns a Fetcher allowed to reach the web's own addresses only (not
// the rest of 127.0.0.0/8, so that redirects to 127.0.0.1 are refused).
func hostileWeb(t *testing.T) (*testweb.Server, *fetch.Fetcher) {
	t.Helper()
	web := testweb.Generate(testweb.Options{Seed: 12, Hosts: 3, BigHosts: -1, Latency: -1,
		MinPageBytes: 1000, MaxPageBytes: 2000, HostileKinds: testweb.AllHostileKinds()})
	srv, err := testweb.Serve(web, testweb.ServeOptions{DripInterval: 50 * time.Millisecond, DripBytes: 60})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	var allow []netip.Prefix
	for _, h := range web.Hosts() {
		allow = append(allow, netip.PrefixFrom(h.IP, 32))
	}
	f, err := fetch.New(fetch.Options{UserAgent: "trawl-test/0.1", Hosts: srv.Resolver(), Resolver: libcResolver{},
		AllowNets: allow, FirstByteTimeout: hostileFirstByte, TotalTimeout: hostileTotal,
		MaxBodyBytes: hostileMaxBody, MaxDecodedBytes: hostileMaxDecoded})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	return srv, f
}

// outcome is one hostile fetch: the response or the error, and how long
// it took.
type outcome struct {
	resp *fetch.Response
	err  error
	took time.Duration
}

func (o outcome) String() string {
	if o.err != nil {
		return fmt.Sprintf("error %v after %v", o.err, o.took)
	}
	r := o.resp
	return fmt.Sprintf("status %d, %d bytes (%d decoded), truncated %q, decode error %v, after %v",
		r.Status, len(r.Body), len(r.Decoded), r.Truncated, r.DecodeErr, o.took)
}

// get fetches raw with f, checking the time bound and the size caps that
// hold for every fetch.
func get(t *testing.T, f *fetch.Fetcher, raw string) outcome {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		return outcome{err: &fetch.Error{Class: fetch.ClassRequest, URL: raw, Err: err}}
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	resp, err := f.Fetch(context.Background(), &fetch.Request{URL: u})
	o := outcome{resp: resp, err: err, took: time.Since(start)}
	runtime.ReadMemStats(&after)
	// Everything allocated meanwhile, the server's side (in this process)
	// included: the caps with room for buffers grown by doubling.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > hostileMaxAlloc {
		t.Errorf("Fetch %s allocated %d MiB, want at most %d MiB", raw, alloc>>20, hostileMaxAlloc>>20)
	}
	if o.took > hostileBound {
		t.Errorf("Fetch %s took %v, want at most %v", raw, o.took, hostileBound)
	}
	if resp != nil && (len(resp.Body) > hostileMaxBody || len(resp.Decoded) > hostileMaxDecoded) {
		t.Errorf("Fetch %s: %d bytes, %d decoded; caps are %d and %d", raw, len(resp.Body), len(resp.Decoded), hostileMaxBody, hostileMaxDecoded)
	}
	return o
}

// Checks of an outcome; each returns "" when it holds.
type check func(outcome) string

func class(want fetch.Class) check {
	return func(o outcome) string {
		if got := fetch.ClassOf(o.err); got != want {
			return fmt.Sprintf("class %q, want %q", got, want)
		}
		return ""
	}
}

func ok(status int, truncated string, extra func(*fetch.Response) string) check {
	return func(o outcome) string {
		if o.err != nil || o.resp.Status != status || o.resp.Truncated != truncated {
			return fmt.Sprintf("want status %d, truncated %q", status, truncated)
		}
		if extra != nil {
			return extra(o.resp)
		}
		return ""
	}
}

func complete(r *fetch.Response) string {
	if r.DecodeErr != nil || len(r.Body) == 0 || r.MediaType != "text/html" {
		return "want a whole text/html body, decoded"
	}
	return ""
}

func decodeErr(r *fetch.Response) string {
	if r.DecodeErr == nil || len(r.Body) == 0 || r.Decoded != nil {
		return "want the body kept and a decode error"
	}
	return ""
}

func retryAfter(r *fetch.Response) string {
	if r.Header.Get("Retry-After") == "" {
		return "want a Retry-After header"
	}
	return ""
}

// redirectTo is a 302 whose Location, fetched, ends in the class then.
func redirectTo(prefix string, then fetch.Class) func(*testing.T, *fetch.Fetcher, outcome) string {
	return func(t *testing.T, f *fetch.Fetcher, o outcome) string {
		if o.err != nil || o.resp.Status != http.StatusFound || !strings.HasPrefix(o.resp.Location, prefix) {
			return fmt.Sprintf("want 302 to %s...", prefix)
		}
		next := get(t, f, o.resp.Location)
		if got := fetch.ClassOf(next.err); got != then {
			return fmt.Sprintf("then %s: %v, want class %q", o.resp.Location, next, then)
		}
		return ""
	}
}

// follow follows redirects up to hops fetches and reports where it ended.
func follow(t *testing.T, f *fetch.Fetcher, o outcome, hops int) (seen map[string]bool, last outcome, n int) {
	seen = map[string]bool{o.resp.URL: true}
	for n = 1; n < hops && last.err == nil && o.resp.Location != ""; n++ {
		if seen[o.resp.Location] {
			return seen, o, n
		}
		seen[o.resp.Location] = true
		o = get(t, f, o.resp.Location)
		if o.err != nil {
			return seen, o, n
		}
	}
	return seen, o, n
}

// TestFetchHostileWeb runs the real Fetcher against every hostile host of
// the synthetic web: each fetch ends within hostileBound, its bodies
// within the caps, in a named error class or a safe, possibly truncated,
// response.
func TestFetchHostileWeb(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a hostile web's slow answers; the full suite runs it")
	}
	srv, f := hostileWeb(t)
	port := fmt.Sprint(srv.Port())
	for _, tc := range []struct {
		kind, path string
		want       check                                            // checks the first fetch
		then       func(*testing.T, *fetch.Fetcher, outcome) string // checks what follows, if set
	}{
		// Hostile's five.
		{kind: "junk", want: ok(200, "", complete)},
		{kind: "lying-length", want: ok(200, "disconnect", nil)},
		{kind: "slow-drip", want: ok(200, "time", nil)},
		{kind: "endless", want: ok(200, "length", func(r *fetch.Response) string {
			if len(r.Body) != hostileMaxBody {
				return fmt.Sprintf("%d bytes, want the cap", len(r.Body))
			}
			return ""
		})},
		{kind: "bad-gzip", want: ok(200, "", decodeErr)},
		// The head.
		{kind: "header-drip", want: class(fetch.ClassTimeout)},
		{kind: "short-length", want: ok(200, "", func(r *fetch.Response) string {
			if len(r.Body) != 64 {
				return fmt.Sprintf("%d bytes, want the 64 declared", len(r.Body))
			}
			return ""
		}), then: func(t *testing.T, f *fetch.Fetcher, o outcome) string {
			// The bytes past the declared length may be read as the next
			// response once, when a fetch takes the kept-alive connection
			// before the transport notices them (TestShortLengthDropsTheConnection);
			// the connection is dropped then, so a third fetch has the 64 bytes.
			again := get(t, f, o.resp.URL)
			if again.err != nil && fetch.ClassOf(again.err) == fetch.ClassProtocol {
				again = get(t, f, o.resp.URL)
			}
			if again.err != nil || len(again.resp.Body) != 64 {
				return fmt.Sprintf("fetch again: %v, want the same 64 bytes", again)
			}
			again.resp.Release()
			return ""
		}},
		{kind: "huge-header", want: class(fetch.ClassProtocol)},
		{kind: "many-headers", want: ok(200, "", func(r *fetch.Response) string {
			if len(r.Header) < 10_000 {
				return fmt.Sprintf("%d headers, want 10,000", len(r.Header))
			}
			return ""
		})},
		// Redirects: the Fetcher returns them; following is the caller's.
		{kind: "redirect-loop", want: ok(302, "", nil), then: func(t *testing.T, f *fetch.Fetcher, o outcome) string {
			seen, last, n := follow(t, f, o, 10)
			if len(seen) != 2 || n > 3 || last.err != nil {
				return fmt.Sprintf("followed %d hops to %d URLs (%v), want the loop seen on the third", n, len(seen), last)
			}
			return ""
		}},
		{kind: "redirect-chain", want: ok(302, "", nil), then: func(t *testing.T, f *fetch.Fetcher, o outcome) string {
			_, last, n := follow(t, f, o, 40)
			if last.err != nil || last.resp.Status != 200 || n != 31 {
				return fmt.Sprintf("followed %d hops to %v, want a page after 31", n, last)
			}
			return ""
		}},
		{kind: "redirect-ftp", want: ok(302, "", nil), then: redirectTo("ftp:", fetch.ClassRequest)},
		{kind: "redirect-javascript", want: ok(302, "", nil), then: redirectTo("javascript:", fetch.ClassRequest)},
		{kind: "redirect-data", want: ok(302, "", nil), then: redirectTo("data:", fetch.ClassRequest)},
		{kind: "redirect-loopback", want: ok(302, "", nil), then: redirectTo("http://127.0.0.1:1/", fetch.ClassBlocked)},
		{kind: "redirect-metadata", want: ok(302, "", nil), then: redirectTo("http://169.254.169.254/", fetch.ClassBlocked)},
		{kind: "redirect-ipv6-loopback", want: ok(302, "", nil), then: redirectTo("http://[::1]/", fetch.ClassBlocked)},
		{kind: "redirect-hex-ip", want: ok(302, "", nil), then: redirectTo("http://0x7f000001/", fetch.ClassBlocked)},
		// The body's bytes: kept as sent, for the parsers to survive.
		{kind: "binary-html", want: ok(200, "", complete)},
		{kind: "bad-utf8", want: ok(200, "", complete)},
		{kind: "shift-jis", want: ok(200, "", complete)},
		{kind: "windows-1252", want: ok(200, "", complete)},
		{kind: "utf16-bom", want: ok(200, "", complete)},
		{kind: "utf16-no-bom", want: ok(200, "", complete)},
		{kind: "deep-nesting", want: ok(200, "", complete)},
		// robots.txt.
		{kind: "robots-huge", path: "/robots.txt", want: ok(200, "length", nil)},
		{kind: "robots-bom", path: "/robots.txt", want: ok(200, "", nil)},
		{kind: "robots-nul", path: "/robots.txt", want: ok(200, "", nil)},
		{kind: "robots-garbage", path: "/robots.txt", want: ok(200, "", nil)},
		// Status.
		{kind: "retry-after-seconds", want: ok(429, "", retryAfter)},
		{kind: "retry-after-date", want: ok(429, "", retryAfter)},
		{kind: "503-storm", want: ok(503, "", nil)},
		// The connection and the coding.
		{kind: "reset", want: ok(200, "disconnect", nil)},
		{kind: "silent", want: class(fetch.ClassTimeout)},
		{kind: "deflate-bomb", want: ok(200, "length", func(r *fetch.Response) string {
			if len(r.Decoded) != hostileMaxDecoded {
				return fmt.Sprintf("%d decoded bytes, want the cap", len(r.Decoded))
			}
			return ""
		})},
		{kind: "gzip-bomb", want: ok(200, "length", func(r *fetch.Response) string {
			if len(r.Decoded) != hostileMaxDecoded {
				return fmt.Sprintf("%d decoded bytes, want the cap", len(r.Decoded))
			}
			return ""
		})},
		{kind: "corrupt-brotli", want: ok(200, "", decodeErr)},
		{kind: "brotli-bomb", want: ok(200, "length", func(r *fetch.Response) string {
			if len(r.Decoded) != hostileMaxDecoded {
				return fmt.Sprintf("%d decoded bytes, want the cap", len(r.Decoded))
			}
			return ""
		})},
		// A Location net/url cannot parse: the 302 is returned, the
		// value as sent.
		{kind: "bad-location", want: ok(302, "", func(r *fetch.Response) string {
			if r.Location != "http://[::1" {
				return fmt.Sprintf("Location %q, want the header's value as sent", r.Location)
			}
			return ""
		})},
	} {
		path := tc.path
		if path == "" {
			path = "/"
		}
		u := "http://hostile-" + tc.kind + ".trawl.test:" + port + path
		o := get(t, f, u)
		if msg := tc.want(o); msg != "" {
			t.Errorf("%s: %v: %s", u, o, msg)
			continue
		}
		if tc.then != nil {
			if msg := tc.then(t, f, o); msg != "" {
				t.Errorf("%s: %s", u, msg)
			}
		}
		if o.resp != nil {
			o.resp.Release()
		}
	}
}

// TestHostileWebCoversEveryKind keeps the table above honest: a kind
// added to the web without a fetch-level check fails here.
func TestHostileWebCoversEveryKind(t *testing.T) {
	src, err := os.ReadFile("hostile_test.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range testweb.AllHostileKinds() {
		if !strings.Contains(string(src), `{kind: "`+k+`"`) {
			t.Errorf("hostile kind %q has no row in TestFetchHostileWeb", k)
		}
	}
}
