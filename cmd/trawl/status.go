package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/trawl-crawler/trawl/internal/cli/status"
)

func init() {
	register("status", "a running server's readiness and its crawls, on one screen", cmdStatus)
	leaf("status", func(fs *flag.FlagSet) { new(clientFlags).register(fs) })
}

const statusHelp = `usage: trawl status [flags]

Asks a running trawl serve whether it is ready and shows its crawls, live
ones first, with their key figures: state, pages, pages/s, queue, hosts
active, errors and time running. At most 20 crawls are shown;
trawl crawls list has them all. A member of a fleet is asked for the
fleet's members too, and each member's API for its share of every crawl:
the figures shown are the fleet's sums.

Examples:
  trawl status
  trawl status --server http://10.0.0.5:8420
  TRAWL_SERVER=http://crawler:8420 trawl status --json | jq '.crawls[].stats.fetched'`

func cmdStatus(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("status", statusHelp+"\n"+tokenHelp+"\n\nExit status: 0 the server is ready, 1 it could not be reached or failed,\n2 a usage error, 3 it answers but is still loading its state.", clientEnv, stderr)
	var cf clientFlags
	cf.register(fs)
	src, code, ok := parseFlags(fs, args, clientEnv, stderr)
	if !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "trawl status: unexpected arguments %q\n", fs.Args())
		return 2
	}
	c, origin, err := cf.open(src)
	if err != nil {
		fmt.Fprintf(stderr, "trawl status: %v\n", err)
		return 2
	}
	out, err := status.Gather(context.Background(), c)
	if err != nil {
		return cf.fail(stderr, "status", err, origin)
	}
	if cf.json {
		b, _ := json.MarshalIndent(out, "", "  ")
		fmt.Fprintln(stdout, string(b))
	} else {
		status.Print(stdout, out)
	}
	if !out.Ready {
		return 3
	}
	return 0
}
