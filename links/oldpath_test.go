package links

// The path ExtractWith took before internal/htmltok: x/net/html's
// Tokenizer reading Reader's text, bounded by simhash.MaxTokenBytes. It is
// kept here only to compare (FuzzSameAsXNet); the extractor's other
// methods are shared.

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"golang.org/x/net/html"

	"github.com/trawl-crawler/trawl/simhash"
)

func oldExtractWith(body []byte, opts Options) Page {
	opts = opts.withDefaults()
	e := extractor{opts: opts}
	var sim *simhash.Builder
	if opts.SimHash {
		sim = new(simhash.Builder)
		sim.Grow(len(body) / 10)
		e.sim = sim
	}
	text, enc := Reader(body, opts.ContentType)
	e.page.Encoding = enc
	z := html.NewTokenizer(text)
	z.SetMaxBuf(simhash.MaxTokenBytes)
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
			name := oldTagName(z, &buf)
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
				e.oldStartTag(z, name, tt == html.SelfClosingTagToken)
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

func oldReadAttrs(z *html.Tokenizer, requisites bool) attrs {
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

func oldTagName(z *html.Tokenizer, buf *[8]byte) []byte {
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

func (e *extractor) oldStartTag(z *html.Tokenizer, name []byte, selfClosing bool) {
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
	a := oldReadAttrs(z, e.opts.Requisites)
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

// contentTypes are the Content-Type headers FuzzSameAsXNet tries: no
// charset, UTF-8, and encodings converted as read (single-byte,
// multi-byte, UTF-16, stateful).
var contentTypes = []string{
	"", "text/html; charset=utf-8", "text/html; charset=windows-1252", "text/html; charset=shift_jis",
	"text/html; charset=utf-16le", "text/html; charset=iso-2022-jp", "text/html; charset=gb18030",
}

// FuzzSameAsXNet requires ExtractWith to find in any body, under any
// options, the page the x/net/html path found: links, title, base,
// canonical, metas, requisites, SimHash and main text alike.
func FuzzSameAsXNet(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.html"))
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint8(0), uint8(0), uint8(3))
	}
	for _, s := range []string{
		"<title>a&amp;b</title><a href='x&amp;y' rel=NoFollow>t</a>", "<noscript><a href=x></noscript><noframes><a href=y>",
		"<script><!--<script></script><a href=x></script><a href=y>", "<style>a{background:url(/i.png)}</style><img src=j>",
		"<svg><title>no</title></svg><title>yes</title>", "<base href=/b/><meta name=robots content=noindex>",
		"<meta http-equiv=refresh content='0;url=/r'><meta name=description content=d>",
		"<a href=\"\xe9t\xe9\">\xe9t\xe9</a>", "<textarea><a href=x></textarea><a href=y>", "<plaintext><a href=x>",
		"<a href=x\r\ny>\x00</a><!-- <a href=z> -->", "<A HREF=X Href=Y>", "<iframe src=f><a href=g></iframe>",
	} {
		f.Add([]byte(s), uint8(0), uint8(0), uint8(3))
		f.Add([]byte(s), uint8(3), uint8(2), uint8(1))
	}
	f.Fuzz(func(t *testing.T, body []byte, ct, maxLinks, flags uint8) {
		opts := Options{
			Agent:       "trawl",
			MaxLinks:    int(maxLinks % 16),
			ContentType: contentTypes[int(ct)%len(contentTypes)],
			SimHash:     flags&1 != 0,
			Requisites:  flags&2 != 0,
		}
		in := bytes.Clone(body)
		want := oldExtractWith(body, opts)
		got := ExtractWith(body, opts)
		if !bytes.Equal(in, body) {
			t.Fatalf("ExtractWith(%q) modified the body", in)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("ExtractWith(%q, %+v) =\n%+v\nx/net/html path:\n%+v", body, opts, got, want)
		}
	})
}

// tokenizer is what BenchmarkTokenize reads of either tokenizer.
type tokenizer interface {
	Next() html.TokenType
	Text() []byte
	TagName() ([]byte, bool)
	TagAttr() ([]byte, []byte, bool)
}

// readAll reads every token of z, with its text or its name and
// attributes (full), or only its type.
func readAll(z tokenizer, full bool) (n int) {
	for {
		switch tt := z.Next(); tt {
		case html.ErrorToken:
			return n
		case html.TextToken:
			if full {
				n += len(z.Text())
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			if full {
				for _, more := z.TagName(); more; {
					var v []byte
					_, v, more = z.TagAttr()
					n += len(v)
				}
			}
		}
		n++
	}
}

// BenchmarkTokenize compares the tokenizers on BenchmarkExtract's page:
// x/net/html as ExtractWith ran it (reading a bytes.Reader), htmltok over
// the page's bytes and over a reader (as a converted page is read).
func BenchmarkTokenize(b *testing.B) {
	page := benchPage()
	for _, full := range []bool{false, true} {
		mode := "next"
		if full {
			mode = "full"
		}
		b.Run("x-net-html/"+mode, func(b *testing.B) {
			b.SetBytes(int64(len(page)))
			b.ReportAllocs()
			for b.Loop() {
				z := html.NewTokenizer(bytes.NewReader(page))
				z.SetMaxBuf(simhash.MaxTokenBytes)
				readAll(z, full)
			}
		})
		b.Run("htmltok/"+mode, func(b *testing.B) {
			b.SetBytes(int64(len(page)))
			b.ReportAllocs()
			for b.Loop() {
				readAll(simhash.NewTokenizer(page), full)
			}
		})
		b.Run("htmltok-reader/"+mode, func(b *testing.B) {
			b.SetBytes(int64(len(page)))
			b.ReportAllocs()
			for b.Loop() {
				readAll(simhash.NewReaderTokenizer(bytes.NewReader(page)), full)
			}
		})
	}
}
