// Package htmltok tokenizes an HTML document, giving the token stream that
// golang.org/x/net/html's Tokenizer gives of the same bytes, several times
// faster: text runs are skipped with bytes.IndexByte and tags are read in
// place instead of byte by byte through an io.Reader. links.ExtractWith
// and simhash read every fetched page with it.
//
// A document held whole (New) is read where it is. One read from an
// io.Reader (NewReader, for a page converted to UTF-8 as it is read) is
// read through a window that holds at least the token being read: a
// token that runs into the window's end is read again from its start once
// the window holds more, so the tokens do not depend on how the reader
// cuts the document.
//
// Its job and invariants:
//
//   - Same tokens as html.NewTokenizer(bytes.NewReader(doc)) with
//     SetMaxBuf(n) (CDATA sections not allowed, no fragment context):
//     for every token, the same type, Raw, Text, TagName and TagAttr, and
//     the same Err at the end (io.EOF, or html.ErrBufferExceeded when a
//     token reaches the bound; see SetMaxBuf). Raw text elements (script,
//     with the escape states of the script data state, style, xmp,
//     iframe, noembed, noframes, noscript, plaintext) and RCDATA elements
//     (textarea, title) end exactly where x/net/html ends them, and its
//     departures from the WHATWG tokenizer are kept: a '<' that starts no
//     tag in escaped script data returns to plain script data, "</>" is
//     an empty comment, comments and doctypes have their character
//     references decoded, a tag is self-closing unless the last attribute
//     kept ends in its "/", and "<![CDATA[" opens a bogus comment
//     everywhere. The differential fuzz tests hold it to that.
//   - The document is never modified. Raw returns a slice of it; Text,
//     TagName and TagAttr return a slice of it when nothing needs decoding,
//     otherwise a slice of a buffer the Tokenizer owns. Either stays valid,
//     unchanged, until the next call to Next; callers must not modify it.
//   - The Raw slices of the tokens before the ErrorToken partition the
//     document (up to where a bounded token stopped the reading).
//   - Time is linear in the document's size (a token read again after a
//     refill is at most half the window, which the refill filled at least
//     half anew), memory is the Tokenizer, the window of a reader (twice
//     the longest token at most), and a buffer of at most a few times the
//     longest decoded token; it never panics.
//
// It is written from the WHATWG HTML tokenization rules, with x/net/html's
// behaviour where it differs, not copied from it. Character references
// are decoded by the same rules (in text, a legacy name without ';', or
// only a prefix of the name; in attribute values, neither, and no name
// without ';' before '='), names outside a small table of common ones
// looked up with html.UnescapeString.
package htmltok

import (
	"bytes"
	"io"

	"golang.org/x/net/html"
)

// MinMaxBuf is the least bound SetMaxBuf takes: below it x/net/html's
// reading of "<!DOCTYPE" and "<![CDATA[" at the bound differs in ways no
// caller needs.
const MinMaxBuf = 16

// attr locates one saved attribute of the current start tag in the
// document: its key buf[k0:k1] and its value buf[v0:v1], both raw.
type attr struct{ k0, k1, v0, v1 int }

// Tokenizer returns the tokens of an HTML document in a []byte. The zero
// value tokenizes an empty document; Reset or New gives it one. It is not
// safe for concurrent use.
type Tokenizer struct {
	buf []byte
	pos int // where the next token starts
	err error
	tt  html.TokenType

	// r, when not nil, is the rest of the document past buf, which is a
	// window into it; rerr is what r's last read returned (nil while it
	// has more to give). short is set when a token ran into the window's
	// end before r had given everything: it is read again after a refill.
	r     io.Reader
	rerr  error
	short bool

	// The current token is buf[raw0:raw1]; its data (text, comment or
	// doctype content, or tag name) is buf[data0:data1] until Text or
	// TagName has read it.
	raw0, raw1, data0, data1 int

	// Reading of the current token stops at lim: a token that would read
	// the byte at lim ends there, as at the end of the document, with its
	// raw bytes running to stop (lim+1 when the bound, not the end of the
	// document, stopped it: x/net/html counts the byte it refused).
	lim, stop int
	maxBuf    int

	// rawTag is the lower-cased name of the raw text or RCDATA element
	// whose start tag was the last token, "" if none: the next token is
	// its content.
	rawTag string
	// textIsRaw: the current text has no character references to decode
	// (raw text). convertNUL: its NULs become U+FFFD.
	textIsRaw, convertNUL bool

	attrs     []attr
	attrRead  int             // attributes TagAttr has returned
	attrNames map[string]bool // lower-cased keys, once a tag has many

	scratch []byte // decoded text, names and values of the current token
}

