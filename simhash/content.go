package simhash

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"slices"
	"sync"

	"golang.org/x/net/html/atom"
)

// content is the state of a Builder's main text (see Builder): the words
// of the blocks kept so far and the block being read.
type content struct {
	words  []uint64 // word hashes (FNV-1a) of the kept blocks, then of the block being read
	blocks []Block  // the kept blocks
	start  int      // where the block being read starts in words
	// title is the hash of the words of the page's title (Print.Title):
	// the first title element's, or if the page has none before, the
	// first h1's or class="title" element's; inTitle: the block being read
	// is that title
	title           uint64
	inTitle, titled bool
	titleText       []byte // the title's text, up to maxTitleText bytes
	// heading is the hash of the words of the page's first h1 or
	// class="title" element (Print.Title, when the title is its site's);
	// inHeading: the block being read is that heading
	heading           uint64
	inHeading, headed bool
	headingText       []byte
	titleBlock        uint64 // the title's hash as a block (Block.Hash)
	desc              uint64 // the hash of the meta description's words (Builder.Description)
	anchor            int    // words of the block being read that are link text
	inLink            int    // depth of open a elements
	// wordInLink: the word being read had letters inside a link that has
	// ended since
	wordInLink bool

	// Open container elements (frames), to tell when a boilerplate one
	// ends; at most maxFrames, deeper ones are not tracked.
	frames []frame
	boiler int // open frames that are boilerplate
	inMain int // open article and main elements
	// wantAttrs: the last tag was the start of a frame whose class, id
	// and role decide whether it is boilerplate (attr).
	wantAttrs bool
	// hinted: the frame being read has a class or id that names a
	// frame part (boilerToken) and none naming main text (mainToken).
	hinted, mainHint bool
}

// frame is an open container element.
type frame struct {
	a      atom.Atom
	boiler bool // it makes its content boilerplate
}

// maxFrames bounds the open elements tracked: a page nesting deeper is
// read as if the deeper ones were not there.
const maxFrames = 256

// Block is a block of a page's main text: the hash of its words, in order
// (blockHash: kept in memory only, never stored), and their place in
// Content's words.
type Block struct {
	Hash       uint64
	start, end int32
}

// Content is a page's main text, in blocks (Builder).
type Content struct {
	words             []uint64
	blocks            []Block
	title, titleBlock uint64
	heading, desc     uint64
}

// Release gives c's memory back for reuse by later Builders. c must not
// be used after: it reads as a page without text. A Content kept beyond
// its page (a sample, a cache) is kept as a Clone, never Released.
func (c *Content) Release() {
	if c == nil {
		return
	}
	putWords(c.words)
	c.words, c.blocks = nil, nil
}

// Clone returns a copy of c that owns its memory, sized to fit.
func (c *Content) Clone() *Content {
	if c == nil {
		return nil
	}
	d := *c
	d.words, d.blocks = slices.Clone(c.words), slices.Clone(c.blocks)
	return &d
}

// Words returns the number of words of the main text.
func (c *Content) Words() int {
	if c == nil {
		return 0
	}
	return len(c.words)
}

// Size returns about how many bytes c holds.
func (c *Content) Size() int {
	if c == nil {
		return 0
	}
	return 8*cap(c.words) + 16*cap(c.blocks) + 64
}

// Blocks returns the blocks of the main text, in page order.
func (c *Content) Blocks() []Block {
	if c == nil {
		return nil
	}
	return c.blocks
}

// SimHash returns the SimHash of the main text's word pairs (each pair of
// adjacent words, across blocks, as often as it occurs; a text of one word
// gives that word): what a URL's record keeps, to tell how much of a page
// changed, or is new against the page before it, from the bits two
// fingerprints differ in. Markup alone never changes it. 0 if there are no
// words.
func (c *Content) SimHash() uint64 {
	if c == nil {
		return 0
	}
	var acc Accumulator
	var batch [64]uint64
	n := 0
	add := func(h uint64) {
		batch[n] = h
		if n++; n == len(batch) {
			acc.addMany(batch[:])
			n = 0
		}
	}
	ws := c.words
	if len(ws) == 1 {
		add(mix(ws[0]))
	}
	for i := 1; i < len(ws); i++ {
		add(mix(ws[i-1]*phi + ws[i]))
	}
	acc.addMany(batch[:n])
	return acc.Sum()
}

