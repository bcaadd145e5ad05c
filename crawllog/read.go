package crawllog

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// rotated is a rotated file and what its name says.
type rotated struct {
	name string
	t    time.Time
	seq  int
}

// parseRotated reads a rotated file's name, crawl-YYYYMMDDTHHMMSSZ-NNNN.log.
func parseRotated(name string) (rotated, bool) {
	rest, ok := strings.CutPrefix(name, "crawl-")
	if !ok {
		return rotated{}, false
	}
	rest, ok = strings.CutSuffix(rest, ".log")
	if !ok || len(rest) < len(rotatedLayout)+5 || rest[len(rotatedLayout)] != '-' {
		return rotated{}, false
	}
	t, err := time.Parse(rotatedLayout, rest[:len(rotatedLayout)])
	digits := rest[len(rotatedLayout)+1:]
	seq, err2 := strconv.Atoi(digits)
	if err != nil || err2 != nil || seq < 0 || digits[0] == '+' {
		return rotated{}, false
	}
	return rotated{name, t, seq}, true
}

// rotatedFiles lists dir's rotated files, oldest first.
func rotatedFiles(dir string) ([]rotated, error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("crawllog: %w", err)
	}
	var out []rotated
	for _, de := range des {
		if r, ok := parseRotated(de.Name()); ok && de.Type().IsRegular() {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b rotated) int {
		return cmp.Or(a.t.Compare(b.t), cmp.Compare(a.seq, b.seq))
	})
	return out, nil
}

// Files returns the paths of dir's log files in the order they were
// written: the rotated files, oldest first (by the time and sequence
// number in their names), then crawl.log if it exists.
func Files(dir string) ([]string, error) {
	rs, err := rotatedFiles(dir)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(rs)+1)
	for _, r := range rs {
		out = append(out, filepath.Join(dir, r.name))
	}
	cur := filepath.Join(dir, Name)
	if _, err := os.Stat(cur); err == nil {
		out = append(out, cur)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("crawllog: %w", err)
	}
	return out, nil
}

// Status filter values beside a status code or class ("200", "4xx").
const (
	StatusError   = "error"   // Entry.Error is set: the fetch failed or was cut
	StatusDropped = "dropped" // Entry.Dropped is set: never fetched
)

// Filter selects entries. A zero field selects everything; the fields
// given must all match. Status, Dedup and Dropped take a comma-separated
// list of values, any of which may match.
type Filter struct {
	Job     uint32 // the job's number
	Host    string // the URL's host, case-insensitive; ports are ignored on both sides
	Status  string // a status ("404"), a class ("4xx"), "error" (Entry.Error set) or "dropped"
	Dedup   string // "exact", "near", "any" (either) or "none" (neither)
	Dropped string // a drop reason, or "any"
	// Usage: "any" (the site stated something of the use of the
	// content), "denied" (it denies the crawl's purpose), or a
	// "category=allow|deny" pair the entry's Usage holds ("ai-train=deny")
	Usage string
	Since time.Time // entries at or after this time
	// OnBad, if set, is told of each malformed complete line, by file
	// path and line number (from 1); the scan goes on. If nil, Scan counts
	// them and returns a *BadLinesError at the end.
	OnBad func(file string, line int, err error)
}

// Validate reports each field whose value is not one Match knows.
func (f Filter) Validate() error {
	var errs []error
	check := func(field, list string, ok func(string) bool, want string) {
		if list == "" {
			return
		}
		for v := range strings.SplitSeq(list, ",") {
			if !ok(v) {
				errs = append(errs, fmt.Errorf("crawllog: filter %s %q: want %s", field, v, want))
			}
		}
	}
	check("Status", f.Status, func(v string) bool {
		if v == StatusError || v == StatusDropped {
			return true
		}
		if len(v) == 3 && v[0] >= '1' && v[0] <= '5' && v[1:] == "xx" {
			return true
		}
		n, err := strconv.Atoi(v)
		return err == nil && n >= 100 && n <= 999
	}, `a status (200), a class (1xx to 5xx), "error" or "dropped"`)
	check("Dedup", f.Dedup, func(v string) bool {
		return v == DedupExact || v == DedupNear || v == DedupNotModified || v == "any" || v == "none"
	}, `"exact", "near", "not-modified", "any" or "none"`)
	check("Dropped", f.Dropped, func(v string) bool {
		return v == "any" || slices.Contains(DropReasons, v)
	}, `"any" or one of `+strings.Join(DropReasons, ", "))
	check("Usage", f.Usage, func(v string) bool {
		cat, pref, ok := strings.Cut(v, "=")
		return v == "any" || v == "denied" || ok && cat != "" && (pref == "allow" || pref == "deny")
	}, `"any", "denied" or a category=allow|deny pair such as ai-train=deny`)
	return errors.Join(errs...)
}

