package testweb

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"context"
	"encoding/binary"
	"fmt"
	"hash/adler32"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/andybalholm/brotli"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/unicode"
)

// hostileKind is how a hostile host misbehaves; zero for ordinary hosts.
// Each kind has a host of its own, named hostile-<name>.<domain>, that
// misbehaves at "/" (the robots kinds at /robots.txt) and answers 404
// elsewhere, except the redirect chains' own paths. The first five are
// Options.Hostile's; the rest come only when named in
// Options.HostileKinds. Their order is part of a web's layout (addresses,
// links): new kinds go at the end.
type hostileKind int

const (
	notHostile     hostileKind = iota
	hostileJunk                // malformed HTML: unclosed tags, junk bytes
	hostileLength              // Content-Length larger than the body sent
	hostileDrip                // one body byte per interval, bounded
	hostileEndless             // a body that goes on until the server's cap
	hostileGzip                // Content-Encoding: gzip over bytes that are not gzip

	hostileHeaderDrip       // the status line and headers one byte per interval
	hostileShortLength      // Content-Length smaller than the body sent on a kept-alive connection
	hostileHugeHeader       // one header value of hugeHeaderBytes
	hostileManyHeaders      // manyHeaders distinct headers
	hostileRedirectLoop     // / → /loop → / ...
	hostileRedirectChain    // / → /chain/1 → ... → /chain/chainHops, a page
	hostileRedirectFTP      // Location: ftp://
	hostileRedirectJS       // Location: javascript:
	hostileRedirectData     // Location: data:
	hostileRedirectLoopback // Location: http://127.0.0.1:1/
	hostileRedirectMetadata // Location: http://169.254.169.254/ (cloud metadata)
	hostileRedirectIPv6     // Location: http://[::1]/
	hostileRedirectHexIP    // Location: http://0x7f000001/ (127.0.0.1 to inet_aton)
	hostileBinary           // random bytes as text/html
	hostileBadUTF8          // charset=utf-8 over invalid UTF-8
	hostileShiftJIS         // charset=Shift_JIS
	hostileWindows1252      // charset=windows-1252, bytes 0x80-0x9F included
	hostileUTF16BOM         // UTF-16LE with a BOM, no charset parameter
	hostileUTF16NoBOM       // UTF-16BE without a BOM, charset=utf-16
	hostileDeepNesting      // deepNesting unclosed <div>s
	hostileRobotsHuge       // a robots.txt of robotsHugeBytes (rules first, then comments)
	hostileRobotsBOM        // a robots.txt starting with a UTF-8 BOM
	hostileRobotsNUL        // a robots.txt with NUL bytes in and between lines
	hostileRobotsGarbage    // a robots.txt of random bytes
	hostileRetrySeconds     // 429 with Retry-After in seconds
	hostileRetryDate        // 429 with Retry-After as an HTTP date
	hostile503Storm         // 503 to every page request
	hostileReset            // a TCP reset part way through the body
	hostileSilent           // reads the request and never answers
	hostileDeflateBomb      // Content-Encoding: deflate inflating to bombBytes
	hostileGzipBomb         // Content-Encoding: gzip inflating to bombBytes
	hostileCorruptBrotli    // Content-Encoding: br over bytes that are not brotli
	hostileBrotliBomb       // Content-Encoding: br inflating to bombBytes
	hostileBadLocation      // a 302 whose Location net/url cannot parse (badLocation)
	numHostileKinds
)

