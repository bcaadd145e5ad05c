package main

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/trawl-crawler/trawl/internal/cli/config"
)

// helpPaths are the arguments that reach every subcommand and group: each
// registered command, and each path with flags of its own.
func helpPaths() [][]string {
	var out [][]string
	for name := range commands {
		out = append(out, []string{name})
	}
	for path := range leaves {
		if words := strings.Fields(path); len(words) > 1 {
			out = append(out, words)
		}
	}
	slices.SortFunc(out, func(a, b []string) int { return strings.Compare(strings.Join(a, " "), strings.Join(b, " ")) })
	return out
}

// TestEverySubcommandHasHelp: `trawl PATH --help` exits 0 and shows
// examples, for every registered subcommand and every one under a group;
// those with flags also say where settings come from.
func TestEverySubcommandHasHelp(t *testing.T) {
	t.Setenv(configEnv, "")
	paths := helpPaths()
	if len(paths) < 15 {
		t.Fatalf("only %d subcommands found: %q", len(paths), paths)
	}
	for _, p := range paths {
		var out, errb bytes.Buffer
		code := run(append(slices.Clone(p), "--help"), &out, &errb)
		help := out.String() + errb.String()
		if code != 0 || !strings.Contains(help, "Examples:") {
			t.Errorf("trawl %s --help = exit %d, want 0 and \"Examples:\"; output:\n%s", strings.Join(p, " "), code, help)
			continue
		}
		if _, ok := leaves[strings.Join(p, " ")]; ok && !strings.Contains(help, "Settings: a flag given on the command line wins") {
			t.Errorf("trawl %s --help does not say where settings come from:\n%s", strings.Join(p, " "), help)
		}
	}
}

// closedServer is an http URL where nothing listens.
func closedServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := "http://" + ln.Addr().String()
	ln.Close()
	return u
}

// TestSettingsPrecedence runs a real subcommand with a server URL given in
// every combination of flag, environment and config file sections; the
// URL it tried to reach (nothing listens on any) says which won.
func TestSettingsPrecedence(t *testing.T) {
	flagS, envS, groupS, leafS := closedServer(t), closedServer(t), closedServer(t), closedServer(t)
	cfg := filepath.Join(t.TempDir(), "trawl.json")
	os.WriteFile(cfg, []byte(`{"crawls": {"server": "`+groupS+`"}, "crawls list": {"server": "`+leafS+`"}, "status": {"server": "`+groupS+`"}}`), 0o644)
	tests := []struct {
		name   string
		args   []string
		env    string
		config string // --config; "" none
		viaEnv bool   // the config file named by TRAWL_CONFIG instead
		want   string
	}{
		{"default", []string{"crawls", "list"}, "", "", false, DefaultServer},
		{"config file, leaf section", []string{"crawls", "list"}, "", cfg, false, leafS},
		{"config file, group section", []string{"crawls", "stats", "1"}, "", cfg, false, groupS},
		{"config file named by TRAWL_CONFIG", []string{"status"}, "", cfg, true, groupS},
		{"environment over the file", []string{"crawls", "list"}, envS, cfg, false, envS},
		{"flag over the environment and the file", []string{"crawls", "list", "--server", flagS}, envS, cfg, false, flagS},
		{"flag after the arguments", []string{"crawls", "stats", "1", "--server", flagS}, envS, cfg, false, flagS},
		{"flag over the environment", []string{"status", "--server", flagS}, envS, "", false, flagS},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("TRAWL_SERVER", tt.env)
			t.Setenv(configEnv, "")
			args := tt.args
			if tt.viaEnv {
				t.Setenv(configEnv, tt.config)
			} else if tt.config != "" {
				args = append(slices.Clone(args), "--config", tt.config)
			}
			var out, errb bytes.Buffer
			code := run(append(args, "--timeout", "2s"), &out, &errb)
			if code != 1 || !strings.Contains(errb.String(), "no trawl server answers at "+tt.want+":") {
				t.Errorf("trawl %q with TRAWL_SERVER=%q = exit %d, stderr:\n%s\nwant exit 1 trying %s", args, tt.env, code, errb.String(), tt.want)
			}
		})
	}
}

