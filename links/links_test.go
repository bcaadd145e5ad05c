package links

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/trawl-crawler/trawl/simhash"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// follow and nofollow build expected Links tersely.
func follow(tag, rel, ref string) Link { return Link{Ref: ref, Tag: tag, Rel: rel} }
func nofollow(tag, rel, ref string) Link {
	return Link{Ref: ref, Tag: tag, Rel: rel, NoFollow: true}
}

func TestExtractLinks(t *testing.T) {
	cases := []struct {
		name string
		html string
		want []Link
	}{
		{"a href", `<a href="/x">x</a>`, []Link{follow("a", "", "/x")}},
		{"tag and attr case", `<A HREF="/X">x</A>`, []Link{follow("a", "", "/X")}},
		{"unquoted", `<a href=foo>`, []Link{follow("a", "", "foo")}},
		{"single quotes", `<a href='a b'>`, []Link{follow("a", "", "a b")}},
		{"trim ascii whitespace", "<a href=\" \t\n\f\r/x \n\">", []Link{follow("a", "", "/x")}},
		{"keep inner whitespace", "<a href=\"/a\nb\">", []Link{follow("a", "", "/a\nb")}},
		{"nbsp is not trimmed", "<a href=\"&nbsp;/x\">", []Link{follow("a", "", "\u00a0/x")}},
		{"entities decoded", `<a href="/p?a=1&amp;b=2&#x26;c">`, []Link{follow("a", "", "/p?a=1&b=2&c")}},
		{"bare ampersand kept", `<a href="/p?a=1&copy=2">`, []Link{follow("a", "", "/p?a=1&copy=2")}},
		{"nul replaced", "<a href=\"/a\x00b\">", []Link{follow("a", "", "/a\ufffdb")}},
		// Undeclared and not UTF-8: windows-1252, as WHATWG's default
		// (TestExtractDecodes has the other encodings).
		{"undeclared non-UTF-8 bytes", "<a href=\"/\xff\xfe\">", []Link{follow("a", "", "/ÿþ")}},
		{"invalid utf-8 in a UTF-8 page kept", "<meta charset=utf-8><a href=\"/\xff\xfe\">", []Link{follow("a", "", "/\xff\xfe")}},
		{"first duplicate attr wins", `<a href="/1" href="/2">`, []Link{follow("a", "", "/1")}},
		{"self-closing", `<a href="/x"/>`, []Link{follow("a", "", "/x")}},
		{"a without href", `<a name="top">`, nil},
		{"empty href", `<a href="">`, nil},
		{"blank href", `<a href="  ">`, nil},
		{"href without value", `<a href>`, nil},
		{"fragment kept", `<a href="#top">`, []Link{follow("a", "", "#top")}},
		{"area", `<map><area href="/m" rel="NoFollow"></map>`, []Link{nofollow("area", "nofollow", "/m")}},
		{"iframe src", `<iframe src="/f"><a href="/in-iframe"></a></iframe>`, []Link{follow("iframe", "", "/f")}},
		{"iframe rel ignored", `<iframe src="/f" rel="nofollow">`, []Link{follow("iframe", "", "/f")}},
		{"frame src", `<frameset><frame src="/l"><frame src=/r></frameset>`, []Link{follow("frame", "", "/l"), follow("frame", "", "/r")}},
		{"frame without src", `<frame name="x">`, nil},
		{"link rels kept", `<link rel="stylesheet" href="/s.css"><link rel=icon href=/i.ico><link href="/norel">`,
			[]Link{follow("link", "stylesheet", "/s.css"), follow("link", "icon", "/i.ico"), follow("link", "", "/norel")}},
		{"rel normalised", "<a rel=\" NoOpener\t\tNOFOLLOW \" href=/x>", []Link{nofollow("a", "noopener nofollow", "/x")}},
		{"nofollow is a token", `<a rel="nofollowing" href=/x><a rel="ugc sponsored" href=/y>`,
			[]Link{follow("a", "nofollowing", "/x"), follow("a", "ugc sponsored", "/y")}},
		{"link nofollow", `<link rel="next nofollow" href="/2">`, []Link{nofollow("link", "next nofollow", "/2")}},
		{"img and script src ignored", `<img src="/i.png"><script src="/s.js"></script><form action="/f">`, nil},
		{"document order", `<a href=/1><iframe src=/2></iframe><link href=/3><a href=/4>`,
			[]Link{follow("a", "", "/1"), follow("iframe", "", "/2"), follow("link", "", "/3"), follow("a", "", "/4")}},
		{"exact duplicates dropped", `<a href=/x><a href=" /x "><a href=/x rel=nofollow><link href=/x>`,
			[]Link{follow("a", "", "/x"), nofollow("a", "nofollow", "/x"), follow("link", "", "/x")}},
	}
	for _, c := range cases {
		got := Extract([]byte(c.html), "trawl").Links
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: Extract(%q).Links = %v, want %v", c.name, c.html, got, c.want)
		}
	}
}