// hostileNames are the kinds' names, as Options.HostileKinds and
// HostInfo.Hostile spell them.
var hostileNames = [numHostileKinds]string{"",
	"junk", "lying-length", "slow-drip", "endless", "bad-gzip",
	"header-drip", "short-length", "huge-header", "many-headers",
	"redirect-loop", "redirect-chain", "redirect-ftp", "redirect-javascript", "redirect-data",
	"redirect-loopback", "redirect-metadata", "redirect-ipv6-loopback", "redirect-hex-ip",
	"binary-html", "bad-utf8", "shift-jis", "windows-1252", "utf16-bom", "utf16-no-bom", "deep-nesting",
	"robots-huge", "robots-bom", "robots-nul", "robots-garbage",
	"retry-after-seconds", "retry-after-date", "503-storm",
	"reset", "silent", "deflate-bomb", "gzip-bomb", "corrupt-brotli",
	"brotli-bomb", "bad-location",
}

// Sizes of the hostile bodies and heads.
const (
	hugeHeaderBytes = 1 << 20           // past the fetcher's default cap of 256 KiB
	manyHeaders     = 10_000            // about 190 KB of headers
	chainHops       = 30                // redirects before the chain's page
	deepNesting     = 100_000           // levels of unclosed markup
	robotsHugeBytes = 10<<20 + 64<<10   // past 10 MiB
	shortLength     = 64                // what short-length declares
	shortBody       = 4096              // what short-length sends
	resetAfter      = 16 << 10          // body bytes before the reset
	resetLength     = 1 << 20           // what reset declares
	silentMax       = 2 * time.Minute   // a silent host hangs up after this at most
	retryAfter      = 120 * time.Second // what the 429 hosts ask for, unless Options.HostileRetryAfter says otherwise
	badLocation     = "http://[::1"     // an IPv6 literal never closed: neither net/url nor WHATWG parses it
)

// AllHostileKinds lists every hostile kind's name, in order: the five of
// Options.Hostile first.
func AllHostileKinds() []string {
	return slices.Clone(hostileNames[1:])
}

// hostileKindNamed returns the kind called name, or notHostile.
func hostileKindNamed(name string) hostileKind {
	if i := slices.Index(hostileNames[:], name); i > 0 {
		return hostileKind(i)
	}
	return notHostile
}

// hostileKinds returns the kinds o turns on, in kind order.
func (o Options) hostileKinds() []hostileKind {
	var out []hostileKind
	for k := hostileJunk; k < numHostileKinds; k++ {
		if o.Hostile && k <= hostileGzip || slices.Contains(o.HostileKinds, hostileNames[k]) {
			out = append(out, k)
		}
	}
	return out
}

// isRobotsKind reports whether k misbehaves at /robots.txt (and serves an
// ordinary page at "/").
func (k hostileKind) isRobotsKind() bool {
	return k >= hostileRobotsHuge && k <= hostileRobotsGarbage
}

// redirectTargets are the Location values of the single-redirect kinds.
var redirectTargets = map[hostileKind]string{
	hostileRedirectFTP:      "ftp://ftp.trawl.test/pub/file.txt",
	hostileRedirectJS:       "javascript:alert(document.domain)",
	hostileRedirectData:     `data:text/html,<a href="http://169.254.169.254/">x</a>`,
	hostileRedirectLoopback: "http://127.0.0.1:1/",
	hostileRedirectMetadata: "http://169.254.169.254/latest/meta-data/",
	hostileRedirectIPv6:     "http://[::1]/",
	hostileRedirectHexIP:    "http://0x7f000001/",
}

