package testweb

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/netip"
	"slices"
	"time"
)

// tlsKind is how a TLS host presents itself; zero for plain-HTTP hosts.
// Each kind named in Options.TLSKinds has a host of its own, named
// tls-<name>.<domain>, on a loopback address of its own, served over TLS on
// the web's one port. Every TLS host serves the same small site: "/"
// linking to /p1.html and /p2.html, and a robots.txt that allows
// everything. Only the certificate (and for h2-only the protocol) differs.
// Their order is part of a web's layout (addresses): new kinds go at the
// end.
type tlsKind int

const (
	notTLS          tlsKind = iota
	tlsHTTPS                // a certificate from the web's CA, ALPN h2 and http/1.1
	tlsH2Only               // a certificate from the web's CA, ALPN h2 only: HTTP/1.1 is refused
	tlsExpired              // a certificate from the CA that expired a day ago
	tlsNotYetValid          // a certificate from the CA valid from tomorrow
	tlsWrongName            // a certificate from the CA for another name
	tlsSelfSigned           // a self-signed certificate for the host's name
	tlsUnknownChain         // a leaf and intermediate under a root the web's CA is not
	numTLSKinds
)

// tlsNames are the kinds' names, as Options.TLSKinds and HostInfo.TLS
// spell them.
var tlsNames = [numTLSKinds]string{"",
	"https", "h2-only", "cert-expired", "cert-not-yet-valid", "cert-wrong-name", "cert-self-signed", "cert-unknown-chain",
}

// AllTLSKinds lists every TLS kind's name, in order.
func AllTLSKinds() []string {
	return slices.Clone(tlsNames[1:])
}

func tlsKindNamed(name string) tlsKind {
	if i := slices.Index(tlsNames[:], name); i > 0 {
		return tlsKind(i)
	}
	return notTLS
}

// tlsKinds returns the kinds o turns on, in kind order.
func (o Options) tlsKinds() []tlsKind {
	var out []tlsKind
	for k := tlsHTTPS; k < numTLSKinds; k++ {
		if slices.Contains(o.TLSKinds, tlsNames[k]) {
			out = append(out, k)
		}
	}
	return out
}

// webTLS is a web's certificate authority and its TLS hosts' server
// configurations. It is made at Generate, in memory, from crypto/rand:
// nothing of it is ever written to disk, and two webs never share a CA.
type webTLS struct {
	caPEM   []byte
	pool    *x509.CertPool
	configs map[netip.Addr]*tls.Config // by the TLS host's address
}

// CACertPEM returns the PEM-encoded certificate of the web's test CA, the
// one that trawl should be told to trust (a test writes it to a file for
// --ca-file); nil if the web has no TLS hosts (Options.TLSKinds).
func (w *Web) CACertPEM() []byte {
	if w.tls == nil {
		return nil
	}
	return slices.Clone(w.tls.caPEM)
}

// CACertPool returns a pool holding the web's test CA alone, or nil if the
// web has no TLS hosts.
func (w *Web) CACertPool() *x509.CertPool {
	if w.tls == nil {
		return nil
	}
	return w.tls.pool.Clone()
}

