// Package simhash reads the main text of HTML pages and fingerprints it
// for near-duplicate detection. Everything here is pure and safe for
// concurrent use; nothing is kept between calls, except in an Index
// (index.go) and a Template (template.go), which are not safe for
// concurrent use.
//
// Main text (Builder): the words of a page grouped into blocks, without
// what frames it (navigation, sidebars, headers and footers, forms, ads,
// link lists). A host's Template learns the blocks most of its pages
// share, which a Print leaves out.
//
// Fingerprints of the main text (SimHash: Charikar 2002, 64 bits):
//   - Content.SimHash, of its word pairs (2-word shingles, as often as they
//     occur): a URL's record keeps it, to tell how much of a page changed.
//   - Print.FP, of the SET of its words and word pairs, each counted once:
//     robust to small edits (a word replaced moves three features of
//     hundreds), so the pages near one are found by the bands of an index,
//     with the weakest bits of each band tried flipped (Print.Probe). The
//     pairs keep pages of one small vocabulary apart, which the words alone
//     would put within a few bits of each other.
//   - Print.Sketch, a one-permutation MinHash of its word pairs: two
//     sketches estimate the resemblance (Jaccard similarity) of two pages'
//     pair sets, which decides whether they are near duplicates. A 3% edit
//     of a page's words leaves a resemblance near 0.88, 10% near 0.67;
//     distinct pages of real documentation trees stay under 0.75 unless they
//     share a title (Print).
//
// Words. The text is cut into words: maximal runs of Unicode letters and
// digits (and combining marks inside a word), lower-cased with
// unicode.ToLower. A Han, Hiragana or Katakana character is a word of its
// own, since those scripts put no spaces between words. Each word is hashed
// with FNV-1a 64 over its lower-cased UTF-8, and each feature (a word, a
// pair of adjacent words of one block: mix(h(w1)·φ + h(w2))) is mixed with
// the MurmurHash3 64-bit finaliser; φ = 0x9E3779B97F4A7C15.
//
// The SimHash is stored on disk (per-URL state, the near index's keys) and
// the Sketch too (the near index's values), so the word rules, the main
// text rules and the feature hashes are part of the on-disk format:
// changing any of them changes stored values, which the golden values
// under testdata/ catch.
package simhash

import (
	"bytes"
	"io"
	"math/bits"
	"slices"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/trawl-crawler/trawl/internal/htmltok"
)

// FNV-1a 64 parameters (http://www.isthe.com/chongo/tech/comp/fnv/).
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
	phi       = 0x9E3779B97F4A7C15 // 2^64 / golden ratio, odd
)

