package testweb

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ServeOptions tune a Server. The zero value of every field means its
// default.
type ServeOptions struct {
	// MaxLog bounds the request log; requests past it are counted in
	// Dropped but not recorded. Zero means 10,000,000 entries (about 1.5 GB
	// at the limit; a crawl test stays far below).
	MaxLog int
	// Now is the clock the log's times come from, and a changing web's
	// (Options.Changing) pages' versions unless ChangeClock is set.
	// Nil means time.Now.
	Now func() time.Time
	// ChangeClock, if set, is the clock of a changing web's pages'
	// versions alone: FastClock makes one that runs faster than real
	// time, so that pages change within a test while the log (and so
	// every politeness check) keeps real time. Nil means Now.
	ChangeClock func() time.Time
	// DripInterval is the pause between bytes of the slow-drip host. Zero
	// means 50 ms.
	DripInterval time.Duration
	// DripBytes is how many bytes the slow-drip host sends. Zero means 60
	// (three seconds at the default interval).
	DripBytes int
	// EndlessBytes is where the endless host's body stops. Zero means 20 MiB.
	EndlessBytes int64
	// PortAttempts is how many ports Serve tries before giving up when the
	// web has no port yet. Zero means 50.
	PortAttempts int
	// Gzip sends the regular HTML pages of ordinary hosts gzipped
	// (Content-Encoding: gzip) to a request that accepts gzip, as most
	// servers of the web do. Off, every body goes as it is.
	Gzip bool
	// Chunked sends the regular HTML pages of ordinary hosts without a
	// Content-Length, in HTTP/1.1 chunks, as a server that generates or
	// compresses a page on the fly does. Off, each carries its length.
	Chunked bool
}

func (o ServeOptions) withDefaults() ServeOptions {
	if o.MaxLog == 0 {
		o.MaxLog = 10_000_000
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.DripInterval == 0 {
		o.DripInterval = 50 * time.Millisecond
	}
	if o.DripBytes == 0 {
		o.DripBytes = 60
	}
	if o.EndlessBytes == 0 {
		o.EndlessBytes = 20 << 20
	}
	if o.PortAttempts == 0 {
		o.PortAttempts = 50
	}
	return o
}

// Validate reports every bad field of o by name.
func (o ServeOptions) Validate() error {
	var errs []error
	if o.MaxLog < 0 {
		errs = append(errs, fmt.Errorf("testweb: serve options: MaxLog: %d < 0", o.MaxLog))
	}
	if o.DripInterval < 0 {
		errs = append(errs, fmt.Errorf("testweb: serve options: DripInterval: %v < 0", o.DripInterval))
	}
	if o.DripBytes < 0 {
		errs = append(errs, fmt.Errorf("testweb: serve options: DripBytes: %d < 0", o.DripBytes))
	}
	if o.EndlessBytes < 0 {
		errs = append(errs, fmt.Errorf("testweb: serve options: EndlessBytes: %d < 0", o.EndlessBytes))
	}
	if o.PortAttempts < 0 {
		errs = append(errs, fmt.Errorf("testweb: serve options: PortAttempts: %d < 0", o.PortAttempts))
	}
	return errors.Join(errs...)
}

// Request is one request the web answered, as the server saw it.
type Request struct {
	Host      string     // from the Host header, lower case, port stripped
	IP        netip.Addr // the local address the request arrived on
	Method    string
	Path      string    // the request target as received: escaped path + "?" + query
	Start     time.Time // when the handler started
	End       time.Time // when the handler returned
	UserAgent string
	Status    int
	Bytes     int64 // body bytes written
	// Conditional reports a request with If-None-Match or
	// If-Modified-Since.
	Conditional bool
}

// Server serves a Web: every host on its own loopback address (hosts of a
// shared-IP group on one) and one common port, chosen by virtual host from
// the Host header. It records every request in arrival order.
type Server struct {
	web  *Web
	opts ServeOptions
	port int
	srv  *http.Server
	lns  []net.Listener
	done chan struct{}
	serv sync.WaitGroup // Serve goroutines

	mu        sync.Mutex
	idle      *sync.Cond // signalled when active drops to zero
	active    int        // handlers running
	conns     int        // connections accepted and not yet closed
	closed    bool
	log       []Request
	dropped   int64
	robotHits map[*host]int
	sessions  uint64 // session IDs handed out
	closeOnce sync.Once
	chaos     chaosServed // what a chaos web's hosts answered so far (chaosserve.go)
}

// newSession returns a session ID no earlier response carried: 16 hex
// digits from a counter, scrambled so that consecutive IDs look unrelated.
func (s *Server) newSession() string {
	s.mu.Lock()
	s.sessions++
	n := s.sessions
	s.mu.Unlock()
	n *= 0x9e3779b97f4a7c15 // odd: a bijection on uint64
	n ^= n >> 29
	return fmt.Sprintf("%016X", n)
}

// Serve starts serving web on loopback. If the web has no port yet, Serve
// picks one that is free on every host address and sets it on the web;
// otherwise it binds the web's port. Close the Server when done.
func Serve(web *Web, opts ServeOptions) (*Server, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	var ips []netip.Addr
	for _, h := range web.hosts {
		if !slices.Contains(ips, h.ip) {
			ips = append(ips, h.ip)
		}
	}
	makeHostileAnswers(web)
	s := &Server{web: web, opts: opts, done: make(chan struct{}), robotHits: make(map[*host]int)}
	s.idle = sync.NewCond(&s.mu)
	attempts := opts.PortAttempts
	if web.Port() != 0 {
		attempts = 1
	}
	var err error
	for range attempts {
		if s.lns, err = listenAll(ips, web.Port()); err == nil {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("testweb: serve %d hosts: %w", len(web.hosts), err)
	}
	s.port = s.lns[0].Addr().(*net.TCPAddr).Port
	web.wrapTLS(s.lns)
	web.port.Store(int64(s.port))
	s.srv = &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0),
		ConnState:         s.connState,
	}
	for _, ln := range s.lns {
		s.serv.Add(1)
		go func() {
			defer s.serv.Done()
			_ = s.srv.Serve(ln) // returns http.ErrServerClosed on Close
		}()
	}
	return s, nil
}

