package links

import (
	"bytes"
	"io"
	"mime"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/unicode"

	"github.com/trawl-crawler/trawl/simhash"
)

// encodeIn returns s in e (nil: s as it is, UTF-8).
func encodeIn(t testing.TB, e encoding.Encoding, s string) []byte {
	t.Helper()
	if e == nil {
		return []byte(s)
	}
	b, err := e.NewEncoder().Bytes([]byte(s))
	if err != nil {
		t.Fatalf("encode %q: %v", s, err)
	}
	return b
}

var (
	utf16LEBOM = unicode.UTF16(unicode.LittleEndian, unicode.UseBOM)    // writes a BOM
	utf16LE    = unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM) // writes none
	utf16BE    = unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM)
)

// pad is a comment that pushes what follows past the 1024 bytes the <meta>
// prescan and the UTF-8 guess look at.
var pad = "<!--" + strings.Repeat("x", 1100) + "-->"

// TestExtractDecodes checks that links are read in the encoding a browser
// would pick (WHATWG HTML "determining the character encoding": a byte
// order mark, then the Content-Type charset, then a <meta> in the first
// 1024 bytes, then a default) and returned in UTF-8.
func TestExtractDecodes(t *testing.T) {
	for _, c := range []struct {
		name        string
		contentType string
		prefix      string            // raw bytes before the encoded page, e.g. a BOM
		enc         encoding.Encoding // the page's bytes; nil: UTF-8
		page        string            // the page as a browser shows it
		wantEnc     string
		wantRefs    []string
	}{
		{"utf-16le with a BOM, no charset", "text/html", "", utf16LEBOM,
			`<title>t</title><a href="/le/ünï">x</a><a href=/two>y</a>`, "utf-16le", []string{"/le/ünï", "/two"}},
		{"utf-16be declared only in the header", "text/html; charset=UTF-16BE", "", utf16BE,
			`<a href="/be/ünï">x</a>`, "utf-16be", []string{"/be/ünï"}},
		{"utf-16 label in the header is little-endian", "text/html; charset=utf-16", "", utf16LE,
			`<a href="/le">x</a>`, "utf-16le", []string{"/le"}},
		{"shift_jis by meta charset", "text/html", "", japanese.ShiftJIS,
			`<meta charset="shift_jis"><a href="/日本/ページ?q=日本語">x</a>`, "shift_jis", []string{"/日本/ページ?q=日本語"}},
		{"shift_jis by http-equiv", "", "", japanese.ShiftJIS,
			`<meta http-equiv="Content-Type" content="text/html; charset=Shift_JIS"><a href="/ソ">x</a>`, "shift_jis", []string{"/ソ"}},
		{"windows-1251 by meta charset", "text/html", "", charmap.Windows1251,
			`<meta charset=windows-1251><a href="/статья">x</a>`, "windows-1251", []string{"/статья"}},
		{"windows-1251 by http-equiv", "text/html", "", charmap.Windows1251,
			`<meta http-equiv=content-type content="text/html;charset=cp1251"><a href="/статья">x</a>`, "windows-1251", []string{"/статья"}},
		{"iso-8859-1 by meta charset", "text/html", "", charmap.ISO8859_1,
			`<meta charset="ISO-8859-1"><a href="/café">x</a>`, "windows-1252", []string{"/café"}},
		{"iso-8859-1 by http-equiv", "text/html", "", charmap.ISO8859_1,
			`<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1"><a href="/café">x</a>`, "windows-1252", []string{"/café"}},
		{"the header wins over meta", "text/html; charset=windows-1251", "", charmap.Windows1251,
			`<meta charset="iso-8859-1"><a href="/статья">x</a>`, "windows-1251", []string{"/статья"}},
		{"a BOM wins over the header", "text/html; charset=iso-8859-1", "", utf16LEBOM,
			`<a href="/café">x</a>`, "utf-16le", []string{"/café"}},
		{"a UTF-8 BOM wins over the header", "text/html; charset=windows-1251", "\xEF\xBB\xBF", nil,
			`<a href="/café">x</a>`, "utf-8", []string{"/café"}},
		{"an unknown label in the header gives way to meta", "text/html; charset=x-no-such", "", charmap.Windows1251,
			`<meta charset=windows-1251><a href="/статья">x</a>`, "windows-1251", []string{"/статья"}},
		{"meta utf-16 is read as utf-8", "text/html", "", nil,
			`<meta charset="utf-16"><a href="/naïve">x</a>`, "utf-8", []string{"/naïve"}},
		{"undeclared invalid UTF-8 is windows-1252", "text/html", "", charmap.Windows1252,
			`<a href="/café">x</a><p>“quoted”</p>`, "windows-1252", []string{"/café"}},
		{"undeclared valid UTF-8 is UTF-8, also past 1024 bytes", "text/html", "", nil,
			pad + `<a href="/naïve">x</a>`, "utf-8", []string{"/naïve"}},
		{"undeclared ASCII is read as is", "", "", nil,
			`<a href="/plain">x</a>`, "windows-1252", []string{"/plain"}},
		// A browser reads this page as windows-1252 too: its meta is past
		// the prescan's 1024 bytes.
		{"a meta past 1024 bytes is not read", "text/html", "", charmap.Windows1251,
			pad + `<meta charset=windows-1251><a href="/статья">x</a>`, "windows-1252", []string{"/ñòàòüÿ"}},
		{"utf-8 declared over invalid bytes keeps them", "text/html; charset=utf-8", "", nil,
			"<a href=\"/caf\xe9\">x</a>", "utf-8", []string{"/caf\xe9"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			body := append([]byte(c.prefix), encodeIn(t, c.enc, c.page)...)
			p := ExtractWith(body, Options{Agent: "trawl", ContentType: c.contentType, SimHash: true})
			var refs []string
			for _, l := range p.Links {
				refs = append(refs, l.Ref)
			}
			if p.Encoding != c.wantEnc || !reflect.DeepEqual(refs, c.wantRefs) {
				t.Errorf("ExtractWith(%q, ContentType %q): Encoding %q, refs %q; want %q, %q",
					body, c.contentType, p.Encoding, refs, c.wantEnc, c.wantRefs)
			}
			text, enc := Decode(body, c.contentType)
			if enc != p.Encoding {
				t.Errorf("Decode(%q, %q) encoding %q, ExtractWith's %q", body, c.contentType, enc, p.Encoding)
			}
			if want := simhash.HTML(text); p.SimHash != want {
				t.Errorf("ExtractWith(%q).SimHash = %#x, want %#x (simhash.HTML of the decoded text)", body, p.SimHash, want)
			}
		})
	}
}

