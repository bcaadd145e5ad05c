package robots

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"os"
	"strings"
	"testing"
)

// conformanceCase is one case of testdata/robots_google.json or
// testdata/robots_google_spec_ctc.json (see testdata/README.md).
type conformanceCase struct {
	Name         string  `json:"name"`
	Robots       *string `json:"robots"`
	RobotsBase64 string  `json:"robots_base64"`
	Agent        string  `json:"agent"`
	URL          string  `json:"url"`
	Allowed      bool    `json:"allowed"`
	Divergence   string  `json:"divergence"`
}

// divergence is trawl's answer to one divergence code of the conformance
// README: where Google's parser and RFC 9309 part ways.
type divergence struct {
	// flip: trawl's result is the opposite of Google's `allowed`. Every
	// case with these codes was read one by one; in each, the RFC behaviour
	// is the opposite of Google's answer.
	flip bool
	// deliberate marks a kept Google leniency, i.e. a deliberate difference
	// from strict RFC 9309 parsing.
	deliberate bool
	why        string
}

var divergences = map[string]divergence{
	"robots-txt-implicitly-allowed": {flip: true,
		why: "RFC 9309 2.2.2: /robots.txt is implicitly allowed, whatever the rules say"},
	"figure4-unreserved-decoded": {flip: true,
		why: "RFC 9309 2.2.2 figure 4: %62%61%7A in a rule is baz once unreserved escapes are decoded, so the longer allow rule matches /foo/bar/baz"},
	"figure6-encoded-special": {flip: true,
		why: "RFC 9309 2.2.3 figure 6: %2A and %24 in a rule match a literal * and $"},
	"raw-non-ascii-url": {flip: true,
		why: "RFC 9309 2.2.2: the URL's raw UTF-8 is percent-encoded before matching, so Allow: /foo/bar/ツ (or its %E3%83%84 form) matches and wins"},
	"google-ua-value-up-to-first-space": {flip: true,
		why: "RFC 9309 2.2.1: the whole user-agent value is compared with the product token; \"Foo Bar\" does not select agent Foo (and does select agent \"Foo Bar\"), so a different group, or none, applies"},
	"google-ua-token-letters-only": {flip: true,
		why: "RFC 9309 2.2.1: the value is compared whole; \"AB42bot\" selects agent AB42bot, not AB, and \"barbarbot*\" does not select barbarbot"},
	"google-index-html": {flip: true,
		why: "Google extension: Allow: /x/index.html also allowing /x/ is not in RFC 9309; the longer matching rule is Disallow: /"},
	"google-line-length-limit": {flip: true,
		why: "Google cuts lines after 16,664 bytes; RFC 9309 has no line limit, so the full (non-matching) pattern is used"},
	"utf8-bom": {
		why: "a leading UTF-8 BOM is skipped (the RFC is silent); trawl agrees with Google here"},
	"google-partial-bom": {deliberate: true,
		why: "leniency kept: a partial BOM (EF or EF BB) at the start of the file is skipped like a full one; it can only make more rules apply"},
	"google-missing-colon-accepted": {deliberate: true,
		why: "leniency kept: \"disallow /\" without a colon is read as \"disallow: /\" (with a warning); strict RFC parsing would ignore the line and crawl more"},
}

func loadConformance(t *testing.T, file string) []conformanceCase {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var cases []conformanceCase
	if strings.HasPrefix(strings.TrimSpace(string(b)), "[") {
		err = json.Unmarshal(b, &cases)
	} else {
		var doc struct {
			Cases []conformanceCase `json:"cases"`
		}
		err = json.Unmarshal(b, &doc)
		cases = doc.Cases
	}
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return cases
}

// urlPathQuery extracts the raw path and query of an absolute URL string as
// a crawler would send them, keeping its bytes as they are.
func urlPathQuery(u string) string {
	if i := strings.IndexByte(u, '#'); i >= 0 {
		u = u[:i]
	}
	if i := strings.Index(u, "://"); i >= 0 {
		u = u[i+3:]
		j := strings.IndexAny(u, "/?")
		if j < 0 {
			return "/"
		}
		u = u[j:]
	}
	return u
}

func TestConformance(t *testing.T) {
	for _, file := range []string{"testdata/robots_google.json", "testdata/robots_google_spec_ctc.json"} {
		cases := loadConformance(t, file)
		var passed, deliberate, asGoogle, flipped int
		for _, c := range cases {
			var body []byte
			switch {
			case c.Robots != nil:
				body = []byte(*c.Robots)
			default:
				var err error
				if body, err = base64.StdEncoding.DecodeString(c.RobotsBase64); err != nil {
					t.Fatalf("%s: robots_base64: %v", c.Name, err)
				}
			}
			want := c.Allowed
			if c.Divergence != "" {
				d, ok := divergences[c.Divergence]
				if !ok {
					t.Errorf("%s: divergence %q not accounted for", c.Name, c.Divergence)
					continue
				}
				if d.flip {
					want = !want
					flipped++
				}
				if d.deliberate {
					deliberate++
				}
			}
			pq := urlPathQuery(c.URL)
			got := Parse(body).Allowed(c.Agent, pq)
			if got != want {
				t.Errorf("%s: Parse(%q).Allowed(%q, %q) = %v, want %v", c.Name, clip(string(body)), c.Agent, clip(pq), got, want)
				continue
			}
			if u, err := url.Parse(c.URL); err == nil {
				if got2 := Parse(body).AllowedURL(c.Agent, u); got2 != want {
					t.Errorf("%s: AllowedURL(%q, %q) = %v, want %v", c.Name, c.Agent, clip(c.URL), got2, want)
				}
			}
			if got == c.Allowed {
				asGoogle++
			}
			passed++
		}
		t.Logf("%s: %d cases, %d pass (%d agree with Google, %d RFC 9309 over Google), %d of them deliberate differences from strict RFC 9309",
			file, len(cases), passed, asGoogle, flipped, deliberate)
	}
}
