package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/trawl-crawler/trawl/internal/cli/apiclient"
	"github.com/trawl-crawler/trawl/internal/cli/clientcmd"
	"github.com/trawl-crawler/trawl/internal/cli/config"
)

// The API's clients: `trawl status` (status.go), and the groups of
// clientCommand: `trawl crawls` (crawls.go), `trawl hosts` (hosts.go) and
// `trawl node` (node.go). Each parses its flags into clientcmd's Options
// and hands over to package clientcmd (status: package status).

// DefaultServer is the API the clients talk to unless told otherwise:
// where `trawl serve` listens by default.
const DefaultServer = "http://" + DefaultListen

// clientEnv are the clients' environment variables. TRAWL_DATA is the
// server's, read only for its api.token; TRAWL_TOKEN (no flag) holds the
// token itself.
var clientEnv = map[string]string{"server": "TRAWL_SERVER", "token-file": "TRAWL_TOKEN_FILE", "data": "TRAWL_DATA"}

// clientFlags registers the flags every client subcommand takes.
func clientFlags(fs *flag.FlagSet, o *clientcmd.Options) {
	fs.StringVar(&o.Server, "server", DefaultServer, "URL of the trawl serve to talk to")
	fs.StringVar(&o.TokenFile, "token-file", "", "file holding the API token, which changes need (or the token itself in TRAWL_TOKEN)")
	fs.StringVar(&o.Data, "data", "", "the server's data directory: its api.token is the token if none is given otherwise (default: ./trawl-data, for a --server on loopback)")
	fs.DurationVar(&o.Timeout, "timeout", apiclient.DefaultTimeout, "give up a call to the server after this long")
	fs.BoolVar(&o.JSON, "json", false, "print the API's JSON answer instead of text")
}

// tokenHelp says where the clients find the token; every client's --help
// ends with it.
const tokenHelp = `
The token (changes need it; reads do not) is the first of: --token-file or
TRAWL_TOKEN_FILE; TRAWL_TOKEN; token-file in the config file; DATA/api.token
with DATA from --data, TRAWL_DATA or the config file; ./trawl-data/api.token
if --server is on loopback (where trawl serve writes it when run there
without a token).`

// clientExitHelp is the exit statuses of the clients but status.
const clientExitHelp = `
Exit status: 0 done, 1 the server refused or could not be reached, 2 a
usage error.`

// clientGroup is a command whose subcommands are calls to a running
// server. Each subcommand is a leaf with clientFlags and its own.
type clientGroup struct {
	name, summary string
	about         string // what its subcommands are about, for its --help: "its crawls"
	examples      string // its --help's examples, lines of "  trawl ..."
	commands      []clientCommand
}

// clientCommand is one subcommand of a clientGroup.
type clientCommand struct {
	name, args, summary, help string
	nargs                     int // arguments wanted; -1: any number
	run                       clientcmd.Run
	// bind, if set, makes a subcommand with flags of its own (beside
	// clientFlags): it registers them into new values and returns the run
	// that reads them.
	bind func(*flag.FlagSet) clientcmd.Run
}

// register registers the group and its subcommands' flags; called from
// init.
func (g *clientGroup) register() {
	register(g.name, g.summary, g.main)
	for _, sc := range g.commands {
		leaf(g.name+" "+sc.name, func(fs *flag.FlagSet) { sc.flags(fs, new(clientcmd.Options)) })
	}
}

// flags adds the subcommand's flags to fs, the clients' ones into o, and
// returns its run.
func (sc clientCommand) flags(fs *flag.FlagSet, o *clientcmd.Options) clientcmd.Run {
	clientFlags(fs, o)
	if sc.bind == nil {
		return sc.run
	}
	return sc.bind(fs)
}

// help is the group's --help.
func (g *clientGroup) help() string {
	var b strings.Builder
	fmt.Fprintf(&b, "usage: trawl %s COMMAND [flags] [args]\n\nTalks to a running trawl serve (--server) about %s.\n\nCommands:\n", g.name, g.about)
	example := "" // a subcommand whose own section is worth showing
	for _, sc := range g.commands {
		fmt.Fprintf(&b, "  %-8s %s\n", sc.name, sc.summary)
		if example == "" && sc.bind != nil {
			example = sc.name
		}
	}
	if example == "" {
		example = g.commands[0].name
	}
	fmt.Fprintf(&b, `
Run 'trawl %[1]s COMMAND --help' for its flags. A config file section
%[1]q holds defaults for all of them (e.g. "server"), "%[1]s %[2]s"
for one.

Examples:
%[3]s
`, g.name, example, strings.TrimRight(g.examples, "\n"))
	return b.String()
}

// main runs `trawl GROUP args...`.
func (g *clientGroup) main(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, g.help())
		return 2
	}
	if a := args[0]; a == "-h" || a == "--help" || a == "-help" || a == "help" {
		fmt.Fprint(stderr, g.help())
		return 0
	}
	for _, sc := range g.commands {
		if sc.name == args[0] {
			return sc.main(g.name+" "+sc.name, args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "trawl %s: unknown command %q\n\n%s", g.name, args[0], g.help())
	return 2
}

// main parses the subcommand's flags and arguments and hands over to
// clientcmd.Main; path is its name with its group's.
func (sc clientCommand) main(path string, args []string, stdout, stderr io.Writer) int {
	help := fmt.Sprintf("usage: trawl %s [flags] %s\n\n%s.\n%s\n%s\n%s", path, sc.args,
		strings.ToUpper(sc.summary[:1])+sc.summary[1:], sc.help, tokenHelp, clientExitHelp)
	fs := newFlagSet(path, help, clientEnv, stderr)
	var o clientcmd.Options
	run := sc.flags(fs, &o)
	pos, src, code, ok := parseInterleaved(fs, args, clientEnv, stderr)
	if !ok {
		return code
	}
	if sc.nargs >= 0 && len(pos) != sc.nargs {
		want := "no arguments"
		if sc.nargs > 0 {
			want = sc.args
		}
		fmt.Fprintf(stderr, "trawl %s: want %s, got %q (see --help)\n", path, want, pos)
		return 2
	}
	o.TokenFileFromConfig = src["token-file"] == config.FromFile
	return clientcmd.Main(context.Background(), o, path, run, pos, stdout, stderr)
}
