package htmltok

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"golang.org/x/net/html"
)

// tokenizer is what both tokenizers offer that the tests use.
type tokenizer interface {
	Next() html.TokenType
	Raw() []byte
	Text() []byte
	TagName() ([]byte, bool)
	TagAttr() ([]byte, []byte, bool)
	NextIsNotRawText()
	Err() error
}

// Modes of walk: which start tags it calls NextIsNotRawText after.
const (
	rawAlways    = iota // never: raw text elements are raw
	rawNoscript         // after noscript and noframes, as links and simhash do
	rawAlternate        // after every other start tag
	modes
)

// walk reads every token of z and renders each on a line: its type, its
// raw bytes, and what Text, TagName and TagAttr give of it (each read
// twice, as a caller that reads it again would). The raw bytes are taken
// first: x/net/html decodes text in place.
func walk(z tokenizer, mode int) []string {
	var out []string
	starts := 0
	for {
		tt := z.Next()
		line := fmt.Sprintf("%v raw=%q", tt, z.Raw())
		if tt == html.ErrorToken {
			// x/net/html's Raw of the error token is not meaningful.
			line = fmt.Sprintf("%v err=%v", tt, z.Err())
			return append(out, line)
		}
		switch tt {
		case html.TextToken, html.CommentToken, html.DoctypeToken:
			line += fmt.Sprintf(" text=%q again=%q", z.Text(), z.Text())
			n, _ := z.TagName()
			k, v, _ := z.TagAttr()
			line += fmt.Sprintf(" name=%q attr=%q=%q", n, k, v)
		default:
			name, hasAttr := z.TagName()
			line += fmt.Sprintf(" name=%q has=%v", name, hasAttr)
			for more := true; more; {
				var k, v []byte
				k, v, more = z.TagAttr()
				line += fmt.Sprintf(" %q=%q", k, v)
			}
			again, _ := z.TagName()
			line += fmt.Sprintf(" again=%q text=%q", again, z.Text())
			if tt == html.StartTagToken || tt == html.SelfClosingTagToken {
				starts++
				switch mode {
				case rawNoscript:
					if s := string(name); s == "noscript" || s == "noframes" {
						z.NextIsNotRawText()
					}
				case rawAlternate:
					if starts%2 == 0 {
						z.NextIsNotRawText()
					}
				}
			}
		}
		out = append(out, line)
	}
}

// xnet returns x/net/html's tokenizer of doc, bounded to maxBuf.
func xnet(doc []byte, maxBuf int) *html.Tokenizer {
	z := html.NewTokenizer(bytes.NewReader(doc))
	z.SetMaxBuf(maxBuf)
	return z
}

func ours(doc []byte, maxBuf int) *Tokenizer {
	z := New(doc)
	z.SetMaxBuf(maxBuf)
	return z
}

// oursReader reads doc through a window of the given size, in reads of
// at most 3 bytes: tokens run into the window's end again and again.
func oursReader(doc []byte, maxBuf, window int) *Tokenizer {
	z := newReader(&trickle{doc}, window)
	z.SetMaxBuf(maxBuf)
	return z
}

// trickle gives its bytes at most 3 at a time.
type trickle struct{ b []byte }

func (t *trickle) Read(p []byte) (int, error) {
	if len(t.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), 3)], t.b)
	t.b = t.b[n:]
	return n, nil
}

// diff returns the first line where want and got differ, or "".
func diff(want, got []string) string {
	for i := range max(len(want), len(got)) {
		var w, g string
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if w != g {
			return fmt.Sprintf("token %d:\nx/net/html: %s\nhtmltok:    %s", i, w, g)
		}
	}
	return ""
}

