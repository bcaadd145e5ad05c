package urlnorm

import (
	"net/url"
	"testing"
)

func TestNormalize(t *testing.T) {
	tests := []struct{ in, want string }{
		// Scheme, host, port.
		{"HTTP://Example.COM/", "http://example.com/"},
		{"http://example.com:80/a", "http://example.com/a"},
		{"https://example.com:443/a", "https://example.com/a"},
		{"http://example.com:443/a", "http://example.com:443/a"},
		{"https://example.com:80/a", "https://example.com:80/a"},
		{"http://example.com:8080/a", "http://example.com:8080/a"},
		{"http://example.com:/a", "http://example.com/a"},
		{"http://example.com:0080/a", "http://example.com/a"},
		{"http://[2001:DB8:0:0::1]:80/", "http://[2001:db8::1]/"},
		{"http://user:secret@example.com/", "http://example.com/"},
		{"http://bücher.example/", "http://xn--bcher-kva.example/"},
		{"http://BÜCHER.example/", "http://xn--bcher-kva.example/"},
		{"http://xn--BCHER-kva.example/", "http://xn--bcher-kva.example/"},
		{"http://under_score.example/", "http://under_score.example/"},
		// Fragment and empty path.
		{"http://example.com", "http://example.com/"},
		{"http://example.com#frag", "http://example.com/"},
		{"http://example.com/a#frag", "http://example.com/a"},
		{"http://example.com/a?#", "http://example.com/a"},
		// Dot segments (RFC 3986 5.2.4).
		{"http://example.com/a/b/c/./../../g", "http://example.com/a/g"},
		{"http://example.com/mid/content=5/../6", "http://example.com/mid/6"},
		{"http://example.com/../../a", "http://example.com/a"},
		{"http://example.com/a/b/..", "http://example.com/a/"},
		{"http://example.com/a/.", "http://example.com/a/"},
		{"http://example.com/a/%2e%2E/b", "http://example.com/b"},
		{"http://example.com/a/.../b", "http://example.com/a/.../b"},
		{"http://example.com/a//b", "http://example.com/a//b"},
		// Percent-encoding.
		{"http://example.com/%7euser/%41%62c", "http://example.com/~user/Abc"},
		{"http://example.com/a%2fb%3f%26%3d%23%25", "http://example.com/a%2Fb%3F%26%3D%23%25"},
		{"http://example.com/%c3%a9", "http://example.com/%C3%A9"},
		{"http://example.com/é", "http://example.com/%C3%A9"},
		{"http://example.com/a b", "http://example.com/a%20b"},
		{"http://example.com/a|b^c", "http://example.com/a%7Cb%5Ec"},
		{"http://example.com/100%", "http://example.com/100%25"},
		{"http://example.com/%zz", "http://example.com/%25zz"},
		{"http://example.com/!$&'()*+,;=:@", "http://example.com/!$&'()*+,;=:@"},
		{"http://example.com/?q=%7e%2b+x&r=%2f/?", "http://example.com/?q=~%2B+x&r=%2F/?"},
		{"http://example.com/?q='a'", "http://example.com/?q=%27a%27"},
		{"http://example.com/?q=a%20b|c", "http://example.com/?q=a%20b%7Cc"},
		// Query: tracking parameters, empty parameters, order.
		{"http://example.com/?utm_source=x&utm_medium=y&utm_=z&utm_campaign_id=1", "http://example.com/"},
		{"http://example.com/?gclid=1&fbclid=2&msclkid=3&dclid=4&yclid=5&_ga=6&mc_cid=7&mc_eid=8", "http://example.com/"},
		{"http://example.com/?b=2&utm_source=x&a=1", "http://example.com/?a=1&b=2"},
		{"http://example.com/?UTM_SOURCE=x&gclid2=y", "http://example.com/?UTM_SOURCE=x&gclid2=y"},
		{"http://example.com/?utm%5Fsource=x", "http://example.com/"},
		{"http://example.com/?b=2&a=3&b=1&a=2", "http://example.com/?a=3&a=2&b=2&b=1"},
		{"http://example.com/?a&&b=&&", "http://example.com/?a&b="},
		{"http://example.com/?z&a=1=2", "http://example.com/?a=1=2&z"},
		{"http://example.com/?", "http://example.com/"},
		{"http://example.com/?&", "http://example.com/"},
		{"http://example.com/?b=%3D&a=%26", "http://example.com/?a=%26&b=%3D"},
	}
	for _, tt := range tests {
		// Most inputs are read by net/url, to see Normalize handle URLs
		// that did not come from Parse; those net/url rejects by Parse.
		u, err := url.Parse(tt.in)
		if err != nil {
			if u, err = Parse(tt.in, nil); err != nil {
				t.Fatalf("Parse(%q): %v", tt.in, err)
			}
		}
		before := u.String()
		n := Normalize(u)
		if got := n.String(); got != tt.want {
			t.Errorf("Normalize(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if again := Normalize(n).String(); again != tt.want {
			t.Errorf("Normalize(Normalize(%q)) = %q, want %q", tt.in, again, tt.want)
		}
		if u.String() != before {
			t.Errorf("Normalize(%q) modified its input: now %q", tt.in, u)
		}
	}
}

func mustParseStd(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestNormalizeOpaqueAndNil(t *testing.T) {
	if Normalize(nil) != nil {
		t.Errorf("Normalize(nil) != nil")
	}
	u := mustParseStd(t, "MAILTO:a@example.com#x")
	if got, want := Normalize(u).String(), "mailto:a@example.com"; got != want {
		t.Errorf("Normalize(%q) = %q, want %q", u, got, want)
	}
}

func TestCanonical(t *testing.T) {
	base := mustParseStd(t, "https://www.example.com/news/today.html")
	tests := []struct {
		ref  string
		want string
	}{
		{"../sport/?utm_source=feed&id=7#comments", "https://www.example.com/sport/?id=7"},
		{"HTTPS://WWW.Example.com:443/news/./today.html", "https://www.example.com/news/today.html"},
		{"//Bücher.example/a?b=1&a=2", "https://xn--bcher-kva.example/a?a=2&b=1"},
		{"/a'b?c'd", "https://www.example.com/a'b?c%27d"},
	}
	for _, tt := range tests {
		got, err := Canonical(tt.ref, base)
		if err != nil || got != tt.want {
			t.Errorf("Canonical(%q) = %q, %v, want %q", tt.ref, got, err, tt.want)
		}
	}
	if got, err := Canonical("javascript:alert(1)", base); err == nil {
		t.Errorf("Canonical(%q) = %q, want an error", "javascript:alert(1)", got)
	}
}

// TestNormalizeWHATWGFixedPoint checks, over every conformance case, that
// the canonical form is idempotent and re-parses to itself.
func TestNormalizeWHATWGFixedPoint(t *testing.T) {
	c := loadWHATWG(t)
	for _, tc := range c.OK {
		u, err := Parse(tc.Input, mustBase(t, tc.Base))
		if err != nil {
			continue // reported by TestParseWHATWG
		}
		checkCanonical(t, u)
	}
}

// checkCanonical asserts the invariants of Normalize on u.
func checkCanonical(t *testing.T, u *url.URL) {
	t.Helper()
	s1 := Normalize(u).String()
	if s2 := Normalize(Normalize(u)).String(); s2 != s1 {
		t.Errorf("Normalize(Normalize(%q)) = %q, want %q", u, s2, s1)
	}
	p, err := Parse(s1, nil)
	if err != nil {
		t.Errorf("Parse(Normalize(%q) = %q): %v", u, s1, err)
		return
	}
	if got := p.String(); got != s1 {
		t.Errorf("Parse(%q) = %q, want it unchanged (from %q)", s1, got, u)
	}
	if got := Normalize(p).String(); got != s1 {
		t.Errorf("Normalize(Parse(%q)) = %q, want it unchanged (from %q)", s1, got, u)
	}
}
