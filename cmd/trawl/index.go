package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/trawl-crawler/trawl/internal/cli/config"
	"github.com/trawl-crawler/trawl/internal/cli/indexcmd"
)

func init() {
	register("index", "build a CDXJ index of WARC files", leafCommand("index", indexUsage, nil, func(fs *flag.FlagSet, o *indexcmd.Options) {
		fs.StringVar(&o.Out, "out", "", "write the index to `FILE` (replaced whole) instead of standard output")
		fs.StringVar(&o.Data, "data", "", "rewrite the per-file index (NAME.warc.gz.cdxj) of every finished WARC file in `DIR`/warc, read from the file")
	}, func(o *indexcmd.Options, args []string, _ map[string]config.Source, stdout, stderr io.Writer) int {
		switch o.Files = args; {
		case o.Data != "" && (len(args) > 0 || o.Out != ""):
			fmt.Fprint(stderr, "trawl index: --data takes no WARC files and no --out\n")
			return 2
		case o.Data == "" && len(args) == 0:
			fmt.Fprint(stderr, indexUsage)
			return 2
		}
		return indexcmd.Main(*o, stdout, stderr)
	}))
}

const indexUsage = `usage: trawl index [--out FILE] WARC...
       trawl index --data DIR

Reads each WARC file (.warc.gz with one gzip member per record, as trawl
writes them, or uncompressed) and prints a CDXJ index of them, sorted, as
pywb and warcio write it: one line "SURT TIMESTAMP {json}" per response,
revisit, resource or metadata record (not request or warcinfo records),
the JSON holding url, mime, status, digest, length, offset and filename
(the file's base name). Rebuilds the index from the WARC files alone.

A crawl keeps a per-file index beside each WARC file it finishes
(DATA/warc/NAME.warc.gz.cdxj, sorted; written as the file closes, or at
the next start for files a crash left without one). --data DIR rewrites
those of every finished WARC file in DIR/warc from the WARC files alone,
each through a temporary file renamed over the old index; a file that
cannot be read whole keeps its old index. Not while a crawl has DIR open.

A file that cannot be read whole is reported on stderr, naming it and the
offset of the bad record; the records before that offset are still
indexed (not with --data). Exit status: 0 if every file was read, 1 if
one could not be, 2 on a usage error.

Examples:
  trawl index data/warc/*.warc.gz > index.cdxj
  trawl index --out data/warc/index.cdxj data/warc/trawl-20240506070809-00000.warc.gz
  trawl index --data data
`
