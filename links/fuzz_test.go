package links

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/trawl-crawler/trawl/simhash"
)

// FuzzExtract checks properties that hold for any input: no panic, at most
// MaxLinks links, clean non-empty refs from the known tags, a bounded title,
// page nofollow applied to every link, determinism, that a smaller cap
// returns a prefix of the links a larger one does, and that the SimHash
// taken in the same pass equals simhash.HTML of the decoded body.
func FuzzExtract(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.html"))
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint8(3))
	}
	for _, s := range []string{
		"", "<a", "<a href", "<a href=", `<a href="`, "<a href=x", "<title>", "<svg><title>",
		"<noscript><a href=x></noscript>", "<meta http-equiv=refresh content='0;url= x '>",
		"<meta name=robots content=none><a href=y rel=nofollow>", "<base href=>",
		"<a href=\x00>", "<a href=\xff>", "<a href=&#0;>", "<script><!--<script></script><a href=x>",
		// Text the extractor hands SimHash raw unless it holds a '&'.
		"ab\r\ncd\ref", "ab\x00cd", "x&amp;y&#x41;z", "<svg>a\x00b<title>c\x00d</title></svg>e\x00f",
		"<textarea>a\r&lt;b</textarea>", "<title>t&amp;\r\nu</title>v\rw", "<plaintext>a&amp;\x00b",
		"<math><mi>\x00x\ry</mi></math>", "caf\xc3\xa9&eacute\xff\x00",
	} {
		f.Add([]byte(s), uint8(1))
	}
	f.Fuzz(func(t *testing.T, body []byte, max uint8) {
		limit := int(max%8) + 1
		p := ExtractWith(body, Options{Agent: "trawl", MaxLinks: limit, SimHash: true})
		text, _ := Decode(body, "")
		// The pass that extracts links reads the same main text as
		// simhash's own pass over the decoded text.
		want := simhash.HTMLContent(text)
		if p.SimHash != simhash.HTML(text) || p.Content.Words() != want.Words() || !slices.Equal(p.Content.Blocks(), want.Blocks()) || p.Content.Print(nil) != want.Print(nil) {
			t.Fatalf("ExtractWith(%q).SimHash = %#x, content %+v; simhash of its text = %#x, %+v", body, p.SimHash, p.Content, simhash.HTML(text), want)
		}
		if (p.Content.Words() == 0) != (p.SimHash == 0) && p.Content.Words() < 2 {
			t.Fatalf("ExtractWith(%q): SimHash %#x over %d words", body, p.SimHash, p.Content.Words())
		}

		if len(p.Links) > limit {
			t.Fatalf("ExtractWith(%q, MaxLinks=%d) returned %d links", body, limit, len(p.Links))
		}
		if p.Dropped < 0 || (p.Dropped > 0 && len(p.Links) != limit) {
			t.Fatalf("ExtractWith(%q, MaxLinks=%d) dropped %d with %d links", body, limit, p.Dropped, len(p.Links))
		}
		if len(p.Title) > MaxTitleBytes || p.Title != strings.Trim(p.Title, " \t\n\f\r") {
			t.Fatalf("ExtractWith(%q).Title = %q: too long or not trimmed", body, p.Title)
		}
		seen := map[Link]bool{}
		for _, l := range p.Links {
			if l.Ref == "" || l.Ref != strings.Trim(l.Ref, " \t\n\f\r") {
				t.Fatalf("ExtractWith(%q): Ref %q is empty or not trimmed", body, l.Ref)
			}
			switch l.Tag {
			case "a", "area", "link", "iframe", "frame", "meta":
			default:
				t.Fatalf("ExtractWith(%q): unexpected Tag %q", body, l.Tag)
			}
			if strings.ContainsAny(l.Rel, "ABCDEFGHIJKLMNOPQRSTUVWXYZ\t\n\f\r") || strings.Contains(l.Rel, "  ") ||
				l.Rel != strings.Trim(l.Rel, " ") || (l.Rel != "" && l.Tag != "a" && l.Tag != "area" && l.Tag != "link") {
				t.Fatalf("ExtractWith(%q): Rel %q not normalised", body, l.Rel)
			}
			if p.NoFollow && !l.NoFollow {
				t.Fatalf("ExtractWith(%q): page is nofollow but link %+v is not", body, l)
			}
			if skippedScheme(l.Ref) {
				t.Fatalf("ExtractWith(%q): Ref %q has a skipped scheme", body, l.Ref)
			}
			if seen[l] {
				t.Fatalf("ExtractWith(%q): link %+v repeated", body, l)
			}
			seen[l] = true
		}
		if again := ExtractWith(body, Options{Agent: "trawl", MaxLinks: limit, SimHash: true}); !reflect.DeepEqual(p, again) {
			t.Fatalf("ExtractWith(%q) not deterministic:\n%+v\n%+v", body, p, again)
		}
		without := ExtractWith(body, Options{Agent: "trawl", MaxLinks: limit})
		if without.SimHash != 0 {
			t.Fatalf("ExtractWith(%q) without Options.SimHash: SimHash %#x", body, without.SimHash)
		}
		without.SimHash, without.Content = p.SimHash, p.Content
		if !reflect.DeepEqual(p, without) {
			t.Fatalf("ExtractWith(%q) depends on Options.SimHash:\n%+v\n%+v", body, p, without)
		}
		full := ExtractWith(body, Options{Agent: "trawl"})
		if n := len(p.Links); n > len(full.Links) || !reflect.DeepEqual(p.Links, full.Links[:n]) {
			t.Fatalf("ExtractWith(%q, MaxLinks=%d).Links = %v, want a prefix of %v", body, limit, p.Links, full.Links)
		}
		if p.Dropped < len(full.Links)-len(p.Links) {
			t.Fatalf("ExtractWith(%q, MaxLinks=%d).Dropped = %d, want >= %d", body, limit, p.Dropped, len(full.Links)-len(p.Links))
		}
		if p.BaseHref != full.BaseHref || p.Canonical != full.Canonical || p.Title != full.Title ||
			p.NoIndex != full.NoIndex || p.NoFollow != full.NoFollow {
			t.Fatalf("ExtractWith(%q): page fields depend on MaxLinks: %+v vs %+v", body, p, full)
		}
		// Asking for requisites changes nothing else, and they are clean,
		// distinct and bounded.
		req := ExtractWith(body, Options{Agent: "trawl", MaxLinks: limit, SimHash: true, Requisites: true})
		if len(req.Requisites) > MaxRequisites || req.RequisitesDropped > 0 && len(req.Requisites) != MaxRequisites {
			t.Fatalf("ExtractWith(%q): %d requisites, %d dropped", body, len(req.Requisites), req.RequisitesDropped)
		}
		refs := map[string]bool{}
		for _, l := range req.Requisites {
			if l.Ref == "" || l.Ref != strings.Trim(l.Ref, " \t\n\f\r") || skippedScheme(l.Ref) || refs[l.Ref] || l.Tag == "" {
				t.Fatalf("ExtractWith(%q): requisite %+v empty, untrimmed, skipped scheme, untagged or repeated", body, l)
			}
			refs[l.Ref] = true
		}
		req.Requisites, req.RequisitesDropped = nil, 0
		if !reflect.DeepEqual(p, req) {
			t.Fatalf("ExtractWith(%q) depends on Options.Requisites:\n%+v\n%+v", body, p, req)
		}
	})
}

