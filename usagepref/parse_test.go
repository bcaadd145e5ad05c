package usagepref

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/trawl-crawler/trawl/links"
)

func TestParseUsage(t *testing.T) {
	for _, c := range []struct {
		in    string
		valid bool
		prefs map[string]Pref
	}{
		{"train-ai=n", true, map[string]Pref{"train-ai": Deny}},
		{"train-ai=y, search=n", true, map[string]Pref{"train-ai": Allow, "search": Deny}},
		{"  train-ai=y,search=n", true, map[string]Pref{"train-ai": Allow, "search": Deny}},
		{"", true, nil},
		// vocab-07 6.5.1: the last value of a key applies; non-tokens
		// are unknown.
		{`train-ai=y, train-ai, search=n, search="n"`, true, nil},
		{`train-ai;allow=n, train-ai=y`, true, map[string]Pref{"train-ai": Allow}},
		{`train-ai;has;parameters="?"`, true, nil},
		{"train-ai=N", true, nil},   // a token, but not n
		{"train-ai=yes", true, nil}, // a token, but not y
		{"train-ai=(y n), search=n", true, map[string]Pref{"search": Deny}},
		{"train-ai=1, search=?0, x=:AQ==:, d=@1, s=%\"caf%c3%a9\", n=-1.5", true, nil},
		{"Train-AI=n", false, nil}, // keys are lower case
		{"train-ai=n,", false, nil},
		{"train-ai=n search=y", false, nil},
		{"train-ai=\"open", false, nil},
		{"train-ai=1.", false, nil},
		{"train-ai=1234567890123456", false, nil},
		{"s=%\"%ff\"", false, nil}, // not UTF-8
		{"train-ai=n\t", true, map[string]Pref{"train-ai": Deny}},
	} {
		u := ParseUsage(c.in)
		if u.Valid != c.valid || !reflect.DeepEqual(u.Prefs, c.prefs) {
			t.Errorf("ParseUsage(%q) = %+v, want valid %v prefs %v", c.in, u, c.valid, c.prefs)
		}
	}
}

func TestParseUsageRule(t *testing.T) {
	for _, c := range []struct{ in, path, pref string }{
		{"train-ai=n", "", "train-ai=n"},
		{"/ai-ok/ train-ai=y", "/ai-ok/", "train-ai=y"},
		{"/ai-ok/\t train-ai=y ", "/ai-ok/", "train-ai=y"},
		{"/only-path", "/only-path", ""},
		{"/", "/", ""},
	} {
		r := ParseUsageRule(c.in)
		if r.Path != c.path || !reflect.DeepEqual(r.Usage, ParseUsage(c.pref)) {
			t.Errorf("ParseUsageRule(%q) = %+v, want path %q, usage of %q", c.in, r, c.path, c.pref)
		}
	}
}

func TestParseContentSignal(t *testing.T) {
	for _, c := range []struct {
		in      string
		prefs   map[string]Pref
		invalid []string
	}{
		{"search=yes, ai-train=no", map[string]Pref{"search": Allow, "ai-train": Deny}, nil},
		{"ai-train=no, search=yes, ai-input=yes", map[string]Pref{"search": Allow, "ai-train": Deny, "ai-input": Allow}, nil},
		{"Search = YES", map[string]Pref{"search": Allow}, nil},
		{"ai-train=yes, ai-train=no", map[string]Pref{"ai-train": Deny}, nil},
		{"search, =yes, ai-input=", nil, []string{"search", "=yes", "ai-input="}},
		{"", nil, nil},
	} {
		cs := ParseContentSignal(c.in)
		if !reflect.DeepEqual(cs.Prefs, c.prefs) || !reflect.DeepEqual(cs.Invalid, c.invalid) {
			t.Errorf("ParseContentSignal(%q) = %+v, want %v %q", c.in, cs, c.prefs, c.invalid)
		}
	}
}