// mix is the MurmurHash3 fmix64 finaliser: a bijection that spreads every
// input bit over all output bits, so each fingerprint bit sees a fair coin.
func mix(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// Hash returns the 64-bit hash of one feature as Fingerprint uses it:
// FNV-1a 64 over b, then mixed. It is stable across processes and
// versions of Go.
func Hash(b []byte) uint64 {
	h := uint64(fnvOffset)
	for _, c := range b {
		h ^= uint64(c)
		h *= fnvPrime
	}
	return mix(h)
}

// Distance returns the Hamming distance of two fingerprints: the number of
// bits in which they differ, 0 to 64.
func Distance(a, b uint64) int { return bits.OnesCount64(a ^ b) }

// Fingerprint returns the SimHash of features, each hashed with Hash. A
// feature that appears twice counts twice. No features give 0.
func Fingerprint(features [][]byte) uint64 {
	var acc Accumulator
	for _, f := range features {
		acc.Add(Hash(f))
	}
	return acc.Sum()
}

// spread[b] has byte k set to bit k of b: adding spread[(p>>8j)&0xff] << k
// to a uint64 adds bit k's weight of a count into 8 byte-wide lanes at once.
var spread = func() (t [256]uint64) {
	for b := range t {
		for k := range 8 {
			t[b] |= uint64(b>>k&1) << (8 * k)
		}
	}
	return t
}()

// Accumulator sums hashed features into a SimHash. The zero value is an
// empty accumulator. It is not safe for concurrent use.
//
// Features not yet folded are counted bit-sliced: planes[k] holds bit k of
// the 64 per-bit counts, so adding a feature is a ripple-carry add of its
// hash into the planes (16 logic operations, no memory), and every 255
// features the planes are folded into ones.
type Accumulator struct {
	n      int        // features added
	planes [8]uint64  // bit-sliced per-bit counts of the features not yet folded
	inPl   int        // features in planes; folded at 255, before a count can overflow
	ones   [64]uint32 // per-bit counts of set bits, folded
}

// Add adds one feature, given by its 64-bit hash.
func (a *Accumulator) Add(h uint64) {
	hs := [1]uint64{h}
	a.addMany(hs[:])
}

// addMany adds features given by their hashes, as Add does for each, with
// the planes held in registers for the loop.
func (a *Accumulator) addMany(hs []uint64) {
	for len(hs) > 0 {
		n := min(len(hs), 255-a.inPl)
		p0, p1, p2, p3 := a.planes[0], a.planes[1], a.planes[2], a.planes[3]
		p4, p5, p6, p7 := a.planes[4], a.planes[5], a.planes[6], a.planes[7]
		for _, c := range hs[:n] {
			t := p0 & c
			p0 ^= c
			c = p1 & t
			p1 ^= t
			t = p2 & c
			p2 ^= c
			c = p3 & t
			p3 ^= t
			t = p4 & c
			p4 ^= c
			c = p5 & t
			p5 ^= t
			t = p6 & c
			p6 ^= c
			p7 ^= t // no carry out: counts stay below 256
		}
		a.planes = [8]uint64{p0, p1, p2, p3, p4, p5, p6, p7}
		a.n += n
		if a.inPl += n; a.inPl == 255 {
			a.fold()
		}
		hs = hs[n:]
	}
}

// fold adds the counts in planes to ones and clears the planes.
func (a *Accumulator) fold() {
	// lanes[j] gathers, in its byte k, the count of bit 8j+k (at most 255).
	var lanes [8]uint64
	for k, p := range a.planes {
		for j := range lanes {
			lanes[j] += spread[p>>(8*j)&0xff] << k
		}
	}
	for j, l := range lanes {
		for k := range 8 {
			a.ones[8*j+k] += uint32(l >> (8 * k) & 0xff)
		}
	}
	a.planes = [8]uint64{}
	a.inPl = 0
}

// weakPerBand returns a mask of the k bits of each 16-bit band of Sum
// whose votes were closest (|2 x ones - features| smallest; ties to the
// lower bit): the bits an edit of a few features is likely to flip.
func (a *Accumulator) weakPerBand(k int) uint64 {
	if a.inPl > 0 {
		a.fold()
	}
	k = min(max(k, 0), 16)
	var w uint64
	for band := range 4 {
		var margin [16]uint64
		for j := range margin {
			i := 16*band + j
			m := int64(2*uint64(a.ones[i])) - int64(a.n)
			if m < 0 {
				m = -m
			}
			margin[j] = uint64(m)<<6 | uint64(i) // distinct keys; the bit in the low 6
		}
		slices.Sort(margin[:])
		for _, m := range margin[:k] {
			w |= 1 << (m & 63)
		}
	}
	return w
}

// Count returns the number of features added.
func (a *Accumulator) Count() int { return a.n }

// Sum returns the SimHash of the features added so far: bit i is set when
// more than half of them have bit i set. No features give 0.
func (a *Accumulator) Sum() uint64 {
	if a.inPl > 0 {
		a.fold()
	}
	var s uint64
	for i, c := range a.ones {
		if 2*uint64(c) > uint64(a.n) {
			s |= 1 << i
		}
	}
	return s
}

// words cuts text into words and hands each word's hash to a content
// (content.go). A word may continue across calls to write (text split by
// inline tags).
type words struct {
	c      *content
	h      uint64 // FNV-1a state of the word being read
	inWord bool
}

// end finishes the word being read, if any.
func (w *words) end() {
	if !w.inWord {
		return
	}
	w.inWord = false
	w.c.word(w.h)
}

func (w *words) emit(h uint64) { w.c.word(h) }

// ascii maps an ASCII byte to itself lower-cased if it is a letter or a
// digit, and to 0 if it separates words. Bytes from 0x80 map to 0x80: the
// start or continuation of a multi-byte UTF-8 sequence.
var ascii = func() (t [256]byte) {
	for c := range t {
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
			t[c] = byte(c)
		case 'A' <= c && c <= 'Z':
			t[c] = byte(c) + 'a' - 'A'
		case c >= utf8.RuneSelf:
			t[c] = utf8.RuneSelf
		}
	}
	return t
}()

