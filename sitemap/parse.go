package sitemap

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/trawl-crawler/trawl/urlnorm"
)

// maxToken bounds one XML token (a tag with its attributes, a run of text,
// a comment): a longer one stops Read with a *LimitError{Limit: "token"}.
// encoding/xml holds a whole token in memory; this keeps that to 1 MiB
// even when MaxBytes is 50 MiB. Nothing in a valid sitemap comes close.
const maxToken = 1 << 20

// maxDepth bounds element nesting (encoding/xml keeps a stack entry per
// open element); sitemaps nest three deep, extensions a few more.
const maxDepth = 64

// maxField bounds the text kept of <lastmod>, <changefreq> and
// <priority>; longer values are not valid and are ignored.
const maxField = 64

// gzipMagic starts every gzip member (RFC 1952 2.3.1: ID1, ID2).
var gzipMagic = []byte{0x1f, 0x8b}

// Parse reads a whole sitemap file with Read and returns its entries. The
// result is never nil: on an error (a *LimitError, a *SyntaxError, the
// reader's or the gzip stream's) it holds the entries read before it.
func Parse(r io.Reader, opts Options) (*Sitemap, error) {
	s := new(Sitemap)
	sum, err := Read(r, opts, func(e Entry) error {
		s.Entries = append(s.Entries, e)
		return nil
	})
	s.Summary = sum
	return s, err
}

// Read reads one sitemap file from r and calls fn with each entry whose
// <loc> is an absolute http or https URL, in file order. The format is
// told from the bytes, not from a Content-Type: a gzip header (magic
// 1f 8b) means gzip, whatever the server said; then a '<' as the first
// byte after a byte order mark and white space means XML, anything else
// plain text (sitemaps.org "Text file"). In XML, <urlset> and
// <sitemapindex> are recognised in any namespace or none (sitemaps.org's
// is http://www.sitemaps.org/schemas/sitemap/0.9; old Google ones and
// none at all are common), and an entry's fields count only in the
// namespace of the root element, so extensions such as <image:loc> are
// not taken for <loc>. Custom entities are never expanded (encoding/xml
// does not read DTDs; an unknown "&name;" stays as written), so an entity
// bomb is harmless; a bare '&' in a URL is kept, as browsers do.
//
// Read stops at the end of the root element, at a limit (*LimitError), at
// malformed input (*SyntaxError), at an error from r (wrapped) or at an
// error from fn (returned as is). Entries before the stop were passed to
// fn; Summary counts them either way.
func Read(r io.Reader, opts Options, fn func(Entry) error) (Summary, error) {
	if err := opts.Validate(); err != nil {
		return Summary{}, err
	}
	p := &parser{opts: opts.withDefaults(), fn: fn}
	err := p.read(r)
	p.sum.Bytes = p.lr.n
	return p.sum, err
}

type parser struct {
	opts Options
	fn   func(Entry) error
	sum  Summary
	lr   limitReader
	seen int // entries seen, skipped ones included, for MaxURLs
}

func (p *parser) read(r io.Reader) error {
	raw := bufio.NewReaderSize(r, 512)
	src := io.Reader(raw)
	if magic, _ := raw.Peek(2); bytes.Equal(magic, gzipMagic) {
		zr, err := gzip.NewReader(raw)
		if err != nil {
			return &SyntaxError{Err: fmt.Errorf("gzip: %w", err)}
		}
		p.sum.Gzip = true
		src = zr
	}
	p.lr = limitReader{r: src, max: p.opts.MaxBytes}
	br := bufio.NewReaderSize(&p.lr, 4096)
	// A byte order mark, then white space, before the first byte that
	// tells the format.
	if bom, _ := br.Peek(3); bytes.Equal(bom, []byte("\xef\xbb\xbf")) {
		_, _ = br.Discard(3)
	}
	for {
		c, err := br.ReadByte()
		if err != nil {
			if err == io.EOF {
				return &SyntaxError{Offset: p.lr.n, Err: errors.New("empty file")}
			}
			return p.readErr(err)
		}
		if !isSpace(c) {
			_ = br.UnreadByte()
			if c == '<' {
				return p.readXML(br)
			}
			return p.readText(br)
		}
	}
}

