// Package fetch downloads one URL per call, over HTTP/1.1 or, when a TLS
// server offers it by ALPN, HTTP/2, for the crawler's fixed pool of
// workers. It never follows redirects (it returns them) and
// uses no proxy. It dials only addresses its IP guard permits (guard.go:
// checked on every resolved address and again on the socket's address
// before connect, so DNS rebinding cannot bypass it), and bounds every
// fetch in time (connect, first byte, total) and size (headers, body,
// decoded body).
// A Fetcher is safe for concurrent use; its DNS cache and connection pool
// are bounded.
package fetch

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/net/http/httpguts"
)

// acceptEncoding is sent with every request; decode undoes each coding.
// It lists what browsers list, in their order (Chrome and Firefox send
// "gzip, deflate, br, zstd"), so that a server answers the crawler as it
// answers them.
const acceptEncoding = "gzip, deflate, br, zstd"

// maxBodyHint caps how far a declared Content-Length sizes the first body
// buffer. A server can declare any length and send a few bytes: trusted
// whole, the declaration bought a buffer of MaxBodyBytes per fetch, held
// by Response.Body. Beyond it, the buffer grows by doubling as bytes come.
const maxBodyHint = 1 << 20

// Request is one URL to fetch with GET.
type Request struct {
	URL *url.URL
	// Header holds extra request headers, e.g. If-None-Match. Host,
	// User-Agent, Accept-Encoding and the hop-by-hop headers are set by
	// the Fetcher and may not appear here.
	Header http.Header
	// Validators, if not zero, make the request conditional: If-None-Match
	// and If-Modified-Since are set from them (see Validators.Conditional).
	// Header may then hold neither header (a request error).
	Validators Validators
}

// Response is what a fetch received. Body holds the payload as transferred
// and Decoded the same after content decoding; both are capped.
type Response struct {
	URL    string      // the request URL
	Status int         // status code
	Header http.Header // response headers as parsed by net/http
	IP     netip.Addr  // the address actually connected to

	// RawRequest is the request line and headers as sent, ending in an
	// empty line. It is rebuilt in net/http's order (Host, User-Agent,
	// then the rest sorted by name), not captured from the wire, and in
	// HTTP/1.1 form even when the request went over HTTP/2 (whose
	// pseudo-headers and binary frames a WARC record does not hold);
	// Protocols then says h2.
	RawRequest []byte
	// RawResponseHeader is the status line and headers, ending in an empty
	// line, rebuilt from the parsed response with headers sorted by name.
	// Transfer-Encoding is dropped because Body is de-chunked. A response
	// that came over HTTP/2 is written in HTTP/1.1 form too, as the IIPC's
	// "WARC Extensions for HTTP/2" ask: "HTTP/1.1", the status code and
	// an empty reason phrase (HTTP/2 carries none), never "HTTP/2.0",
	// which is no valid HTTP/1 status line; Protocols says h2.
	RawResponseHeader []byte
	// Protocols names the protocols the exchange went over, highest layer
	// first, in the words of the WARC-Protocol field: "http/1.1" (or
	// "http/1.0" when the server answered in HTTP/1.0) or "h2", then for
	// https the TLS version ("tls/1.2", "tls/1.3").
	Protocols []string

	Body    []byte // payload as transferred (content coding kept), at most MaxBodyBytes
	Decoded []byte // Body after content decoding (the same slice for identity), at most MaxDecodedBytes
	// DecodeErr says why Body could not be decoded (corrupt gzip,
	// unsupported coding); Decoded is then nil. The response is still
	// worth archiving, so this is not a fetch error.
	DecodeErr error

	// MediaType comes from Content-Type, lower-case without parameters.
	// When Content-Type is missing it is sniffed from the body with
	// http.DetectContentType; "" if there was no body either. The body is
	// read whatever the type: what was fetched is archived whole.
	MediaType string
	// Truncated is "" for a complete body, else why it is not, in the
	// words of WARC 1.1's WARC-Truncated (section 5.13): "length" when
	// MaxBodyBytes or MaxDecodedBytes stopped reading, "time" when
	// FirstByteTimeout or TotalTimeout expired during the body,
	// "disconnect" when the connection ended or was reset before the
	// body did (short of its Content-Length, say), "unspecified" when
	// the body could not be read otherwise (malformed chunked coding).
	// What was read is kept and Fetch returns no error.
	Truncated string
	// Location is, for a 3xx with a Location header, its value resolved
	// against the request URL; otherwise "". A value net/url cannot parse
	// (e.g. "http://[::1") is given as sent, for the caller to judge: the
	// response is returned like any other.
	Location string
	// NotModified is set for a 304 to a conditional request (one that
	// sent If-None-Match or If-Modified-Since): the server affirms that
	// the representation the validators name is current. A 304 carries
	// no body; any bytes a server sends after one are not read (net/http
	// reads none) and Body is empty. A 304 to an unconditional request
	// names no representation the crawler holds: it is returned with
	// Status 304 and NotModified false, an ordinary bodiless response.
	NotModified bool
	// Conditional is set when the request sent If-None-Match or
	// If-Modified-Since, from Validators or Header.
	Conditional bool

	Start     time.Time     // when Fetch began
	FirstByte time.Duration // Start → response headers read
	Duration  time.Duration // Start → body done

	bufs [][]byte // pooled buffers behind Body and Decoded, for Release
}

