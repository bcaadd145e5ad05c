// Package exportcmd is `trawl export`: it packages a data directory's
// archive (or one crawl of it) as a WACZ file (package wacz). Every
// problem with what it was asked is found before anything is written; the
// WACZ is written through a temporary file beside it and renamed into
// place only once whole, so OUT.wacz is never left half-written.
package exportcmd

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/trawl-crawler/trawl/wacz"
)

// Options are `trawl export`'s flags.
type Options struct {
	WACZ  string // the WACZ file to write; required, ending in .wacz
	Data  string // the data directory to export
	Job   uint   // only this crawl's records; 0 every crawl's
	Title string // the WACZ's title; "" wacz's default
	Force bool   // replace an existing WACZ
}

// Main exports as o says and returns the exit status: 0 done, 1 the
// export failed, 2 a usage error (a flag missing or wrong, nothing to
// export), each said on stderr naming the flag.
func Main(o Options, stdout, stderr io.Writer) int {
	usage := func(format string, args ...any) int {
		fmt.Fprintf(stderr, "trawl export: "+format+"\n", args...)
		return 2
	}
	switch {
	case o.WACZ == "":
		return usage("--wacz is missing: give the file to write, e.g. --wacz crawl.wacz")
	case !strings.HasSuffix(o.WACZ, ".wacz"):
		return usage("--wacz %s: a WACZ file's name ends in .wacz (WACZ 1.1.1): e.g. --wacz %s.wacz", o.WACZ, strings.TrimSuffix(o.WACZ, filepath.Ext(o.WACZ)))
	case o.Job > 1<<32-1:
		return usage("--job %d: not a crawl id (at most %d)", o.Job, uint32(1<<32-1))
	}
	dir := filepath.Dir(o.WACZ)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return usage("--wacz %s: directory %s does not exist: create it first, or give a path in an existing directory", o.WACZ, dir)
	}
	if fi, err := os.Stat(o.WACZ); err == nil {
		if fi.IsDir() {
			return usage("--wacz %s is a directory: give a file name ending in .wacz", o.WACZ)
		}
		if !o.Force {
			return usage("--wacz %s exists: give --force to replace it (only once the new one is complete), or another path", o.WACZ)
		}
	}
	if fi, err := os.Stat(o.Data); err != nil || !fi.IsDir() {
		return usage("--data %s: no such directory: give the data directory trawl crawl or serve wrote", o.Data)
	}
	e, err := wacz.New(wacz.Options{Data: o.Data, Job: uint32(o.Job), Title: o.Title})
	switch {
	case errors.Is(err, wacz.ErrNoWARC) && o.Job == 0:
		return usage("--data %s: no finished WARC file in %s: give the data directory of a crawl that archived pages", o.Data, filepath.Join(o.Data, "warc"))
	case errors.Is(err, wacz.ErrNoWARC) || errors.Is(err, wacz.ErrNoCaptures):
		return usage("--job %d: %v: give a crawl of --data %s that archived pages (trawl log --data %s --count --job %d)", o.Job, err, o.Data, o.Data, o.Job)
	case errors.Is(err, fs.ErrNotExist):
		return usage("--data %s: %v", o.Data, err)
	case err != nil:
		fmt.Fprintf(stderr, "trawl export: %v\n", err)
		return 1
	}
	res, err := e.WriteFile(o.WACZ)
	if err != nil {
		fmt.Fprintf(stderr, "trawl export: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "wrote %s: %d WARC files, %d captures, %d pages, %d bytes\n", o.WACZ, res.WARCFiles, res.Captures, res.Pages, res.Bytes)
	return 0
}

// Help is `trawl export --help`, before its flags.
const Help = `usage: trawl export --wacz OUT.wacz [--data DIR] [--job ID] [--title T] [--force]

Packages the archive of a data directory as one WACZ file (WACZ 1.1.1),
which ReplayWeb.page and other replay tools open as it is:

  archive/NAME.warc.gz     every finished WARC file of DIR/warc, byte for
                           byte (stored, not compressed again)
  indexes/index.cdxj       their CDXJ indexes, merged and sorted
  pages/pages.jsonl        every HTML page fetched with status 200: URL,
                           time, title, and "seed": true for the seeds
  datapackage.json         every file above with its SHA-256 and size
  datapackage-digest.json  the SHA-256 of datapackage.json

WARC files still being written (.open) are left out: run it after the
crawl, or accept that a running crawl's current file is missing. --job
exports one crawl's records only (by the crawl log): the WARC files that
hold any of them, whole, with only that crawl's captures indexed and
listed as pages.

The WACZ is written to a temporary file beside OUT.wacz and renamed once
complete. An existing OUT.wacz is refused unless --force is given.

Exit status: 0 written, 1 the export failed, 2 a usage error (a flag
missing or wrong, an existing OUT.wacz, no WARC file in DIR).

Examples:
  trawl export --wacz crawl.wacz --data ./trawl-data
  trawl export --wacz crawl-3.wacz --data /srv/trawl --job 3 --title "Example, March"
`