// write reads text, taken as UTF-8 (invalid bytes end a word).
//
// ASCII is read in runs: a run of separators is skipped, and a run of
// letters and digits hashed, in loops of their own (one table look-up and
// one compare a byte), and the word it makes added to the content in
// place when nothing but an append is to be done (content.word does the
// rest). Other bytes go through the rune rules below. The words and their
// hashes are those of one loop over every byte (FuzzWordsSame).
func (w *words) write(text []byte) {
	h, inWord := w.h, w.inWord // in registers for the byte loop
	c := w.c
	for i := 0; i < len(text); {
		b := ascii[text[i]]
		// b-1 < 0x7f: b is a letter or digit (1 to 0x7f); 0 (a
		// separator) and 0x80 (not ASCII) wrap or stay above.
		if b-1 < 0x7f {
			if !inWord {
				inWord, h = true, fnvOffset
			}
			h = (h ^ uint64(b)) * fnvPrime
			for i++; i < len(text); i++ {
				b = ascii[text[i]]
				if b-1 >= 0x7f {
					break
				}
				h = (h ^ uint64(b)) * fnvPrime
			}
			if i == len(text) {
				break // the word may go on in the next text
			}
			if b == 0 {
				// The run ends at a separator: the word is whole.
				i++
				inWord = false
				if n := len(c.words); n < cap(c.words) && n < MaxWords && !c.wantAttrs && c.inLink == 0 && !c.wordInLink {
					c.words = append(c.words, h)
				} else {
					c.word(h)
				}
				for i < len(text) && ascii[text[i]] == 0 {
					i++
				}
			}
			continue
		}
		if b == 0 {
			i++
			if inWord {
				inWord = false
				w.emit(h)
			}
			for i < len(text) && ascii[text[i]] == 0 {
				i++
			}
			continue
		}
		r, size := utf8.DecodeRune(text[i:])
		i += size
		switch {
		case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana):
			if inWord {
				w.emit(h)
			}
			inWord = false
			w.emit(hashRune(fnvOffset, r))
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if !inWord {
				inWord, h = true, fnvOffset
			}
			h = hashRune(h, unicode.ToLower(r))
		case inWord && unicode.IsMark(r):
			h = hashRune(h, r)
		case inWord:
			inWord = false
			w.emit(h)
		}
	}
	w.h, w.inWord = h, inWord
}

// hashRune continues the FNV-1a state h over r's UTF-8.
func hashRune(h uint64, r rune) uint64 {
	var buf [utf8.UTFMax]byte
	for _, c := range utf8.AppendRune(buf[:0], r) {
		h = (h ^ uint64(c)) * fnvPrime
	}
	return h
}

// Text returns the SimHash of plain text (UTF-8): the fingerprint of the
// set of its words (Content.SimHash), the text taken as one block. Text
// without words gives 0.
func Text(text []byte) uint64 {
	var b Builder
	b.Text(text)
	return b.Sum()
}

// HTML returns the SimHash of the main text of an HTML document
// (Content.SimHash), read as UTF-8 with NewTokenizer in one pass (no
// tree is built). What is main text is the Builder's rule. A document
// without main text gives 0. Markup alone, such as attributes other than
// class, id and role, whitespace or script contents, never changes the
// result.
//
// The content of noscript and noframes is tokenized as markup (a crawler
// runs no scripts and shows no frames), as links.ExtractWith does, so that
// a Builder fed from that pass gives the same fingerprint.
func HTML(doc []byte) uint64 {
	var b Builder
	b.Grow(len(doc) / 10)
	return b.html(NewTokenizer(doc))
}

// HTMLReader is HTML of the document read from r, in UTF-8 (such as
// links.Reader gives of a page in any encoding).
func HTMLReader(r io.Reader) uint64 {
	var b Builder
	return b.html(NewReaderTokenizer(r))
}

// HTMLContent returns the main text of doc as a Builder fed from one
// tokenizer pass reads it (Builder.Content).
func HTMLContent(doc []byte) *Content {
	var b Builder
	b.Grow(len(doc) / 10)
	b.html(NewTokenizer(doc))
	return b.Content()
}