// TestExtractDecodesTitle checks that the title is decoded as the links are.
func TestExtractDecodesTitle(t *testing.T) {
	body := encodeIn(t, japanese.ShiftJIS, `<meta charset=sjis><title> 日本語の  ページ </title>`)
	if p := ExtractWith(body, Options{}); p.Title != "日本語の ページ" {
		t.Errorf("ExtractWith(%q).Title = %q, want %q", body, p.Title, "日本語の ページ")
	}
}

// TestDecodeDoesNotCopy checks that a body whose bytes already are its text
// in UTF-8 (UTF-8, or ASCII in an ASCII-compatible encoding) is returned as
// it is, not copied: most pages are such.
func TestDecodeDoesNotCopy(t *testing.T) {
	for _, c := range []struct {
		name, contentType, body string
		skip                    int // bytes of a BOM cut off the front
	}{
		{"utf-8 declared", "text/html; charset=utf-8", "<a href=/café>x</a>", 0},
		{"utf-8 by meta", "text/html", "<meta charset=utf-8><a href=/café>x</a>", 0},
		{"undeclared ASCII", "", "<a href=/plain>x</a>", 0},
		{"undeclared UTF-8", "text/html", pad + "<a href=/café>x</a>", 0},
		{"ASCII declared windows-1252", "text/html; charset=windows-1252", "<a href=/plain>x</a>", 0},
		{"ASCII declared shift_jis", "text/html; charset=shift_jis", "<a href=/plain>x</a>", 0},
		{"utf-8 BOM", "", "\xEF\xBB\xBF<a href=/café>x</a>", 3},
	} {
		body := []byte(c.body)
		text, enc := Decode(body, c.contentType)
		if !bytes.Equal(text, body[c.skip:]) || &text[0] != &body[c.skip] {
			t.Errorf("%s: Decode(%q, %q) = %q (%s), want the body itself from byte %d", c.name, body, c.contentType, text, enc, c.skip)
		}
	}
}

