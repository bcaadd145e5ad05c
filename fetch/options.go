package fetch

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"
)

// Default values for zero Options fields.
const (
	DefaultDNSCacheTTL         = 5 * time.Minute
	DefaultDNSCacheSize        = 100_000
	DefaultConnectTimeout      = 10 * time.Second
	DefaultFirstByteTimeout    = 30 * time.Second
	DefaultTotalTimeout        = 2 * time.Minute
	DefaultMaxBodyBytes        = 10 << 20
	DefaultMaxDecodedBytes     = 50 << 20
	DefaultMaxHeaderBytes      = 256 << 10
	DefaultMaxIdleConnsPerHost = 2
)

// Limits of the connection pool that are not configurable.
const (
	// maxIdleConns bounds the idle connections over all hosts. A crawl
	// cycles through its hosts, each connection idle for the host's gap:
	// at 1024, a crawl of 2,000 hosts had its connections evicted and
	// dialled half its requests anew (12,167 connects for 24,530
	// requests on bench crawl --hosts 2000; 2,790 at 4096). An idle
	// connection holds two goroutines and 8 KiB of buffers, about 30 KiB:
	// 4096 of them about 120 MiB at most.
	maxIdleConns    = 4096
	idleConnTimeout = 90 * time.Second
)

// Options configures a Fetcher. Only UserAgent is required; every other
// zero field takes the default named beside it.
type Options struct {
	// UserAgent is the full User-Agent header value, e.g.
	// "trawl/0.1 (+https://example.org/bot)". Required.
	UserAgent string

	// Hosts maps lower-case ASCII (punycode) host names to addresses. It
	// is consulted before the DNS cache and the Resolver; its entries never
	// expire. Tests and the synthetic web use it; no system file is touched.
	Hosts map[string][]netip.Addr

	// Resolver looks up names not in Hosts. If nil, net.DefaultResolver is
	// used (system DNS and /etc/hosts).
	Resolver Resolver

	// DNSCacheTTL is how long a successful lookup is reused. If zero,
	// DefaultDNSCacheTTL. Failed lookups are not cached.
	DNSCacheTTL time.Duration

	// DNSCacheSize bounds the number of cached host names; when full, the
	// oldest entry is evicted. If zero, DefaultDNSCacheSize.
	DNSCacheSize int

	// AllowNets are prefixes the IP guard lets through even though they are
	// special-purpose addresses it refuses (guard.go: loopback, private,
	// link-local, CGNAT, benchmarking, documentation, multicast, reserved,
	// cloud metadata, ... and IPv6 addresses carrying such IPv4
	// addresses). Empty: all of those are refused.
	AllowNets []netip.Prefix

	// LocalAddr is the source address of every connection (the IP a
	// server sees the crawler come from), for a machine with several
	// addresses, e.g. the members of a fleet on one host each with its own
	// loopback address. It must be an address of this machine and of the
	// family of the hosts fetched. Zero: the system picks.
	LocalAddr netip.Addr

	// ConnectTimeout bounds the DNS lookup, the TCP connect and the TLS
	// handshake, each. If zero, DefaultConnectTimeout.
	ConnectTimeout time.Duration

	// FirstByteTimeout bounds the wait from the request being written to
	// the response headers being read. If zero, DefaultFirstByteTimeout.
	FirstByteTimeout time.Duration

	// TotalTimeout bounds the whole fetch, body included. If zero,
	// DefaultTotalTimeout.
	TotalTimeout time.Duration

	// MaxBodyBytes caps the body as transferred (content coding kept).
	// If zero, DefaultMaxBodyBytes.
	MaxBodyBytes int64

	// MaxDecodedBytes caps the body after content decoding, so that a
	// compression bomb stops there. If zero, DefaultMaxDecodedBytes.
	MaxDecodedBytes int64

	// MaxHeaderBytes caps the response header block. If zero,
	// DefaultMaxHeaderBytes.
	MaxHeaderBytes int64

	// MaxIdleConnsPerHost bounds the keep-alive connections kept per host.
	// If zero, DefaultMaxIdleConnsPerHost.
	MaxIdleConnsPerHost int

	// TLSConfig is cloned for HTTPS connections. If nil, net/http's
	// defaults apply (system roots).
	TLSConfig *tls.Config

	// CACerts holds PEM certificates of authorities trusted in addition
	// to the system roots (or to TLSConfig.RootCAs, if set): a private
	// or test CA (trawl --ca-file). In addition, not instead, because a
	// crawler that trusts a private CA still crawls the public web; a
	// caller that wants these roots alone sets TLSConfig.RootCAs. Blocks
	// other than CERTIFICATE are ignored; it must hold at least one
	// certificate. Nil: the system roots (or TLSConfig.RootCAs) alone.
	CACerts []byte

	// Now is the clock for Response.Start, FirstByte, Duration, DNS
	// cache expiry and Request.Validators (a Last-Modified after Now is
	// not sent). If nil, time.Now. Time-outs use real timers.
	Now func() time.Time
}

