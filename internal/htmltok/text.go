package htmltok

import (
	"bytes"
	"unicode/utf8"

	"golang.org/x/net/html"
)

// Text returns the text of a text, comment or doctype token: "\r\n" and
// "\r" become "\n", NULs become U+FFFD in comments and in the content of
// raw text and RCDATA elements, and character references are decoded
// except in raw text. Like html.Tokenizer.Text it reads the token once: a
// second call returns an empty slice. It returns nil for other tokens.
func (z *Tokenizer) Text() []byte {
	switch z.tt {
	case html.TextToken, html.CommentToken, html.DoctypeToken:
	default:
		return nil
	}
	s := z.buf[z.data0:z.data1]
	z.data0, z.data1 = z.raw1, z.raw1
	return z.decode(s, z.convertNUL || z.tt == html.CommentToken, !z.textIsRaw, false)
}

// TagName returns the name of a start, end or self-closing tag, ASCII
// lower-cased with NULs as U+FFFD, and whether it has attributes left for
// TagAttr. Like html.Tokenizer.TagName it reads the name once: a second
// call returns nil.
func (z *Tokenizer) TagName() (name []byte, hasAttr bool) {
	switch z.tt {
	case html.StartTagToken, html.EndTagToken, html.SelfClosingTagToken:
	default:
		return nil, false
	}
	if z.data0 >= z.data1 {
		return nil, false
	}
	s := z.buf[z.data0:z.data1]
	z.data0, z.data1 = z.raw1, z.raw1
	return z.key(s), z.attrRead < len(z.attrs)
}

// TagAttr returns the next attribute of a start or self-closing tag: its
// key, ASCII lower-cased with NULs as U+FFFD, its value with "\r\n" and
// "\r" as "\n", NULs as U+FFFD and character references decoded as in an
// attribute value, and whether more attributes follow. Of attributes
// whose keys differ only in ASCII case, only the first is returned.
func (z *Tokenizer) TagAttr() (key, val []byte, more bool) {
	if z.attrRead >= len(z.attrs) || z.tt != html.StartTagToken && z.tt != html.SelfClosingTagToken {
		return nil, nil, false
	}
	a := z.attrs[z.attrRead]
	z.attrRead++
	key = z.key(z.buf[a.k0:a.k1])
	val = z.decode(z.buf[a.v0:a.v1], true, true, true)
	return key, val, z.attrRead < len(z.attrs)
}

// key returns s lower-cased with NULs as U+FFFD: s itself if that changes
// nothing.
func (z *Tokenizer) key(s []byte) []byte {
	i := 0
	for i < len(s) && s[i] != 0 && (s[i] < 'A' || s[i] > 'Z') {
		i++
	}
	if i == len(s) {
		return s
	}
	n := len(z.scratch)
	z.scratch = append(z.scratch, s[:i]...)
	for _, c := range s[i:] {
		if c == 0 {
			z.scratch = append(z.scratch, "\uFFFD"...)
		} else {
			z.scratch = append(z.scratch, lowerASCII(c))
		}
	}
	return z.scratch[n:len(z.scratch):len(z.scratch)]
}

// decode returns s with "\r\n" and "\r" as "\n", with NULs as U+FFFD if
// nul, and with character references decoded if unescape (as in an
// attribute value if attr): s itself if that changes nothing, otherwise a
// slice of z.scratch, which grows but is not overwritten until Next.
func (z *Tokenizer) decode(s []byte, nul, unescape, attr bool) []byte {
	first := -1
	if len(s) < 64 {
		// One pass costs less than three calls of IndexByte here.
		for i, c := range s {
			if class[c]&decoded != 0 && (c == '\r' || c == 0 && nul || c == '&' && unescape) {
				first = i
				break
			}
		}
	} else {
		first = bytes.IndexByte(s, '\r')
		if nul {
			first = minIndex(first, bytes.IndexByte(s, 0))
		}
		if unescape {
			first = minIndex(first, bytes.IndexByte(s, '&'))
		}
	}
	if first < 0 {
		return s
	}
	n := len(z.scratch)
	out := append(z.scratch, s[:first]...)
	for i := first; i < len(s); {
		c := s[i]
		switch {
		case c == '\r':
			out = append(out, '\n')
			i++
			if i < len(s) && s[i] == '\n' {
				i++
			}
			continue
		case c == 0 && nul:
			out = append(out, "\uFFFD"...)
			i++
			continue
		case c == '&' && unescape:
			var k int
			if out, k = appendReference(out, s[i:], attr); k > 0 {
				i += k
				continue
			}
		}
		out = append(out, c)
		i++
	}
	z.scratch = out
	return out[n:len(out):len(out)]
}

// minIndex returns the smaller of two indexes, either -1 for none.
func minIndex(a, b int) int {
	if a < 0 || b >= 0 && b < a {
		return b
	}
	return a
}