// Match reports whether e passes f. A value Validate refuses matches
// nothing.
func (f Filter) Match(e *Entry) bool {
	if f.Job != 0 && e.Job != f.Job {
		return false
	}
	if !f.Since.IsZero() && e.Time.Before(f.Since) {
		return false
	}
	if f.Status != "" && !anyOf(f.Status, func(v string) bool { return statusMatch(v, e) }) {
		return false
	}
	if f.Dedup != "" && !anyOf(f.Dedup, func(v string) bool {
		switch v {
		case "any":
			return e.Dedup != ""
		case "none":
			return e.Dedup == ""
		}
		return e.Dedup == v
	}) {
		return false
	}
	if f.Dropped != "" && !anyOf(f.Dropped, func(v string) bool {
		return e.Dropped != "" && (v == "any" || e.Dropped == v)
	}) {
		return false
	}
	if f.Host != "" && !strings.EqualFold(hostOf(e.URL), stripPort(f.Host)) {
		return false
	}
	if f.Usage != "" && !anyOf(f.Usage, func(v string) bool {
		switch v {
		case "any":
			return e.Usage != ""
		case "denied":
			return e.Denied != ""
		}
		return slices.Contains(strings.Split(e.Usage, ","), v)
	}) {
		return false
	}
	return true
}

func anyOf(list string, match func(string) bool) bool {
	for v := range strings.SplitSeq(list, ",") {
		if match(v) {
			return true
		}
	}
	return false
}

func statusMatch(v string, e *Entry) bool {
	switch v {
	case StatusError:
		return e.Error != ""
	case StatusDropped:
		return e.Dropped != ""
	}
	if e.Status == 0 {
		return false
	}
	if len(v) == 3 && v[1:] == "xx" {
		return e.Status/100 == int(v[0]-'0')
	}
	return strconv.Itoa(e.Status) == v
}