// New returns a Tokenizer of doc, without a bound on tokens.
func New(doc []byte) *Tokenizer {
	z := new(Tokenizer)
	z.Reset(doc)
	return z
}

// windowBytes is the size a reader's window starts at.
const windowBytes = 32 << 10

// NewReader returns a Tokenizer of the document r gives, without a bound
// on tokens. It reads r through a window of 32 KiB, grown to hold the
// longest token. A read error other than io.EOF ends the document there,
// and is what Err returns at its end.
func NewReader(r io.Reader) *Tokenizer {
	return newReader(r, windowBytes)
}

func newReader(r io.Reader, window int) *Tokenizer {
	return &Tokenizer{r: r, buf: make([]byte, 0, max(window, 1))}
}

// Reset makes z tokenize doc from its start, keeping its bound (SetMaxBuf)
// and its buffers; a Tokenizer of a reader becomes one of doc.
func (z *Tokenizer) Reset(doc []byte) {
	*z = Tokenizer{
		buf:       doc,
		maxBuf:    z.maxBuf,
		attrs:     z.attrs[:0],
		attrNames: z.attrNames,
		scratch:   z.scratch[:0],
	}
	clear(z.attrNames)
}

// SetMaxBuf bounds the tokens read, as html.Tokenizer.SetMaxBuf does: a
// token whose reading reaches its n-th byte (counting the bytes the
// tokenizer looked at past its end to find the end) is the last: it ends
// there, as at the end of the document, if it is text or a comment, and
// is dropped if it is a tag; Next then returns ErrorToken with Err
// html.ErrBufferExceeded. n <= 0 means no bound; n below MinMaxBuf is
// taken as MinMaxBuf.
func (z *Tokenizer) SetMaxBuf(n int) {
	if n > 0 && n < MinMaxBuf {
		n = MinMaxBuf
	}
	z.maxBuf = max(n, 0)
}

// NextIsNotRawText makes the next token be read as markup even if the last
// was the start tag of a raw text element (such as noscript).
func (z *Tokenizer) NextIsNotRawText() { z.rawTag = "" }

// Err returns the error of the last ErrorToken: io.EOF at the end of the
// document, html.ErrBufferExceeded when a token reached the bound; nil if
// the last token was not an ErrorToken.
func (z *Tokenizer) Err() error {
	if z.tt != html.ErrorToken {
		return nil
	}
	return z.err
}

// Raw returns the bytes of the current token as they are in the document.
func (z *Tokenizer) Raw() []byte { return z.buf[z.raw0:z.raw1] }

// Next reads the next token and returns its type; ErrorToken at the end
// (Err tells why), and on every call after.
func (z *Tokenizer) Next() html.TokenType {
	for {
		rawTag := z.rawTag
		tt := z.next()
		if !z.short {
			return tt
		}
		// The token ran into the end of the window: read it again with
		// more of the document in.
		z.short = false
		z.rawTag = rawTag
		z.pos = z.raw0
		z.refill()
	}
}

// refill moves the token being read (buf[pos:]) to the start of the
// window, doubling the window if it takes more than half, and fills the
// rest from r.
func (z *Tokenizer) refill() {
	live := len(z.buf) - z.pos
	win := z.buf[:cap(z.buf)]
	if 2*live > cap(z.buf) {
		win = make([]byte, 2*cap(z.buf))
	}
	copy(win, z.buf[z.pos:])
	n, err := io.ReadFull(z.r, win[live:])
	switch err {
	case nil:
	case io.ErrUnexpectedEOF:
		z.rerr = io.EOF
	default:
		z.rerr = err
	}
	z.buf, z.pos = win[:live+n], 0
}

