// Package wacz packages a crawl's archive as a WACZ file (Web Archive
// Collection Zipped, version 1.1.1: https://specs.webrecorder.net/wacz/1.1.1/,
// the source of every file name and JSON field below), which replay tools
// such as ReplayWeb.page open directly. An Export is planned by New (which
// reads the data directory's file list and, for one crawl, its crawl log)
// and written by Write or WriteFile, streaming: WARC files are copied, the
// index merged and the pages listed a line at a time, so memory does not
// grow with the crawl (see Options.Job for the one exception). An Export
// is not safe for concurrent use; it changes nothing in the data directory.
//
// # Layout
//
// A WACZ is a ZIP file; this package writes its entries in this order:
//
//	archive/NAME.warc.gz     each finished WARC file, byte for byte, method Store
//	indexes/index.cdxj       the per-file CDXJ indexes merged, sorted (Deflate)
//	pages/pages.jsonl        a header line, then one line per page (Deflate)
//	datapackage.json         the manifest: every entry above with its SHA-256 and size
//	datapackage-digest.json  the SHA-256 of datapackage.json
//
// WARC files are stored, not deflated: a replay tool reads one record by
// the offset and length its CDXJ line gives, through an HTTP range request
// into the WACZ at the entry's data offset plus the record's offset; a
// deflated entry would have to be inflated from its start. The CDXJ lines'
// filenames are the WARC files' base names, as under archive/.
//
// A page is a capture of status 200 and type text/html: a response
// record, or a revisit record (an exact copy of a payload archived
// before) whose HTTP head says text/html. Its ts is the record's
// WARC-Date, its title the page's <title> read from the first
// MaxTitleScan bytes of its payload (none for a revisit, which has no
// payload, or a content-encoded payload), and "seed": true marks a page
// the crawl log shows fetched as a seed (no "via", depth 0).
package wacz

import (
	"archive/zip"
	"bufio"
	"container/heap"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/trawl-crawler/trawl/cdxj"
	"github.com/trawl-crawler/trawl/crawllog"
	"github.com/trawl-crawler/trawl/internal/atomicfile"
	"github.com/trawl-crawler/trawl/warc"
)

// Version is the WACZ version written in datapackage.json.
const Version = "1.1.1"

// Entry names inside the ZIP (WACZ 1.1.1, "Directories and Files").
const (
	ArchiveDir  = "archive/"
	IndexPath   = "indexes/index.cdxj"
	PagesPath   = "pages/pages.jsonl"
	PackagePath = "datapackage.json"
	DigestPath  = "datapackage-digest.json"
)

// PagesHeader is the first line of pages/pages.jsonl (WACZ 1.1.1).
const PagesHeader = `{"format": "json-pages-1.0", "id": "pages", "title": "All Pages"}`

// MediaType is a WACZ's media type, for HTTP answers (WACZ 1.1.1,
// "Media Type").
const MediaType = "application/wacz"

// Errors a caller branches on: both mean there is nothing to export
// (a usage error at the command line, a 404 in the API).
var (
	// ErrNoWARC: the data directory holds no finished WARC file.
	ErrNoWARC = errors.New("no finished WARC file")
	// ErrNoCaptures: the crawl log shows no archived capture of Options.Job.
	ErrNoCaptures = errors.New("no archived capture of this crawl")
)

// Options configures New.
type Options struct {
	// Data is the data directory, as given to trawl crawl or serve: WARC
	// files and their indexes in Data/warc, the crawl log in Data/logs.
	// Required.
	Data string
	// Job, if not 0, exports that crawl only: the WARC files holding a
	// record the crawl log shows fetched for it (whole: other crawls'
	// records in them travel along, unindexed), and only its records in
	// the index and the pages. Planning it holds the crawl's record
	// locations in memory (about 50 bytes a capture). 0: everything in
	// Data/warc.
	Job uint32
	// Title is datapackage.json's title. If empty, "trawl crawl" (and the
	// job's number, with Job).
	Title string
	// Software is datapackage.json's software. If empty, "trawl".
	Software string
	// Now gives datapackage.json's created time. If nil, time.Now.
	Now func() time.Time
}

// MaxTitleScan bounds the bytes of a page's payload read for its title.
const MaxTitleScan = 64 << 10

// maxSeeds bounds the seed URLs kept from the crawl log; past it, later
// seeds are not marked.
const maxSeeds = 1 << 16

// Result says what Write wrote.
type Result struct {
	WARCFiles int   // files under archive/
	Captures  int   // lines in indexes/index.cdxj
	Pages     int   // pages in pages/pages.jsonl (not counting its header)
	Bytes     int64 // the size of the WACZ
}

