package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/trawl-crawler/trawl/internal/cli/config"
)

// leaves maps each subcommand that takes flags, by its path ("crawl",
// "crawls create"), to the function that registers its flags: the config
// file is checked against all of them, whichever subcommand runs.
var leaves = map[string]func(*flag.FlagSet){}

// leaf records a subcommand's flags; called from init in each
// subcommand's file. The subcommand registers its flags with the same
// function, so the two cannot drift apart.
func leaf(path string, flags func(*flag.FlagSet)) {
	if _, dup := leaves[path]; dup {
		panic("trawl: subcommand's flags registered twice: " + path)
	}
	leaves[path] = flags
}

// configEnv is the environment variable naming the config file.
const configEnv = "TRAWL_CONFIG"

// newFlagSet returns a subcommand's flag set, with --config, its errors
// and --help on stderr. help is the text before the flags: a usage line,
// what the subcommand does, and "Examples:".
func newFlagSet(path, help string, env map[string]string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(path, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.String("config", "", "config file holding defaults for this command's flags (env "+configEnv+")")
	fs.Usage = func() {
		fmt.Fprintln(stderr, strings.TrimRight(help, "\n"))
		fmt.Fprintln(stderr, "\nFlags:")
		fs.PrintDefaults()
		fmt.Fprintln(stderr, settingsHelp(path, env))
	}
	return fs
}

// settingsHelp is the end of every subcommand's --help: where its
// settings come from.
func settingsHelp(path string, env map[string]string) string {
	sections := sectionsOf(path)
	quoted := make([]string, len(sections))
	for i, s := range sections {
		quoted[i] = fmt.Sprintf("%q", s)
	}
	text := "Settings: a flag given on the command line wins over its environment variable"
	if len(env) > 0 {
		text += " (shown as \"env NAME\" above; only those flags have one)"
	}
	text += fmt.Sprintf(", which wins over the config file (--config FILE or %s; JSON, section %s), which wins over the default shown. See the README, \"Settings\".",
		configEnv, strings.Join(quoted, " then "))
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

// sectionsOf lists the config file's sections for a subcommand, the most
// general first: "crawls", "crawls create".
func sectionsOf(path string) []string {
	words := strings.Fields(path)
	out := make([]string, len(words))
	for i := range words {
		out[i] = strings.Join(words[:i+1], " ")
	}
	return out
}

// parseFlags parses args into fs and then layers on the environment (env
// maps a flag to its variable) and the config file: flag > environment >
// file > default (package config). fs is newFlagSet's. When the
// subcommand should stop here, ok is false and code is its exit code: 0
// after --help, 2 for a bad flag, variable or file (said on stderr).
func parseFlags(fs *flag.FlagSet, args []string, env map[string]string, stderr io.Writer) (src map[string]config.Source, code int, ok bool) {
	for name, v := range env {
		if f := fs.Lookup(name); f != nil {
			f.Usage += " (env " + v + ")"
		}
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, 0, false
		}
		return nil, 2, false
	}
	path := fs.Lookup("config").Value.String()
	if path == "" {
		path = os.Getenv(configEnv)
	}
	var file *config.File
	if path != "" {
		var err error
		if file, err = config.Load(path); err == nil {
			err = file.Check(leaves, "config")
		}
		if err != nil {
			fmt.Fprintf(stderr, "trawl %s: %v\n", fs.Name(), err)
			return nil, 2, false
		}
	}
	src, err := config.Apply(fs, config.Layers{Sections: sectionsOf(fs.Name()), File: file, Env: env})
	if err != nil {
		fmt.Fprintf(stderr, "trawl %s: %v\n", fs.Name(), err)
		return nil, 2, false
	}
	return src, 0, true
}

// parseInterleaved is parseFlags for a subcommand whose arguments are ids
// or URLs that never start with "-": flags may come after them too
// ("trawl crawls show 3 --json"). The arguments are returned in order.
func parseInterleaved(fs *flag.FlagSet, args []string, env map[string]string, stderr io.Writer) (pos []string, src map[string]config.Source, code int, ok bool) {
	var flags []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			pos = append(pos, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(a, "-") && a != "-":
			flags = append(flags, a)
			// A flag's value may be the next argument: keep it with the flag
			// unless the flag is boolean or written --name=value.
			name := strings.TrimLeft(a, "-")
			if f := fs.Lookup(name); f != nil && !strings.Contains(a, "=") && !isBool(f) && i+1 < len(args) {
				i++
				flags = append(flags, args[i])
			}
		default:
			pos = append(pos, a)
		}
	}
	src, code, ok = parseFlags(fs, flags, env, stderr)
	return pos, src, code, ok
}

func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}
