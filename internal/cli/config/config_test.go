package config

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// multi is a repeatable flag, like cmd/trawl's.
type multi []string

func (m *multi) String() string       { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error   { *m = append(*m, v); return nil }
func (m *multi) IsRepeatable() bool   { return true }
func (m *multi) Get() any             { return []string(*m) }
func (m *multi) reset(v ...string)    { *m = v }
func (m multi) equal(w []string) bool { return strings.Join(m, "|") == strings.Join(w, "|") }

// settings are the flags of a pretend subcommand "crawls create".
type settings struct {
	server  string
	delay   time.Duration
	pages   int
	json    bool
	domains multi
}

func (s *settings) register(fs *flag.FlagSet) {
	fs.StringVar(&s.server, "server", "http://127.0.0.1:8420", "")
	fs.DurationVar(&s.delay, "min-delay", time.Second, "")
	fs.IntVar(&s.pages, "max-pages", 0, "")
	fs.BoolVar(&s.json, "json", false, "")
	fs.Var(&s.domains, "domain", "")
}

var testEnv = map[string]string{"server": "TRAWL_SERVER", "min-delay": "TRAWL_MIN_DELAY", "domain": "TRAWL_DOMAIN"}

// TestPrecedence: flag > environment > file (leaf section > group
// section) > default, per flag, each row one situation.
func TestPrecedence(t *testing.T) {
	const file = `{
  "crawls": {"server": "http://group:1", "max-pages": 7, "domain": ["g.test"]},
  "crawls create": {"server": "http://leaf:1", "min-delay": "3s", "json": true}
}`
	tests := []struct {
		name   string
		args   []string
		env    map[string]string
		noFile bool
		flag   string
		want   string
		src    Source
	}{
		{"default", nil, nil, true, "server", "http://127.0.0.1:8420", Default},
		{"default, file silent", nil, nil, false, "min-delay", "3s", FromFile},
		{"leaf section over group", nil, nil, false, "server", "http://leaf:1", FromFile},
		{"group section when the leaf is silent", nil, nil, false, "max-pages", "7", FromFile},
		{"file bool", nil, nil, false, "json", "true", FromFile},
		{"file list", nil, nil, false, "domain", "g.test", FromFile},
		{"environment over file", nil, map[string]string{"TRAWL_SERVER": "http://env:1"}, false, "server", "http://env:1", FromEnv},
		{"environment over default", nil, map[string]string{"TRAWL_SERVER": "http://env:1"}, true, "server", "http://env:1", FromEnv},
		{"empty environment is unset", nil, map[string]string{"TRAWL_SERVER": ""}, false, "server", "http://leaf:1", FromFile},
		{"environment list, comma-separated", nil, map[string]string{"TRAWL_DOMAIN": "a.test,b.test"}, false, "domain", "a.test,b.test", FromEnv},
		{"flag over environment and file", []string{"--server", "http://flag:1"}, map[string]string{"TRAWL_SERVER": "http://env:1"}, false, "server", "http://flag:1", FromFlag},
		{"flag over file", []string{"--min-delay", "5s"}, nil, false, "min-delay", "5s", FromFlag},
		{"flag set to its default still wins", []string{"--min-delay", "1s"}, nil, false, "min-delay", "1s", FromFlag},
		{"flag false over file true", []string{"--json=false"}, nil, false, "json", "false", FromFlag},
		{"repeated flag replaces the file's list", []string{"--domain", "f.test", "--domain", "h.test"}, nil, false, "domain", "f.test,h.test", FromFlag},
		{"no environment variable for the flag", nil, map[string]string{"TRAWL_MAX_PAGES": "9"}, false, "max-pages", "7", FromFile},
	}
	f, err := Parse("trawl.json", []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		var s settings
		fs := flag.NewFlagSet("crawls create", flag.ContinueOnError)
		s.register(fs)
		if err := fs.Parse(tt.args); err != nil {
			t.Fatal(err)
		}
		l := Layers{Sections: []string{"crawls", "crawls create"}, Env: testEnv,
			Getenv: func(k string) string { return tt.env[k] }}
		if !tt.noFile {
			l.File = f
		}
		src, err := Apply(fs, l)
		if err != nil {
			t.Errorf("%s: Apply: %v", tt.name, err)
			continue
		}
		if got := fs.Lookup(tt.flag).Value.String(); got != tt.want || src[tt.flag] != tt.src {
			t.Errorf("%s: --%s = %q from %v, want %q from %v", tt.name, tt.flag, got, src[tt.flag], tt.want, tt.src)
		}
	}
}

// TestApplyErrors: a value the flag refuses names its origin.
func TestApplyErrors(t *testing.T) {
	f, err := Parse("trawl.json", []byte("{\"crawls create\": {\n\"min-delay\": 100}}"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"file", nil, `config: trawl.json:2: crawls create.min-delay: "100": parse error (want a duration`},
		{"environment", map[string]string{"TRAWL_MIN_DELAY": "soon"}, `config: environment TRAWL_MIN_DELAY: "soon": parse error`},
	} {
		var s settings
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		s.register(fs)
		fs.Parse(nil)
		_, err := Apply(fs, Layers{Sections: []string{"crawls create"}, File: f, Env: testEnv, Getenv: func(k string) string { return tc.env[k] }})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Apply err = %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name, text, want string
	}{
		{"empty", ``, "trawl.json:1: malformed JSON"},
		{"not an object", `["crawl"]`, "trawl.json:1: want a JSON object of sections"},
		{"malformed", "{\n\"crawl\": {\n\"min-delay\": \"1s\",,\n}}", "trawl.json:3: malformed JSON"},
		{"unterminated", "{\"crawl\": {\n", "trawl.json:2: malformed JSON"},
		{"section not an object", `{"crawl": 5}`, `section "crawl": want an object`},
		{"duplicate section", "{\"crawl\": {},\n\"crawl\": {}}", `trawl.json:2: section "crawl" appears twice`},
		{"duplicate key", "{\"crawl\": {\"data\": \"a\",\n\n \"data\": \"b\"}}", "trawl.json:3: crawl.data appears twice"},
		{"null", `{"crawl": {"data": null}}`, "crawl.data: want a string, number, boolean or list, not null"},
		{"object value", `{"crawl": {"data": {"x": 1}}}`, "crawl.data: want a string, number, boolean or list, not an object"},
		{"list of objects", `{"crawl": {"domain": [{}]}}`, "crawl.domain: a list may hold strings, numbers and booleans only"},
		{"trailing data", `{} {}`, "more after the object"},
	} {
		_, err := Parse("trawl.json", []byte(tc.text))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Parse(%q) err = %v, want %q", tc.name, tc.text, err, tc.want)
		}
	}
}