// listenAll binds every address on one port: port, or if zero the port the
// system gives the first address.
func listenAll(ips []netip.Addr, port int) ([]net.Listener, error) {
	var lns []net.Listener
	for _, ip := range ips {
		ln, err := net.Listen("tcp", netip.AddrPortFrom(ip, uint16(port)).String())
		if err != nil {
			for _, l := range lns {
				l.Close()
			}
			return nil, fmt.Errorf("listen %s port %d: %w", ip, port, err)
		}
		if port == 0 {
			port = ln.Addr().(*net.TCPAddr).Port
		}
		lns = append(lns, ln)
	}
	return lns, nil
}

// Port is the TCP port every host listens on.
func (s *Server) Port() int { return s.port }

// Web is the web being served.
func (s *Server) Web() *Web { return s.web }

// Seeds returns the web's entry URLs (see Web.Seeds).
func (s *Server) Seeds() []string { return s.web.Seeds() }

// Resolver maps every host name (lower case) to its loopback address, for a
// fetcher's static hosts option.
func (s *Server) Resolver() map[string][]netip.Addr {
	out := make(map[string][]netip.Addr, len(s.web.hosts))
	for _, h := range s.web.hosts {
		out[h.name] = []netip.Addr{h.ip}
	}
	return out
}

// Log returns a copy of the request log in arrival order. Requests still
// being answered have a zero End.
func (s *Server) Log() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.log)
}

// OpenConns is the number of client connections the server has accepted
// and not yet closed. Once a client process has died, its connections
// close as the server reads their end; until then a request it sent may
// still be waiting to be read, and to enter the log.
func (s *Server) OpenConns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conns
}

