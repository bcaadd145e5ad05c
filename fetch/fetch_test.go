package fetch

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func okHandler(body string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, body)
	})
}

func gzipBytes(t testing.TB, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(data)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// gunzipPrefix is what can be decoded of a gzip stream cut short.
func gunzipPrefix(t testing.TB, cut []byte) string {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(cut))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatal(err)
	}
	return string(out)
}

func zlibBytes(t testing.TB, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zlib.NewWriter(&b)
	zw.Write(data)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func flateBytes(t testing.TB, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw, _ := flate.NewWriter(&b, flate.DefaultCompression)
	zw.Write(data)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestFetchRaw checks the request as it reached the wire and the response
// fields for a plain 200.
func TestFetchRaw(t *testing.T) {
	srv := newRawServer(t, replyRaw("HTTP/1.1 200 OK\r\nX-B: 2\r\nContent-Type: Text/HTML; charset=UTF-8\r\nX-A: 1\r\nContent-Length: 13\r\n\r\n<html></html>"))
	f := newFetcher(t, testOptions())
	req := &Request{URL: mustURL(t, srv.URL()+"/a/b?x=1&y=%20"), Header: map[string][]string{
		"if-none-match": {`"abc"`}, "Accept-Language": {"en"},
	}}
	resp, err := f.Fetch(context.Background(), req)
	if err != nil {
		t.Fatalf("Fetch: %v", err)
	}
	host := strings.TrimPrefix(srv.URL(), "http://")
	wantReq := "GET /a/b?x=1&y=%20 HTTP/1.1\r\nHost: " + host + "\r\nUser-Agent: " + testUA +
		"\r\nAccept-Encoding: gzip, deflate, br, zstd\r\nAccept-Language: en\r\nIf-None-Match: \"abc\"\r\n\r\n"
	if got := string(resp.RawRequest); got != wantReq {
		t.Errorf("RawRequest = %q, want %q", got, wantReq)
	}
	if heads := srv.requestHeads(); len(heads) != 1 || heads[0] != string(resp.RawRequest) {
		t.Errorf("wire request = %q, RawRequest = %q; want them equal", heads, resp.RawRequest)
	}
	wantHead := "HTTP/1.1 200 OK\r\nContent-Length: 13\r\nContent-Type: Text/HTML; charset=UTF-8\r\nX-A: 1\r\nX-B: 2\r\n\r\n"
	if got := string(resp.RawResponseHeader); got != wantHead {
		t.Errorf("RawResponseHeader = %q, want %q", got, wantHead)
	}
	checks := []struct{ field, got, want string }{
		{"URL", resp.URL, srv.URL() + "/a/b?x=1&y=%20"},
		{"Status", strconv.Itoa(resp.Status), "200"},
		{"IP", resp.IP.String(), "127.0.0.1"},
		{"MediaType", resp.MediaType, "text/html"},
		{"Body", string(resp.Body), "<html></html>"},
		{"Decoded", string(resp.Decoded), "<html></html>"},
		{"Truncated", resp.Truncated, ""},
		{"Location", resp.Location, ""},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("Response.%s = %q, want %q", c.field, c.got, c.want)
		}
	}
	if resp.Start.IsZero() || resp.FirstByte < 0 || resp.Duration < resp.FirstByte {
		t.Errorf("timing Start=%v FirstByte=%v Duration=%v, want Start set and 0 <= FirstByte <= Duration",
			resp.Start, resp.FirstByte, resp.Duration)
	}
}

// TestRawResponses runs scripted (often malformed) responses.
func TestRawResponses(t *testing.T) {
	page := []byte("<!DOCTYPE html><html><body>hello</body></html>")
	png := "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
	pdf := ("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n" + strings.Repeat("\x00\xff stream ", 600))[:5009]
	withBody := func(head string, body []byte) string {
		return head + "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + string(body)
	}
	cases := []struct {
		name      string
		reply     string
		path      string
		class     Class
		status    int
		body      string // want Body (ignored when class != "")
		decoded   string // want Decoded unless decodeErr
		decodeErr bool
		mediaType string
		truncated string // want Truncated
		location  string // "{base}" stands for the server's URL
		rawHeader string // if set, want RawResponseHeader
	}{
		{name: "chunked", reply: "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n",
			status: 200, body: "hello world", decoded: "hello world", mediaType: "text/plain",
			rawHeader: "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n"},
		{name: "content-length shorter than body", reply: "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 5\r\n\r\n0123456789",
			status: 200, body: "01234", decoded: "01234", mediaType: "text/html"},
		{name: "content-length longer than body", reply: "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 100\r\n\r\n0123456789",
			status: 200, body: "0123456789", decoded: "0123456789", mediaType: "text/html", truncated: "disconnect"},
		{name: "gzip cut by the connection", reply: "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\nContent-Length: 100000\r\n\r\n" + string(gzipBytes(t, page)[:60]),
			status: 200, body: string(gzipBytes(t, page)[:60]), decoded: gunzipPrefix(t, gzipBytes(t, page)[:60]), mediaType: "text/html", truncated: "disconnect"},
		{name: "malformed chunk", reply: "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\nzz\r\n",
			status: 200, body: "hello", decoded: "hello", mediaType: "text/plain", truncated: "unspecified"},
		{name: "no content-length, closed", reply: "HTTP/1.0 200 OK\r\nContent-Type: text/html\r\n\r\n<p>until close",
			status: 200, body: "<p>until close", decoded: "<p>until close", mediaType: "text/html"},
		{name: "missing content-type sniffed html", reply: withBody("HTTP/1.1 200 OK\r\n", page),
			status: 200, body: string(page), decoded: string(page), mediaType: "text/html"},
		{name: "missing content-type sniffed png kept", reply: withBody("HTTP/1.1 200 OK\r\n", []byte(png)),
			status: 200, body: png, decoded: png, mediaType: "image/png"},
		{name: "missing content-type gzip sniffed after decoding", reply: withBody("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n", gzipBytes(t, page)),
			status: 200, body: string(gzipBytes(t, page)), decoded: string(page), mediaType: "text/html"},
		{name: "gzip", reply: withBody("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\n", gzipBytes(t, page)),
			status: 200, body: string(gzipBytes(t, page)), decoded: string(page), mediaType: "text/html"},
		{name: "deflate zlib", reply: withBody("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: deflate\r\n", zlibBytes(t, page)),
			status: 200, body: string(zlibBytes(t, page)), decoded: string(page), mediaType: "text/html"},
		{name: "deflate raw", reply: withBody("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: deflate\r\n", flateBytes(t, page)),
			status: 200, body: string(flateBytes(t, page)), decoded: string(page), mediaType: "text/html"},
		{name: "double gzip", reply: withBody("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\nContent-Encoding: gzip\r\n", gzipBytes(t, gzipBytes(t, page))),
			status: 200, body: string(gzipBytes(t, gzipBytes(t, page))), decoded: string(page), mediaType: "text/html"},
		{name: "invalid gzip", reply: withBody("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\n", []byte("not gzip at all")),
			status: 200, body: "not gzip at all", decodeErr: true, mediaType: "text/html"},
		{name: "corrupt gzip trailer", reply: withBody("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\n", gzipBytes(t, page)[:30]),
			status: 200, body: string(gzipBytes(t, page)[:30]), decodeErr: true, mediaType: "text/html"},
		{name: "unsupported coding", reply: withBody("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: br\r\n", []byte("xx")),
			status: 200, body: "xx", decodeErr: true, mediaType: "text/html"},
		{name: "relative redirect", path: "/a/c", reply: "HTTP/1.1 301 Moved Permanently\r\nLocation: ../b?x=1\r\nContent-Length: 0\r\n\r\n",
			status: 301, location: "{base}/b?x=1"},
		{name: "absolute redirect", reply: "HTTP/1.1 302 Found\r\nLocation: https://other.test/x#frag\r\nContent-Length: 0\r\n\r\n",
			status: 302, location: "https://other.test/x#frag"},
		{name: "location outside 3xx ignored", reply: "HTTP/1.1 201 Created\r\nLocation: /new\r\nContent-Length: 0\r\n\r\n",
			status: 201},
		{name: "not modified", reply: "HTTP/1.1 304 Not Modified\r\nETag: \"x\"\r\n\r\n", status: 304},
		{name: "404 page", reply: withBody("HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\n", []byte("<p>gone</p>")),
			status: 404, body: "<p>gone</p>", decoded: "<p>gone</p>", mediaType: "text/html"},
		{name: "image read whole", reply: withBody("HTTP/1.1 200 OK\r\nContent-Type: image/png\r\n", bytes.Repeat([]byte("x"), 100000)),
			status: 200, body: strings.Repeat("x", 100000), decoded: strings.Repeat("x", 100000), mediaType: "image/png"},
		{name: "pdf read whole", reply: withBody("HTTP/1.1 200 OK\r\nContent-Type: application/pdf\r\n", []byte(pdf)),
			status: 200, body: pdf, decoded: pdf, mediaType: "application/pdf"},
		{name: "malformed status", reply: "HTTP/1.1 abc\r\n\r\n", class: ClassProtocol},
		{name: "not http", reply: "SSH-2.0-OpenSSH_9.6\r\n\r\n", class: ClassProtocol},
		{name: "closed without answer", reply: "", class: ClassProtocol},
		{name: "bad header line", reply: "HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", class: ClassProtocol},
	}
	f := newFetcher(t, testOptions())
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := newRawServer(t, replyRaw(c.reply))
			path := c.path
			if path == "" {
				path = "/"
			}
			resp, err := get(t, f, srv.URL()+path)
			if c.class != "" {
				if got := ClassOf(err); got != c.class || resp != nil {
					t.Fatalf("Fetch = %v, %v; want class %q", resp, err, c.class)
				}
				return
			}
			if err != nil {
				t.Fatalf("Fetch: %v", err)
			}
			if resp.Status != c.status {
				t.Errorf("Status = %d, want %d", resp.Status, c.status)
			}
			if string(resp.Body) != c.body {
				t.Errorf("Body = %q, want %q", resp.Body, c.body)
			}
			if c.decodeErr {
				if resp.DecodeErr == nil || resp.Decoded != nil {
					t.Errorf("DecodeErr = %v, Decoded = %q; want an error and nil", resp.DecodeErr, resp.Decoded)
				}
			} else if resp.DecodeErr != nil || string(resp.Decoded) != c.decoded {
				t.Errorf("Decoded = %q, %v; want %q", resp.Decoded, resp.DecodeErr, c.decoded)
			}
			if resp.MediaType != c.mediaType {
				t.Errorf("MediaType = %q, want %q", resp.MediaType, c.mediaType)
			}
			if resp.Truncated != c.truncated {
				t.Errorf("Truncated = %q, want %q", resp.Truncated, c.truncated)
			}
			if want := strings.ReplaceAll(c.location, "{base}", srv.URL()); resp.Location != want {
				t.Errorf("Location = %q, want %q", resp.Location, want)
			}
			if c.rawHeader != "" && string(resp.RawResponseHeader) != c.rawHeader {
				t.Errorf("RawResponseHeader = %q, want %q", resp.RawResponseHeader, c.rawHeader)
			}
		})
	}
}

