package testweb

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"path"
	"slices"
	"strings"
	"time"
)

// Generate builds the web described by opts. It is pure: equal Options
// (Seed included) give equal webs, byte for byte once served on the same
// port. It panics if opts.Validate fails; options are a test's constants.
//
// Every ordinary host has a home page "/" and regular pages in several
// directories, each regular page linking to the next so that all are
// reachable from home when robots allows. On top come special resources,
// each on a deterministic subset of hosts and linked from the home page:
// robots probes (/private/, /docs/, /files/*.pdf, /list?sessionid=...,
// /no-trawl/, /no-others/), same- and cross-host redirects, a redirect
// chain of three, a redirect loop, links to missing pages, exact and near
// duplicates, a PDF and a PNG, pages linked only by rel=nofollow, only in a
// comment or only in a script, the entry of a calendar trap, and links to
// hostile hosts when Options.Hostile or Options.HostileKinds is set.
func Generate(opts Options) *Web {
	if err := opts.Validate(); err != nil {
		panic(err)
	}
	o := opts.withDefaults()
	w := &Web{opts: o, byName: make(map[string]*host)}
	w.port.Store(int64(o.Port))
	if o.NearDup {
		generateNearDup(w, o)
		return w
	}
	g := &gen{w: w, o: o, rng: rand.New(rand.NewPCG(uint64(o.Seed), 0x7472_6177_6c74_7765))}
	g.makeHosts()
	for _, h := range g.ordinary {
		g.makeResources(h)
	}
	for _, h := range g.ordinary {
		g.makeLinks(h)
	}
	g.finish()
	g.linkHostileKinds()
	g.makeTLSHosts()
	if o.Changing {
		w.makeChanging()
	}
	g.makePagedHost()
	return w
}

// gen holds the state of one Generate call.
type gen struct {
	w        *Web
	o        Options
	rng      *rand.Rand
	ordinary []*host // hosts that are not hostile
	hostile  []*host
	pending  []pendingRedirect
	dups     []pendingDup
}

type pendingRedirect struct{ r *resource } // cross-host target chosen later

type pendingDup struct {
	orig, copy *resource
	variant    int // variantNone for an exact copy
}

// smallRobots is the robots variant of small host number s: first one of
// each, in this order, then a weighted mix in which 500-forever and
// Crawl-delay stay rare.
func (g *gen) smallRobots(s int) robotsKind {
	order := []robotsKind{robotsPrefix, robotsAllowAll, robotsConflict, robotsWildcard, robotsAgent,
		robotsNotFound, robotsRedirect, robotsTooMany, robotsCrawlDelay, robotsServerError}
	if s < len(order) {
		return order[s]
	}
	switch r := g.rng.IntN(100); {
	case r < 1:
		return robotsServerError
	case r < 2:
		return robotsCrawlDelay
	case r < 6:
		return robotsTooMany
	case r < 12:
		return robotsRedirect
	case r < 28:
		return robotsNotFound
	case r < 40:
		return robotsAgent
	case r < 52:
		return robotsWildcard
	case r < 64:
		return robotsConflict
	case r < 78:
		return robotsPrefix
	}
	return robotsAllowAll
}

// hostIP is the loopback address of host number i: 127.77.i/250.i%250+1.
func hostIP(i int) netip.Addr {
	return netip.AddrFrom4([4]byte{127, 77, byte(i / 250), byte(i%250 + 1)})
}