// Export is a WACZ export planned by New.
type Export struct {
	o     Options
	dir   string // Data/warc
	files []*warcFile
	keep  map[location]bool // with Job: the crawl's records; nil: all
	// keepFiles: with Job, the files holding a record in keep
	keepFiles map[string]bool
	seeds     map[string]bool
}

// warcFile is one WARC file to export.
type warcFile struct {
	name    string // base name, as in CDXJ lines
	path    string
	size    int64
	modTime time.Time
	index   string   // its own CDXJ index's path, or "" if it has none
	lines   []string // without an index: its lines, read from the file, sorted
}

// location is where a record lies.
type location struct {
	file   string
	offset int64
}

// New plans an export of o.Data: it lists the finished WARC files of
// Data/warc (files still being written, NAME.warc.gz.open, are left out),
// reads the crawl log for seeds (and, with o.Job, the crawl's records),
// and indexes in memory any finished file that has no index of its own.
// An error wrapping ErrNoWARC or ErrNoCaptures means there is nothing to
// export.
func New(o Options) (*Export, error) {
	if o.Data == "" {
		return nil, errors.New("wacz: no data directory")
	}
	if o.Software == "" {
		o.Software = "trawl"
	}
	if o.Title == "" {
		o.Title = "trawl crawl"
		if o.Job != 0 {
			o.Title += " " + strconv.FormatUint(uint64(o.Job), 10)
		}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if fi, err := os.Stat(o.Data); err != nil {
		return nil, fmt.Errorf("wacz: data directory: %w", err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("wacz: data directory %s: not a directory", o.Data)
	}
	e := &Export{o: o, dir: filepath.Join(o.Data, "warc"), seeds: map[string]bool{}}
	if o.Job != 0 {
		e.keep, e.keepFiles = map[location]bool{}, map[string]bool{}
	}
	if err := e.readLog(); err != nil {
		return nil, err
	}
	names, err := os.ReadDir(e.dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("wacz: %w", err)
	}
	has := map[string]bool{}
	for _, d := range names {
		has[d.Name()] = true
	}
	for _, d := range names {
		name := d.Name()
		if !d.Type().IsRegular() || !strings.HasSuffix(name, warc.Extension) {
			continue
		}
		if e.keep != nil && !e.keepFiles[name] {
			continue
		}
		fi, err := d.Info()
		if err != nil {
			return nil, fmt.Errorf("wacz: %w", err)
		}
		f := &warcFile{name: name, path: filepath.Join(e.dir, name), size: fi.Size(), modTime: fi.ModTime()}
		if has[name+cdxj.IndexSuffix] {
			f.index = cdxj.IndexPath(f.path)
		} else {
			lines, err := cdxj.IndexFile(f.path)
			if err != nil {
				return nil, fmt.Errorf("wacz: %s has no index and cannot be read whole: %w", f.path, err)
			}
			cdxj.Sort(lines)
			for _, l := range lines {
				f.lines = append(f.lines, l.String())
			}
		}
		e.files = append(e.files, f)
	}
	switch {
	case len(e.files) > 0:
	case o.Job != 0 && len(e.keep) == 0:
		return nil, fmt.Errorf("wacz: crawl %d in %s: %w", o.Job, o.Data, ErrNoCaptures)
	case o.Job != 0:
		return nil, fmt.Errorf("wacz: crawl %d in %s: its records' WARC files are not finished: %w", o.Job, o.Data, ErrNoWARC)
	default:
		return nil, fmt.Errorf("wacz: %s: %w", e.dir, ErrNoWARC)
	}
	slices.SortFunc(e.files, func(a, b *warcFile) int { return strings.Compare(a.name, b.name) })
	return e, nil
}

// readLog reads the crawl log (Data/logs): the seeds fetched and, with
// o.Job, where each of the crawl's records lies. A missing log has
// neither; malformed lines are skipped.
func (e *Export) readLog() error {
	dir := filepath.Join(e.o.Data, "logs")
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	f := crawllog.Filter{Job: e.o.Job, OnBad: func(string, int, error) {}}
	err := crawllog.Scan(dir, f, func(en crawllog.Entry) error {
		if en.Robots || en.Dropped != "" {
			return nil
		}
		if en.Via == "" && en.Depth == 0 && en.Status != 0 && len(e.seeds) < maxSeeds {
			e.seeds[en.URL] = true
		}
		if e.keep != nil && en.WARC != "" {
			e.keep[location{en.WARC, en.Offset}] = true
			e.keepFiles[en.WARC] = true
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("wacz: crawl log: %w", err)
	}
	return nil
}

// WARCFiles returns the paths of the WARC files the export holds, in the
// order written.
func (e *Export) WARCFiles() []string {
	out := make([]string, len(e.files))
	for i, f := range e.files {
		out[i] = f.path
	}
	return out
}

// resource is one entry of datapackage.json's resources (WACZ 1.1.1).
type resource struct {
	Name  string `json:"name"`
	Path  string `json:"path"`
	Hash  string `json:"hash"`
	Bytes int64  `json:"bytes"`
}

// datapackage is datapackage.json (WACZ 1.1.1, "datapackage.json").
type datapackage struct {
	Profile      string     `json:"profile"`
	WACZVersion  string     `json:"wacz_version"`
	Title        string     `json:"title"`
	Created      string     `json:"created"`
	Software     string     `json:"software"`
	MainPageURL  string     `json:"mainPageUrl,omitempty"`
	MainPageDate string     `json:"mainPageDate,omitempty"`
	Resources    []resource `json:"resources"`
}

// digestFile is datapackage-digest.json (WACZ 1.1.1).
type digestFile struct {
	Path string `json:"path"`
	Hash string `json:"hash"`
}

// countWriter counts the bytes written through it.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// entry is a ZIP entry being written, hashed and counted as it goes.
type entry struct {
	w   io.Writer
	sum hash.Hash
	n   int64
}

func (en *entry) Write(p []byte) (int, error) {
	n, err := en.w.Write(p)
	en.sum.Write(p[:n])
	en.n += int64(n)
	return n, err
}

// resource is the entry's line in datapackage.json.
func (en *entry) resource(path string) resource {
	return resource{Name: path[strings.LastIndexByte(path, '/')+1:], Path: path,
		Hash: "sha256:" + hex.EncodeToString(en.sum.Sum(nil)), Bytes: en.n}
}

// Write writes the WACZ to w, as one stream (no seeking), and returns
// what it wrote. On an error, what w got is no valid ZIP.
func (e *Export) Write(w io.Writer) (Result, error) {
	cw := &countWriter{w: w}
	zw := zip.NewWriter(cw)
	now := e.o.Now().UTC()
	var (
		res       Result
		resources []resource
	)
	create := func(name string, method uint16, mod time.Time) (*entry, error) {
		hdr := &zip.FileHeader{Name: name, Method: method, Modified: mod.UTC()}
		hdr.SetMode(0o644)
		w, err := zw.CreateHeader(hdr)
		if err != nil {
			return nil, fmt.Errorf("wacz: write %s: %w", name, err)
		}
		return &entry{w: w, sum: sha256.New()}, nil
	}
	for _, f := range e.files {
		path := ArchiveDir + f.name
		en, err := create(path, zip.Store, f.modTime)
		if err != nil {
			return res, err
		}
		if err := copyFile(en, f); err != nil {
			return res, err
		}
		resources = append(resources, en.resource(path))
		res.WARCFiles++
	}

	en, err := create(IndexPath, zip.Deflate, now)
	if err != nil {
		return res, err
	}
	bw := bufio.NewWriterSize(en, 64<<10)
	err = e.merge(func(text string, _ cdxj.Line) error {
		res.Captures++
		bw.WriteString(text)
		return bw.WriteByte('\n')
	})
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		return res, fmt.Errorf("wacz: write %s: %w", IndexPath, err)
	}
	resources = append(resources, en.resource(IndexPath))

	if en, err = create(PagesPath, zip.Deflate, now); err != nil {
		return res, err
	}
	main, err := e.writePages(en, &res)
	if err != nil {
		return res, fmt.Errorf("wacz: write %s: %w", PagesPath, err)
	}
	resources = append(resources, en.resource(PagesPath))

	dp := datapackage{Profile: "data-package", WACZVersion: Version, Title: e.o.Title,
		Created: now.Format(time.RFC3339), Software: e.o.Software, Resources: resources}
	if main != nil {
		dp.MainPageURL, dp.MainPageDate = main.URL, main.TS
	}
	b, err := json.MarshalIndent(dp, "", "  ")
	if err != nil {
		return res, fmt.Errorf("wacz: %w", err)
	}
	if en, err = create(PackagePath, zip.Deflate, now); err != nil {
		return res, err
	}
	if _, err := en.Write(b); err != nil {
		return res, fmt.Errorf("wacz: write %s: %w", PackagePath, err)
	}
	d := en.resource(PackagePath)
	b, err = json.MarshalIndent(digestFile{Path: PackagePath, Hash: d.Hash}, "", "  ")
	if err != nil {
		return res, fmt.Errorf("wacz: %w", err)
	}
	if en, err = create(DigestPath, zip.Deflate, now); err != nil {
		return res, err
	}
	if _, err := en.Write(b); err != nil {
		return res, fmt.Errorf("wacz: write %s: %w", DigestPath, err)
	}
	if err := zw.Close(); err != nil {
		return res, fmt.Errorf("wacz: finish: %w", err)
	}
	res.Bytes = cw.n
	return res, nil
}

// copyFile copies the WARC file f into en whole; a file that is not the
// size it had when the export was planned is an error (WARC files are
// never changed once finished).
func copyFile(en *entry, f *warcFile) error {
	src, err := os.Open(f.path)
	if err != nil {
		return fmt.Errorf("wacz: %w", err)
	}
	defer src.Close()
	n, err := io.Copy(en, src)
	if err != nil {
		return fmt.Errorf("wacz: copy %s: %w", f.path, err)
	}
	if n != f.size {
		return fmt.Errorf("wacz: copy %s: %d bytes, was %d when the export began", f.path, n, f.size)
	}
	return nil
}

// WriteFile writes the WACZ to path through a temporary file in its
// directory, fsynced and renamed over path only once whole: path is
// never left half-written. It replaces a file at path.
func (e *Export) WriteFile(path string) (Result, error) {
	var res Result
	err := atomicfile.Write(path, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 256<<10)
		var err error
		if res, err = e.Write(bw); err != nil {
			return err
		}
		return bw.Flush()
	})
	if err != nil {
		return Result{}, fmt.Errorf("wacz: %w", err)
	}
	return res, nil
}

// merge calls fn with every line of the export's index (with Job, the
// crawl's only), in sorted order: a k-way merge of the files' sorted
// indexes, one line of each in memory. A line naming another file than
// the one it indexes is an error.
func (e *Export) merge(fn func(text string, l cdxj.Line) error) error {
	var h sources
	defer func() {
		for _, s := range h {
			s.close()
		}
	}()
	for _, f := range e.files {
		s := &source{file: f}
		if f.index != "" {
			r, err := os.Open(f.index)
			if err != nil {
				return err
			}
			s.c = r
			s.sc = bufio.NewScanner(r)
			s.sc.Buffer(make([]byte, 16<<10), 16<<20)
		}
		ok, err := s.next()
		if err != nil {
			s.close()
			return err
		}
		if ok {
			h = append(h, s)
		} else {
			s.close()
		}
	}
	heap.Init(&h)
	for len(h) > 0 {
		s := h[0]
		l, err := cdxj.ParseLine(s.cur)
		if err != nil {
			return fmt.Errorf("%s: %w", s.where(), err)
		}
		if l.Filename != s.file.name {
			return fmt.Errorf("%s: line names file %q, not %q", s.where(), l.Filename, s.file.name)
		}
		if e.keep == nil || e.keep[location{l.Filename, l.Offset}] {
			if err := fn(s.cur, l); err != nil {
				return err
			}
		}
		ok, err := s.next()
		if err != nil {
			return err
		}
		if ok {
			heap.Fix(&h, 0)
		} else {
			heap.Pop(&h)
			s.close()
		}
	}
	return nil
}

// source is one file's sorted index lines, read one at a time.
type source struct {
	file *warcFile
	c    io.Closer
	sc   *bufio.Scanner
	i    int // lines read, for errors and for file.lines
	cur  string
}

func (s *source) next() (bool, error) {
	for {
		if s.sc == nil {
			if s.i >= len(s.file.lines) {
				return false, nil
			}
			s.cur = s.file.lines[s.i]
			s.i++
			return true, nil
		}
		if !s.sc.Scan() {
			if err := s.sc.Err(); err != nil {
				return false, fmt.Errorf("%s: %w", s.file.index, err)
			}
			return false, nil
		}
		s.i++
		if len(s.sc.Bytes()) > 0 {
			s.cur = s.sc.Text()
			return true, nil
		}
	}
}

func (s *source) where() string {
	if s.file.index == "" {
		return s.file.path
	}
	return s.file.index + ":" + strconv.Itoa(s.i)
}

func (s *source) close() {
	if s.c != nil {
		s.c.Close()
		s.c = nil
	}
}

// sources is a min-heap of sources by their current line.
type sources []*source

func (h sources) Len() int           { return len(h) }
func (h sources) Less(i, j int) bool { return h[i].cur < h[j].cur }
func (h sources) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *sources) Push(x any)        { *h = append(*h, x.(*source)) }
func (h *sources) Pop() any {
	old := *h
	s := old[len(old)-1]
	*h = old[:len(old)-1]
	return s
}