// MaxWords bounds the words of main text a Builder keeps: the words past
// it are not read (a long article has 5,000 words; a page of a book's
// length is known by its beginning), so that a page of endless text costs
// bounded memory (128 KiB of hashes).
const MaxWords = 1 << maxWordClass

// Word buffers. A Builder takes its buffer of word hashes from pools of
// size classes (powers of two from 1<<minWordClass words to MaxWords),
// and a Content gives it back on Release: a crawler that reads page after
// page then reuses warm memory instead of asking the heap for a large
// fresh buffer a page (tens of KiB, whose zeroing and first touch cost
// more than hashing the page's words). A Content never released is
// collected as any other.
const minWordClass = 10

// maxWordClass is log2(MaxWords).
const maxWordClass = 14

// wordPools holds the free buffers of each class, as *[]uint64 of length 0.
var wordPools [maxWordClass - minWordClass + 1]sync.Pool

// wordClass is the index of the smallest class holding n words
// (1 <= n <= MaxWords).
func wordClass(n int) int {
	if n <= 1<<minWordClass {
		return 0
	}
	return bits.Len(uint(n-1)) - minWordClass
}

// getWords returns an empty buffer with room for at least n words (at
// most MaxWords).
func getWords(n int) []uint64 {
	c := wordClass(max(1, min(n, MaxWords)))
	if p, ok := wordPools[c].Get().(*[]uint64); ok {
		return (*p)[:0]
	}
	return make([]uint64, 0, 1<<(c+minWordClass))
}

// putWords gives w back to its class's pool; a buffer of no class (not
// from getWords) is left to the collector.
func putWords(w []uint64) {
	n := cap(w)
	if n < 1<<minWordClass || n > MaxWords || n&(n-1) != 0 {
		return
	}
	w = w[:0]
	wordPools[wordClass(n)].Put(&w)
}

// growWords returns w with room for at least n more words, moved to a
// buffer of a larger class if it has not (the old one goes back).
func growWords(w []uint64, n int) []uint64 {
	if cap(w)-len(w) >= n {
		return w
	}
	nw := append(getWords(max(len(w)+n, 2*cap(w))), w...)
	putWords(w)
	return nw
}

// word adds the hash of one word to the block being read.
func (c *content) word(h uint64) {
	c.finishAttrs()
	if len(c.words) >= MaxWords {
		return
	}
	if len(c.words) == cap(c.words) {
		c.words = growWords(c.words, 1)
	}
	c.words = append(c.words, h)
	if c.inLink > 0 || c.wordInLink {
		c.anchor++
	}
	c.wordInLink = false
}

// link notes an a start or end tag.
func (c *content) link(end bool) {
	c.finishAttrs()
	switch {
	case !end:
		c.inLink++
	case c.inLink > 0:
		c.inLink--
	}
}

// endBlock ends the block being read: kept if it is main text, dropped
// otherwise.
func (c *content) endBlock() {
	c.finishAttrs()
	n := len(c.words) - c.start
	if n == 0 {
		c.anchor = 0
		return
	}
	h := blockHash(c.words[c.start:])
	if c.inTitle { // a title names the page, boilerplate or not
		c.title, c.titleBlock, c.inTitle = titleKey(c.titleText), h, false
	}
	if c.inHeading {
		c.heading, c.inHeading = wordsKey(c.headingText), false
	}
	if c.boiler > 0 || 2*c.anchor > n {
		c.words = c.words[:c.start]
		c.anchor = 0
		return
	}
	c.blocks = append(c.blocks, Block{Hash: h, start: int32(c.start), end: int32(len(c.words))})
	c.start, c.anchor = len(c.words), 0
}

// blockHash is a block's hash (Block.Hash): its words' hashes, in order,
// chained by xor and a multiply, then mixed. It tells blocks apart in
// memory only (a host's Template, Content.SharedTitleIn), never on disk,
// so it is chosen for speed: a word costs the chain 4 cycles or so, where
// mixing each word into it (titleKey's rule) cost 16, 2% of a 2,000-host
// crawl's CPU. Blocks of the same words share it; others do not but by a
// chance of 2^-64.
func blockHash(words []uint64) uint64 {
	h := uint64(fnvOffset)
	for _, w := range words {
		h = (h ^ w) * phi
	}
	return mix(h)
}

