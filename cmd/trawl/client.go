package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/trawl-crawler/trawl/internal/cli/apiclient"
	"github.com/trawl-crawler/trawl/internal/cli/clientcmd"
	"github.com/trawl-crawler/trawl/internal/cli/config"
	"github.com/trawl-crawler/trawl/server"
)

// The API's clients: `trawl status` (status.go), and the groups of
// clientcmd: `trawl crawls`, `trawl hosts` and `trawl node`, whose
// subcommands with flags of their own have them in crawls.go and
// hosts.go. Each parses its flags into clientcmd's Options and hands over
// to package clientcmd (status: package status).

// DefaultServer is the API the clients talk to unless told otherwise:
// where `trawl serve` listens by default.
const DefaultServer = "http://" + server.DefaultListen

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

// clientBinds make the runs of the client subcommands with flags of their
// own (beside clientFlags): each registers them into new values and
// returns the run that reads them.
var clientBinds = map[string]func(*flag.FlagSet) clientcmd.Run{"crawls create": createFlags, "crawls exclude": excludeFlags,
	"hosts list": hostsListFlags, "hosts policy": policyFlags}

func init() {
	for _, g := range []*clientcmd.Group{&clientcmd.CrawlsGroup, &clientcmd.HostsGroup, &clientcmd.NodeGroup, &clientcmd.FleetGroup} {
		register(g.Name, g.Summary, func(args []string, stdout, stderr io.Writer) int { return clientGroup(g, args, stdout, stderr) })
		for _, sc := range g.Commands {
			path := g.Name + " " + sc.Name
			leaf(path, func(fs *flag.FlagSet) { clientCommandFlags(path, sc, fs, new(clientcmd.Options)) })
		}
	}
}

// clientCommandFlags adds the subcommand's flags to fs, the clients' ones
// into o, and returns its run.
func clientCommandFlags(path string, sc clientcmd.Command, fs *flag.FlagSet, o *clientcmd.Options) clientcmd.Run {
	clientFlags(fs, o)
	if sc.Run != nil {
		return sc.Run
	}
	return clientBinds[path](fs)
}

// clientGroup runs `trawl GROUP args...`.
func clientGroup(g *clientcmd.Group, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, g.Help())
		return 2
	}
	if a := args[0]; a == "-h" || a == "--help" || a == "-help" || a == "help" {
		fmt.Fprint(stderr, g.Help())
		return 0
	}
	for _, sc := range g.Commands {
		if sc.Name == args[0] {
			return clientCommand(g.Name+" "+sc.Name, sc, args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "trawl %s: unknown command %q\n\n%s", g.Name, args[0], g.Help())
	return 2
}

// clientCommand parses a client subcommand's flags and arguments and
// hands over to clientcmd.Main; path is its name with its group's.
func clientCommand(path string, sc clientcmd.Command, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet(path, sc.Usage(path), clientEnv, stderr)
	var o clientcmd.Options
	run := clientCommandFlags(path, sc, fs, &o)
	pos, src, code, ok := parseInterleaved(fs, args, clientEnv, stderr)
	if !ok {
		return code
	}
	if sc.NArgs >= 0 && len(pos) != sc.NArgs {
		want := "no arguments"
		if sc.NArgs > 0 {
			want = sc.Args
		}
		fmt.Fprintf(stderr, "trawl %s: want %s, got %q (see --help)\n", path, want, pos)
		return 2
	}
	o.TokenFileFromConfig = src["token-file"] == config.FromFile
	return clientcmd.Main(context.Background(), o, path, run, pos, stdout, stderr)
}