// serveHostile answers every request to a hostile host.
func (s *Server) serveHostile(w http.ResponseWriter, r *http.Request, h *host, pq string) {
	k := h.hostile
	if pq == "/robots.txt" {
		if k.isRobotsKind() {
			s.serveHostileRobots(w, r, h)
			return
		}
		s.serveRobots(w, r, h)
		return
	}
	if k == hostileRedirectLoop && pq == "/loop" {
		redirect(w, r, s.web.urlOf(h, "/"))
		return
	}
	if k == hostileRedirectChain && strings.HasPrefix(pq, "/chain/") {
		s.serveChain(w, r, h, pq)
		return
	}
	res := h.byPQ[pq]
	if res == nil {
		http.Error(w, "testweb: not found: "+pq, http.StatusNotFound)
		return
	}
	switch {
	case k <= hostileGzip:
		s.serveHostileOriginal(w, r, res)
	case k <= hostileManyHeaders:
		s.serveHostileHead(w, r, k)
	case k <= hostileRedirectHexIP:
		s.serveHostileRedirect(w, r, h, k)
	case k <= hostileDeepNesting:
		serveHostileText(w, r, k, res.seed)
	case k.isRobotsKind():
		send(w, r, http.StatusOK, "text/html; charset=utf-8", []byte("<html><body><p>an ordinary page behind a hostile robots.txt</p></body></html>\n"))
	case k <= hostile503Storm:
		s.serveHostileStatus(w, r, k)
	case k == hostileBadLocation:
		redirect(w, r, badLocation)
	default:
		s.serveHostileConn(w, r, k)
	}
}

// serveHostileOriginal serves Options.Hostile's five kinds.
func (s *Server) serveHostileOriginal(w http.ResponseWriter, r *http.Request, res *resource) {
	switch res.host.hostile {
	case hostileJunk:
		send(w, r, http.StatusOK, "text/html", hostileJunkBody(res.seed))
	case hostileLength:
		body := []byte("<html><body><p>this body is much shorter than its Content-Length says</p>\n")
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Length", strconv.Itoa(100*len(body)))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body) // the server then cuts the connection
	case hostileDrip:
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(w)
		body := strings.Repeat("<p>drip</p>", s.opts.DripBytes/11+1)[:s.opts.DripBytes]
		for i := range len(body) {
			if _, err := io.WriteString(w, body[i:i+1]); err != nil {
				return
			}
			if rc.Flush() != nil || !s.sleep(r, s.opts.DripInterval) {
				return
			}
		}
	case hostileEndless:
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusOK)
		chunk := []byte(strings.Repeat("<p>and on and on</p>\n", 1560))
		for sent := int64(0); sent < s.opts.EndlessBytes; {
			n := min(int64(len(chunk)), s.opts.EndlessBytes-sent)
			if _, err := w.Write(chunk[:n]); err != nil {
				return
			}
			sent += n
			select {
			case <-s.done:
				return
			default:
			}
		}
	case hostileGzip:
		w.Header().Set("Content-Encoding", "gzip")
		send(w, r, http.StatusOK, "text/html", []byte("this is not gzip at all, whatever the header says\n"))
	}
}

// smallPage is the body of the hostile pages whose trouble is elsewhere.
var smallPage = []byte("<html><body><p>the trouble is not in this body</p></body></html>\n")

// serveHostileHead serves the kinds whose trouble is in the response head.
func (s *Server) serveHostileHead(w http.ResponseWriter, r *http.Request, k hostileKind) {
	switch k {
	case hostileHeaderDrip:
		c := hijack(w, http.StatusOK)
		if c == nil {
			return
		}
		defer c.Close()
		r = watchClose(r, c)
		head := "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nX-Drip: " +
			strings.Repeat(".", s.opts.DripBytes) + "\r\nContent-Length: " + strconv.Itoa(len(smallPage)) + "\r\n\r\n"
		for i := range s.opts.DripBytes {
			if _, err := io.WriteString(c, head[i:i+1]); err != nil || !s.sleep(r, s.opts.DripInterval) {
				return
			}
		}
		_, _ = io.WriteString(c, head[s.opts.DripBytes:])
		_, _ = c.Write(smallPage)
	case hostileShortLength:
		c := hijack(w, http.StatusOK)
		if c == nil {
			return
		}
		defer c.Close()
		body := bytes.Repeat([]byte("<p>more than was declared</p>\n"), shortBody/30+1)[:shortBody]
		head := fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n", shortLength)
		_, _ = c.Write(append([]byte(head), body...))
	case hostileHugeHeader:
		w.Header().Set("X-Huge", strings.Repeat("h", hugeHeaderBytes))
		send(w, r, http.StatusOK, "text/html", smallPage)
	case hostileManyHeaders:
		c := hijack(w, http.StatusOK)
		if c == nil {
			return
		}
		defer c.Close()
		if _, err := c.Write(manyHeadersHead()); err == nil && r.Method != http.MethodHead {
			_, _ = c.Write(smallPage)
		}
	}
}

