package robots

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestAllowed(t *testing.T) {
	tests := []struct {
		name, robots, agent, path string
		want                      bool
	}{
		// Group selection (RFC 9309 2.2.1).
		{"no file", "", "trawl", "/x", true},
		{"own group", "user-agent: trawl\ndisallow: /\n", "trawl", "/x", false},
		{"agent case-insensitive", "User-Agent: TRAWL\nDisallow: /\n", "Trawl", "/x", false},
		{"other group only", "user-agent: other\ndisallow: /\n", "trawl", "/x", true},
		{"star fallback", "user-agent: other\nallow: /\nuser-agent: *\ndisallow: /\n", "trawl", "/x", false},
		{"own group beats star", "user-agent: *\ndisallow: /\nuser-agent: trawl\nallow: /\n", "trawl", "/x", true},
		{"own group without rules beats star", "user-agent: *\ndisallow: /\nuser-agent: trawl\n", "trawl", "/x", true},
		{"consecutive agents share a group", "user-agent: a\nuser-agent: trawl\ndisallow: /x\n", "trawl", "/x", false},
		{"blank lines keep agents together", "user-agent: a\n\nuser-agent: trawl\n\ndisallow: /x\n", "trawl", "/x", false},
		{"groups of one agent merge", "user-agent: trawl\ndisallow: /a\nuser-agent: b\ndisallow: /\nuser-agent: trawl\ndisallow: /c\n", "trawl", "/c", false},
		{"merged groups, other path", "user-agent: trawl\ndisallow: /a\nuser-agent: b\ndisallow: /\nuser-agent: trawl\ndisallow: /c\n", "trawl", "/b", true},
		{"rules before user-agent ignored", "disallow: /\nuser-agent: trawl\nallow: /a\n", "trawl", "/x", true},
		{"value is not cut at space", "user-agent: trawl bot\ndisallow: /\n", "trawl", "/x", true},
		{"value with version is not a match", "user-agent: trawl/1.0\ndisallow: /\n", "trawl", "/x", true},
		{"sitemap does not split agents", "user-agent: a\nsitemap: /s.xml\nuser-agent: trawl\ndisallow: /\n", "trawl", "/x", false},
		// RFC 9309 2.2.4: other records neither end nor split a group.
		{"crawl-delay does not split agents", "user-agent: *\ncrawl-delay: 10\nuser-agent: trawl\ndisallow: /x\n", "other", "/x", false},
		{"crawl-delay does not split agents (brief)", "User-agent: a\nCrawl-delay: 5\nUser-agent: b\nDisallow: /x\n", "a", "/x", false},
		{"crawl-delay does not split agents, second", "User-agent: a\nCrawl-delay: 5\nUser-agent: b\nDisallow: /x\n", "b", "/x", false},
		{"unknown record does not split agents", "user-agent: a\nfoo: bar\nuser-agent: trawl\ndisallow: /x\n", "a", "/x", false},
		{"crawl-delay does not end a group", "user-agent: trawl\ndisallow: /a\ncrawl-delay: 1\ndisallow: /x\n", "trawl", "/x", false},
		{"sitemap does not end a group", "user-agent: trawl\ndisallow: /a\nsitemap: /s.xml\ndisallow: /x\n", "trawl", "/x", false},
		{"rule ends agent run", "user-agent: a\ndisallow: /y\nuser-agent: trawl\ndisallow: /x\n", "a", "/x", true},
		// Syntax.
		{"CR line ends", "user-agent: trawl\rdisallow: /x\r", "trawl", "/x", false},
		{"CRLF line ends", "user-agent: trawl\r\ndisallow: /x\r\n", "trawl", "/x", false},
		{"comments", "# hi\nuser-agent: trawl # me\ndisallow: /x # not /y\n", "trawl", "/x", false},
		{"comment cuts value", "user-agent: trawl\ndisallow: /x#y\n", "trawl", "/x", false},
		{"whitespace around", "  USER-AGENT :\ttrawl  \n\tDisAllow  :   /x   \n", "trawl", "/x", false},
		{"BOM", "\ufeffuser-agent: trawl\ndisallow: /\n", "trawl", "/x", false},
		{"missing colon leniency", "user-agent trawl\ndisallow /\n", "trawl", "/x", false},
		{"no final newline", "user-agent: trawl\ndisallow: /x", "trawl", "/x", false},
		{"empty disallow", "user-agent: trawl\ndisallow:\n", "trawl", "/x", true},
		{"empty disallow beside rules", "user-agent: trawl\ndisallow:\ndisallow: /x\n", "trawl", "/x", false},
		// Matching (RFC 9309 2.2.2, 2.2.3).
		{"prefix", "user-agent: *\ndisallow: /fish\n", "trawl", "/fish.html", false},
		{"prefix is case-sensitive", "user-agent: *\ndisallow: /fish\n", "trawl", "/Fish", true},
		{"query counts", "user-agent: *\ndisallow: /a?b\n", "trawl", "/a?b=1", false},
		{"longest wins", "user-agent: *\ndisallow: /a\nallow: /a/b\n", "trawl", "/a/b/c", true},
		{"longest wins disallow", "user-agent: *\nallow: /a\ndisallow: /a/b\n", "trawl", "/a/b/c", false},
		{"tie allow wins", "user-agent: *\ndisallow: /a\nallow: /a\n", "trawl", "/a", true},
		{"tie allow wins, wildcards", "user-agent: *\ndisallow: /*a\nallow: /a*\n", "trawl", "/a", true},
		{"star", "user-agent: *\ndisallow: /*.php\n", "trawl", "/x/y.php?z", false},
		{"star no match", "user-agent: *\ndisallow: /*.php\n", "trawl", "/x/y.html", true},
		{"dollar", "user-agent: *\ndisallow: /*.php$\n", "trawl", "/y.php", false},
		{"dollar not at end", "user-agent: *\ndisallow: /*.php$\n", "trawl", "/y.php?z", true},
		{"dollar literal", "user-agent: *\ndisallow: /$\n", "trawl", "/", false},
		{"dollar literal other", "user-agent: *\ndisallow: /$\n", "trawl", "/a", true},
		{"allow $ beats /", "user-agent: *\ndisallow: /\nallow: /$\n", "trawl", "/", true},
		{"mid dollar literal", "user-agent: *\ndisallow: /a$b\n", "trawl", "/a$b", false},
		{"many stars", "user-agent: *\ndisallow: /*a*b*c*d\n", "trawl", "/xaybzczd", false},
		{"many stars miss", "user-agent: *\ndisallow: /*a*b*c*d\n", "trawl", "/xaybzcz", true},
		{"star dollar", "user-agent: *\ndisallow: /a*$\n", "trawl", "/ab", false},
		{"star anchored tail", "user-agent: *\ndisallow: /*ab$\n", "trawl", "/abab", false},
		{"star anchored overlap", "user-agent: *\ndisallow: /a*ab$\n", "trawl", "/ab", true},
		{"robots.txt always allowed", "user-agent: *\ndisallow: /\n", "trawl", "/robots.txt", true},
		{"robots.txt with query is not", "user-agent: *\ndisallow: /\n", "trawl", "/robots.txt?x", false},
		{"empty path is /", "user-agent: *\ndisallow: /$\n", "trawl", "", false},
		// Percent-encoding equivalence.
		{"unreserved escape in rule", "user-agent: *\ndisallow: /%7Efoo\n", "trawl", "/~foo", false},
		{"unreserved escape in URL", "user-agent: *\ndisallow: /~foo\n", "trawl", "/%7efoo", false},
		{"escape case", "user-agent: *\ndisallow: /a%2fb\n", "trawl", "/a%2Fb", false},
		{"slash escape is not slash", "user-agent: *\ndisallow: /a/b\n", "trawl", "/a%2Fb", true},
		{"raw UTF-8 in rule", "user-agent: *\ndisallow: /ツ\n", "trawl", "/%E3%83%84", false},
		{"raw UTF-8 in URL", "user-agent: *\ndisallow: /%e3%83%84\n", "trawl", "/ツ", false},
		{"%2A is a literal star", "user-agent: *\ndisallow: /a%2A\n", "trawl", "/a*", false},
		{"%2A is not a wildcard", "user-agent: *\ndisallow: /a%2Ab\n", "trawl", "/axb", true},
		{"%24 is a literal dollar", "user-agent: *\ndisallow: /a-%24\n", "trawl", "/a-$", false},
		{"%24 does not anchor", "user-agent: *\ndisallow: /a%24\n", "trawl", "/a$b", false},
		{"space", "user-agent: *\ndisallow: /a b\n", "trawl", "/a%20b", false},
		{"lone percent", "user-agent: *\ndisallow: /a%\n", "trawl", "/a%25", false},
	}
	for _, tt := range tests {
		got := Parse([]byte(tt.robots)).Allowed(tt.agent, tt.path)
		if got != tt.want {
			t.Errorf("%s: Parse(%q).Allowed(%q, %q) = %v, want %v", tt.name, tt.robots, tt.agent, tt.path, got, tt.want)
		}
	}
}

