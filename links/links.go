// Package links extracts raw link references and page-level directives (base
// href, canonical, title, meta robots, the use-stating meta elements) from an
// HTML document, and reads the X-Robots-Tag response header.
//
// It is pure: no I/O, no global state, safe for concurrent use. It never
// panics on malformed input, scans the whole body it is given, returns at most
// Options.MaxLinks links, and never returns a Ref that is empty or has leading
// or trailing ASCII whitespace. Refs are returned as written; resolving them
// against the page URL and Page.BaseHref is the caller's job.
//
// A body is read in the encoding a browser would pick (Decode: byte order
// mark, Content-Type charset, <meta>, default) and everything returned is
// in UTF-8. So a non-ASCII query in a link on, say, a Shift_JIS page is
// percent-encoded as UTF-8 by the URL parser, as most crawlers do, where a
// browser would encode it in the page's encoding (WHATWG URL, "query state");
// paths are UTF-8 either way, and escapes written in the page are kept.
package links

import (
	"bytes"
	"errors"
	"fmt"
	"unicode/utf8"

	"golang.org/x/net/html"

	"github.com/trawl-crawler/trawl/internal/htmltok"
	"github.com/trawl-crawler/trawl/simhash"
)

// DefaultMaxLinks is the number of links Extract returns at most when
// Options.MaxLinks is zero.
const DefaultMaxLinks = 10000

// MaxTitleBytes caps the length of Page.Title in bytes.
const MaxTitleBytes = 1024

// MaxMetas caps len(Page.Metas); MaxMetaContentBytes caps each content
// kept (a longer one is cut on a UTF-8 boundary and marked Truncated).
const (
	MaxMetas            = 64
	MaxMetaContentBytes = 4096
)

// Meta is one <meta name=... content=...> element that states how the
// page may be used: name "robots", the agent's own name
// (Options.Agent), "tdm-reservation" or "tdm-policy" (W3C TDMRep), each
// compared ignoring ASCII case.
type Meta struct {
	// Name is the name attribute, trimmed, in its case as written.
	Name string
	// Content is the content attribute with entities decoded, in UTF-8,
	// otherwise as written (not trimmed).
	Content string
	// Truncated is set when Content was cut at MaxMetaContentBytes.
	Truncated bool
}

// Link is one outgoing reference found in a page.
//
// These elements and attributes produce links: a[href], area[href],
// link[href] (every rel, including stylesheet and icon: Rel tells the caller
// what it is), iframe[src], frame[src], and the URL of
// <meta http-equiv=refresh content="N; url=...">, reported with Tag "meta".
//
// Refs that are empty after trimming, or whose scheme is javascript:, mailto:,
// tel: or data: (case-insensitive, ignoring the tabs and newlines a URL parser
// would strip), are skipped here so they never count towards MaxLinks. Every
// other ref, including fragment-only ones such as "#top", is kept; scheme and
// syntax checks beyond that are left to the URL parser.
type Link struct {
	// Ref is the attribute value with entities decoded and leading and
	// trailing ASCII whitespace removed, as HTML does, in UTF-8 whatever
	// the page's encoding (Decode; a page read as UTF-8 yields invalid
	// bytes as they are). It is not resolved and never empty.
	Ref string
	// Tag is the element the link came from: "a", "area", "link", "iframe",
	// "frame" or "meta".
	Tag string
	// Rel is the rel attribute of a, area or link, ASCII lower-cased, with
	// runs of whitespace collapsed to one space and trimmed. Empty if absent
	// and for the other tags.
	Rel string
	// NoFollow is true if Rel contains the token "nofollow", or if the page as
	// a whole is nofollow (Page.NoFollow).
	NoFollow bool
}