func TestResetMidBody(t *testing.T) {
	srv := newRawServer(t, func(c net.Conn) {
		c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 100000\r\n\r\n"))
		c.Write(bytes.Repeat([]byte("a"), 1000))
		c.(*net.TCPConn).SetLinger(0) // close sends RST
	})
	f := newFetcher(t, testOptions())
	resp, err := get(t, f, srv.URL()+"/")
	if err != nil {
		t.Fatalf("Fetch: %v; want the response, cut", err)
	}
	if resp.Truncated != "disconnect" || len(resp.Body) > 1000 || !bytes.Equal(resp.Body, bytes.Repeat([]byte("a"), len(resp.Body))) {
		t.Errorf("Truncated %q, Body of %d bytes; want \"disconnect\" and what came of the 1,000 sent", resp.Truncated, len(resp.Body))
	}
}

func TestStaticHostsReachLoopback(t *testing.T) {
	var gotHost atomic.Value
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotHost.Store(r.Host)
		io.WriteString(w, "<html>named</html>")
	}))
	port := strconv.Itoa(srv.Listener.Addr().(*net.TCPAddr).Port)
	o := testOptions()
	o.Hosts = map[string][]netip.Addr{"some-name.test": {netip.MustParseAddr("127.0.0.1")}}
	o.Resolver = &fakeResolver{} // would fail: the static map must answer first
	f := newFetcher(t, o)
	resp, err := get(t, f, "http://some-name.test:"+port+"/")
	if err != nil {
		t.Fatalf("Fetch: %v", err)
	}
	if string(resp.Body) != "<html>named</html>" || resp.IP != netip.MustParseAddr("127.0.0.1") {
		t.Errorf("Body = %q, IP = %v; want the loopback server's page", resp.Body, resp.IP)
	}
	if got, want := gotHost.Load(), "some-name.test:"+port; got != want {
		t.Errorf("server saw Host %q, want %q", got, want)
	}
}