func TestNormalize(t *testing.T) {
	tests := []struct {
		in      string
		pattern bool
		want    string
	}{
		{"/a/b?c=d&e", false, "/a/b?c=d&e"},
		{"/%62%61%7A", false, "/baz"},
		{"/%62%61%7A", true, "/baz"},
		{"/%2f%3a", false, "/%2F%3A"},
		{"/ツ", false, "/%E3%83%84"},
		{"/a b", true, "/a%20b"},
		{"/a*$", false, "/a%2A%24"},
		{"/a*$", true, "/a*$"},
		{"/a$b$", true, "/a%24b$"},
		{"/%zz%4", false, "/%25zz%254"},
		{"/{|}", false, "/%7B%7C%7D"},
		{"/%7e", true, "/~"},
	}
	for _, tt := range tests {
		if got := normalize(tt.in, tt.pattern); got != tt.want {
			t.Errorf("normalize(%q, %v) = %q, want %q", tt.in, tt.pattern, got, tt.want)
		}
		if got := normalize(tt.want, tt.pattern); got != tt.want {
			t.Errorf("normalize(%q, %v) = %q, want it unchanged (idempotence)", tt.want, tt.pattern, got)
		}
	}
}

func TestAllowedURL(t *testing.T) {
	r := Parse([]byte("user-agent: *\ndisallow: /a?x\ndisallow: /%E3%83%84\n"))
	tests := []struct {
		url  string
		want bool
	}{
		{"http://h.test/a?x=1", false},
		{"http://h.test/a?y", true},
		{"http://h.test/a", true},
		{"http://h.test/ツ", false},
		{"http://h.test", true},
		{"http://h.test/robots.txt", true},
	}
	for _, tt := range tests {
		u, err := url.Parse(tt.url)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.AllowedURL("trawl", u); got != tt.want {
			t.Errorf("AllowedURL(%q) = %v, want %v", tt.url, got, tt.want)
		}
	}
	var nilRobots *Robots
	if !nilRobots.Allowed("trawl", "/x") {
		t.Errorf("(*Robots)(nil).Allowed = false, want true")
	}
}

