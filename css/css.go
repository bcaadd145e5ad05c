// Package css finds the URLs a stylesheet refers to: url() values and
// @import rules, the references that make a page's styles, fonts and
// background images replay. It reads CSS as CSS Syntax Level 3 tokenises
// it (comments, strings, escapes, url tokens), without parsing rules: a
// reference is found wherever it appears, in a rule, a declaration or an
// inline style attribute.
//
// It is pure and safe for concurrent use; it never panics on malformed
// input, reads its input once, and returns at most the number of
// references asked for. References are returned as written (escapes
// decoded, surrounding space trimmed), not resolved: a stylesheet's
// references are relative to the stylesheet's URL, an inline style's to
// the page's.
package css

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// Ref is one reference found in a stylesheet.
type Ref struct {
	// URL is the reference as written, escapes decoded; never empty.
	URL string
	// Import reports an @import rule's stylesheet (itself CSS, whose
	// references count too), as opposed to a url() value (an image, a
	// font, a cursor...).
	Import bool
}

// DefaultMax is the references Refs returns at most when max <= 0.
const DefaultMax = 1000

// maxURL bounds one reference's length in bytes; a longer one (a data:
// URL inlining a font, say) is not returned.
const maxURL = 8 << 10

// Refs returns the distinct references in the stylesheet src, in order,
// at most limit of them (DefaultMax if limit <= 0). data: URLs and
// fragment-only references ("#filter") are left out: they fetch nothing.
func Refs(src []byte, limit int) []Ref {
	if limit <= 0 {
		limit = DefaultMax
	}
	s := scanner{src: src}
	var out []Ref
	seen := map[Ref]bool{}
	add := func(r Ref) {
		if r.URL == "" || len(r.URL) > maxURL || skipped(r.URL) || seen[r] || len(out) >= limit {
			return
		}
		seen[r] = true
		out = append(out, r)
	}
	importNext := false  // the last token was an @import at-keyword
	inNamespace := false // within an @namespace rule, up to its ';'

	// depth counts open parentheses; imageSet is the depth inside an
	// image-set() (0 outside), whose strings at its own level are URLs.
	depth, imageSet := 0, 0
	for len(out) < limit {
		t := s.next()
		switch t.kind {
		case tokEOF:
			return out
		case tokSpace, tokComment:
			continue // @import may be followed by space and comments
		case tokAtImport:
			importNext = true
			continue
		case tokString:
			switch {
			case importNext:
				add(Ref{URL: trimmed(t.value), Import: true})
			case imageSet > 0 && depth == imageSet:
				add(Ref{URL: trimmed(t.value)})
			}
		case tokAtNamespace:
			inNamespace = true
		case tokSemicolon:
			inNamespace = false
		case tokURL:
			if !inNamespace {
				add(Ref{URL: trimmed(t.value), Import: importNext})
			}
		case tokFunction, tokOpen:
			depth++
			if t.kind == tokFunction && imageSet == 0 && t.imageSet {
				imageSet = depth
			}
		case tokClose:
			if depth == imageSet {
				imageSet = 0
			}
			depth = max(depth-1, 0)
		}
		importNext = false
	}
	return out
}

// isImageSet reports the functions whose strings are image URLs.
func isImageSet(name []byte) bool {
	return bytes.EqualFold(name, []byte("image-set")) || bytes.EqualFold(name, []byte("-webkit-image-set"))
}

// trimmed is v as a string without surrounding ASCII whitespace (a
// copy: the Ref outlives the source).
func trimmed(v []byte) string { return string(bytes.TrimSpace(v)) }

// skipped reports references that fetch nothing: data: URLs and
// fragment-only ones (an SVG filter's "#id").
func skipped(u string) bool {
	if strings.HasPrefix(u, "#") {
		return true
	}
	return len(u) >= 5 && strings.EqualFold(u[:5], "data:")
}

type tokKind int

const (
	tokEOF tokKind = iota
	tokSpace
	tokComment
	tokString
	tokURL         // url(...) unquoted, or url("...") / url('...')
	tokAtImport    // @import
	tokAtNamespace // @namespace, whose url() names, never fetched
	tokFunction    // a name and '(' (value: the name, decoded)
	tokOpen        // '('
	tokClose       // ')'
	tokSemicolon
	tokOther
)