func TestEndlessBody(t *testing.T) {
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		chunk := bytes.Repeat([]byte("<p>more</p>"), 3000)
		for {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	o := testOptions()
	o.MaxBodyBytes = 100_000
	f := newFetcher(t, o)
	resp, err := get(t, f, srv.URL)
	if err != nil {
		t.Fatalf("Fetch: %v", err)
	}
	if resp.Truncated != "length" || len(resp.Body) != 100_000 || len(resp.Decoded) != 100_000 {
		t.Errorf("Truncated = %q, len(Body) = %d, len(Decoded) = %d; want \"length\", 100000, 100000",
			resp.Truncated, len(resp.Body), len(resp.Decoded))
	}
}

func TestSlowDripStopsAtTotalTimeout(t *testing.T) {
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(200)
		w.Write([]byte("x"))
		w.(http.Flusher).Flush() // headers and a first byte at once, then a drip
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-r.Context().Done():
				return
			case <-tick.C:
				if _, err := w.Write([]byte("x")); err != nil {
					return
				}
				w.(http.Flusher).Flush()
			}
		}
	}))
	o := testOptions()
	o.TotalTimeout = 200 * time.Millisecond
	f := newFetcher(t, o)
	start := time.Now()
	resp, err := get(t, f, srv.URL)
	elapsed := time.Since(start)
	if err != nil {
		t.Fatalf("Fetch: %v", err)
	}
	if resp.Truncated != "time" || len(resp.Body) == 0 || strings.Trim(string(resp.Body), "x") != "" {
		t.Errorf("Truncated = %q, Body = %q; want \"time\" and some x", resp.Truncated, resp.Body)
	}
	if elapsed > 5*time.Second {
		t.Errorf("Fetch took %v, want about 200ms", elapsed)
	}
}