func (g *gen) makeHosts() {
	o, w := g.o, g.w
	for i := range o.Hosts {
		h := &host{idx: i, byPQ: make(map[string]*resource)}
		if i < o.BigHosts {
			h.big = true
			h.name = fmt.Sprintf("www.big%d.%s", i+1, o.Domain)
			h.robots = []robotsKind{robotsAllowAll, robotsConflict, robotsAgent}[i%3]
		} else {
			s := i - o.BigHosts
			switch {
			case s < o.BigHosts:
				h.name = fmt.Sprintf("big%d.%s", s+1, o.Domain) // parent of www.bigN
			case s%10 == 9:
				h.name = "cdn." + w.hosts[i-1].name // subdomain of the previous host
			default:
				h.name = fmt.Sprintf("h%03d.%s", i, o.Domain)
			}
			h.robots = g.smallRobots(s)
			h.trap = s%40 == 3
			if o.Traps {
				switch s % 40 {
				case 13:
					h.session = sessionPath
					if s/40%2 == 1 {
						h.session = sessionQuery
					}
				case 23:
					h.shop = true
				case 33:
					h.grow = true
				case 37:
					h.soft404 = true
				}
				if len(h.traps()) > 0 {
					// Let nothing but the trap stand between the crawler
					// and it (the draw above still happened: equal webs
					// stay equal up to here).
					h.robots = robotsAllowAll
				}
			}
		}
		h.ip = hostIP(i)
		if o.MaxLatency > o.Latency {
			h.latency = o.Latency + time.Duration(g.rng.Int64N(int64(o.MaxLatency-o.Latency)+1))
		} else {
			h.latency = o.Latency
		}
		w.hosts = append(w.hosts, h)
		w.byName[h.name] = h
		g.ordinary = append(g.ordinary, h)
	}
	// Shared IPs: groups of three small hosts take the first one's address.
	small := g.ordinary[o.BigHosts:]
	perm := g.rng.Perm(len(small))
	for k := 0; k+2 < o.SharedIPHosts; k += 3 {
		lead := small[perm[k]]
		for _, j := range perm[k : k+3] {
			small[j].ip = lead.ip
			small[j].shared = true
		}
	}
	for _, k := range o.hostileKinds() {
		i := len(w.hosts)
		h := &host{idx: i, name: fmt.Sprintf("hostile-%s.%s", hostileNames[k], o.Domain),
			ip: hostIP(i), robots: robotsNotFound, hostile: k, latency: o.Latency,
			byPQ: make(map[string]*resource)}
		w.hosts = append(w.hosts, h)
		w.byName[h.name] = h
		g.hostile = append(g.hostile, h)
		r := &resource{pq: "/", kind: kindHostile, status: 200, note: "hostile: " + hostileNames[k]}
		if k <= hostileGzip {
			g.add(h, r)
			continue
		}
		// Kinds past Hostile's five draw nothing from g.rng, so that
		// adding them leaves the rest of the web as it was.
		r.host, r.seed = h, uint64(o.Seed)^uint64(k)<<32
		h.res = append(h.res, r)
		h.byPQ[r.pq] = r
	}
}

// add registers r on h and returns it.
func (g *gen) add(h *host, r *resource) *resource {
	if g.w.byName[h.name] != h || h.byPQ[r.pq] != nil {
		panic("testweb: generator made " + r.pq + " twice on " + h.name)
	}
	r.host = h
	r.seed = g.rng.Uint64()
	h.res = append(h.res, r)
	h.byPQ[r.pq] = r
	return r
}

func (g *gen) page(h *host, pq, note string) *resource {
	return g.add(h, &resource{pq: pq, kind: kindHTML, status: 200, note: note})
}

// homeLink queues a link from h's home page to r.
func (g *gen) homeLink(h *host, r *resource, nofollow bool, where placement) {
	h.homeLinks = append(h.homeLinks, link{to: r, nofollow: nofollow, where: where})
}

var regularTemplates = []string{
	"/page%d.html",
	"/docs/guide%d.html",
	"/blog/2024/post%d.html",
	"/~user/note%d.html",
	"/search?a=%d&b=x",
	"/a/b/deep%d.html",
	"/section%d/",
	"/notes/caf%%C3%%A9-%d.html",
}