// leaves are a pretend trawl's subcommands.
var leaves = map[string]func(*flag.FlagSet){
	"crawls create": func(fs *flag.FlagSet) { new(settings).register(fs); fs.String("config", "", "") },
	"crawls list": func(fs *flag.FlagSet) {
		fs.String("server", "", "")
		fs.Bool("json", false, "")
		fs.String("config", "", "")
	},
	"serve": func(fs *flag.FlagSet) { fs.String("listen", "", ""); fs.String("config", "", "") },
}

func TestCheck(t *testing.T) {
	good := `{
  "crawls": {"server": "http://x:1", "max-pages": 3},
  "crawls list": {"json": true},
  "serve": {"listen": "127.0.0.1:0"}
}`
	f, err := Parse("trawl.json", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Check(leaves, "config"); err != nil {
		t.Errorf("Check(a good file) = %v", err)
	}
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{"unknown section", "{\n\"crawsl\": {}}", []string{`trawl.json:2: unknown section "crawsl": want one of crawls, crawls create, crawls list, serve`}},
		{"partial word is no group", `{"craw": {}}`, []string{`unknown section "craw"`}},
		{"unknown key", "{\"serve\": {\n\"listne\": \"x\"}}", []string{`trawl.json:2: serve.listne: unknown key: "listne" is not a flag of trawl serve`}},
		{"key of a sibling only", `{"crawls list": {"max-pages": 3}}`, []string{`crawls list.max-pages: unknown key`}},
		{"bad value", "{\"crawls\": {\n\"max-pages\": \"many\"}}", []string{`trawl.json:2: crawls.max-pages: "many": parse error (want an integer)`}},
		{"list for a single-valued flag", `{"serve": {"listen": ["a", "b"]}}`, []string{`serve.listen: a list, but --listen takes one value`}},
		{"the config flag itself", `{"serve": {"config": "other.json"}}`, []string{`serve.config: --config cannot be set in the config file`}},
		{"every error, not the first", "{\"serve\": {\"a\": 1,\n\"b\": 2}}", []string{`trawl.json:1: serve.a: unknown key`, `trawl.json:2: serve.b: unknown key`}},
	} {
		f, err := Parse("trawl.json", []byte(tc.text))
		if err != nil {
			t.Errorf("%s: Parse: %v", tc.name, err)
			continue
		}
		err = f.Check(leaves, "config")
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: Check err = %v, want %q", tc.name, err, w)
			}
		}
	}
}

func TestLoad(t *testing.T) {
	p := filepath.Join(t.TempDir(), "trawl.json")
	if _, err := Load(p); err == nil || !strings.Contains(err.Error(), p) {
		t.Errorf("Load(missing) = %v, want an error naming %s", err, p)
	}
	os.WriteFile(p, []byte(`{"serve": {"listen": "127.0.0.1:9"}}`), 0o644)
	f, err := Load(p)
	if err != nil || f.Path() != p {
		t.Fatalf("Load = %v, %v", f, err)
	}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	listen := fs.String("listen", "", "")
	fs.Parse(nil)
	if _, err := Apply(fs, Layers{Sections: []string{"serve"}, File: f}); err != nil || *listen != "127.0.0.1:9" {
		t.Errorf("Apply = %v, listen %q", err, *listen)
	}
}
