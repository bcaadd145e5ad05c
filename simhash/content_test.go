package simhash

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// mainText returns the main text HTMLContent keeps of doc, as words.
func mainText(doc string) string {
	var b Builder
	b.html(NewTokenizer([]byte(doc)))
	c := b.Content()
	// Words are hashes; find each back from the document's own words.
	names := map[uint64]string{}
	for _, w := range strings.FieldsFunc(strings.ToLower(doc), func(r rune) bool {
		return !('a' <= r && r <= 'z' || '0' <= r && r <= '9')
	}) {
		names[wordHash(w)] = w
	}
	var out []string
	for _, bl := range c.Blocks() {
		var ws []string
		for _, h := range c.words[bl.start:bl.end] {
			ws = append(ws, names[h])
		}
		out = append(out, strings.Join(ws, " "))
	}
	return strings.Join(out, " | ")
}

func wordHash(w string) uint64 {
	h := uint64(fnvOffset)
	for i := range len(w) {
		h = (h ^ uint64(w[i])) * fnvPrime
	}
	return h
}

// TestMainText: the Builder keeps a page's main text and leaves out what
// frames it.
func TestMainText(t *testing.T) {
	for _, c := range []struct {
		name, doc, want string
	}{
		{"paragraphs are blocks", `<p>one two</p><p>three <b>four</b></p>`, "one two | three four"},
		{"title is text", `<title>the title</title><p>body text</p>`, "the title | body text"},
		{"nav aside form", `<nav>menu words</nav><aside>side words</aside><form>search <button>go</button></form><p>kept</p>`, "kept"},
		{"header and footer of the page", `<header>site name</header><p>kept</p><footer>copyright</footer>`, "kept"},
		{"header and footer of an article", `<article><header>article title</header><p>kept</p><footer>by someone</footer></article>`, "article title | kept | by someone"},
		{"class names a frame part", `<div class="sidebar-left">side</div><div id=footer2>foot</div><div class=ad>buy</div><p>kept</p>`, "kept"},
		{"camel case", `<div class="topNav">menu</div><div class="navigator">menu</div><p>kept</p>`, "kept"},
		{"short tokens are whole words", `<div class=address>main street</div><div class="shared-text">kept too</div>`, "main street | kept too"},
		{"a main token wins", `<div class="content has-sidebar">kept</div>`, "kept"},
		{"body and main never by class", `<body class="page sidebar-right"><main class=menu><p>kept</p></main></body>`, "kept"},
		{"role", `<div role=navigation>menu</div><div role="complementary">side</div><div role=main>kept</div>`, "kept"},
		{"nested frames end with theirs", `<div class=sidebar><div><p>side</p></div><p>side again</p></div><p>kept</p>`, "kept"},
		{"an unclosed inner element", `<div class=menu><ul><li>a<li>b</div><p>kept</p>`, "kept"},
		{"link-dense blocks", `<ul><li><a href=/>home</a></li><li><a href=/b>about us</a></li></ul><p>see <a href=/x>this</a> and more words here</p>`, "see this and more words here"},
		{"mostly links", `<p><a href=/1>one two three</a> four</p><p>five <a href=/2>six</a> seven</p>`, "five six seven"},
		{"scripts are not text", `<p>kept</p><script>var x = "words"</script><style>.a{}</style>`, "kept"},
		{"a stray end tag", `</div></nav><p>kept</p>`, "kept"},
	} {
		if got := mainText(c.doc); got != c.want {
			t.Errorf("%s: main text of %s\n = %q\nwant %q", c.name, c.doc, got, c.want)
		}
	}
}