func (g *gen) makeResources(h *host) {
	o := g.o
	s := h.idx - o.BigHosts // negative for big hosts
	n := o.BigPages
	switch {
	case h.big:
	case h.robots == robotsCrawlDelay:
		n = o.MinPages // keeps the critical path short
	default:
		n = o.MinPages + g.rng.IntN(o.MaxPages-o.MinPages+1)
	}
	h.regular = append(h.regular, g.page(h, "/", "home"))
	for j := 1; j < n; j++ {
		t := regularTemplates[g.rng.IntN(len(regularTemplates))]
		h.regular = append(h.regular, g.page(h, fmt.Sprintf(t, j), ""))
	}

	// Robots probes: pages the host's rules cover, or nearly cover.
	switch h.robots {
	case robotsPrefix, robotsCrawlDelay, robotsTooMany, robotsRedirect, robotsServerError:
		g.homeLink(h, g.page(h, "/private/secret.html", "robots probe"), false, inAnchor)
	case robotsConflict:
		g.homeLink(h, g.page(h, "/docs/internal.html", "robots probe"), false, inAnchor)
		g.homeLink(h, g.page(h, "/docs/public/readme.html", "robots probe"), false, inAnchor)
	case robotsWildcard:
		g.homeLink(h, g.add(h, &resource{pq: "/files/manual.pdf", kind: kindPDF, status: 200, note: "robots probe"}), false, inAnchor)
		g.homeLink(h, g.page(h, "/list?sessionid=s42", "robots probe"), false, inAnchor)
		g.homeLink(h, g.page(h, "/list?page=2", "robots probe"), false, inAnchor)
	case robotsAgent:
		g.homeLink(h, g.page(h, "/no-trawl/a.html", "robots probe"), false, inAnchor)
		g.homeLink(h, g.page(h, "/no-others/b.html", "robots probe"), false, inAnchor)
	}
	h.robotsReal = h.robots == robotsRedirect
	other := func() *resource { // a regular page other than home, or home
		if len(h.regular) == 1 {
			return h.regular[0]
		}
		return h.regular[1+g.rng.IntN(len(h.regular)-1)]
	}
	if h.big || s%3 == 0 {
		to := other()
		loc := to.pq
		if g.rng.IntN(2) == 0 {
			loc = "http://" + h.name + portToken + to.pq
		}
		g.homeLink(h, g.add(h, &resource{pq: fmt.Sprintf("/old/page%d.html", h.idx), kind: kindRedirect,
			status: 301, to: to, loc: loc, note: "redirect"}), false, inAnchor)
	}
	if s%5 == 1 && len(g.ordinary) > 1 {
		r := g.add(h, &resource{pq: fmt.Sprintf("/out/%d", h.idx), kind: kindRedirect, status: 302, note: "cross-host redirect"})
		g.pending = append(g.pending, pendingRedirect{r})
		g.homeLink(h, r, false, inAnchor)
	}
	if s%100 == 2 {
		final := other()
		r3 := g.add(h, &resource{pq: "/r/3", kind: kindRedirect, status: 301, to: final, loc: final.pq, note: "redirect chain 3/3"})
		r2 := g.add(h, &resource{pq: "/r/2", kind: kindRedirect, status: 302, to: r3, loc: "3", note: "redirect chain 2/3"})
		r1 := g.add(h, &resource{pq: "/r/1", kind: kindRedirect, status: 301, to: r2, loc: "http://" + h.name + portToken + "/r/2", note: "redirect chain 1/3"})
		g.homeLink(h, r1, false, inAnchor)
	}
	if s%100 == 3 {
		a := g.add(h, &resource{pq: "/loop/a", kind: kindRedirect, status: 301, loc: "/loop/b", note: "redirect loop"})
		b := g.add(h, &resource{pq: "/loop/b", kind: kindRedirect, status: 301, to: a, loc: "/loop/a", note: "redirect loop"})
		a.to = b
		g.homeLink(h, a, false, inAnchor)
	}
	if h.big || s%3 == 1 {
		g.homeLink(h, g.add(h, &resource{pq: fmt.Sprintf("/missing-%d.html", h.idx), kind: kindMissing, status: 404, note: "missing"}), false, inAnchor)
	}
	if h.big || s%5 == 2 {
		var orig *resource
		for _, r := range h.regular[1:] {
			if strings.HasSuffix(r.pq, ".html") {
				orig = r
				break
			}
		}
		if orig != nil {
			dir, file := path.Split(orig.pq)
			exact := g.page(h, dir+"copy-"+file, "exact duplicate of "+orig.pq)
			near := g.page(h, dir+"v2-"+file, "near duplicate of "+orig.pq)
			exact.dupOf = orig
			near.dupOf, near.near = orig, true
			// The kind of near copy turns with the host: changed words, an
			// added date-and-counter line, or other links.
			variant := variantWords + h.idx%3
			g.dups = append(g.dups, pendingDup{orig, exact, variantNone}, pendingDup{orig, near, variant})
			g.homeLink(h, exact, false, inAnchor)
			g.homeLink(h, near, false, inAnchor)
		}
	}
	if h.big || s%4 == 0 {
		g.homeLink(h, g.add(h, &resource{pq: fmt.Sprintf("/files/report-%d.pdf", h.idx), kind: kindPDF, status: 200, note: "pdf"}), false, inAnchor)
		g.homeLink(h, g.add(h, &resource{pq: fmt.Sprintf("/img/figure-%d.png", h.idx), kind: kindPNG, status: 200, note: "png"}), false, inAnchor)
	}
	if h.idx == 0 || s%6 == 1 {
		g.homeLink(h, g.page(h, "/hidden/nofollow.html", "nofollow-only"), true, inAnchor)
		g.homeLink(h, g.page(h, "/hidden/comment.html", "comment-only"), false, inComment)
		g.homeLink(h, g.page(h, "/hidden/script.html", "script-only"), false, inScript)
	}
	if h.trap {
		g.homeLink(h, g.add(h, &resource{pq: "/calendar/2025/06", kind: kindTrap, status: 200, note: "calendar trap"}), false, inAnchor)
	}
	g.makeTraps(h)
	if o.Lookalikes && !h.big && s%5 == 4 {
		a := g.page(h, fmt.Sprintf("/look/a-%d.html", h.idx), "lookalike")
		b := g.page(h, fmt.Sprintf("/look/b-%d.html", h.idx), "lookalike")
		a.lookalike, b.lookalike = b, a
		g.homeLink(h, a, false, inAnchor)
		g.homeLink(h, b, false, inAnchor)
	}
	if o.Sitemaps {
		g.makeSitemap(h)
	}
	for k, bad := range g.hostile {
		if k%len(g.ordinary) == h.idx && bad.hostile <= hostileGzip {
			g.homeLink(h, bad.res[0], false, inAnchor)
		}
	}
}

