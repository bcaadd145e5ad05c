package css

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestRefs(t *testing.T) {
	imp := func(u string) Ref { return Ref{URL: u, Import: true} }
	ref := func(u string) Ref { return Ref{URL: u} }
	for _, tt := range []struct {
		name, src string
		want      []Ref
	}{
		{"import string", `@import "a.css";`, []Ref{imp("a.css")}},
		{"import url and media", `@import url(b.css) screen and (min-width: 40em);`, []Ref{imp("b.css")}},
		{"import quoted url", `@import url("c.css") layer(base);`, []Ref{imp("c.css")}},
		{"import case and comment", `@IMPORT /* x */ 'd.css';`, []Ref{imp("d.css")}},
		{"import then rule", `@import "e.css"; p { color: red }`, []Ref{imp("e.css")}},
		{"background", `body { background: #fff url(img/bg.png) no-repeat }`, []Ref{ref("img/bg.png")}},
		{"spaces in url()", `a { b: url(  "sp.png"  ) }`, []Ref{ref("sp.png")}},
		{"upper URL", `a { b: URL(up.png) }`, []Ref{ref("up.png")}},
		{"escaped ident", `a { b: u\72l(esc.png) }`, []Ref{ref("esc.png")}},
		{"font-face", `@font-face { font-family: F; src: url(f.woff2) format("woff2"), url('f.woff') format("woff"); }`,
			[]Ref{ref("f.woff2"), ref("f.woff")}},
		{"image-set", `a { b: image-set("one.png" 1x, url(two.png) 2x, "three.avif" type("image/avif")) }`,
			[]Ref{ref("one.png"), ref("two.png"), ref("three.avif")}},
		{"webkit image-set", `a { b: -webkit-image-set("w1.png" 1x) }`, []Ref{ref("w1.png")}},
		{"strings elsewhere", `a::before { content: "url(no.png)"; font-family: "x.ttf" }`, nil},
		{"in a comment", `/* url(no.png) @import "no.css"; */ a{}`, nil},
		{"unclosed comment", `a{} /* url(no.png)`, nil},
		{"data and fragment", `a { b: url(data:image/png;base64,AAAA); filter: url(#f); c: url(DATA:x) }`, nil},
		{"bad url: space inside", `a { b: url(a b.png) } c { d: url(ok.png) }`, []Ref{ref("ok.png")}},
		{"bad url: quote inside", `a { b: url(a"b.png) } c { d: url(ok2.png) }`, []Ref{ref("ok2.png")}},
		{"escapes in url", `a { b: url(j\(1\).png); c: url(\6c .png); d: url("k\"q.png") }`,
			[]Ref{ref("j(1).png"), ref("l.png"), ref(`k"q.png`)}},
		{"escaped newline in string", "@import \"x\\\ny.css\";", []Ref{imp("xy.css")}},
		{"string cut by newline", "@import \"bad\n;\n@import \"good.css\";", []Ref{imp("good.css")}},
		{"repeats", `a{b:url(r.png)} c{d:url("r.png")} @import url(r.png);`, []Ref{ref("r.png"), imp("r.png")}},
		{"unclosed url at end", `a { b: url(end.png`, []Ref{ref("end.png")}},
		{"empty url", `a { b: url() ; c: url("") }`, nil},
		{"custom property", `:root { --bg: url(var.png) } a { background: var(--bg) }`, []Ref{ref("var.png")}},
		{"at-rule not import", `@media print { a { b: url(print.png) } }`, []Ref{ref("print.png")}},
		{"namespace names, never fetched", `@namespace url(http://www.w3.org/1999/xhtml); @namespace svg url(http://www.w3.org/2000/svg); a { b: url(after.png) }`,
			[]Ref{ref("after.png")}},
		{"null escape", `a { b: url(\0 z.png) }`, []Ref{ref("\uFFFDz.png")}},
	} {
		got := Refs([]byte(tt.src), 0)
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: Refs(%q) = %+v, want %+v", tt.name, tt.src, got, tt.want)
		}
	}
}

func TestRefsBounded(t *testing.T) {
	var b strings.Builder
	for i := range 50 {
		b.WriteString("a{b:url(x")
		b.WriteString(strings.Repeat("y", i))
		b.WriteString(".png)}")
	}
	if got := Refs([]byte(b.String()), 7); len(got) != 7 {
		t.Errorf("limit 7: %d refs", len(got))
	}
	long := "a{b:url(" + strings.Repeat("z", maxURL+1) + ")} c{d:url(short.png)}"
	if got := Refs([]byte(long), 0); len(got) != 1 || got[0].URL != "short.png" {
		t.Errorf("a reference over %d bytes: got %+v, want only short.png", maxURL, got)
	}
}

func FuzzRefs(f *testing.F) {
	for _, s := range []string{`@import "a.css";`, `a{b:url( x.png )}`, `u\72l(\`, `image-set("a" 1x, url(b))`,
		"/* x", `url("\`, `@import url(`, "url(\\\n)", `-webkit-image-set(type("x") "y")`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		refs := Refs(src, 50)
		if len(refs) > 50 {
			t.Fatalf("%d refs, limit 50", len(refs))
		}
		seen := map[Ref]bool{}
		for _, r := range refs {
			if r.URL == "" || r.URL != strings.TrimSpace(r.URL) || len(r.URL) > maxURL || seen[r] {
				t.Fatalf("bad ref %q in %+v", r.URL, refs)
			}
			if utf8.ValidString(string(src)) && !utf8.ValidString(r.URL) {
				t.Fatalf("valid UTF-8 input gave invalid ref %q", r.URL)
			}
			seen[r] = true
		}
	})
}