func TestExtractSkipsSchemes(t *testing.T) {
	cases := []struct {
		ref  string
		keep bool
	}{
		{"javascript:void(0)", false},
		{"JavaScript:go()", false},
		{" javascript:x", false},
		{"java\tscript:x", false},
		{"java&#10;script:x", false},
		{"&#1;javascript:x", false},
		{"mailto:a@b.test", false},
		{"MAILTO:a@b.test", false},
		{"tel:+1555", false},
		{"data:text/html,<a>", false},
		{"javascripts:x", true},
		{"/javascript:x", true},
		{"http://a.test/mailto:x", true},
		{"https://a.test/", true},
		{"ftp://a.test/", true},
		{"x-tel:1", true},
		{"tel", true},
		{"javascript", true},
	}
	for _, c := range cases {
		html := `<a href="` + c.ref + `">`
		got := len(Extract([]byte(html), "trawl").Links) == 1
		if got != c.keep {
			t.Errorf("Extract(%q) kept link = %v, want %v", html, got, c.keep)
		}
	}
}

func TestExtractNotLinks(t *testing.T) {
	// Each of these holds an <a href> that is text, not markup.
	cases := []string{
		`<!-- <a href="/c"> -->`,
		`<!--[if IE]><a href="/ie"><![endif]-->`,
		`<!-- unclosed comment <a href="/c">`,
		`<script>document.write('<a href="/s">')</script>`,
		`<script>var s = "</scr" + "ipt><a href='/s2'>";</script>`,
		`<script><!-- <script> </script> <a href="/escaped"> </script>`,
		`<script>never closed <a href="/s3">`,
		`<style>a{background:url(/bg.png)} /* <a href="/st"> */</style>`,
		`<textarea><a href="/ta"></textarea>`,
		`<title><a href="/t"></title>`,
		`<xmp><a href="/x"></xmp>`,
		`<noembed><a href="/ne"></noembed>`,
		`<plaintext><a href="/p">`,
		`<![CDATA[<a href="/cd">]]>`,
		`<a href="/eof"`,
		`<a href="/eof`,
		`<a`,
		`< a href="/space">`,
		`<?php echo '<a href="/php">' ?>`,
	}
	for _, html := range cases {
		if got := Extract([]byte(html), "trawl").Links; len(got) != 0 {
			t.Errorf("Extract(%q).Links = %v, want none", html, got)
		}
	}
}

func TestExtractFallbackContentIsMarkup(t *testing.T) {
	cases := []struct {
		html string
		want []Link
	}{
		{`<noscript><a href="/ns"></noscript><a href="/after">`, []Link{follow("a", "", "/ns"), follow("a", "", "/after")}},
		{`<head><noscript><link rel=stylesheet href=/ns.css></noscript></head>`, []Link{follow("link", "stylesheet", "/ns.css")}},
		{`<noframes><a href="/nf"></noframes>`, []Link{follow("a", "", "/nf")}},
		{`<noscript/><a href="/x">`, []Link{follow("a", "", "/x")}},
	}
	for _, c := range cases {
		if got := Extract([]byte(c.html), "trawl").Links; !reflect.DeepEqual(got, c.want) {
			t.Errorf("Extract(%q).Links = %v, want %v", c.html, got, c.want)
		}
	}
}

