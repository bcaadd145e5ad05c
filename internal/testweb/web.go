// Package testweb is the synthetic web every crawl test runs against: a
// deterministic, seeded set of virtual hosts (Generate), served on loopback
// addresses with per-host latency (Serve), which records every request it
// answers so that Analyze can judge a crawl from the log alone: gaps,
// concurrency, robots violations, repeats, coverage and trap fetches.
//
// The ground truth (which URLs are crawlable, which are disallowed) is built
// by construction and does not use the crawler's own packages. A Web is
// immutable after Generate except for its port, which Serve sets once; it
// is then safe for concurrent use. A Server is safe for concurrent use.
package testweb

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Web is a generated synthetic web.
type Web struct {
	opts   Options
	hosts  []*host
	byName map[string]*host
	port   atomic.Int64
}

// hostileKind is how a hostile host misbehaves; zero for ordinary hosts.
type hostileKind int

const (
	notHostile     hostileKind = iota
	hostileJunk                // malformed HTML: unclosed tags, junk bytes
	hostileLength              // Content-Length larger than the body sent
	hostileDrip                // one byte per interval, bounded
	hostileEndless             // a body that goes on until the server's cap
	hostileGzip                // Content-Encoding: gzip over bytes that are not gzip
)

var hostileNames = [...]string{"", "junk", "lying-length", "slow-drip", "endless", "bad-gzip"}

type host struct {
	idx        int
	name       string
	ip         netip.Addr
	big        bool
	shared     bool // shares its IP with other hosts
	robots     robotsKind
	latency    time.Duration
	trap       bool
	hostile    hostileKind
	res        []*resource          // in generation order
	byPQ       map[string]*resource // canonical path and query → resource
	regular    []*resource          // regular HTML pages, home first
	homeLinks  []link               // extra links the home page carries
	robotsReal bool                 // serves /robots-real.txt
}

type resKind int

const (
	kindHTML     resKind = iota
	kindPDF              // application/pdf
	kindPNG              // image/png
	kindRedirect         // 301 or 302 to another resource
	kindMissing          // a linked URL that answers 404
	kindTrap             // the entry of a calendar trap
	kindHostile          // the home page of a hostile host
)

// resource is one URL the web knows.
type resource struct {
	host   *host
	pq     string // canonical path and query
	kind   resKind
	status int
	to     *resource // redirect target
	loc    string    // Location as written, with portToken
	body   *bodySpec // HTML content; shared by exact duplicates
	seed   uint64
	note   string
}

// bodySpec is what an HTML body is rendered from.
type bodySpec struct {
	seed    uint64
	size    int
	title   string
	base    string // <base href> as written (with portToken), or ""
	links   []link
	variant int // non-zero: a near duplicate differing in a few words
}

// placement is where a link sits in the HTML.
type placement int

const (
	inAnchor  placement = iota // <a href>
	inComment                  // inside <!-- -->: not a link
	inScript                   // inside <script>: not a link
	inFooter                   // <a href> in the footer (mailto:, javascript:)
)

// link is one href written on a page.
type link struct {
	raw      string    // as written, with portToken for the port
	to       *resource // nil for self links, mailto:, javascript: and other domains
	nofollow bool
	where    placement
}

func (l link) followable() bool {
	return l.to != nil && !l.nofollow && (l.where == inAnchor || l.where == inFooter)
}

// portToken stands for ":PORT" in stored URLs; rendering replaces it.
const portToken = ":{PORT}"

// withPort replaces portToken in s by the web's current port ("" if none).
func (w *Web) withPort(s string) string {
	p := ""
	if n := w.port.Load(); n != 0 {
		p = ":" + strconv.FormatInt(n, 10)
	}
	return strings.ReplaceAll(s, portToken, p)
}

func (w *Web) urlOf(h *host, pq string) string {
	return w.withPort("http://" + h.name + portToken + pq)
}

func (r *resource) url(w *Web) string { return w.urlOf(r.host, r.pq) }

// Options returns the options the web was generated with, defaults filled
// in and Port as it is now.
func (w *Web) Options() Options {
	o := w.opts
	o.Port = int(w.port.Load())
	return o
}