// token is one token; value (a string's or a url's, escapes decoded) is
// a slice of the source where it holds no escape, so that the many
// strings and names no reference needs cost no allocation.
type token struct {
	kind     tokKind
	value    []byte
	imageSet bool // a tokFunction named image-set or -webkit-image-set
}

// scanner tokenises as much of CSS as finding references needs: what
// else it meets comes back as tokOther, one code point or identifier at
// a time.
type scanner struct {
	src []byte
	pos int
}

func (s *scanner) peek(k int) byte {
	if s.pos+k < len(s.src) {
		return s.src[s.pos+k]
	}
	return 0
}

func (s *scanner) next() token {
	if s.pos >= len(s.src) {
		return token{kind: tokEOF}
	}
	c := s.src[s.pos]
	switch {
	case c == '/' && s.peek(1) == '*':
		end := indexFrom(s.src, s.pos+2, "*/")
		if end < 0 {
			s.pos = len(s.src)
		} else {
			s.pos = end + 2
		}
		return token{kind: tokComment}
	case isSpace(c):
		for s.pos < len(s.src) && isSpace(s.src[s.pos]) {
			s.pos++
		}
		return token{kind: tokSpace}
	case c == '"' || c == '\'':
		s.pos++
		v, _ := s.string(c)
		return token{kind: tokString, value: v}
	case c == '@':
		s.pos++
		name := s.ident()
		switch {
		case bytes.EqualFold(name, []byte("import")):
			return token{kind: tokAtImport}
		case bytes.EqualFold(name, []byte("namespace")):
			return token{kind: tokAtNamespace}
		}
		return token{kind: tokOther}
	case c == '\\' && validEscape(c, s.peek(1)), isNameStart(c), c == '-':
		name := s.ident()
		if len(name) == 0 { // a lone '-'
			s.pos++
			return token{kind: tokOther}
		}
		if s.peek(0) == '(' {
			s.pos++
			if bytes.EqualFold(name, []byte("url")) {
				return s.url()
			}
			return token{kind: tokFunction, imageSet: isImageSet(name)}
		}
		return token{kind: tokOther}
	case c == '(':
		s.pos++
		return token{kind: tokOpen}
	case c == ')':
		s.pos++
		return token{kind: tokClose}
	case c == ';':
		s.pos++
		return token{kind: tokSemicolon}
	}
	s.pos++
	return token{kind: tokOther}
}

// ident consumes a name (identifier characters and escapes) and returns
// it decoded: a slice of the source unless it holds an escape.
func (s *scanner) ident() []byte {
	start := s.pos
	for s.pos < len(s.src) && isName(s.src[s.pos]) {
		s.pos++
	}
	if s.pos >= len(s.src) || s.src[s.pos] != '\\' || !validEscape('\\', s.peek(1)) {
		return s.src[start:s.pos]
	}
	b := append([]byte(nil), s.src[start:s.pos]...)
	for s.pos < len(s.src) && len(b) <= maxURL {
		c := s.src[s.pos]
		switch {
		case isName(c):
			b = append(b, c)
			s.pos++
		case c == '\\' && validEscape(c, s.peek(1)):
			s.pos++
			b = append(b, s.escape()...)
		default:
			return b
		}
	}
	return b
}

// string consumes a string's body after its opening quote q and returns
// it decoded; ok is false for a string ended by a newline (a bad string,
// dropped) or by the end of input (kept, as CSS does).
func (s *scanner) string(q byte) (v []byte, ok bool) {
	// Without an escape the value is a slice of the source.
	start := s.pos
	for s.pos < len(s.src) {
		c := s.src[s.pos]
		if c == q {
			s.pos++
			return s.src[start : s.pos-1], true
		}
		if c == '\n' || c == '\r' || c == '\f' {
			return nil, false
		}
		if c == '\\' {
			break
		}
		s.pos++
	}
	if s.pos >= len(s.src) {
		return s.src[start:], true
	}
	b := bytes.NewBuffer(append([]byte(nil), s.src[start:s.pos]...))
	for s.pos < len(s.src) {
		c := s.src[s.pos]
		switch {
		case c == q:
			s.pos++
			return b.Bytes(), true
		case c == '\n' || c == '\r' || c == '\f':
			return nil, false
		case c == '\\':
			s.pos++
			if s.pos >= len(s.src) {
				return b.Bytes(), true
			}
			if n := s.src[s.pos]; n == '\n' || n == '\f' {
				s.pos++ // an escaped newline continues the string
				continue
			} else if n == '\r' {
				s.pos++
				if s.peek(0) == '\n' {
					s.pos++
				}
				continue
			}
			b.WriteString(s.escape())
		default:
			if b.Len() <= maxURL {
				b.WriteByte(c)
			}
			s.pos++
		}
	}
	return b.Bytes(), true
}