// next is Next, once the window holds the token (or not: short).
func (z *Tokenizer) next() html.TokenType {
	start := z.pos
	z.raw0, z.raw1, z.data0, z.data1 = start, start, start, start
	z.attrs = z.attrs[:0]
	z.attrRead = 0
	z.scratch = z.scratch[:0]
	if z.err != nil {
		z.tt = html.ErrorToken
		return z.tt
	}
	z.lim, z.stop = len(z.buf), len(z.buf)
	if z.maxBuf > 0 && start+z.maxBuf-1 < len(z.buf) {
		z.lim = start + z.maxBuf - 1
		z.stop = z.lim + 1
	}
	if tag := z.rawTag; tag != "" {
		z.rawTag = ""
		var end int
		switch tag {
		case "plaintext":
			end = z.fail()
		case "script":
			end = z.scriptEnd(start)
		default:
			end = z.rawTextEnd(start, tag)
		}
		if end > start {
			z.textIsRaw = tag != "textarea" && tag != "title"
			z.convertNUL = true
			return z.token(html.TextToken, end, start, end)
		}
		// An empty element: its end tag is read as markup.
	}
	z.textIsRaw, z.convertNUL = false, false
	return z.markup(start)
}

// fail ends the reading: the current token could not read the byte at lim.
// It returns where the token's raw bytes end. If lim is only the end of
// a reader's window, the token is short instead: Next reads it again.
func (z *Tokenizer) fail() int {
	if z.r != nil && z.rerr == nil && z.lim == len(z.buf) {
		z.short = true
		return z.stop
	}
	if z.err == nil {
		switch {
		case z.lim < len(z.buf):
			z.err = html.ErrBufferExceeded
		case z.rerr != nil:
			z.err = z.rerr
		default:
			z.err = io.EOF
		}
	}
	return z.stop
}

// token makes the current token one of type tt ending at end, with data
// buf[d0:d1].
func (z *Tokenizer) token(tt html.TokenType, end, d0, d1 int) html.TokenType {
	z.tt = tt
	z.raw1, z.pos = end, end
	z.data0, z.data1 = d0, max(d1, d0)
	return tt
}

// errorToken ends the token stream: a tag ran into lim.
func (z *Tokenizer) errorToken() html.TokenType {
	end := z.fail()
	z.tt = html.ErrorToken
	z.raw1, z.pos = end, end
	z.data0, z.data1 = end, end
	return z.tt
}

// textToLimit returns the text from start to where the reading stopped.
func (z *Tokenizer) textToLimit(start int) html.TokenType {
	end := z.fail()
	if end > start {
		return z.token(html.TextToken, end, start, end)
	}
	z.tt = html.ErrorToken
	return z.tt
}

// Byte classes.
const (
	space   = 1 << iota // HTML whitespace: \t \n \f \r and space
	nameEnd             // ends a tag name: space, / and >
	keyEnd              // ends an attribute key after its first byte: nameEnd and =
	valEnd              // ends an unquoted attribute value: space and >
	letter              // ASCII letter
	alnum               // ASCII letter or digit
	decoded             // \r, NUL or '&': Text or TagAttr may change it
)

var class = func() (t [256]uint8) {
	for _, c := range []byte(" \t\n\f\r") {
		t[c] |= space | nameEnd | keyEnd | valEnd
	}
	t['/'] |= nameEnd | keyEnd
	t['>'] |= nameEnd | keyEnd | valEnd
	t['='] |= keyEnd
	for c := 'a'; c <= 'z'; c++ {
		t[c] |= letter | alnum
		t[c-'a'+'A'] |= letter | alnum
	}
	for c := '0'; c <= '9'; c++ {
		t[c] |= alnum
	}
	t['\r'] |= decoded
	t[0] |= decoded
	t['&'] |= decoded
	return t
}()

// skipSpace returns the first index from i on that is not whitespace, or
// lim.
func (z *Tokenizer) skipSpace(i int) int {
	for i < z.lim && class[z.buf[i]]&space != 0 {
		i++
	}
	return i
}

// markup reads a token in the data state: text, a tag, a comment or a
// doctype.
func (z *Tokenizer) markup(start int) html.TokenType {
	buf, lim := z.buf, z.lim
	i := start
	for {
		j := bytes.IndexByte(buf[i:lim], '<')
		if j < 0 {
			return z.textToLimit(start)
		}
		p := i + j
		if p+1 >= lim {
			return z.textToLimit(start)
		}
		c := buf[p+1]
		if class[c]&letter == 0 && c != '/' && c != '!' && c != '?' {
			i = p + 1 // "<" and what follows are text
			continue
		}
		if p > start {
			return z.token(html.TextToken, p, start, p)
		}
		switch c {
		case '/':
			return z.endTagOpen(start)
		case '!':
			return z.markupDeclaration(start)
		case '?':
			// A processing instruction is a bogus comment.
			return z.bogusComment(start, start+1)
		}
		return z.startTag(start)
	}
}