// TestConfigFileErrors: a bad config file stops any subcommand (exit 2)
// with the file, line and key, even when the mistake is in another
// subcommand's section.
func TestConfigFileErrors(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(configEnv, "")
	for _, tc := range []struct {
		name, text string
		args       []string
		want       string
	}{
		{"unknown key of another subcommand", "{\n\"serve\": {\"listne\": \"127.0.0.1:1\"}}", []string{"status"}, `trawl.json:2: serve.listne: unknown key`},
		{"unknown section", `{"crawl": {}, "craw": {}}`, []string{"crawls", "list"}, `unknown section "craw"`},
		{"bad value", "{\"crawl\": {\n\n\"min-delay\": \"fast\"}}", []string{"crawl", "--data", filepath.Join(dir, "data"), "http://a.test/"}, `trawl.json:3: crawl.min-delay: "fast": parse error (want a duration`},
		{"list for a single flag", `{"demo": {"hosts": [1, 2]}}`, []string{"demo"}, `demo.hosts: a list, but --hosts takes one value`},
		{"config in the config", `{"serve": {"config": "x.json"}}`, []string{"serve"}, `--config cannot be set in the config file`},
		{"malformed", `{"crawl": `, []string{"url", "normalize", "http://a.test/"}, `malformed JSON`},
	} {
		path := filepath.Join(dir, "trawl.json")
		os.WriteFile(path, []byte(tc.text), 0o644)
		var out, errb bytes.Buffer
		args := append([]string{tc.args[0]}, tc.args[1:]...)
		at := len(args) // flags go before a subcommand's arguments
		if args[0] == "crawl" || args[0] == "url" {
			at = len(args) - 1
		}
		args = slices.Insert(args, at, "--config", path)
		code := run(args, &out, &errb)
		if code != 2 || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%s: trawl %q = exit %d, stderr %q; want 2 and %q", tc.name, tc.args, code, errb.String(), tc.want)
		}
	}
	var out, errb bytes.Buffer
	if code := run([]string{"status", "--config", filepath.Join(dir, "missing.json")}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "missing.json") {
		t.Errorf("a missing config file: exit %d, stderr %q", code, errb.String())
	}
}

// TestConfigFileSetsACrawl: values of every kind reach a subcommand from
// the file: a duration, an integer, a list for a repeatable flag.
func TestConfigFileSetsACrawl(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "trawl.json")
	os.WriteFile(cfg, []byte(`{"crawl": {"min-delay": "3s", "max-pages": 7, "domain": ["a.test", "b.test"], "allow-net": ["10.0.0.0/8"]}}`), 0o644)
	f, err := config.Load(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Check(leaves, "config"); err != nil {
		t.Fatal(err)
	}
	var a crawlArgs
	fs := newFlagSet("crawl", crawlHelp, nodeEnv, &bytes.Buffer{})
	a.register(fs)
	t.Setenv("TRAWL_DATA", "/from/env")
	src, code, ok := parseFlags(fs, []string{"--config", cfg, "--max-pages", "9"}, nodeEnv, &bytes.Buffer{})
	if !ok {
		t.Fatalf("parseFlags: exit %d", code)
	}
	if a.minDelay.String() != "3s" || a.maxPages != 9 || strings.Join(a.domains, ",") != "a.test,b.test" ||
		a.data != "/from/env" || len(a.allowNets) != 1 {
		t.Errorf("crawl flags = %+v", a)
	}
	for flag, want := range map[string]config.Source{"min-delay": config.FromFile, "max-pages": config.FromFlag,
		"data": config.FromEnv, "concurrency": config.Default} {
		if src[flag] != want {
			t.Errorf("--%s from %v, want %v", flag, src[flag], want)
		}
	}
}

// TestServeTokenPrecedence: trawl serve's token is the first of
// --token-file, TRAWL_TOKEN_FILE, TRAWL_TOKEN and token-file in the config
// file (config.Apply has already put the first two, or the third, in
// --token-file).
func TestServeTokenPrecedence(t *testing.T) {
	dir := t.TempDir()
	flagFile, confFile := filepath.Join(dir, "flag"), filepath.Join(dir, "conf")
	os.WriteFile(flagFile, []byte("from-file-named-by-flag-or-env\n"), 0o600)
	os.WriteFile(confFile, []byte("from-config-file\n"), 0o600)
	t.Setenv("TRAWL_TOKEN_FILE", "") // Apply has read it already
	for _, tc := range []struct {
		path  string
		src   config.Source
		token string // TRAWL_TOKEN
		want  string
	}{
		{flagFile, config.FromFlag, "from-env", "from-file-named-by-flag-or-env"},
		{flagFile, config.FromEnv, "from-env", "from-file-named-by-flag-or-env"},
		{confFile, config.FromFile, "from-env", "from-env"},
		{confFile, config.FromFile, "", "from-config-file"},
		{"", config.Default, "from-env", "from-env"},
		{"", config.Default, "", ""},
	} {
		t.Setenv("TRAWL_TOKEN", tc.token)
		got, err := readToken(tokenFileAfterEnv(tc.path, tc.src))
		if got != tc.want || err != nil {
			t.Errorf("token-file %q from %v, TRAWL_TOKEN %q: token %q, %v; want %q", tc.path, tc.src, tc.token, got, err, tc.want)
		}
	}
}
