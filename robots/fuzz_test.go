package robots

import (
	"strings"
	"testing"
)

func FuzzParse(f *testing.F) {
	f.Add([]byte("user-agent: *\ndisallow: /\n"), "trawl", "/x")
	f.Add([]byte("\ufeffUser-Agent: trawl\r\nAllow: /a*b$\r\nDisallow: /%2A\rcrawl-delay: 1.5\nsitemap: x"), "TRAWL", "/a%2ab")
	f.Add([]byte("user-agent trawl\ndisallow /ツ\n#\n\n:\n::\n"), "trawl", "/ツ?#")
	f.Add([]byte("\xef\xbbuser-agent:*\nDisallow:/*$\n"), "", "")
	f.Fuzz(func(t *testing.T, body []byte, agent, path string) {
		r := Parse(body)
		got := r.Allowed(agent, path)
		if !r.Allowed(agent, "/robots.txt") {
			t.Errorf("Parse(%q).Allowed(%q, /robots.txt) = false", body, agent)
		}
		if again := Parse(body).Allowed(agent, path); again != got {
			t.Errorf("Parse(%q).Allowed(%q, %q) not deterministic", body, agent, path)
		}
		// The answer depends only on the normal form of the path.
		if n := normalizePath(path); r.Allowed(agent, n) != got {
			t.Errorf("Parse(%q).Allowed(%q, %q) = %v, but for its normal form %q = %v", body, agent, path, got, n, !got)
		}
		// Agent matching ignores ASCII case.
		if up := strings.ToUpper(agent); asciiEqualFold(up, agent) && r.Allowed(up, path) != got {
			t.Errorf("Parse(%q).Allowed differs for agents %q and %q", body, agent, up)
		}
		if d, ok := r.CrawlDelay(agent); ok && (d < 0 || d > MaxCrawlDelay) {
			t.Errorf("Parse(%q).CrawlDelay(%q) = %v out of range", body, agent, d)
		}
		if len(r.Warnings()) > maxWarnings+2 {
			t.Errorf("Parse(%q) kept %d warnings", body, len(r.Warnings()))
		}
	})
}

// matchRef is a plain dynamic-programming glob matcher: pattern (normal
// form, '*' wildcards, optional final '$') against a prefix of s, or all of
// s when anchored. It is slow and obviously right.
func matchRef(pattern, s string) bool {
	anchored := strings.HasSuffix(pattern, "$")
	if anchored {
		pattern = pattern[:len(pattern)-1]
	}
	// ok[j]: pattern[:i] matches s[:j].
	ok := make([]bool, len(s)+1)
	ok[0] = true
	for i := 0; i < len(pattern); i++ {
		next := make([]bool, len(s)+1)
		if pattern[i] == '*' {
			seen := false
			for j := 0; j <= len(s); j++ {
				seen = seen || ok[j]
				next[j] = seen
			}
		} else {
			for j := 1; j <= len(s); j++ {
				next[j] = ok[j-1] && s[j-1] == pattern[i]
			}
		}
		ok = next
	}
	if anchored {
		return ok[len(s)]
	}
	for _, v := range ok {
		if v {
			return true
		}
	}
	return false
}

// FuzzMatch checks the indexed matcher against matchRef and the longest
// match rule, with up to three rules of either kind.
func FuzzMatch(f *testing.F) {
	f.Add("/a*b$", "/a", "", uint8(1), "/axxb")
	f.Add("/*a*ab$", "/a*ab$", "/aab", uint8(2), "/aab")
	f.Add("/a*ab$", "/$", "/", uint8(5), "/ab")
	f.Add("*", "/robots.txt", "/robots.txt$", uint8(0), "")
	f.Add("/%2A*%24$", "/%2a", "/*", uint8(3), "/*x$")
	f.Fuzz(func(t *testing.T, p1, p2, p3 string, allowBits uint8, path string) {
		var body strings.Builder
		body.WriteString("user-agent: *\n")
		for i, p := range []string{p1, p2, p3} {
			if len(p) > 64 || strings.ContainsAny(p, "\r\n#") {
				return
			}
			key := "disallow"
			if allowBits&(1<<i) != 0 {
				key = "allow"
			}
			body.WriteString(key + ": " + p + "\n")
		}
		if len(path) > 256 {
			return
		}
		r := Parse([]byte(body.String()))
		s := normalizePath(path)
		best, want := -1, true
		if len(r.groups) == 1 {
			for _, ru := range r.groups[0].rules {
				if normalize(ru.pattern, true) != ru.pattern {
					t.Errorf("pattern %q not in normal form", ru.pattern)
				}
				if matchRef(ru.pattern, s) && (len(ru.pattern) > best || len(ru.pattern) == best && ru.allow) {
					best, want = len(ru.pattern), ru.allow
				}
			}
		}
		if s == "/robots.txt" {
			want = true
		}
		if got := r.Allowed("trawl", path); got != want {
			t.Errorf("Parse(%q).Allowed(%q) (normal form %q) = %v, want %v", body.String(), path, s, got, want)
		}
	})
}
