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
	tls    *webTLS   // the test CA and TLS hosts' configurations; nil without Options.TLSKinds
	chaos  *chaosWeb // a chaos web's own state (chaos.go); nil for Generate's webs
}

type host struct {
	idx        int
	name       string
	ip         netip.Addr
	big        bool
	shared     bool // shares its IP with other hosts
	robots     robotsKind
	latency    time.Duration
	trap       bool        // serves the /calendar/ trap
	session    sessionKind // puts a session ID in every internal link
	shop       bool        // serves /shop/ with endless filter combinations
	grow       bool        // serves /grow/, whose links grow the path forever
	soft404    bool        // answers unknown paths with 200 "not found"
	paged      bool        // the paged host (Options.Pagination, pagination.go)
	shopItems  []*resource // the shop's products
	hostile    hostileKind
	tls        tlsKind              // served over TLS with this certificate (Options.TLSKinds)
	res        []*resource          // in generation order
	byPQ       map[string]*resource // canonical path and query → resource
	regular    []*resource          // regular HTML pages, home first
	homeLinks  []link               // extra links the home page carries
	robotsReal bool                 // serves /robots-real.txt
	validators string               // a changing web's validator kind (ValidatorsHonest, ...); "" otherwise

	sitemap     sitemapKind // the sitemap it serves (Options.Sitemaps)
	sitemapOnly []*resource // pages only its sitemap lists

	chaos *chaosHost // what a chaos web's host drew (chaos.go); nil otherwise
	near  *nearHost  // what a near-duplicate web's host drew (neardup.go); nil otherwise
}

// sessionKind is how a session-ID host writes the session into its links.
type sessionKind int

const (
	noSession    sessionKind = iota
	sessionPath              // ;jsessionid=HEX path parameter
	sessionQuery             // ?sid=HEX query parameter
)

// The trap kinds a host can carry, as HostInfo.Traps and
// Report.TrapsByKind name them.
const (
	TrapCalendar    = "calendar"     // /calendar/y/m links to the next and previous month, forever
	TrapSessionID   = "session-id"   // every internal link carries a session ID new with each response
	TrapFacets      = "facets"       // /shop/?color=..&size=..: every filter combination is a page
	TrapGrowingPath = "growing-path" // /grow/: relative links resolve to ever longer paths
	TrapSoft404     = "soft-404"     // unknown paths answer 200 with a "not found" page
)

// traps lists the trap kinds h carries, in a fixed order.
func (h *host) traps() []string {
	var out []string
	if h.trap {
		out = append(out, TrapCalendar)
	}
	if h.session != noSession {
		out = append(out, TrapSessionID)
	}
	if h.shop {
		out = append(out, TrapFacets)
	}
	if h.grow {
		out = append(out, TrapGrowingPath)
	}
	if h.soft404 {
		out = append(out, TrapSoft404)
	}
	if h.paged {
		out = append(out, TrapEvents, TrapEndlessPages)
	}
	return out
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
	// dupOf is the page r copies: byte for byte if exact, else with a few
	// changes that keep its SimHash within distance 3 (near).
	dupOf *resource
	near  bool
	// lookalike is a distinct page built on the same template as r.
	lookalike *resource
	// change is how a page of a changing web changes; nil if it does not.
	change *change
}

// bodySpec is what an HTML body is rendered from.
type bodySpec struct {
	seed    uint64
	size    int
	title   string
	base    string // <base href> as written (with portToken), or ""
	links   []link
	variant int        // non-zero: a near duplicate (see the variant constants)
	paged   *pagedSpec // a page of the paged host: rendered by renderPaged
	// template, if non-zero, seeds the boilerplate a lookalike page
	// shares with its pair; the page's own text is then short.
	template uint64
	// near, if set, is a page of the near-duplicate web (neardup.go).
	near *nearSpec
}

// Near-duplicate variants: how a near copy differs from its original.
const (
	variantNone    = iota
	variantWords   // the first word of three paragraphs changed
	variantCounter // one more line: an update date and a view counter
	variantLinks   // the same text with different links and one more related link
)

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
	scheme := "http://"
	if h.tls != notTLS {
		scheme = "https://"
	}
	return w.withPort(scheme + h.name + portToken + pq)
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
	// Traps lists the trap kinds the host carries (TrapCalendar, ...);
	// empty for most hosts.
	Traps   []string
	Hostile string // "" for ordinary hosts, else how it misbehaves: a name of AllHostileKinds
	// TLS is "" for plain-HTTP hosts, else the host's TLS kind, a name of
	// AllTLSKinds: its URLs are https.
	TLS string
	// Validators is how a host of a changing web sends ETag and
	// Last-Modified (ValidatorsHonest, ...); "" if the web is not changing
	// or the host is hostile.
	Validators string
}

// Hosts lists the web's hosts in generation order.
func (w *Web) Hosts() []HostInfo {
	out := make([]HostInfo, 0, len(w.hosts))
	for _, h := range w.hosts {
		out = append(out, HostInfo{
			Name: h.name, IP: h.ip, Big: h.big, SharedIP: h.shared,
			Robots: h.robots.String(), CrawlDelay: h.robots.crawlDelay(),
			Latency: h.latency, Trap: h.trap, Traps: h.traps(), Hostile: hostileNames[h.hostile],
			TLS:        tlsNames[h.tls],
			Validators: h.validators,
		})
	}
	return out
}