// appendReference decodes the character reference s starts with ('&') to
// dst and returns how many bytes of s it took, or 0 (dst unchanged) if s
// does not start with one, as html.UnescapeString would judge in text and
// x/net/html in attribute values (attr):
//   - "&#" and decimal digits, or "&#x" and hex digits, then an optional
//     ';': the character of that number, with the windows-1252 meaning of
//     0x80-0x9F and U+FFFD for 0, surrogates and numbers past U+10FFFF;
//   - '&', a run of ASCII letters and digits and an optional ';', that is
//     the name of a character (or two); in text, failing that, the longest
//     prefix of the run (no ';') that is a name without ';' (a legacy
//     name such as "amp" or "not"), the rest of the run left as it is. In
//     an attribute value a name without ';' followed by '=' is not
//     decoded.
func appendReference(dst, s []byte, attr bool) ([]byte, int) {
	if len(s) < 2 {
		return dst, 0
	}
	if s[1] == '#' {
		return appendNumeric(dst, s)
	}
	i := 1
	for i < len(s) && class[s[i]]&alnum != 0 {
		i++
	}
	semi := i < len(s) && s[i] == ';'
	if semi {
		i++
	}
	name := s[1:i]
	switch {
	case len(name) == 0:
		return dst, 0
	case attr && !semi && i < len(s) && s[i] == '=':
		return dst, 0
	}
	if v, ok := common[string(name)]; ok {
		return append(dst, v...), i
	}
	ref := string(s[:i])
	r := html.UnescapeString(ref)
	if r == ref || attr && isPrefixMatch(r, name) {
		return dst, 0
	}
	return append(dst, r...), i
}

// isPrefixMatch reports whether r, what html.UnescapeString gave of
// "&"+name, decoded only a prefix of name (a legacy name, at least 2 and
// at most 6 bytes, of one character) and left the rest as it was. Names
// decode to one character, or two of which the second is no ASCII letter,
// digit or ';' unless name does not end in it ("fjlig;" is "fj"), so a
// whole name's character never looks so.
func isPrefixMatch(r string, name []byte) bool {
	_, size := utf8.DecodeRuneInString(r)
	rest := r[size:]
	j := len(name) - len(rest) // the length of the prefix decoded
	return len(rest) > 0 && j >= 2 && j <= 6 && string(name[j:]) == rest
}

// common holds the named references most pages use, spared the lookup in
// html.UnescapeString (TestCommonReferences checks them against it).
var common = map[string]string{
	"amp;": "&", "amp": "&", "lt;": "<", "lt": "<", "gt;": ">", "gt": ">",
	"quot;": "\"", "quot": "\"", "apos;": "'", "nbsp;": "\u00A0", "nbsp": "\u00A0",
	"copy;": "\u00A9", "copy": "\u00A9", "reg;": "\u00AE", "reg": "\u00AE",
	"trade;": "\u2122", "mdash;": "\u2014", "ndash;": "\u2013", "hellip;": "\u2026",
	"lsquo;": "\u2018", "rsquo;": "\u2019", "ldquo;": "\u201C", "rdquo;": "\u201D",
	"laquo;": "\u00AB", "raquo;": "\u00BB", "middot;": "\u00B7", "bull;": "\u2022",
	"times;": "\u00D7", "euro;": "\u20AC", "shy;": "\u00AD",
}

// c1 maps the numbers 0x80-0x9F of numeric references to the characters
// windows-1252 has there (WHATWG HTML, "numeric character reference end
// state"); 0 where it has none, and the number stands.
var c1 = [32]rune{
	0x20AC, 0, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
	0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0, 0x017D, 0,
	0, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
	0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0, 0x017E, 0x0178,
}

// appendNumeric decodes the numeric reference s starts with ("&#").
func appendNumeric(dst, s []byte) ([]byte, int) {
	i := 2
	base := 10
	if i < len(s) && s[i]|0x20 == 'x' {
		base = 16
		i++
	}
	digits := i
	var x int
	for ; i < len(s); i++ {
		d := digit(s[i], base)
		if d < 0 {
			break
		}
		if x <= utf8.MaxRune { // past it, x stays past it
			x = x*base + d
		}
	}
	if i == digits {
		return dst, 0
	}
	if i < len(s) && s[i] == ';' {
		i++
	}
	switch {
	case 0x80 <= x && x <= 0x9F:
		if r := c1[x-0x80]; r != 0 {
			x = int(r)
		}
	case x == 0, 0xD800 <= x && x <= 0xDFFF, x > utf8.MaxRune:
		x = utf8.RuneError
	}
	return utf8.AppendRune(dst, rune(x)), i
}

// digit returns the value of c as a digit in base 10 or 16, or -1.
func digit(c byte, base int) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case base == 16 && 'a' <= c|0x20 && c|0x20 <= 'f':
		return int(c|0x20-'a') + 10
	}
	return -1
}