// Release hands Body's and Decoded's buffers back for the next fetch and
// sets both to nil. Call it once done with the response; neither slice,
// nor anything sliced from them, may be used after it. A response that
// is never released is simply garbage collected.
func (r *Response) Release() {
	for _, b := range r.bufs {
		putBuf(b)
	}
	r.bufs, r.Body, r.Decoded = nil, nil, nil
}

// Identity reports whether the body had no content coding: Decoded is
// Body itself, whole (not cut by MaxDecodedBytes), so a digest of one is
// a digest of the other.
func (r *Response) Identity() bool {
	return r.DecodeErr == nil && len(r.Decoded) == len(r.Body) && (len(r.Body) == 0 || sameArray(r.Decoded, r.Body))
}

// sameArray reports whether a and b share their first byte of storage.
func sameArray(a, b []byte) bool {
	return cap(a) > 0 && cap(b) > 0 && &a[:1][0] == &b[:1][0]
}

// Fetcher fetches URLs. Create it with New and release its idle
// connections with Close.
type Fetcher struct {
	opts      Options
	resolver  Resolver
	dns       *dnsCache
	dialer    *net.Dialer
	transport *http.Transport
}

// New returns a Fetcher for opts, or the errors of opts.Validate.
func New(opts Options) (*Fetcher, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	f := &Fetcher{
		opts:     opts,
		resolver: opts.Resolver,
		dns:      newDNSCache(opts.DNSCacheTTL, opts.DNSCacheSize, opts.Now),
	}
	f.dialer = &net.Dialer{Timeout: opts.ConnectTimeout, KeepAlive: 30 * time.Second, Control: f.control}
	if opts.LocalAddr.IsValid() {
		f.dialer.LocalAddr = &net.TCPAddr{IP: opts.LocalAddr.AsSlice()}
	}
	protocols := new(http.Protocols)
	protocols.SetHTTP1(true)
	protocols.SetHTTP2(true) // over TLS only (ALPN h2); plain http:// stays HTTP/1.1
	f.transport = &http.Transport{
		Proxy:                  nil, // a proxy would dial on our behalf, past the guard: there is no proxy option
		DialContext:            f.dial,
		TLSClientConfig:        opts.tlsConfig(),
		TLSHandshakeTimeout:    opts.ConnectTimeout,
		DisableCompression:     true,
		MaxIdleConns:           maxIdleConns,
		MaxIdleConnsPerHost:    opts.MaxIdleConnsPerHost,
		IdleConnTimeout:        idleConnTimeout,
		MaxResponseHeaderBytes: opts.MaxHeaderBytes,
		Protocols:              protocols,
	}
	return f, nil
}

// Close closes idle connections. In-flight fetches are not interrupted; the
// Fetcher stays usable.
func (f *Fetcher) Close() {
	f.transport.CloseIdleConnections()
}

// reservedHeaders are set by the Fetcher or by net/http and may not be
// given in Request.Header.
var reservedHeaders = map[string]bool{
	"Host": true, "User-Agent": true, "Accept-Encoding": true, "Connection": true,
	"Content-Length": true, "Transfer-Encoding": true, "Te": true, "Trailer": true,
	"Upgrade": true, "Keep-Alive": true, "Proxy-Connection": true, "Proxy-Authorization": true,
}

