package main

import (
	"context"
	"fmt"
	"io"

	"github.com/trawl-crawler/trawl/internal/cli/apiclient"
	"github.com/trawl-crawler/trawl/internal/cli/clientcmd"
)

// nodeGroup is `trawl node`: the state of a server's node as a whole.
var nodeGroup = &clientGroup{name: "node", about: "its node as a whole",
	summary: "show, pause and resume a running server's whole node",
	examples: `  trawl node show
  trawl node pause && trawl node resume`}

func init() {
	nodeGroup.commands = []clientCommand{
		{name: "show", summary: "whether the node is paused", nargs: 0, run: nodeChange((*apiclient.Client).Node), help: `
Examples:
  trawl node show
  trawl node show --json`},
		{name: "pause", summary: "stop fetching for every crawl (fetches in flight finish); survives a restart", nargs: 0, run: nodeChange((*apiclient.Client).PauseNode), help: `
Each crawl keeps its own state: one paused before stays paused after
trawl node resume.

Examples:
  trawl node pause
  TRAWL_TOKEN_FILE=/etc/trawl/token trawl node pause --server http://crawler:8420`},
		{name: "resume", summary: "fetch again after trawl node pause", nargs: 0, run: nodeChange((*apiclient.Client).ResumeNode), help: `
Examples:
  trawl node resume`},
	}
	nodeGroup.register()
}

// nodeChange runs a node call (show, pause, resume) and prints the node's
// state after it.
func nodeChange(do func(*apiclient.Client, context.Context) (apiclient.NodeState, error)) clientRun {
	return func(ctx context.Context, c *apiclient.Client, cf *clientFlags, _ []string, w io.Writer) error {
		s, err := do(c, ctx)
		if err != nil {
			return err
		}
		if cf.json {
			clientcmd.PrintJSON(w, s.Raw)
			return nil
		}
		if s.Paused {
			fmt.Fprintln(w, "node paused: no crawl is fetched (trawl node resume)")
		} else {
			fmt.Fprintln(w, "node running")
		}
		return nil
	}
}
