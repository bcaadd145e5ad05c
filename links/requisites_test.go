package links

import (
	"reflect"
	"strings"
	"testing"
)

func TestRequisites(t *testing.T) {
	page := `<!doctype html><html><head>
<link rel="stylesheet" href=" /css/site.css ">
<link rel="icon" href="/favicon.ico"><link rel="apple-touch-icon" href="/touch.png">
<link rel="preload" as="image" href="/hero.jpg" imagesrcset="/hero-1x.jpg 1x, /hero-2x.jpg 2x">
<link rel="next" href="/page2.html"><link rel="canonical" href="/">
<script src="/js/app.js"></script><script>var x = "<img src=no.png>";</script>
<style>@import "/css/print.css" print; body { background: url('/img/bg.png') }</style>
</head><body background="/img/body.gif">
<img src="/img/a.png" srcset="/img/a-480.png 480w, /img/a-800.png 800w" alt="a">
<picture><source srcset="/img/b.avif" type="image/avif"><source srcset="/img/b,1x.webp 1x,/img/b-2x.webp 2x"><img src="/img/b.jpg"></picture>
<video src="/media/v.mp4" poster="/media/poster.jpg"><source src="/media/v.webm"><track src="/media/v.vtt"></video>
<audio src="/media/a.mp3"></audio><embed src="/media/e.swf"><object data="/media/o.pdf"></object>
<input type="image" src="/img/submit.png"><input type="text" src="/img/no.png">
<iframe src="/frame.html"></iframe>
<table background="/img/table.png"><tr><td background="/img/td.png" style="background-image: url(/img/cell.png)">x</td></tr></table>
<div style="background: url(&quot;/img/div.png&quot;)">y</div>
<noscript><img src="/img/noscript.png"></noscript>
<img src="data:image/png;base64,AAAA"><img src="javascript:void(0)"><img src="/img/a.png"><img src="  ">
<a href="/about.html"><img src="/img/in-link.png"></a>
<svg><style>.x { fill: url(#grad) }</style><image href="/img/svg-image.png"/><use xlink:href="/icons.svg#home"/></svg>
<image src="/img/legacy.png">
</body></html>`
	p := ExtractWith([]byte(page), Options{Requisites: true})
	var got []string
	for _, l := range p.Requisites {
		got = append(got, l.Tag+" "+l.Ref)
	}
	want := []string{
		"link /css/site.css", "link /favicon.ico", "link /touch.png", "link /hero.jpg", "link /hero-1x.jpg", "link /hero-2x.jpg",
		"script /js/app.js", "style /css/print.css", "style /img/bg.png", "body /img/body.gif",
		"img /img/a.png", "img /img/a-480.png", "img /img/a-800.png",
		"source /img/b.avif", "source /img/b,1x.webp", "source /img/b-2x.webp", "img /img/b.jpg",
		"video /media/v.mp4", "video /media/poster.jpg", "source /media/v.webm", "track /media/v.vtt",
		"audio /media/a.mp3", "embed /media/e.swf", "object /media/o.pdf", "input /img/submit.png",
		"iframe /frame.html", "table /img/table.png", "td /img/td.png", "style /img/cell.png", "style /img/div.png",
		"img /img/noscript.png", "img /img/in-link.png", "image /img/svg-image.png", "use /icons.svg#home", "image /img/legacy.png",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("requisites:\n got %q\nwant %q", got, want)
	}
	for _, l := range p.Requisites {
		if l.Ref == "/css/print.css" && l.Rel != "stylesheet" {
			t.Errorf("@import %s: Rel %q, want stylesheet", l.Ref, l.Rel)
		}
	}
	// The links are the same with requisites asked for or not.
	if plain := ExtractWith([]byte(page), Options{}); !reflect.DeepEqual(plain.Links, p.Links) || plain.Requisites != nil {
		t.Errorf("links with requisites %+v, without %+v (requisites %+v)", p.Links, plain.Links, plain.Requisites)
	}
}

func TestRequisitesBounded(t *testing.T) {
	var b strings.Builder
	for i := range MaxRequisites + 10 {
		b.WriteString(`<img src="/i/`)
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString(string(rune('a' + i%26)))
		b.WriteString(`">`)
		b.WriteString(`<img src="/n/` + itoa(i) + `.png">`)
	}
	p := ExtractWith([]byte(b.String()), Options{Requisites: true})
	if len(p.Requisites) != MaxRequisites || p.RequisitesDropped == 0 {
		t.Errorf("%d requisites, %d dropped; want %d and some dropped", len(p.Requisites), p.RequisitesDropped, MaxRequisites)
	}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var d []byte
	for ; i > 0; i /= 10 {
		d = append([]byte{byte('0' + i%10)}, d...)
	}
	return string(d)
}

func TestSrcsetURLs(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"a.png", []string{"a.png"}},
		{"a.png 1x, b.png 2x", []string{"a.png", "b.png"}},
		{" ,, a.png 480w ,b.png 800w,", []string{"a.png", "b.png"}},
		{"a.png,b.png", []string{"a.png,b.png"}}, // no space: one URL with a comma in it
		{"a.png, b.png", []string{"a.png", "b.png"}},
		{"a.png,, b.png", []string{"a.png", "b.png"}}, // trailing commas end the candidate
		{"a.png 1x (x, y), b.png 2x", []string{"a.png", "b.png"}},
		{"a.png x((y), b.png 2x", []string{"a.png", "b.png"}}, // parentheses do not nest
		{"data:image/png;base64,AA 1x, c.png 2x", []string{"data:image/png;base64,AA", "c.png"}},
		{"\ta.png\n1x,\nb.png", []string{"a.png", "b.png"}},
	} {
		if got := SrcsetURLs([]byte(tt.in)); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("SrcsetURLs(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzSrcsetURLs(f *testing.F) {
	for _, s := range []string{"a 1x, b 2x", ",,,", "a,b", "a (,) , b", "(", ")a"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, v []byte) {
		for _, u := range SrcsetURLs(v) {
			if u == "" || strings.ContainsAny(u, " \t\n\r\f") || strings.HasSuffix(u, ",") {
				t.Fatalf("SrcsetURLs(%q) gave %q", v, u)
			}
		}
	})
}
