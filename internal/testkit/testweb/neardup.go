package testweb

// The near-duplicate web (Options.NearDup): a web made to judge a
// near-duplicate detector, labelled by construction (Page.NearDuplicateOf,
// Page.EditSize, Page.NearChange, Page.Templated). It has hosts of two
// kinds:
//
//   - article hosts (four in five): a home page listing the host's
//     articles, and articles of nearMinWords to nearMaxWords words of
//     Zipf-like text (zipf.go) in paragraphs, in the host's template: a
//     menu of links, a "popular" list of links, an ad block (a sponsor's
//     sentence and a link) and a footer, some with prose (an "about this
//     site" blurb) in the sidebar or the footer. Hosts write their
//     template in semantic tags (header, nav, main, article, aside,
//     footer) or in divs with class names of their own. Every third
//     article has a near copy at another URL of its host, with a share of
//     its article's words replaced by other words (NearEditSizes, in turn
//     host by host) and either another ad block or its popular list in
//     another order; every seventh an exact copy (the same bytes at
//     another URL); and each host's first article has a copy on the next
//     article host, in that host's template (a cross-host copy, its words
//     unchanged);
//   - templated hosts (every fifth host): nearMinTemplated to
//     nearMaxTemplated distinct pages, each a title and about 100 words of
//     its own inside a template of about 2,200 words that every page of
//     the host shares (a menu, a sidebar and a footer, most of it prose in
//     divs, as CMS sites serve). No page of one is a near duplicate of
//     another: a detector that flags one is wrong. Its pages link onward
//     as a tree (the home page to the first three, page k to pages 3k+3 to
//     3k+5), so a crawler that does not follow a flagged page's links
//     loses the pages below it.
//
// Every host's home page is a seed (Seeds) and links to the next host's;
// every page is reachable by links, and every link is followable. Pages
// are rendered on request from a few seeds each. The web draws from a
// random stream of its own: Options that shape the classic web (BigHosts,
// page counts and sizes) do not apply.