func TestTimeoutsBeforeHeaders(t *testing.T) {
	silent := http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	cases := []struct {
		name        string
		first, full time.Duration
	}{
		{"first byte", 100 * time.Millisecond, time.Minute},
		{"total", time.Minute, 150 * time.Millisecond},
	}
	for _, c := range cases {
		srv := newServer(t, silent)
		o := testOptions()
		o.FirstByteTimeout, o.TotalTimeout = c.first, c.full
		f := newFetcher(t, o)
		start := time.Now()
		resp, err := get(t, f, srv.URL)
		if ClassOf(err) != ClassTimeout || resp != nil {
			t.Errorf("%s: Fetch = %v, %v; want class %q", c.name, resp, err, ClassTimeout)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: Fetch took %v", c.name, d)
		}
	}
}

func TestGzipBomb(t *testing.T) {
	bomb := gzipBytes(t, make([]byte, 4<<20)) // about 4 KiB on the wire
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(bomb)
	}))
	o := testOptions()
	o.MaxDecodedBytes = 256 << 10
	f := newFetcher(t, o)
	resp, err := get(t, f, srv.URL)
	if err != nil {
		t.Fatalf("Fetch: %v", err)
	}
	if !bytes.Equal(resp.Body, bomb) || len(resp.Decoded) != 256<<10 || resp.Truncated != "length" || resp.DecodeErr != nil {
		t.Errorf("len(Body) = %d (want %d), len(Decoded) = %d (want %d), Truncated = %q, DecodeErr = %v",
			len(resp.Body), len(bomb), len(resp.Decoded), 256<<10, resp.Truncated, resp.DecodeErr)
	}
}

