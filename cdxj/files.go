package cdxj

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strconv"
	"strings"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/trawl-crawler/trawl/warc"
)

// Per-file indexes. Each finished WARC file may have an index of its own
// beside it; this is part of the on-disk format:
//
//	DIR/NAME.warc.gz           the WARC file (finished: no ".open")
//	DIR/NAME.warc.gz.cdxj      its index: its lines, sorted (see Format)
//	DIR/NAME.warc.gz.cdxj.tmp  an index being written; left only by a crash
//
// An index is written whole to the ".tmp" name, fsynced and renamed, and
// only for a file that is finished and durable, so an index that exists
// is complete and describes only bytes on stable storage. The WARC files
// remain the truth: an index can always be rebuilt from its file.

// IndexSuffix ends the name of a WARC file's own index.
const IndexSuffix = ".cdxj"

// tmpSuffix ends the name of an index being written.
const tmpSuffix = ".tmp"

// IndexPath returns the path of the index of the WARC file at warcPath.
func IndexPath(warcPath string) string { return warcPath + IndexSuffix }

// FromCaptures returns the index lines of the captures a warc.Writer reported
// for the file at path (warc.Options.OnFinish), in file order: the lines
// Index gives when it reads that file.
func FromCaptures(path string, caps []warc.Capture) []Line {
	base := baseName(path)
	lines := make([]Line, len(caps))
	for i, c := range caps {
		lines[i] = lineOf(&warc.Record{
			Type:          c.Type,
			TargetURI:     c.URL,
			Date:          c.Date,
			PayloadDigest: c.PayloadDigest,
			HTTP:          c.HTTP,
			Offset:        c.Offset,
			Length:        c.Length,
		}, base)
	}
	return lines
}

