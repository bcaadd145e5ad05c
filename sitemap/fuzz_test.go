package sitemap

import (
	"bytes"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/urlnorm"
)

// encode writes entries as a sitemap of kind k, every field that differs
// from its default spelled out, so that parsing it gives the entries back.
func encode(k Kind, entries []Entry) []byte {
	var b bytes.Buffer
	if k == KindText {
		for _, e := range entries {
			b.WriteString(e.Loc + "\n")
		}
		return b.Bytes()
	}
	root, item := "urlset", "url"
	if k == KindIndex {
		root, item = "sitemapindex", "sitemap"
	}
	fmt.Fprintf(&b, `<%s xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`, root)
	for _, e := range entries {
		fmt.Fprintf(&b, "<%s><loc>", item)
		_ = xmlEscape(&b, e.Loc)
		b.WriteString("</loc>")
		if !e.LastMod.IsZero() {
			fmt.Fprintf(&b, "<lastmod>%s</lastmod>", e.LastMod.Format(time.RFC3339Nano))
		}
		if e.ChangeFreq != FreqNone {
			fmt.Fprintf(&b, "<changefreq>%s</changefreq>", e.ChangeFreq)
		}
		if k == KindURLSet {
			fmt.Fprintf(&b, "<priority>%s</priority>", strconv.FormatFloat(e.Priority, 'g', -1, 64))
		}
		fmt.Fprintf(&b, "</%s>", item)
	}
	fmt.Fprintf(&b, "</%s>", root)
	return b.Bytes()
}

func xmlEscape(b *bytes.Buffer, s string) error {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
	_, err := r.WriteString(b, s)
	return err
}

// FuzzParse checks, for any input: no panic; no more entries than
// MaxURLs and no more bytes read than MaxBytes; every Loc an absolute
// http(s) URL in normal form (re-parsing and normalising it gives it
// back); hints within their ranges; and a round trip: the entries written
// back as a sitemap of the same kind (or gzip-compressed) parse to the
// same entries.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.xml"))
	txt, _ := filepath.Glob(filepath.Join("testdata", "*.txt"))
	for _, file := range append(files, txt...) {
		if b, err := os.ReadFile(file); err == nil {
			f.Add(b)
		}
	}
	f.Add(gz(urlset(3)))
	f.Add(gz(padded(10_000)))
	f.Add([]byte("<urlset>" + strings.Repeat("<a>", 100)))
	opts := Options{MaxURLs: 50, MaxBytes: 64 << 10, MaxLocLength: 200}
	f.Fuzz(func(t *testing.T, in []byte) {
		s, err := Parse(bytes.NewReader(in), opts)
		if s == nil {
			t.Fatalf("Parse(%q) = nil, %v", in, err)
		}
		if len(s.Entries) > opts.MaxURLs || s.Entries != nil && len(s.Entries) != s.Summary.Entries {
			t.Fatalf("Parse(%q): %d entries, summary %+v", in, len(s.Entries), s.Summary)
		}
		if s.Bytes > opts.MaxBytes {
			t.Fatalf("Parse(%q) read %d bytes, past MaxBytes", in, s.Bytes)
		}
		for _, e := range s.Entries {
			u, perr := urlnorm.Parse(e.Loc, nil)
			if perr != nil {
				t.Fatalf("Parse(%q): Loc %q does not re-parse: %v", in, e.Loc, perr)
			}
			if n := urlnorm.Normalize(u).String(); n != e.Loc {
				t.Fatalf("Parse(%q): Loc %q not in normal form (%q)", in, e.Loc, n)
			}
			if _, perr := url.Parse(e.Loc); perr != nil {
				t.Fatalf("Parse(%q): Loc %q: net/url: %v", in, e.Loc, perr)
			}
			if e.Priority < 0 || e.Priority > 1 || math.IsNaN(e.Priority) {
				t.Fatalf("Parse(%q): priority %v", in, e.Priority)
			}
			if e.ChangeFreq > FreqNever {
				t.Fatalf("Parse(%q): changefreq %d", in, e.ChangeFreq)
			}
		}
		if len(s.Entries) == 0 {
			return
		}
		back := encode(s.Kind, s.Entries)
		for _, again := range [][]byte{back, gz(back)} {
			s2, err := Parse(bytes.NewReader(again), Options{MaxURLs: opts.MaxURLs})
			if err != nil {
				t.Fatalf("Parse(%q) then written back as %q: %v", in, back, err)
			}
			if len(s2.Entries) != len(s.Entries) || s2.Kind != s.Kind {
				t.Fatalf("round trip of %q: %d %v entries, then %d %v", in, len(s.Entries), s.Kind, len(s2.Entries), s2.Kind)
			}
			for i, e := range s.Entries {
				if e2 := s2.Entries[i]; e2.Loc != e.Loc || !e2.LastMod.Equal(e.LastMod) || e2.ChangeFreq != e.ChangeFreq || e2.Priority != e.Priority {
					t.Fatalf("round trip of %q: entry %d %+v, then %+v", in, i, e, e2)
				}
			}
		}
	})
}

// TestEntityBomb: a billion-laughs DTD is not read; the entity reference
// stays as written and costs nothing.
func TestEntityBomb(t *testing.T) {
	in, err := os.ReadFile(filepath.Join("testdata", "laughs.xml"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Parse(bytes.NewReader(in), Options{})
	if err != nil || len(s.Entries) != 2 {
		t.Fatalf("Parse(laughs.xml) = %d entries, %v; want 2", len(s.Entries), err)
	}
	if got := s.Entries[0].Loc; got != "https://example.test/&lol9;" {
		t.Errorf("entity reference became %q, want it kept as written", got)
	}
	if !s.Entries[1].LastMod.IsZero() {
		t.Errorf("lastmod of entity reference = %v, want none", s.Entries[1].LastMod)
	}
}
