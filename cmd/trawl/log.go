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
)

func init() {
	register("log", "read the crawl log: every fetch and drop, filtered, followed or counted", leafCommand("log", logHelp, logEnv, logFlags,
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

const logHelp = `usage: trawl log [flags]

Reads the crawl log, DATA/logs/crawl.log and the files rotated beside it,
oldest first: one entry per fetch attempt and per URL dropped without a
fetch (see docs/crawl-log.md). It can be read while a crawl runs; -f keeps
printing entries as they are written, across rotations, until interrupted
(without --since, only entries from now on).

The table shows, per entry: the time (UTC), the status (or the error class,
or "drop:" and the reason), body bytes, duration, depth, the dedup verdict,
the URL and, after "via", the page that led to it. On a terminal each line
is cut to its width; in a pipe lines are whole. --json prints the entries
as JSON lines, --count the number of entries by status, error, dedup
verdict and drop reason. A malformed line is reported on stderr and
skipped. Exit status: 0 if the log was read, 1 if it could not be, 2 on a
usage error.

Examples:
  trawl log --data /srv/crawl --status 5xx,error
  trawl log --host example.org --since 10m
  trawl log -f --job 3
  trawl log --dropped any --count
  trawl log --dedup exact --json | jq -r .original
  trawl log --since 2026-12-02T00:00:00Z --status 404 --json | jq -r .via | sort | uniq -c`

func logFlags(fs *flag.FlagSet, o *logcmd.Options) {
	fs.StringVar(&o.Data, "data", "./trawl-data", "data directory whose logs/ to read, as given to trawl crawl or serve")
	fs.UintVar(&o.Job, "job", 0, "only this job's (crawl's) entries (0: every job)")
	fs.StringVar(&o.Host, "host", "", "only URLs on this `HOST` (case and port ignored)")
	fs.StringVar(&o.Status, "status", "", "only these statuses, comma-separated: a code (404), a class (5xx), error (the fetch failed or was cut) or dropped")
	fs.StringVar(&o.Dedup, "dedup", "", "only this dedup verdict: exact, near, not-modified, any or none")
	fs.StringVar(&o.Dropped, "dropped", "", "only URLs dropped for these reasons, comma-separated ("+strings.Join(crawllog.DropReasons, ", ")+"), or any")
	fs.StringVar(&o.Since, "since", "", "only entries from this time on: a `DURATION` ago (10m) or an RFC 3339 time")
	fs.BoolVar(&o.Follow, "f", false, "follow: keep printing entries as they are written (same as --follow)")
	fs.BoolVar(&o.Follow, "follow", false, "keep printing entries as they are written, until interrupted")
	fs.BoolVar(&o.JSON, "json", false, "print the entries as JSON lines, as the log holds them")
	fs.BoolVar(&o.Count, "count", false, "print the number of entries by status, error, dedup verdict and drop reason instead")
}