// Fetch GETs req.URL. Errors are *Error; see Class. A response whose
// headers arrived is returned without error whatever its status and type,
// including when a time-out or the connection cut its body short
// (Truncated). If ctx ends first, the error has ClassCanceled and no
// Response is returned.
func (f *Fetcher) Fetch(ctx context.Context, req *Request) (*Response, error) {
	if req == nil || req.URL == nil {
		return nil, &Error{Class: ClassRequest, Err: errors.New("no URL")}
	}
	u := req.URL
	urlStr := u.String()
	hreq, err := f.newRequest(req)
	if err != nil {
		return nil, &Error{Class: ClassRequest, URL: urlStr, Err: err}
	}

	start := f.opts.Now()
	fctx, cancelTotal := context.WithTimeoutCause(ctx, f.opts.TotalTimeout, errTotalTimeout)
	defer cancelTotal()
	rctx, cancelReq := context.WithCancelCause(fctx)
	defer cancelReq(nil)

	var (
		mu          sync.Mutex // guards the fields below: trace hooks run on transport goroutines
		ip          netip.Addr
		gotConn     bool
		conn        net.Conn // the request's connection, closed here if the fetch is cut
		tlsErr      error    // the failed TLS handshake's error
		headersDone bool
		fbTimer     *time.Timer
	)
	trace := &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) {
			ap, _ := netip.ParseAddrPort(info.Conn.RemoteAddr().String())
			mu.Lock()
			gotConn, ip, conn = true, ap.Addr().Unmap(), info.Conn
			mu.Unlock()
		},
		TLSHandshakeDone: func(_ tls.ConnectionState, err error) {
			mu.Lock()
			tlsErr = err
			mu.Unlock()
		},
		WroteRequest: func(httptrace.WroteRequestInfo) {
			mu.Lock()
			if !headersDone && fbTimer == nil {
				fbTimer = time.AfterFunc(f.opts.FirstByteTimeout, func() { cancelReq(errFirstByteTimeout) })
			}
			mu.Unlock()
		},
	}
	hreq = hreq.WithContext(httptrace.WithClientTrace(rctx, trace))

	// The Transport, not an http.Client: a Client parses a 3xx's
	// Location with net/url before any CheckRedirect is asked, and fails
	// the fetch, response lost, on a value it cannot parse. The fetcher
	// follows no redirect, sets no Client.Timeout (the contexts above
	// bound the fetch) and keeps no cookies, so the Client added nothing
	// else: RoundTrip dials through the same guarded DialContext, speaks
	// HTTP/2 by the same Protocols, honours the request's context, and on
	// an error returns no response (nothing to close).
	hresp, err := f.transport.RoundTrip(hreq)
	firstByte := f.opts.Now()
	mu.Lock()
	headersDone = true
	if fbTimer != nil {
		fbTimer.Stop()
	}
	connected, connIP, handshakeErr, usedConn := gotConn, ip, tlsErr, conn
	mu.Unlock()
	if err != nil {
		closeCut(usedConn)
		class, cause := classify(ctx, rctx, err, connected, handshakeErr)
		return nil, &Error{Class: class, URL: urlStr, Err: cause}
	}
	defer hresp.Body.Close()
	if hresp.StatusCode < 100 || hresp.StatusCode > 599 {
		// RFC 9110 section 15: a status code is a three-digit integer
		// from 100 to 599; net/http reads any three digits ("000").
		return nil, &Error{Class: ClassProtocol, URL: urlStr, Err: fmt.Errorf("status code %d outside 100-599", hresp.StatusCode)}
	}

	resp := &Response{
		URL:               urlStr,
		Status:            hresp.StatusCode,
		Header:            hresp.Header,
		IP:                connIP,
		RawRequest:        rawRequest(hreq),
		RawResponseHeader: rawResponseHeader(hresp),
		Protocols:         protocols(hresp),
		MediaType:         mediaType(hresp.Header.Get("Content-Type")),
		Start:             start,
		FirstByte:         firstByte.Sub(start),
		Conditional:       conditional(hreq.Header),
	}
	resp.NotModified = resp.Conditional && hresp.StatusCode == http.StatusNotModified
	if loc := hresp.Header.Get("Location"); loc != "" && hresp.StatusCode >= 300 && hresp.StatusCode < 400 {
		if lu, err := u.Parse(loc); err == nil {
			resp.Location = lu.String()
		} else {
			resp.Location = loc
		}
	}
	body, truncated, err := readCapped(hresp.Body, f.opts.MaxBodyBytes, min(hresp.ContentLength, maxBodyHint))
	if err != nil {
		closeCut(usedConn)
		if ctx.Err() != nil {
			putBuf(body)
			return nil, &Error{Class: ClassCanceled, URL: urlStr, Err: context.Cause(ctx)}
		}
		resp.Truncated = bodyCut(context.Cause(rctx), err)
	} else if truncated {
		resp.Truncated = "length"
	}
	resp.Body = body

	encoding := strings.Join(hresp.Header.Values("Content-Encoding"), ",")
	decoded, dtrunc, derr := decode(body, encoding, f.opts.MaxDecodedBytes, resp.Truncated != "")
	resp.Decoded, resp.DecodeErr = decoded, derr
	resp.bufs = append(resp.bufs, body)
	if decoded != nil && !sameArray(decoded, body) {
		resp.bufs = append(resp.bufs, decoded)
	}
	if dtrunc && resp.Truncated == "" {
		resp.Truncated = "length"
	}
	if resp.MediaType == "" {
		switch {
		case derr == nil && len(decoded) > 0:
			resp.MediaType = sniff(decoded)
		case derr != nil && len(body) > 0:
			resp.MediaType = sniff(body)
		}
	}
	resp.Duration = f.opts.Now().Sub(start)
	return resp, nil
}