// TestTitle: a print's title is the page's title element, or if it has
// none the first h1 or class="title" element, even inside boilerplate.
func TestTitle(t *testing.T) {
	title := func(doc string) uint64 { return HTMLContent([]byte(doc)).Print(nil).Title }
	same := [][2]string{
		{`<title>Uses of Foo</title><h1>other</h1><p>x</p>`, `<title>Uses  of foo</title><p>y</p>`},
		{`<h1>Class List</h1><p>x</p>`, `<div class=header><div class="title">Class List</div></div>`},
		{`<p>no title</p>`, `<p>none either</p>`},
		{`<title>A long article name | Site A</title>`, `<title>A long article name - The Other Site</title>`},
		{`<title>os — Miscellaneous interfaces — Python 3.11 documentation</title>`, `<title>os — Miscellaneous interfaces — Python 3.12 docs</title>`},
	}
	for _, c := range same {
		if a, b := title(c[0]), title(c[1]); a != b {
			t.Errorf("titles of %q and %q differ (%#x, %#x), want equal", c[0], c[1], a, b)
		}
	}
	differ := [][2]string{
		{`<title>Uses of Foo</title>`, `<title>Uses of Bar</title>`},
		{`<div class=header><div class="title">Class List</div></div>`, `<div class=header><div class="title">Namespace List</div></div>`},
		{`<p>none</p>`, `<h1>a heading</h1>`},
		{`<title>An article | Site</title>`, `<title>Another article | Site</title>`},
	}
	for _, c := range differ {
		if a, b := title(c[0]), title(c[1]); a == b {
			t.Errorf("titles of %q and %q are equal, want them to differ", c[0], c[1])
		}
	}
}

// TestSharedTitle: once two distinct pages of a host had a title, a page
// with it is printed as having its site's title, and pages are told apart
// by their headings.
func TestSharedTitle(t *testing.T) {
	page := func(h1 string) *Content {
		return HTMLContent([]byte("<title>SFML</title><div class=title>" + h1 + "</div><p>" + strings.Join(text(3, 200), " ") + "</p>"))
	}
	var tm Template
	if p := page("a").PrintWith(&tm); p.SharedTitle {
		t.Fatal("a first page's title is shared")
	}
	tm.Add(page("a"))
	if p := page("b").PrintWith(&tm); p.SharedTitle {
		t.Fatal("a title on one page of the host is shared: a copy judged distinct would make it so")
	}
	tm.Add(page("b"))
	pc := page("c").PrintWith(&tm)
	if !pc.SharedTitle {
		t.Fatal("a title on two distinct pages of the host is not shared")
	}
	if pa := page("a").Print(nil); pa.Title != pc.Title || pa.Heading == pc.Heading || pa.Heading == 0 {
		t.Errorf("pages of one title, two headings: titles %#x %#x, headings %#x %#x", pa.Title, pc.Title, pa.Heading, pc.Heading)
	}
}

// TestClassHints checks the words of class and id values.
func TestClassHints(t *testing.T) {
	for _, c := range []struct {
		v                   string
		boiler, main, title bool
	}{
		{"sidebar", true, false, false},
		{"site-footer clearfix", true, false, false},
		{"topNav", true, false, false},
		{"ad", true, false, false},
		{"ad-slot", true, false, false},
		{"adventure", false, false, false},
		{"headertitle", false, false, false},
		{"title", false, false, true},
		{"post-content", false, true, false},
		{"related-posts", true, true, false},
		{"", false, false, false},
		{strings.Repeat("x", 100) + " nav", true, false, false},
	} {
		b, m, ti := classHints([]byte(c.v))
		if b != c.boiler || m != c.main || ti != c.title {
			t.Errorf("classHints(%q) = %v, %v, %v; want %v, %v, %v", c.v, b, m, ti, c.boiler, c.main, c.title)
		}
	}
}

// setSketch sketches a set of features as Content.Print does.
func setSketch(feats []uint64) Sketch {
	var mins [SketchBins]uint64
	for i := range mins {
		mins[i] = ^uint64(0)
	}
	for _, f := range feats {
		h := mix(f)
		if v := h & (1<<58 - 1); v < mins[h>>58] {
			mins[h>>58] = v
		}
	}
	var s Sketch
	for i, m := range mins {
		if m == ^uint64(0) {
			s.Empty |= 1 << i
		} else {
			s.Min[i] = uint8(m)
		}
	}
	return s
}

