package config

import (
	"flag"
	"fmt"
	"os"
	"strings"
)

// EnvVar is the environment variable naming the config file when a
// subcommand's --config does not.
const EnvVar = "TRAWL_CONFIG"

// Sections lists the config file's sections for a subcommand's path, the
// most general first: "crawls", "crawls create".
func Sections(path string) []string {
	words := strings.Fields(path)
	out := make([]string, len(words))
	for i := range words {
		out[i] = strings.Join(words[:i+1], " ")
	}
	return out
}

// Settle layers the environment (env maps a flag to its variable) and the
// config file over fs's parsed command line, as Apply does, and returns
// each flag's source. fs is named by the subcommand's path and has a
// --config flag; the file is the one it names, or else EnvVar's, and is
// checked against every subcommand's flags (leaves, by path) first.
func Settle(fs *flag.FlagSet, leaves map[string]func(*flag.FlagSet), env map[string]string) (map[string]Source, error) {
	path := fs.Lookup("config").Value.String()
	if path == "" {
		path = os.Getenv(EnvVar)
	}
	var file *File
	if path != "" {
		var err error
		if file, err = Load(path); err == nil {
			err = file.Check(leaves, "config")
		}
		if err != nil {
			return nil, err
		}
	}
	return Apply(fs, Layers{Sections: Sections(fs.Name()), File: file, Env: env})
}

// Help is the end of a subcommand's --help: where its settings come
// from. hasEnv says some of its flags have an environment variable.
func Help(path string, hasEnv bool) string {
	sections := Sections(path)
	quoted := make([]string, len(sections))
	for i, s := range sections {
		quoted[i] = fmt.Sprintf("%q", s)
	}
	text := "Settings: a flag given on the command line wins over its environment variable"
	if hasEnv {
		text += " (shown as \"env NAME\" above; only those flags have one)"
	}
	text += fmt.Sprintf(", which wins over the config file (--config FILE or %s; JSON, section %s), which wins over the default shown. See the README, \"Settings\".",
		EnvVar, strings.Join(quoted, " then "))
	return "\n" + wrap(text, 76)
}

// wrap breaks text into lines of at most width bytes, between words.
func wrap(text string, width int) string {
	var b strings.Builder
	n := 0
	for _, w := range strings.Fields(text) {
		switch {
		case n == 0:
		case n+1+len(w) > width:
			b.WriteByte('\n')
			n = 0
		default:
			b.WriteByte(' ')
			n++
		}
		b.WriteString(w)
		n += len(w)
	}
	return b.String()
}