// closeCut closes the connection of a fetch cut short (a time-out, a
// cancel, a read error) before Fetch returns, so that a retry cannot open
// a second connection to the host while the first is still open. The
// transport closes it too, from its read loop's goroutine. A body past
// its cap is left to the transport's early close (Body.Close): the read
// that reached the cap may have been the body's last, and the connection
// back in the idle pool. An HTTP/2 connection is left to the transport,
// which resets the one stream: the connection may carry others.
func closeCut(c net.Conn) {
	if c == nil {
		return
	}
	if tc, ok := c.(*tls.Conn); ok && tc.ConnectionState().NegotiatedProtocol == "h2" {
		return
	}
	_ = c.Close()
}

// bodyCut names, as a WARC-Truncated reason, why reading a body failed
// with err: the fetch's time-out (cause), or the connection.
func bodyCut(cause, err error) string {
	var opErr *net.OpError
	switch {
	case cause == errTotalTimeout || cause == errFirstByteTimeout:
		return "time"
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.As(err, &opErr) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.EPIPE):
		return "disconnect"
	}
	return "unspecified"
}

// newRequest builds the GET request for req, checking the URL and the
// extra headers.
func (f *Fetcher) newRequest(req *Request) (*http.Request, error) {
	u := req.URL
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("unsupported scheme %q", u.Scheme)
	}
	if u.Host == "" || u.Hostname() == "" {
		return nil, errors.New("no host")
	}
	if u.User != nil {
		return nil, errors.New("user info in URL")
	}
	if u.Opaque != "" || u.Path != "" && u.Path[0] != '/' {
		// net/http would send the path as it is, with no leading slash,
		// a request line servers answer 400 (url.JoinPath on a base with
		// an empty path builds such URLs).
		return nil, fmt.Errorf("path %q does not start with /", u.EscapedPath()+u.Opaque)
	}
	cond := req.Validators.Conditional(f.opts.Now())
	h := make(http.Header, len(req.Header)+len(cond)+2)
	if !req.Validators.IsZero() && conditional(req.Header) {
		return nil, errValidatorsAndHeader
	}
	for k, vs := range cond {
		h[k] = vs
	}
	for k, vs := range req.Header {
		ck := http.CanonicalHeaderKey(k)
		if reservedHeaders[ck] || strings.HasPrefix(ck, "Proxy-") {
			return nil, fmt.Errorf("header %q is set by the fetcher", k)
		}
		if !httpguts.ValidHeaderFieldName(k) {
			return nil, fmt.Errorf("invalid header name %q", k)
		}
		for _, v := range vs {
			if !httpguts.ValidHeaderFieldValue(v) {
				return nil, fmt.Errorf("invalid value %q for header %q", v, k)
			}
		}
		h[ck] = append(h[ck], vs...)
	}
	h["User-Agent"] = []string{f.opts.UserAgent}
	h["Accept-Encoding"] = []string{acceptEncoding}
	return &http.Request{
		Method:     http.MethodGet,
		URL:        u,
		Proto:      "HTTP/1.1",
		ProtoMajor: 1,
		ProtoMinor: 1,
		Header:     h,
		Host:       u.Host,
	}, nil
}

