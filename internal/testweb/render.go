package testweb

import (
	"bytes"
	"fmt"
	"html"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
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
// render byte-identical pages; a near duplicate (variant 1) differs in the
// first word of three paragraphs.
func (w *Web) renderHTML(r *resource) []byte {
	b := r.body
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
		return fmt.Sprintf(`<a href="%s"%s>%s</a>`, html.EscapeString(w.withPort(l.raw)), rel, text)
	}
	sb.WriteString("<header>\n<nav class=\"site\">\n<ul>\n")
	nav := min(5, len(anchors))
	for _, l := range anchors[:nav] {
		fmt.Fprintf(&sb, "<li>%s</li>\n", anchor(l))
	}
	anchors = anchors[nav:]
	sb.WriteString("</ul>\n</nav>\n</header>\n<main>\n")
	fmt.Fprintf(&sb, "<h1>%s</h1>\n", b.title)

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
		if b.variant != 0 && (para == 1 || para == 3 || para == 5) {
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
	if len(anchors) > 0 {
		sb.WriteString("<ul class=\"related\">\n")
		for _, l := range anchors {
			fmt.Fprintf(&sb, "<li>%s</li>\n", anchor(l))
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