// bogusComment reads a comment whose data starts at from and ends before
// the next '>'.
func (z *Tokenizer) bogusComment(start, from int) html.TokenType {
	if j := bytes.IndexByte(z.buf[from:z.lim], '>'); j >= 0 {
		return z.token(html.CommentToken, from+j+1, from, from+j)
	}
	end := z.fail()
	return z.token(html.CommentToken, end, from, end)
}

// endTagOpen reads what follows "</".
func (z *Tokenizer) endTagOpen(start int) html.TokenType {
	i := start + 2
	if i >= z.lim {
		return z.textToLimit(start)
	}
	switch c := z.buf[i]; {
	case c == '>':
		// "</>" is no token in HTML; x/net/html gives an empty comment.
		return z.token(html.CommentToken, i+1, start, start)
	case class[c]&letter != 0:
		end, ok := z.tag(i, false)
		if !ok {
			return z.errorToken()
		}
		return z.token(html.EndTagToken, end, z.data0, z.data1)
	}
	return z.bogusComment(start, i)
}

// markupDeclaration reads what follows "<!": a comment, a doctype or a
// bogus comment (CDATA sections are bogus comments in HTML content).
func (z *Tokenizer) markupDeclaration(start int) html.TokenType {
	buf, lim := z.buf, z.lim
	i := start + 2
	switch {
	case i >= lim:
		end := z.fail()
		return z.token(html.CommentToken, end, i, end)
	case i+1 >= lim:
		end := z.fail()
		if buf[i] == '>' {
			return z.token(html.CommentToken, end, i, end-1)
		}
		return z.token(html.CommentToken, end, i, end)
	case buf[i] == '-' && buf[i+1] == '-':
		return z.comment(start, i+2)
	}
	const doctype = "doctype"
	for k := 0; k < len(doctype); k++ {
		if i+k >= lim || buf[i+k]|0x20 != doctype[k] {
			return z.bogusComment(start, i)
		}
	}
	j := z.skipSpace(i + len(doctype))
	if j >= lim {
		end := z.fail()
		return z.token(html.DoctypeToken, end, end, end)
	}
	if k := bytes.IndexByte(buf[j:lim], '>'); k >= 0 {
		return z.token(html.DoctypeToken, j+k+1, j, j+k)
	}
	end := z.fail()
	return z.token(html.DoctypeToken, end, j, end)
}

// comment reads a comment whose data starts at from, after "<!--".
//
// It ends at the first '>' that follows "--" or "--!" of its data, or
// that only dashes precede in it ("<!-->", "<!--->"); at the end of the
// reading, its data loses a trailing "--!", "--" or "-".
func (z *Tokenizer) comment(start, from int) html.TokenType {
	buf, lim := z.buf, z.lim
	for i := from; ; {
		j := bytes.IndexByte(buf[i:lim], '>')
		if j < 0 {
			break
		}
		q := i + j
		switch {
		case q == from || q == from+1 && buf[from] == '-':
			return z.token(html.CommentToken, q+1, from, from)
		case q-2 >= from && buf[q-1] == '-' && buf[q-2] == '-':
			return z.token(html.CommentToken, q+1, from, q-2)
		case q-3 >= from && buf[q-1] == '!' && buf[q-2] == '-' && buf[q-3] == '-':
			return z.token(html.CommentToken, q+1, from, q-3)
		}
		i = q + 1
	}
	end := z.fail()
	d := buf[from:end]
	switch {
	case bytes.HasSuffix(d, []byte("--!")):
		return z.token(html.CommentToken, end, from, end-3)
	case bytes.HasSuffix(d, []byte("--")):
		return z.token(html.CommentToken, end, from, end-2)
	case bytes.HasSuffix(d, []byte("-")):
		return z.token(html.CommentToken, end, from, end-1)
	}
	return z.token(html.CommentToken, end, from, end)
}

// startTag reads a start tag whose name starts at start+1.
func (z *Tokenizer) startTag(start int) html.TokenType {
	end, ok := z.tag(start+1, true)
	if !ok {
		return z.errorToken()
	}
	z.rawTag = rawTextTag(z.buf[z.data0:z.data1])
	// "<br/>" closes itself, but not "<a href=x/>", whose last value
	// holds the '/'.
	tt := html.StartTagToken
	if z.buf[end-2] == '/' && (len(z.attrs) == 0 || z.attrs[len(z.attrs)-1].v1 != end-1) {
		tt = html.SelfClosingTagToken
	}
	return z.token(tt, end, z.data0, z.data1)
}