// seeds are inputs the fuzz target starts from, and the table test
// compares too.
var seeds = []string{
	"", "plain", "<", "<a", "<a ", "<a>", "</", "</a", "</>", "</ >", "<!", "<!-", "<!--", "<!-->", "<!--->",
	"<!---->", "<!-- a -->b", "<!-- a --!>b", "<!-- a --!-->b", "<!-- a --!", "<!-- a --", "<!-- a -",
	"<!--a--!!>b-->", "<!-->x", "<!DOCTYPE html>", "<!doctype>", "<!DOCTYPE", "<!DOCTYPE ", "<!DOC",
	"<!DOCTYPEhtml>", "<!x>", "<![CDATA[x<y]]>z", "<?xml version='1.0'?>", "<? x", "a<b", "a < b", "a<1",
	"<<a>", "<a/b>", "<a/>", "<a />", "<a / >", "<a b=/>", "<a b/>", "<a b=x/>", "<a b='x'/>",
	"<a b=x/ c>", "<a b=x/ b=y/>", "<br/>", "<A HREF=X>", "<a href=x HREF=y Href=z>",
	"<a =b>", "<a ==b>", "<a b==c>", "<a b = c d= 'e' f =\"g\">", "<a b=\"x>y\">", "<a b='x\"y'>",
	"<a b=\"unclosed>", "<a b=c", "<a b", "<a\x00b c\x00d=\x00>", "</a b=c>", "</a b='>'>", "</1>",
	"</ a>", "<a href=\"a&amp;b&lt;c&gt;d&quot;e&#39;f&#x41;g&#65;h\">", "<a href=&ampx>",
	"<a href=&amp=>", "<a href='&amp=x&notit;&notin;&not=&not;'>", "x&notit;y&notin;z&not",
	"&#0;&#x110000;&#xD800;&#128;&#x9F;&#1114111;&#99999999999;&#x;&#;&#", "&;&&&amp&AMP;",
	"&fjlig;&nvlt;&NotEqualTilde;", "<a x='&fjlig;&nvlt;&ltx&lt=&lt;='>", "a\r\nb\rc\n\r", "a\x00b",
	"<a b='c\r\nd\re'>", "<title>a<b>&amp;\x00\r\n</title>c", "<title></title>", "<TITLE>x</TITLE >",
	"<title>x</titlex></title>", "<title>x</title", "<textarea>&lt;a></textarea>",
	"<style>a<b>&amp;</style >", "<style>", "<style></style", "<xmp><a></xmp>",
	"<iframe><a href=x></iframe>", "<noembed><a></noembed>", "<noframes><a href=x></noframes>",
	"<noscript><a href=x></noscript>", "<plaintext><a></plaintext>&amp;\x00",
	"<script>a<b</script>", "<script></script>", "<script/>x</script>", "<SCRIPT>x</SCRIPT>",
	"<script>x</script", "<script>x</scriptx</script>", "<script><!--x</script>",
	"<script><!--<script>x</script>y</script>z", "<script><!--<script>x</script>-->y</script>z",
	"<script><!--<SCRIPT >--></script>", "<script><!--<scripty></script>",
	"<script><!--<script>--></script>z", "<script><!--<script>-</script>--></script>",
	"<script><!---></script>", "<script><!--></script>", "<script><!-x</script>", "<script><!</script>",
	"<script><!--<1</script>", "<script><!--<a</script>", "<script><!--a<b></script>",
	"<script><!--<script></scr</script>", "<script><!--<script><</script>", "<script><!--<scr",
	"<script><!--<script>--><!--</script>", "<script><!---<script>x</script>",
	"<svg><![CDATA[<a href=x>]]></svg>", "<math><title><a href=x></title></math>",
}

// TestSameTokens compares every seed's tokens with x/net/html's, in every
// mode and under a few bounds.
func TestSameTokens(t *testing.T) {
	for _, s := range seeds {
		for mode := range modes {
			for _, maxBuf := range []int{0, 16, 17, 20, 33} {
				want := walk(xnet([]byte(s), maxBuf), mode)
				got := walk(ours([]byte(s), maxBuf), mode)
				if d := diff(want, got); d != "" {
					t.Errorf("%q (mode %d, maxBuf %d): %s", s, mode, maxBuf, d)
				}
				for _, window := range []int{1, 2, 7, 64} {
					got := walk(oursReader([]byte(s), maxBuf, window), mode)
					if d := diff(want, got); d != "" {
						t.Errorf("%q (mode %d, maxBuf %d, window %d): %s", s, mode, maxBuf, window, d)
					}
				}
			}
		}
	}
}

