package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/trawl-crawler/trawl/cdxj"
)

func init() {
	register("index", "build a CDXJ index of WARC files", cmdIndex)
	leaf("index", func(fs *flag.FlagSet) {
		fs.String("out", "", "write the index to `FILE` (replaced whole) instead of standard output")
	})
}

const indexUsage = `usage: trawl index [--out FILE] WARC...

Reads each WARC file (.warc.gz with one gzip member per record, as trawl
writes them, or uncompressed) and prints a CDXJ index of them, sorted, as
pywb and warcio write it: one line "SURT TIMESTAMP {json}" per response,
revisit, resource or metadata record (not request or warcinfo records),
the JSON holding url, mime, status, digest, length, offset and filename
(the file's base name). Rebuilds the index from the WARC files alone.

A file that cannot be read whole is reported on stderr, naming it and the
offset of the bad record; the records before that offset are still
indexed. Exit status: 0 if every file was read, 1 if one could not be,
2 on a usage error.

Examples:
  trawl index data/warc/*.warc.gz > index.cdxj
  trawl index --out data/warc/index.cdxj data/warc/trawl-20240506070809-00000.warc.gz
`

// cmdIndex runs "trawl index".
func cmdIndex(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("index", indexUsage, nil, stderr)
	leaves["index"](fs)
	if _, code, ok := parseFlags(fs, args, nil, stderr); !ok {
		return code
	}
	if fs.NArg() == 0 {
		fmt.Fprint(stderr, indexUsage)
		return 2
	}
	out := fs.Lookup("out").Value.String()

	code := 0
	var lines []cdxj.Line
	for _, file := range fs.Args() {
		l, err := cdxj.IndexFile(file)
		lines = append(lines, l...)
		if err != nil {
			fmt.Fprintf(stderr, "trawl index: %v\n", err)
			code = 1
		}
	}
	if out == "" {
		if err := cdxj.Write(stdout, lines); err != nil {
			fmt.Fprintf(stderr, "trawl index: %v\n", err)
			return 1
		}
		return code
	}
	if err := writeFileAtomic(out, func(w io.Writer) error { return cdxj.Write(w, lines) }); err != nil {
		fmt.Fprintf(stderr, "trawl index: --out: %v\n", err)
		return 1
	}
	return code
}

// writeFileAtomic writes path through a temporary file in its directory,
// fsynced and renamed over it, so a reader sees the old or the new file.
func writeFileAtomic(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	err = write(tmp)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
	}
	return err
}
