package main

import (
	"context"
	"io"

	"github.com/trawl-crawler/trawl/internal/cli/clientcmd"
	"github.com/trawl-crawler/trawl/internal/cli/config"
	"github.com/trawl-crawler/trawl/internal/cli/status"
)

func init() {
	register("status", "a running server's readiness and its crawls, on one screen", leafCommand("status", status.Help, clientEnv, clientFlags, func(o *clientcmd.Options, args []string, src map[string]config.Source, stdout, stderr io.Writer) int {
		if extraArgs("status", args, stderr, "") {
			return 2
		}
		o.TokenFileFromConfig = src["token-file"] == config.FromFile
		return status.Main(context.Background(), *o, stdout, stderr)
	}))
}
