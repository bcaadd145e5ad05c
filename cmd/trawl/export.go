package main

import (
	"flag"
	"io"

	"github.com/trawl-crawler/trawl/internal/cli/config"
	"github.com/trawl-crawler/trawl/internal/cli/exportcmd"
	"github.com/trawl-crawler/trawl/node"
)

func init() {
	register("export", "package the archive as a WACZ file for replay tools", leafCommand("export", exportcmd.Help, nil, func(fs *flag.FlagSet, o *exportcmd.Options) {
		fs.StringVar(&o.WACZ, "wacz", "", "write the WACZ to `FILE` (ending in .wacz; required)")
		fs.StringVar(&o.Data, "data", node.DefaultDataDir, "data directory whose warc/ to export, as given to trawl crawl or serve")
		fs.UintVar(&o.Job, "job", 0, "only this crawl's records (its `ID`; 0: every crawl's)")
		fs.StringVar(&o.Title, "title", "", "the WACZ's title (default \"trawl crawl\")")
		fs.BoolVar(&o.Force, "force", false, "replace an existing FILE (only once the new one is complete)")
	}, func(o *exportcmd.Options, args []string, _ map[string]config.Source, stdout, stderr io.Writer) int {
		if extraArgs("export", args, stderr, " (give the output with --wacz FILE)") {
			return 2
		}
		return exportcmd.Main(*o, stdout, stderr)
	}))
}