// TestTruncatedGzipKeepsPrefix: a body cut by MaxBodyBytes decodes as far as
// it goes.
func TestTruncatedGzipKeepsPrefix(t *testing.T) {
	page := []byte(strings.Repeat("<p>some text that does not compress too well 0123456789</p>\n", 4000))
	for i := range page {
		page[i] ^= byte(i * 7 % 3) // vary it so that the gzip stays long
	}
	z := gzipBytes(t, page)
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(z)
	}))
	o := testOptions()
	o.MaxBodyBytes = int64(len(z) / 2)
	f := newFetcher(t, o)
	resp, err := get(t, f, srv.URL)
	if err != nil {
		t.Fatalf("Fetch: %v", err)
	}
	if resp.Truncated != "length" || resp.DecodeErr != nil || len(resp.Decoded) == 0 || !bytes.HasPrefix(page, resp.Decoded) {
		t.Errorf("Truncated = %q, DecodeErr = %v, len(Decoded) = %d; want \"length\", nil and a prefix of the page",
			resp.Truncated, resp.DecodeErr, len(resp.Decoded))
	}
}

func TestHugeHeaders(t *testing.T) {
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		for i := range 300 {
			w.Header().Set(fmt.Sprintf("X-Big-%d", i), strings.Repeat("a", 1024))
		}
		io.WriteString(w, "<html></html>")
	}))
	f := newFetcher(t, testOptions())
	resp, err := get(t, f, srv.URL)
	if ClassOf(err) != ClassProtocol || resp != nil {
		t.Fatalf("Fetch = %v, %v; want class %q", resp, err, ClassProtocol)
	}
}

func TestRedirectNotFollowed(t *testing.T) {
	var targetHits atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/from/here", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "../to?x=1", http.StatusFound)
	})
	mux.HandleFunc("/to", func(w http.ResponseWriter, _ *http.Request) { targetHits.Add(1) })
	srv := newServer(t, mux)
	f := newFetcher(t, testOptions())
	resp, err := get(t, f, srv.URL+"/from/here")
	if err != nil {
		t.Fatalf("Fetch: %v", err)
	}
	if resp.Status != http.StatusFound || resp.Location != srv.URL+"/to?x=1" {
		t.Errorf("Status = %d, Location = %q; want 302, %q", resp.Status, resp.Location, srv.URL+"/to?x=1")
	}
	if n := targetHits.Load(); n != 0 {
		t.Errorf("redirect target was fetched %d times, want 0", n)
	}
}

func TestTLS(t *testing.T) {
	srv := httptest.NewUnstartedServer(okHandler("<html>secure</html>"))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the failing handshake below is expected
	srv.StartTLS()
	t.Cleanup(srv.Close)
	port := strconv.Itoa(srv.Listener.Addr().(*net.TCPAddr).Port)
	raw := "https://example.com:" + port + "/" // httptest's certificate names example.com
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())

	o := testOptions()
	o.Hosts = map[string][]netip.Addr{"example.com": {netip.MustParseAddr("127.0.0.1")}}
	o.TLSConfig = &tls.Config{RootCAs: pool}
	resp, err := get(t, newFetcher(t, o), raw)
	if err != nil || string(resp.Decoded) != "<html>secure</html>" {
		t.Fatalf("Fetch(%q) = %v, %v; want the page", raw, resp, err)
	}

	o.TLSConfig = nil // system roots do not know the test CA
	if resp, err := get(t, newFetcher(t, o), raw); ClassOf(err) != ClassCertificate {
		t.Errorf("Fetch(%q) = %v, %v; want class %q", raw, resp, err, ClassCertificate)
	}
}

