package scope

import (
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestCheck(t *testing.T) {
	domains := Rules{Domains: []string{"Example.COM", "bücher.example", ".dotted.test."}}
	tests := []struct {
		name  string
		rules Rules
		url   string
		depth int
		want  Reason // "" means in scope
	}{
		{"zero rules admit http", Rules{}, "http://any.test/a", 100, ""},
		{"zero rules admit https", Rules{}, "https://any.test/", 0, ""},
		{"scheme ftp", Rules{}, "ftp://any.test/f", 0, ReasonScheme},
		{"scheme mailto", Rules{}, "mailto:a@any.test", 0, ReasonScheme},

		{"domain itself", domains, "http://example.com/", 0, ""},
		{"subdomain", domains, "http://www.EXAMPLE.com/", 0, ""},
		{"deep subdomain", domains, "http://a.b.example.com:8080/", 0, ""},
		{"suffix is not subdomain", domains, "http://badexample.com/", 0, ReasonDomain},
		{"parent of domain", domains, "http://com/", 0, ReasonDomain},
		{"other domain", domains, "http://example.org/", 0, ReasonDomain},
		{"IDNA domain, punycode host", domains, "http://www.xn--bcher-kva.example/", 0, ""},
		{"IDNA domain, unicode host", domains, "http://www.bücher.example/", 0, ""},
		{"dots trimmed", domains, "http://a.dotted.test/", 0, ""},
		{"trailing dot host", domains, "http://example.com./", 0, ""},

		{"depth unlimited", Rules{}, "http://a.test/", 1000, ""},
		{"depth at max", Rules{MaxDepth: 3}, "http://a.test/", 3, ""},
		{"depth over max", Rules{MaxDepth: 3}, "http://a.test/", 4, ReasonDepth},

		{"length default ok", Rules{}, "http://a.test/" + strings.Repeat("x", 2048-len("http://a.test/")), 0, ""},
		{"length default over", Rules{}, "http://a.test/" + strings.Repeat("x", 2049-len("http://a.test/")), 0, ReasonURLLength},
		{"length custom", Rules{MaxURLLength: 20}, "http://a.test/123456789", 0, ReasonURLLength},
		{"length unlimited", Rules{MaxURLLength: -1}, "http://a.test/" + strings.Repeat("x", 5000), 0, ""},

		{"segments at default", Rules{}, "http://a.test" + distinctSegments(32), 0, ""},
		{"segments over default", Rules{}, "http://a.test" + distinctSegments(33), 0, ReasonPathSegments},
		{"segments over", Rules{MaxPathSegments: 3, MaxRepeatedSegment: -1}, "http://a.test/a/b/c/d", 0, ReasonPathSegments},
		{"trailing slash counts", Rules{MaxPathSegments: 3}, "http://a.test/a/b/c/", 0, ReasonPathSegments},
		{"encoded slash is not a separator", Rules{MaxPathSegments: 2}, "http://a.test/a%2Fb%2Fc/d", 0, ""},

		{"repeat at max", Rules{}, "http://a.test/a/b/a/b/a/b", 0, ""},
		{"repeat over default", Rules{}, "http://a.test/a/b/a/b/a/b/a", 0, ReasonRepeatedSegment},
		{"repeat consecutive", Rules{MaxRepeatedSegment: 1}, "http://a.test/x/x", 0, ReasonRepeatedSegment},
		{"empty segments ignored", Rules{MaxRepeatedSegment: 1}, "http://a.test/a//b///c", 0, ""},
		{"repeat unchecked", Rules{MaxRepeatedSegment: -1}, "http://a.test/a/a/a/a/a/a", 0, ""},

		{"params at max", Rules{MaxQueryParams: 2}, "http://a.test/?a=1&b=2", 0, ""},
		{"params over", Rules{MaxQueryParams: 2}, "http://a.test/?a=1&b=2&c", 0, ReasonQueryParams},
		{"empty params ignored", Rules{MaxQueryParams: 2}, "http://a.test/?a=1&&&b=2&", 0, ""},
		{"params over default", Rules{}, "http://a.test/?" + strings.Repeat("p=1&", 33), 0, ReasonQueryParams},

		{"first failure wins", Rules{Domains: []string{"a.test"}, MaxDepth: 1}, "http://b.test/", 5, ReasonDomain},
	}
	for _, tt := range tests {
		u, err := url.Parse(tt.url)
		if err != nil {
			t.Fatalf("%s: url.Parse(%q): %v", tt.name, tt.url, err)
		}
		err = tt.rules.Check(u, tt.depth)
		var got Reason
		if err != nil {
			var rej *Rejection
			if !errors.As(err, &rej) {
				t.Errorf("%s: Check(%q, %d) error %T, want *Rejection", tt.name, tt.url, tt.depth, err)
				continue
			}
			got = rej.Reason
			if rej.URL != u.String() || rej.Detail == "" {
				t.Errorf("%s: Check(%q) = %+v, want URL %q and a detail", tt.name, tt.url, rej, u)
			}
		}
		if got != tt.want {
			t.Errorf("%s: Check(%q, %d) = %q (%v), want %q", tt.name, tt.url, tt.depth, got, err, tt.want)
		}
	}
}

// distinctSegments returns a path of n different segments.
func distinctSegments(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "/s%d", i)
	}
	return b.String()
}

