package urlnorm

import (
	"errors"
	"net/url"
	"testing"
)

// TestResolveReferenceRFC3986 uses the examples of RFC 3986 section 5.4:
// 5.4.1 (normal) and 5.4.2 (abnormal, with the strict parser's answer for
// "http:g"), all against the base "http://a/b/c/d;p?q".
func TestResolveReferenceRFC3986(t *testing.T) {
	base, err := url.Parse("http://a/b/c/d;p?q")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ ref, want string }{
		// 5.4.1 Normal Examples
		{"g:h", "g:h"},
		{"g", "http://a/b/c/g"},
		{"./g", "http://a/b/c/g"},
		{"g/", "http://a/b/c/g/"},
		{"/g", "http://a/g"},
		{"//g", "http://g"},
		{"?y", "http://a/b/c/d;p?y"},
		{"g?y", "http://a/b/c/g?y"},
		{"#s", "http://a/b/c/d;p?q#s"},
		{"g#s", "http://a/b/c/g#s"},
		{"g?y#s", "http://a/b/c/g?y#s"},
		{";x", "http://a/b/c/;x"},
		{"g;x", "http://a/b/c/g;x"},
		{"g;x?y#s", "http://a/b/c/g;x?y#s"},
		{"", "http://a/b/c/d;p?q"},
		{".", "http://a/b/c/"},
		{"./", "http://a/b/c/"},
		{"..", "http://a/b/"},
		{"../", "http://a/b/"},
		{"../g", "http://a/b/g"},
		{"../..", "http://a/"},
		{"../../", "http://a/"},
		{"../../g", "http://a/g"},
		// 5.4.2 Abnormal Examples
		{"../../../g", "http://a/g"},
		{"../../../../g", "http://a/g"},
		{"/./g", "http://a/g"},
		{"/../g", "http://a/g"},
		{"g.", "http://a/b/c/g."},
		{".g", "http://a/b/c/.g"},
		{"g..", "http://a/b/c/g.."},
		{"..g", "http://a/b/c/..g"},
		{"./../g", "http://a/b/g"},
		{"./g/.", "http://a/b/c/g/"},
		{"g/./h", "http://a/b/c/g/h"},
		{"g/../h", "http://a/b/c/h"},
		{"g;x=1/./y", "http://a/b/c/g;x=1/y"},
		{"g;x=1/../y", "http://a/b/c/y"},
		{"g?y/./x", "http://a/b/c/g?y/./x"},
		{"g?y/../x", "http://a/b/c/g?y/../x"},
		{"g#s/./x", "http://a/b/c/g#s/./x"},
		{"g#s/../x", "http://a/b/c/g#s/../x"},
		{"http:g", "http:g"},
	}
	for _, tt := range tests {
		u, err := ResolveReference(base, tt.ref)
		if err != nil {
			t.Errorf("ResolveReference(%q) error: %v", tt.ref, err)
			continue
		}
		if got := u.String(); got != tt.want {
			t.Errorf("ResolveReference(%q) = %q, want %q", tt.ref, got, tt.want)
		}
	}
}

func TestResolveReferenceErrors(t *testing.T) {
	abs, _ := url.Parse("http://a/b")
	rel, _ := url.Parse("/b")
	tests := []struct {
		base *url.URL
		ref  string
		want string
	}{
		{nil, "g", `urlnorm: resolve "g": base "" is not an absolute URL`},
		{rel, "g", `urlnorm: resolve "g": base "/b" is not an absolute URL`},
		{abs, "%zz", `urlnorm: resolve "%zz": invalid URL escape "%zz"`},
		{abs, "http://a b/", `urlnorm: resolve "http://a b/": invalid character " " in host name`},
	}
	for _, tt := range tests {
		u, err := ResolveReference(tt.base, tt.ref)
		if err == nil {
			t.Errorf("ResolveReference(%v, %q) = %q, want error %q", tt.base, tt.ref, u, tt.want)
			continue
		}
		var ue *Error
		if got := err.Error(); got != tt.want || !errors.As(err, &ue) {
			t.Errorf("ResolveReference(%v, %q) error = %q, want *Error %q", tt.base, tt.ref, got, tt.want)
		}
	}
}