// Port is the TCP port in the web's URLs: zero until Serve picks one.
func (w *Web) Port() int { return int(w.port.Load()) }

// HostInfo describes one host of the web.
type HostInfo struct {
	Name       string
	IP         netip.Addr
	Big        bool
	SharedIP   bool          // another host has the same IP
	Robots     string        // the robots.txt variant, e.g. "crawl-delay"
	CrawlDelay time.Duration // the Crawl-delay its robots.txt asks for
	Latency    time.Duration // delay before the first byte of each response
	Trap       bool          // serves the /calendar/ trap
	Hostile    string        // "" for ordinary hosts, else how it misbehaves
}

// Hosts lists the web's hosts in generation order.
func (w *Web) Hosts() []HostInfo {
	out := make([]HostInfo, 0, len(w.hosts))
	for _, h := range w.hosts {
		out = append(out, HostInfo{
			Name: h.name, IP: h.ip, Big: h.big, SharedIP: h.shared,
			Robots: h.robots.String(), CrawlDelay: h.robots.crawlDelay(),
			Latency: h.latency, Trap: h.trap, Hostile: hostileNames[h.hostile],
		})
	}
	return out
}

// Page is one URL the web knows: a page, a redirect, a non-HTML resource
// or a linked URL that answers 404. Calendar trap pages are made on demand
// and not listed, except each trap's entry URL.
type Page struct {
	URL         string // canonical form
	Status      int
	ContentType string // "" for redirects and 404s
	Location    string // for redirects: the target's canonical URL
	Note        string // what the URL is there to test, e.g. "nofollow-only"
}

// Pages lists every URL the web knows, host by host in generation order.
func (w *Web) Pages() []Page {
	var out []Page
	for _, h := range w.hosts {
		for _, r := range h.res {
			p := Page{URL: r.url(w), Status: r.status, ContentType: r.contentType(), Note: r.note}
			if r.to != nil {
				p.Location = r.to.url(w)
			}
			out = append(out, p)
		}
	}
	return out
}

func (r *resource) contentType() string {
	switch r.kind {
	case kindHTML, kindTrap, kindHostile:
		return "text/html; charset=utf-8"
	case kindPDF:
		return "application/pdf"
	case kindPNG:
		return "image/png"
	}
	return ""
}

// Seeds returns a few entry URLs, home pages of hosts chosen so that most
// hosts are reachable from them.
func (w *Web) Seeds() []string {
	var out []string
	for _, h := range w.hosts {
		if h.hostile != notHostile || h.robots == robotsServerError {
			continue
		}
		if len(out) == 0 || h.idx%50 == 0 {
			out = append(out, w.urlOf(h, "/"))
		}
	}
	return out
}

// lookup finds the host and resource of an absolute URL; r is nil if the
// host exists but the URL is not one the web knows.
func (w *Web) lookup(rawURL string) (h *host, r *resource, pq string, err error) {
	name, port, pq, err := canonAbsolute(rawURL)
	if err != nil {
		return nil, nil, "", err
	}
	if p := w.Port(); port != p {
		return nil, nil, "", fmt.Errorf("testweb: lookup %q: port %d, the web is on %d", rawURL, port, p)
	}
	h = w.byName[name]
	if h == nil {
		return nil, nil, "", fmt.Errorf("testweb: lookup %q: unknown host", rawURL)
	}
	return h, h.byPQ[pq], pq, nil
}

// Disallowed reports whether the web's robots.txt rules forbid rawURL to
// a crawler with the given agent, once the host's robots.txt has been read
// successfully. Unknown hosts and malformed URLs report false.
func (w *Web) Disallowed(rawURL, agent string) bool {
	h, _, pq, err := w.lookup(rawURL)
	if err != nil {
		return false
	}
	return h.robots.disallowed(pq, agent)
}

// isTrapPath reports whether pq is a calendar trap page.
func isTrapPath(pq string) bool { return strings.HasPrefix(pq, "/calendar/") }

// inDomain reports whether host name is domain or one of its subdomains.
func inDomain(name, domain string) bool {
	return name == domain || strings.HasSuffix(name, "."+domain)
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