var (
	manyHeadersOnce sync.Once
	manyHeadersRaw  []byte
)

// manyHeadersHead returns the head of many-headers' answer, made once: as
// net/http writes a head (sorted, canonical keys), manyHeaders headers
// cost the server tens of milliseconds an answer under the race
// detector, seconds on a loaded machine, and the crawler under test,
// sharing the process, its time-outs.
func manyHeadersHead() []byte {
	manyHeadersOnce.Do(func() {
		b := fmt.Appendf(nil, "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\nConnection: close\r\n", len(smallPage))
		for i := range manyHeaders {
			b = fmt.Appendf(b, "X-Many-%05d: v\r\n", i)
		}
		manyHeadersRaw = append(b, "\r\n"...)
	})
	return manyHeadersRaw
}

// hijack takes the connection over from net/http, recording status as the
// answer's; nil if it cannot. The caller closes the connection.
func hijack(w http.ResponseWriter, status int) net.Conn {
	if rec, ok := w.(*recorder); ok && rec.status == 0 {
		rec.status = status
	}
	c, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		http.Error(w, "testweb: cannot hijack", http.StatusInternalServerError)
		return nil
	}
	return c
}

// watchClose returns r with a context that ends when the client closes c,
// a hijacked connection: net/http no longer watches it, and a write to a
// connection the client closed may still succeed once, so without this the
// handler (and the request's span in the log) would outlive the client's
// request by a drip interval or more, and a crawler's next request to the
// host, sent after its gap, would look like a second one in flight. The
// client sends nothing more on a connection whose answer never ended: a
// read returns only when it is closed (or the handler closes it).
func watchClose(r *http.Request, c net.Conn) *http.Request {
	ctx, cancel := context.WithCancel(r.Context())
	go func() {
		defer cancel()
		var b [1]byte
		_, _ = c.Read(b[:])
	}()
	return r.WithContext(ctx)
}

// redirect answers 302 to loc.
func redirect(w http.ResponseWriter, r *http.Request, loc string) {
	w.Header().Set("Location", loc)
	send(w, r, http.StatusFound, "text/html; charset=utf-8", []byte("<html><body>moved</body></html>\n"))
}

func (s *Server) serveHostileRedirect(w http.ResponseWriter, r *http.Request, h *host, k hostileKind) {
	switch k {
	case hostileRedirectLoop:
		redirect(w, r, s.web.urlOf(h, "/loop"))
	case hostileRedirectChain:
		redirect(w, r, s.web.urlOf(h, "/chain/1"))
	default:
		redirect(w, r, redirectTargets[k])
	}
}

// serveChain serves /chain/n: a redirect to /chain/n+1, and a page at
// /chain/chainHops.
func (s *Server) serveChain(w http.ResponseWriter, r *http.Request, h *host, pq string) {
	n, err := strconv.Atoi(strings.TrimPrefix(pq, "/chain/"))
	switch {
	case err != nil || n < 1 || n > chainHops || pq != "/chain/"+strconv.Itoa(n):
		http.Error(w, "testweb: not found: "+pq, http.StatusNotFound)
	case n == chainHops:
		send(w, r, http.StatusOK, "text/html; charset=utf-8", []byte("<html><body><p>the end of the chain</p></body></html>\n"))
	default:
		redirect(w, r, s.web.urlOf(h, "/chain/"+strconv.Itoa(n+1)))
	}
}