// baseName is the last element of a slash- or backslash-separated path.
func baseName(path string) string {
	return path[strings.LastIndexAny(path, `/\`)+1:]
}

// WriteIndex writes lines, sorted (see Write), as the index of the WARC
// file at warcPath on fsys (nil: vfs.Default): to its IndexPath with
// ".tmp" appended, fsynced, renamed to IndexPath, and the directory
// synced. A reader sees no index or the whole one. It sorts lines.
func WriteIndex(fsys vfs.FS, warcPath string, lines []Line) error {
	if fsys == nil {
		fsys = vfs.Default
	}
	path := IndexPath(warcPath)
	tmp := path + tmpSuffix
	f, err := fsys.Create(tmp, vfs.WriteCategoryUnspecified)
	if err != nil {
		return fmt.Errorf("cdxj: write index %s: %w", path, err)
	}
	err = Write(f, lines)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = fsys.Rename(tmp, path)
	}
	if err == nil {
		err = warc.SyncDir(fsys, fsys.PathDir(path))
	}
	if err != nil {
		_ = fsys.Remove(tmp)
		return fmt.Errorf("cdxj: write index %s: %w", path, err)
	}
	return nil
}

// IndexMissing gives every finished WARC file in dir (on fsys; nil:
// vfs.Default) that has no index one, built by reading the file (Index),
// and removes indexes left half-written (".tmp") by a crash. Files still
// being written (warc.OpenSuffix) are skipped: run it after warc.Recover,
// before a Writer starts on dir. It returns the index paths it wrote; a
// file it cannot read whole gets no index (the error names it) and the
// others are still indexed. A missing dir has nothing to index.
func IndexMissing(fsys vfs.FS, dir string) ([]string, error) {
	if fsys == nil {
		fsys = vfs.Default
	}
	names, err := fsys.List(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cdxj: index %s: %w", dir, err)
	}
	slices.Sort(names)
	has := nameSet(names)
	var (
		written []string
		errs    []error
	)
	for _, name := range names {
		if strings.HasSuffix(name, IndexSuffix+tmpSuffix) {
			path := fsys.PathJoin(dir, name)
			if err := fsys.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, fmt.Errorf("cdxj: remove %s: %w", path, err))
			}
		}
	}
	for _, name := range names {
		path := fsys.PathJoin(dir, name)
		if strings.HasSuffix(name, warc.Extension) && !has[name+IndexSuffix] {
			lines, err := indexFS(fsys, path)
			if err == nil {
				err = WriteIndex(fsys, path, lines)
			}
			if err != nil {
				errs = append(errs, err)
				continue
			}
			written = append(written, IndexPath(path))
		}
	}
	return written, errors.Join(errs...)
}

// nameSet is the set of names.
func nameSet(names []string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// indexFS indexes the WARC file at path on fsys.
func indexFS(fsys vfs.FS, path string) ([]Line, error) {
	f, err := fsys.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cdxj: index: %w", err)
	}
	defer f.Close()
	return Index(bufio.NewReaderSize(f, 64<<10), path)
}

// lineJSON is the JSON object of a line, as ParseLine reads it.
type lineJSON struct {
	URL      string `json:"url"`
	Mime     string `json:"mime"`
	Status   string `json:"status"`
	Digest   string `json:"digest"`
	Length   string `json:"length"`
	Offset   string `json:"offset"`
	Filename string `json:"filename"`
}

// ParseLine parses one line of a CDXJ file (without its LF), as String
// writes it: ParseLine(l.String()) is l.
func ParseLine(s string) (Line, error) {
	i := strings.Index(s, " {")
	key := s[:max(i, 0)]
	j := strings.LastIndexByte(key, ' ')
	if i < 0 || j < 0 {
		return Line{}, fmt.Errorf("cdxj: parse line %q: want SURT TIMESTAMP {json}", truncate(s))
	}
	var v lineJSON
	if err := json.Unmarshal([]byte(s[i+1:]), &v); err != nil {
		return Line{}, fmt.Errorf("cdxj: parse line %q: %w", truncate(s), err)
	}
	l := Line{SURT: key[:j], Timestamp: key[j+1:], URL: v.URL, Mime: v.Mime, Status: v.Status, Digest: v.Digest, Filename: v.Filename}
	var err1, err2 error
	l.Length, err1 = strconv.ParseInt(v.Length, 10, 64)
	l.Offset, err2 = strconv.ParseInt(v.Offset, 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return Line{}, fmt.Errorf("cdxj: parse line %q: length or offset: %w", truncate(s), err)
	}
	return l, nil
}

// truncate shortens s for an error message.
func truncate(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

// Read reads a CDXJ file's lines from r, in the order they are written.
// Empty lines are skipped; a line ParseLine rejects is an error naming its
// number.
func Read(r io.Reader) ([]Line, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var lines []Line
	for n := 1; sc.Scan(); n++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		l, err := ParseLine(sc.Text())
		if err != nil {
			return lines, fmt.Errorf("line %d: %w", n, err)
		}
		lines = append(lines, l)
	}
	return lines, sc.Err()
}

// LoadDir reads the index of every WARC file in dir (on fsys; nil:
// vfs.Default) that has one and returns all their lines, merged and
// sorted: the CDXJ index of those files. WARC files without an index
// (not finished yet, or waiting for IndexMissing) are left out; missing
// lists them.
func LoadDir(fsys vfs.FS, dir string) (lines []Line, missing []string, err error) {
	if fsys == nil {
		fsys = vfs.Default
	}
	names, err := fsys.List(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("cdxj: load %s: %w", dir, err)
	}
	slices.Sort(names)
	has := nameSet(names)
	for _, name := range names {
		base, ok := strings.CutSuffix(name, warc.OpenSuffix)
		if !strings.HasSuffix(base, warc.Extension) {
			continue
		}
		if ok || !has[name+IndexSuffix] {
			missing = append(missing, fsys.PathJoin(dir, name))
			continue
		}
		path := fsys.PathJoin(dir, name+IndexSuffix)
		f, err := fsys.Open(path)
		if err != nil {
			return nil, nil, fmt.Errorf("cdxj: load %s: %w", path, err)
		}
		l, err := Read(bufio.NewReader(f))
		f.Close()
		if err != nil {
			return nil, nil, fmt.Errorf("cdxj: load %s: %w", path, err)
		}
		lines = append(lines, l...)
	}
	Sort(lines)
	return lines, missing, nil
}