func TestExtractBaseAndCanonical(t *testing.T) {
	cases := []struct {
		html            string
		base, canonical string
	}{
		{`<base href="http://a.test/dir/">`, "http://a.test/dir/", ""},
		{`<base href=" /d/ "><base href="/second/">`, "/d/", ""},
		{`<base target="_blank"><base href="/real/">`, "/real/", ""},
		{`<base href=""><base href="/ignored/">`, "", ""},
		{`<body><p><base href="/late/">`, "/late/", ""},
		{`<!-- <base href="/c/"> -->`, "", ""},
		{`<link rel="canonical" href="http://a.test/c">`, "", "http://a.test/c"},
		{`<link rel="Canonical" href=" /c "><link rel=canonical href=/second>`, "", "/c"},
		{`<link rel="canonical" href=""><link rel=canonical href=/nonempty>`, "", "/nonempty"},
		{`<link rel="canonical alternate" href="/c">`, "", "/c"},
		{`<a rel="canonical" href="/not-link">`, "", ""},
		{`<link rel="canonicalish" href="/no">`, "", ""},
	}
	for _, c := range cases {
		p := Extract([]byte(c.html), "trawl")
		if p.BaseHref != c.base || p.Canonical != c.canonical {
			t.Errorf("Extract(%q) base, canonical = %q, %q, want %q, %q", c.html, p.BaseHref, p.Canonical, c.base, c.canonical)
		}
	}
}

func TestExtractTitle(t *testing.T) {
	long := strings.Repeat("x", 2000)
	// 1023 ASCII bytes then a 3-byte rune straddling the 1 KiB cut.
	straddle := strings.Repeat("y", 1023) + "€" + "z"
	cases := []struct {
		html, want string
	}{
		{`<title>Hello</title>`, "Hello"},
		{"<title>\n  Hello \t\r\n World  </title>", "Hello World"},
		{`<title>A &amp; B &lt;i&gt;</title>`, "A & B <i>"},
		{`<title>one</title><title>two</title>`, "one"},
		{`<title></title><title>two</title>`, ""},
		{`<svg><title>icon</title></svg><title>page</title>`, "page"},
		{`<math><title>m</title></math><title>page</title>`, "page"},
		{`<svg/><title>page</title>`, "page"},
		{`<body><title>late</title>`, "late"},
		{`<title>unclosed <b>bold`, "unclosed <b>bold"},
		{`<title>a` + "\x00" + `b</title>`, "a\ufffdb"},
		{`<title>` + long + `</title>`, long[:MaxTitleBytes]},
		{`<title>` + straddle + `</title>`, straddle[:1023]},
		{`<title>` + strings.Repeat("ab ", 1000) + `</title>`, strings.Repeat("ab ", 342)[:MaxTitleBytes]},
		{`<!-- <title>c</title> --><p>no title`, ""},
	}
	for _, c := range cases {
		got := Extract([]byte(c.html), "trawl").Title
		if got != c.want {
			t.Errorf("Extract(%q).Title = %q, want %q", c.html, got, c.want)
		}
		if len(got) > MaxTitleBytes {
			t.Errorf("Extract(%q).Title has %d bytes, want <= %d", c.html, len(got), MaxTitleBytes)
		}
	}
}

func TestExtractMetaRobots(t *testing.T) {
	cases := []struct {
		html              string
		noIndex, noFollow bool
	}{
		{`<meta name="robots" content="noindex">`, true, false},
		{`<meta name="robots" content="nofollow">`, false, true},
		{`<meta name="robots" content="none">`, true, true},
		{`<meta name="ROBOTS" content="NoIndex, NoFollow">`, true, true},
		{`<meta name=" robots " content="noindex,nofollow">`, true, true},
		{`<meta name="robots" content="noindex nofollow">`, true, true},
		{`<meta name="robots" content="index, follow">`, false, false},
		{`<meta name="robots" content="all, max-snippet:-1, unavailable_after: 2030-01-01">`, false, false},
		{`<meta name="robots" content="noindexx, nofollowed, nonee">`, false, false},
		{`<meta name="trawl" content="noindex">`, true, false},
		{`<meta name="TRAWL" content="none">`, true, true},
		{`<meta name="googlebot" content="none">`, false, false},
		{`<meta name="robots" content="noindex"><meta name="trawl" content="nofollow">`, true, true},
		{`<meta name="robots" content="noindex"><meta name="robots" content="index,follow">`, true, false},
		{`<meta content="none" name="robots">`, true, true},
		{`<meta name="robots">`, false, false},
		{`<meta property="robots" content="none">`, false, false},
		{`<!-- <meta name="robots" content="none"> -->`, false, false},
		{`<body><meta name="robots" content="nofollow">`, false, true},
	}
	for _, c := range cases {
		p := Extract([]byte(c.html), "trawl")
		if p.NoIndex != c.noIndex || p.NoFollow != c.noFollow {
			t.Errorf("Extract(%q) noindex, nofollow = %v, %v, want %v, %v", c.html, p.NoIndex, p.NoFollow, c.noIndex, c.noFollow)
		}
	}
}