// Settle waits until the web has been quiet for quiet: no handler
// running and no connection open. A test that stops a crawler and starts
// another on the same web calls it between the two: a request the first
// wrote, or cut, is still being read or answered for a while on a loaded
// machine, and would otherwise be logged in flight beside the second's.
// It returns an error saying what is still busy if the web is not quiet
// within within.
func (s *Server) Settle(quiet, within time.Duration) error {
	deadline := time.Now().Add(within)
	var quietSince time.Time
	for {
		s.mu.Lock()
		busy := 0
		for _, q := range s.log {
			if q.End.IsZero() {
				busy++
			}
		}
		conns := s.conns
		s.mu.Unlock()
		switch {
		case busy > 0 || conns > 0:
			quietSince = time.Time{}
		case quietSince.IsZero():
			quietSince = time.Now()
		case time.Since(quietSince) >= quiet:
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("testweb: still answering %d requests, %d connections open, after %v", busy, conns, within)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (s *Server) connState(_ net.Conn, st http.ConnState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch st {
	case http.StateNew:
		s.conns++
	case http.StateClosed, http.StateHijacked:
		s.conns--
	}
}

// Dropped is the number of requests not logged because the log was full.
func (s *Server) Dropped() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dropped
}

// Close stops every listener, cuts open connections, interrupts latency
// sleeps and slow bodies, and waits for every handler to return. It is safe
// to call more than once.
func (s *Server) Close() error {
	var err error
	s.closeOnce.Do(func() {
		close(s.done)
		err = s.srv.Close()
		s.serv.Wait()
		s.mu.Lock()
		s.closed = true
		for s.active > 0 {
			s.idle.Wait()
		}
		s.mu.Unlock()
	})
	return err
}

// recorder counts what a handler writes.
type recorder struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(p)
	r.bytes += int64(n)
	return n, err
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// sleep waits d or until the server closes or the request ends; it reports
// whether the full time passed.
func (s *Server) sleep(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.done:
	case <-r.Context().Done():
	}
	return false
}

// changeNow is the time of a changing web's versions.
func (s *Server) changeNow() time.Time {
	if s.opts.ChangeClock != nil {
		return s.opts.ChangeClock()
	}
	return s.opts.Now()
}

// ServeHTTP answers one request and records it.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := s.opts.Now()
	var ip netip.Addr
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if ap, err := netip.ParseAddrPort(a.String()); err == nil {
			ip = ap.Addr()
		}
	}
	name, _ := splitHostPort(r.Host)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		http.Error(w, "closing", http.StatusServiceUnavailable)
		return
	}
	idx := -1
	if len(s.log) < s.opts.MaxLog {
		idx = len(s.log)
		s.log = append(s.log, Request{Host: name, IP: ip, Method: r.Method, Path: r.RequestURI,
			Start: start, UserAgent: r.UserAgent(), Conditional: r.Header.Get("If-None-Match") != "" || r.Header.Get("If-Modified-Since") != ""})
	} else {
		s.dropped++
	}
	s.active++
	s.mu.Unlock()

	rec := &recorder{ResponseWriter: w}
	defer func() {
		end := s.opts.Now()
		s.mu.Lock()
		if idx >= 0 {
			e := &s.log[idx]
			e.End, e.Status, e.Bytes = end, rec.status, rec.bytes
			if e.Status == 0 {
				e.Status = http.StatusOK
			}
		}
		s.active--
		if s.active == 0 {
			s.idle.Broadcast()
		}
		s.mu.Unlock()
	}()
	s.answer(rec, r, name)
}

func (s *Server) answer(w http.ResponseWriter, r *http.Request, name string) {
	h := s.web.byName[name]
	if h == nil {
		http.Error(w, "testweb: no such host: "+name, http.StatusMisdirectedRequest)
		return
	}
	if !s.sleep(r, h.latency) {
		return
	}
	uri := r.RequestURI
	if !strings.HasPrefix(uri, "/") { // absolute-form
		if u, err := url.Parse(uri); err == nil {
			uri = u.RequestURI()
		}
	}
	pq := canonRequestURI(uri)
	if h.chaos != nil {
		s.serveChaos(w, r, h, pq)
		return
	}
	if h.hostile != notHostile {
		s.serveHostile(w, r, h, pq)
		return
	}
	switch {
	case pq == "/robots.txt":
		s.serveRobots(w, r, h)
		return
	case pq == "/robots-real.txt" && h.robotsReal:
		send(w, r, http.StatusOK, "text/plain; charset=utf-8", s.web.robotsBody(h))
		return
	case h.trap && isTrapPath(pq):
		var y, m int
		var rest string
		if n, _ := fmt.Sscanf(pq, "/calendar/%4d/%2d%s", &y, &m, &rest); n == 2 && y > 0 && m >= 1 && m <= 12 &&
			pq == fmt.Sprintf("/calendar/%04d/%02d", y, m) {
			send(w, r, http.StatusOK, "text/html; charset=utf-8", s.web.renderCalendar(h, y, m))
			return
		}
	case h.paged && pagedTrapKind(pq) != "":
		send(w, r, http.StatusOK, "text/html; charset=utf-8", s.web.renderPagedTrap(h, pq))
		return
	case h.grow && strings.HasPrefix(pq, "/grow/"):
		if !strings.Contains(pq, "?") && strings.HasSuffix(pq, "/") {
			send(w, r, http.StatusOK, "text/html; charset=utf-8", s.web.renderGrow(h, pq))
			return
		}
	case h.shop && strings.HasPrefix(pq, "/shop/?"):
		_, raw, _ := strings.Cut(uri, "?")
		if q, ok := parseShopQuery(raw); ok {
			send(w, r, http.StatusOK, "text/html; charset=utf-8", s.web.renderShop(h, q))
			return
		}
	}
	if h.sitemap != noSitemap && s.serveSitemap(w, r, h, pq) {
		return
	}
	res := h.byPQ[pq]
	if res == nil && h.session != noSession {
		res = h.byPQ[stripSession(pq)]
	}
	if res == nil {
		if h.soft404 {
			send(w, r, http.StatusOK, "text/html; charset=utf-8", s.web.renderSoft404(h, pq))
			return
		}
		http.Error(w, "testweb: not found: "+pq, http.StatusNotFound)
		return
	}
	switch res.kind {
	case kindHTML:
		sid := ""
		if h.session != noSession {
			sid = s.newSession()
		}
		if res.change != nil {
			s.serveChanging(w, r, h, res, sid, s.changeNow())
			return
		}
		s.sendPage(w, r, res.contentType(), s.web.renderPage(res, sid))
	case kindPDF:
		send(w, r, http.StatusOK, res.contentType(), renderPDF(res.seed))
	case kindPNG:
		send(w, r, http.StatusOK, res.contentType(), renderPNG(res.seed))
	case kindRedirect:
		w.Header().Set("Location", s.web.withPort(res.loc))
		send(w, r, res.status, "text/html; charset=utf-8", []byte(redirectBody))
	default:
		http.Error(w, "testweb: not found: "+pq, http.StatusNotFound)
	}
}