// Validate reports every invalid field of o, by name. Zero values are valid
// (they select defaults) except for UserAgent.
func (o *Options) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("fetch: Options.%s: "+format, append([]any{field}, args...)...))
	}
	switch {
	case o.UserAgent == "":
		bad("UserAgent", "required")
	case !httpguts.ValidHeaderFieldValue(o.UserAgent) || strings.TrimSpace(o.UserAgent) != o.UserAgent:
		bad("UserAgent", "%q is not a valid header value", o.UserAgent)
	}
	for host, addrs := range o.Hosts {
		if host == "" || host != strings.ToLower(host) || strings.HasSuffix(host, ".") {
			bad("Hosts", "key %q must be a lower-case host name without trailing dot", host)
		}
		if len(addrs) == 0 {
			bad("Hosts", "%q has no addresses", host)
		}
		for _, a := range addrs {
			if !a.IsValid() {
				bad("Hosts", "%q has an invalid address", host)
			}
		}
	}
	if o.LocalAddr.IsValid() && (o.LocalAddr.IsUnspecified() || o.LocalAddr.Zone() != "" || o.LocalAddr.IsMulticast()) {
		bad("LocalAddr", "%v is not a unicast address this machine can send from", o.LocalAddr)
	}
	for _, p := range o.AllowNets {
		if !p.IsValid() {
			bad("AllowNets", "invalid prefix %v", p)
		}
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"DNSCacheTTL", o.DNSCacheTTL}, {"ConnectTimeout", o.ConnectTimeout},
		{"FirstByteTimeout", o.FirstByteTimeout}, {"TotalTimeout", o.TotalTimeout},
	} {
		if d.v < 0 {
			bad(d.name, "negative duration %v", d.v)
		}
	}
	for _, n := range []struct {
		name string
		v    int64
	}{
		{"DNSCacheSize", int64(o.DNSCacheSize)}, {"MaxBodyBytes", o.MaxBodyBytes},
		{"MaxDecodedBytes", o.MaxDecodedBytes}, {"MaxHeaderBytes", o.MaxHeaderBytes},
		{"MaxIdleConnsPerHost", int64(o.MaxIdleConnsPerHost)},
	} {
		if n.v < 0 {
			bad(n.name, "negative value %d", n.v)
		}
	}
	if o.CACerts != nil {
		if _, err := parseCACerts(o.CACerts); err != nil {
			bad("CACerts", "%v", err)
		}
	}
	return errors.Join(errs...)
}

// withDefaults returns o with every zero field set to its default.
func (o Options) withDefaults() Options {
	if o.Resolver == nil {
		o.Resolver = net.DefaultResolver
	}
	if o.DNSCacheTTL == 0 {
		o.DNSCacheTTL = DefaultDNSCacheTTL
	}
	if o.DNSCacheSize == 0 {
		o.DNSCacheSize = DefaultDNSCacheSize
	}
	if o.ConnectTimeout == 0 {
		o.ConnectTimeout = DefaultConnectTimeout
	}
	if o.FirstByteTimeout == 0 {
		o.FirstByteTimeout = DefaultFirstByteTimeout
	}
	if o.TotalTimeout == 0 {
		o.TotalTimeout = DefaultTotalTimeout
	}
	if o.MaxBodyBytes == 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.MaxDecodedBytes == 0 {
		o.MaxDecodedBytes = DefaultMaxDecodedBytes
	}
	if o.MaxHeaderBytes == 0 {
		o.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if o.MaxIdleConnsPerHost == 0 {
		o.MaxIdleConnsPerHost = DefaultMaxIdleConnsPerHost
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// parseCACerts returns the CERTIFICATE blocks of pemBytes, parsed; an
// error if one does not parse or there is none.
func parseCACerts(pemBytes []byte) ([]*x509.Certificate, error) {
	var certs []*x509.Certificate
	for rest := pemBytes; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("certificate %d: %w", len(certs)+1, err)
		}
		certs = append(certs, c)
	}
	if len(certs) == 0 {
		return nil, errors.New("no PEM certificate")
	}
	return certs, nil
}

// tlsConfig returns the client TLS configuration of o: TLSConfig cloned,
// its roots (the system's if TLSConfig.RootCAs is nil) extended by
// CACerts. o has been validated.
func (o *Options) tlsConfig() *tls.Config {
	cfg := o.TLSConfig.Clone()
	if o.CACerts == nil {
		return cfg
	}
	if cfg == nil {
		cfg = &tls.Config{}
	}
	pool := cfg.RootCAs
	if pool != nil {
		pool = pool.Clone()
	} else if sys, err := x509.SystemCertPool(); err == nil {
		pool = sys // a copy: SystemCertPool returns one per call
	} else {
		pool = x509.NewCertPool() // no system roots on this platform: CACerts alone
	}
	certs, _ := parseCACerts(o.CACerts)
	for _, c := range certs {
		pool.AddCert(c)
	}
	cfg.RootCAs = pool
	return cfg
}
