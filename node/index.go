package node

import (
	"log/slog"
	"sync"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/trawl-crawler/trawl/cdxj"
	"github.com/trawl-crawler/trawl/warc"
)

// indexQueue bounds the finished WARC files waiting for their index: past
// it the WARC writer's syncer waits (a file is rotated every
// WARCMaxSize bytes, so the queue is rarely more than one deep).
const indexQueue = 4

// finishedFile is a WARC file the writer finished, with its captures.
type finishedFile struct {
	path     string
	captures []warc.Capture
}

// indexer writes the CDXJ index of each WARC file the writer finishes
// (cdxj.FromCaptures, cdxj.WriteIndex), in a goroutine of its own: about
// 8 µs a record, 0.2 s for a 1 GiB file of 40 KB pages, which the
// syncer, and every fetch waiting for it, should not wait for.
//
//	warc syncer ──OnFinish──▶ files (cap indexQueue) ──▶ indexer goroutine ──▶ NAME.warc.gz.cdxj
//
// An index that fails is logged, not fatal: the WARC file is whole and
// the next Open indexes it (cdxj.IndexMissing).
type indexer struct {
	fs    vfs.FS
	log   *slog.Logger
	files chan finishedFile
	done  chan struct{}
	once  sync.Once
}

func startIndexer(fs vfs.FS, log *slog.Logger) *indexer {
	x := &indexer{fs: fs, log: log, files: make(chan finishedFile, indexQueue), done: make(chan struct{})}
	go x.run()
	return x
}

// finished is the WARC writer's OnFinish.
func (x *indexer) finished(path string, captures []warc.Capture) {
	x.files <- finishedFile{path, captures}
}

func (x *indexer) run() {
	defer close(x.done)
	for f := range x.files {
		if err := cdxj.WriteIndex(x.fs, f.path, cdxj.FromCaptures(f.path, f.captures)); err != nil {
			x.log.Warn("CDXJ index of a finished WARC file", "err", err)
		}
	}
}

// close waits for the indexes of the files handed over; the WARC writer
// must be closed first. A second close does nothing.
func (x *indexer) close() {
	x.once.Do(func() { close(x.files) })
	<-x.done
}