// FuzzSameTokens requires the tokens of any input, in any mode, under any
// bound, to be x/net/html's.
func FuzzSameTokens(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s), uint8(rawNoscript), uint8(0))
	}
	f.Fuzz(func(t *testing.T, doc []byte, mode, bound uint8) {
		maxBuf := 0
		if bound != 0 {
			maxBuf = MinMaxBuf + int(bound)%100
		}
		in := bytes.Clone(doc)
		want := walk(xnet(doc, maxBuf), int(mode)%modes)
		got := walk(ours(doc, maxBuf), int(mode)%modes)
		if d := diff(want, got); d != "" {
			t.Fatalf("%q (mode %d, maxBuf %d): %s", doc, int(mode)%modes, maxBuf, d)
		}
		window := 1 + int(bound)%37
		got = walk(oursReader(doc, maxBuf, window), int(mode)%modes)
		if d := diff(want, got); d != "" {
			t.Fatalf("%q (mode %d, maxBuf %d, window %d): %s", doc, int(mode)%modes, maxBuf, window, d)
		}
		if !bytes.Equal(in, doc) {
			t.Fatalf("%q: the document was modified", in)
		}
		// The raw bytes partition the document, up to where it stopped.
		z := ours(doc, maxBuf)
		var all []byte
		for z.Next() != html.ErrorToken {
			all = append(all, z.Raw()...)
		}
		if !bytes.HasPrefix(doc, all) || z.Err() == io.EOF && len(all) != len(doc) && !endsInTag(doc[len(all):]) {
			t.Fatalf("%q: raw tokens %q are no partition (err %v)", doc, all, z.Err())
		}
	})
}

// endsInTag reports whether rest, what follows the last token at the end
// of a document, is a tag cut off by the end (no token at all).
func endsInTag(rest []byte) bool {
	return len(rest) >= 2 && rest[0] == '<' && (rest[1] == '/' || 'a' <= rest[1]|0x20 && rest[1]|0x20 <= 'z')
}

// render gives a token stream in short: Text "..", <tag k="v">, <tag/>,
// </tag>, <!--..-->, <!DOCTYPE ..>, with the texts as Text gives them.
func render(z tokenizer) string {
	var b strings.Builder
	for {
		tt := z.Next()
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		switch tt {
		case html.ErrorToken:
			if err := z.Err(); err != io.EOF {
				fmt.Fprintf(&b, "error(%v)", err)
			} else {
				b.WriteString("EOF")
			}
			return b.String()
		case html.TextToken:
			fmt.Fprintf(&b, "%q", z.Text())
		case html.CommentToken:
			fmt.Fprintf(&b, "<!--%s-->", z.Text())
		case html.DoctypeToken:
			fmt.Fprintf(&b, "<!DOCTYPE %s>", z.Text())
		default:
			name, _ := z.TagName()
			b.WriteByte('<')
			if tt == html.EndTagToken {
				b.WriteByte('/')
			}
			b.Write(name)
			for more := true; more; {
				var k, v []byte
				k, v, more = z.TagAttr()
				if k != nil {
					fmt.Fprintf(&b, " %s=%q", k, v)
				}
			}
			if tt == html.SelfClosingTagToken {
				b.WriteByte('/')
			}
			b.WriteByte('>')
			if s := string(name); tt != html.EndTagToken && (s == "noscript" || s == "noframes") {
				z.NextIsNotRawText()
			}
		}
	}
}