func TestCrawlDelay(t *testing.T) {
	tests := []struct {
		robots, agent string
		want          time.Duration
		ok            bool
	}{
		{"user-agent: *\ncrawl-delay: 5\n", "trawl", 5 * time.Second, true},
		{"user-agent: *\ncrawl-delay: 0.5\n", "trawl", 500 * time.Millisecond, true},
		{"user-agent: *\ncrawl-delay: 3600\n", "trawl", MaxCrawlDelay, true},
		{"user-agent: *\ncrawl-delay: 1e300\n", "trawl", MaxCrawlDelay, true},
		{"user-agent: *\ncrawl-delay: -1\n", "trawl", 0, false},
		{"user-agent: *\ncrawl-delay: soon\n", "trawl", 0, false},
		{"user-agent: *\ncrawl-delay: NaN\n", "trawl", 0, false},
		{"crawl-delay: 5\nuser-agent: *\n", "trawl", 0, false},
		// RFC 9309 2.2.4: crawl-delay does not split "*" and trawl.
		{"user-agent: *\ncrawl-delay: 5\nuser-agent: trawl\ndisallow: /\n", "trawl", 5 * time.Second, true},
		{"user-agent: trawl\ncrawl-delay: 2\nuser-agent: x\ndisallow: /\nuser-agent: trawl\ncrawl-delay: 7\n", "TRAWL", 7 * time.Second, true},
		{"user-agent: a\ncrawl-delay: 2\nuser-agent: trawl\n", "trawl", 2 * time.Second, true},
		{"user-agent: a\ncrawl-delay: 2\nuser-agent: trawl\n", "a", 2 * time.Second, true},
		{"user-agent: a\ndisallow: /\ncrawl-delay: 2\nuser-agent: trawl\n", "trawl", 0, false},
		{"user-agent: a\nuser-agent: trawl\ncrawl-delay: 2\n", "trawl", 2 * time.Second, true},
	}
	for _, tt := range tests {
		got, ok := Parse([]byte(tt.robots)).CrawlDelay(tt.agent)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Parse(%q).CrawlDelay(%q) = %v, %v, want %v, %v", tt.robots, tt.agent, got, ok, tt.want, tt.ok)
		}
	}
}

