package fetch_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/fetch"
	"github.com/trawl-crawler/trawl/internal/testkit/testweb"
)

// tlsWeb serves every TLS kind beside a few plain hosts.
func tlsWeb(t *testing.T) *testweb.Server {
	t.Helper()
	web := testweb.Generate(testweb.Options{Seed: 12, Hosts: 3, BigHosts: -1, Latency: -1,
		MinPageBytes: 1000, MaxPageBytes: 2000, TLSKinds: testweb.AllTLSKinds()})
	srv, err := testweb.Serve(web, testweb.ServeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// TestFetchTLSWeb fetches every TLS host of the synthetic web with its CA
// trusted (fetch.Options.CACerts) and checks the class of each failure
// and the protocols of each success.
func TestFetchTLSWeb(t *testing.T) {
	srv := tlsWeb(t)
	ca := srv.Web().CACertPEM()
	port := strconv.Itoa(srv.Port())
	var plain string // an ordinary host, which speaks no TLS
	for _, h := range srv.Web().Hosts() {
		if h.TLS == "" && plain == "" {
			plain = h.Name
		}
	}
	var (
		ua x509.UnknownAuthorityError
		ci x509.CertificateInvalidError
		hn x509.HostnameError
	)
	for _, tc := range []struct {
		name  string
		host  string
		opts  func(*fetch.Options)
		proto string        // on success, the TLS version the response's WARC-Protocol names after h2
		class fetch.Class   // else the error's class
		as    any           // and an error its chain holds
		extra func() string // more to check; "" if fine
	}{
		{name: "https", host: "tls-https", proto: "tls/1.3"},
		{name: "h2-only", host: "tls-h2-only", proto: "tls/1.3"},
		{name: "expired", host: "tls-cert-expired", class: fetch.ClassCertificate, as: &ci,
			extra: func() string { return reason(ci, x509.Expired) }},
		{name: "not yet valid", host: "tls-cert-not-yet-valid", class: fetch.ClassCertificate, as: &ci,
			extra: func() string { return reason(ci, x509.Expired) }}, // crypto/x509's reason for both ends
		{name: "wrong name", host: "tls-cert-wrong-name", class: fetch.ClassCertificate, as: &hn},
		{name: "self-signed", host: "tls-cert-self-signed", class: fetch.ClassCertificate, as: &ua},
		{name: "unknown chain", host: "tls-cert-unknown-chain", class: fetch.ClassCertificate, as: &ua},
		{name: "CA not trusted", host: "tls-https", opts: func(o *fetch.Options) { o.CACerts = nil },
			class: fetch.ClassCertificate, as: &ua},
		{name: "CA as the only root", host: "tls-h2-only", proto: "tls/1.3", opts: func(o *fetch.Options) {
			o.CACerts, o.TLSConfig = nil, &tls.Config{RootCAs: srv.Web().CACertPool()}
		}},
		{name: "no TLS at the host", host: strings.TrimSuffix(plain, ".trawl.test"), class: fetch.ClassTLS}, // net/http: "server gave HTTP response to HTTPS client"
		{name: "no common cipher suite", host: "tls-https", class: fetch.ClassTLS, opts: func(o *fetch.Options) {
			// ECDSA certificates, and RSA key exchange offered alone:
			// the server sends a handshake_failure alert.
			o.TLSConfig = &tls.Config{MaxVersion: tls.VersionTLS12,
				CipherSuites: []uint16{tls.TLS_RSA_WITH_AES_128_GCM_SHA256}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := fetch.Options{UserAgent: "trawl-test/0.1", Hosts: srv.Resolver(), Resolver: libcResolver{},
				AllowNets: []netip.Prefix{netip.MustParsePrefix("127.77.0.0/16")}, CACerts: ca,
				ConnectTimeout: 5 * time.Second, TotalTimeout: 10 * time.Second}
			if tc.opts != nil {
				tc.opts(&o)
			}
			f, err := fetch.New(o)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			for _, path := range []string{"/", "/p1.html"} {
				u := "https://" + tc.host + ".trawl.test:" + port + path
				start := time.Now()
				resp, err := f.Fetch(context.Background(), &fetch.Request{URL: &url.URL{Scheme: "https", Host: tc.host + ".trawl.test:" + port, Path: path}})
				if took := time.Since(start); took > 5*time.Second {
					t.Errorf("Fetch(%s) took %v", u, took)
				}
				if tc.proto != "" {
					if err != nil {
						t.Fatalf("Fetch(%s): %v", u, err)
					}
					// HTTP/2, recorded in HTTP/1.1 form with no reason phrase.
					if resp.Status != 200 || firstLine(resp.RawResponseHeader) != "HTTP/1.1 200 " || len(resp.Body) == 0 ||
						strings.Join(resp.Protocols, " ") != "h2 "+tc.proto {
						t.Errorf("Fetch(%s) = %d, %q..., Protocols %q; want \"HTTP/1.1 200 \", a body and [h2 %s]", u, resp.Status, firstLine(resp.RawResponseHeader), resp.Protocols, tc.proto)
					}
					resp.Release()
					continue
				}
				if got := fetch.ClassOf(err); got != tc.class {
					t.Fatalf("Fetch(%s) = %v, %v; want class %q", u, resp, err, tc.class)
				}
				if tc.as != nil && !errors.As(err, tc.as) {
					t.Errorf("Fetch(%s): %v; want an error like %T in its chain", u, err, tc.as)
				}
				if tc.extra != nil {
					if msg := tc.extra(); msg != "" {
						t.Errorf("Fetch(%s): %v: %s", u, err, msg)
					}
				}
			}
		})
	}
}

func reason(e x509.CertificateInvalidError, want x509.InvalidReason) string {
	if e.Reason != want {
		return "reason " + strconv.Itoa(int(e.Reason)) + ", want " + strconv.Itoa(int(want))
	}
	return ""
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(string(b), "\r\n")
	return s
}

func TestCACertsValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		pem  []byte
		ok   bool
	}{
		{"nil", nil, true},
		{"a CA", testweb.Generate(testweb.Options{Hosts: 1, TLSKinds: []string{"https"}}).CACertPEM(), true},
		{"empty", []byte{}, false},
		{"not PEM", []byte("hello"), false},
		{"a key only", []byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"), false},
		{"a broken certificate", []byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"), false},
	} {
		err := (&fetch.Options{UserAgent: "t", CACerts: tc.pem}).Validate()
		if (err == nil) != tc.ok || err != nil && !strings.Contains(err.Error(), "Options.CACerts") {
			t.Errorf("%s: Validate() = %v, want ok %v (and CACerts named)", tc.name, err, tc.ok)
		}
	}
}