// rawTextTag returns the lower-cased name of the element named name if its
// content is raw text or RCDATA, "" otherwise.
func rawTextTag(name []byte) string {
	if len(name) < 3 || len(name) > 9 {
		return ""
	}
	var b [9]byte
	for i, c := range name {
		b[i] = c | 0x20 // a non-letter cannot match below either way
		if class[c]&letter == 0 {
			return ""
		}
	}
	switch s := b[:len(name)]; string(s) {
	case "iframe":
		return "iframe"
	case "noembed":
		return "noembed"
	case "noframes":
		return "noframes"
	case "noscript":
		return "noscript"
	case "plaintext":
		return "plaintext"
	case "script":
		return "script"
	case "style":
		return "style"
	case "textarea":
		return "textarea"
	case "title":
		return "title"
	case "xmp":
		return "xmp"
	}
	return ""
}

// tag reads the name and attributes of a start tag (save) or an end tag
// (whose attributes are read but not kept), the name starting at i. It
// returns the index after the closing '>', or false if the reading
// stopped first. The name is left in data.
func (z *Tokenizer) tag(i int, save bool) (end int, ok bool) {
	buf, lim := z.buf, z.lim
	z.data0 = i
	for i++; i < lim && class[buf[i]]&nameEnd == 0; i++ {
	}
	if i >= lim {
		return 0, false
	}
	z.data1 = i
	if class[buf[i]]&space != 0 {
		i++
	}
	if i = z.skipSpace(i); i >= lim {
		return 0, false
	}
	for buf[i] != '>' {
		// The key: any bytes up to whitespace, '/', '>' or '=', but a
		// first '=' is part of it. A '/' is no key (k1 == k0): it is
		// skipped as the value below.
		k0, k1 := i, i
		if buf[i] != '/' {
			for k1++; k1 < lim && class[buf[k1]]&keyEnd == 0; k1++ {
			}
			if k1 >= lim {
				return 0, false
			}
		}
		v0, v1 := k1, k1
		if i = z.skipSpace(k1); i >= lim {
			return 0, false
		}
		switch buf[i] {
		case '/':
			i++
		case '=':
			if i = z.skipSpace(i + 1); i >= lim {
				return 0, false
			}
			switch q := buf[i]; q {
			case '>':
			case '"', '\'':
				j := bytes.IndexByte(buf[i+1:lim], q)
				if j < 0 {
					return 0, false
				}
				v0, v1 = i+1, i+1+j
				i = v1 + 1
			default:
				v0 = i
				for i++; i < lim && class[buf[i]]&valEnd == 0; i++ {
				}
				if i >= lim {
					return 0, false
				}
				v1 = i
				if buf[i] != '>' {
					i++
				}
			}
		}
		if save && k1 > k0 && z.newKey(k0, k1) {
			z.attrs = append(z.attrs, attr{k0, k1, v0, v1})
		}
		if i = z.skipSpace(i); i >= lim {
			return 0, false
		}
	}
	return i + 1, true
}

// newKey reports whether the attribute key buf[k0:k1] differs, ignoring
// ASCII case, from those of the attributes saved so far: only the first
// of a repeated attribute counts.
func (z *Tokenizer) newKey(k0, k1 int) bool {
	key := z.buf[k0:k1]
	const few = 16
	if len(z.attrs) < few {
		for _, a := range z.attrs {
			if equalFold(z.buf[a.k0:a.k1], key) {
				return false
			}
		}
		return true
	}
	if z.attrNames == nil {
		z.attrNames = make(map[string]bool)
	}
	if len(z.attrs) == few {
		clear(z.attrNames)
		for _, a := range z.attrs {
			z.attrNames[string(lower(z.buf[a.k0:a.k1]))] = true
		}
	}
	k := string(lower(key))
	if z.attrNames[k] {
		return false
	}
	z.attrNames[k] = true
	return true
}

// equalFold reports whether a and b are equal under ASCII case folding.
func equalFold(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if lowerASCII(a[i]) != lowerASCII(b[i]) {
			return false
		}
	}
	return true
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// lower returns b with ASCII letters lower-cased, in a new slice.
func lower(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		out[i] = lowerASCII(c)
	}
	return out
}