// MaxTokenBytes bounds one token of a page (a text run, a comment, a tag
// with its attributes) that HTML and links.ExtractWith read: a longer token
// ends the reading, and what follows it is neither fingerprinted nor
// searched for links. It was set when pages were read with x/net/html's
// tokenizer, which buffers a whole token: without a bound a decoded
// compression bomb of 50 MiB of NULs cost 256 MiB in doubling buffers, and
// as much again turning each NUL into U+FFFD (measured in the hostile
// crawl's memory profile). htmltok reads tokens in place, but decodes a
// token's text into a buffer of its own, and stops where x/net/html did,
// so fingerprints and links stay what they were. No ordinary page comes
// near: the bound is 16 times an inline script of a large application.
const MaxTokenBytes = 4 << 20

// NewTokenizer returns the tokenizer HTML and links.ExtractWith read doc
// (UTF-8) with: bounded to MaxTokenBytes per token, so that both stop at
// the same place. It gives the tokens x/net/html's Tokenizer gives
// (internal/htmltok).
func NewTokenizer(doc []byte) *htmltok.Tokenizer {
	z := htmltok.New(doc)
	z.SetMaxBuf(MaxTokenBytes)
	return z
}

// NewReaderTokenizer is NewTokenizer reading the document from r. Only a
// window holding the token being read is kept, so a reader that converts
// as it goes (from another encoding to UTF-8) costs no copy of the
// document.
func NewReaderTokenizer(r io.Reader) *htmltok.Tokenizer {
	z := htmltok.NewReader(r)
	z.SetMaxBuf(MaxTokenBytes)
	return z
}

func (b *Builder) html(z *htmltok.Tokenizer) uint64 {
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return b.Sum()
		case html.TextToken:
			b.Text(z.Text())
		case html.StartTagToken, html.SelfClosingTagToken, html.EndTagToken:
			name, hasAttr := z.TagName()
			a := b.Tag(name, tt == html.EndTagToken)
			switch {
			case hasAttr && b.WantsAttrs():
				for more := true; more; {
					var k, v []byte
					k, v, more = z.TagAttr()
					b.Attr(k, v)
				}
			case hasAttr && a == atom.Meta && tt != html.EndTagToken:
				var desc bool
				var content []byte
				for more := true; more; {
					var k, v []byte
					k, v, more = z.TagAttr()
					switch string(k) {
					case "name":
						desc = isDescription(v)
					case "content":
						content = v
					}
				}
				if desc {
					b.Description(content)
				}
			}
			if tt != html.EndTagToken && (a == atom.Noscript || a == atom.Noframes) {
				z.NextIsNotRawText()
			}
		case html.CommentToken:
			// foo<!-- -->bar renders as one word.
		default:
			b.Break()
		}
	}
}

// Builder reads a page's tokens, fed by someone else, and keeps its main
// text (Content), so that a caller that tokenizes a page anyway
// (links.ExtractWith) does not tokenize it twice. Feed it every token in
// order, as HTML does: Text for text tokens, Tag for start, self-closing
// and end tags, then, if WantsAttrs, Attr for each of the tag's attributes;
// Break for the doctype; comments are left out. The zero value is ready to
// use.
//
// Main text. Words are cut as the package comment says, and grouped into
// blocks: the text between two tags other than inline ones (a paragraph, a
// list item, a table cell, a heading, the title). A block is left out when
// it lies in boilerplate, or when more than half of its words are link text
// (a menu, a list of related links, a tag cloud). Boilerplate is what a
// page has around its main text:
//   - the elements nav, aside, form, menu, select, button and dialog, and
//     header and footer outside an article or main element (inside one
//     they are the article's own);
//   - an element whose role is navigation, banner, contentinfo,
//     complementary, search, menu, menubar or toolbar;
//   - an element other than body, main and article whose class or id
//     names a part of a page's frame (boilerToken: nav, menu, sidebar,
//     footer, breadcrumb, cookie, banner, ad, sponsor, related, popular,
//     share, comments, widget, pager, ...) and no part of its main text
//     (content, main, article, post, entry, story, body, text).
//
// Text inside script, style, noscript, template, iframe, noembed and
// noframes is not text at all, as are comments, attributes and the doctype.
type Builder struct {
	c    content
	w    words
	skip int // depth inside skipped elements
}

func (b *Builder) init() {
	if b.w.c == nil {
		b.w.c = &b.c
	}
}

// Text adds a text token's unescaped text (htmltok.Tokenizer.Text).
func (b *Builder) Text(text []byte) {
	if b.skip == 0 {
		b.init()
		if b.c.inTitle {
			b.c.titleText = append(b.c.titleText, text[:min(len(text), maxTitleText-len(b.c.titleText))]...)
		}
		if b.c.inHeading {
			b.c.headingText = append(b.c.headingText, text[:min(len(text), maxTitleText-len(b.c.headingText))]...)
		}
		b.w.write(text)
	}
}

