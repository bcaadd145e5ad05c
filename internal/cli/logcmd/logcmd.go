// Package logcmd is `trawl log`: it reads the crawl log a data directory
// holds (package crawllog), filtered, and prints it as a table, as JSON
// lines, or counted; or follows it as it is written.
package logcmd

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/trawl-crawler/trawl/crawllog"
	"github.com/trawl-crawler/trawl/internal/cli/progress"
)

// Options are `trawl log`'s flags, and the clock --since counts from.
type Options struct {
	Data                                       string // the data directory whose logs/ to read
	Host, Status, Dedup, Dropped, Usage, Since string // filters, as the flags give them
	Job                                        uint
	Follow, JSON, Count                        bool
	Now                                        func() time.Time
}

// Main reads (or, with o.Follow, follows until ctx ends) the log and
// prints it to stdout, and returns the exit code: 2 for bad options, 1
// for a log that cannot be read.
func Main(ctx context.Context, o Options, stdout, stderr io.Writer) int {
	usageErr := func(format string, v ...any) int {
		fmt.Fprintf(stderr, "trawl log: "+format+"\n", v...)
		return 2
	}
	if o.Job > 1<<32-1 {
		return usageErr("--job %d: not a job id", o.Job)
	}
	f := crawllog.Filter{Job: uint32(o.Job), Host: o.Host, Status: o.Status, Dedup: o.Dedup, Dropped: o.Dropped, Usage: o.Usage}
	if err := f.Validate(); err != nil {
		return usageErr("%s", flagNames(err))
	}
	if o.Since != "" {
		t, err := parseSince(o.Since, o.Now())
		if err != nil {
			return usageErr("--since: %v", err)
		}
		f.Since = t
	} else if o.Follow {
		f.Since = o.Now()
	}
	if o.Follow && o.Count {
		return usageErr("--count and -f: counts are printed once the log is read; leave out -f")
	}
	f.OnBad = func(file string, line int, err error) {
		fmt.Fprintf(stderr, "trawl log: %s:%d: skipped: %v\n", file, line, err)
	}

	dir := filepath.Join(o.Data, "logs")
	out := bufio.NewWriterSize(stdout, 64<<10)
	var fn func(crawllog.Entry) error
	var counts *tally
	switch {
	case o.Count:
		counts = &tally{Status: map[string]int64{}, Errors: map[string]int64{}, Dedup: map[string]int64{}, Dropped: map[string]int64{}}
		fn = func(e crawllog.Entry) error { counts.add(&e); return nil }
	case o.JSON:
		var buf []byte
		fn = func(e crawllog.Entry) error {
			buf = crawllog.AppendJSON(buf[:0], &e)
			_, err := out.Write(buf)
			return err
		}
	default:
		width := func() int { return 0 }
		if w, ok := progress.Terminal(stdout); ok {
			width = w
		}
		if _, err := fmt.Fprintln(out, fitRow(Header, width)); err != nil {
			return 1
		}
		fn = func(e crawllog.Entry) error {
			_, err := fmt.Fprintln(out, fitRow(Row(&e), width))
			return err
		}
	}

	var err error
	if o.Follow {
		inner := fn
		fn = func(e crawllog.Entry) error { // each line at once, not a buffer-full later
			if err := inner(e); err != nil {
				return err
			}
			return out.Flush()
		}
		if err = out.Flush(); err == nil {
			err = crawllog.Follow(ctx, dir, f, fn)
		}
		if errors.Is(err, context.Canceled) {
			err = nil
		}
	} else {
		err = crawllog.Scan(dir, f, fn)
	}
	if err == nil && counts != nil {
		err = counts.print(out, o.JSON)
	}
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	switch {
	case errors.Is(err, os.ErrNotExist) && !o.Follow:
		fmt.Fprintf(stderr, "trawl log: no crawl log in %s: a crawl or trawl serve with --data %s writes it once it fetches (is --data right?)\n", dir, o.Data)
		return 1
	case err != nil:
		fmt.Fprintf(stderr, "trawl log: %v\n", err)
		return 1
	}
	return 0
}

// flagNames turns a Filter's Validate error into the flags' words.
func flagNames(err error) string {
	return strings.NewReplacer("crawllog: filter Status", "--status", "crawllog: filter Dedup", "--dedup",
		"crawllog: filter Dropped", "--dropped", "crawllog: filter Usage", "--usage", "\n", "; ").Replace(err.Error())
}

// parseSince reads --since: a duration before now, or an RFC 3339 time.
func parseSince(s string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return time.Time{}, fmt.Errorf("%q: a negative duration", s)
		}
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%q: want a duration (10m, 2h) or an RFC 3339 time (2026-12-02T15:04:05Z)", s)
}