// Page is what Extract found in one HTML document.
type Page struct {
	// Links are the distinct links in document order. A link equal in every
	// field to one already in Links is not repeated.
	Links []Link
	// BaseHref is the trimmed href of the first <base> element that has an
	// href attribute (later ones are ignored, as in HTML). Empty if none, or
	// if that href is empty.
	BaseHref string
	// Canonical is the trimmed href of the first <link> whose rel contains
	// the token "canonical" and whose href is not empty; raw, not resolved.
	Canonical string
	// Title is the text of the first <title> outside <svg> and <math>, with
	// entities decoded, ASCII whitespace collapsed to single spaces and
	// trimmed, and capped at MaxTitleBytes (cut on a UTF-8 boundary).
	Title string
	// NoIndex and NoFollow come from <meta name=robots content=...> and
	// <meta name=AGENT content=...>: tokens "noindex", "nofollow" and "none"
	// (both), case-insensitive, separated by commas or whitespace. Any
	// matching meta element in the document sets them; none clears them.
	NoIndex, NoFollow bool
	// Metas are the use-stating <meta> elements (Meta) in document order,
	// at most MaxMetas; those beyond are counted in MetasDropped.
	Metas        []Meta
	MetasDropped int
	// SimHash is simhash.HTML of the body, if Options.SimHash asked for it.
	SimHash uint64
	// Content is the body's main text, as simhash.HTMLContent reads it, if
	// Options.SimHash asked for it (nil otherwise).
	Content *simhash.Content
	// Encoding is the WHATWG name of the encoding the body was read in,
	// e.g. "utf-8", "windows-1252", "shift_jis", "utf-16le" (Decode).
	Encoding string
	// Dropped counts links found after Links reached MaxLinks. Duplicates of a
	// link already in Links are not counted; repeats of a dropped link are
	// counted each time.
	Dropped int
	// Requisites are the distinct resources the page embeds (requisites.go),
	// in document order, if Options.Requisites asked for them; a link
	// element's stylesheet or icon is in Links too.
	Requisites []Link
	// RequisitesDropped counts requisites found after Requisites reached
	// MaxRequisites.
	RequisitesDropped int
}

// Options tunes ExtractWith.
type Options struct {
	// Agent is the crawler's product token (robots.ProductToken of its
	// User-Agent), e.g. "trawl". <meta name=AGENT>
	// is read like <meta name=robots>, case-insensitively. If empty, only
	// name=robots counts.
	Agent string
	// MaxLinks caps len(Page.Links). If zero (or negative, which Validate
	// reports), DefaultMaxLinks is used.
	MaxLinks int
	// SimHash also reads the page's main text in the same pass
	// (Page.Content and its fingerprint Page.SimHash, equal to
	// simhash.HTMLContent and simhash.HTML of the decoded body: Decode).
	SimHash bool
	// ContentType is the Content-Type header the body came with, "" if
	// none. Its charset parameter names the body's encoding unless the
	// body starts with a byte order mark (Decode).
	ContentType string
	// Requisites also collects the resources the page embeds
	// (Page.Requisites): images, stylesheets, scripts, media, frames and
	// the url()s of its styles. Off, attributes of elements that are not
	// links are not read.
	Requisites bool
}

// Validate reports every bad field of o by name.
func (o Options) Validate() error {
	var errs []error
	if o.MaxLinks < 0 {
		errs = append(errs, fmt.Errorf("links: options: MaxLinks = %d, want >= 0", o.MaxLinks))
	}
	if o.Agent != "" && !isProductToken(o.Agent) {
		errs = append(errs, fmt.Errorf("links: options: Agent = %q: not a product token (robots.ProductToken: letters, '_' and '-')", o.Agent))
	}
	return errors.Join(errs...)
}

func (o Options) withDefaults() Options {
	if o.MaxLinks <= 0 {
		o.MaxLinks = DefaultMaxLinks
	}
	return o
}

// Extract is ExtractWith with the given agent and the default MaxLinks.
func Extract(body []byte, agent string) Page {
	return ExtractWith(body, Options{Agent: agent})
}