func TestExtractEmptyAgentIgnoresAgentMeta(t *testing.T) {
	html := `<meta name="" content="none"><meta name="trawl" content="none">`
	if p := Extract([]byte(html), ""); p.NoIndex || p.NoFollow {
		t.Errorf("Extract(%q, \"\") noindex, nofollow = %v, %v, want false, false", html, p.NoIndex, p.NoFollow)
	}
}

func TestExtractPageNoFollowMarksEveryLink(t *testing.T) {
	// The meta comes after the links: the flag is applied at the end.
	html := `<a href=/a><iframe src=/f></iframe><meta name=robots content=nofollow><a href=/b rel=nofollow>`
	p := Extract([]byte(html), "trawl")
	want := []Link{nofollow("a", "", "/a"), nofollow("iframe", "", "/f"), nofollow("a", "nofollow", "/b")}
	if !p.NoFollow || !reflect.DeepEqual(p.Links, want) {
		t.Errorf("Extract(%q) = %+v, want NoFollow and links %v", html, p, want)
	}
}

func TestExtractMetaRefresh(t *testing.T) {
	cases := []struct {
		content string
		want    string // "" means no link
	}{
		{"0; url=/next", "/next"},
		{"5;URL='/q'", "/q"},
		{`3, url="/dq" trailing`, "/dq"},
		{"0;url = /spaced ", "/spaced"},
		{"0; /bare", "/bare"},
		{"0 /bare2", "/bare2"},
		{"1.5; url=/frac", "/frac"},
		{".5; url=/dot", "/dot"},
		{"0; url='/unterminated", "/unterminated"},
		{"0; urlish", "urlish"},
		{"0; url=javascript:alert(1)", ""},
		{"5", ""},
		{"5;", ""},
		{"0; url=", ""},
		{"url=/no-time", ""},
		{"0x; url=/bad", ""},
		{"", ""},
	}
	for _, c := range cases {
		html := `<meta http-equiv="Refresh" content="` + strings.ReplaceAll(c.content, `"`, "&quot;") + `">`
		var want []Link
		if c.want != "" {
			want = []Link{follow("meta", "", c.want)}
		}
		if got := Extract([]byte(html), "trawl").Links; !reflect.DeepEqual(got, want) {
			t.Errorf("Extract(%q).Links = %v, want %v", html, got, want)
		}
	}
}

func TestExtractMaxLinks(t *testing.T) {
	var b strings.Builder
	for i := range 10 {
		fmt.Fprintf(&b, `<a href="/%d">`, i)
	}
	b.WriteString(`<a href="/0"><a href="/9"><a href="/9">`) // one repeat of a kept link, two of a dropped one
	html := []byte(b.String())
	cases := []struct {
		max         int
		wantLinks   int
		wantDropped int
	}{
		{0, 10, 0},
		{-1, 10, 0},
		{1, 1, 11},
		{4, 4, 8},
		{10, 10, 0},
		{11, 10, 0},
	}
	full := ExtractWith(html, Options{})
	for _, c := range cases {
		p := ExtractWith(html, Options{MaxLinks: c.max})
		if len(p.Links) != c.wantLinks || p.Dropped != c.wantDropped {
			t.Errorf("ExtractWith(MaxLinks=%d) = %d links, %d dropped, want %d, %d", c.max, len(p.Links), p.Dropped, c.wantLinks, c.wantDropped)
		}
		if !reflect.DeepEqual(p.Links, full.Links[:len(p.Links)]) {
			t.Errorf("ExtractWith(MaxLinks=%d).Links = %v, want a prefix of %v", c.max, p.Links, full.Links)
		}
	}
}