// The table's columns: time, status, bytes, duration, depth, dedup, then
// the URL and where it came from, which take the rest of the line.
const Header = "TIME (UTC)           STATUS             BYTES  DURATION  DEPTH  DEDUP  URL"

// Row is an entry as a line of the table under Header.
func Row(e *crawllog.Entry) string {
	bytes, dur := "-", "-"
	if e.Dropped == "" {
		bytes, dur = progress.Bytes(e.Bytes), shortDuration(e.Duration)
	}
	dedup := e.Dedup
	if dedup == "" {
		dedup = "-"
	}
	row := fmt.Sprintf("%-19s  %-15s %8s %9s  %5d  %-5s  %s", e.Time.UTC().Format(time.DateTime), statusText(e), bytes, dur, e.Depth, dedup, e.URL)
	if e.Via != "" {
		row += "  via " + shortVia(e.Via, e.URL)
	}
	if e.Detail != "" {
		row += "  (" + e.Detail + ")"
	}
	return row
}

// statusText is an entry's outcome in a word or two: "200", "timeout",
// "200 too-large", "drop:robots".
func statusText(e *crawllog.Entry) string {
	var s string
	switch {
	case e.Dropped != "":
		return "drop:" + e.Dropped
	case e.Status != 0 && e.Error != "":
		s = fmt.Sprintf("%d %s", e.Status, e.Error)
	case e.Status != 0:
		s = fmt.Sprint(e.Status)
	case e.Error != "":
		s = e.Error
	default:
		s = "-"
	}
	if e.Robots {
		s += " robots"
	}
	return s
}

// shortDuration is d in a few characters: 12ms, 1.5s, 2m3s.
func shortDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Round(time.Millisecond).Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Round(time.Second).String()
}

// shortVia is via without what it shares with u: its path and query when
// on u's scheme and host, its host and path otherwise.
func shortVia(via, u string) string {
	v, err1 := url.Parse(via)
	w, err2 := url.Parse(u)
	if err1 != nil || err2 != nil || v.Host == "" {
		return via
	}
	rest := v.EscapedPath()
	if rest == "" {
		rest = "/"
	}
	if v.RawQuery != "" {
		rest += "?" + v.RawQuery
	}
	if v.Scheme == w.Scheme && strings.EqualFold(v.Host, w.Host) {
		return rest
	}
	return v.Host + rest
}

// fitRow cuts a row to the terminal's width; width 0 (not a terminal)
// leaves it whole.
func fitRow(row string, width func() int) string {
	if w := width(); w > 0 {
		return progress.Fit(row, w)
	}
	return row
}

// tally is what --count prints.
type tally struct {
	Entries int64            `json:"entries"`
	Fetches int64            `json:"fetches"` // attempts, robots.txt included
	Robots  int64            `json:"robots"`  // robots.txt fetches
	Bytes   int64            `json:"bytes"`   // body bytes fetched
	Status  map[string]int64 `json:"status"`  // fetches by status code
	Errors  map[string]int64 `json:"errors"`  // fetches by error class
	Dedup   map[string]int64 `json:"dedup"`   // fetches by dedup verdict
	Dropped map[string]int64 `json:"dropped"` // URLs by drop reason
}

func (c *tally) add(e *crawllog.Entry) {
	c.Entries++
	if e.Dropped != "" {
		c.Dropped[e.Dropped]++
		return
	}
	c.Fetches++
	c.Bytes += e.Bytes
	if e.Robots {
		c.Robots++
	}
	if e.Status != 0 {
		c.Status[fmt.Sprint(e.Status)]++
	}
	if e.Error != "" {
		c.Errors[e.Error]++
	}
	if e.Dedup != "" {
		c.Dedup[e.Dedup]++
	}
}

func (c *tally) print(w io.Writer, asJSON bool) error {
	if asJSON {
		b, _ := json.Marshal(c)
		_, err := fmt.Fprintf(w, "%s\n", b)
		return err
	}
	_, err := fmt.Fprintf(w, "entries  %d\nfetches  %d (robots.txt %d), %s of bodies\nstatus   %s\nerrors   %s\ndedup    %s\ndropped  %s\n",
		c.Entries, c.Fetches, c.Robots, progress.Bytes(c.Bytes),
		progress.Counts(c.Status), progress.Counts(c.Errors), progress.Counts(c.Dedup), progress.Counts(c.Dropped))
	return err
}

// Help is `trawl log --help`, before its flags.
const Help = `usage: trawl log [flags]

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