// url consumes what follows "url(": a quoted string (then space and ')'),
// or an unquoted URL up to ')'. A bad URL (a quote, '(' or a non-printable
// character inside an unquoted one) yields tokOther, as CSS drops it.
func (s *scanner) url() token {
	for s.pos < len(s.src) && isSpace(s.src[s.pos]) {
		s.pos++
	}
	if c := s.peek(0); c == '"' || c == '\'' {
		s.pos++
		v, ok := s.string(c)
		s.skipTo(')')
		if !ok {
			return token{kind: tokOther}
		}
		return token{kind: tokURL, value: v}
	}
	// The value is a slice of the source up to the first escape, if any;
	// from there it is built in b.
	start, end := s.pos, s.pos
	var b []byte
	escaped := false
	value := func() []byte {
		if escaped {
			return b
		}
		return s.src[start:end]
	}
	for s.pos < len(s.src) {
		c := s.src[s.pos]
		switch {
		case c == ')':
			s.pos++
			return token{kind: tokURL, value: value()}
		case isSpace(c):
			for s.pos < len(s.src) && isSpace(s.src[s.pos]) {
				s.pos++
			}
			if s.peek(0) == ')' || s.pos >= len(s.src) {
				s.pos++
				return token{kind: tokURL, value: value()}
			}
			s.skipTo(')')
			return token{kind: tokOther}
		case c == '"' || c == '\'' || c == '(' || c < 0x20 && c != '\t' || c == 0x7f:
			s.skipTo(')')
			return token{kind: tokOther}
		case c == '\\':
			if !validEscape(c, s.peek(1)) {
				s.skipTo(')')
				return token{kind: tokOther}
			}
			if !escaped {
				b, escaped = append([]byte(nil), s.src[start:end]...), true
			}
			s.pos++
			b = append(b, s.escape()...)
		default:
			if escaped && len(b) <= maxURL {
				b = append(b, c)
			}
			s.pos++
			end = s.pos
		}
	}
	return token{kind: tokURL, value: value()} // unclosed at the end of input: kept
}

// skipTo consumes up to and including the next c (escapes skipped), or
// to the end: the remnants of a bad url.
func (s *scanner) skipTo(c byte) {
	for s.pos < len(s.src) {
		x := s.src[s.pos]
		s.pos++
		if x == '\\' {
			s.pos++
			continue
		}
		if x == c {
			return
		}
	}
}

// escape consumes an escape after its backslash: up to six hex digits
// and one whitespace after them, or one code point. It returns what it
// stands for; zero, surrogates and values past U+10FFFF stand for
// U+FFFD.
func (s *scanner) escape() string {
	if s.pos >= len(s.src) {
		return "\uFFFD"
	}
	if isHex(s.src[s.pos]) {
		v, n := rune(0), 0
		for n < 6 && s.pos < len(s.src) && isHex(s.src[s.pos]) {
			v = v*16 + rune(hexVal(s.src[s.pos]))
			s.pos++
			n++
		}
		if s.pos < len(s.src) && isSpace(s.src[s.pos]) {
			if s.src[s.pos] == '\r' && s.peek(1) == '\n' {
				s.pos++
			}
			s.pos++
		}
		if v == 0 || v > utf8.MaxRune || v >= 0xD800 && v <= 0xDFFF {
			return "\uFFFD"
		}
		return string(v)
	}
	r, n := utf8.DecodeRune(s.src[s.pos:])
	s.pos += n
	return string(r)
}

func indexFrom(b []byte, from int, sep string) int {
	if from > len(b) {
		return -1
	}
	i := bytes.Index(b[from:], []byte(sep))
	if i < 0 {
		return -1
	}
	return from + i
}

func validEscape(a, b byte) bool { return a == '\\' && b != '\n' && b != '\r' && b != '\f' }

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }

func isNameStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= 0x80
}

func isName(c byte) bool { return isNameStart(c) || c >= '0' && c <= '9' || c == '-' }

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func hexVal(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}
