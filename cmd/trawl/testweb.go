package main

import (
	"flag"
	"io"

	"github.com/trawl-crawler/trawl/internal/cli/config"
	"github.com/trawl-crawler/trawl/internal/cli/testwebcmd"
)

func init() {
	register("testweb", "serve the synthetic web on loopback", leafCommand("testweb", testwebcmd.Help, nil, testwebFlags,
		func(o *testwebcmd.Options, args []string, _ map[string]config.Source, stdout, stderr io.Writer) int {
			if extraArgs("testweb", args, stderr, "") {
				return 2
			}
			return testwebcmd.Main(*o, stdout, stderr)
		}))
}

func testwebFlags(fs *flag.FlagSet, o *testwebcmd.Options) {
	w := &o.Web
	fs.Int64Var(&w.Seed, "seed", 1, "seed of the generated web")
	fs.IntVar(&w.Hosts, "hosts", 0, "number of hosts (0: the default, 300)")
	fs.BoolVar(&w.Hostile, "hostile", false, "add hostile hosts")
	fs.BoolVar(&w.NearDup, "near-dup", false, "serve the labelled near-duplicate web instead (trawl bench dedup's)")
	fs.IntVar(&w.Port, "port", 0, "port to serve on (0: pick a free one)")
	fs.StringVar(&o.Out, "out", "", "directory to write hosts (IP NAME lines) and seeds.txt into")
	fs.DurationVar(&o.For, "for", 0, "stop after this long (0: until SIGINT or SIGTERM)")
	fs.DurationVar(&w.Latency, "latency", 0, "least per-host latency before the first byte (0: the default, 2ms; negative: none)")
	fs.DurationVar(&w.MaxLatency, "max-latency", 0, "most per-host latency (0: the default, 20ms)")
	fs.IntVar(&w.BigPages, "big-pages", 0, "pages of each big host (0: the default, 40)")
	fs.IntVar(&w.MinPages, "min-pages", 0, "least pages of a small host (0: the default, 3)")
	fs.IntVar(&w.MaxPages, "max-pages", 0, "most pages of a small host (0: the default, 15)")
	fs.IntVar(&w.MinPageBytes, "min-page-bytes", 0, "least bytes of a regular HTML page (0: the default, 20 KiB)")
	fs.IntVar(&w.MaxPageBytes, "max-page-bytes", 0, "most bytes of a regular HTML page (0: the default, 60 KiB)")
	fs.IntVar(&w.ExtraLinks, "links", 0, "links added to each regular page, to pages of its host and others (0: none)")
	fs.BoolVar(&o.Serve.Gzip, "gzip", false, "send regular pages gzipped (Content-Encoding) to clients that accept it")
	fs.BoolVar(&o.Serve.Chunked, "chunked", false, "send regular pages in chunks, without a Content-Length")
}