// TestTricky states what the cases that trip tokenizers up give, and
// checks x/net/html agrees.
func TestTricky(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
		maxBuf         int
	}{
		{"script double escape", "<script><!--<script>a</script>b</script>c",
			`<script> "<!--<script>a</script>b" </script> "c" EOF`, 0},
		{"script double escape, dashes", "<script><!--<script>a--></script>b</script>c",
			`<script> "<!--<script>a-->" </script> "b" </script> "c" EOF`, 0},
		{"script escape closed", "<script><!--<script>a</script>--></script>c",
			`<script> "<!--<script>a</script>-->" </script> "c" EOF`, 0},
		{"script escape ends", "<script><!--a--></script>",
			`<script> "<!--a-->" </script> EOF`, 0},
		{"escaped end tag", "<script><!--a</script>b",
			`<script> "<!--a" </script> "b" EOF`, 0},
		{"end tag with space", "<script>a</script >b",
			`<script> "a" </script> "b" EOF`, 0},
		{"end tag with attribute", "<script>a</script x='>'>b",
			`<script> "a" </script> "b" EOF`, 0},
		{"not the end tag", "<script>a</scripts>b</script>",
			`<script> "a</scripts>b" </script> EOF`, 0},
		{"script to EOF", "<script>a</script", `<script> "a</script" EOF`, 0},
		{"style", "<style>a<b>&amp;</STYLE>", `<style> "a<b>&amp;" </style> EOF`, 0},
		{"title decodes", "<title>a&amp;<b>\x00</title>", "<title> \"a&<b>\uFFFD\" </title> EOF", 0},
		{"textarea decodes", "<textarea>&lt;/textarea></textarea>", `<textarea> "</textarea>" </textarea> EOF`, 0},
		{"plaintext", "<plaintext></plaintext>&amp;", `<plaintext> "</plaintext>&amp;" EOF`, 0},
		{"noscript is markup", "<noscript><a href=x></noscript>", `<noscript> <a href="x"> </noscript> EOF`, 0},
		{"noframes is markup", "<noframes><b>x</b></noframes>", `<noframes> <b> "x" </b> </noframes> EOF`, 0},
		{"iframe is raw", "<iframe><a href=x></iframe>", `<iframe> "<a href=x>" </iframe> EOF`, 0},
		{"unclosed comment", "a<!-- <a href=x>", `"a" <!-- <a href=x>--> EOF`, 0},
		{"comment dashes cut", "<!--a--", `<!--a--> EOF`, 0},
		{"comment --!>", "<!--a--!>b", `<!--a--> "b" EOF`, 0},
		{"comment <!-->", "<!-->a", `<!----> "a" EOF`, 0},
		{"comment <!--->", "<!--->a", `<!----> "a" EOF`, 0},
		{"comment text decodes", "<!--&amp;\x00-->", "<!--&\ufffd--> EOF", 0},
		{"cdata", "<![CDATA[<a href=x>]]>b", `<!--[CDATA[<a href=x--> "]]>b" EOF`, 0},
		{"processing instruction", "<?xml v?>a", `<!--?xml v?--> "a" EOF`, 0},
		{"doctype", "<!DocType  html x>", `<!DOCTYPE html x> EOF`, 0},
		{"empty end tag", "a</>b", `"a" <!----> "b" EOF`, 0},
		{"bogus end tag", "</ a>b", `<!-- a--> "b" EOF`, 0},
		{"unquoted attributes", "<a href=x?a=1&amp;b=2 rel=no follow>",
			`<a href="x?a=1&b=2" rel="no" follow="">`, 0},
		{"duplicate attributes", "<a href=1 HREF=2 x=3 Href=4>", `<a href="1" x="3">`, 0},
		{"slash between", "<a/b>", `<a b="">`, 0},
		{"self-closing", "<br/><a b=c/><a b=c />", `<br/> <a b="c/"> <a b="c"/>`, 0},
		{"slash in repeated value", "<a b=x/ b=y/>", `<a b="x/"/>`, 0},
		{"EOF in tag", "a<b c='d>", `"a" EOF`, 0},
		{"EOF in end tag", "a</b", `"a" EOF`, 0},
		{"lone <", "a<", `"a<" EOF`, 0},
		{"not a tag", "a < b <1 <<c>", `"a < b <1 <" <c> EOF`, 0},
		{"NUL", "a\x00b<a\x00 b\x00=\x00>", "\"a\\x00b\" <a\ufffd b\ufffd=\"\ufffd\"> EOF", 0},
		{"amp in attribute", "<a href='?a&amp;b&ampc&amp=d&lt;'>", `<a href="?a&b&ampc&amp=d<">`, 0},
		{"legacy prefix in text", "&notit; &amp=", `"¬it; &=" EOF`, 0},
		{"uppercase", "<DIV CLASS=X></DIV>", `<div class="X"> </div> EOF`, 0},
		{"newlines", "a\r\nb\rc<a b='\r\n'>", `"a\nb\nc" <a b="\n"> EOF`, 0},
		{"bounded text", "0123456789abcdefghij<a>", `"0123456789abcdef" error(max buffer exceeded)`, 16},
		{"bounded tag", "<a href='0123456789abcdef'>", `error(max buffer exceeded)`, 16},
		{"bounded comment", "<!--0123456789abcdef-->", `<!--0123456789ab--> error(max buffer exceeded)`, 16},
		{"bounded script", "<script>0123456789abcdefgh</script>", `<script> "0123456789abcdef" error(max buffer exceeded)`, 16},
		{"within bound", "0123456789abc<a>", `"0123456789abc" <a> EOF`, 16},
		{"lookahead counts", "0123456789abcd<a>", `"0123456789abcd<a" error(max buffer exceeded)`, 16},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.want
			if !strings.HasSuffix(want, "EOF") && !strings.Contains(want, "error(") {
				want += " EOF"
			}
			if got := render(xnet([]byte(tc.in), tc.maxBuf)); got != want {
				t.Errorf("x/net/html of %q:\n got %s\nwant %s", tc.in, got, want)
			}
			if got := render(ours([]byte(tc.in), tc.maxBuf)); got != want {
				t.Errorf("htmltok of %q:\n got %s\nwant %s", tc.in, got, want)
			}
		})
	}
}

