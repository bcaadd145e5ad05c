package testweb

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"html"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"path"
	"slices"
	"strings"
)

// vocabulary is the fixed word list page text is drawn from.
var vocabulary = strings.Fields(`
	harbour lantern meadow copper orbit quiet river signal timber velvet
	window anchor basket candle dancer engine feather garden hollow island
	jacket kettle ladder marble needle orchard pepper quartz ribbon saddle
	thunder umbrella valley walnut yonder zephyr amber bridge canyon delta
	ember falcon glacier horizon ivory jasmine kernel lagoon mosaic nectar
	oyster pebble quiver rapids summit tundra urchin vortex willow axis
	yield zenith acorn bramble cobalt dune estuary fjord granite heather
	inlet juniper kelp lichen marsh nettle opal prairie quill reef spruce
	tide upland vale wharf yarrow alder birch cedar dogwood elm fir hazel
	larch maple oak pine rowan sorrel teak yew crawl fetch index archive
	record header request response server client socket packet router
	gateway proxy cache buffer stream channel thread worker queue budget
	schedule window policy ledger journal chapter section paragraph margin
	footnote appendix summary preface outline draft review edition volume
	the a of and to in is was for on with as by at from that this which
	it be are were has had not but or an its their our some many few more
	most other such only own same so than too very can will just should
	now then once here there when where why how all any both each every
`)

func sentenceWords(rng *rand.Rand, n int) []string {
	return appendWords(make([]string, 0, n), rng, n)
}

func appendWords(dst []string, rng *rand.Rand, n int) []string {
	for range n {
		dst = append(dst, vocabulary[rng.IntN(len(vocabulary))])
	}
	return dst
}