// TestResemblance: sketches estimate the Jaccard similarity of sets of
// known overlap, within a few points.
func TestResemblance(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, j := range []float64{0, 0.3, 0.6, 0.8, 0.9, 1} {
		var sum float64
		const trials, n = 50, 1000
		for range trials {
			// Sets A and B of n features each sharing k: J = k / (2n - k).
			k := int(2 * float64(n) * j / (1 + j))
			shared := make([]uint64, k)
			for i := range shared {
				shared[i] = r.Uint64()
			}
			a, b := append([]uint64(nil), shared...), append([]uint64(nil), shared...)
			for range n - k {
				a, b = append(a, r.Uint64()), append(b, r.Uint64())
			}
			sum += Resemblance(setSketch(a), setSketch(b))
		}
		if got := sum / trials; got < j-0.03 || got > j+0.03 {
			t.Errorf("Jaccard %.2f: mean estimate %.3f over %d pairs, want within 0.03", j, got, trials)
		}
	}
	empty := Sketch{Empty: ^uint64(0)}
	if got := Resemblance(empty, empty); got != 0 {
		t.Errorf("Resemblance of two empty sketches = %v, want 0", got)
	}
	one := setSketch([]uint64{1, 2, 3})
	if got := Resemblance(one, one); got != 1 {
		t.Errorf("Resemblance of a sketch with itself = %v, want 1", got)
	}
}

func TestSketchEncoding(t *testing.T) {
	s := setSketch([]uint64{5, 6, 7, 8})
	b := s.AppendTo([]byte{0xee})
	if len(b) != 1+SketchBytes {
		t.Fatalf("encoding is %d bytes, want %d", len(b)-1, SketchBytes)
	}
	got, ok := DecodeSketch(b[1:])
	if !ok || got != s {
		t.Errorf("DecodeSketch(AppendTo(s)) = %v, %v; want s", got, ok)
	}
	if _, ok := DecodeSketch(b[1:SketchBytes]); ok {
		t.Error("DecodeSketch of a cut-off encoding succeeded")
	}
}

// article renders a page of a site with a large frame: a menu, a sidebar
// with a prose blurb in a plain div, a footer, and the words as the
// article.
func article(title string, words []string, blurb []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<html><head><title>%s</title></head><body><div class=top>", title)
	for i := range 30 {
		fmt.Fprintf(&b, `<a href="/s/%d">section %s</a> `, i, vocab[i])
	}
	b.WriteString("</div><div class=wrap><div class=box><p>" + strings.Join(blurb, " ") + "</p></div><div class=story>")
	for i := 0; i < len(words); i += 50 {
		b.WriteString("<p>" + strings.Join(words[i:min(i+50, len(words))], " ") + "</p>")
	}
	b.WriteString("</div></div><div class=bottom><p>" + strings.Join(blurb[:len(blurb)/2], " ") + "</p></div></body></html>")
	return b.String()
}

// TestPrintEdits: copies of a page with a few percent of its words
// replaced resemble it at DefaultNearResemblance-like levels, distinct
// pages of one template do not once the Template has learned it.
func TestPrintEdits(t *testing.T) {
	blurb := text(999, 400) // a prose frame larger than most articles
	var tmpl Template
	for seed := uint64(1); seed <= 8; seed++ {
		tmpl.Add(HTMLContent([]byte(article(fmt.Sprint("page ", seed), text(seed, 100), blurb))))
	}
	r := rand.New(rand.NewPCG(7, 8))
	for _, c := range []struct {
		edit float64
		min  float64 // least share of copies resembling their page at 0.75
	}{{0.01, 0.99}, {0.03, 0.95}} {
		near, n := 0, 0
		for seed := uint64(100); seed < 160; seed++ {
			words := text(seed, 300+int(seed%5)*100)
			title := fmt.Sprint("article ", seed)
			orig := HTMLContent([]byte(article(title, words, blurb))).Print(tmpl.Is)
			edited := append([]string(nil), words...)
			for _, i := range r.Perm(len(words))[:int(c.edit*float64(len(words))+0.5)] {
				edited[i] = vocab[r.IntN(len(vocab))]
			}
			cp := HTMLContent([]byte(article(title, edited, blurb))).Print(tmpl.Is)
			n++
			if Resemblance(orig.Sketch, cp.Sketch) >= 0.75 && orig.Title == cp.Title {
				near++
			}
		}
		if share := float64(near) / float64(n); share < c.min {
			t.Errorf("%.0f%% of words replaced: %d of %d copies resemble their page at 0.75, want at least %.0f%%", 100*c.edit, near, n, 100*c.min)
		}
	}
	// Distinct 100-word pages in the 400-word frame: without the template
	// they resemble each other, with it they do not.
	a := HTMLContent([]byte(article("page a", text(500, 100), blurb)))
	b := HTMLContent([]byte(article("page b", text(501, 100), blurb)))
	if r := Resemblance(a.Print(nil).Sketch, b.Print(nil).Sketch); r < 0.5 {
		t.Errorf("distinct pages in one frame resemble each other at %.2f without the template, want at least 0.5 (the test's frame is too small)", r)
	}
	if r := Resemblance(a.Print(tmpl.Is).Sketch, b.Print(tmpl.Is).Sketch); r > 0.2 {
		t.Errorf("distinct pages in one frame resemble each other at %.2f with the template left out, want at most 0.2", r)
	}
}