// maxTitleText bounds the title text read for titleKey.
const maxTitleText = 512

// titleSeparators cut a title into its parts: "Page | Site", "Page — Section
// — Site", "Site » Page".
var titleSeparators = []string{"|", "—", "–", "·", "»", "«", " - ", " / "}

// titleKey returns the key of a page's title: the hash of the words of
// all its parts but the last, if it has two or more ("Page | Site", "os —
// Operating system interfaces — Python documentation"), else of all its
// words: what names the page rather than its site, so that a copy of a
// page on another site, titled with that site's name, keeps its key. 0 for
// a title without words.
func titleKey(text []byte) uint64 {
	last := -1 // where the last part starts
	for i := range text {
		for _, s := range titleSeparators {
			if bytes.HasPrefix(text[i:], []byte(s)) {
				last = i
			}
		}
	}
	if last >= 0 {
		if k := wordsKey(text[:last]); k != 0 {
			return k
		}
	}
	return wordsKey(text) // one part, or nothing before the last
}

// wordsKey returns the hash of the words of text, in order; 0 if it has
// none.
func wordsKey(text []byte) uint64 {
	// The words go into a buffer from the pools, given back at the end:
	// a page takes two or three keys (title, heading, description).
	c := content{words: getWords(0)}
	defer func() { putWords(c.words) }()
	w := words{c: &c}
	w.write(text)
	w.end()
	if len(c.words) == 0 {
		return 0
	}
	h := uint64(fnvOffset)
	for _, x := range c.words {
		h = mix(h*phi + x)
	}
	return h
}

// tag notes a non-inline tag (the block before it has ended).
func (c *content) tag(a atom.Atom, end bool) {
	c.finishAttrs()
	c.inTitle, c.inHeading = false, false
	if (a == atom.Title || a == atom.H1) && !end && !c.titled {
		c.inTitle, c.titled = true, true
		c.titleText = c.titleText[:0]
	}
	if a == atom.H1 && !end {
		c.startHeading()
	}
	if !container(a) {
		return
	}
	if end {
		// Close the innermost open element of this name, and those opened
		// inside it and left open; an end tag with none open is ignored.
		for i := len(c.frames) - 1; i >= 0 && i >= len(c.frames)-maxFrames; i-- {
			if c.frames[i].a != a {
				continue
			}
			for _, f := range c.frames[i:] {
				c.pop(f)
			}
			c.frames = c.frames[:i]
			return
		}
		return
	}
	if len(c.frames) == maxFrames {
		return
	}
	f := frame{a: a, boiler: boilerElement(a, c.inMain > 0)}
	c.frames = append(c.frames, f)
	if f.boiler {
		c.boiler++
	}
	if a == atom.Article || a == atom.Main {
		c.inMain++
	}
	// body, main and article are never boilerplate by their class: a
	// theme's class list on body names every part of the page.
	c.wantAttrs = !f.boiler && a != atom.Body && a != atom.Main && a != atom.Article
}

func (c *content) pop(f frame) {
	if f.boiler {
		c.boiler--
	}
	if f.a == atom.Article || f.a == atom.Main {
		c.inMain--
	}
}

// attr reads one attribute of the frame just opened.
func (c *content) attr(key, val []byte) {
	if !c.wantAttrs {
		return
	}
	switch string(key) {
	case "role":
		if boilerRole(val) {
			c.markBoiler()
		}
	case "class", "id":
		boiler, main, title := classHints(val)
		c.hinted = c.hinted || boiler
		c.mainHint = c.mainHint || main
		if title && string(key) == "class" {
			if !c.titled {
				c.inTitle, c.titled = true, true
				c.titleText = c.titleText[:0]
			}
			c.startHeading()
		}
	}
}

// finishAttrs decides, once the attributes of the frame just opened have
// been read, whether its class or id makes it boilerplate.
func (c *content) finishAttrs() {
	if !c.wantAttrs {
		return // hinted and mainHint are false whenever wantAttrs is
	}
	if c.hinted && !c.mainHint {
		c.markBoiler()
	}
	c.wantAttrs, c.hinted, c.mainHint = false, false, false
}

// startHeading makes the block being read the page's heading, if it has
// none yet.
func (c *content) startHeading() {
	if !c.headed {
		c.inHeading, c.headed = true, true
	}
}

