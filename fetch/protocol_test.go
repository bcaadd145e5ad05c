package fetch

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// TestProtocols fetches over each protocol stack the fetcher speaks
// from loopback servers and checks Response.Protocols (the WARC-Protocol
// values) and the HTTP/1.1 form of the response head.
func TestProtocols(t *testing.T) {
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("hello"))
	})
	plain := newServer(t, handler)
	tlsServer := func(h2 bool) *httptest.Server {
		s := httptest.NewUnstartedServer(handler)
		s.EnableHTTP2 = h2
		s.StartTLS()
		t.Cleanup(s.Close)
		return s
	}
	h1, h2 := tlsServer(false), tlsServer(true)
	roots := x509.NewCertPool()
	roots.AddCert(h1.Certificate())
	roots.AddCert(h2.Certificate())
	http10 := newRawServer(t, replyRaw("HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nhello"))

	for _, tc := range []struct {
		name       string
		url        string
		maxTLS     uint16
		want       []string
		statusLine string
	}{
		{"http", plain.URL, 0, []string{"http/1.1"}, "HTTP/1.1 200 OK"},
		{"HTTP/1.0 server", http10.URL(), 0, []string{"http/1.0"}, "HTTP/1.0 200 OK"},
		{"https, HTTP/1.1", h1.URL, 0, []string{"http/1.1", "tls/1.3"}, "HTTP/1.1 200 OK"},
		{"https, HTTP/1.1, TLS 1.2", h1.URL, tls.VersionTLS12, []string{"http/1.1", "tls/1.2"}, "HTTP/1.1 200 OK"},
		// HTTP/2 carries no reason phrase: the status line has none.
		{"https, HTTP/2", h2.URL, 0, []string{"h2", "tls/1.3"}, "HTTP/1.1 200 "},
		{"https, HTTP/2, TLS 1.2", h2.URL, tls.VersionTLS12, []string{"h2", "tls/1.2"}, "HTTP/1.1 200 "},
	} {
		o := testOptions()
		o.TLSConfig = &tls.Config{RootCAs: roots, MaxVersion: tc.maxTLS}
		f := newFetcher(t, o)
		resp, err := get(t, f, tc.url+"/p")
		if err != nil {
			t.Fatalf("%s: Fetch: %v", tc.name, err)
		}
		status, _, _ := strings.Cut(string(resp.RawResponseHeader), "\r\n")
		if !slices.Equal(resp.Protocols, tc.want) || status != tc.statusLine || string(resp.Body) != "hello" {
			t.Errorf("%s: Protocols %q, status line %q, body %q; want %q, %q, \"hello\"", tc.name, resp.Protocols, status, resp.Body, tc.want, tc.statusLine)
		}
		if !strings.HasPrefix(string(resp.RawRequest), "GET /p HTTP/1.1\r\n") {
			t.Errorf("%s: RawRequest %q, want an HTTP/1.1 request line", tc.name, resp.RawRequest)
		}
		resp.Release()
	}
}
