package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
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
const configEnv = config.EnvVar

// leafCommand is the run of a subcommand path whose flags flags
// registers into an O: it records them with leaf, and each run parses
// them (parseFlags) into a new O and hands it, the arguments left and
// where each setting came from to run.
func leafCommand[O any](path, help string, env map[string]string, flags func(*flag.FlagSet, *O),
	run func(o *O, args []string, src map[string]config.Source, stdout, stderr io.Writer) int) func([]string, io.Writer, io.Writer) int {
	leaf(path, func(fs *flag.FlagSet) { flags(fs, new(O)) })
	return func(args []string, stdout, stderr io.Writer) int {
		fs := newFlagSet(path, help, env, stderr)
		o := new(O)
		flags(fs, o)
		src, code, ok := parseFlags(fs, args, env, stderr)
		if !ok {
			return code
		}
		return run(o, fs.Args(), src, stdout, stderr)
	}
}

// extraArgs says on stderr that a subcommand taking no arguments got
// some, and reports whether it did.
func extraArgs(path string, args []string, stderr io.Writer, hint string) bool {
	if len(args) > 0 {
		fmt.Fprintf(stderr, "trawl %s: unexpected arguments %q%s\n", path, args, hint)
	}
	return len(args) > 0
}

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
		fmt.Fprintln(stderr, config.Help(path, len(env) > 0))
	}
	return fs
}

// parseFlags parses args into fs and then layers on the environment (env
// maps a flag to its variable) and the config file: flag > environment >
// file > default (config.Settle). fs is newFlagSet's. When the
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
	src, err := config.Settle(fs, leaves, env)
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
