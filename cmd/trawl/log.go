package main

import (
	"context"
	"flag"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/trawl-crawler/trawl/crawllog"
	"github.com/trawl-crawler/trawl/internal/cli/config"
	"github.com/trawl-crawler/trawl/internal/cli/logcmd"
	"github.com/trawl-crawler/trawl/node"
)

func init() {
	register("log", "read the crawl log: every fetch and drop, filtered, followed or counted", leafCommand("log", logcmd.Help, logEnv, logFlags,
		func(o *logcmd.Options, args []string, _ map[string]config.Source, stdout, stderr io.Writer) int {
			if extraArgs("log", args, stderr, " (filters are flags: --host, --status ...)") {
				return 2
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			o.Now = time.Now
			return logcmd.Main(ctx, *o, stdout, stderr)
		}))
}

// logEnv: trawl log reads the data directory that crawl and serve write.
var logEnv = map[string]string{"data": "TRAWL_DATA"}

func logFlags(fs *flag.FlagSet, o *logcmd.Options) {
	fs.StringVar(&o.Data, "data", node.DefaultDataDir, "data directory whose logs/ to read, as given to trawl crawl or serve")
	fs.UintVar(&o.Job, "job", 0, "only this job's (crawl's) entries (0: every job)")
	fs.StringVar(&o.Host, "host", "", "only URLs on this `HOST` (case and port ignored)")
	fs.StringVar(&o.Status, "status", "", "only these statuses, comma-separated: a code (404), a class (5xx), error (the fetch failed or was cut) or dropped")
	fs.StringVar(&o.Dedup, "dedup", "", "only this dedup verdict: exact, near, not-modified, any or none")
	fs.StringVar(&o.Dropped, "dropped", "", "only URLs dropped for these reasons, comma-separated ("+strings.Join(crawllog.DropReasons, ", ")+"), or any")
	fs.StringVar(&o.Usage, "usage", "", "only pages whose site states something of the use of its content: any, denied (the crawl's --purpose), or a category=allow|deny pair (ai-train=deny), comma-separated")
	fs.StringVar(&o.Since, "since", "", "only entries from this time on: a `DURATION` ago (10m) or an RFC 3339 time")
	fs.BoolVar(&o.Follow, "f", false, "follow: keep printing entries as they are written (same as --follow)")
	fs.BoolVar(&o.Follow, "follow", false, "keep printing entries as they are written, until interrupted")
	fs.BoolVar(&o.JSON, "json", false, "print the entries as JSON lines, as the log holds them")
	fs.BoolVar(&o.Count, "count", false, "print the number of entries by status, error, dedup verdict and drop reason instead")
}