// ExtractWith decodes body to UTF-8 as a browser would (Decode, with
// Options.ContentType), tokenizes it as HTML and returns its links and
// directives. The caller caps body; all of it is scanned.
//
// Links inside comments, <script>, <style>, <textarea>, <title>, <xmp>,
// <iframe> content, <noembed> and after <plaintext> are text, not links. The
// content of <noscript> and <noframes> is parsed as markup: a crawler runs no
// scripts and shows no frames, so that fallback content is what it sees.
func ExtractWith(body []byte, opts Options) Page {
	opts = opts.withDefaults()
	e := extractor{opts: opts}
	var sim *simhash.Builder
	if opts.SimHash {
		sim = new(simhash.Builder)
		sim.Grow(len(body) / 10)
		e.sim = sim
	}
	// A body in UTF-8 is tokenized where it is; one in another encoding
	// is converted as the tokenizer reads it, never held whole twice.
	var z *htmltok.Tokenizer
	text, converted, enc := source(body, opts.ContentType)
	if converted != nil {
		z = simhash.NewReaderTokenizer(converted)
	} else {
		z = simhash.NewTokenizer(text)
	}
	e.page.Encoding = enc
	for {
		tt := z.Next()
		wantTitle, wantStyle := e.wantTitle, e.wantStyle
		e.wantTitle, e.wantStyle = false, false
		switch tt {
		case html.ErrorToken:
			// The only errors are io.EOF (the whole body has been
			// scanned) and html.ErrBufferExceeded (a token past
			// simhash.MaxTokenBytes: the rest is not read).
			if sim != nil {
				e.page.Content = sim.Content()
				e.page.SimHash = e.page.Content.SimHash()
			}
			return e.finish()
		case html.TextToken:
			if wantStyle {
				e.styleSheet(z.Raw()) // raw text: no references to decode
			}
			switch {
			case wantTitle:
				text := z.Text() // once: it may be read only once
				if sim != nil {
					sim.Text(text)
				}
				e.page.Title = collapseSpace(text, MaxTitleBytes)
			case sim != nil && !sim.Skipping():
				// Text decodes in place: it turns \r and \r\n into \n,
				// NUL into U+FFFD in some states, and character references
				// into what they stand for. The first two separate words
				// as the raw bytes do, so without a '&' the raw text gives
				// SimHash the same words, without a pass to convert it.
				if raw := z.Raw(); bytes.IndexByte(raw, '&') < 0 {
					sim.Text(raw)
				} else {
					sim.Text(z.Text())
				}
			}
		case html.StartTagToken, html.SelfClosingTagToken, html.EndTagToken:
			// No tag this package or SimHash tells apart is longer than 8.
			var buf [8]byte
			name := tagName(z, &buf)
			if sim != nil {
				sim.Tag(name, tt == html.EndTagToken)
				if sim.WantsAttrs() {
					// Never a tag startTag reads the attributes of: those
					// are not containers (simhash.Builder.WantsAttrs).
					for more := true; more; {
						var k, v []byte
						k, v, more = z.TagAttr()
						sim.Attr(k, v)
					}
				}
			}
			if tt != html.EndTagToken {
				e.startTag(z, name, tt == html.SelfClosingTagToken)
				break
			}
			switch string(name) {
			case "svg", "math":
				if e.foreign > 0 {
					e.foreign--
				}
			}
		case html.CommentToken:
		default:
			if sim != nil {
				sim.Break()
			}
		}
	}
}

// extractor is the state of one ExtractWith call.
type extractor struct {
	opts Options
	page Page
	sim  *simhash.Builder // Options.SimHash's; nil without
	// seen holds every link in page.Links, to skip exact repeats.
	seen map[Link]struct{}
	// haveBase and haveTitle record that the first <base href> or <title>
	// has been seen, even if its value was empty.
	haveBase, haveTitle bool
	// wantTitle is set right after the first <title> start tag: the next
	// text token is its content.
	wantTitle bool
	// foreign is the depth of open <svg> and <math> elements, whose <title>
	// is not the document's.
	foreign int
	// wantStyle is set right after a <style> start tag (with
	// Options.Requisites): the next text token is its stylesheet.
	wantStyle bool
	// reqSeen holds the Ref of every link in page.Requisites.
	reqSeen map[string]struct{}
}

// attrs holds the attribute values a start tag may need; the second
// line only with Options.Requisites.
type attrs struct {
	href, src, rel, name, content, httpEquiv []byte
	hasHref, hasSrc                          bool

	srcset, imagesrcset, poster, data, typ, background, style, xlinkHref []byte
}

func readAttrs(z *htmltok.Tokenizer, requisites bool) attrs {
	var a attrs
	for more := true; more; {
		var k, v []byte
		k, v, more = z.TagAttr()
		if requisites {
			switch string(k) {
			case "srcset":
				a.srcset = v
			case "imagesrcset":
				a.imagesrcset = v
			case "poster":
				a.poster = v
			case "data":
				a.data = v
			case "type":
				a.typ = v
			case "background":
				a.background = v
			case "style":
				a.style = v
			case "xlink:href":
				a.xlinkHref = v
			}
		}
		switch string(k) {
		case "href":
			a.href, a.hasHref = v, true
		case "src":
			a.src, a.hasSrc = v, true
		case "rel":
			a.rel = v
		case "name":
			a.name = v
		case "content":
			a.content = v
		case "http-equiv":
			a.httpEquiv = v
		}
	}
	return a
}

