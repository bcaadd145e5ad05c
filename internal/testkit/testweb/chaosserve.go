package testweb

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/unicode"
)

// chaosServed is what a Server's chaos hosts answered so far: requests per
// URL (for the behaviours that answer once one way, then another) and the
// waits they asked for.
type chaosServed struct {
	hits  map[string]int
	waits []ChaosWait
}

// ChaosWait is a wait a chaos host asked for with Retry-After: no request
// to the host (HostWide) or to the URL may start before Until.
type ChaosWait struct {
	Host, URL string
	At        time.Time // when the answer was sent
	Until     time.Time // what its Retry-After says, as the crawler reads it
	HostWide  bool      // a robots.txt answer or a 429: the whole host waits
	Behaviour string    // the behaviour that drew it
}

// ChaosWaits returns the waits the chaos hosts asked for so far.
func (s *Server) ChaosWaits() []ChaosWait {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]ChaosWait(nil), s.chaos.waits...)
}

// chaosHit counts a request for pq on h and returns its number (1 for the first).
func (s *Server) chaosHit(h *host, pq string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.chaos.hits == nil {
		s.chaos.hits = make(map[string]int)
	}
	s.chaos.hits[h.name+pq]++
	return s.chaos.hits[h.name+pq]
}

// retryAfter writes a Retry-After of d (seconds, or an HTTP date) and
// records the wait.
func (s *Server) retryAfter(w http.ResponseWriter, h *host, pq string, d time.Duration, date, hostWide bool, why string) {
	now := s.opts.Now()
	until := now.Add(d)
	if date {
		until = until.Truncate(time.Second) // HTTP dates count whole seconds
		w.Header().Set("Retry-After", until.UTC().Format(http.TimeFormat))
	} else {
		w.Header().Set("Retry-After", strconv.Itoa(int(d/time.Second)))
	}
	s.mu.Lock()
	s.chaos.waits = append(s.chaos.waits, ChaosWait{Host: h.name, URL: s.web.urlOf(h, pq), At: now, Until: until,
		HostWide: hostWide, Behaviour: why})
	s.mu.Unlock()
}

// chaosRules is a chaos host's robots.txt once it answers 200.
func (w *Web) chaosRules(h *host) []byte {
	var b strings.Builder
	b.WriteString("User-agent: *\nDisallow: /private/\n")
	if h.chaos.crawlDelay > 0 {
		fmt.Fprintf(&b, "Crawl-delay: %d\n", int(h.chaos.crawlDelay/time.Second))
	}
	if h.chaos.sitemap != nil {
		fmt.Fprintf(&b, "\nSitemap: %s\n", w.urlOf(h, "/sitemap.xml"))
	}
	return []byte(b.String())
}

func (s *Server) serveChaos(w http.ResponseWriter, r *http.Request, h *host, pq string) {
	c := h.chaos
	if pq == "/robots.txt" {
		s.serveChaosRobots(w, r, h)
		return
	}
	if pq == "/sitemap.xml" && c.sitemap != nil {
		var b strings.Builder
		b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n")
		for _, p := range c.sitemap {
			fmt.Fprintf(&b, "<url><loc>%s</loc><lastmod>2031-01-01</lastmod></url>\n", s.web.urlOf(h, p))
		}
		b.WriteString("</urlset>\n")
		send(w, r, http.StatusOK, "application/xml", []byte(b.String()))
		return
	}
	if h.trap && isTrapPath(pq) {
		var y, m int
		if n, _ := fmt.Sscanf(pq, "/calendar/%4d/%2d", &y, &m); n == 2 && y > 0 && m >= 1 && m <= 12 &&
			pq == fmt.Sprintf("/calendar/%04d/%02d", y, m) {
			send(w, r, http.StatusOK, "text/html; charset=utf-8", s.web.renderCalendar(h, y, m))
			return
		}
	}
	p := c.pages[pq]
	if p == nil || p.does == chaosPageMissing {
		http.Error(w, "testweb: not found: "+pq, http.StatusNotFound)
		return
	}
	if p.to != nil {
		loc := p.to.pq
		if p.to.host != h {
			loc = s.web.urlOf(p.to.host, p.to.pq)
		}
		w.Header().Set("Location", loc)
		send(w, r, http.StatusMovedPermanently, "text/html; charset=utf-8", []byte("<html><body>moved</body></html>\n"))
		return
	}
	const html = "text/html; charset=utf-8"
	switch p.does {
	case chaosPage429Once:
		if s.chaosHit(h, pq) == 1 {
			s.retryAfter(w, h, pq, p.wait, false, true, p.does)
			http.Error(w, "slow down", http.StatusTooManyRequests)
			return
		}
	case chaosPage503Hours:
		s.retryAfter(w, h, pq, p.wait, p.date, false, p.does)
		http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
		return
	case chaosPageTimeout:
		s.serveSilent(w)
		return
	case chaosPageReset:
		s.serveHostileConn(w, r, hostileReset)
		return
	case chaosPageDrip:
		w.Header().Set("Content-Type", html)
		w.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(w)
		body := "<html><body><p>" + strings.Repeat("drip ", 8) + "</p></body></html>\n"
		for i := range len(body) {
			if _, err := fmt.Fprint(w, body[i:i+1]); err != nil || rc.Flush() != nil || !s.sleep(r, 20*time.Millisecond) {
				return
			}
		}
		return
	case chaosPageHuge:
		n := s.web.chaos.opts.HugeBytes
		w.Header().Set("Content-Type", html)
		w.Header().Set("Content-Length", strconv.Itoa(n))
		w.WriteHeader(http.StatusOK)
		chunk := []byte(strings.Repeat("<p>a huge page goes on</p>\n", 1200))
		for left := n; left > 0; left -= len(chunk) {
			if _, err := w.Write(chunk[:min(left, len(chunk))]); err != nil {
				return
			}
		}
		return
	case chaosPageLying:
		body := s.web.renderChaos(p, 0)
		w.Header().Set("Content-Type", html)
		w.Header().Set("Content-Length", strconv.Itoa(10*len(body)))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body) // net/http then cuts the connection: less came than promised
		return
	case chaosPageChanging:
		send(w, r, http.StatusOK, html, s.web.renderChaos(p, s.chaosHit(h, pq)))
		return
	case chaosPageCharset:
		ctype, body := s.web.renderCharset(p)
		send(w, r, http.StatusOK, ctype, body)
		return
	}
	send(w, r, http.StatusOK, html, s.web.renderChaos(p, 0))
}