// serveHostileText serves the kinds whose trouble is in the body's bytes.
func serveHostileText(w http.ResponseWriter, r *http.Request, k hostileKind, seed uint64) {
	const text = "<html><head><title>%s</title></head><body><p>%s</p><p>%s</p></body></html>\n"
	switch k {
	case hostileBinary:
		send(w, r, http.StatusOK, "text/html", randomBytes(seed, 64<<10))
	case hostileBadUTF8:
		bad := "caf\xc3 \xff\xfe over\xc0\xaflong \xed\xa0\x80surrogate \xf4\x90\x80\x80 past U+10FFFF "
		body := fmt.Sprintf(text, "bad \xe2\x82", strings.Repeat(bad, 200), "end")
		send(w, r, http.StatusOK, "text/html; charset=utf-8", []byte(body))
	case hostileShiftJIS:
		body := fmt.Sprintf(text, "日本語のページ", strings.Repeat("これはシフトJISで書かれた文書です。", 50), "終わり")
		send(w, r, http.StatusOK, "text/html; charset=Shift_JIS", encode(japanese.ShiftJIS, body))
	case hostileWindows1252:
		body := fmt.Sprintf(text, "“quoted” – café", strings.Repeat("Price: 5 € — “smart” ‘quotes’ … ", 50), "Œuvre ™")
		send(w, r, http.StatusOK, "text/html; charset=windows-1252", encode(charmap.Windows1252, body))
	case hostileUTF16BOM:
		body := fmt.Sprintf(text, "utf-16 with a BOM", strings.Repeat("sixteen bits a unit — ünïcödé ", 50), "end")
		send(w, r, http.StatusOK, "text/html", encode(unicode.UTF16(unicode.LittleEndian, unicode.UseBOM), body))
	case hostileUTF16NoBOM:
		body := fmt.Sprintf(text, "utf-16 without a BOM", strings.Repeat("big-endian, no mark — ünïcödé ", 50), "end")
		send(w, r, http.StatusOK, "text/html; charset=utf-16", encode(unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM), body))
	case hostileDeepNesting:
		body := "<html><body>" + strings.Repeat("<div>", deepNesting) + `<a href="/deep.html">deep</a>`
		send(w, r, http.StatusOK, "text/html; charset=utf-8", []byte(body))
	}
}

// encode returns s in e; s is all encodable by construction.
func encode(e encoding.Encoding, s string) []byte {
	b, err := e.NewEncoder().Bytes([]byte(s))
	if err != nil {
		panic("testweb: encode hostile page: " + err.Error())
	}
	return b
}