// tagName returns the lower-cased name of the current start or end tag, read
// from the raw token into buf, or nil if it is longer than buf (no tag of
// interest is). Unlike Tokenizer.TagName it does not allocate.
func tagName(z *htmltok.Tokenizer, buf *[8]byte) []byte {
	raw := z.Raw()
	i := 1 // skip "<"
	if i < len(raw) && raw[i] == '/' {
		i++
	}
	n := 0
	for ; i < len(raw); i++ {
		c := raw[i]
		if isSpace(c) || c == '/' || c == '>' {
			break
		}
		if n == len(buf) {
			return nil
		}
		buf[n] = lowerASCII(c)
		n++
	}
	return buf[:n]
}

// startTag handles a start tag whose lower-cased name is name (tagName).
func (e *extractor) startTag(z *htmltok.Tokenizer, name []byte, selfClosing bool) {
	// Link tags map to constant strings so that Links share them instead of
	// each carrying a copy.
	var tag string
	switch string(name) {
	case "a":
		tag = "a"
	case "area":
		tag = "area"
	case "link":
		tag = "link"
	case "iframe":
		tag = "iframe"
	case "frame":
		tag = "frame"
	case "base":
		tag = "base"
	case "meta":
		tag = "meta"
	case "title":
		if !e.haveTitle && e.foreign == 0 {
			e.haveTitle = true
			e.wantTitle = true
		}
		return
	case "noscript", "noframes":
		z.NextIsNotRawText()
		return
	case "svg", "math":
		if !selfClosing {
			e.foreign++
		}
		return
	default:
		if !e.opts.Requisites {
			return
		}
		// Any element may have a style attribute; these embed by others.
		tag = requisiteTags[string(name)]
		if tag == "style" && !selfClosing {
			e.wantStyle = true
		}
	}
	a := readAttrs(z, e.opts.Requisites)
	if e.opts.Requisites {
		e.requisites(tag, &a)
	}
	switch tag {
	case "a", "area", "link":
		if !a.hasHref {
			return
		}
		rel := normalizeRel(a.rel)
		ref := string(trimSpace(a.href))
		if tag == "link" && e.page.Canonical == "" && hasToken(rel, "canonical") {
			e.page.Canonical = ref
		}
		e.add(Link{Ref: ref, Tag: tag, Rel: rel, NoFollow: hasToken(rel, "nofollow")})
	case "iframe", "frame":
		if a.hasSrc {
			e.add(Link{Ref: string(trimSpace(a.src)), Tag: tag})
		}
	case "base":
		if a.hasHref && !e.haveBase {
			e.haveBase = true
			e.page.BaseHref = string(trimSpace(a.href))
		}
	case "meta":
		e.meta(a)
	}
}

func (e *extractor) meta(a attrs) {
	name := trimSpace(a.name)
	if e.sim != nil && equivFold(name, "description") {
		e.sim.Description(a.content)
	}
	if equivFold(trimSpace(a.httpEquiv), "refresh") {
		if ref, ok := refreshURL(a.content); ok {
			e.add(Link{Ref: string(ref), Tag: "meta"})
		}
		return
	}
	robotsName := equivFold(name, "robots") || e.opts.Agent != "" && equivFold(name, e.opts.Agent)
	if robotsName || equivFold(name, "tdm-reservation") || equivFold(name, "tdm-policy") {
		e.keepMeta(name, a.content)
	}
	if !robotsName {
		return
	}
	noIndex, noFollow := robotsDirectives(a.content)
	e.page.NoIndex = e.page.NoIndex || noIndex
	e.page.NoFollow = e.page.NoFollow || noFollow
}