// TestTemplate: a block becomes template once enough pages had it.
func TestTemplate(t *testing.T) {
	page := func(blocks ...string) *Content {
		var b strings.Builder
		for _, bl := range blocks {
			b.WriteString("<p>" + bl + "</p>")
		}
		return HTMLContent([]byte(b.String()))
	}
	var tm Template
	shared := page("the same footer words").Blocks()[0].Hash
	for i := range TemplateMinPages - 1 {
		tm.Add(page("the same footer words", fmt.Sprint("own words ", i)))
	}
	if tm.Is(shared) {
		t.Fatalf("a block is template after %d pages, want not before %d", tm.Pages(), TemplateMinPages)
	}
	tm.Add(page("the same footer words", "own words x"))
	if !tm.Is(shared) {
		t.Errorf("a block on all %d pages is not template", tm.Pages())
	}
	if own := page("own words 1").Blocks()[0].Hash; tm.Is(own) {
		t.Error("a block on one page is template")
	}
	// A block on under TemplateShare of the pages is not template.
	var rare Template
	for i := range 20 {
		if i < 5 {
			rare.Add(page("sometimes here", fmt.Sprint("own ", i)))
		} else {
			rare.Add(page(fmt.Sprint("own ", i)))
		}
	}
	if h := page("sometimes here").Blocks()[0].Hash; rare.Is(h) {
		t.Error("a block on 5 of 20 pages is template")
	}
	// Bounded: a host of endless distinct blocks keeps at most
	// MaxTemplateBlocks and still learns its template.
	var big Template
	for i := range 500 {
		big.Add(page("the same footer words", fmt.Sprint("a ", i), fmt.Sprint("b ", i), fmt.Sprint("c ", i)))
		if len(big.counts) > MaxTemplateBlocks {
			t.Fatalf("%d block counts, want at most %d", len(big.counts), MaxTemplateBlocks)
		}
	}
	if !big.Is(shared) {
		t.Error("a block on every page of a host of many blocks is not template")
	}
}

// TestResemblanceCounts: Resemblance counts exactly the bins equal and
// filled in both, against a bin-by-bin count.
func TestResemblanceCounts(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		var a, b Sketch
		for i := range SketchBins {
			a.Min[i] = uint8(r.IntN(4))
			b.Min[i] = uint8(r.IntN(4))
		}
		a.Empty, b.Empty = r.Uint64()&r.Uint64(), r.Uint64()&r.Uint64()
		either, same := 0, 0
		for i := range SketchBins {
			ea, eb := a.Empty>>i&1 == 1, b.Empty>>i&1 == 1
			if !ea || !eb {
				either++
			}
			if !ea && !eb && a.Min[i] == b.Min[i] {
				same++
			}
		}
		want := 0.0
		if either > 0 {
			want = max((float64(same)/float64(either)-1.0/256)/(1-1.0/256), 0)
		}
		if got := Resemblance(a, b); got != want {
			t.Fatalf("Resemblance(%v, %v) = %v, want %v (%d of %d bins)", a, b, got, want, same, either)
		}
	}
}