import (
	"fmt"
	"html"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// Shape of the near-duplicate web.
const (
	nearTemplatedEvery               = 5 // host i is templated when i%5 == 4
	nearMinArticles, nearMaxArticles = 12, 30
	nearMinWords, nearMaxWords       = 250, 800 // an article's words
	nearMinTemplated                 = 30       // pages of a templated host, home aside
	nearMaxTemplated                 = 50
	templatedMinBody                 = 80 // a templated page's own words
	templatedMaxBody                 = 120
)

// NearEditSizes are the edit sizes of the near copies on an article's own
// host: the share of the article's words replaced. Hosts take them in
// turn, so each size has about as many copies.
var NearEditSizes = []float64{0, 0.01, 0.03, 0.05, 0.10}

// What a near copy changes besides its article's words (Page.NearChange).
const (
	NearChangeAd        = "ad"         // another ad block
	NearChangePopular   = "popular"    // the popular list in another order
	NearChangeCrossHost = "cross-host" // the article on another host, in that host's template
)

// nearHost is what a host of the near-duplicate web draws once.
type nearHost struct {
	templated bool
	seed      uint64 // its template's text
	style     nearStyle
	site      string     // its name as its pages write it
	nav       []nearLink // the menu
	popular   []nearLink
	footer    []nearLink
	about     int  // words of "about this site" prose in the sidebar (0: none)
	footProse int  // words of prose in the footer (0: none)
	adFirst   bool // the ad block comes before the article
	home      *resource
	next      *resource // the next host's home page
	partners  []*resource
}

// nearLink is a link of the near-duplicate web: its text and target.
type nearLink struct {
	label string
	to    *resource
}

// nearKind is the kind of a page of the near-duplicate web.
type nearKind int

const (
	nearHome nearKind = iota
	nearArticle
	nearTemplatedPage
)

// nearSpec is what a page of the near-duplicate web is rendered from
// (beside its bodySpec's title). A near copy has its original's text,
// words and links, and its own edit, ad and order.
type nearSpec struct {
	kind     nearKind
	text     uint64  // seed of the page's own words: an article's are its copies' too
	words    int     // how many
	edit     float64 // share of the article's words replaced (a near copy)
	editSeed uint64
	change   string // a near copy's NearChange
	ad       uint64 // seed of the ad block
	reorder  uint64 // non-zero: the popular list in an order drawn from it
	list     []nearLink
	listHead string
	also     []nearLink // other versions of an article
}

// nearStyle is how a host writes its template: semantic tags or divs
// with class names of its own.
type nearStyle struct {
	semantic bool
	class    map[string]string // role → class name of the div (div hosts), and of ad and prose blocks (all)
	bare     bool              // prose straight in its div, lines broken by <br>, not in <p>
}

var nearClasses = map[string][]string{
	"header":  {"header", "top", "masthead", "site-head", "banner"},
	"nav":     {"menu", "navbar", "nav-links", "topnav", "primary-menu"},
	"main":    {"content", "main", "wrapper", "page-body", "container"},
	"article": {"post-body", "entry-content", "article-text", "story", "text"},
	"aside":   {"sidebar", "widget-area", "col-right", "rail", "extras"},
	"footer":  {"bottom", "site-footer", "foot", "colophon", "legal"},
	"ad":      {"sponsor", "promo", "ad-slot", "partner-box", "advert"},
	"prose":   {"widget-text", "blurb", "about-box", "textwidget", "info"},
}

var nearRoles = []string{"header", "nav", "main", "article", "aside", "footer", "ad", "prose"}

func drawStyle(rng *rand.Rand) nearStyle {
	s := nearStyle{semantic: rng.IntN(2) == 0, bare: rng.IntN(3) == 0, class: map[string]string{}}
	for _, role := range nearRoles {
		cs := nearClasses[role]
		s.class[role] = cs[rng.IntN(len(cs))]
	}
	return s
}

// open and close write the element of a role.
func (s nearStyle) open(role string) string {
	if s.semantic && role != "ad" && role != "prose" {
		return "<" + role + ">"
	}
	return `<div class="` + s.class[role] + `">`
}

func (s nearStyle) close(role string) string {
	if s.semantic && role != "ad" && role != "prose" {
		return "</" + role + ">"
	}
	return "</div>"
}

// nearGen holds the state of one near-duplicate web's generation.
type nearGen struct {
	w   *Web
	o   Options
	rng *rand.Rand
}

// generateNearDup fills w with the near-duplicate web.
func generateNearDup(w *Web, o Options) {
	g := &nearGen{w: w, o: o, rng: rand.New(rand.NewPCG(uint64(o.Seed), 0x6e65_6172_6475_70))}
	// Latencies come from a stream of their own: pages are the same
	// whatever the latency.
	lat := rand.New(rand.NewPCG(uint64(o.Seed), 0x6c61_7465_6e63_79))
	for i := range o.Hosts {
		templated := i%nearTemplatedEvery == nearTemplatedEvery-1
		name := fmt.Sprintf("news%03d.%s", i, o.Domain)
		if templated {
			name = fmt.Sprintf("cms%03d.%s", i, o.Domain)
		}
		h := &host{idx: i, name: name, ip: hostIP(i), robots: robotsAllowAll, byPQ: make(map[string]*resource)}
		h.latency = o.Latency
		if o.MaxLatency > o.Latency {
			h.latency += time.Duration(lat.Int64N(int64(o.MaxLatency-o.Latency) + 1))
		}
		h.near = &nearHost{templated: templated, seed: g.rng.Uint64(), style: drawStyle(g.rng),
			site: capitalise(strings.Join(zipfText(g.rng.Uint64(), 2), " ")) + " " + []string{"News", "Daily", "Journal", "Review", "Post"}[i%5]}
		w.hosts = append(w.hosts, h)
		w.byName[h.name] = h
	}
	var articles [][]*resource // each article host's originals
	for _, h := range w.hosts {
		if h.near.templated {
			g.templatedHost(h)
		} else {
			articles = append(articles, g.articleHost(h))
		}
	}
	// Cross-host copies: each article host's first article on the next
	// article host, in that host's template.
	var hosts []*host
	for _, h := range w.hosts {
		if !h.near.templated {
			hosts = append(hosts, h)
		}
	}
	for k, h := range hosts {
		if len(hosts) < 2 {
			break
		}
		orig, to := articles[k][0], hosts[(k+1)%len(hosts)]
		c := g.page(to, "/syndicated/"+slugOf(orig), "cross-host copy")
		c.dupOf, c.near = orig, true
		s := *orig.body.near
		s.edit, s.change, s.ad, s.reorder = 0, NearChangeCrossHost, c.seed, 0
		s.list, s.listHead = []nearLink{{"Home", to.near.home}}, "More from us"
		s.also = []nearLink{{"Originally published by " + h.near.site, orig}}
		c.body = &bodySpec{seed: c.seed, title: orig.body.title, near: &s}
		to.near.partners = append(to.near.partners, c)
	}
	for i, h := range w.hosts {
		h.near.next = w.hosts[(i+1)%len(w.hosts)].near.home
	}
	for _, h := range w.hosts {
		for _, r := range h.res {
			if r.dupOf != nil && !r.near {
				continue // an exact copy: its original's body
			}
			for _, l := range nearLinks(r) {
				r.body.links = append(r.body.links, link{to: l.to, raw: nearHref(r, l.to), where: inAnchor})
			}
		}
	}
}

// page adds an HTML page at pq to h; its body comes later.
func (g *nearGen) page(h *host, pq, note string) *resource {
	if h.byPQ[pq] != nil {
		panic("testweb: near-duplicate web made " + pq + " twice on " + h.name)
	}
	r := &resource{host: h, pq: pq, kind: kindHTML, status: 200, note: note, seed: g.rng.Uint64()}
	h.res = append(h.res, r)
	h.byPQ[pq] = r
	return r
}

// nearTitle is a headline of n words drawn from seed.
func nearTitle(seed uint64, n int) string {
	ws := zipfText(seed^0x7469_746c_65, n)
	for i := range ws {
		ws[i] = capitalise(ws[i])
	}
	return strings.Join(ws, " ")
}

// slugOf is an article's file name: its title's first three words and
// its place on its host.
func slugOf(r *resource) string {
	ws := strings.Fields(strings.ToLower(r.body.title))
	return strings.Join(ws[:min(3, len(ws))], "-") + "-" + r.note[strings.LastIndexByte(r.note, ' ')+1:] + ".html"
}

var copyDirs = []string{"/print/", "/amp/", "/m/", "/archive/"}

// articleHost makes an article host's pages and returns its originals.
func (g *nearGen) articleHost(h *host) []*resource {
	nh := h.near
	nh.adFirst = g.rng.IntN(2) == 0
	switch g.rng.IntN(3) {
	case 0:
		nh.about = 50 + g.rng.IntN(101)
	case 1:
		nh.footProse = 50 + g.rng.IntN(101)
	}
	home := g.page(h, "/", "home")
	nh.home = home
	home.body = &bodySpec{seed: home.seed, title: nh.site, near: &nearSpec{kind: nearHome, text: home.seed,
		words: 40 + g.rng.IntN(41), listHead: "Latest articles"}}
	n := nearMinArticles + g.rng.IntN(nearMaxArticles-nearMinArticles+1)
	var origs []*resource
	for k := range n {
		r := g.page(h, fmt.Sprintf("/articles/%d.html", k), fmt.Sprintf("article %d", k))
		r.body = &bodySpec{seed: r.seed, title: nearTitle(r.seed, 4+g.rng.IntN(6)), near: &nearSpec{kind: nearArticle,
			text: r.seed, words: nearMinWords + g.rng.IntN(nearMaxWords-nearMinWords+1), ad: g.rng.Uint64(), listHead: "Read next"}}
		// The path names the title, as news sites do.
		delete(h.byPQ, r.pq)
		r.pq = "/articles/" + slugOf(r)
		h.byPQ[r.pq] = r
		origs = append(origs, r)
		home.body.near.list = append(home.body.near.list, nearLink{r.body.title, r})
	}
	for _, r := range origs {
		for range 2 + g.rng.IntN(2) {
			t := origs[g.rng.IntN(len(origs))]
			if t != r && !slices.ContainsFunc(r.body.near.list, func(l nearLink) bool { return l.to == t }) {
				r.body.near.list = append(r.body.near.list, nearLink{t.body.title, t})
			}
		}
	}
	for k := range min(len(origs), 6+g.rng.IntN(7)) {
		label := "Home"
		if k > 0 {
			label = capitalise(nearVocab().words[100+g.rng.IntN(400)])
		}
		to := home
		if k > 0 {
			to = origs[k-1]
		}
		nh.nav = append(nh.nav, nearLink{label, to})
	}
	for _, k := range g.rng.Perm(len(origs))[:5+g.rng.IntN(4)] {
		nh.popular = append(nh.popular, nearLink{origs[k].body.title, origs[k]})
	}
	for _, label := range []string{"About", "Contact", "Advertise", "Privacy", "Terms"}[:3+g.rng.IntN(3)] {
		nh.footer = append(nh.footer, nearLink{label, home})
	}
	copies := 0
	for k, orig := range origs {
		s := orig.body.near
		if k%3 == 1 {
			c := g.page(h, copyDirs[copies%len(copyDirs)]+slugOf(orig), "near copy")
			c.dupOf, c.near = orig, true
			cs := *s
			cs.edit, cs.editSeed = NearEditSizes[(h.idx+copies)%len(NearEditSizes)], c.seed
			if copies%2 == 0 {
				cs.change, cs.ad = NearChangeAd, c.seed^0x6164
			} else {
				cs.change, cs.reorder = NearChangePopular, c.seed|1
			}
			c.body = &bodySpec{seed: c.seed, title: orig.body.title, near: &cs}
			s.also = append(s.also, nearLink{[]string{"Printable version", "Mobile version", "Lite version", "Archived copy"}[copies%4], c})
			copies++
		}
		if k%7 == 3 {
			c := g.page(h, fmt.Sprintf("/story/%d", 1000+k), "exact copy")
			c.dupOf = orig
			s.also = append(s.also, nearLink{"Permalink", c})
		}
	}
	// Copies share their original's links, its "also" list included.
	for _, r := range h.res {
		if r.dupOf != nil {
			if r.near {
				r.body.near.also = r.dupOf.body.near.also
			} else {
				r.body = r.dupOf.body
			}
		}
	}
	return origs
}

// templated host's shared template: its prose blocks and their words.
var templatedBlocks = []struct {
	role, head string
	words      int
}{
	{"notice", "", 130},
	{"aside", "About us", 450},
	{"aside", "From the editor", 300},
	{"aside", "Newsletter", 120},
	{"footer", "Legal notice", 550},
	{"footer", "Privacy", 450},
	{"footer", "Visit us", 40},
}

// templatedHost makes a templated host's pages.
func (g *nearGen) templatedHost(h *host) {
	nh := h.near
	home := g.page(h, "/", "home")
	nh.home = home
	home.body = &bodySpec{seed: home.seed, title: nh.site, near: &nearSpec{kind: nearHome, text: home.seed,
		words: templatedMinBody + g.rng.IntN(templatedMaxBody-templatedMinBody+1), listHead: "Latest"}}
	sections := zipfText(nh.seed^0x7365_6374, 4)
	n := nearMinTemplated + g.rng.IntN(nearMaxTemplated-nearMinTemplated+1)
	var pages []*resource
	for k := range n {
		r := g.page(h, fmt.Sprintf("/%s/%d/", sections[k%4], k), "templated")
		r.body = &bodySpec{seed: r.seed, title: nearTitle(r.seed, 4+g.rng.IntN(5)), near: &nearSpec{kind: nearTemplatedPage,
			text: r.seed, words: templatedMinBody + g.rng.IntN(templatedMaxBody-templatedMinBody+1), listHead: "Read next"}}
		delete(h.byPQ, r.pq)
		ws := strings.Fields(strings.ToLower(r.body.title))
		r.pq = fmt.Sprintf("/%s/%s-%d/", sections[k%4], strings.Join(ws[:3], "-"), k)
		h.byPQ[r.pq] = r
		pages = append(pages, r)
	}
	for k := range 3 {
		home.body.near.list = append(home.body.near.list, nearLink{pages[k].body.title, pages[k]})
	}
	for k, r := range pages {
		for c := 3*k + 3; c < min(3*k+6, n); c++ {
			r.body.near.list = append(r.body.near.list, nearLink{pages[c].body.title, pages[c]})
		}
	}
	nh.nav = append(nh.nav, nearLink{"Home", home})
	for k := range 8 {
		nh.nav = append(nh.nav, nearLink{capitalise(nearVocab().words[100+int((nh.seed>>k)%400)]), pages[k]})
	}
	for k := range 10 {
		nh.popular = append(nh.popular, nearLink{pages[k].body.title, pages[k]})
	}
	for _, label := range []string{"About", "Contact", "Imprint", "Privacy", "Terms", "Careers",
		"Advertise", "Press", "Help", "Sitemap", "Feeds", "Jobs"} {
		nh.footer = append(nh.footer, nearLink{label, home})
	}
}

// nearLinks lists the links page r renders, in order.
func nearLinks(r *resource) []nearLink {
	nh, s := r.host.near, r.body.near
	var out []nearLink
	out = append(out, nh.nav...)
	out = append(out, s.list...)
	if s.kind == nearHome {
		for _, p := range nh.partners {
			out = append(out, nearLink{p.body.title, p})
		}
		out = append(out, nearLink{"Elsewhere: " + nh.next.body.title, nh.next})
	}
	out = append(out, s.also...)
	out = append(out, popularOf(r)...)
	out = append(out, nh.footer...)
	return out
}

// popularOf is r's popular list, reordered if r is a copy so changed.
func popularOf(r *resource) []nearLink {
	pop, s := r.host.near.popular, r.body.near
	if s.reorder == 0 || len(pop) < 2 {
		return pop
	}
	out := slices.Clone(pop)
	rng := rand.New(rand.NewPCG(s.reorder, 14))
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	if slices.Equal(out, pop) {
		out = append(out[1:], out[0])
	}
	return out
}

// nearHref is the href page r writes for t.
func nearHref(r, t *resource) string {
	if t.host == r.host {
		return t.pq
	}
	return "http://" + t.host.name + portToken + t.pq
}

// articleWords are the words of a near-duplicate web's article (or a
// templated page's own text), after its edit: round(edit × words)
// positions drawn at random, each given another word.
func articleWords(s *nearSpec) []string {
	ws := zipfText(s.text, s.words)
	if k := int(math.Round(s.edit * float64(len(ws)))); k > 0 {
		rng, z := rand.New(rand.NewPCG(s.editSeed, 13)), nearVocab()
		for _, i := range rng.Perm(len(ws))[:k] {
			ws[i] = z.drawNot(rng, ws[i])
		}
	}
	return ws
}

// writeProse writes words as text: sentences of 6 to 22 words, in
// paragraphs of about para words (in <p>, or lines broken by <br> if
// bare). The layout comes from seed alone, so that an edit of the words
// keeps it.
func writeProse(sb *strings.Builder, ws []string, seed uint64, para int, bare bool) {
	rng := rand.New(rand.NewPCG(seed, 12))
	start := true
	inPara := 0
	sentence := 6 + rng.IntN(17)
	for i, w := range ws {
		if inPara == 0 {
			if bare {
				if i > 0 {
					sb.WriteString("<br>\n")
				}
			} else {
				sb.WriteString("<p>")
			}
		} else {
			sb.WriteByte(' ')
		}
		if start {
			w = capitalise(w)
			start = false
		}
		sb.WriteString(w)
		inPara++
		sentence--
		last := i == len(ws)-1
		switch {
		case sentence == 0 || last:
			sb.WriteByte('.')
			start, sentence = true, 6+rng.IntN(17)
			if inPara >= para/2+rng.IntN(para+1) || last {
				if !bare {
					sb.WriteString("</p>\n")
				}
				inPara = 0
			}
		case rng.IntN(12) == 0:
			sb.WriteByte(',')
		}
	}
	if bare && len(ws) > 0 {
		sb.WriteString("\n")
	}
}

// renderNear renders a page of the near-duplicate web.
func (w *Web) renderNear(r *resource) []byte {
	nh, s, st := r.host.near, r.body.near, r.host.near.style
	var sb strings.Builder
	sb.Grow(16 << 10)
	a := func(l nearLink) string {
		return fmt.Sprintf(`<a href="%s">%s</a>`, html.EscapeString(w.withPort(nearHref(r, l.to))), html.EscapeString(l.label))
	}
	list := func(cls string, head string, ls []nearLink) {
		if len(ls) == 0 {
			return
		}
		fmt.Fprintf(&sb, "<div class=\"%s\">\n", cls)
		if head != "" {
			fmt.Fprintf(&sb, "<h3>%s</h3>\n", head)
		}
		sb.WriteString("<ul>\n")
		for _, l := range ls {
			fmt.Fprintf(&sb, "<li>%s</li>\n", a(l))
		}
		sb.WriteString("</ul>\n</div>\n")
	}
	prose := func(head string, seed uint64, n int) {
		sb.WriteString(st.open("prose") + "\n")
		if head != "" {
			fmt.Fprintf(&sb, "<h3>%s</h3>\n", head)
		}
		writeProse(&sb, zipfText(seed, n), seed, 150, st.bare)
		sb.WriteString(st.close("prose") + "\n")
	}
	fmt.Fprintf(&sb, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>%s</title>\n</head>\n<body>\n",
		html.EscapeString(r.body.title+" | "+nh.site))
	sb.WriteString(st.open("header") + "\n")
	fmt.Fprintf(&sb, "<p class=\"site-name\">%s</p>\n", html.EscapeString(nh.site))
	if nh.templated {
		fmt.Fprintf(&sb, "<p class=\"tagline\">%s</p>\n", capitalise(strings.Join(zipfText(nh.seed^0x7461, 10), " ")))
	}
	sb.WriteString(st.open("nav") + "\n<ul>\n")
	for _, l := range nh.nav {
		fmt.Fprintf(&sb, "<li>%s</li>\n", a(l))
	}
	sb.WriteString("</ul>\n" + st.close("nav") + "\n" + st.close("header") + "\n")
	for k, b := range templatedBlocks {
		if nh.templated && b.role == "notice" {
			prose(b.head, nh.seed+uint64(k), b.words)
		}
	}
	sb.WriteString(st.open("main") + "\n")
	ad := func() {
		if nh.templated || s.kind != nearArticle {
			return
		}
		rng := rand.New(rand.NewPCG(s.ad, 15))
		ws := zipfText(s.ad, 10+rng.IntN(11))
		fmt.Fprintf(&sb, "%s\n<p>Sponsored: %s.</p>\n<a href=\"https://sponsor%d.example/offer/%d\">Learn more</a>\n%s\n",
			st.open("ad"), capitalise(strings.Join(ws, " ")), rng.IntN(50), rng.IntN(100000), st.close("ad"))
	}
	if nh.adFirst {
		ad()
	}
	sb.WriteString(st.open("article") + "\n")
	fmt.Fprintf(&sb, "<h1>%s</h1>\n", html.EscapeString(r.body.title))
	para := 80
	if s.kind == nearTemplatedPage {
		para = 60
	}
	writeProse(&sb, articleWords(s), s.text, para, false)
	sb.WriteString(st.close("article") + "\n")
	if s.kind == nearHome {
		var ps []nearLink
		for _, p := range nh.partners {
			ps = append(ps, nearLink{p.body.title, p})
		}
		list("latest", s.listHead, s.list)
		list("partners", "From our partners", ps)
		list("elsewhere", "", []nearLink{{"Elsewhere: " + nh.next.body.title, nh.next}})
	} else {
		list("related", s.listHead, s.list)
	}
	if len(s.also) > 0 {
		sb.WriteString("<p class=\"versions\">")
		for i, l := range s.also {
			if i > 0 {
				sb.WriteString(" | ")
			}
			sb.WriteString(a(l))
		}
		sb.WriteString("</p>\n")
	}
	if !nh.adFirst {
		ad()
	}
	sb.WriteString(st.close("main") + "\n" + st.open("aside") + "\n")
	if nh.templated {
		for k, b := range templatedBlocks {
			if b.role == "aside" {
				prose(b.head, nh.seed+uint64(k), b.words)
				if b.head == "About us" {
					list("popular", "Popular", popularOf(r))
				}
			}
		}
		sb.WriteString("<div class=\"tags\">\n")
		for _, t := range zipfText(nh.seed^0x7461_6773, 40) {
			fmt.Fprintf(&sb, "<span>%s</span>\n", t)
		}
		sb.WriteString("</div>\n")
	} else {
		list("popular", "Popular", popularOf(r))
		if nh.about > 0 {
			prose("About this site", nh.seed^0x6162, nh.about)
		}
	}
	sb.WriteString(st.close("aside") + "\n" + st.open("footer") + "\n")
	if nh.templated {
		for k, b := range templatedBlocks {
			if b.role == "footer" {
				prose(b.head, nh.seed+uint64(k), b.words)
			}
		}
	} else if nh.footProse > 0 {
		prose("", nh.seed^0x666f, nh.footProse)
	}
	sb.WriteString("<ul class=\"footer-links\">\n")
	for _, l := range nh.footer {
		fmt.Fprintf(&sb, "<li>%s</li>\n", a(l))
	}
	fmt.Fprintf(&sb, "</ul>\n<p>&copy; 2025 %s</p>\n%s\n</body>\n</html>\n", html.EscapeString(nh.site), st.close("footer"))
	return []byte(sb.String())
}
