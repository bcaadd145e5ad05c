package simhash

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"html"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var update = flag.Bool("update", false, "rewrite testdata/golden.txt")

// rng is splitmix64: a small deterministic generator for test texts.
type rng uint64

func (r *rng) next() uint64 {
	*r += 0x9E3779B97F4A7C15
	z := uint64(*r)
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	return z ^ z>>31
}

var syllables = []string{"ka", "lo", "mi", "sen", "tur", "va", "pel", "dor", "in", "est", "ru", "bak", "no", "qui", "zel", "ar"}

// vocabulary returns n distinct made-up words.
func vocabulary(n int) []string {
	words := make([]string, 0, n)
	seen := map[string]bool{}
	r := rng(1)
	for len(words) < n {
		var b strings.Builder
		for range 1 + r.next()%3 {
			b.WriteString(syllables[r.next()%uint64(len(syllables))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			words = append(words, w)
		}
	}
	return words
}

var vocab = vocabulary(3000)

// text returns n words drawn from vocab with a skew towards the first
// ones, as in natural text.
func text(seed uint64, n int) []string {
	r := rng(seed)
	out := make([]string, n)
	for i := range out {
		a, b := r.next()%uint64(len(vocab)), r.next()%uint64(len(vocab))
		out[i] = vocab[min(a, b)]
	}
	return out
}

// page renders words as an HTML page in paragraphs, with markup, a script
// and a style sheet around them.
func page(words []string, attr string) string {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8><title>Page</title>\n")
	b.WriteString("<style>body { font: 12px serif } .x { color: red }</style>\n")
	b.WriteString(`<script>var cfg = {"a": 1, "b": "<p>not text</p>"}; function f() { return cfg.a < 2 }</script>` + "\n")
	b.WriteString("</head><body><nav><a href=/>home</a> <a href=/about>about</a></nav>\n<main>\n")
	for i, w := range words {
		if i%40 == 0 {
			if i > 0 {
				b.WriteString("</p>\n")
			}
			fmt.Fprintf(&b, `<p class="para %s" id=p%d>`, attr, i/40)
		} else {
			b.WriteByte(' ')
		}
		if i%17 == 5 {
			fmt.Fprintf(&b, `<a href="/w/%s?ref=%s">%s</a>`, w, attr, w)
		} else {
			b.WriteString(w)
		}
	}
	b.WriteString("</p>\n</main><footer>copyright notice</footer></body></html>\n")
	return b.String()
}

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b uint64
		want int
	}{
		{0, 0, 0},
		{0, 1, 1},
		{0, ^uint64(0), 64},
		{0xF0F0, 0x0F0F, 16},
	} {
		if got := Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%#x, %#x) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

// naiveSum is Charikar's definition written out: +1/-1 per bit.
func naiveSum(hs []uint64) uint64 {
	var v [64]int
	for _, h := range hs {
		for i := range v {
			if h>>i&1 == 1 {
				v[i]++
			} else {
				v[i]--
			}
		}
	}
	var s uint64
	for i, x := range v {
		if x > 0 {
			s |= 1 << i
		}
	}
	return s
}

func TestAccumulatorMatchesDefinition(t *testing.T) {
	r := rng(42)
	for _, n := range []int{0, 1, 2, 3, 254, 255, 256, 510, 1000, 70000} {
		hs := make([]uint64, n)
		for i := range hs {
			// Biased bits, so that the sums are far from balanced and
			// lane overflow would show.
			hs[i] = r.next() | r.next()&0xFFFF0000FFFF0000
		}
		var acc Accumulator
		for _, h := range hs {
			acc.Add(h)
		}
		if got, want := acc.Sum(), naiveSum(hs); got != want {
			t.Errorf("Accumulator over %d features = %#x, want %#x", n, got, want)
		}
		if acc.Count() != n {
			t.Errorf("Count() = %d, want %d", acc.Count(), n)
		}
		// The same through addMany in uneven batches, mixed with Add.
		var batched Accumulator
		sizes := []int{1, 7, 64, 0, 300, 254, 0, 2} // 0: one Add
		for i, k := 0, 0; i < n; k++ {
			size := sizes[k%len(sizes)]
			if size == 0 {
				batched.Add(hs[i])
				i++
				continue
			}
			batched.addMany(hs[i:min(i+size, n)])
			i += size
		}
		if got, want := batched.Sum(), acc.Sum(); got != want || batched.Count() != n {
			t.Errorf("addMany over %d features = %#x (count %d), want %#x", n, got, batched.Count(), want)
		}
	}
	// Every bit set in every feature: each per-bit count reaches the most
	// the planes hold (255) before each fold, and any overflow would clear
	// bits of the sum.
	for _, n := range []int{255, 256, 1000} {
		var acc, minus Accumulator
		for range n {
			acc.Add(^uint64(0))
			minus.Add(^uint64(0))
		}
		for range n + 1 {
			minus.Add(0x5555555555555555)
		}
		if got := acc.Sum(); got != ^uint64(0) {
			t.Errorf("%d all-ones features: Sum = %#x, want all ones", n, got)
		}
		if got, want := minus.Sum(), uint64(0x5555555555555555); got != want {
			t.Errorf("%d all-ones then %d 0x55... features: Sum = %#x, want %#x", n, n+1, got, want)
		}
	}
}

func TestFingerprint(t *testing.T) {
	if got := Fingerprint(nil); got != 0 {
		t.Errorf("Fingerprint(nil) = %#x, want 0", got)
	}
	one := [][]byte{[]byte("x")}
	if got, want := Fingerprint(one), Hash([]byte("x")); got != want {
		t.Errorf("Fingerprint(%q) = %#x, want its Hash %#x", one, got, want)
	}
	// FNV-1a 64 of "a" is 0xaf63dc4c8601ec8c (reference vector of the FNV
	// authors); Hash mixes it.
	if got, want := Hash([]byte("a")), mix(0xaf63dc4c8601ec8c); got != want {
		t.Errorf("Hash(%q) = %#x, want %#x", "a", got, want)
	}
}

// TestText checks the word rules on plain text.
func TestText(t *testing.T) {
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{"Hello, World!", "hello world", true},
		{"hello   world\n", " hello\tworld", true},
		{"ÉCOLE Straße", "école straße", true},
		{"one two", "two one", false},
		{"abc123 x", "abc 123 x", false},
		{"café", "cafe\u0301", false}, // precomposed vs combining: different bytes
		{"東京都", "東 京 都", true},        // one word per Han character
		{"don't", "don t", true},
		{"a", "b", false},
	} {
		ga, gb := Text([]byte(c.a)), Text([]byte(c.b))
		if (ga == gb) != c.same {
			t.Errorf("Text(%q) = %#x, Text(%q) = %#x; want equal = %v", c.a, ga, c.b, gb, c.same)
		}
	}
}

func TestEmptyIsZero(t *testing.T) {
	for _, doc := range []string{
		"",
		"   \n\t",
		"... --- !!!",
		"<html><head><title></title></head><body></body></html>",
		"<script>var words = 'many words here';</script><style>p{}</style>",
		"<!-- only a comment with words -->",
		"<noscript>enable javascript please</noscript><template><p>later text</p></template>",
		"<img alt='alt text is not visible text'>",
	} {
		if got := HTML([]byte(doc)); got != 0 {
			t.Errorf("HTML(%q) = %#x, want 0", doc, got)
		}
	}
	if got := Text(nil); got != 0 {
		t.Errorf("Text(nil) = %#x, want 0", got)
	}
}

// TestMarkupOnly: documents that differ only in markup have the same
// fingerprint, which is the Text of their visible text.
func TestMarkupOnly(t *testing.T) {
	long := strings.Join(text(3, 300), " ")
	for _, c := range []struct {
		text string
		docs []string
	}{
		{"quick brown fox jumps", []string{
			"quick brown fox jumps",
			"<p>quick brown</p><p>fox jumps</p>",
			"<p class=a>quick <b>brown</b> <a href=/x>fox</a>\n\n   jumps</p>",
			"<P CLASS='b' data-x=\"1\">quick brown fox jumps</P>",
			"<div>quick<br>brown<br/>fox<hr>jumps</div>",
			"<script>var a = 'x y z';</script>quick brown <style>.a{}</style>fox jumps",
			"<template><p>hidden words</p></template>quick brown fox <noscript>no</noscript>jumps",
			"quick brown <!-- comment words --> fox jumps",
			"<script/>var x = 'not visible';</script>quick brown <template/>hidden</template>fox jumps",
			"<!DOCTYPE html><html><body>quick&nbsp;brown fox&#32;jumps</body></html>",
		}},
		{"interoperability", []string{
			"inter<b>oper</b>ability",
			"inter<span class=x>oper</span><!-- -->ability",
			"inter<wbr>oper<wbr>ability",
		}},
		{"fish & chips", []string{"fish &amp; chips", "<p>fish&amp;chips</p>"}},
		{long, []string{
			page(strings.Fields(long), "one"),
			page(strings.Fields(long), "two three"),
			strings.ReplaceAll(page(strings.Fields(long), "one"), "cfg.a < 2", "cfg.b > 7 && other()"),
		}},
	} {
		want := Text([]byte(c.text))
		if c.text != long { // page adds its title, nav and footer
			for _, d := range c.docs {
				if got := HTML([]byte(d)); got != want {
					t.Errorf("HTML(%q) = %#x, want Text(%q) = %#x", d, got, c.text, want)
				}
			}
			continue
		}
		first := HTML([]byte(c.docs[0]))
		for _, d := range c.docs[1:] {
			if got := HTML([]byte(d)); got != first {
				t.Errorf("HTML(page variant) = %#x, want %#x as for the first variant", got, first)
			}
		}
	}
	// Words split by a block tag are two words.
	if a, b := HTML([]byte("inter<p>ability")), Text([]byte("interability")); a == b {
		t.Errorf("HTML(%q) = Text(%q) = %#x, want different", "inter<p>ability", "interability", a)
	}
}

// TestOneWordEdit: pages of a few hundred words that differ in one word
// are near-duplicates. SimHash makes this a matter of odds, not a bound:
// each edit moves 4 features' votes on each of the 64 bits, and a bit
// flips when its vote was close, which for N features happens with
// probability about 1/sqrt(N) per bit. So the test asserts the share of
// edits within distance 3 over a table of pages and positions, and a
// ceiling far below the distance of unrelated pages.
func TestOneWordEdit(t *testing.T) {
	for _, c := range []struct {
		words   int
		within3 float64 // least share of edits with Distance ≤ 3
		mean    float64 // greatest mean distance
	}{
		{300, 0.75, 2.6},
		{500, 0.85, 2.0},
		{1000, 0.90, 1.6},
	} {
		var dists []int
		for seed := uint64(1); seed <= 20; seed++ {
			words := text(seed, c.words)
			base := HTML([]byte(page(words, "x")))
			for pos := 0; pos < c.words; pos += c.words / 10 {
				edited := append([]string(nil), words...)
				edited[pos] = "replacement"
				dists = append(dists, Distance(base, HTML([]byte(page(edited, "x")))))
			}
		}
		near, sum := 0, 0
		for _, d := range dists {
			sum += d
			if d <= 3 {
				near++
			}
			if d > 10 {
				t.Errorf("%d words: one word changed: Distance = %d, want ≤ 10", c.words, d)
			}
		}
		share, mean := float64(near)/float64(len(dists)), float64(sum)/float64(len(dists))
		if share < c.within3 || mean > c.mean {
			t.Errorf("%d words, %d one-word edits: %.0f%% within distance 3 (want ≥ %.0f%%), mean distance %.2f (want ≤ %.2f)",
				c.words, len(dists), 100*share, 100*c.within3, mean, c.mean)
		}
		t.Logf("%d words: %.0f%% of one-word edits within distance 3, mean %.2f", c.words, 100*share, mean)
	}
}

// TestWeakPerBand: weakPerBand picks, in each band, the bits whose votes
// were closest.
func TestWeakPerBand(t *testing.T) {
	var a Accumulator
	// Bit i is set in i of 64 features: bit 32's vote is the closest (a
	// tie), then 31 and 33, 30 and 34; in band 0 (bits 0-15) the closest
	// are 15, 14, 13, and in band 3 (48-63) 48, 49, 50.
	for f := range 64 {
		var h uint64
		for i := range 64 {
			if f < i {
				h |= 1 << i
			}
		}
		a.Add(h)
	}
	for k, want := range map[int]uint64{
		0: 0,
		1: 1<<15 | 1<<31 | 1<<32 | 1<<48,
		3: 0x7<<13 | 0x7<<29 | 0x7<<32 | 0x7<<48,
	} {
		if got := a.weakPerBand(k); got != want {
			t.Errorf("weakPerBand(%d) = %#x, want %#x", k, got, want)
		}
	}
	if got := a.weakPerBand(100); got != 1<<64-1 {
		t.Errorf("weakPerBand(100) = %#x, want every bit", got)
	}
}

// TestUnrelatedPagesAreFar: pages with different text, even from the same
// vocabulary and template, are far apart.
func TestUnrelatedPagesAreFar(t *testing.T) {
	var fps []uint64
	for seed := uint64(100); seed < 112; seed++ {
		fps = append(fps, HTML([]byte(page(text(seed, 400), "x"))))
	}
	fps = append(fps,
		Text([]byte("the quick brown fox jumps over the lazy dog while the cat sleeps by the warm fire")),
		Text([]byte("stock markets closed lower on friday as investors weighed new inflation figures")),
	)
	total, pairs := 0, 0
	for i := range fps {
		for j := i + 1; j < len(fps); j++ {
			d := Distance(fps[i], fps[j])
			total += d
			pairs++
			if d <= 10 {
				t.Errorf("pages %d and %d: Distance = %d, want > 10", i, j, d)
			}
		}
	}
	if mean := float64(total) / float64(pairs); mean < 24 {
		t.Errorf("mean distance of unrelated pages = %.1f, want near 32", mean)
	}
}

// goldenInputs are the documents whose fingerprints are pinned in
// testdata/golden.txt: the files testdata/*.html and generated pages.
func goldenInputs(t *testing.T) map[string][]byte {
	t.Helper()
	in := map[string][]byte{}
	files, err := filepath.Glob(filepath.Join("testdata", "*.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		in[filepath.Base(f)] = b
	}
	in["generated-400"] = []byte(page(text(1, 400), "x"))
	in["generated-30k"] = benchPage()
	in["empty"] = nil
	return in
}

// TestGolden pins fingerprints: the value on disk must not change
// silently. Regenerate with -update and review the diff.
func TestGolden(t *testing.T) {
	path := filepath.Join("testdata", "golden.txt")
	in := goldenInputs(t)
	names := make([]string, 0, len(in))
	for n := range in {
		names = append(names, n)
	}
	sort.Strings(names)
	if *update {
		var b bytes.Buffer
		b.WriteString("# simhash.HTML of each input (see goldenInputs); regenerate with go test -update\n")
		for _, n := range names {
			fmt.Fprintf(&b, "%s %016x\n", n, HTML(in[n]))
		}
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := map[string]uint64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		name, hex, ok := strings.Cut(line, " ")
		v, err := strconv.ParseUint(hex, 16, 64)
		if !ok || err != nil {
			t.Fatalf("%s: bad line %q", path, line)
		}
		want[name] = v
	}
	if len(want) != len(in) {
		t.Errorf("%s has %d values, want %d (run with -update)", path, len(want), len(in))
	}
	for _, n := range names {
		w, ok := want[n]
		if !ok {
			t.Errorf("%s: no value for %s", path, n)
			continue
		}
		if got := HTML(in[n]); got != w {
			t.Errorf("HTML(%s) = %016x, want %016x", n, got, w)
		}
	}
}

func FuzzHTML(f *testing.F) {
	f.Add([]byte("<p>hello <b>world</b></p>"))
	f.Add([]byte("<script>x</script><template><p>a</template>b c"))
	f.Add([]byte("inter<span>oper</span>ability &amp; caf\u00e9 東京"))
	f.Add([]byte("<noscript>x<style>y</noscript>z"))
	f.Add([]byte("\xff\xfe<p>\x00bad utf8 \xc3</p>"))
	f.Add([]byte(page(text(5, 60), "q")))
	f.Fuzz(func(t *testing.T, doc []byte) {
		a := HTML(doc)
		if b := HTML(doc); a != b {
			t.Fatalf("HTML(%q) = %#x then %#x, want deterministic", doc, a, b)
		}
		// Text escaped into HTML reads back as the same words.
		s := string(doc)
		if got, want := HTML([]byte(html.EscapeString(s))), Text(doc); got != want {
			t.Fatalf("HTML(EscapeString(%q)) = %#x, want Text = %#x", s, got, want)
		}
		if bits.OnesCount64(a) > 0 && Text(nil) != 0 {
			t.Fatal("Text(nil) != 0")
		}
		// The main text's blocks cover its words in order, bounded, and its
		// print reads only them.
		c := HTMLContent(doc)
		end := int32(0)
		for _, bl := range c.Blocks() {
			if bl.start != end || bl.end <= bl.start {
				t.Fatalf("HTMLContent(%q): block %+v after word %d", doc, bl, end)
			}
			end = bl.end
		}
		if int(end) != c.Words() || c.Words() > MaxWords || c.SimHash() != a {
			t.Fatalf("HTMLContent(%q): blocks end at %d of %d words (max %d); SimHash %#x, HTML %#x", doc, end, c.Words(), MaxWords, c.SimHash(), a)
		}
		if p := c.Print(nil); p.Words != c.Words() {
			t.Fatalf("HTMLContent(%q).Print(nil) = %+v, want %d words", doc, p, c.Words())
		}
	})
}

// benchPage is a page of about 30 KB.
func benchPage() []byte {
	return []byte(page(text(77, 2700), "bench"))
}

func BenchmarkHTML(b *testing.B) {
	doc := benchPage()
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		HTML(doc)
	}
}

func BenchmarkText(b *testing.B) {
	txt := []byte(strings.Join(text(77, 2700), " "))
	b.SetBytes(int64(len(txt)))
	b.ReportAllocs()
	for b.Loop() {
		Text(txt)
	}
}

func BenchmarkPrint(b *testing.B) {
	doc := benchPage()
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	var t Template
	for b.Loop() {
		HTMLContent(doc).Print(t.Is)
	}
}

// TestGoldenPrint: the prints of the golden inputs (fingerprint, weak bits,
// title key, sketch) are part of the near index's on-disk format.
func TestGoldenPrint(t *testing.T) {
	path := filepath.Join("testdata", "golden-print.txt")
	in := goldenInputs(t)
	names := make([]string, 0, len(in))
	for n := range in {
		names = append(names, n)
	}
	sort.Strings(names)
	var b bytes.Buffer
	b.WriteString("# Print of each input: FP, Probe, Title, Heading, Sketch (AppendTo); regenerate with go test -update\n")
	for _, n := range names {
		p := HTMLContent(in[n]).Print(nil)
		fmt.Fprintf(&b, "%s %016x %016x %016x %016x %x\n", n, p.FP, p.Probe, p.Title, p.Heading, p.Sketch.AppendTo(nil))
	}
	if *update {
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != string(want) {
		t.Errorf("prints differ from %s (run with -update if the format is meant to change):\ngot\n%s\nwant\n%s", path, got, want)
	}
}

// BenchmarkPrintOnly is Print of a parsed page: the near gate's cost
// beyond reading the main text.
func BenchmarkPrintOnly(b *testing.B) {
	c := HTMLContent(benchPage())
	b.ReportAllocs()
	for b.Loop() {
		c.Print(nil)
	}
}

// refWrite is words.write as it was before it read ASCII in runs: one
// loop over every byte. FuzzWordsSame holds the two to the same words.
func refWrite(w *words, text []byte) {
	h, inWord := w.h, w.inWord
	for i := 0; i < len(text); {
		c := ascii[text[i]]
		if c != 0 && c < utf8.RuneSelf {
			i++
			if !inWord {
				inWord, h = true, fnvOffset
			}
			h = (h ^ uint64(c)) * fnvPrime
			continue
		}
		if c == 0 {
			i++
			if inWord {
				inWord = false
				w.emit(h)
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

// FuzzWordsSame: words.write gives the words, hashes and link-text counts
// of refWrite, for text cut into pieces anywhere (a word goes on across
// pieces), inside a link or not.
func FuzzWordsSame(f *testing.F) {
	f.Add([]byte("hello world"), uint8(3), false)
	f.Add([]byte("inter oper ability, café 東京 naïve x\u0301y  A-B_c9 "), uint8(7), true)
	f.Add([]byte("\xff\xfe\x00bad utf8 \xc3 end\xe2\x82"), uint8(2), false)
	f.Add([]byte(strings.Join(text(9, 300), " ")), uint8(41), false)
	f.Fuzz(func(t *testing.T, txt []byte, cut uint8, inLink bool) {
		var a, b content
		a.words, b.words = getWords(len(txt)/4), getWords(len(txt)/4)
		if inLink {
			a.inLink, b.inLink = 1, 1
		}
		wa, wb := words{c: &a}, words{c: &b}
		step := int(cut) + 1
		for i := 0; i < len(txt); i += step {
			piece := txt[i:min(i+step, len(txt))]
			wa.write(piece)
			refWrite(&wb, piece)
		}
		wa.end()
		wb.end()
		if !slices.Equal(a.words, b.words) || a.anchor != b.anchor {
			t.Fatalf("write(%q) in pieces of %d: words %x (%d in links), want %x (%d)", txt, step, a.words, a.anchor, b.words, b.anchor)
		}
	})
}

// BenchmarkWords is the word loop alone over a page's text (about 21 KB):
// cutting words and hashing them, into a buffer with room for them.
func BenchmarkWords(b *testing.B) {
	txt := []byte(strings.Join(text(77, 2700), " "))
	for _, bc := range []struct {
		name  string
		write func(*words, []byte)
	}{{"runs", (*words).write}, {"bytewise", refWrite}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(txt)))
			c := content{words: make([]uint64, 0, MaxWords)}
			for b.Loop() {
				c.words = c.words[:0]
				w := words{c: &c}
				bc.write(&w, txt)
				w.end()
			}
		})
	}
}