func TestRejectionError(t *testing.T) {
	u, _ := url.Parse("http://b.test/")
	err := Rules{Domains: []string{"a.test"}}.Check(u, 0)
	want := `scope: reject "http://b.test/": domain: host "b.test" is not under an allowed domain`
	if err == nil || err.Error() != want {
		t.Errorf("Check(%q) error = %v, want %q", u, err, want)
	}
}

func TestWithDefaults(t *testing.T) {
	got := Rules{Domains: []string{"WWW.Bücher.Example.", "a.test"}, MaxDepth: 2, MaxQueryParams: -1, MaxPathSegments: 5}.WithDefaults()
	want := Rules{
		Domains:            []string{"www.xn--bcher-kva.example", "a.test"},
		MaxDepth:           2,
		MaxURLLength:       DefaultMaxURLLength,
		MaxPathSegments:    5,
		MaxRepeatedSegment: DefaultMaxRepeatedSegment,
		MaxQueryParams:     -1,
		MaxShapeRun:        DefaultMaxShapeRun,
		MaxURLsPerPattern:  DefaultMaxURLsPerPattern,
		SessionParams:      DefaultSessionParams,
	}
	if strings.Join(got.Domains, ",") != strings.Join(want.Domains, ",") {
		t.Errorf("WithDefaults().Domains = %q, want %q", got.Domains, want.Domains)
	}
	got.Domains, want.Domains = nil, nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("WithDefaults() = %+v, want %+v", got, want)
	}
	if z := (Rules{}).WithDefaults(); z.Domains != nil {
		t.Errorf("Rules{}.WithDefaults().Domains = %q, want nil", z.Domains)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		rules Rules
		want  []string // substrings of the error; none means valid
	}{
		{Rules{}, nil},
		{Rules{Domains: []string{"example.com", "bücher.example"}, MaxDepth: 3, MaxURLLength: -1}, nil},
		{Rules{MaxDepth: -1}, []string{"MaxDepth -1"}},
		{Rules{Domains: []string{"ok.test", "", "a/b", "."}}, []string{`Domains[1] ""`, `Domains[2] "a/b"`, `Domains[3] "."`}},
	}
	for _, tt := range tests {
		err := tt.rules.Validate()
		if len(tt.want) == 0 {
			if err != nil {
				t.Errorf("Validate(%+v) = %v, want nil", tt.rules, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("Validate(%+v) = nil, want %q", tt.rules, tt.want)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Validate(%+v) = %q, want it to contain %q", tt.rules, err, w)
			}
		}
	}
}