func TestExtractDefaultMaxLinks(t *testing.T) {
	var b strings.Builder
	for i := range DefaultMaxLinks + 5 {
		fmt.Fprintf(&b, `<a href=/%d>`, i)
	}
	p := Extract([]byte(b.String()), "trawl")
	if len(p.Links) != DefaultMaxLinks || p.Dropped != 5 {
		t.Errorf("Extract(%d links) = %d links, %d dropped, want %d, 5", DefaultMaxLinks+5, len(p.Links), p.Dropped, DefaultMaxLinks)
	}
}

func TestExtractSurvivesHostileInput(t *testing.T) {
	huge := strings.Repeat("a", 1<<20)
	past := strings.Repeat("a", simhash.MaxTokenBytes)
	cases := []struct {
		name string
		html string
		want int // number of links
	}{
		{"enormous attribute value", `<a href="/` + huge + `">`, 1},
		{"enormous unquoted value", `<a href=/` + huge + `>`, 1},
		// A token past simhash.MaxTokenBytes ends the reading: links
		// before it are kept, none after.
		{"token past the bound", `<a href=/before><a href="/` + past + `"><a href=/after>`, 1},
		{"text past the bound", `<a href=/before>` + strings.Repeat("\x00", simhash.MaxTokenBytes+1) + `<a href=/after>`, 1},
		{"many attributes", `<a ` + strings.Repeat(`x=1 `, 100000) + `href=/x>`, 1},
		{"deep nesting", strings.Repeat("<div><span>", 200000) + `<a href=/deep>` + strings.Repeat("</span></div>", 200000), 1},
		{"unclosed tags", strings.Repeat("<div", 100000) + `><a href=/x>`, 1},
		{"unclosed quote", `<div title="` + strings.Repeat("<p>", 100000) + `<a href=/x>`, 0},
		{"nul bytes", strings.Repeat("\x00<\x00a\x00 href=/n\x00>", 1000), 0},
		{"invalid utf-8", "<p>" + strings.Repeat("\xff\xfe<a href=/u\xc3>", 1000), 1},
		// FF FE is a UTF-16LE byte order mark: a browser reads no tags.
		{"invalid utf-8 after a UTF-16 BOM", strings.Repeat("\xff\xfe<a href=/u\xc3>", 1000), 0},
		{"angle soup", strings.Repeat("<<<>>></<!--<!<?", 100000) + `--><a href=/after>`, 1},
		{"only a tag open at EOF", `<a href="/x" `, 0},
	}
	for _, c := range cases {
		p := Extract([]byte(c.html), "trawl")
		if len(p.Links) != c.want {
			t.Errorf("%s: Extract = %d links, want %d", c.name, len(p.Links), c.want)
		}
	}
}

func TestOptionsValidate(t *testing.T) {
	cases := []struct {
		opts Options
		want []string // substrings of the error; nil means valid
	}{
		{Options{}, nil},
		{Options{Agent: "trawl", MaxLinks: 5}, nil},
		{Options{Agent: "my-bot_"}, nil},
		{Options{Agent: "my-bot_2"}, []string{"Agent"}}, // RFC 9309 2.2.1: no digits
		{Options{MaxLinks: -1}, []string{"MaxLinks"}},
		{Options{Agent: "tr awl"}, []string{"Agent"}},
		{Options{Agent: "a:b", MaxLinks: -3}, []string{"MaxLinks", "Agent"}},
	}
	for _, c := range cases {
		err := c.opts.Validate()
		if (err == nil) != (c.want == nil) {
			t.Errorf("%+v.Validate() = %v, want error: %v", c.opts, err, c.want != nil)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) || !strings.HasPrefix(err.Error(), "links: ") {
				t.Errorf("%+v.Validate() = %q, want it to name %q with prefix \"links: \"", c.opts, err, w)
			}
		}
	}
}