func TestFlags(t *testing.T) {
	for _, c := range []struct {
		header, agent string
		want          RobotsFlags
	}{
		{"noindex, nofollow", "trawl", RobotsFlags{NoIndex: true, NoFollow: true}},
		{"none", "trawl", RobotsFlags{NoIndex: true, NoFollow: true}},
		{"googlebot: noindex", "trawl", RobotsFlags{}},
		{"TRAWL: noarchive, noai", "trawl", RobotsFlags{NoArchive: true, NoAI: true}},
		{"noimageai, otherbot: noai", "trawl", RobotsFlags{NoImageAI: true}},
		{"max-snippet: 20, nosnippet", "trawl", RobotsFlags{NoSnippet: true}},
		{"MJ12bot: noindex", "trawl", RobotsFlags{}}, // not a product token: ignored
		{"noindex nofollow", "", RobotsFlags{NoIndex: true, NoFollow: true}},
	} {
		if got := FlagsFor(ParseXRobotsTag(c.header), c.agent); got != c.want {
			t.Errorf("FlagsFor(ParseXRobotsTag(%q), %q) = %+v, want %+v", c.header, c.agent, got, c.want)
		}
	}
	if got := FlagsFor(ParseRobotsMeta("Trawl", "noai max-snippet:5"), "trawl"); got != (RobotsFlags{NoAI: true}) {
		t.Errorf("meta flags = %+v", got)
	}
	if got := ParseRobotsMeta("robots", "max-snippet:5"); !reflect.DeepEqual(got, []RobotsDirective{{Name: "max-snippet", Value: "5"}}) {
		t.Errorf("ParseRobotsMeta valued = %+v", got)
	}
}

func TestTDMRep(t *testing.T) {
	f := ParseTDMRep([]byte(`[
	  {"location": "/directory-a/", "tdm-reservation": 1},
	  {"location": "/directory-b/html/", "tdm-reservation": 1, "tdm-policy": "https://provider.test/policy.json"},
	  {"location": "/directory-b/images/*.jpg", "tdm-reservation": 0},
	  {"location": "/exact$", "tdm-reservation": "1"},
	  {"location": null, "tdm-reservation": 1},
	  "not an object",
	  {"location": "/", "tdm-reservation": 1}
	]`))
	if f.Error != "" || len(f.Rules) != 7 {
		t.Fatalf("ParseTDMRep: %+v", f)
	}
	for _, c := range []struct {
		path  string
		index int // -1: no match
		res   *int
	}{
		{"/directory-a/x.pdf", 0, ptr(1)},
		{"/directory-b/html/p.html", 1, ptr(1)},
		{"/directory-b/images/a.jpg", 2, ptr(0)},
		{"/directory-b/images/a.png", 6, ptr(1)},
		{"/exact", 3, nil}, // "1" is a string: a protocol error, unset
		{"/exactly", 6, ptr(1)},
		{"/Directory-a/", 6, ptr(1)}, // case-sensitive
	} {
		r, ok := f.Match(c.path)
		if c.index < 0 {
			if ok {
				t.Errorf("Match(%q) = rule %d, want none", c.path, r.Index)
			}
			continue
		}
		if !ok || r.Index != c.index || !reflect.DeepEqual(r.Reservation, c.res) {
			t.Errorf("Match(%q) = rule %d (%v), %v; want rule %d", c.path, r.Index, r.Reservation, ok, c.index)
		}
	}
	if f.Rules[4].Error == "" || f.Rules[5].Error == "" {
		t.Errorf("bad rules have no error: %+v %+v", f.Rules[4], f.Rules[5])
	}
	for _, body := range []string{`{"location": "/"}`, `[`, ``, strings.Repeat(" ", MaxTDMRepBytes+1)} {
		if f := ParseTDMRep([]byte(body)); f.Error == "" || len(f.Rules) != 0 {
			t.Errorf("ParseTDMRep(%.20q) = %+v, want an error", body, f)
		}
	}
	var many strings.Builder
	many.WriteString("[")
	for i := range MaxTDMRules + 5 {
		if i > 0 {
			many.WriteString(",")
		}
		many.WriteString(`{"location":"/x","tdm-reservation":1}`)
	}
	many.WriteString("]")
	if f := ParseTDMRep([]byte(many.String())); len(f.Rules) != MaxTDMRules || f.Dropped != 5 {
		t.Errorf("len(Rules), Dropped = %d, %d", len(f.Rules), f.Dropped)
	}
	var nilFile *TDMRep
	if _, ok := nilFile.Match("/"); ok {
		t.Errorf("nil TDMRep matched")
	}
}

