package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/trawl-crawler/trawl/internal/cli/config"
	"github.com/trawl-crawler/trawl/internal/cli/indexcmd"
)

func init() {
	register("index", "build a CDXJ index of WARC files", leafCommand("index", indexcmd.Help, nil, func(fs *flag.FlagSet, o *indexcmd.Options) {
		fs.StringVar(&o.Out, "out", "", "write the index to `FILE` (replaced whole) instead of standard output")
		fs.StringVar(&o.Data, "data", "", "rewrite the per-file index (NAME.warc.gz.cdxj) of every finished WARC file in `DIR`/warc, read from the file")
	}, func(o *indexcmd.Options, args []string, _ map[string]config.Source, stdout, stderr io.Writer) int {
		switch o.Files = args; {
		case o.Data != "" && (len(args) > 0 || o.Out != ""):
			fmt.Fprint(stderr, "trawl index: --data takes no WARC files and no --out\n")
			return 2
		case o.Data == "" && len(args) == 0:
			fmt.Fprint(stderr, indexcmd.Help)
			return 2
		}
		return indexcmd.Main(*o, stdout, stderr)
	}))
}