func TestSitemaps(t *testing.T) {
	r := Parse([]byte("Sitemap: https://h.test/a.xml\nuser-agent: *\nsitemap:https://h.test/b.xml\nSITEMAP: https://h.test/a.xml\nsitemap:\n"))
	want := []string{"https://h.test/a.xml", "https://h.test/b.xml"}
	if got := r.Sitemaps(); !slices.Equal(got, want) {
		t.Errorf("Sitemaps() = %q, want %q", got, want)
	}
	if got := Parse(nil).Sitemaps(); got != nil {
		t.Errorf("Parse(nil).Sitemaps() = %q, want nil", got)
	}
}

func TestWarnings(t *testing.T) {
	body := "disallow: /a\nuser-agent: *\nfoo: bar\n<br />\ndisallow /x\ncrawl-delay: x\nuser-agent: a b\n"
	want := []string{
		`line 1: disallow before any user-agent, ignored`,
		`line 3: unknown directive "foo", ignored`,
		`line 4: no colon, ignored: "<br />"`,
		`line 5: missing colon after "disallow", accepted`,
		`line 6: crawl-delay "x": not a number of seconds`,
		`line 7: user-agent "a b" is not a product token; it matches only a crawler that uses exactly this name`,
	}
	if got := Parse([]byte(body)).Warnings(); !slices.Equal(got, want) {
		t.Errorf("Parse(%q).Warnings() =\n%q\nwant\n%q", body, got, want)
	}
	many := strings.Repeat("bogus: 1\n", 500)
	got := Parse([]byte(many)).Warnings()
	if len(got) != maxWarnings+1 || got[maxWarnings] != "400 more warnings not shown" {
		t.Errorf("Parse(500 bogus lines).Warnings() has %d entries ending %q, want %d ending %q",
			len(got), got[len(got)-1], maxWarnings+1, "400 more warnings not shown")
	}
}