// isEndTag reports whether buf[i:] starts with the end tag of the raw
// text element tag, "</" already matched at i-2: the name in any ASCII
// case, then whitespace, '/' or '>'. It returns the index where that
// failed to match (the reading goes on from there), or where the
// reading stopped (at or past lim).
func (z *Tokenizer) isEndTag(i int, tag string) (next int, ok bool) {
	buf, lim := z.buf, z.lim
	for k := 0; k < len(tag); k++ {
		if i+k >= lim {
			return lim, false
		}
		if lowerASCII(buf[i+k]) != tag[k] {
			return i + k, false
		}
	}
	i += len(tag)
	if i >= lim {
		return lim, false
	}
	return i, class[buf[i]]&nameEnd != 0
}

// rawTextEnd returns where the content of the raw text or RCDATA element
// tag, starting at start, ends: before its end tag, or where the reading
// stopped.
func (z *Tokenizer) rawTextEnd(start int, tag string) int {
	buf, lim := z.buf, z.lim
	for i := start; ; {
		j := bytes.IndexByte(buf[i:lim], '<')
		if j < 0 {
			return z.fail()
		}
		p := i + j
		if p+1 >= lim {
			return z.fail()
		}
		if buf[p+1] != '/' {
			i = p + 1
			continue
		}
		next, ok := z.isEndTag(p+2, tag)
		if ok {
			return p
		}
		if next >= lim {
			return z.fail()
		}
		i = next
	}
}

// Script data states (WHATWG HTML 13.2.5.4 and 13.2.5.15-13.2.5.31), as
// x/net/html runs them.
const (
	scriptData = iota
	scriptEscaped
	scriptEscapedDash
	scriptEscapedDashDash
	scriptDoubleEscaped
	scriptDoubleEscapedDash
	scriptDoubleEscapedDashDash
)

// scriptEnd returns where the content of a script element, starting at
// start, ends: before its end tag outside double-escaped script data
// ("<!--<script>...</script>-->"), or where the reading stopped.
func (z *Tokenizer) scriptEnd(start int) int {
	buf, lim := z.buf, z.lim
	state := scriptData
	i := start
	for {
		if state == scriptData {
			j := bytes.IndexByte(buf[i:lim], '<')
			if j < 0 {
				return z.fail()
			}
			i += j
		}
		if i >= lim {
			return z.fail()
		}
		c := buf[i]
		i++
		switch state {
		case scriptData: // c == '<'
			if i >= lim {
				return z.fail()
			}
			switch buf[i] {
			case '/':
				next, ok := z.isEndTag(i+1, "script")
				if ok {
					return i - 1
				}
				i = next
			case '!':
				// "<!--" escapes; anything else is script data again.
				if i+1 >= lim {
					return z.fail()
				}
				if buf[i+1] != '-' {
					i++
					break
				}
				if i+2 >= lim {
					return z.fail()
				}
				if buf[i+2] != '-' {
					i += 2
					break
				}
				i += 3
				state = scriptEscapedDashDash
			}
		case scriptEscaped, scriptEscapedDash, scriptEscapedDashDash:
			switch {
			case c == '-':
				state = min(state+1, scriptEscapedDashDash)
			case c == '>' && state == scriptEscapedDashDash:
				state = scriptData
			case c == '<':
				if i >= lim {
					return z.fail()
				}
				d := buf[i]
				switch {
				case d == '/':
					next, ok := z.isEndTag(i+1, "script")
					if ok {
						return i - 1
					}
					i = next
					state = scriptEscaped
				case class[d]&letter != 0:
					// "<script" and a delimiter start double-escaped
					// data; a mismatch is read again as escaped data.
					next, ok := z.isEndTag(i, "script")
					if next >= lim {
						return z.fail()
					}
					state = scriptEscaped
					if ok {
						state = scriptDoubleEscaped
						next++
					}
					i = next
				default:
					// x/net/html goes back to script data here, where
					// the WHATWG tokenizer stays in escaped data.
					state = scriptData
				}
			default:
				state = scriptEscaped
			}
		default: // double escaped
			switch {
			case c == '-':
				state = min(state+1, scriptDoubleEscapedDashDash)
			case c == '>' && state == scriptDoubleEscapedDashDash:
				state = scriptData
			case c == '<':
				state = scriptDoubleEscaped
				if i >= lim {
					return z.fail()
				}
				if buf[i] != '/' {
					break
				}
				next, ok := z.isEndTag(i+1, "script")
				if next >= lim {
					return z.fail()
				}
				i = next
				if ok {
					// "</script" and its delimiter end the double escape.
					i++
					state = scriptEscaped
				}
			default:
				state = scriptDoubleEscaped
			}
		}
	}
}