func TestXRobotsTag(t *testing.T) {
	cases := []struct {
		values            []string
		noIndex, noFollow bool
	}{
		{nil, false, false},
		{[]string{""}, false, false},
		{[]string{"noindex"}, true, false},
		{[]string{"NOFOLLOW"}, false, true},
		{[]string{"none"}, true, true},
		{[]string{"noindex, nofollow"}, true, true},
		{[]string{"noindex", "nofollow"}, true, true},
		{[]string{"all"}, false, false},
		{[]string{"index, follow, noarchive, nosnippet"}, false, false},
		{[]string{"trawl: noindex"}, true, false},
		{[]string{"Trawl : NONE"}, true, true},
		{[]string{"trawl: noindex, nofollow"}, true, true},
		{[]string{"googlebot: noindex"}, false, false},
		{[]string{"googlebot: noindex, nofollow"}, false, false},
		{[]string{"googlebot: none", "trawl: nofollow"}, false, true},
		{[]string{"noindex, googlebot: nofollow"}, true, false},
		{[]string{"googlebot: nofollow, trawl: noindex"}, true, false},
		{[]string{"trawlbot: none"}, false, false},
		{[]string{"unavailable_after: 25 Jun 2010 15:00:00 PST"}, false, false},
		{[]string{"unavailable_after: Sunday, 01-Jan-2040 12:00:00 GMT, noindex"}, true, false},
		{[]string{"trawl: unavailable_after: 2040-01-01T00:00:00Z, nofollow"}, false, true},
		{[]string{"max-snippet: 20, noindex"}, true, false},
		{[]string{"max-image-preview:large", "max-video-preview:-1"}, false, false},
		{[]string{"noindex nofollow"}, true, true},
		{[]string{" , ,noindex,, "}, true, false},
		{[]string{": noindex"}, false, false},
		{[]string{"bad agent: noindex"}, false, false},
		{[]string{"noindexx, nofollowx"}, false, false},
		// A prefix with a digit is not an RFC 9309 product token (2.2.1):
		// its item is ignored and the next unprefixed item applies to all.
		{[]string{"MJ12bot: noindex"}, false, false},
		{[]string{"MJ12bot: noindex, nofollow"}, false, true},
		{[]string{"trawl-bot_x: noindex"}, false, false},
	}
	for _, c := range cases {
		ni, nf := XRobotsTag(c.values, "trawl")
		if ni != c.noIndex || nf != c.noFollow {
			t.Errorf("XRobotsTag(%q, \"trawl\") = %v, %v, want %v, %v", c.values, ni, nf, c.noIndex, c.noFollow)
		}
	}
}

func TestXRobotsTagEmptyAgent(t *testing.T) {
	values := []string{"trawl: none", "noindex"}
	if ni, nf := XRobotsTag(values, ""); !ni || nf {
		t.Errorf("XRobotsTag(%q, \"\") = %v, %v, want true, false", values, ni, nf)
	}
}

func TestMetas(t *testing.T) {
	long := strings.Repeat("é", MaxMetaContentBytes) // 2 bytes a rune
	body := `<html><head>
<meta name="ROBOTS" content="noindex, noai">
<meta name="description" content="not kept">
<meta name="Trawl" content=" nofollow ">
<meta name="otherbot" content="noindex">
<meta name="tdm-reservation" content="1">
<meta name=" tdm-policy " content="https://x.test/p.json?a=1&amp;b=2">
<meta name="tdm-policy" content="` + long + `">
</head></html>`
	p := Extract([]byte(body), "trawl")
	want := []Meta{
		{Name: "ROBOTS", Content: "noindex, noai"},
		{Name: "Trawl", Content: " nofollow "},
		{Name: "tdm-reservation", Content: "1"},
		{Name: "tdm-policy", Content: "https://x.test/p.json?a=1&b=2"},
		{Name: "tdm-policy", Content: long[:MaxMetaContentBytes], Truncated: true},
	}
	if !reflect.DeepEqual(p.Metas, want) {
		t.Errorf("Metas = %+v\nwant %+v", p.Metas, want)
	}
	if !p.NoIndex || !p.NoFollow {
		t.Errorf("NoIndex, NoFollow = %v, %v", p.NoIndex, p.NoFollow)
	}

	var many strings.Builder
	for range MaxMetas + 3 {
		many.WriteString(`<meta name=robots content=all>`)
	}
	p = Extract([]byte(many.String()), "")
	if len(p.Metas) != MaxMetas || p.MetasDropped != 3 {
		t.Errorf("len(Metas), MetasDropped = %d, %d", len(p.Metas), p.MetasDropped)
	}
}