func ptr(n int) *int { return &n }

func TestPrefJSON(t *testing.T) {
	for _, p := range []Pref{Unknown, Allow, Deny} {
		b, _ := json.Marshal(p)
		var back Pref
		if err := json.Unmarshal(b, &back); err != nil || back != p {
			t.Errorf("Pref %v round trip: %s, %v, %v", p, b, back, err)
		}
	}
	var p Pref
	if err := json.Unmarshal([]byte(`"maybe"`), &p); err == nil {
		t.Errorf("Unmarshal(maybe) succeeded")
	}
}

func TestGatherBounds(t *testing.T) {
	in := Input{Agent: "trawl", PathQuery: "/"}
	in.Header = map[string][]string{}
	for range MaxHeaderValues + 4 {
		in.Header.Add("X-Robots-Tag", strings.Repeat("noindex ", MaxValueBytes))
	}
	for range MaxSignals {
		in.Metas = append(in.Metas, links.Meta{Name: "robots", Content: "noarchive"})
	}
	p := Gather(in)
	if len(p.Signals) != MaxSignals || p.Dropped != 4+MaxHeaderValues {
		t.Errorf("len(Signals), Dropped = %d, %d", len(p.Signals), p.Dropped)
	}
	for _, s := range p.Signals {
		if len(s.Value) > MaxValueBytes || len(s.Robots) > maxDirectives {
			t.Fatalf("signal over its bounds: %d bytes, %d directives", len(s.Value), len(s.Robots))
		}
	}
	if p.Summary.Search != Deny || p.Summary.Archive != Deny {
		t.Errorf("Summary = %+v", p.Summary)
	}
}

// FuzzParseUsage: no panic; a valid statement's preferences are y or n
// tokens of lower-case keys; parsing is deterministic.
func FuzzParseUsage(f *testing.F) {
	for _, s := range []string{"train-ai=n", "/ai-ok/ train-ai=y, search=n", `a=(1 "x" :AQ==:);p=?1, b=%"%c3%a9"`, "train-ai=y, train-ai", "*=@-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r := ParseUsageRule(s)
		u := ParseUsage(s)
		if !reflect.DeepEqual(u, ParseUsage(s)) {
			t.Fatalf("ParseUsage(%q) not deterministic", s)
		}
		for _, x := range []Usage{u, r.Usage} {
			if !x.Valid && (x.Error == "" || x.Prefs != nil) {
				t.Errorf("invalid usage %+v", x)
			}
			for k, p := range x.Prefs {
				if p != Allow && p != Deny || k == "" || k[0] != '*' && (k[0] < 'a' || k[0] > 'z') {
					t.Errorf("ParseUsage(%q): %q = %v", s, k, p)
				}
			}
		}
		if r.Path != "" && (r.Path[0] != '/' || strings.ContainsAny(r.Path, " \t")) {
			t.Errorf("ParseUsageRule(%q).Path = %q", s, r.Path)
		}
	})
}

// FuzzParseContentSignal: no panic, bounded, only allow or deny recorded.
func FuzzParseContentSignal(f *testing.F) {
	for _, s := range []string{"search=yes, ai-train=no", "ai-input=YES,,x", "=,=,=", "a=no,a=yes"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cs := ParseContentSignal(s)
		if len(cs.Prefs)+len(cs.Invalid) > maxSignalItems {
			t.Errorf("ParseContentSignal(%q): %d items", s, len(cs.Prefs)+len(cs.Invalid))
		}
		for k, p := range cs.Prefs {
			if p != Allow && p != Deny || k != asciiLower(k) {
				t.Errorf("ParseContentSignal(%q): %q = %v", s, k, p)
			}
		}
	})
}