// makeTLSHosts adds a host for each TLS kind o names, after every other
// host, and links each from an ordinary home page. It draws nothing from
// g.rng: adding TLS kinds leaves the rest of the web as it was.
func (g *gen) makeTLSHosts() {
	kinds := g.o.tlsKinds()
	if len(kinds) == 0 {
		return
	}
	w := g.w
	w.tls = &webTLS{configs: make(map[netip.Addr]*tls.Config)}
	ca, err := newCA("trawl testweb CA")
	if err != nil {
		panic("testweb: make the test CA: " + err.Error()) // crypto/rand does not fail
	}
	w.tls.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.cert.Raw})
	w.tls.pool = x509.NewCertPool()
	w.tls.pool.AddCert(ca.cert)
	now := time.Now()
	for j, k := range kinds {
		i := len(w.hosts)
		h := &host{idx: i, name: fmt.Sprintf("tls-%s.%s", tlsNames[k], g.o.Domain), ip: hostIP(i),
			robots: robotsAllowAll, latency: g.o.Latency, tls: k, byPQ: make(map[string]*resource)}
		seed := uint64(g.o.Seed) ^ uint64(k)<<40
		home := &resource{host: h, pq: "/", kind: kindHTML, status: 200, note: "tls: " + tlsNames[k], seed: seed,
			body: &bodySpec{seed: seed, size: 300, title: "TLS " + tlsNames[k]}}
		h.res, h.regular = append(h.res, home), append(h.regular, home)
		h.byPQ[home.pq] = home
		for p := 1; p <= 2; p++ {
			r := &resource{host: h, pq: fmt.Sprintf("/p%d.html", p), kind: kindHTML, status: 200,
				note: "tls: " + tlsNames[k], seed: seed + uint64(p),
				body: &bodySpec{seed: seed + uint64(p), size: 300, title: fmt.Sprintf("TLS %s page %d", tlsNames[k], p)}}
			h.res, h.regular = append(h.res, r), append(h.regular, r)
			h.byPQ[r.pq] = r
			home.body.links = append(home.body.links, link{to: r, raw: "https://" + h.name + portToken + r.pq, where: inAnchor})
		}
		cert, err := tlsCert(k, ca, h.name, now)
		if err != nil {
			panic("testweb: make the certificate of " + h.name + ": " + err.Error())
		}
		cfg := &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"h2", "http/1.1"}}
		if k == tlsH2Only {
			// A client that does not offer h2 by ALPN (an HTTP/1.1
			// client offers "http/1.1" or nothing) fails the handshake.
			cfg.NextProtos = []string{"h2"}
			cfg.GetConfigForClient = func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
				if !slices.Contains(hello.SupportedProtos, "h2") {
					return nil, fmt.Errorf("testweb: %s speaks HTTP/2 only; the client offered ALPN %q", h.name, hello.SupportedProtos)
				}
				return nil, nil
			}
		}
		w.tls.configs[h.ip] = cfg
		w.hosts = append(w.hosts, h)
		w.byName[h.name] = h
		from := g.ordinary[j%len(g.ordinary)].regular[0]
		from.body.links = append(from.body.links, link{to: home, raw: "https://" + h.name + portToken + "/", where: inAnchor})
	}
}

// authority is a CA: its certificate and key.
type authority struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

// newCA makes a self-signed root valid from an hour ago for ten years.
func newCA(name string) (*authority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: name, Organization: []string{"trawl test"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &authority{cert: cert, key: key}, nil
}

// sub makes an intermediate CA signed by a.
func (a *authority) sub(name string) (*authority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: name, Organization: []string{"trawl test"}},
		NotBefore:             a.cert.NotBefore,
		NotAfter:              a.cert.NotAfter,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, &key.PublicKey, a.key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &authority{cert: cert, key: key}, nil
}

// tlsCert makes the certificate (and chain) host name presents as kind k.
func tlsCert(k tlsKind, ca *authority, name string, now time.Time) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: name},
		DNSNames:     []string{name},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.AddDate(0, 0, 30),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	signer, parent := ca.key, ca.cert
	var chain [][]byte
	switch k {
	case tlsExpired:
		tmpl.NotBefore, tmpl.NotAfter = now.AddDate(0, 0, -30), now.AddDate(0, 0, -1)
	case tlsNotYetValid:
		tmpl.NotBefore, tmpl.NotAfter = now.AddDate(0, 0, 1), now.AddDate(0, 0, 30)
	case tlsWrongName:
		tmpl.Subject.CommonName = "wrong-name.invalid"
		tmpl.DNSNames = []string{"wrong-name.invalid"}
	case tlsSelfSigned:
		signer, parent = key, tmpl
	case tlsUnknownChain:
		other, err := newCA("not the trawl testweb CA")
		if err != nil {
			return tls.Certificate{}, err
		}
		inter, err := other.sub("intermediate under another root")
		if err != nil {
			return tls.Certificate{}, err
		}
		signer, parent = inter.key, inter.cert
		chain = append(chain, inter.cert.Raw)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: append([][]byte{der}, chain...), PrivateKey: key}, nil
}

// serial is a random 128-bit certificate serial number.
func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		panic("testweb: crypto/rand: " + err.Error())
	}
	return n
}

// wrapTLS wraps the listeners of TLS hosts' addresses in TLS, each with its
// host's configuration; other listeners are returned as they are.
func (w *Web) wrapTLS(lns []net.Listener) {
	if w.tls == nil {
		return
	}
	for i, ln := range lns {
		ap, err := netip.ParseAddrPort(ln.Addr().String())
		if err != nil {
			continue
		}
		if cfg := w.tls.configs[ap.Addr()]; cfg != nil {
			lns[i] = tls.NewListener(ln, cfg)
		}
	}
}