// redirectBody is the body of every redirect of an ordinary host.
const redirectBody = "<html><body>moved</body></html>\n"

// sendPage writes a regular HTML page of an ordinary host as the wire
// options say: gzipped if Gzip is set and r accepts gzip, in chunks
// without a Content-Length if Chunked is set.
func (s *Server) sendPage(w http.ResponseWriter, r *http.Request, ctype string, body []byte) {
	if !s.opts.Gzip && !s.opts.Chunked {
		send(w, r, http.StatusOK, ctype, body)
		return
	}
	if s.opts.Gzip && acceptsGzip(r) {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.DefaultCompression)
		zw.Write(body)
		zw.Close()
		body = buf.Bytes()
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Vary", "Accept-Encoding")
	}
	w.Header().Set("Content-Type", ctype)
	if !s.opts.Chunked {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	}
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	if !s.opts.Chunked {
		_, _ = w.Write(body)
		return
	}
	// Two writes and a flush between them: the server sends the head at
	// the flush, without a length, so the body goes in chunks.
	half := len(body) / 2
	_, _ = w.Write(body[:half])
	_ = http.NewResponseController(w).Flush()
	_, _ = w.Write(body[half:])
}

// acceptsGzip reports whether r's Accept-Encoding lists gzip with a
// quality above zero.
func acceptsGzip(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept-Encoding") {
		for _, e := range strings.Split(v, ",") {
			name, params, _ := strings.Cut(strings.TrimSpace(e), ";")
			if !strings.EqualFold(strings.TrimSpace(name), "gzip") {
				continue
			}
			q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
			return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
		}
	}
	return false
}

// send writes a complete response with an exact Content-Length.
func send(w http.ResponseWriter, r *http.Request, status int, ctype string, body []byte) {
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body) // a client that went away is not the server's problem
	}
}

func (s *Server) serveRobots(w http.ResponseWriter, r *http.Request, h *host) {
	switch h.robots {
	case robotsNotFound:
		http.Error(w, "no robots.txt", http.StatusNotFound)
	case robotsServerError:
		http.Error(w, "robots.txt is broken", http.StatusInternalServerError)
	case robotsRedirect:
		w.Header().Set("Location", "/robots-real.txt")
		send(w, r, http.StatusMovedPermanently, "text/plain; charset=utf-8", []byte("moved\n"))
	case robotsTooMany:
		s.mu.Lock()
		s.robotHits[h]++
		n := s.robotHits[h]
		s.mu.Unlock()
		if n <= robotsTooManyCount {
			w.Header().Set("Retry-After", "1")
			http.Error(w, "slow down", http.StatusTooManyRequests)
			return
		}
		send(w, r, http.StatusOK, "text/plain; charset=utf-8", s.web.robotsBody(h))
	default:
		send(w, r, http.StatusOK, "text/plain; charset=utf-8", s.web.robotsBody(h))
	}
}