// readErr turns an error from the limited reader into Read's error.
func (p *parser) readErr(err error) error {
	var le *LimitError
	if errors.As(err, &le) {
		return err
	}
	if p.sum.Gzip {
		return fmt.Errorf("sitemap: read gzip: %w", err)
	}
	return fmt.Errorf("sitemap: read: %w", err)
}

// field is the entry child whose text is being collected.
type field uint8

const (
	fieldNone field = iota
	fieldLoc
	fieldLastMod
	fieldChangeFreq
	fieldPriority
	fieldOther // a child we do not read
)

var fieldNames = map[string]field{"loc": fieldLoc, "lastmod": fieldLastMod, "changefreq": fieldChangeFreq, "priority": fieldPriority}

func (p *parser) readXML(br *bufio.Reader) error {
	dec := xml.NewDecoder(br)
	dec.Strict = false // keeps a bare '&' and unknown entities as text; still stops at broken syntax
	dec.CharsetReader = func(label string, _ io.Reader) (io.Reader, error) {
		return nil, fmt.Errorf("encoding %q: sitemaps.org requires UTF-8", label)
	}
	p.lr.dec = dec
	var (
		depth     int
		rootSpace string
		entryName string
		inEntry   bool
		cur       Entry
		loc       []byte
		locLong   bool
		fld       field
		text      []byte
	)
	syntax := func(err error) error {
		line, _ := dec.InputPos()
		return &SyntaxError{Line: line, Offset: dec.InputOffset(), Err: err}
	}
	for {
		tok, err := dec.Token()
		p.lr.tokStart = dec.InputOffset()
		if err != nil {
			if p.lr.err != nil && p.lr.err != io.EOF && err == p.lr.err {
				return p.readErr(err)
			}
			if err == io.EOF {
				err = io.ErrUnexpectedEOF // the root never closed, or never opened
			}
			var xe *xml.SyntaxError
			if errors.As(err, &xe) {
				err = errors.New(xe.Msg)
			}
			return syntax(err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			switch {
			case depth > maxDepth:
				return syntax(fmt.Errorf("elements nested deeper than %d", maxDepth))
			case depth == 1:
				rootSpace = t.Name.Space
				switch t.Name.Local {
				case "urlset":
					p.sum.Kind, entryName = KindURLSet, "url"
				case "sitemapindex":
					p.sum.Kind, entryName = KindIndex, "sitemap"
				default:
					return syntax(fmt.Errorf("root element <%s> is not <urlset> or <sitemapindex>", t.Name.Local))
				}
			case depth == 2 && t.Name.Local == entryName && t.Name.Space == rootSpace:
				if p.seen++; p.seen > p.opts.MaxURLs {
					return &LimitError{Limit: "MaxURLs", Value: int64(p.opts.MaxURLs)}
				}
				inEntry, cur, loc, locLong = true, Entry{}, loc[:0], false
				if p.sum.Kind == KindURLSet {
					cur.Priority = DefaultPriority
				}
			case depth == 3 && inEntry:
				fld, text = fieldOther, text[:0]
				if f, ok := fieldNames[t.Name.Local]; ok && t.Name.Space == rootSpace {
					fld = f
				}
			}
		case xml.CharData:
			switch {
			case depth != 3 || !inEntry:
			case fld == fieldLoc:
				if len(loc)+len(t) > p.opts.MaxLocLength+64 { // +64: room for the space trimmed later
					locLong = true
				} else {
					loc = append(loc, t...)
				}
			case fld != fieldNone && fld != fieldOther && len(text)+len(t) <= maxField:
				text = append(text, t...)
			}
		case xml.EndElement:
			switch {
			case depth == 3 && inEntry:
				p.setField(&cur, fld, text)
				fld = fieldNone
			case depth == 2 && inEntry:
				inEntry = false
				if err := p.emit(cur, loc, locLong); err != nil {
					return err
				}
			case depth == 1:
				return nil // the root closed: the rest is not read
			}
			depth--
		}
	}
}

// setField stores the collected text of a <lastmod>, <changefreq> or
// <priority> child; invalid values leave the entry's default.
func (p *parser) setField(e *Entry, f field, text []byte) {
	s := strings.TrimSpace(string(text))
	switch f {
	case fieldLastMod:
		if t, ok := parseW3C(s); ok {
			e.LastMod = t
		}
	case fieldChangeFreq:
		if p.sum.Kind == KindURLSet {
			e.ChangeFreq = parseFreq(s)
		}
	case fieldPriority:
		if v, err := strconv.ParseFloat(s, 64); err == nil && v >= 0 && v <= 1 && p.sum.Kind == KindURLSet {
			e.Priority = v
		}
	}
}

// emit checks an entry's loc and hands the entry over, or counts it as
// skipped.
func (p *parser) emit(e Entry, loc []byte, tooLong bool) error {
	s := strings.TrimSpace(string(loc))
	if tooLong || s == "" || len(s) > p.opts.MaxLocLength {
		p.sum.Skipped++
		return nil
	}
	u, err := urlnorm.Parse(s, nil)
	if err != nil {
		p.sum.Skipped++
		return nil
	}
	e.Loc = urlnorm.Normalize(u).String()
	if _, err := url.Parse(e.Loc); err != nil {
		// A few WHATWG hosts (with '`', '{' or '}') come out of urlnorm
		// escaped in a way net/url will not read back: no use to a caller.
		p.sum.Skipped++
		return nil
	}
	p.sum.Entries++
	return p.fn(e)
}

// readText reads a text sitemap: one URL a line (sitemaps.org "Text
// file"), blank lines ignored. A first line that is not a URL means the
// file is no sitemap; later bad lines are skipped.
func (p *parser) readText(br *bufio.Reader) error {
	p.sum.Kind = KindText
	var line []byte
	first, long := true, false
	for {
		part, isPrefix, err := br.ReadLine()
		if room := p.opts.MaxLocLength + 64 - len(line); len(part) > room { // +64: room for the space trimmed later
			part, long = part[:room], true
		}
		line = append(line, part...)
		if isPrefix && err == nil {
			continue
		}
		if s := strings.TrimSpace(string(line)); s != "" {
			if p.seen++; p.seen > p.opts.MaxURLs {
				return &LimitError{Limit: "MaxURLs", Value: int64(p.opts.MaxURLs)}
			}
			if first {
				first = false
				if len(s) <= p.opts.MaxLocLength && utf8.ValidString(s) {
					if _, perr := urlnorm.Parse(s, nil); perr != nil {
						return &SyntaxError{Line: 1, Offset: p.lr.n, Err: fmt.Errorf("text sitemap: first line is not an absolute http(s) URL")}
					}
				}
			}
			if !utf8.ValidString(s) {
				p.sum.Skipped++
			} else if ferr := p.emit(Entry{Priority: DefaultPriority}, []byte(s), long); ferr != nil {
				return ferr
			}
		}
		line, long = line[:0], false
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return p.readErr(err)
		}
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// limitReader counts the bytes it passes and fails with a *LimitError on
// the first byte past max, or, once dec is set, when the decoder has read
// more than maxToken bytes since it returned its last token.
type limitReader struct {
	r        io.Reader
	n        int64
	max      int64
	dec      *xml.Decoder
	tokStart int64 // the decoder's offset after its last token
	err      error // the last error returned, to tell the reader's errors from the decoder's
}

func (l *limitReader) Read(b []byte) (int, error) {
	if l.dec != nil && l.n-l.tokStart > maxToken {
		l.err = &LimitError{Limit: "token", Value: maxToken}
		return 0, l.err
	}
	if l.n >= l.max {
		var one [1]byte
		k, err := l.r.Read(one[:])
		switch {
		case k > 0:
			l.err = &LimitError{Limit: "MaxBytes", Value: l.max}
		case err != nil:
			l.err = err
		}
		return 0, l.err
	}
	if rest := l.max - l.n; int64(len(b)) > rest {
		b = b[:rest]
	}
	k, err := l.r.Read(b)
	l.n += int64(k)
	if err != nil {
		l.err = err
	}
	return k, err
}