func capitalise(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// titleWords is a page title drawn from seed.
func titleWords(seed uint64) string {
	rng := rand.New(rand.NewPCG(seed, 1))
	ws := sentenceWords(rng, 3+rng.IntN(3))
	for i := range ws {
		ws[i] = capitalise(ws[i])
	}
	return strings.Join(ws, " ")
}

// renderHTML renders an HTML page. Exact duplicates share a bodySpec and so
// render byte-identical pages; a near duplicate differs from its original
// as its variant says: the first word of three paragraphs, one more line
// (a date and a view counter), or its links.
func (w *Web) renderHTML(r *resource) []byte { return w.renderPage(r, "") }

// renderPage renders an HTML page whose links to its own host carry
// session ID sid (written as the host's session kind says), or none if
// sid is "".
func (w *Web) renderPage(r *resource, sid string) []byte {
	b := r.body
	if b.near != nil {
		return w.renderNear(r)
	}
	if b.template != 0 {
		return w.renderLookalike(r)
	}
	if b.paged != nil {
		return w.renderPaged(r)
	}
	rng := rand.New(rand.NewPCG(b.seed, 2))
	var sb strings.Builder
	sb.Grow(b.size + 8<<10)
	fmt.Fprintf(&sb, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>%s</title>\n", b.title)
	if b.base != "" {
		fmt.Fprintf(&sb, "<base href=\"%s\">\n", html.EscapeString(w.withPort(b.base)))
	}
	sb.WriteString("<meta name=\"viewport\" content=\"width=device-width\">\n</head>\n<body>\n")

	var anchors, comments, scripts, footers []link
	for _, l := range b.links {
		switch l.where {
		case inAnchor:
			anchors = append(anchors, l)
		case inComment:
			comments = append(comments, l)
		case inScript:
			scripts = append(scripts, l)
		case inFooter:
			footers = append(footers, l)
		}
	}
	anchor := func(l link) string {
		rel := ""
		if l.nofollow {
			rel = ` rel="nofollow"`
		}
		text := strings.Join(sentenceWords(rng, 1+rng.IntN(3)), " ")
		raw := l.raw
		if sid != "" && l.to != nil && l.to.host == r.host {
			raw = withSession(raw, r.host.session, sid)
		}
		return fmt.Sprintf(`<a href="%s"%s>%s</a>`, html.EscapeString(w.withPort(raw)), rel, text)
	}
	sb.WriteString("<header>\n<nav class=\"site\">\n<ul>\n")
	nav := min(5, len(anchors))
	for _, l := range anchors[:nav] {
		fmt.Fprintf(&sb, "<li>%s</li>\n", anchor(l))
	}
	anchors = anchors[nav:]
	sb.WriteString("</ul>\n</nav>\n</header>\n<main>\n")
	fmt.Fprintf(&sb, "<h1>%s</h1>\n", b.title)
	if b.variant == variantCounter {
		fmt.Fprintf(&sb, "<p class=\"meta\">Updated 2025-06-%02d, %d views</p>\n", 1+b.seed%28, 1000+b.seed%9000)
	}

	var ws []string
	text := 0 // bytes of text so far, independent of link spellings and variants
	for para := 0; text < b.size; para++ {
		if para%3 == 0 {
			h := strings.Join(sentenceWords(rng, 2+rng.IntN(4)), " ")
			fmt.Fprintf(&sb, "<h2 id=\"sec%d\">%s</h2>\n", para/3+1, capitalise(h))
			text += len(h) + 20
		}
		ws = appendWords(ws[:0], rng, 40+rng.IntN(80))
		for _, wd := range ws {
			text += len(wd) + 1
		}
		if b.variant == variantWords && (para == 1 || para == 3 || para == 5) {
			ws[0] = "revised"
		}
		ws[0] = capitalise(ws[0])
		sb.WriteString("<p>")
		cut := len(ws) / 2
		for i, wd := range ws {
			if i > 0 {
				sb.WriteByte(' ')
			}
			if i == cut && len(anchors) > 0 {
				sb.WriteString(anchor(anchors[0]))
				sb.WriteByte(' ')
				anchors = anchors[1:]
			}
			sb.WriteString(wd)
		}
		sb.WriteString(".</p>\n")
	}
	if len(anchors) > 0 || b.variant == variantLinks {
		sb.WriteString("<ul class=\"related\">\n")
		for _, l := range anchors {
			fmt.Fprintf(&sb, "<li>%s</li>\n", anchor(l))
		}
		if b.variant == variantLinks {
			sb.WriteString("<li><a href=\"/\">More from this site</a></li>\n")
		}
		sb.WriteString("</ul>\n")
	}
	sb.WriteString("</main>\n")
	for _, l := range comments {
		fmt.Fprintf(&sb, "<!-- retired: <a href=\"%s\">old page</a> -->\n", w.withPort(l.raw))
	}
	for _, l := range scripts {
		fmt.Fprintf(&sb, "<script>\nvar next = \"%s\";\nfunction go() { window.location = next; }\n</script>\n", w.withPort(l.raw))
	}
	sb.WriteString("<footer>\n<p>")
	for _, l := range footers {
		sb.WriteString(anchor(l) + " ")
	}
	fmt.Fprintf(&sb, "&copy; 2025 %s</p>\n</footer>\n</body>\n</html>\n", r.host.name)
	return []byte(sb.String())
}

// renderCalendar renders trap page /calendar/year/month: it links to the
// previous and the next month, forever.
func (w *Web) renderCalendar(h *host, year, month int) []byte {
	py, pm, ny, nm := year, month-1, year, month+1
	if pm == 0 {
		py, pm = year-1, 12
	}
	if nm == 13 {
		ny, nm = year+1, 1
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "<!DOCTYPE html>\n<html><head><title>Calendar %04d-%02d</title></head><body>\n", year, month)
	fmt.Fprintf(&sb, "<h1>Events in %04d-%02d</h1>\n<table>\n", year, month)
	for d := 1; d <= 28; d += 7 {
		sb.WriteString("<tr>")
		for k := range 7 {
			fmt.Fprintf(&sb, "<td>%d</td>", d+k)
		}
		sb.WriteString("</tr>\n")
	}
	fmt.Fprintf(&sb, "</table>\n<p><a href=\"../%04d/%02d\">previous month</a> | <a href=\"/calendar/%04d/%02d\">next month</a></p>\n", py, pm, ny, nm)
	fmt.Fprintf(&sb, "<p><a href=\"http://%s\">home</a></p>\n</body></html>\n", w.withPort(h.name+portToken+"/"))
	return []byte(sb.String())
}

// withSession writes session ID sid into href raw (before its query or
// fragment as kind says): "a.html#top" becomes "a.html;jsessionid=SID#top"
// or "a.html?sid=SID#top".
func withSession(raw string, kind sessionKind, sid string) string {
	rest, frag, hasFrag := strings.Cut(raw, "#")
	p, q, hasQ := strings.Cut(rest, "?")
	switch kind {
	case sessionPath:
		p += ";" + sessionParamPath + "=" + sid
	case sessionQuery:
		if hasQ && q != "" {
			q += "&"
		}
		q += sessionParamQuery + "=" + sid
		hasQ = true
	}
	out := p
	if hasQ {
		out += "?" + q
	}
	if hasFrag {
		out += "#" + frag
	}
	return out
}

// lookalikeTemplateWords and lookalikeOwnWords size a lookalike page: the
// boilerplate it shares with its pair and the text of its own.
const lookalikeTemplateWords, lookalikeOwnWords = 320, 110

// renderLookalike renders a page of a lookalike pair: the host's template
// (a header, a notice and a footer, the same on both pages) around a short
// text of its own.
func (w *Web) renderLookalike(r *resource) []byte {
	b := r.body
	trng := rand.New(rand.NewPCG(b.template, 6))
	own := rand.New(rand.NewPCG(b.seed, 7))
	var sb strings.Builder
	fmt.Fprintf(&sb, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>%s</title>\n</head>\n<body>\n<header>\n", b.title)
	para := func(rng *rand.Rand, n int) {
		ws := sentenceWords(rng, n)
		ws[0] = capitalise(ws[0])
		sb.WriteString("<p>" + strings.Join(ws, " ") + ".</p>\n")
	}
	half := lookalikeTemplateWords / 2
	para(trng, half)
	for _, l := range b.links {
		if l.where == inAnchor {
			fmt.Fprintf(&sb, "<a href=\"%s\">home</a>\n", html.EscapeString(w.withPort(l.raw)))
		}
	}
	fmt.Fprintf(&sb, "</header>\n<main>\n<h1>%s</h1>\n", b.title)
	for n := lookalikeOwnWords; n > 0; n -= 60 {
		para(own, min(n, 60))
	}
	sb.WriteString("</main>\n<footer>\n")
	para(trng, lookalikeTemplateWords-half)
	fmt.Fprintf(&sb, "&copy; 2025 %s\n</footer>\n</body>\n</html>\n", r.host.name)
	return []byte(sb.String())
}

// renderShop renders a filtered listing of h's shop: the products that
// match every filter in query (name and value pairs in click order), and
// a link for every filter not yet chosen that adds it to the query.
func (w *Web) renderShop(h *host, query [][2]string) []byte {
	var sb strings.Builder
	var chosen []string
	set := make(map[string]string, len(query))
	for _, kv := range query {
		chosen = append(chosen, kv[0]+"="+kv[1])
		set[kv[0]] = kv[1]
	}
	fmt.Fprintf(&sb, "<!DOCTYPE html>\n<html><head><title>Shop: %s</title></head><body>\n", html.EscapeString(strings.Join(chosen, ", ")))
	fmt.Fprintf(&sb, "<h1>Products filtered by %s</h1>\n<ul class=\"products\">\n", html.EscapeString(strings.Join(chosen, ", ")))
	n := 0
	for i, it := range h.shopItems {
		if shopMatch(h, i+1, set) {
			fmt.Fprintf(&sb, "<li><a href=\"%s\">Product %d</a></li>\n", path.Base(it.pq), i+1)
			n++
		}
	}
	if n == 0 {
		sb.WriteString("<li>No products match these filters.</li>\n")
	}
	sb.WriteString("</ul>\n<nav class=\"filters\">\n")
	base := "?" + strings.Join(chosen, "&")
	for _, f := range facets {
		if _, ok := set[f.name]; ok {
			continue
		}
		for _, v := range f.values {
			fmt.Fprintf(&sb, "<a href=\"%s\">%s: %s</a>\n", html.EscapeString(base+"&"+f.name+"="+v), f.name, v)
		}
	}
	fmt.Fprintf(&sb, "</nav>\n<p><a href=\"http://%s\">home</a></p>\n</body></html>\n", w.withPort(h.name+portToken+"/"))
	return []byte(sb.String())
}

// shopAttr is the value of facet f for product i of h's shop ("" for the
// sort facet, which every product matches).
func shopAttr(h *host, i, f int) string {
	if facets[f].name == "sort" {
		return ""
	}
	vs := facets[f].values
	return vs[(i*(3+2*f)+h.idx+f)%len(vs)]
}

// shopMatch reports whether product i of h's shop matches the filters.
func shopMatch(h *host, i int, set map[string]string) bool {
	for f := range facets {
		if v, ok := set[facets[f].name]; ok && facets[f].name != "sort" && shopAttr(h, i, f) != v {
			return false
		}
	}
	return true
}

// parseShopQuery reads a filtered listing's query as the request wrote
// it (click order): every name a facet, at most once, with one of its
// values. ok is false otherwise; tracking parameters are ignored.
func parseShopQuery(raw string) (query [][2]string, ok bool) {
	seen := map[string]bool{}
	for kv := range strings.SplitSeq(raw, "&") {
		if kv == "" {
			continue
		}
		k, v, _ := strings.Cut(canonEscapes(kv), "=")
		if isTracking(k) {
			continue
		}
		i := slices.IndexFunc(facets, func(f facet) bool { return f.name == k })
		if i < 0 || seen[k] || !slices.Contains(facets[i].values, v) {
			return nil, false
		}
		seen[k] = true
		query = append(query, [2]string{k, v})
	}
	return query, len(query) > 0
}

// renderGrow renders a page of the growing path at p (a path under
// /grow/ ending in '/'): two relative links that resolve below it.
func (w *Web) renderGrow(h *host, p string) []byte {
	var sb strings.Builder
	fmt.Fprintf(&sb, "<!DOCTYPE html>\n<html><head><title>Browse %s</title></head><body>\n", html.EscapeString(p))
	fmt.Fprintf(&sb, "<h1>Browsing %s</h1>\n<p>There is always more below this page.</p>\n", html.EscapeString(p))
	sb.WriteString("<p><a href=\"more/\">more</a> | <a href=\"./next/x/\">next</a></p>\n")
	fmt.Fprintf(&sb, "<p><a href=\"http://%s\">home</a></p>\n</body></html>\n", w.withPort(h.name+portToken+"/"))
	return []byte(sb.String())
}

// soft404Links is how many further missing paths a soft-404 page links.
const soft404Links = 3

// renderSoft404 renders the page a soft-404 host answers an unknown path
// pq with (status 200): "not found", the path, and relative links to a
// few more paths that do not exist, named after pq so that they are new.
func (w *Web) renderSoft404(h *host, pq string) []byte {
	var sb strings.Builder
	sb.WriteString("<!DOCTYPE html>\n<html><head><title>Page not found</title></head><body>\n")
	fmt.Fprintf(&sb, "<h1>Page not found</h1>\n<p>Sorry, we could not find %s. It may have moved. Try one of these pages instead:</p>\n<ul>\n", html.EscapeString(pq))
	sum := fnv.New64a()
	sum.Write([]byte(pq))
	x := sum.Sum64()
	for k := range soft404Links {
		fmt.Fprintf(&sb, "<li><a href=\"missing-%d.html\">a page you may like</a></li>\n", (x>>(16*k))%100000)
	}
	fmt.Fprintf(&sb, "</ul>\n<p><a href=\"http://%s\">home</a></p>\n</body></html>\n", w.withPort(h.name+portToken+"/"))
	return []byte(sb.String())
}

// renderPDF renders a small, plausible PDF.
func renderPDF(seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 3))
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n")
	for i := range 40 {
		fmt.Fprintf(&b, "%% %d %s\n", i, strings.Join(sentenceWords(rng, 8), " "))
	}
	b.WriteString("trailer\n<< /Root 1 0 R >>\n%%EOF\n")
	return b.Bytes()
}

// renderPNG renders a small grey-scale PNG.
func renderPNG(seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 4))
	img := image.NewGray(image.Rect(0, 0, 32, 32))
	for i := range img.Pix {
		img.Pix[i] = uint8(rng.IntN(256))
	}
	img.Set(0, 0, color.Gray{Y: 0})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		panic("testweb: encode png: " + err.Error()) // cannot happen with a bytes.Buffer
	}
	return b.Bytes()
}

// hostileJunkBody is malformed HTML: unclosed tags, stray brackets, NULs.
func hostileJunkBody(seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 5))
	var b bytes.Buffer
	b.WriteString("<html><head><title>broken<body><div><p>unclosed <a href=\"/deeper.html\">deeper<table><tr><td>")
	for b.Len() < 30<<10 {
		switch rng.IntN(6) {
		case 0:
			b.WriteString("<<<div>>> </p></p></span><b><i><u>")
		case 1:
			b.Write([]byte{0, 0xff, 0xfe, '<', '!', '-', '-'})
		case 2:
			b.WriteString("<a href='javascript:alert(1)' <a href=\"/also.html\">")
		default:
			b.WriteString(strings.Join(sentenceWords(rng, 12), " ") + " ")
		}
	}
	return b.Bytes()
}