func TestMaxBytes(t *testing.T) {
	head := "user-agent: *\ndisallow: /a\n"
	filler := strings.Repeat("# padding padding padding padding\n", MaxBytes/34)
	body := head + filler
	body = body[:MaxBytes-len("disallow: /bcd")] // the next rule straddles the limit
	body += "disallow: /bcdef\ndisallow: /z\n"
	r := Parse([]byte(body))
	tests := []struct {
		path string
		want bool
	}{
		{"/a", false}, // before the limit
		{"/bc", true}, // the cut line is dropped, not read as "/bcd"
		{"/bcdef", true},
		{"/z", true}, // after the limit
	}
	for _, tt := range tests {
		if got := r.Allowed("trawl", tt.path); got != tt.want {
			t.Errorf("Allowed(%q) on a %d-byte file = %v, want %v", tt.path, len(body), got, tt.want)
		}
	}
	w := r.Warnings()
	if len(w) == 0 || !strings.Contains(w[len(w)-1], "longer than") {
		t.Errorf("Warnings() = %q, want a truncation warning last", w)
	}
	// Exactly MaxBytes is read whole.
	exact := head + strings.Repeat("#", MaxBytes-len(head)-len("\ndisallow: /q")) + "\ndisallow: /q"
	for _, tail := range []string{"", "\n", "\r\n", "\nuser-agent: trawl\n"} {
		if got := Parse([]byte(exact+tail)).Allowed("trawl", "/q"); got {
			t.Errorf("Allowed(/q) with the rule ending at byte %d, then %q = true, want false", len(exact), tail)
		}
	}
	if got := Parse([]byte(exact+"x")).Allowed("trawl", "/q"); !got {
		t.Errorf("Allowed(/q) with the rule cut at byte %d = false, want true (line dropped)", len(exact))
	}
}

// TestPathologicalPatterns checks that matching stays fast for patterns that
// make a backtracking matcher explode.
func TestPathologicalPatterns(t *testing.T) {
	pattern := "/" + strings.Repeat("*a", 2000) + "b$"
	path := "/" + strings.Repeat("a", 100_000)
	r := Parse([]byte("user-agent: *\ndisallow: " + pattern + "\n"))
	start := time.Now()
	if !r.Allowed("trawl", path) {
		t.Errorf("Allowed(a...a) = false, want true")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Allowed took %s on a pathological pattern", d)
	}
}

func TestConcurrentAgents(t *testing.T) {
	r := Parse([]byte("user-agent: a\ndisallow: /\nuser-agent: b\nallow: /\nuser-agent: *\ndisallow: /x\n"))
	done := make(chan bool)
	for g := range 8 {
		go func() {
			ok := true
			for i := range 500 {
				agent := []string{"a", "B", "c"}[(g+i)%3]
				want := map[string]bool{"a": false, "B": true, "c": false}[agent]
				ok = ok && r.Allowed(agent, "/x") == want
			}
			done <- ok
		}()
	}
	for range 8 {
		if !<-done {
			t.Errorf("concurrent Allowed with three agents gave a wrong answer")
		}
	}
}

// bigRobots is a file near MaxBytes with many literal and wildcard rules.
func bigRobots() []byte {
	var b strings.Builder
	b.WriteString("user-agent: other\ndisallow: /\n\nuser-agent: *\n")
	for i := 0; b.Len() < MaxBytes-100; i++ {
		switch i % 10 {
		case 0:
			fmt.Fprintf(&b, "disallow: /*/section-%d/*.pdf$\n", i)
		case 1:
			fmt.Fprintf(&b, "allow: /public/%d/\n", i)
		default:
			fmt.Fprintf(&b, "disallow: /private/%d/page\n", i)
		}
	}
	return []byte(b.String())
}

func BenchmarkAllowed(b *testing.B) {
	r := Parse(bigRobots())
	paths := []string{
		"/private/12/page/x",
		"/public/11/index.html",
		"/a/section-20/doc.pdf",
		"/nothing/matches/here?q=1",
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		r.Allowed("trawl", paths[i%len(paths)])
	}
}

func BenchmarkParse(b *testing.B) {
	body := bigRobots()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		Parse(body)
	}
}

func TestProductToken(t *testing.T) {
	tests := []struct{ in, want string }{
		{"trawl", "trawl"},
		{"trawl/0.1 (+https://trawl.test/bot)", "trawl"},
		{"Trawl-Bot_x/1", "Trawl-Bot_x"},
		{"trawl bot", "trawl"},
		// RFC 9309 2.2.1: digits are not in a product token.
		{"MJ12bot/1.0", "MJ"},
		{"bot2", "bot"},
		{"42bot", ""},
		{"", ""},
		{"/1.0", ""},
		{"*", ""},
		{"tr\u00e4wl", "tr"},
	}
	for _, tt := range tests {
		if got := ProductToken(tt.in); got != tt.want {
			t.Errorf("ProductToken(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