// markBoiler makes the innermost open frame boilerplate; its other
// attributes are not read.
func (c *content) markBoiler() {
	c.wantAttrs, c.hinted, c.mainHint = false, false, false
	if len(c.frames) == 0 {
		return
	}
	if f := &c.frames[len(c.frames)-1]; !f.boiler {
		f.boiler = true
		c.boiler++
	}
}

// container reports whether a is an element tracked as a frame: one whose
// end tag is reliably written and that may hold a page's boilerplate.
func container(a atom.Atom) bool {
	switch a {
	case atom.Div, atom.Section, atom.Article, atom.Main, atom.Nav, atom.Header, atom.Footer,
		atom.Aside, atom.Form, atom.Menu, atom.Ul, atom.Ol, atom.Dl, atom.Table, atom.Select,
		atom.Button, atom.Dialog, atom.Figure, atom.Details, atom.Body, atom.Center:
		return true
	}
	return false
}

// boilerElement reports whether an element is boilerplate by its name;
// inMain: it is inside an article or main element.
func boilerElement(a atom.Atom, inMain bool) bool {
	switch a {
	case atom.Nav, atom.Aside, atom.Form, atom.Menu, atom.Select, atom.Button, atom.Dialog:
		return true
	case atom.Header, atom.Footer:
		return !inMain
	}
	return false
}

// boilerRole reports whether an ARIA landmark role names a page's frame.
func boilerRole(v []byte) bool {
	for _, r := range bytes.Fields(bytes.ToLower(v)) {
		switch string(r) {
		case "navigation", "banner", "contentinfo", "complementary", "search", "menu", "menubar", "toolbar":
			return true
		}
	}
	return false
}

// boilerTokens are words in a class or id that name a part of a page's
// frame; a token matches when a word of the value starts with it
// ("sidebar-left", "navbar", "footer2"), except the short ones marked
// exact, which must be the whole word ("ad", not "address").
var boilerTokens = []struct {
	word  string
	exact bool
}{
	{"nav", false}, {"menu", false}, {"sidebar", false}, {"footer", false}, {"header", true},
	{"masthead", false}, {"breadcrumb", false}, {"cookie", false}, {"banner", false},
	{"ad", true}, {"ads", true}, {"advert", false}, {"sponsor", false}, {"promo", false},
	{"related", false}, {"popular", false}, {"trending", false}, {"share", true},
	{"sharing", false}, {"social", false}, {"comment", false}, {"widget", false},
	{"pager", false}, {"pagination", false}, {"toolbar", false}, {"subscribe", false},
	{"newsletter", false}, {"skip", true}, {"topbar", false}, {"copyright", false},
}

// mainTokens are words in a class or id that name a page's main text
// (or their plurals): an element that has one is never boilerplate by its
// class.
var mainTokens = []string{"content", "main", "article", "post", "entry", "story", "body", "text"}

// classHints reads a class or id value: whether a word of it names a part
// of a page's frame, whether one names its main text, and whether one is
// "title" (a page without a title element names its title so: Doxygen's
// div class="title"). Words are the value's runs of ASCII letters and
// digits, lower-cased, with camelCase split ("sideBar" is "side" and
// "bar"; "sidebar" one word).
func classHints(v []byte) (boiler, main, title bool) {
	var buf [32]byte
	for i := 0; i < len(v); {
		for i < len(v) && !alnum(v[i]) {
			i++
		}
		n := 0
		for i < len(v) && alnum(v[i]) {
			if n > 0 && upper(v[i]) && !upper(v[i-1]) {
				break // camelCase: a new word
			}
			if n < len(buf) {
				buf[n] = lowerASCII(v[i])
			}
			n++
			i++
		}
		if n == 0 || n > len(buf) {
			continue
		}
		w := string(buf[:n]) // no allocation: compared, never kept
		title = title || w == "title"
		for _, m := range mainTokens {
			if w == m || len(w) == len(m)+1 && w[len(m)] == 's' && w[:len(m)] == m {
				main = true
			}
		}
		for _, t := range boilerTokens {
			if w == t.word || !t.exact && len(w) > len(t.word) && w[:len(t.word)] == t.word {
				boiler = true
			}
		}
	}
	return boiler, main, title
}