// excludeRequest and excludeResponse are headers rawRequest and
// rawResponseHeader write separately or not at all.
var (
	excludeRequest  = map[string]bool{"Host": true, "User-Agent": true}
	excludeResponse = map[string]bool{"Transfer-Encoding": true}
)

// rawRequest rebuilds the request head the way net/http writes it for a
// direct (proxy-less) HTTP/1.1 GET.
func rawRequest(req *http.Request) []byte {
	host := req.Host
	if h, err := httpguts.PunycodeHostPort(host); err == nil {
		host = h
	}
	host = removeZone(host)
	var b bytes.Buffer
	b.Grow(256)
	b.WriteString("GET ")
	b.WriteString(req.URL.RequestURI())
	b.WriteString(" HTTP/1.1\r\nHost: ")
	b.WriteString(host)
	b.WriteString("\r\nUser-Agent: ")
	b.WriteString(req.Header.Get("User-Agent"))
	b.WriteString("\r\n")
	req.Header.WriteSubset(&b, excludeRequest) //nolint:errcheck // bytes.Buffer does not fail
	b.WriteString("\r\n")
	return b.Bytes()
}

// removeZone drops an IPv6 zone from a host[:port], as RFC 6874 asks of
// clients (and net/http does).
func removeZone(host string) string {
	if !strings.HasPrefix(host, "[") {
		return host
	}
	i := strings.LastIndex(host, "]")
	if i < 0 {
		return host
	}
	j := strings.LastIndex(host[:i], "%")
	if j < 0 {
		return host
	}
	return host[:j] + host[i:]
}

// rawResponseHeader rebuilds the response head from the parsed response,
// in HTTP/1.1 form for an HTTP/2 response (see Response.RawResponseHeader).
func rawResponseHeader(resp *http.Response) []byte {
	var b bytes.Buffer
	b.Grow(512)
	if resp.ProtoMajor == 2 {
		// net/http's Status for HTTP/2 is the code and its text in Go's
		// table; no reason phrase went over the wire.
		b.WriteString("HTTP/1.1 ")
		b.WriteString(strconv.Itoa(resp.StatusCode))
		b.WriteString(" ")
	} else {
		b.WriteString(resp.Proto)
		b.WriteString(" ")
		b.WriteString(resp.Status)
	}
	b.WriteString("\r\n")
	resp.Header.WriteSubset(&b, excludeResponse) //nolint:errcheck // bytes.Buffer does not fail
	b.WriteString("\r\n")
	return b.Bytes()
}

// protocols returns the WARC-Protocol values of the exchange resp ended,
// highest layer first. The names are those of the IIPC's WARC-Protocol
// extension (iipc/warc-specifications, specifications/warc-extensions/
// warc-protocol.md, adopted from issue 42): one value per protocol, the
// ALPN name "h2" for HTTP/2 over TLS.
func protocols(resp *http.Response) []string {
	p := make([]string, 0, 2)
	switch {
	case resp.ProtoMajor == 2:
		p = append(p, "h2")
	case resp.ProtoMajor == 1 && resp.ProtoMinor == 0:
		p = append(p, "http/1.0")
	default:
		p = append(p, "http/1.1") // what the fetcher sent; a server's "HTTP/1.2" is still read as 1.1
	}
	if resp.TLS != nil {
		if v := tlsProtocol(resp.TLS.Version); v != "" {
			p = append(p, v)
		}
	}
	return p
}

// tlsProtocol names a TLS version as WARC-Protocol does ("tls/1.3"), or
// "" for a version it has no name for.
func tlsProtocol(v uint16) string {
	switch v {
	case tls.VersionTLS13:
		return "tls/1.3"
	case tls.VersionTLS12:
		return "tls/1.2"
	case tls.VersionTLS11:
		return "tls/1.1"
	case tls.VersionTLS10:
		return "tls/1.0"
	}
	return ""
}