// FuzzXRobotsTag: ParseXRobotsTag and FlagsFor read noindex and nofollow
// exactly as links.XRobotsTag does, for any agent.
func FuzzXRobotsTag(f *testing.F) {
	for _, s := range []string{"noindex, nofollow", "googlebot: noindex, trawl: none", "unavailable_after: 25 Jun 2010 15:00:00 PST", "max-snippet: 20, noai", "trawl:noindex\tnofollow", "MJ12bot: noindex, noarchive"} {
		f.Add(s, "trawl")
	}
	f.Fuzz(func(t *testing.T, v, agent string) {
		ds := ParseXRobotsTag(v)
		if len(ds) > maxDirectives {
			t.Fatalf("%d directives", len(ds))
		}
		if len(ds) == maxDirectives {
			return // links has no cap
		}
		got := FlagsFor(ds, agent)
		ni, nf := links.XRobotsTag([]string{v}, agent)
		if got.NoIndex != ni || got.NoFollow != nf {
			t.Errorf("FlagsFor(ParseXRobotsTag(%q), %q) = %+v, links.XRobotsTag says noindex %v nofollow %v", v, agent, got, ni, nf)
		}
		for _, d := range ds {
			if d.Name == "" || d.Name != asciiLower(d.Name) {
				t.Errorf("directive %+v", d)
			}
		}
		_ = ParseRobotsMeta(agent, v)
	})
}

// FuzzTDMRep: no panic, bounded; a match is the first valid rule that
// matches; the JSON form of the file marshals.
func FuzzTDMRep(f *testing.F) {
	f.Add([]byte(`[{"location":"/","tdm-reservation":1}]`), "/x")
	f.Add([]byte(`[{"location":"/a/*.jpg$","tdm-reservation":0,"tdm-policy":"https://p.test/"},{"location":"/","tdm-reservation":1}]`), "/a/b.jpg")
	f.Add([]byte(`[{"location":null},1,"x",[],{"tdm-reservation":"1"}]`), "")
	f.Fuzz(func(t *testing.T, body []byte, path string) {
		file := ParseTDMRep(body)
		if len(file.Rules) > MaxTDMRules {
			t.Fatalf("%d rules", len(file.Rules))
		}
		r, ok := file.Match(path)
		if ok {
			for _, earlier := range file.Rules[:r.Index] {
				if earlier.valid && earlier.pattern.Match(path) {
					t.Errorf("rule %d matched before rule %d", earlier.Index, r.Index)
				}
			}
			if r.Reservation != nil && *r.Reservation != 0 && *r.Reservation != 1 {
				t.Errorf("reservation %d", *r.Reservation)
			}
		}
		if _, err := json.Marshal(file); err != nil {
			t.Errorf("marshal: %v", err)
		}
	})
}

// FuzzGather: whatever the inputs, Gather stays in its bounds, its JSON
// form is valid UTF-8 JSON, and it reads back to itself.
func FuzzGather(f *testing.F) {
	f.Add([]byte("user-agent: *\ncontent-usage: /a train-ai=n\ncontent-signal: search=yes\n"), "noai", "train-ai=y", "1", []byte(`[{"location":"/","tdm-reservation":1}]`), "/a/b")
	f.Fuzz(func(t *testing.T, robotsTxt []byte, xrt, cu, tdm string, tdmrep []byte, path string) {
		in := Input{Agent: "trawl", PathQuery: path, Header: map[string][]string{
			"X-Robots-Tag": {xrt}, "Content-Usage": {cu}, "Tdm-Reservation": {tdm},
		}}
		if len(robotsTxt) > 0 {
			in.Robots = robotsParse(robotsTxt)
		}
		if len(tdmrep) > 0 {
			in.TDMRep = ParseTDMRep(tdmrep)
		}
		p := Gather(in)
		if len(p.Signals) > MaxSignals {
			t.Fatalf("%d signals", len(p.Signals))
		}
		b, err := json.Marshal(p)
		if err != nil || !utf8.Valid(b) {
			t.Fatalf("marshal: %v", err)
		}
		var back Preferences
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("unmarshal: %v", err)
		}
	})
}