// linkHostileKinds links the hostile hosts past Hostile's five from home
// pages, as makeResources links those five, but once every random choice
// is made: adding kinds leaves the rest of the web as it was.
func (g *gen) linkHostileKinds() {
	for k, bad := range g.hostile {
		if bad.hostile <= hostileGzip {
			continue
		}
		home := g.ordinary[k%len(g.ordinary)].regular[0]
		home.body.links = append(home.body.links,
			link{to: bad.res[0], raw: "http://" + bad.name + portToken + "/", where: inAnchor})
	}
}

// shopItems is the number of products of a faceted shop.
const shopItems = 12

// facet is one filter of a faceted shop.
type facet struct {
	name   string
	values []string
}

// facets are the shop's filters, in the order a listing offers them, and
// their values.
var facets = []facet{
	{"color", []string{"red", "green", "blue", "black", "white"}},
	{"size", []string{"s", "m", "l", "xl"}},
	{"brand", []string{"acme", "globex", "initech", "umbrella", "hooli"}},
	{"sort", []string{"price", "name", "newest", "rating"}},
}

// makeTraps adds the entries of h's traps and links them from
// its home page: the shop's listing and products (real pages), the
// growing path's entry (a trap page) and, on a soft-404 host, links to
// paths that do not exist.
func (g *gen) makeTraps(h *host) {
	if h.shop {
		shop := g.page(h, "/shop/", "shop")
		for i := 1; i <= shopItems; i++ {
			h.shopItems = append(h.shopItems, g.page(h, fmt.Sprintf("/shop/item-%d.html", i), "shop item"))
		}
		g.homeLink(h, shop, false, inAnchor)
	}
	if h.grow {
		g.homeLink(h, g.add(h, &resource{pq: "/grow/", kind: kindTrap, status: 200, note: "growing-path trap"}), false, inAnchor)
	}
	if h.soft404 {
		for _, raw := range []string{"/gone/news-%d.html", "/gone/promo-%d.html", "archive/item-%d.html"} {
			h.homeLinks = append(h.homeLinks, link{raw: fmt.Sprintf(raw, h.idx)}) // no resource: a soft 404
		}
	}
}

// pickRegular returns a random regular page of a random ordinary host other
// than not (or of not itself if it is the only host).
func (g *gen) pickRegular(not *host) *resource {
	h := not
	if len(g.ordinary) > 1 {
		for h == not {
			h = g.ordinary[g.rng.IntN(len(g.ordinary))]
		}
	}
	return h.regular[g.rng.IntN(len(h.regular))]
}

var outOfDomain = []string{"http://elsewhere.example" + portToken + "/", "http://www.elsewhere.example" + portToken + "/page.html"}