// FuzzXRobotsTag checks that reading the header never panics, ignores the
// case of the agent, and is monotonic: adding a value never clears a flag,
// and adding "none" sets both.
func FuzzXRobotsTag(f *testing.F) {
	for _, s := range []string{"noindex", "trawl: none", "googlebot: nofollow, trawl: noindex",
		"unavailable_after: Sunday, 01-Jan-2040 12:00:00 GMT", ":", ",,", "a:b:c"} {
		f.Add(s, "other")
	}
	f.Fuzz(func(t *testing.T, v1, v2 string) {
		values := []string{v1, v2}
		ni, nf := XRobotsTag(values, "trawl")
		if ui, uf := XRobotsTag(values, "TRAWL"); ui != ni || uf != nf {
			t.Fatalf("XRobotsTag(%q) differs by agent case: %v,%v vs %v,%v", values, ni, nf, ui, uf)
		}
		if oi, of := XRobotsTag(values[:1], "trawl"); (oi && !ni) || (of && !nf) {
			t.Fatalf("XRobotsTag(%q) = %v,%v but its first value alone gives %v,%v", values, ni, nf, oi, of)
		}
		if ai, af := XRobotsTag(append(values, "none"), "trawl"); !ai || !af {
			t.Fatalf("XRobotsTag(%q + none) = %v,%v, want true,true", values, ai, af)
		}
	})
}