// randomBytes returns n bytes drawn from seed.
func randomBytes(seed uint64, n int) []byte {
	rng := rand.New(rand.NewPCG(seed, 12))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// serveHostileRobots serves the robots kinds' /robots.txt. Each allows
// every path to a parser that reads it at all, so the ground truth
// (nothing disallowed) holds however a crawler copes.
func (s *Server) serveHostileRobots(w http.ResponseWriter, r *http.Request, h *host) {
	const rules = "User-agent: *\nAllow: /\n"
	switch h.hostile {
	case hostileRobotsHuge:
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Content-Length", strconv.Itoa(robotsHugeBytes))
		w.WriteHeader(http.StatusOK)
		if r.Method == http.MethodHead {
			return
		}
		line := "# " + strings.Repeat("padding ", 127) + "\n" // 1 KiB
		chunk := []byte(strings.Repeat(line, 64))
		if _, err := io.WriteString(w, rules); err != nil {
			return
		}
		for left := robotsHugeBytes - len(rules); left > 0; left -= len(chunk) {
			if _, err := w.Write(chunk[:min(left, len(chunk))]); err != nil {
				return
			}
		}
	case hostileRobotsBOM:
		send(w, r, http.StatusOK, "text/plain; charset=utf-8", []byte("\ufeff"+rules))
	case hostileRobotsNUL:
		send(w, r, http.StatusOK, "text/plain", []byte("\x00User-agent: *\x00\nAllow: /\x00\n\x00\x00\x00\n# nul\x00nul\n"))
	case hostileRobotsGarbage:
		send(w, r, http.StatusOK, "text/plain", randomBytes(uint64(h.idx), 4<<10))
	}
}

// serveHostileStatus serves the 429 and 503 kinds.
func (s *Server) serveHostileStatus(w http.ResponseWriter, r *http.Request, k hostileKind) {
	switch k {
	case hostileRetrySeconds:
		w.Header().Set("Retry-After", strconv.Itoa(int(s.web.opts.HostileRetryAfter/time.Second)))
		http.Error(w, "slow down", http.StatusTooManyRequests)
	case hostileRetryDate:
		w.Header().Set("Retry-After", s.opts.Now().Add(s.web.opts.HostileRetryAfter).UTC().Format(http.TimeFormat))
		http.Error(w, "slow down", http.StatusTooManyRequests)
	case hostile503Storm:
		http.Error(w, "overloaded", http.StatusServiceUnavailable)
	}
}

// serveHostileConn serves the kinds whose trouble is in the connection or
// the content coding.
func (s *Server) serveHostileConn(w http.ResponseWriter, r *http.Request, k hostileKind) {
	switch k {
	case hostileReset:
		c := hijack(w, http.StatusOK)
		if c == nil {
			return
		}
		head := fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n", resetLength)
		_, _ = c.Write(append([]byte(head), bytes.Repeat([]byte("<p>cut</p>\n"), resetAfter/11)...))
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0) // Close sends RST, not FIN
		}
		_ = c.Close()
	case hostileSilent:
		s.serveSilent(w)
	case hostileDeflateBomb:
		d, _ := bombs()
		w.Header().Set("Content-Encoding", "deflate")
		send(w, r, http.StatusOK, "text/html", d)
	case hostileGzipBomb:
		_, gz := bombs()
		w.Header().Set("Content-Encoding", "gzip")
		send(w, r, http.StatusOK, "text/html", gz)
	case hostileCorruptBrotli:
		w.Header().Set("Content-Encoding", "br")
		send(w, r, http.StatusOK, "text/html", []byte("this is not brotli at all, whatever the header says\n"))
	case hostileBrotliBomb:
		w.Header().Set("Content-Encoding", "br")
		send(w, r, http.StatusOK, "text/html", brotliBomb())
	}
}

// serveSilent reads the request's connection and never answers, until
// the client hangs up, the server closes or silentMax passes.
func (s *Server) serveSilent(w http.ResponseWriter) {
	c := hijack(w, 0)
	if c == nil {
		return
	}
	read := make(chan struct{})
	go func() {
		defer close(read)
		_, _ = io.Copy(io.Discard, c) // returns when the client closes or c is closed
	}()
	t := time.NewTimer(silentMax)
	defer t.Stop()
	select {
	case <-read:
	case <-s.done:
	case <-t.C:
	}
	_ = c.Close()
	<-read
}

// makeHostileAnswers makes the costly answers web's hostile hosts give
// (the compression bombs, many-headers' head) before it serves anything:
// made by the first request instead, they held its answer for seconds on
// a loaded machine under the race detector (two level-9 compressions of a
// MiB), long enough for a crawler's time-out to fire and its retry to
// come while the server, not yet answering the first, counted both in
// flight.
func makeHostileAnswers(web *Web) {
	for _, h := range web.hosts {
		switch h.hostile {
		case hostileDeflateBomb, hostileGzipBomb:
			bombs()
		case hostileBrotliBomb:
			brotliBomb()
		case hostileManyHeaders:
			manyHeadersHead()
		}
	}
}

// The bombs repeat one compressed chunk rather than compress bombBytes,
// which took seconds under the race detector: long enough for a
// fetcher's first-byte time-out to fire on the first request.
var (
	bombsOnce   sync.Once
	deflateBomb []byte // zlib (RFC 1950) inflating to past bombBytes
	gzipBomb    []byte // gzip members (RFC 1952) inflating to past bombBytes
)