var baseDirs = []string{"/", "/docs/", "/blog/2024/"}

func (g *gen) makeLinks(h *host) {
	o := g.o
	for _, r := range h.res {
		if r.kind != kindHTML {
			continue
		}
		if strings.HasPrefix(r.note, "exact duplicate") || strings.HasPrefix(r.note, "near duplicate") {
			continue // filled in by finish
		}
		b := &bodySpec{seed: r.seed, size: o.MinPageBytes + g.rng.IntN(o.MaxPageBytes-o.MinPageBytes+1)}
		b.title = titleWords(r.seed)
		if r.lookalike != nil {
			b.template = h.regular[0].seed ^ 0x6c6f_6f6b_616c_696b // one template per host
		}
		r.body = b
		baseDir := dirOf(r.pq)
		if r.pq != "/" && r.note == "" && g.rng.IntN(10) == 0 {
			baseDir = baseDirs[g.rng.IntN(len(baseDirs))]
			b.base = "http://" + h.name + portToken + baseDir
		}
		add := func(l link) {
			if l.to != nil && l.raw == "" {
				l.raw = g.write(r, baseDir, l.to)
			}
			b.links = append(b.links, l)
		}
		j := -1
		for k, reg := range h.regular {
			if reg == r {
				j = k
			}
		}
		switch {
		case j == 0: // home
			if j+1 < len(h.regular) {
				add(link{to: h.regular[1]})
				add(link{to: h.regular[1], nofollow: true}) // nofollow to a page also linked normally
			}
			n := len(g.ordinary)
			for _, d := range []int{1, 7} {
				if t := g.ordinary[(h.idx+d)%n]; t != h {
					add(link{to: t.regular[0]})
				}
			}
			for _, l := range h.homeLinks {
				add(l)
			}
		case j > 0:
			if j+1 < len(h.regular) {
				add(link{to: h.regular[j+1]})
			}
		default: // special page: back to home
			add(link{to: h.regular[0]})
		}
		switch {
		case h.shop && r.pq == "/shop/":
			for _, it := range h.shopItems {
				add(link{to: it})
			}
			for _, f := range facets {
				for _, v := range f.values {
					add(link{raw: "?" + f.name + "=" + v}) // a filtered listing: a trap page
				}
			}
		case r.note == "shop item":
			add(link{to: h.byPQ["/shop/"]})
		}
		if j >= 0 {
			for range 2 + g.rng.IntN(3) {
				if t := h.regular[g.rng.IntN(len(h.regular))]; t != r {
					add(link{to: t})
				}
			}
			for range g.rng.IntN(3) {
				add(link{to: g.pickRegular(h)})
			}
			if o.ExtraLinks > 0 {
				// A generator of their own: the rest of the web stays as
				// it is without them.
				xr := rand.New(rand.NewPCG(r.seed, 0x6c696e6b73))
				for range o.ExtraLinks {
					t := h.regular[xr.IntN(len(h.regular))]
					if other := g.ordinary[xr.IntN(len(g.ordinary))]; xr.IntN(4) == 0 && other != h {
						t = other.regular[xr.IntN(len(other.regular))]
					}
					raw := t.pq // written plainly: g.write draws from g.rng
					if t.host != h {
						raw = "http://" + t.host.name + portToken + t.pq
					}
					add(link{to: t, raw: raw})
				}
			}
			if b.base == "" && g.rng.IntN(2) == 0 {
				add(link{raw: "#sec2"}) // a self link
			}
			if g.rng.IntN(5) == 0 {
				add(link{raw: outOfDomain[g.rng.IntN(len(outOfDomain))]})
			}
		}
		add(link{raw: "mailto:webmaster@" + h.name, where: inFooter})
		add(link{raw: "javascript:void(0)", where: inFooter})
	}
}