func alnum(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' }
func upper(c byte) bool { return 'A' <= c && c <= 'Z' }
func lowerASCII(c byte) byte {
	if upper(c) {
		return c + 'a' - 'A'
	}
	return c
}

// wordSets holds wordSets for reuse by Print.
var wordSets = sync.Pool{New: func() any { return new(wordSet) }}

// wordSet is an open-addressing set of mixed 64-bit hashes, kept as their
// high 32 bits (two features of a page share them with odds of about
// n²/2^33: for a long page's 10,000, 1 in 90) and indexed by their low
// bits: 4 bytes a slot keeps a long page's set in the cache. Zero is
// stored apart (the empty slot's value).
type wordSet struct {
	slots   []uint32
	hasZero bool
}

func (s *wordSet) reset(n int) {
	size := 16
	for size < 2*n {
		size <<= 1
	}
	if cap(s.slots) >= size {
		s.slots = s.slots[:size]
		clear(s.slots)
	} else {
		s.slots = make([]uint32, size)
	}
	s.hasZero = false
}

// add adds h and reports whether it was not there.
func (s *wordSet) add(h uint64) bool {
	k := uint32(h >> 32)
	if k == 0 {
		had := s.hasZero
		s.hasZero = true
		return !had
	}
	m := uint64(len(s.slots) - 1)
	for i := h & m; ; i = (i + 1) & m {
		switch s.slots[i] {
		case k:
			return false
		case 0:
			s.slots[i] = k
			return true
		}
	}
}

// SketchBins is the number of bins of a Sketch.
const SketchBins = 64

// Sketch is a one-permutation MinHash of a set of features (Li, Owen and
// Zhang, 2012): each feature's 64-bit hash falls into bin (top 6 bits),
// and a bin keeps the low 8 bits of the least hash it got (b-bit minwise
// hashing, Li and König, 2010). Two sketches estimate the resemblance
// (Jaccard similarity) of their sets (Resemblance).
type Sketch struct {
	Min   [SketchBins]uint8
	Empty uint64 // bit i set: bin i got no feature
}

// SketchBytes is the length of a Sketch's encoding.
const SketchBytes = SketchBins + 8

// AppendTo appends s's encoding: Min, then Empty (8 bytes, big-endian).
func (s *Sketch) AppendTo(dst []byte) []byte {
	dst = append(dst, s.Min[:]...)
	return append(dst,
		byte(s.Empty>>56), byte(s.Empty>>48), byte(s.Empty>>40), byte(s.Empty>>32),
		byte(s.Empty>>24), byte(s.Empty>>16), byte(s.Empty>>8), byte(s.Empty))
}

// DecodeSketch reads a Sketch from the first SketchBytes of b; false if b
// is shorter.
func DecodeSketch(b []byte) (Sketch, bool) {
	var s Sketch
	if len(b) < SketchBytes {
		return s, false
	}
	copy(s.Min[:], b)
	for _, c := range b[SketchBins:SketchBytes] {
		s.Empty = s.Empty<<8 | uint64(c)
	}
	return s, true
}

// Filled returns how many bins of s got a feature: a page of n distinct
// features fills about 64·(1 − e^(−n/64)) of them, so a short page fills
// few, and its resemblance to another is estimated from few bins.
func (s Sketch) Filled() int { return SketchBins - bits.OnesCount64(s.Empty) }

// Resemblance estimates the Jaccard similarity of the sets a and b were
// sketched from: the share of the bins non-empty in either that hold the
// same value in both, less the 1/256 share that two 8-bit values agree by
// chance. It is 0 if both are empty, and at least 0.
func Resemblance(a, b Sketch) float64 {
	either := SketchBins - bits.OnesCount64(a.Empty&b.Empty)
	if either == 0 {
		return 0
	}
	same := 0
	both := ^(a.Empty | b.Empty)
	const low7 = 0x7f7f7f7f7f7f7f7f
	for j := range SketchBins / 8 { // 8 bins at a time
		x := binary.LittleEndian.Uint64(a.Min[8*j:]) ^ binary.LittleEndian.Uint64(b.Min[8*j:])
		// The high bit of each byte of zero is set where x's byte is 0.
		zero := ^((x&low7 + low7) | x | low7)
		same += bits.OnesCount64(zero & (spread[both>>(8*j)&0xff] << 7))
	}
	const chance = 1.0 / 256
	r := (float64(same)/float64(either) - chance) / (1 - chance)
	return max(r, 0)
}

// PrintFPWords is how many words of a page's main text (its host's
// template left out) Print.FP is taken over: a page is found by its
// beginning, and a long page costs no more to find than one of this
// length. The sketch reads every word.
const PrintFPWords = 2048

// ProbeBits is how many of a fingerprint's weakest bits in each 16-bit
// band a near lookup tries flipped (Print.Probe): the bits a small edit
// flips most.
const ProbeBits = 3

// Print is what the near-duplicate gate knows of a page: the SimHash of
// the set of its words and word pairs (FP), the mask of FP's ProbeBits weakest bits in
// each band (Probe), the Sketch of its word 2-shingles, and its number of
// words, all over the page's main text less the blocks a caller leaves out
// (a host's template); and the hash of the words of its title (Title: 0
// if it has none), template or not. Distinct pages generated from one
// pattern (an API reference's pages on two like classes) share most of
// their text but not their title; a page's copy keeps its title.
type Print struct {
	FP, Probe uint64
	Sketch    Sketch
	Words     int
	Title     uint64
	// Heading is the hash of the page's first heading (h1, or
	// class="title") and its meta description: what names a page whose
	// title is its site's (SharedTitle: PrintWith). 0 if it has neither.
	Heading     uint64
	SharedTitle bool
}

// Print returns the page's print over the blocks for which template is
// false (every block if template is nil).
func (c *Content) Print(template func(blockHash uint64) bool) Print {
	if c == nil {
		return Print{Sketch: Sketch{Empty: ^uint64(0)}}
	}
	return c.print(template)
}

// PrintWith returns the page's print with t's template left out
// (Template.Is), and whether its title is its site's rather than its own:
// on other distinct pages of the host (Template.SharedTitle: "Source code",
// a site's name on every page), then Print.Heading tells pages apart.
func (c *Content) PrintWith(t *Template) Print {
	p := c.Print(t.Is)
	p.SharedTitle = c.SharedTitleIn(t)
	return p
}

// SharedTitleIn reports whether the page's title is its site's in t
// (Template.SharedTitle), as PrintWith judges it.
func (c *Content) SharedTitleIn(t *Template) bool {
	return c != nil && t.SharedTitle(c.titleBlock)
}

func (c *Content) print(template func(uint64) bool) Print {
	var (
		p    Print
		acc  Accumulator
		mins [SketchBins]uint64
	)
	for i := range mins {
		mins[i] = ^uint64(0)
	}
	set := wordSets.Get().(*wordSet)
	defer wordSets.Put(set)
	set.reset(2 * min(len(c.words), PrintFPWords))
	var batch [64]uint64
	n, fpWords := 0, 0
	for _, bl := range c.blocks {
		if template != nil && template(bl.Hash) {
			continue
		}
		ws := c.words[bl.start:bl.end]
		p.Words += len(ws)
		prev := uint64(0)
		for i, w := range ws {
			// The sketch's feature: the word pair w ends, or a lone word.
			var f uint64
			switch {
			case i > 0:
				f = mix(prev*phi + w)
			case len(ws) == 1:
				f = mix(w)
			}
			prev = w
			if i > 0 || len(ws) == 1 {
				if v := f & (1<<58 - 1); v < mins[f>>58] {
					mins[f>>58] = v
				}
			}
			// The fingerprint's features: the word and the pair it ends,
			// each once, over the first PrintFPWords words.
			if fpWords >= PrintFPWords {
				continue
			}
			fpWords++
			if mw := mix(w); set.add(mw) {
				batch[n] = mw
				n++
			}
			if i > 0 && set.add(f) {
				batch[n] = f
				n++
			}
			if n >= len(batch)-1 {
				acc.addMany(batch[:n])
				n = 0
			}
		}
	}
	acc.addMany(batch[:n])
	p.FP = acc.Sum()
	p.Probe = acc.weakPerBand(ProbeBits)
	p.Title = c.title
	if c.heading != 0 || c.desc != 0 {
		p.Heading = mix(c.heading*phi + c.desc)
	}
	for i, m := range mins {
		if m == ^uint64(0) {
			p.Sketch.Empty |= 1 << i
		} else {
			p.Sketch.Min[i] = uint8(m)
		}
	}
	return p
}
