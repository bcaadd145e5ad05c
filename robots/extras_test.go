package robots

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestExtras(t *testing.T) {
	body := "Content-Usage: train-ai=n\n" + // before any group: group -1
		"User-Agent: *\n" +
		"Allow: /\n" +
		"Disallow: /never/\n" +
		"Content-Usage: train-ai=n # site-wide\n" +
		"content-usage:/ai-ok/ train-ai=y\n" +
		"\n" +
		"User-Agent: ExampleBot\n" +
		"Content-Signal: search=yes, ai-train=no\n" +
		"Allow: /\n" +
		"X-Other: 1\n"
	r := Parse([]byte(body))
	want := []Extra{
		{Line: 1, Key: "Content-Usage", Value: "train-ai=n", Group: -1, Raw: "Content-Usage: train-ai=n"},
		{Line: 5, Key: "Content-Usage", Value: "train-ai=n", Group: 0, Raw: "Content-Usage: train-ai=n # site-wide"},
		{Line: 6, Key: "content-usage", Value: "/ai-ok/ train-ai=y", Group: 0, Raw: "content-usage:/ai-ok/ train-ai=y"},
		{Line: 9, Key: "Content-Signal", Value: "search=yes, ai-train=no", Group: 1, Raw: "Content-Signal: search=yes, ai-train=no"},
		{Line: 11, Key: "X-Other", Value: "1", Group: 1, Raw: "X-Other: 1"},
	}
	if got := r.Extras(); !reflect.DeepEqual(got, want) {
		t.Errorf("Extras() =\n%+v\nwant\n%+v", got, want)
	}
	if got := r.ExtrasFor("examplebot"); !reflect.DeepEqual(got, want[3:]) {
		t.Errorf("ExtrasFor(examplebot) = %+v, want %+v", got, want[3:])
	}
	if got := r.ExtrasFor("trawl"); !reflect.DeepEqual(got, want[1:3]) {
		t.Errorf("ExtrasFor(trawl) = %+v, want %+v", got, want[1:3])
	}
	if got := r.GroupAgents(1); !reflect.DeepEqual(got, []string{"ExampleBot"}) {
		t.Errorf("GroupAgents(1) = %q", got)
	}
	if got := r.GroupAgents(2); got != nil {
		t.Errorf("GroupAgents(2) = %q, want nil", got)
	}
	// Content-Usage and Content-Signal are read elsewhere: no warning;
	// other keys are still reported.
	if w := r.Warnings(); len(w) != 1 || !strings.Contains(w[0], `"X-Other"`) {
		t.Errorf("Warnings() = %q, want only the X-Other line", w)
	}
	if !r.Allowed("trawl", "/ai-ok/x") || r.Allowed("trawl", "/never/x") {
		t.Errorf("matching changed by extension lines")
	}
}

// TestExtrasDoNotSplitGroups: an extension line between user-agent lines
// leaves them one group (RFC 9309 2.2.4), and is that group's.
func TestExtrasDoNotSplitGroups(t *testing.T) {
	r := Parse([]byte("User-agent: a\nContent-Usage: train-ai=n\nUser-agent: b\nDisallow: /x\n"))
	if r.Allowed("b", "/x") || r.Allowed("a", "/x") {
		t.Errorf("a and b should share Disallow: /x")
	}
	for _, agent := range []string{"a", "b"} {
		if got := r.ExtrasFor(agent); len(got) != 1 || got[0].Value != "train-ai=n" {
			t.Errorf("ExtrasFor(%s) = %+v", agent, got)
		}
	}
}

func TestExtrasBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("user-agent: *\n")
	for i := range MaxExtras + 10 {
		fmt.Fprintf(&b, "content-usage: /p%d train-ai=n\n", i)
	}
	r := Parse([]byte(b.String()))
	if n := len(r.Extras()); n != MaxExtras {
		t.Errorf("kept %d extras, want %d", n, MaxExtras)
	}
	w := r.Warnings()
	if len(w) == 0 || !strings.Contains(w[len(w)-1], "10 extension lines") {
		t.Errorf("Warnings() end = %q", w)
	}
}

func TestPattern(t *testing.T) {
	for _, c := range []struct {
		pattern, path string
		want          bool
	}{
		{"", "/anything", true},
		{"/", "/", true},
		{"/", "", true},
		{"/ai-ok/", "/ai-ok/test", true},
		{"/ai-ok/", "/ai-ok", false},
		{"/a$", "/a", true},
		{"/a$", "/ab", false},
		{"/*.jpg", "/x/y.jpg?v=1", true},
		{"/*.jpg$", "/x/y.jpg?v=1", false},
		{"/directory-b/images/*.jpg", "/directory-b/images/a.jpg", true},
		{"/directory-b/images/*.jpg", "/directory-b/html/a.jpg", false},
		{"/%7Efoo", "/~foo/bar", true},         // unreserved escapes decoded
		{"/path/foo-%24", "/path/foo-$", true}, // a literal $ written escaped
		{"/Case", "/case", false},              // case-sensitive
		{"/a*b*c", "/axxbyyc", true},
		{"/a*b*c", "/axxcyyb", false},
	} {
		if got := CompilePattern(c.pattern).Match(c.path); got != c.want {
			t.Errorf("CompilePattern(%q).Match(%q) = %v, want %v", c.pattern, c.path, got, c.want)
		}
	}
	if n := CompilePattern("/%7e*$").Len(); n != len("/~*$") {
		t.Errorf("Len = %d", n)
	}
}

// FuzzExtras: extension lines never change matching. A body with extra
// lines inserted after each line answers every Allowed question as the
// body without them does, and every kept Extra is well formed.
func FuzzExtras(f *testing.F) {
	f.Add([]byte("user-agent: *\ndisallow: /x\ncontent-usage: /x train-ai=n\n"), "Content-Usage: train-ai=n", "trawl", "/x")
	f.Add([]byte("user-agent: a\nuser-agent: b\nallow: /\n"), "Content-Signal: search=yes, ai-train=no", "b", "/y")
	f.Add([]byte("User-agent: *\nDisallow: /*.pdf$\n"), "x-foo: bar # c", "", "/a.pdf")
	f.Fuzz(func(t *testing.T, body []byte, extra, agent, path string) {
		if len(body) > 4096 || strings.ContainsAny(extra, "\r\n#") || !strings.Contains(extra, ":") {
			return
		}
		key, _, _ := strings.Cut(extra, ":")
		if d := directiveOf(strings.TrimSpace(key)); d != dirUnknown || strings.TrimSpace(key) == "" {
			return
		}
		base := Parse(body)
		var withExtra strings.Builder
		for _, line := range strings.SplitAfter(string(body), "\n") {
			withExtra.WriteString(line)
			if strings.HasSuffix(line, "\n") && !strings.HasSuffix(line, "\r\n") {
				withExtra.WriteString(extra + "\n")
			}
		}
		r := Parse([]byte(withExtra.String()))
		if len(body) < MaxBytes/2 && r.Allowed(agent, path) != base.Allowed(agent, path) {
			t.Errorf("inserting %q changed Allowed(%q, %q)", extra, agent, path)
		}
		for _, e := range r.Extras() {
			if e.Line < 1 || e.Group < -1 || e.Group >= len(r.groups) || e.Key == "" {
				t.Errorf("bad extra %+v", e)
			}
		}
		if len(r.Extras()) > MaxExtras {
			t.Errorf("%d extras", len(r.Extras()))
		}
	})
}