// TestDecodeConverts checks the encodings that are not ASCII-compatible:
// an ASCII page in UTF-16 is converted, and a page a WHATWG decoder reads
// as the replacement encoding yields no markup at all.
func TestDecodeConverts(t *testing.T) {
	body := encodeIn(t, utf16BE, "<a href=/x>x</a>")
	if text, enc := Decode(body, "text/html; charset=utf-16be"); string(text) != "<a href=/x>x</a>" || enc != "utf-16be" {
		t.Errorf("Decode(%q, utf-16be) = %q, %q", body, text, enc)
	}
	// iso-2022-kr is a label of the replacement encoding (WHATWG Encoding
	// §4.2): its decoder gives one U+FFFD, so no link is found.
	body = []byte("<a href=/x>x</a>")
	if p := ExtractWith(body, Options{ContentType: "text/html; charset=iso-2022-kr"}); len(p.Links) != 0 || p.Encoding != "replacement" {
		t.Errorf("ExtractWith(%q, iso-2022-kr) = %+v, want no links in encoding replacement", body, p)
	}
}

// TestExtractConvertsInPlace checks that a large page in another encoding
// is converted as it is read, not copied whole: converted, this one is
// twice its size in UTF-8.
func TestExtractConvertsInPlace(t *testing.T) {
	chunk := "<p>" + strings.Repeat("\xe9t\xe9 ", 200) + "</p><a href=/caf\xe9>x</a>\n"
	body := []byte(strings.Repeat(chunk, (16<<20)/len(chunk)))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	p := ExtractWith(body, Options{ContentType: "text/html; charset=iso-8859-1", SimHash: true})
	runtime.ReadMemStats(&after)
	if len(p.Links) != 1 || p.Links[0].Ref != "/café" || p.Content.Words() == 0 {
		t.Fatalf("ExtractWith(16 MiB of windows-1252) = %d links %v, %d words; want /café and words", len(p.Links), p.Links, p.Content.Words())
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(len(body)/8) {
		t.Errorf("ExtractWith(%d bytes of windows-1252) allocated %d bytes, want at most an eighth of the body", len(body), alloc)
	}
}

// TestRefsAreUTF8 records trawl's choice for the query of a link on a
// non-UTF-8 page: the Ref is the page's text in UTF-8, so a URL parser
// percent-encodes a non-ASCII query as UTF-8 (browsers would use the
// page's encoding); escapes written in the page are kept as written.
func TestRefsAreUTF8(t *testing.T) {
	body := encodeIn(t, charmap.Windows1251, `<meta charset=windows-1251><a href="/поиск?q=кот">x</a><a href="/s?q=%EA%EE%F2">y</a>`)
	p := ExtractWith(body, Options{})
	want := []string{"/поиск?q=кот", "/s?q=%EA%EE%F2"}
	if len(p.Links) != len(want) {
		t.Fatalf("ExtractWith(%q) = %+v, want refs %q", body, p.Links, want)
	}
	for i, l := range p.Links {
		if l.Ref != want[i] || !utf8.ValidString(l.Ref) {
			t.Errorf("link %d: Ref %q, want %q in UTF-8", i, l.Ref, want[i])
		}
	}
}

// FuzzDecode checks properties of Decode and of ExtractWith's use of it,
// for any body and Content-Type: no panic, determinism, UTF-8 bodies (and
// ASCII ones in ASCII-compatible encodings) returned without a copy, valid
// UTF-8 text from every other encoding, at most 3 bytes of text per byte
// of body, a known charset in the header obeyed unless a BOM says
// otherwise, and ExtractWith reading the same text (its SimHash, its
// Encoding, UTF-8 refs).
func FuzzDecode(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.html"))
	if err != nil {
		f.Fatal(err)
	}
	types := []string{"", "text/html", "text/html; charset=utf-8", "text/html; charset=UTF-16BE",
		"text/html;charset=shift_jis", `text/html; charset="iso-2022-jp"`, "text/html; charset=x-bogus", "text/html; charset=iso-2022-kr"}
	for i, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, types[i%len(types)])
	}
	for _, s := range []string{"", "\xff", "\xfe\xff\x00", "\xef\xbb\xbf", "\xff\xfe<\x00a\x00", "<meta charset=utf-16>",
		"<meta charset=gb18030>\x81\x30\x81\x30", "<meta http-equiv=content-type content='charset=big5'>\x88\x62\x88\x64",
		"<meta charset=iso-2022-jp>\x1b$B$\"\x1b(B", "caf\xe9", pad + "caf\xc3\xa9"} {
		for _, ct := range types {
			f.Add([]byte(s), ct)
		}
	}
	f.Fuzz(func(t *testing.T, body []byte, contentType string) {
		text, enc := Decode(body, contentType)
		if again, enc2 := Decode(body, contentType); enc2 != enc || !bytes.Equal(again, text) {
			t.Fatalf("Decode(%q, %q) not deterministic: %q %q, then %q %q", body, contentType, text, enc, again, enc2)
		}
		if enc == "" {
			t.Fatalf("Decode(%q, %q): no encoding named", body, contentType)
		}
		sameBytes := len(text) > 0 && len(body) >= len(text) && &text[0] == &body[len(body)-len(text)]
		switch {
		case enc == "utf-8" || asciiCompatible(enc) && isASCII(body):
			if skip := bomLen(body); !bytes.Equal(text, body[skip:]) || len(text) > 0 && !sameBytes {
				t.Fatalf("Decode(%q, %q) = %q (%s), want the body itself from byte %d", body, contentType, text, enc, skip)
			}
		case !utf8.Valid(text):
			t.Fatalf("Decode(%q, %q) = %q (%s): not UTF-8", body, contentType, text, enc)
		}
		if len(text) > 3*len(body) {
			t.Fatalf("Decode(%q, %q) = %d bytes of text from %d", body, contentType, len(text), len(body))
		}
		if _, params, err := mime.ParseMediaType(contentType); err == nil && bomLen(body) == 0 {
			if e, name := charset.Lookup(params["charset"]); e != nil && name != enc {
				t.Fatalf("Decode(%q, %q) read %s, not the %s the header declares", body, contentType, enc, name)
			}
		}
		r, renc := Reader(body, contentType)
		if streamed, err := io.ReadAll(r); err != nil || renc != enc || !bytes.Equal(streamed, text) {
			t.Fatalf("Reader(%q, %q) = %q (%s), %v; Decode gave %q (%s)", body, contentType, streamed, renc, err, text, enc)
		}
		p := ExtractWith(body, Options{ContentType: contentType, SimHash: true})
		if p.Encoding != enc || p.SimHash != simhash.HTML(text) {
			t.Fatalf("ExtractWith(%q, %q): Encoding %s, SimHash %#x; Decode read %s, whose SimHash is %#x",
				body, contentType, p.Encoding, p.SimHash, enc, simhash.HTML(text))
		}
		for _, l := range p.Links {
			if enc != "utf-8" && !utf8.ValidString(l.Ref) {
				t.Fatalf("ExtractWith(%q, %q) in %s: Ref %q not UTF-8", body, contentType, enc, l.Ref)
			}
		}
	})
}

// BenchmarkExtractEncodings is ExtractWith as the node calls it on
// benchPage served in several ways: UTF-8 declared by the header (most
// pages: no copy), UTF-8 declared by <meta> only (the <meta> prescan), and
// in windows-1251 and UTF-16LE (converted).
func BenchmarkExtractEncodings(b *testing.B) {
	page := strings.ReplaceAll(string(benchPage()), "Tuesday", "во вторник")
	for _, c := range []struct {
		name, contentType string
		enc               encoding.Encoding
	}{
		{"utf-8 header", "text/html; charset=utf-8", nil},
		{"utf-8 meta", "text/html", nil},
		{"windows-1251 header", "text/html; charset=windows-1251", charmap.Windows1251},
		{"utf-16le BOM", "text/html", utf16LEBOM},
	} {
		b.Run(c.name, func(b *testing.B) {
			body := encodeIn(b, c.enc, page)
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				p := ExtractWith(body, Options{Agent: "trawl", SimHash: true, ContentType: c.contentType})
				if len(p.Links) == 0 || p.SimHash == 0 {
					b.Fatal("no links or no SimHash")
				}
			}
		})
	}
}