// Page is one URL the web knows: a page, a redirect, a non-HTML resource
// or a linked URL that answers 404. Trap pages (calendar months, filtered
// shop listings, grown paths, soft 404s, session-ID variants) are made on
// demand and not listed, except the calendar's and the growing path's
// entry URLs.
type Page struct {
	URL         string // canonical form
	Status      int
	ContentType string // "" for redirects and 404s
	Location    string // for redirects: the target's canonical URL
	Note        string // what the URL is there to test, e.g. "nofollow-only"
	// DuplicateOf is the canonical URL of the page this one copies byte
	// for byte; "" if none.
	DuplicateOf string
	// NearDuplicateOf is the canonical URL of the page this one copies
	// with small changes (a few words, a counter line, other links); ""
	// if none. A label by construction: SimHash gives odds, not a bound,
	// and a few percent of such copies land more than 3 bits from their
	// original (TestDuplicateLabels reports the distances).
	NearDuplicateOf string
	// LookalikeOf is the canonical URL of a distinct page built on the
	// same template as this one (shared boilerplate, different text): a
	// pair a near-duplicate detector should keep apart. "" if none.
	LookalikeOf string
	// SitemapOnly marks a page no page links to, listed only in its
	// host's sitemap (Options.Sitemaps; Note "sitemap-only").
	SitemapOnly bool
	// The labels of the near-duplicate web (Options.NearDup, neardup.go);
	// zero on other webs. A near copy there always names its original
	// (never another copy) in NearDuplicateOf, an exact copy in
	// DuplicateOf: an original and its copies are a group.
	//
	// EditSize is a near copy's share of its article's words replaced by
	// other words: one of NearEditSizes, or 0 for a cross-host copy.
	EditSize float64
	// NearChange is what else a near copy changes: NearChangeAd,
	// NearChangePopular or NearChangeCrossHost.
	NearChange string
	// Templated marks a page of a templated host: distinct from every
	// other page, though most of its text is its host's template.
	Templated bool
}

// Pages lists every URL the web knows, host by host in generation order.
func (w *Web) Pages() []Page {
	var out []Page
	for _, h := range w.hosts {
		for _, r := range h.res {
			p := Page{URL: r.url(w), Status: r.status, ContentType: r.contentType(), Note: r.note,
				SitemapOnly: r.note == noteSitemapOnly}
			if r.to != nil {
				p.Location = r.to.url(w)
			}
			switch {
			case r.dupOf != nil && r.near:
				p.NearDuplicateOf = r.dupOf.url(w)
			case r.dupOf != nil:
				p.DuplicateOf = r.dupOf.url(w)
			}
			if r.lookalike != nil {
				p.LookalikeOf = r.lookalike.url(w)
			}
			if h.near != nil {
				p.Templated = h.near.templated
				if r.near {
					p.EditSize, p.NearChange = r.body.near.edit, r.body.near.change
				}
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
	if w.chaos != nil {
		return w.chaosSeeds()
	}
	var out []string
	if w.opts.NearDup {
		for _, h := range w.hosts {
			out = append(out, w.urlOf(h, "/"))
		}
		return out
	}
	for _, h := range w.hosts {
		if h.hostile != notHostile || h.tls != notTLS || h.robots == robotsServerError {
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

// trapKind returns the trap kind of a request for pq (canonical) on h, or
// "". A session-ID variant is not a trap by itself (its first fetch gets
// the page): Analyze counts those by page.
func (h *host) trapKind(pq string) string {
	switch {
	case isTrapPath(pq):
		return TrapCalendar
	case h.shop && strings.HasPrefix(pq, "/shop/?"):
		return TrapFacets
	case h.grow && strings.HasPrefix(pq, "/grow/"):
		return TrapGrowingPath
	case h.soft404 && h.byPQ[pq] == nil && !isRobotsPath(pq):
		return TrapSoft404
	case h.paged:
		return pagedTrapKind(pq)
	}
	return ""
}

// sessionParam is the name a session-ID host gives the session.
const sessionParamPath, sessionParamQuery = "jsessionid", "sid"

// stripSession returns pq (canonical) without the session IDs a
// session-ID host writes: ";jsessionid=..." path parameters and "sid"
// query parameters. It returns pq unchanged if it has none.
func stripSession(pq string) string {
	p, q, hasQ := strings.Cut(pq, "?")
	if strings.Contains(p, ";") {
		segs := strings.Split(p, "/")
		for i, s := range segs {
			if k := strings.Index(strings.ToLower(s), ";"+sessionParamPath+"="); k >= 0 {
				segs[i] = s[:k]
			}
		}
		p = strings.Join(segs, "/")
	}
	if !hasQ {
		return p
	}
	var kept []string
	for kv := range strings.SplitSeq(q, "&") {
		if k, _, _ := strings.Cut(kv, "="); !strings.EqualFold(k, sessionParamQuery) {
			kept = append(kept, kv)
		}
	}
	if len(kept) == 0 {
		return p
	}
	return p + "?" + strings.Join(kept, "&")
}

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