// bombs returns the deflate and gzip bombs, made once.
func bombs() (deflate, gz []byte) {
	bombsOnce.Do(func() {
		chunk := bytes.Repeat([]byte("<!-- bomb -->\n"), (1<<20)/14)
		reps := bombBytes/len(chunk) + 1
		deflateBomb = zlibRepeat(chunk, reps)
		gzipBomb = gzipRepeat(chunk, reps)
	})
	return deflateBomb, gzipBomb
}

var (
	brotliBombOnce sync.Once
	brotliBombData []byte // a brotli stream (RFC 7932) inflating to past bombBytes
)

// brotliBomb returns the brotli bomb, made once. Brotli streams do not
// concatenate as gzip members do, and streaming bombBytes of zeros
// through the encoder took over a second under the race detector. So a
// MiB of zeros is written and flushed (a non-final metablock, ending on a
// byte) a few times: once the encoder's state is steady, each flush emits
// the same bytes, and those repeat until bombBytes pass; Close's final
// block ends the stream. About 20 KB; TestBombsInflate decodes it whole.
func brotliBomb() []byte {
	brotliBombOnce.Do(func() {
		var b bytes.Buffer
		bw := brotli.NewWriterOptions(&b, brotli.WriterOptions{Quality: 1, LGWin: 16})
		zero := make([]byte, 1<<20)
		var out, last []byte
		for n := 0; n <= bombBytes; n += len(zero) {
			if last != nil {
				out = append(out, last...) // steady: repeat, not recompute
				continue
			}
			_, _ = bw.Write(zero) // a bytes.Buffer does not fail
			_ = bw.Flush()
			seg := bytes.Clone(b.Bytes())
			b.Reset()
			if n >= 2*len(zero) && bytes.Equal(seg, out[len(out)-len(seg):]) {
				last = seg
			}
			out = append(out, seg...)
		}
		_ = bw.Close() // its final block refers to nothing before it
		brotliBombData = append(out, b.Bytes()...)
	})
	return brotliBombData
}

// zlibRepeat returns a zlib stream of chunk repeated reps times: the
// chunk's deflate blocks (RFC 1951), sync-flushed so that they are not
// final and end on a byte, reps times over (each block refers only to
// bytes of its own chunk), then a final empty block and the Adler-32 of
// the whole, combined from the chunk's.
func zlibRepeat(chunk []byte, reps int) []byte {
	var blocks bytes.Buffer
	fw, _ := flate.NewWriter(&blocks, flate.BestCompression) // the level is valid
	_, _ = fw.Write(chunk)
	_ = fw.Flush()
	out := []byte{0x78, 0xda} // CM 8, 32 KiB window; 0x78da is a multiple of 31
	out = append(out, bytes.Repeat(blocks.Bytes(), reps)...)
	out = append(out, 0x03, 0x00) // BFINAL 1, BTYPE 01 (fixed), end of block
	const mod = 65521
	one := adler32.Checksum(chunk)
	c1, c2 := uint64(one&0xffff), uint64(one>>16)
	s1, s2 := uint64(1), uint64(0)
	for range reps { // Adler-32 of A then B: s1 = a1+b1-1, s2 = a2+b2+len(B)*(a1-1)
		s2 = (s2 + c2 + uint64(len(chunk))%mod*((s1+mod-1)%mod)) % mod
		s1 = (s1 + c1 + mod - 1) % mod
	}
	return binary.BigEndian.AppendUint32(out, uint32(s2<<16|s1))
}

// gzipRepeat returns reps gzip members, each chunk compressed: readers of
// gzip see concatenated members as one stream (RFC 1952 2.2).
func gzipRepeat(chunk []byte, reps int) []byte {
	var member bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&member, gzip.BestCompression) // the level is valid
	_, _ = zw.Write(chunk)
	_ = zw.Close()
	return bytes.Repeat(member.Bytes(), reps)
}