func TestRequestErrors(t *testing.T) {
	srv := newServer(t, okHandler("x"))
	f := newFetcher(t, testOptions())
	closed, _ := net.Listen("tcp", "127.0.0.1:0")
	refused := "http://" + closed.Addr().String() + "/"
	closed.Close()
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	cases := []struct {
		name   string
		ctx    context.Context
		url    string
		header http.Header
		want   Class
	}{
		{"ftp scheme", nil, "ftp://example.test/x", nil, ClassRequest},
		{"no host", nil, "http:///x", nil, ClassRequest},
		{"user info", nil, "http://u:p@example.test/", nil, ClassRequest},
		{"reserved header", nil, srv.URL, http.Header{"user-agent": {"other"}}, ClassRequest},
		{"bad header value", nil, srv.URL, http.Header{"X-A": {"a\r\nb"}}, ClassRequest},
		{"refused", nil, refused, nil, ClassConnect},
		{"unknown name", nil, "http://nowhere.test/", nil, ClassDNS},
		{"canceled", canceled, srv.URL, nil, ClassCanceled},
	}
	o := testOptions()
	o.Resolver = &fakeResolver{}
	fd := newFetcher(t, o)
	for _, c := range cases {
		ctx := c.ctx
		if ctx == nil {
			ctx = context.Background()
		}
		ff := f
		if c.want == ClassDNS {
			ff = fd
		}
		resp, err := ff.Fetch(ctx, &Request{URL: mustURL(t, c.url), Header: c.header})
		if got := ClassOf(err); got != c.want || resp != nil {
			t.Errorf("%s: Fetch(%q) = %v, %v; want class %q", c.name, c.url, resp, err, c.want)
		}
		var fe *Error
		if !errors.As(err, &fe) || !strings.HasPrefix(err.Error(), "fetch: ") {
			t.Errorf("%s: error %q is not a fetch *Error", c.name, err)
		}
	}
	if _, err := f.Fetch(context.Background(), nil); ClassOf(err) != ClassRequest {
		t.Errorf("Fetch(nil) error = %v, want class %q", err, ClassRequest)
	}
	// url.JoinPath on a base with an empty path gives a path without its
	// leading slash, which net/http would put on the request line as is.
	base := mustURL(t, srv.URL)
	if joined := base.JoinPath("page.html"); joined.Path[0] != '/' {
		if _, err := f.Fetch(context.Background(), &Request{URL: joined}); ClassOf(err) != ClassRequest || !strings.Contains(err.Error(), `"page.html"`) {
			t.Errorf("Fetch(%#v) error = %v, want class %q naming the path", joined, err, ClassRequest)
		}
	}
	relative := *base
	relative.Path = "page.html"
	if _, err := f.Fetch(context.Background(), &Request{URL: &relative}); ClassOf(err) != ClassRequest {
		t.Errorf("Fetch(a path without /) error = %v, want class %q", err, ClassRequest)
	}
	if ClassOf(nil) != "" {
		t.Errorf("ClassOf(nil) = %q, want \"\"", ClassOf(nil))
	}
}

func TestCancelDuringFetch(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	srv := newServer(t, http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		cancel() // the caller gives up while the server is thinking
		<-r.Context().Done()
	}))
	f := newFetcher(t, testOptions())
	resp, err := f.Fetch(ctx, &Request{URL: mustURL(t, srv.URL)})
	if ClassOf(err) != ClassCanceled || resp != nil {
		t.Errorf("Fetch = %v, %v; want class %q", resp, err, ClassCanceled)
	}
}

func TestKeepAlive(t *testing.T) {
	srv := newServer(t, okHandler("<html>again</html>"))
	f := newFetcher(t, testOptions())
	for i := range 3 {
		if resp, err := get(t, f, srv.URL); err != nil || string(resp.Body) != "<html>again</html>" {
			t.Fatalf("Fetch #%d = %v, %v", i, resp, err)
		}
	}
	if n := srv.conns.Load(); n != 1 {
		t.Errorf("server accepted %d connections for 3 fetches, want 1", n)
	}
}

func TestConcurrentFetches(t *testing.T) {
	const nServers, nFetches = 5, 50
	var urls []string
	for i := range nServers {
		srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, "<p>server %d path %s</p>", i, r.URL.Path)
		}))
		urls = append(urls, srv.URL)
	}
	f := newFetcher(t, testOptions())
	var wg sync.WaitGroup
	errs := make(chan error, nFetches)
	for i := range nFetches {
		wg.Go(func() {
			path := fmt.Sprintf("/p%d", i)
			resp, err := get(t, f, urls[i%nServers]+path)
			switch want := fmt.Sprintf("<p>server %d path %s</p>", i%nServers, path); {
			case err != nil:
				errs <- err
			case string(resp.Decoded) != want:
				errs <- fmt.Errorf("Fetch(%q) body = %q, want %q", path, resp.Decoded, want)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestReleaseRecyclesBodies fetches plain and gzipped pages in turn from
// several goroutines, releasing each response once checked: a recycled
// buffer must never show another page's bytes, and Release twice is safe.
func TestReleaseRecyclesBodies(t *testing.T) {
	page := func(i int) []byte {
		return bytes.Repeat([]byte(fmt.Sprintf("<p>page %d</p>", i)), 500+i*97)
	}
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var i int
		fmt.Sscanf(r.URL.Path, "/%d", &i)
		w.Header().Set("Content-Type", "text/html")
		if i%2 == 1 {
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(gzipBytes(t, page(i)))
			return
		}
		w.Write(page(i))
	}))
	f := newFetcher(t, testOptions())
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := g; i < 40; i += 4 {
				resp, err := get(t, f, fmt.Sprintf("%s/%d", srv.URL, i))
				if err != nil {
					t.Error(err)
					return
				}
				if !bytes.Equal(resp.Decoded, page(i)) {
					t.Errorf("page %d: decoded body differs from what was served", i)
				}
				if gzipped := i%2 == 1; resp.Identity() == gzipped {
					t.Errorf("page %d (gzipped %v): Identity() = %v", i, gzipped, resp.Identity())
				}
				resp.Release()
				resp.Release()
				if resp.Body != nil || resp.Decoded != nil {
					t.Errorf("page %d: Release left Body or Decoded set", i)
				}
			}
		})
	}
	wg.Wait()
}