// TestCommonReferences checks the table of common names against
// html.UnescapeString, in text and before '=' in attribute values.
func TestCommonReferences(t *testing.T) {
	for name, v := range common {
		if got := html.UnescapeString("&" + name); got != v {
			t.Errorf("common[%q] = %q, html.UnescapeString gives %q", name, v, got)
		}
	}
	for x := 0x80; x <= 0x9F; x++ {
		ref := fmt.Sprintf("&#%d;", x)
		got, n := appendNumeric(nil, []byte(ref))
		if want := html.UnescapeString(ref); string(got) != want || n != len(ref) {
			t.Errorf("%s = %q (%d bytes), want %q", ref, got, n, want)
		}
	}
}

// TestReuse checks that Reset starts over and keeps the bound.
func TestReuse(t *testing.T) {
	z := New([]byte("<a b=c>"))
	z.SetMaxBuf(16)
	if got := render(z); got != `<a b="c"> EOF` {
		t.Fatalf("first document: %s", got)
	}
	z.Reset([]byte("0123456789abcdefghij"))
	if got := render(z); got != `"0123456789abcdef" error(max buffer exceeded)` {
		t.Fatalf("second document: %s", got)
	}
	var zero Tokenizer
	if tt := zero.Next(); tt != html.ErrorToken || zero.Err() != io.EOF {
		t.Fatalf("zero Tokenizer: %v, %v", tt, zero.Err())
	}
}

// TestReaderError checks that a read error ends the document there and is
// Err's at the end, as with x/net/html.
func TestReaderError(t *testing.T) {
	boom := errors.New("boom")
	r := io.MultiReader(strings.NewReader("a<b c=d>e"), iotest.ErrReader(boom))
	want := `"a" <b c="d"> "e" error(boom)`
	if got := render(html.NewTokenizer(r)); got != want {
		t.Fatalf("x/net/html: %s, want %s", got, want)
	}
	r = io.MultiReader(strings.NewReader("a<b c=d>e"), iotest.ErrReader(boom))
	if got := render(newReader(r, 4)); got != want {
		t.Fatalf("htmltok: %s, want %s", got, want)
	}
}

// TestLongTokenFromReader checks that a token longer than the window
// grows it, and that a document read through a window has the tokens of
// the same document held whole.
func TestLongTokenFromReader(t *testing.T) {
	doc := []byte("<p title='" + strings.Repeat("x", 100000) + "'>" + strings.Repeat("<a href=y>z</a>", 5000) + "<!--" + strings.Repeat("-", 70000) + "-->")
	want := walk(New(doc), rawNoscript)
	if got := walk(NewReader(bytes.NewReader(doc)), rawNoscript); diff(want, got) != "" {
		t.Fatal(diff(want, got))
	}
}
