package wacz

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"

	"github.com/trawl-crawler/trawl/cdxj"
	"github.com/trawl-crawler/trawl/warc"
)

// page is one line of pages/pages.jsonl (WACZ 1.1.1, "pages.jsonl": url
// and ts required; id and title optional; other properties allowed).
type page struct {
	ID    string `json:"id"`
	URL   string `json:"url"`
	TS    string `json:"ts"`
	Title string `json:"title,omitempty"`
	// Seed marks a page fetched as one of the crawl's seeds.
	Seed bool `json:"seed,omitempty"`
}

// maxTitle bounds a page's title, in bytes.
const maxTitle = 1000

// maybePage reports whether an index line may be a page: a response of
// status 200 and type text/html, or a revisit of status 200 (whose type
// its record's HTTP head says: readPage).
func maybePage(l cdxj.Line) bool {
	return l.Status == "200" && (strings.EqualFold(l.Mime, "text/html") || l.Mime == "warc/revisit")
}

// isHTML reports whether a Content-Type is text/html.
func isHTML(contentType string) bool {
	mt, _, _ := strings.Cut(contentType, ";")
	return strings.EqualFold(strings.TrimSpace(mt), "text/html")
}

// writePages writes pages/pages.jsonl to w: its header, then each page in
// the index's order, and returns the seed page fetched first (nil if none),
// for datapackage.json's mainPageUrl.
func (e *Export) writePages(w io.Writer, res *Result) (*page, error) {
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteString(PagesHeader + "\n")
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	open := map[string]*os.File{}
	defer func() {
		for _, f := range open {
			f.Close()
		}
	}()
	paths := make(map[string]string, len(e.files))
	for _, f := range e.files {
		paths[f.name] = f.path
	}
	var main *page
	err := e.merge(func(_ string, l cdxj.Line) error {
		if !maybePage(l) {
			return nil
		}
		f := open[l.Filename]
		if f == nil {
			var err error
			if f, err = os.Open(paths[l.Filename]); err != nil {
				return err
			}
			open[l.Filename] = f
		}
		date, title, ok := readPage(f, l)
		if !ok {
			return nil
		}
		id := sha256.Sum256([]byte(l.Filename + "\x00" + strconv.FormatInt(l.Offset, 10)))
		p := page{ID: hex.EncodeToString(id[:8]), URL: l.URL, TS: date, Title: title, Seed: e.seeds[l.URL]}
		if p.Seed && (main == nil || p.TS < main.TS) {
			c := p
			main = &c
		}
		res.Pages++
		return enc.Encode(&p)
	})
	if err != nil {
		return nil, err
	}
	return main, bw.Flush()
}

// readPage reads the record l indexes from f: its WARC-Date as RFC 3339
// and its page's title, "" if none could be read (a revisit has no
// payload, so no title). ok is false for a revisit whose HTTP head is not
// text/html: no page. A response record that cannot be read (the index
// is wrong, or the file damaged there) keeps the index's timestamp: the
// page is still listed, as the index lists it.
func readPage(f *os.File, l cdxj.Line) (date, title string, ok bool) {
	date = tsOf(l.Timestamp)
	revisit := l.Mime == "warc/revisit"
	rd := warc.NewReader(io.NewSectionReader(f, l.Offset, l.Length), l.Filename)
	rec, err := rd.Next()
	if err != nil {
		return date, "", !revisit
	}
	if t, err := time.Parse(time.RFC3339Nano, rec.Date); err == nil {
		date = t.UTC().Format(time.RFC3339Nano)
	}
	if rec.HTTP == nil {
		return date, "", !revisit
	}
	if revisit {
		return date, "", isHTML(rec.HTTP.ContentType)
	}
	for _, h := range rec.HTTP.Header {
		if strings.EqualFold(h[0], "Content-Encoding") && !strings.EqualFold(strings.TrimSpace(h[1]), "identity") {
			return date, "", true // archived as transferred: compressed
		}
	}
	block := rd.Block()
	if _, err := io.CopyN(io.Discard, block, int64(rec.HTTP.Size)); err != nil {
		return date, "", true
	}
	return date, titleOf(io.LimitReader(block, MaxTitleScan), rec.HTTP.ContentType), true
}

// tsOf is a 14-digit CDXJ timestamp as RFC 3339 ("" if it is not one).
func tsOf(ts string) string {
	t, err := time.Parse("20060102150405", ts)
	if err != nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// titleOf returns the text of the first <title> in the HTML r holds, in
// the encoding a browser would pick (from contentType, a BOM or a <meta>),
// with runs of white space made one space, cut to maxTitle bytes; "" if
// there is none before <body> or the end of r.
func titleOf(r io.Reader, contentType string) string {
	cr, err := charset.NewReader(r, contentType)
	if err != nil {
		return ""
	}
	z := html.NewTokenizer(cr)
	in := false
	var b strings.Builder
	for {
		switch z.Next() {
		case html.ErrorToken:
			if in {
				return clean(b.String())
			}
			return ""
		case html.StartTagToken:
			name, _ := z.TagName()
			switch string(name) {
			case "title":
				in = true
			case "body":
				return ""
			}
		case html.EndTagToken:
			if name, _ := z.TagName(); in && string(name) == "title" {
				return clean(b.String())
			}
		case html.TextToken:
			if in && b.Len() < 4*maxTitle {
				b.Write(z.Text())
			}
		}
	}
}

// clean collapses white space and cuts s to maxTitle bytes at a rune
// boundary.
func clean(s string) string {
	s = strings.Join(strings.Fields(strings.ToValidUTF8(s, "\uFFFD")), " ")
	if len(s) > maxTitle {
		i := maxTitle
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		s = s[:i]
	}
	return s
}