func BenchmarkFetch(b *testing.B) {
	page := bytes.Repeat([]byte("<p>forty kilobytes of html.</p>\n"), 40*1024/32)
	srv := newServer(b, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(page)
	}))
	f := newFetcher(b, testOptions())
	req := &Request{URL: mustURL(b, srv.URL+"/page")}
	ctx := context.Background()
	b.ReportAllocs()
	b.SetBytes(int64(len(page)))
	for b.Loop() {
		resp, err := f.Fetch(ctx, req)
		if err != nil || len(resp.Body) != len(page) {
			b.Fatalf("Fetch = %v, %v", resp, err)
		}
		resp.Release()
	}
	if n := srv.conns.Load(); n != 1 {
		b.Errorf("server accepted %d connections, want 1 (keep-alive)", n)
	}
}

// closeFlagConn records whether its Close was called.
type closeFlagConn struct {
	net.Conn
	closed atomic.Bool
}

func (c *closeFlagConn) Close() error {
	c.closed.Store(true)
	return c.Conn.Close()
}

// TestCutFetchClosesItsConnection: a fetch cut short has closed its
// connection by the time Fetch returns, so that a retry or the host's
// next fetch never opens a second connection while the server still
// has the first (a server counts both in flight); a fetch read whole
// leaves its connection open for the next.
func TestCutFetchClosesItsConnection(t *testing.T) {
	drip := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000000")
		w.WriteHeader(http.StatusOK)
		w.Write([]byte("<p>start</p>"))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	endless := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		chunk := bytes.Repeat([]byte("<p>more</p>"), 3000)
		for {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	silent := http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	cases := []struct {
		name       string
		h          http.Handler
		set        func(*Options)
		wantClosed bool
	}{
		{"body cut by the total time-out", drip, func(o *Options) { o.TotalTimeout = 200 * time.Millisecond }, true},
		{"body past its cap", endless, func(o *Options) { o.MaxBodyBytes = 100_000 }, true},
		{"no head before the first-byte time-out", silent, func(o *Options) { o.FirstByteTimeout = 100 * time.Millisecond }, true},
		{"read whole", okHandler("<html>whole</html>"), func(*Options) {}, false},
		// A body one byte past the cap: the read that passed the cap
		// read it whole, and the connection is reusable.
		{"read whole, one byte past its cap", okHandler(strings.Repeat("x", 1001)), func(o *Options) { o.MaxBodyBytes = 1000 }, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := newServer(t, c.h)
			o := testOptions()
			c.set(&o)
			f := newFetcher(t, o)
			var (
				mu    sync.Mutex
				conns []*closeFlagConn
			)
			dial := f.transport.DialContext
			f.transport.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
				nc, err := dial(ctx, network, addr)
				if err != nil {
					return nil, err
				}
				fc := &closeFlagConn{Conn: nc}
				mu.Lock()
				conns = append(conns, fc)
				mu.Unlock()
				return fc, nil
			}
			_, err := get(t, f, srv.URL)
			mu.Lock()
			defer mu.Unlock()
			if len(conns) != 1 {
				t.Fatalf("Fetch (err %v) dialled %d connections, want 1", err, len(conns))
			}
			if got := conns[0].closed.Load(); got != c.wantClosed {
				t.Errorf("connection closed when Fetch returned (err %v): %v, want %v", err, got, c.wantClosed)
			}
		})
	}
}
