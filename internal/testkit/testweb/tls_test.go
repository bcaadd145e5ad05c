package testweb

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

// tlsClient is client(t, srv) trusting the web's CA (and nothing else),
// speaking the protocols named.
func tlsClient(t *testing.T, srv *Server, h1, h2 bool) *http.Client {
	t.Helper()
	c := client(t, srv)
	c.Timeout = 10 * time.Second
	tr := c.Transport.(*http.Transport)
	tr.TLSClientConfig = &tls.Config{RootCAs: srv.Web().CACertPool()}
	tr.Protocols = new(http.Protocols)
	tr.Protocols.SetHTTP1(h1)
	tr.Protocols.SetHTTP2(h2)
	return c
}

func TestTLSKindsOptions(t *testing.T) {
	if err := (Options{TLSKinds: []string{"https", "no-such-kind"}}).Validate(); err == nil ||
		!strings.Contains(err.Error(), `TLSKinds: unknown kind "no-such-kind"`) {
		t.Errorf("Validate with an unknown TLS kind = %v, want TLSKinds named", err)
	}
	if w := Generate(small(3)); w.CACertPEM() != nil || w.CACertPool() != nil {
		t.Errorf("a web without TLS kinds has a CA")
	}
	// TLS hosts come after every other host: the rest of the web, hostile
	// hosts included, is what it was.
	base := Options{Seed: 3, Hosts: 20, Hostile: true, HostileKinds: []string{"reset"}}
	with := base
	with.TLSKinds = AllTLSKinds()
	a, b := Generate(base), Generate(with)
	ha, hb := a.Hosts(), b.Hosts()
	if len(hb) != len(ha)+len(AllTLSKinds()) || !reflect.DeepEqual(ha, hb[:len(ha)]) {
		t.Errorf("TLSKinds changed the other hosts: %d hosts, then %d", len(ha), len(hb))
	}
	for i, k := range AllTLSKinds() {
		h := hb[len(ha)+i]
		if h.TLS != k || h.Name != "tls-"+k+".trawl.test" || h.SharedIP {
			t.Errorf("TLS host %d = %+v, want kind %q on its own address", i, h, k)
		}
	}
	block := b.CACertPEM()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(block) {
		t.Errorf("CACertPEM = %q, not a PEM certificate", block)
	}
}

func TestServeTLSKinds(t *testing.T) {
	o := small(5)
	o.TLSKinds = AllTLSKinds()
	srv := serve(t, o)
	both, h1only := tlsClient(t, srv, true, true), tlsClient(t, srv, true, false)
	var (
		ua  x509.UnknownAuthorityError
		ci  x509.CertificateInvalidError
		hn  x509.HostnameError
		alr *net.OpError // a TLS alert from the server is Op "remote error"
	)
	for _, tc := range []struct {
		kind   string
		c      *http.Client
		proto  string // want this protocol, or else
		errAs  any    // an error of this type
		reason x509.InvalidReason
	}{
		{kind: "https", c: both, proto: "HTTP/2.0"},
		{kind: "https", c: h1only, proto: "HTTP/1.1"},
		{kind: "h2-only", c: both, proto: "HTTP/2.0"},
		{kind: "h2-only", c: h1only, errAs: &alr},
		{kind: "cert-expired", c: both, errAs: &ci, reason: x509.Expired},
		{kind: "cert-not-yet-valid", c: both, errAs: &ci, reason: x509.Expired}, // crypto/x509 says Expired for both ends of the validity
		{kind: "cert-wrong-name", c: both, errAs: &hn},
		{kind: "cert-self-signed", c: both, errAs: &ua},
		{kind: "cert-unknown-chain", c: both, errAs: &ua},
	} {
		for _, path := range []string{"/", "/p1.html", "/robots.txt"} {
			u := srv.Web().withPort("https://tls-" + tc.kind + ".trawl.test" + portToken + path)
			resp, err := tc.c.Get(u)
			if tc.errAs != nil {
				if err == nil {
					resp.Body.Close()
					t.Errorf("GET %s = %s, want an error like %T", u, resp.Status, tc.errAs)
				} else if !errors.As(err, tc.errAs) {
					t.Errorf("GET %s: %v (%T), want an error like %T", u, err, errors.Unwrap(err), tc.errAs)
				} else if e, ok := tc.errAs.(**net.OpError); ok && (*e).Op != "remote error" {
					t.Errorf("GET %s: %v, want a TLS alert", u, err)
				} else if e, ok := tc.errAs.(*x509.CertificateInvalidError); ok && e.Reason != tc.reason {
					t.Errorf("GET %s: %v, want reason %v", u, err, tc.reason)
				}
				continue
			}
			if err != nil {
				t.Errorf("GET %s: %v", u, err)
				continue
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != 200 || resp.Proto != tc.proto {
				t.Errorf("GET %s = %s %s, %v; want %s 200", u, resp.Proto, resp.Status, err, tc.proto)
			}
			if path == "/" && !strings.Contains(string(body), "/p2.html") {
				t.Errorf("GET %s: the home page does not link to /p2.html", u)
			}
		}
	}
	// A TLS host serves no page in plain HTTP.
	plain := client(t, srv)
	if resp, err := plain.Get(srv.Web().withPort("http://tls-https.trawl.test" + portToken + "/")); err == nil {
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Errorf("plain HTTP to a TLS host = %s, want no page", resp.Status)
		}
	}
}