// keepMeta records a use-stating meta element, within the caps.
func (e *extractor) keepMeta(name, content []byte) {
	if len(e.page.Metas) >= MaxMetas {
		e.page.MetasDropped++
		return
	}
	m := Meta{Name: string(name)}
	if len(content) > MaxMetaContentBytes {
		n := MaxMetaContentBytes
		for n > 0 && !utf8.RuneStart(content[n]) {
			n--
		}
		content, m.Truncated = content[:n], true
	}
	m.Content = string(content)
	e.page.Metas = append(e.page.Metas, m)
}

// add appends l unless it is empty, has a skipped scheme, repeats a link
// already kept, or the cap is reached.
func (e *extractor) add(l Link) {
	if l.Ref == "" || skippedScheme(l.Ref) {
		return
	}
	if _, dup := e.seen[l]; dup {
		return
	}
	if len(e.page.Links) >= e.opts.MaxLinks {
		e.page.Dropped++
		return
	}
	if e.seen == nil {
		e.seen = make(map[Link]struct{})
	}
	e.seen[l] = struct{}{}
	e.page.Links = append(e.page.Links, l)
}

func (e *extractor) finish() Page {
	if e.page.NoFollow {
		// Until now NoFollow followed from Tag and Rel, so this creates no
		// duplicates among Links.
		for i := range e.page.Links {
			e.page.Links[i].NoFollow = true
		}
	}
	return e.page
}

// isSpace reports whether c is ASCII whitespace as HTML defines it.
func isSpace(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\f', '\r':
		return true
	}
	return false
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// equivFold reports whether b equals s under ASCII case folding.
func equivFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := 0; i < len(b); i++ {
		if lowerASCII(b[i]) != lowerASCII(s[i]) {
			return false
		}
	}
	return true
}

// normalizeRel lower-cases rel (ASCII only), collapses runs of ASCII
// whitespace to one space and trims it.
func normalizeRel(rel []byte) string {
	rel = trimSpace(rel)
	if len(rel) == 0 {
		return ""
	}
	out := make([]byte, 0, len(rel))
	for i := 0; i < len(rel); i++ {
		c := rel[i]
		if isSpace(c) {
			if !isSpace(rel[i-1]) { // rel[0] is not a space after trimming
				out = append(out, ' ')
			}
			continue
		}
		out = append(out, lowerASCII(c))
	}
	return string(out)
}

// hasToken reports whether the space-separated list s contains tok.
func hasToken(s, tok string) bool {
	for len(s) > 0 {
		i := 0
		for i < len(s) && s[i] != ' ' {
			i++
		}
		if s[:i] == tok {
			return true
		}
		if i == len(s) {
			return false
		}
		s = s[i+1:]
	}
	return false
}

// skippedScheme reports whether ref starts with javascript:, mailto:, tel: or
// data:, ignoring case, leading C0 controls and spaces, and the tabs and
// newlines that a WHATWG URL parser removes anywhere in its input.
func skippedScheme(ref string) bool {
	var buf [len("javascript")]byte
	n := 0
	i := 0
	for i < len(ref) && ref[i] <= ' ' {
		i++
	}
	for ; i < len(ref); i++ {
		c := ref[i]
		switch {
		case c == '\t' || c == '\n' || c == '\r':
			continue
		case c == ':':
			switch string(buf[:n]) {
			case "javascript", "mailto", "tel", "data":
				return true
			}
			return false
		case n == len(buf):
			return false
		}
		buf[n] = lowerASCII(c)
		n++
	}
	return false
}

// collapseSpace returns b with runs of ASCII whitespace collapsed to one
// space, trimmed, and cut to at most limit bytes without splitting a UTF-8
// sequence.
func collapseSpace(b []byte, limit int) string {
	out := make([]byte, 0, min(len(b), limit+1))
	for {
		for len(b) > 0 && isSpace(b[0]) {
			b = b[1:]
		}
		if len(b) == 0 || len(out) > limit {
			break
		}
		if len(out) > 0 {
			out = append(out, ' ')
		}
		i := 0
		for i < len(b) && !isSpace(b[i]) {
			i++
		}
		out = append(out, b[:min(i, limit+1-len(out))]...)
		b = b[i:]
	}
	if len(out) > limit {
		cut := limit
		// Back up to the start of the UTF-8 sequence that straddles the cut.
		for back := 0; back < 3 && cut > 0 && out[cut]&0xC0 == 0x80; back++ {
			cut--
		}
		out = trimSpace(out[:cut])
	}
	return string(out)
}
