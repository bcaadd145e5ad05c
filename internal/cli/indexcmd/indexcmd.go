// Package indexcmd is `trawl index`: it builds a sorted CDXJ index of WARC
// files (package cdxj) to standard output or a file, or rewrites the
// per-file index of every finished WARC file in a data directory. It
// reads the WARC files alone; a file replaced is replaced whole, through a
// temporary file renamed over it.
package indexcmd

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/trawl-crawler/trawl/cdxj"
	"github.com/trawl-crawler/trawl/internal/atomicfile"
	"github.com/trawl-crawler/trawl/warc"
)

// Options are `trawl index`'s flags and arguments: either Files (and
// Out) or Data.
type Options struct {
	Files []string // WARC files to index
	Out   string   // write the index to this file instead of stdout; "" none
	Data  string   // rewrite the per-file index of every finished WARC file in Data/warc
}

// Main indexes as o says and returns the exit status: 0 if every file
// was read, 1 if one could not be (said on stderr, naming the file and
// the offset of the bad record; the records before it are still indexed,
// but not with Data).
func Main(o Options, stdout, stderr io.Writer) int {
	if o.Data != "" {
		return reindexData(o.Data, stdout, stderr)
	}
	code := 0
	var lines []cdxj.Line
	for _, file := range o.Files {
		l, err := cdxj.IndexFile(file)
		lines = append(lines, l...)
		if err != nil {
			fmt.Fprintf(stderr, "trawl index: %v\n", err)
			code = 1
		}
	}
	if o.Out == "" {
		if err := cdxj.Write(stdout, lines); err != nil {
			fmt.Fprintf(stderr, "trawl index: %v\n", err)
			return 1
		}
		return code
	}
	if err := atomicfile.Write(o.Out, func(w io.Writer) error { return cdxj.Write(w, lines) }); err != nil {
		fmt.Fprintf(stderr, "trawl index: --out: %v\n", err)
		return 1
	}
	return code
}

// reindexData rewrites the per-file index of every finished WARC file in
// DATA/warc.
func reindexData(data string, stdout, stderr io.Writer) int {
	files, err := filepath.Glob(filepath.Join(data, "warc", "*"+warc.Extension))
	if err != nil {
		fmt.Fprintf(stderr, "trawl index: %v\n", err)
		return 1
	}
	if len(files) == 0 {
		fmt.Fprintf(stderr, "trawl index: no finished WARC file in %s\n", filepath.Join(data, "warc"))
		return 1
	}
	code, lines := 0, 0
	for _, f := range files {
		l, err := cdxj.IndexFile(f)
		if err == nil {
			err = cdxj.WriteIndex(nil, f, l)
		}
		if err != nil {
			fmt.Fprintf(stderr, "trawl index: %v\n", err)
			code = 1
			continue
		}
		lines += len(l)
	}
	fmt.Fprintf(stdout, "%d WARC files, %d index lines\n", len(files), lines)
	return code
}

// Help is `trawl index --help`, before its flags.
const Help = `usage: trawl index [--out FILE] WARC...
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
