package main

import (
	"context"
	"io"

	"github.com/trawl-crawler/trawl/internal/cli/clientcmd"
	"github.com/trawl-crawler/trawl/internal/cli/config"
	"github.com/trawl-crawler/trawl/internal/cli/status"
)

func init() {
	register("status", "a running server's readiness and its crawls, on one screen", leafCommand("status",
		statusHelp+"\n"+tokenHelp+"\n\nExit status: 0 the server is ready, 1 it could not be reached or failed,\n2 a usage error, 3 it answers but is still loading its state.",
		clientEnv, clientFlags, func(o *clientcmd.Options, args []string, src map[string]config.Source, stdout, stderr io.Writer) int {
			if extraArgs("status", args, stderr, "") {
				return 2
			}
			o.TokenFileFromConfig = src["token-file"] == config.FromFile
			return status.Main(context.Background(), *o, stdout, stderr)
		}))
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