// hostOf is the host of an absolute URL, without port or brackets, or "".
func hostOf(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

func stripPort(h string) string {
	if host, _, err := net.SplitHostPort(h); err == nil {
		return host
	}
	return strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
}

// BadLinesError is Scan's error when it skipped malformed lines and the
// Filter had no OnBad.
type BadLinesError struct {
	N     int    // malformed lines skipped
	First string // the first, as "FILE:LINE: error"
}

func (e *BadLinesError) Error() string {
	return fmt.Sprintf("crawllog: %d malformed line(s) skipped; the first: %s", e.N, e.First)
}

// maxLine bounds a line that a reader takes in; a longer one is malformed.
// A variable for tests.
var maxLine = 16 << 20

// reader reads one file's complete lines as they are written.
type reader struct {
	path    string
	f       *os.File
	fi      os.FileInfo // f's, to know it again after a rename
	br      *bufio.Reader
	line    int    // lines read
	partial []byte // the unterminated end read so far
	long    bool   // partial passed maxLine and was cut
}

func openReader(path string) (*reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &reader{path: path, f: f, fi: fi, br: bufio.NewReaderSize(f, 64<<10)}, nil
}

// next reads what was written since the last call, line by line, to the
// end of the file: each complete line that parses and matches f is given
// to fn, malformed ones to bad. A partial last line is kept for the next
// call. It stops at fn's first error and returns it.
func (r *reader) next(f *Filter, fn func(Entry) error, bad func(file string, line int, err error)) error {
	for {
		chunk, err := r.br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) || (err == io.EOF && len(chunk) > 0) {
			if len(r.partial)+len(chunk) > maxLine {
				r.long = true
			} else {
				r.partial = append(r.partial, chunk...)
			}
			if err == io.EOF {
				return nil
			}
			continue
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("crawllog: %w", err)
		}
		line := chunk
		long := r.long || len(r.partial)+len(chunk) > maxLine
		if len(r.partial) > 0 && !long {
			line = append(r.partial, chunk...)
		}
		r.line++
		r.partial, r.long = r.partial[:0], false
		if long {
			bad(r.path, r.line, fmt.Errorf("%w: longer than %d bytes", ErrMalformed, maxLine))
			continue
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		e, perr := Parse(line)
		if perr != nil {
			bad(r.path, r.line, perr)
			continue
		}
		if f.Match(&e) {
			if err := fn(e); err != nil {
				return err
			}
		}
	}
}

// finish reports a partial last line of a file that will not grow.
func (r *reader) finish(bad func(file string, line int, err error)) {
	if len(r.partial) > 0 || r.long {
		r.line++
		bad(r.path, r.line, fmt.Errorf("%w: the file ends inside this line", ErrMalformed))
	}
	r.partial, r.long = nil, false
}

func (r *reader) close() { r.f.Close() }

// badSink is a Filter's OnBad, or a counter that becomes a BadLinesError.
type badSink struct {
	f     func(string, int, error)
	n     int
	first string
}

func (s *badSink) report(file string, line int, err error) {
	if s.f != nil {
		s.f(file, line, err)
		return
	}
	if s.n == 0 {
		s.first = fmt.Sprintf("%s:%d: %v", file, line, err)
	}
	s.n++
}

func (s *badSink) err() error {
	if s.n == 0 {
		return nil
	}
	return &BadLinesError{N: s.n, First: s.first}
}

// Scan reads every file of the log in order (Files) and calls fn with each
// entry that f matches, in the order written. A partial last line of
// crawl.log (a crawl still writing) is left out silently; malformed lines
// go to f.OnBad, or are counted and returned as a *BadLinesError once all
// the rest was read. It stops at fn's first error and returns it. A
// rotation during Scan is followed as Follow follows it.
func Scan(dir string, f Filter, fn func(Entry) error) error {
	if err := f.Validate(); err != nil {
		return err
	}
	if _, err := os.Stat(dir); err != nil {
		return fmt.Errorf("crawllog: %w", err)
	}
	sink := &badSink{f: f.OnBad}
	fl := &follower{dir: dir, f: &f, fn: fn, bad: sink.report}
	defer fl.closeAll()
	if err := fl.poll(); err != nil {
		return err
	}
	return sink.err()
}

// FollowInterval is how often Follow looks for new lines.
const FollowInterval = 200 * time.Millisecond

// Follow is Scan that does not stop at the end: it reads every file of
// the log in order, then keeps reading lines as they are written, every
// FollowInterval, through rotations, until ctx is done (it returns
// ctx.Err()) or fn returns an error (it returns that). A directory that
// does not exist yet is an empty log. Malformed lines go to f.OnBad, or
// are skipped.
func Follow(ctx context.Context, dir string, f Filter, fn func(Entry) error) error {
	if err := f.Validate(); err != nil {
		return err
	}
	fl := &follower{dir: dir, f: &f, fn: fn, bad: (&badSink{f: f.OnBad}).report}
	defer fl.closeAll()
	t := time.NewTicker(FollowInterval)
	defer t.Stop()
	for {
		if err := fl.poll(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// follower is Follow's state between polls. Files are known by identity
// (os.SameFile), not name, since crawl.log is renamed when it rotates.
type follower struct {
	dir  string
	f    *Filter
	fn   func(Entry) error
	bad  func(string, int, error)
	cur  *reader       // crawl.log as it was opened; perhaps rotated since
	read []os.FileInfo // rotated files read to their end
}

func (fl *follower) closeAll() {
	if fl.cur != nil {
		fl.cur.close()
	}
}

func (fl *follower) seen(fi os.FileInfo) bool {
	return slices.ContainsFunc(fl.read, func(r os.FileInfo) bool { return os.SameFile(r, fi) })
}

// poll reads the lines written since the last poll, file by file in the
// order written.
func (fl *follower) poll() error {
	for range 100 { // rotations racing with this poll; the next poll goes on
		rs, err := rotatedFiles(fl.dir)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		} else if err != nil {
			return err
		}
		var still []os.FileInfo
		for _, r := range rs {
			path := filepath.Join(fl.dir, r.name)
			fi, err := os.Stat(path)
			if err != nil {
				continue // removed meanwhile
			}
			still = append(still, fi)
			switch {
			case fl.seen(fi):
			case fl.cur != nil && os.SameFile(fi, fl.cur.fi): // crawl.log, rotated: read its end
				err := fl.cur.next(fl.f, fl.fn, fl.bad)
				fl.cur.path = path
				fl.cur.finish(fl.bad)
				fl.cur.close()
				fl.cur = nil
				fl.read = append(fl.read, fi)
				if err != nil {
					return err
				}
			default:
				r, err := openReader(path)
				if err != nil {
					continue
				}
				err = r.next(fl.f, fl.fn, fl.bad)
				r.finish(fl.bad)
				r.close()
				fl.read = append(fl.read, fi)
				if err != nil {
					return err
				}
			}
		}
		fl.read = slices.DeleteFunc(fl.read, func(r os.FileInfo) bool {
			return !slices.ContainsFunc(still, func(fi os.FileInfo) bool { return os.SameFile(r, fi) })
		})
		if fl.cur == nil {
			r, err := openReader(filepath.Join(fl.dir, Name))
			if errors.Is(err, os.ErrNotExist) {
				return nil
			} else if err != nil {
				return fmt.Errorf("crawllog: %w", err)
			}
			// A file rotated before this crawl.log was created, but after
			// the listing above, must be read first: list again.
			if fl.unread(r.fi) {
				r.close()
				continue
			}
			fl.cur = r
		}
		return fl.cur.next(fl.f, fl.fn, fl.bad)
	}
	return nil
}

// unread reports whether a rotated file other than cur is not read yet.
func (fl *follower) unread(cur os.FileInfo) bool {
	rs, err := rotatedFiles(fl.dir)
	if err != nil {
		return false
	}
	for _, r := range rs {
		fi, err := os.Stat(filepath.Join(fl.dir, r.name))
		if err == nil && !os.SameFile(fi, cur) && !fl.seen(fi) {
			return true
		}
	}
	return false
}