// TestReleaseAndClone: a Content's buffer goes back to the pools on
// Release and the next Builder reuses it; a Clone taken before is not
// touched by that reuse, and reads as the original did.
func TestReleaseAndClone(t *testing.T) {
	page := func(word string, n int) []byte {
		var b strings.Builder
		b.WriteString("<html><title>A page</title><body><main>")
		for i := range n {
			fmt.Fprintf(&b, "<p>%s %d and some more words of %s text</p>\n", word, i, word)
		}
		b.WriteString("</main></body></html>")
		return []byte(b.String())
	}
	for _, n := range []int{1, 100, 700, 5000} { // classes 1K to 16K words (cut at MaxWords)
		a := HTMLContent(page("alpha", n))
		want := a.Print(nil)
		words, blocks := a.Words(), len(a.Blocks())
		kept := a.Clone()
		a.Release()
		if a.Words() != 0 || len(a.Blocks()) != 0 {
			t.Fatalf("%d: a released Content reads %d words, %d blocks; want none", n, a.Words(), len(a.Blocks()))
		}
		for range 4 { // take the buffer back, and write over it
			b := HTMLContent(page("beta", n))
			b.Release()
		}
		if got := kept.Print(nil); got != want || kept.Words() != words || len(kept.Blocks()) != blocks {
			t.Errorf("%d: the clone reads %+v (%d words, %d blocks) after its original's buffer was reused; want %+v (%d, %d)",
				n, got, kept.Words(), len(kept.Blocks()), want, words, blocks)
		}
		if kept.Words() > MaxWords {
			t.Errorf("%d: %d words kept, more than MaxWords", n, kept.Words())
		}
	}
	var nilContent *Content
	nilContent.Release()
	if nilContent.Clone() != nil {
		t.Error("Clone of a nil Content is not nil")
	}
}

// TestWordClasses: every request is served by the smallest class that
// holds it, and only buffers of a class go back to the pools.
func TestWordClasses(t *testing.T) {
	for _, c := range []struct{ n, capacity int }{{1, 1024}, {1024, 1024}, {1025, 2048}, {5000, 8192}, {MaxWords, MaxWords}, {MaxWords + 9, MaxWords}} {
		if w := getWords(c.n); cap(w) != c.capacity || len(w) != 0 {
			t.Errorf("getWords(%d): len %d cap %d, want 0 and %d", c.n, len(w), cap(w), c.capacity)
		}
	}
	w := growWords(append(getWords(1), 1, 2, 3), 2000)
	if cap(w) != 2048 || len(w) != 3 || w[2] != 3 {
		t.Errorf("growWords: len %d cap %d, want 3 words kept in a buffer of 2048", len(w), cap(w))
	}
	putWords(make([]uint64, 0, 1000)) // of no class: left to the collector
	if w := getWords(1000); cap(w) != 1024 {
		t.Errorf("a buffer of no class was pooled: got cap %d", cap(w))
	}
}

// TestBlockHash: blocks of the same words in the same order share a hash;
// reordered, cut short, lengthened or with a word changed they do not.
func TestBlockHash(t *testing.T) {
	seen := map[uint64]string{}
	add := func(ws []uint64) {
		t.Helper()
		key := fmt.Sprint(ws)
		h := blockHash(ws)
		if blockHash(slices.Clone(ws)) != h {
			t.Fatalf("blockHash(%v) not stable", ws)
		}
		if prev, ok := seen[h]; ok && prev != key {
			t.Fatalf("blockHash(%v) = blockHash(%s) = %#x", ws, prev, h)
		}
		seen[h] = key
	}
	var vocab [50]uint64
	for i := range vocab {
		vocab[i] = wordsKeyHash(fmt.Sprint("w", i))
	}
	r := uint64(1)
	for range 20000 {
		n := 1 + int(r%12)
		ws := make([]uint64, n)
		for i := range ws {
			r = r*6364136223846793005 + 1442695040888963407
			ws[i] = vocab[r>>58%uint64(len(vocab))]
		}
		add(ws)
		if n > 1 {
			add(ws[:n-1])
		}
		rev := slices.Clone(ws)
		slices.Reverse(rev)
		add(rev)
		add(append(slices.Clone(ws), ws[0]))
	}
	add([]uint64{0})
	add([]uint64{0, 0})
}

// wordsKeyHash is the FNV-1a hash words gives w (a word of ASCII letters
// and digits).
func wordsKeyHash(w string) uint64 {
	h := uint64(fnvOffset)
	for i := 0; i < len(w); i++ {
		h = (h ^ uint64(w[i])) * fnvPrime
	}
	return h
}

// BenchmarkContent reads a page's main text (words and blocks), as the
// near-duplicate gate does before it prints it.
func BenchmarkContent(b *testing.B) {
	doc := benchPage()
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		HTMLContent(doc).Release()
	}
}

// BenchmarkTitleKey is the key of a page's title, taken at the end of the
// title element (and of its first heading, and of its description).
func BenchmarkTitleKey(b *testing.B) {
	title := []byte("os — Miscellaneous operating system interfaces — Python 3 documentation")
	b.ReportAllocs()
	for b.Loop() {
		titleKey(title)
	}
}
