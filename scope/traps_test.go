package scope

import (
	"net/url"
	"strings"
	"testing"
)

func TestPattern(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"http://a.test/", "a.test/"},
		{"http://a.test/page12.html", "a.test/page#.html"},
		{"http://a.test/page12.html;jsessionid=9F3A11", "a.test/page#.html"},
		{"http://a.test/a;v=1/b2;x=y/c", "a.test/a/b#/c"},
		{"http://a.test/calendar/2025/06", "a.test/calendar/#/#"},
		{"http://shop.test/shop/?color=red&size=m", "shop.test/shop/?"},
		{"http://shop.test/shop/?brand=acme", "shop.test/shop/?"},
		{"http://a.test/page3.html?sid=ABC", "a.test/page#.html?"},
		{"http://a.test:8080/blog/2024/post7.html", "a.test:8080/blog/#/post#.html"},
		{"http://a.test/notes/caf%C3%A9-3.html", "a.test/notes/caf%C#%A#-#.html"},
	} {
		u, err := url.Parse(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		if got := Pattern(u); got != tc.want {
			t.Errorf("Pattern(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestStripSession(t *testing.T) {
	const session = "9F86D081884C7D65" // "=S" in the table

	for _, tc := range []struct {
		name  string
		rules Rules
		in    string
		want  string
	}{
		{"nothing to strip", Rules{}, "http://a.test/p.html?a=1", "http://a.test/p.html?a=1"},
		{"path parameter", Rules{}, "http://a.test/p.html;jsessionid=1A2B3C4D5E6F7A8B9C0D1E2F3A4B5C6D", "http://a.test/p.html"},
		{"path parameter with a node suffix", Rules{}, "http://a.test/p.html;jsessionid=1A2B3C4D5E6F7A8B.node1", "http://a.test/p.html"},
		{"path parameter, upper case", Rules{}, "http://a.test/d;JSESSIONID=S/p.html", "http://a.test/d/p.html"},
		{"other path parameter kept", Rules{}, "http://a.test/p;v=2;jsessionid=S", "http://a.test/p;v=2"},
		{"query, only parameter", Rules{}, "http://a.test/p.html?sid=S", "http://a.test/p.html"},
		{"query, among others", Rules{}, "http://a.test/s?PHPSESSID=S&a=2&sessionid=S&z=4", "http://a.test/s?a=2&z=4"},
		{"aspsessionid", Rules{}, "http://a.test/?aspsessionid=S", "http://a.test/"},
		{"short value kept", Rules{}, "http://a.test/list?sessionid=s42&sid=12", "http://a.test/list?sessionid=s42&sid=12"},
		{"value not a token", Rules{}, "http://a.test/?sid=0123456789ABCDEF%20x", "http://a.test/?sid=0123456789ABCDEF%20x"},
		{"prefix is not a match", Rules{}, "http://a.test/?sidebar=S", "http://a.test/?sidebar=S"},
		{"custom list", Rules{SessionParams: []string{"token"}}, "http://a.test/?token=S&sid=S", "http://a.test/?sid=S"},
		{"empty list strips nothing", Rules{SessionParams: []string{}}, "http://a.test/p;jsessionid=S?sid=S", "http://a.test/p;jsessionid=S?sid=S"},
		{"escapes kept", Rules{}, "http://a.test/caf%C3%A9;jsessionid=S", "http://a.test/caf%C3%A9"},
	} {
		tc.in = strings.ReplaceAll(tc.in, "=S", "="+session)
		tc.want = strings.ReplaceAll(tc.want, "=S", "="+session)
		u, err := url.Parse(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		got := tc.rules.StripSession(u)
		if got.String() != tc.want {
			t.Errorf("%s: StripSession(%q) = %q, want %q", tc.name, tc.in, got, tc.want)
		}
		if tc.in == tc.want && got != u {
			t.Errorf("%s: StripSession(%q) made a copy, want u itself", tc.name, tc.in)
		}
		if u.String() != tc.in {
			t.Errorf("%s: StripSession changed its input to %q", tc.name, u)
		}
	}
}

func TestPatternLimit(t *testing.T) {
	for _, tc := range []struct {
		rules Rules
		want  int
	}{
		{Rules{}, DefaultMaxURLsPerPattern},
		{Rules{MaxURLsPerPattern: 10}, 10},
		{Rules{MaxURLsPerPattern: -1}, 0},
	} {
		if got := tc.rules.PatternLimit(); got != tc.want {
			t.Errorf("%+v.PatternLimit() = %d, want %d", tc.rules, got, tc.want)
		}
	}
}

// TestGrowingPathIsCut walks a page whose relative links "more/" and
// "./next/x/" lead below it (testweb's growing-path trap) breadth first
// through Check with the default rules: the repeated-segment cap must
// end the walk, after few URLs.
func TestGrowingPathIsCut(t *testing.T) {
	for _, tc := range []struct {
		name  string
		rules Rules
		most  int // most URLs admitted
	}{
		{"defaults", Rules{}, 70},
		{"repeats twice", Rules{MaxRepeatedSegment: 2}, 20},
		{"no repeat cap, 12 links deep", Rules{MaxRepeatedSegment: -1, MaxDepth: 12}, 9000},
	} {
		start, _ := url.Parse("http://g.test/grow/")
		type item struct {
			u     *url.URL
			depth int
		}
		queue, admitted := []item{{start, 0}}, 1
		for len(queue) > 0 && admitted <= tc.most {
			it := queue[0]
			queue = queue[1:]
			for _, ref := range []string{"more/", "./next/x/"} {
				r, _ := url.Parse(ref)
				next := it.u.ResolveReference(r)
				if tc.rules.Check(next, it.depth+1) == nil {
					admitted++
					queue = append(queue, item{next, it.depth + 1})
				}
			}
		}
		if len(queue) > 0 || admitted > tc.most {
			t.Errorf("%s: the walk admitted more than %d URLs (still going: %d queued)", tc.name, tc.most, len(queue))
		}
		t.Logf("%s: %d URLs admitted", tc.name, admitted)
	}
}