// Skipping reports whether the Builder is inside an element whose text it
// leaves out (script, style, ...): Text would ignore a text token now, so
// a caller need not decode it.
func (b *Builder) Skipping() bool { return b.skip > 0 }

// Tag adds a tag whose lower-cased name is name (end reports an end tag;
// a self-closing tag is a start tag) and returns the name's atom (0 if
// none).
func (b *Builder) Tag(name []byte, end bool) atom.Atom {
	b.init()
	a := atom.Lookup(name)
	if skipped(a) {
		// <script/> opens a script all the same: HTML ignores the slash
		// on non-void elements, and so does the tokenizer's raw text mode.
		switch {
		case !end:
			b.skip++
		case b.skip > 0:
			b.skip--
		}
	}
	if a == atom.A {
		if end && b.w.inWord && b.c.inLink > 0 {
			b.c.wordInLink = true // the link's last word, ended after it
		}
		b.c.link(end)
		return a
	}
	if !inline(a) {
		b.w.end()
		b.c.endBlock()
		b.c.tag(a, end)
	}
	return a
}

// Grow makes room for about n words of main text, so that a caller that
// knows the document's size (a word per 10 bytes of HTML, say) spares the
// Builder growing its buffer.
func (b *Builder) Grow(n int) {
	if n = min(n, MaxWords-len(b.c.words)); n > 0 {
		b.c.words = growWords(b.c.words, n)
	}
}

// WantsAttrs reports whether the tag just added (a start tag) is one whose
// class, id and role the Builder reads: Attr them.
func (b *Builder) WantsAttrs() bool { return b.c.wantAttrs }

// Attr adds an attribute of the start tag just added, its key lower-cased
// (htmltok.Tokenizer.TagAttr), when WantsAttrs.
func (b *Builder) Attr(key, val []byte) { b.c.attr(key, val) }

// isDescription reports whether a meta element's name, less HTML
// whitespace around it, is "description" in any ASCII case.
func isDescription(name []byte) bool {
	name = bytes.Trim(name, " \t\n\f\r")
	const d = "description"
	if len(name) != len(d) {
		return false
	}
	for i := range name {
		if lowerASCII(name[i]) != d[i] {
			return false
		}
	}
	return true
}

// Description adds the content of the page's meta description (the first
// one counts): it names a page whose title is its site's generic one
// (Print.Title).
func (b *Builder) Description(content []byte) {
	if b.c.desc == 0 {
		b.c.desc = wordsKey(content)
	}
}

// Break ends the word being read (a doctype or other non-text token).
func (b *Builder) Break() {
	b.init()
	b.w.end()
}

// Sum returns the SimHash of the main text added (Content.SimHash); 0 if
// there was none.
func (b *Builder) Sum() uint64 {
	b.finish()
	return (&Content{words: b.c.words, blocks: b.c.blocks}).SimHash()
}

// Content ends the reading and returns the main text added. The Builder
// must not be used after it.
func (b *Builder) Content() *Content {
	b.finish()
	return &Content{words: b.c.words, blocks: b.c.blocks, title: b.c.title, titleBlock: b.c.titleBlock, heading: b.c.heading, desc: b.c.desc}
}

func (b *Builder) finish() {
	b.init()
	b.w.end()
	b.c.endBlock()
}

// skipped reports whether an element's content is not shown as text.
func skipped(a atom.Atom) bool {
	switch a {
	case atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Iframe, atom.Noembed, atom.Noframes:
		return true
	}
	return false
}

// inline reports whether a tag leaves the words around it joined: text
// level elements that a browser renders without a break or space.
func inline(a atom.Atom) bool {
	switch a {
	case atom.A, atom.Abbr, atom.B, atom.Bdi, atom.Bdo, atom.Big, atom.Cite, atom.Code, atom.Data,
		atom.Del, atom.Dfn, atom.Em, atom.Font, atom.I, atom.Ins, atom.Kbd, atom.Mark, atom.Nobr,
		atom.Q, atom.S, atom.Samp, atom.Small, atom.Span, atom.Strike, atom.Strong, atom.Sub,
		atom.Sup, atom.Time, atom.Tt, atom.U, atom.Var, atom.Wbr:
		return true
	}
	return false
}
