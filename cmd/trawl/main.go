// Command trawl is a polite, durable web crawler.
//
// main is thin: each subcommand lives in its own file, registers itself in
// init, parses its flags into a component's Options and hands over to a
// tested package. Subcommands write to the writers they are given and return
// an exit code, so tests run them in-process.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"time"

	"github.com/trawl-crawler/trawl/internal/memlimit"
)

// command is one subcommand: run gets the arguments after its name.
type command struct {
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
}

var commands = map[string]command{}

// register adds a subcommand; called from init in each subcommand's file.
func register(name, summary string, run func(args []string, stdout, stderr io.Writer) int) {
	if _, dup := commands[name]; dup {
		panic("trawl: subcommand registered twice: " + name)
	}
	commands[name] = command{summary: summary, run: run}
}

func main() {
	// The Go heap's soft limit follows its live heap from a floor of
	// 768 MiB, up to a share of the memory the process may use, unless
	// GOMEMLIMIT is set (package memlimit).
	go memlimit.Keep(context.Background(), time.Second)
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run dispatches args to a subcommand and returns the process exit code.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 1 && args[0] == "help" { // trawl help COMMAND...
		return run(append(args[1:], "--help"), stdout, stderr)
	}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "trawl: unknown command %q\n\n", args[0])
		usage(stderr)
		return 2
	}
	return c.run(args[1:], stdout, stderr)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: trawl COMMAND [flags] [args]")
	fmt.Fprintln(w, "\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'trawl COMMAND --help' (or 'trawl help COMMAND') for a command's flags and examples.")
	fmt.Fprintln(w, "Settings: a flag wins over its environment variable, which wins over the config file")
	fmt.Fprintln(w, "(--config FILE or "+configEnv+"), which wins over the default. See the README, \"Settings\".")
}