func (s *Server) serveChaosRobots(w http.ResponseWriter, r *http.Request, h *host) {
	c := h.chaos
	n := s.chaosHit(h, "/robots.txt")
	switch {
	case c.robots == chaosRobots404:
		http.Error(w, "no robots.txt", http.StatusNotFound)
	case c.robots == chaosRobots500Forever:
		http.Error(w, "robots.txt is broken", http.StatusInternalServerError)
	case c.robots == chaosRobotsHours:
		s.retryAfter(w, h, "/robots.txt", c.robotsWait, c.robotsDate, true, c.robots)
		http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
	case n == 1 && c.robots == chaosRobots503Once:
		http.Error(w, "overloaded", http.StatusServiceUnavailable)
	case n == 1 && c.robots == chaosRobots503Retry:
		s.retryAfter(w, h, "/robots.txt", c.robotsWait, false, true, c.robots)
		http.Error(w, "overloaded", http.StatusServiceUnavailable)
	case n == 1 && c.robots == chaosRobots429Date:
		s.retryAfter(w, h, "/robots.txt", c.robotsWait, true, true, c.robots)
		http.Error(w, "slow down", http.StatusTooManyRequests)
	case n == 1 && c.robots == chaosRobotsTimeout:
		s.serveSilent(w)
	default:
		send(w, r, http.StatusOK, "text/plain; charset=utf-8", s.web.chaosRules(h))
	}
}

// chaosText is a page's text: words drawn from its seed, a near copy's
// with three of them changed, and a changing page's edition.
func chaosText(p *chaosPage, version int) string {
	rng := rand.New(rand.NewPCG(p.seed, 3))
	ws := sentenceWords(rng, p.words)
	if p.does == chaosPageNearDup {
		for _, i := range []int{3, 17, 41} {
			ws[i%len(ws)] = "altered"
		}
	}
	var b strings.Builder
	for i := 0; i < len(ws); i += 20 {
		fmt.Fprintf(&b, "<p>%s.</p>\n", capitalise(strings.Join(ws[i:min(i+20, len(ws))], " ")))
	}
	if version > 0 {
		fmt.Fprintf(&b, "<p>Edition %d, updated just now.</p>\n", version)
	}
	return b.String()
}

// renderChaos renders an HTML page of a chaos host.
func (w *Web) renderChaos(p *chaosPage, version int) []byte {
	var b strings.Builder
	title := titleWords(p.seed)
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>%s</title></head><body>\n<h1>%s</h1>\n", title, title)
	b.WriteString(chaosText(p, version))
	b.WriteString(w.chaosLinks(p))
	b.WriteString("</body></html>\n")
	return []byte(b.String())
}

func (w *Web) chaosLinks(p *chaosPage) string {
	var b strings.Builder
	b.WriteString("<ul>\n")
	for i, l := range p.links {
		href := l.pq
		if l.host != p.host {
			href = w.urlOf(l.host, l.pq)
		}
		fmt.Fprintf(&b, "<li><a href=\"%s\">link %d</a></li>\n", strings.ReplaceAll(href, "&", "&amp;"), i+1)
	}
	b.WriteString("</ul>\n")
	return b.String()
}

// renderCharset renders a declared-charset page in its host's charset.
func (w *Web) renderCharset(p *chaosPage) (ctype string, body []byte) {
	cs := p.host.chaos.charset
	text, meta := "Café, crème brûlée and naïve façades", ""
	switch cs {
	case "windows-1252":
		text = "“Smart quotes” – café – 5 € – Œuvre ™"
	case "shift_jis":
		text = "これはシフトJISで書かれた文書です。日本語のページ"
	case "iso-8859-1-meta":
		meta = `<meta charset="iso-8859-1">`
	}
	// The declared charset's words once, then the page's own text: two
	// hosts that drew the same charset serve distinct pages, not near
	// duplicates of each other (whose links a crawler may rightly not
	// follow).
	page := fmt.Sprintf("<!DOCTYPE html>\n<html><head>%s<title>%s</title></head><body>\n<p>%s</p>\n%s%s</body></html>\n",
		meta, text, text, chaosText(p, 0), w.chaosLinks(p))
	switch cs {
	case "windows-1252":
		return "text/html; charset=windows-1252", encode(charmap.Windows1252, page)
	case "shift_jis":
		return "text/html; charset=Shift_JIS", encode(japanese.ShiftJIS, page)
	case "utf-16le-bom":
		return "text/html", encode(unicode.UTF16(unicode.LittleEndian, unicode.UseBOM), page)
	case "utf-16be-header":
		return "text/html; charset=utf-16be", encode(unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM), page)
	default: // iso-8859-1-meta: the charset only in the page
		return "text/html", encode(charmap.ISO8859_1, page)
	}
}