func ExampleExtract() {
	body := []byte(`<html><head><title>Example</title>
<base href="https://a.test/dir/">
<meta name="robots" content="noindex">
</head><body>
<a href="page.html">a page</a>
<a href="https://b.test/" rel="nofollow">elsewhere</a>
<a href="mailto:x@a.test">mail</a>
<!-- <a href="/commented-out"> -->
</body></html>`)
	p := Extract(body, "trawl")
	fmt.Printf("title=%q base=%q noindex=%v nofollow=%v\n", p.Title, p.BaseHref, p.NoIndex, p.NoFollow)
	for _, l := range p.Links {
		fmt.Printf("%s %q rel=%q nofollow=%v\n", l.Tag, l.Ref, l.Rel, l.NoFollow)
	}
	// Output:
	// title="Example" base="https://a.test/dir/" noindex=true nofollow=false
	// a "page.html" rel="" nofollow=false
	// a "https://b.test/" rel="nofollow" nofollow=true
}

func ExampleXRobotsTag() {
	noIndex, noFollow := XRobotsTag([]string{"googlebot: none", "trawl: nofollow"}, "trawl")
	fmt.Println(noIndex, noFollow)
	// Output: false true
}

// benchPage builds a page of about 40 KB shaped like a news article: a head
// with metadata, navigation, paragraphs of text with inline links, an inline
// script and a footer.
func benchPage() []byte {
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<title>Council approves new riverside park | The Daily Example</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="index, follow, max-snippet:-1">
<link rel="canonical" href="https://news.test/2031/05/riverside-park">
<link rel="stylesheet" href="/assets/main.4f2a.css"><link rel="icon" href="/favicon.ico">
<script>window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push(arguments)}gtag('js',new Date());</script>
</head><body><header><nav class="top">`)
	for i := range 40 {
		fmt.Fprintf(&b, `<a class="nav-item" href="/section/%d/">Section %d</a>`, i, i)
	}
	b.WriteString(`</nav></header><main><article>`)
	for i := 0; b.Len() < 36000; i++ {
		fmt.Fprintf(&b, `<p class="para">The council met on Tuesday to discuss item %d of the agenda. `+
			`Residents who spoke <a href="/people/resident-%d?ref=article&amp;pos=%d">in favour</a> said the park `+
			`would bring families back to the river; others <a href="https://elsewhere.test/opinion/%d" rel="nofollow noopener">disagreed</a>. `+
			`<img src="/img/%d.jpg" alt="photo %d" loading="lazy"> The vote passed by a wide margin &mdash; work starts in spring.</p>`+"\n",
			i, i, i, i, i, i)
		if i%10 == 9 {
			fmt.Fprintf(&b, `<!-- ad slot %d <a href="/ads/%d"> --><script>var s%d="<a href='/x'>";</script>`, i, i, i)
		}
	}
	b.WriteString(`</article></main><footer>`)
	for i := range 20 {
		fmt.Fprintf(&b, `<a href="/about/%d">About %d</a> `, i, i)
	}
	b.WriteString(`</footer></body></html>`)
	return []byte(b.String())
}

func BenchmarkExtract(b *testing.B) {
	page := benchPage()
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	for b.Loop() {
		p := Extract(page, "trawl")
		if len(p.Links) == 0 {
			b.Fatal("no links")
		}
	}
}

// BenchmarkExtractSimHash is Extract as the node calls it: links, title
// and SimHash in one pass.
func BenchmarkExtractSimHash(b *testing.B) {
	page := benchPage()
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	for b.Loop() {
		p := ExtractWith(page, Options{Agent: "trawl", SimHash: true})
		if len(p.Links) == 0 || p.SimHash == 0 {
			b.Fatal("no links or no SimHash")
		}
	}
}