// finish resolves cross-host redirects and duplicate bodies.
func (g *gen) finish() {
	for _, p := range g.pending {
		t := g.pickRegular(p.r.host)
		p.r.to = t
		p.r.loc = "http://" + t.host.name + portToken + t.pq
	}
	for _, d := range g.dups {
		if d.variant == variantNone {
			d.copy.body = d.orig.body
			continue
		}
		b := *d.orig.body
		b.variant = d.variant
		if d.variant == variantLinks {
			// Each link to a regular page of the host leads to the next
			// regular page instead (all are reachable from home anyway);
			// as many links as before, so the text drawn stays the same.
			h := d.copy.host
			b.links = slices.Clone(b.links)
			dir := dirOf(d.copy.pq)
			if b.base != "" {
				dir = strings.TrimPrefix(b.base, "http://"+h.name+portToken)
			}
			for i, l := range b.links {
				k := slices.Index(h.regular, l.to)
				if k < 0 || !l.followable() {
					continue
				}
				t := h.regular[(k+1)%len(h.regular)]
				b.links[i].to, b.links[i].raw = t, relativeRef(dir, t.pq)
			}
		}
		d.copy.body = &b
	}
}

// dirOf returns the directory part of a canonical path and query.
func dirOf(pq string) string {
	p, _, _ := strings.Cut(pq, "?")
	return p[:strings.LastIndexByte(p, '/')+1]
}

// relativeRef writes the relative reference from directory dir to pq.
func relativeRef(dir, pq string) string {
	p, q, hasQ := strings.Cut(pq, "?")
	tdir, file := p[:strings.LastIndexByte(p, '/')+1], p[strings.LastIndexByte(p, '/')+1:]
	from := strings.Split(strings.Trim(dir, "/"), "/")
	to := strings.Split(strings.Trim(tdir, "/"), "/")
	if dir == "/" {
		from = nil
	}
	if tdir == "/" {
		to = nil
	}
	common := 0
	for common < len(from) && common < len(to) && from[common] == to[common] {
		common++
	}
	var b strings.Builder
	for range len(from) - common {
		b.WriteString("../")
	}
	for _, s := range to[common:] {
		b.WriteString(s + "/")
	}
	b.WriteString(file)
	if b.Len() == 0 {
		b.WriteString("./")
	}
	if hasQ {
		b.WriteString("?" + q)
	}
	return b.String()
}

// write returns an href from page r (relative references resolve against
// baseDir on r's host) to t, in one of the ways real pages write links.
func (g *gen) write(r *resource, baseDir string, t *resource) string {
	p, q, hasQ := strings.Cut(t.pq, "?")
	// Path spellings that normalise to the canonical one.
	if strings.Contains(p, "~") && g.rng.IntN(2) == 0 {
		p = strings.ReplaceAll(p, "~", []string{"%7E", "%7e"}[g.rng.IntN(2)])
	}
	if strings.Contains(p, "%C3%A9") {
		switch g.rng.IntN(3) {
		case 0:
			p = strings.ReplaceAll(p, "%C3%A9", "é")
		case 1:
			p = strings.ReplaceAll(p, "%C3%A9", "%c3%a9")
		}
	}
	if hasQ && strings.Contains(q, "&") && g.rng.IntN(2) == 0 {
		parts := strings.Split(q, "&")
		for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
			parts[i], parts[j] = parts[j], parts[i]
		}
		q = strings.Join(parts, "&")
	}
	if g.rng.IntN(10) == 0 {
		tr := []string{"utm_source=newsletter&utm_medium=email", "gclid=Cj0KCQ", "fbclid=IwAR2x"}[g.rng.IntN(3)]
		if hasQ {
			q = tr + "&" + q
		} else {
			q = tr
		}
		hasQ = true
	}
	pq := p
	if hasQ {
		pq += "?" + q
	}
	var ref string
	if t.host == r.host {
		switch n := g.rng.IntN(20); {
		case n < 7:
			ref = relativeRef(baseDir, pq)
		case n < 9:
			ref = "./" + strings.TrimPrefix(relativeRef(baseDir, pq), "./")
		case n < 14:
			ref = pq
		case n < 17:
			ref = "http://" + t.host.name + portToken + pq
		case n < 19:
			ref = "//" + t.host.name + portToken + pq
		default:
			ref = "HTTP://" + strings.ToUpper(t.host.name) + portToken + pq
		}
	} else {
		switch n := g.rng.IntN(20); {
		case n < 12:
			ref = "http://" + t.host.name + portToken + pq
		case n < 17:
			ref = "//" + t.host.name + portToken + pq
		default:
			ref = "HTTP://" + strings.ToUpper(t.host.name) + portToken + pq
		}
	}
	if g.rng.IntN(10) == 0 {
		ref += "#top"
	}
	return ref
}
