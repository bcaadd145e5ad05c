package main

import "github.com/trawl-crawler/trawl/internal/cli/clientcmd"

// nodeGroup is `trawl node`: the state of a server's node as a whole.
var nodeGroup = &clientGroup{name: "node", about: "its node as a whole",
	summary: "show, pause and resume a running server's whole node",
	examples: `  trawl node show
  trawl node pause && trawl node resume`}

func init() {
	nodeGroup.commands = []clientCommand{
		{name: "show", summary: "whether the node is paused", nargs: 0, run: clientcmd.Node, help: `
Examples:
  trawl node show
  trawl node show --json`},
		{name: "pause", summary: "stop fetching for every crawl (fetches in flight finish); survives a restart", nargs: 0, run: clientcmd.PauseNode, help: `
Each crawl keeps its own state: one paused before stays paused after
trawl node resume.

Examples:
  trawl node pause
  TRAWL_TOKEN_FILE=/etc/trawl/token trawl node pause --server http://crawler:8420`},
		{name: "resume", summary: "fetch again after trawl node pause", nargs: 0, run: clientcmd.ResumeNode, help: `
Examples:
  trawl node resume`},
	}
	nodeGroup.register()
}
