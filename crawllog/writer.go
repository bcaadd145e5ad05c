package crawllog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

// Name is the file a Writer appends to, in its directory.
const Name = "crawl.log"

// rotatedLayout is the time in a rotated file's name:
// crawl-20261202T030405Z-0000.log.
const rotatedLayout = "20060102T150405Z"

// Options configures a Writer. A zero field takes the default named.
type Options struct {
	// MaxBytes is the most bytes crawl.log holds: a line that would take
	// it past MaxBytes first rotates it (a line longer than MaxBytes gets
	// a file of its own). Default 64 MiB; negative means never rotate.
	MaxBytes int64
	// BufferBytes is how many bytes of lines Write keeps in memory before
	// the Write that passes it writes them out. Default 256 KiB.
	BufferBytes int
	// FlushInterval is how often a background goroutine writes out the
	// buffered lines, so that the log can be read while a crawl runs.
	// Default 1s; negative means no background writes (only a full
	// buffer, Flush, Sync and Close write).
	FlushInterval time.Duration
	// Now is the clock that names rotated files. Default time.Now.
	Now func() time.Time
	// Logger gets the first I/O error of each run of failures. Default
	// slog.Default().
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.MaxBytes == 0 {
		o.MaxBytes = 64 << 20
	}
	if o.BufferBytes == 0 {
		o.BufferBytes = 256 << 10
	}
	if o.FlushInterval == 0 {
		o.FlushInterval = time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// Validate reports every field that is out of range.
func (o Options) Validate() error {
	var errs []error
	bad := func(field string, v any, why string) {
		errs = append(errs, fmt.Errorf("crawllog: option %s = %v: %s", field, v, why))
	}
	if o.BufferBytes < 0 {
		bad("BufferBytes", o.BufferBytes, "negative")
	}
	if o.FlushInterval > 0 && o.FlushInterval < time.Millisecond {
		bad("FlushInterval", o.FlushInterval, "below 1ms (negative turns background writes off)")
	}
	return errors.Join(errs...)
}

// ErrClosed is returned by Flush and Sync after Close.
var ErrClosed = errors.New("crawllog: writer closed")

// Stats are a Writer's counters since Open.
type Stats struct {
	Lines     int64 // lines written to the files
	Bytes     int64 // bytes written to the files
	Dropped   int64 // lines lost: to a failed write, or given to Write after Close
	Rotations int64 // files rotated
}

// Writer appends entries to DIR/crawl.log and rotates it. Write is safe
// for concurrent use and does not wait for the disk unless its line fills
// the buffer; the other methods are safe for concurrent use too.
//
// A failed write is not retried: its lines are counted as Dropped, the
// error is logged (once per run of failures) and returned by the next
// Flush, Sync or Close, and the next write tries again, after a newline if
// the failure left a partial line (which readers then report as a
// malformed line).
//
// Lock order: ioMu (the file) → mu (the buffer).
type Writer struct {
	dir, path string
	opts      Options

	mu     sync.Mutex // guards buf and closed
	buf    []byte
	closed bool // Write drops its entry

	ioMu    sync.Mutex // guards the rest
	f       *os.File   // nil after a failed rotation or Close
	size    int64      // of crawl.log
	spare   []byte     // the buffer not in use, swapped with buf
	needNL  bool       // crawl.log ends in a partial line
	lastRot time.Time  // the time in the newest rotated file's name
	lastSeq int        // and its sequence number
	err     error      // the first I/O error not yet returned
	failing bool       // the last write failed; the failure was logged
	done    bool       // Close has run

	lines, bytes, dropped, rotations atomic.Int64

	stop    chan struct{}
	stopped chan struct{}
}

// Open opens dir/crawl.log for appending, creating dir and the file if
// need be, and starts the background flush. Lines written before a
// restart stay; if the file ends in a partial line (a crash mid-write),
// the first line written starts on a new line.
func Open(dir string, opts Options) (*Writer, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("crawllog: %w", err)
	}
	w := &Writer{dir: dir, path: filepath.Join(dir, Name), opts: opts}
	if err := w.open(); err != nil {
		return nil, err
	}
	if size := w.size; size > 0 {
		var last [1]byte
		if _, err := w.f.ReadAt(last[:], size-1); err != nil {
			w.f.Close()
			return nil, fmt.Errorf("crawllog: read the end of %s: %w", w.path, err)
		}
		w.needNL = last[0] != '\n'
	}
	rotated, err := rotatedFiles(dir)
	if err != nil {
		w.f.Close()
		return nil, err
	}
	if n := len(rotated); n > 0 {
		w.lastRot, w.lastSeq = rotated[n-1].t, rotated[n-1].seq
	}
	if opts.FlushInterval > 0 {
		w.stop, w.stopped = make(chan struct{}), make(chan struct{})
		go w.flushLoop()
	}
	return w, nil
}

// open opens crawl.log for appending.
func (w *Writer) open() error {
	f, err := os.OpenFile(w.path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("crawllog: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("crawllog: %w", err)
	}
	w.f, w.size, w.needNL = f, fi.Size(), false
	return nil
}

func (w *Writer) flushLoop() {
	defer close(w.stopped)
	t := time.NewTicker(w.opts.FlushInterval)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
			w.ioMu.Lock()
			w.writeOut()
			w.ioMu.Unlock()
		}
	}
}

// Dir is the directory of the log files.
func (w *Writer) Dir() string { return w.dir }

// Write appends e to the log. After Close it drops e (counted in
// Stats.Dropped); ErrClosed comes from Flush and Sync.
func (w *Writer) Write(e *Entry) {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		w.dropped.Add(1)
		return
	}
	w.buf = AppendJSON(w.buf, e)
	full := len(w.buf) >= w.opts.BufferBytes
	w.mu.Unlock()
	if full {
		w.ioMu.Lock()
		w.writeOut()
		w.ioMu.Unlock()
	}
}

// Flush writes the buffered lines to the file, and returns the first I/O
// error since the last call that returned one.
func (w *Writer) Flush() error {
	w.ioMu.Lock()
	defer w.ioMu.Unlock()
	if w.done {
		return ErrClosed
	}
	w.writeOut()
	return w.takeErr()
}

// Sync is Flush, then fsync of crawl.log.
func (w *Writer) Sync() error {
	w.ioMu.Lock()
	defer w.ioMu.Unlock()
	if w.done {
		return ErrClosed
	}
	w.writeOut()
	if w.f != nil {
		if err := w.f.Sync(); err != nil {
			w.fail(err)
		}
	}
	return w.takeErr()
}

// Close stops the background flush, writes the buffered lines, fsyncs
// and closes crawl.log. It returns the first I/O error not yet returned;
// a second Close returns nil.
func (w *Writer) Close() error {
	w.mu.Lock()
	already := w.closed
	w.closed = true
	w.mu.Unlock()
	if already {
		return nil
	}
	if w.stop != nil {
		close(w.stop)
		<-w.stopped
	}
	w.ioMu.Lock()
	defer w.ioMu.Unlock()
	w.writeOut()
	if w.f != nil {
		if err := w.f.Sync(); err != nil {
			w.fail(err)
		}
		if err := w.f.Close(); err != nil {
			w.fail(err)
		}
		w.f = nil
	}
	w.done = true
	return w.takeErr()
}

// Stats returns the counters.
func (w *Writer) Stats() Stats {
	return Stats{Lines: w.lines.Load(), Bytes: w.bytes.Load(), Dropped: w.dropped.Load(), Rotations: w.rotations.Load()}
}

// takeErr returns the error kept by fail, and forgets it. Called with ioMu.
func (w *Writer) takeErr() error {
	err := w.err
	w.err = nil
	if err != nil {
		return fmt.Errorf("crawllog: %w", err)
	}
	return nil
}

// fail keeps err for the next call that returns one and logs it if it
// begins a run of failures. Called with ioMu.
func (w *Writer) fail(err error) {
	if w.err == nil {
		w.err = err
	}
	if !w.failing {
		w.failing = true
		w.opts.Logger.Error("crawl log: I/O failed; lines are dropped until a write succeeds", "dir", w.dir, "err", err)
	}
}

// writeOut swaps the buffers and writes the lines that were buffered.
// Writes go on into the other buffer meanwhile. Called with ioMu.
func (w *Writer) writeOut() {
	w.mu.Lock()
	b := w.buf
	w.buf = w.spare[:0]
	w.mu.Unlock()
	if len(b) > 0 {
		if w.done {
			w.dropped.Add(int64(bytes.Count(b, []byte{'\n'})))
		} else {
			w.writeLines(b)
		}
	}
	w.spare = b[:0]
}

// writeLines writes whole lines to crawl.log, rotating it before a line
// that would take it past MaxBytes. Called with ioMu.
func (w *Writer) writeLines(b []byte) {
	limit := w.opts.MaxBytes
	for len(b) > 0 {
		if w.f == nil {
			if err := w.open(); err != nil {
				w.fail(err)
				w.dropped.Add(int64(bytes.Count(b, []byte{'\n'})))
				return
			}
		}
		chunk := b
		if limit > 0 && w.size+int64(len(b)) > limit {
			end := -1
			if room := limit - w.size; room > 0 {
				end = bytes.LastIndexByte(b[:room], '\n')
			}
			if end < 0 && w.size > 0 {
				if err := w.rotate(); err != nil {
					w.fail(err)
					limit = -1 // write on past MaxBytes rather than lose lines
				}
				continue
			}
			if end < 0 { // one line longer than MaxBytes, in an empty file
				end = bytes.IndexByte(b, '\n')
			}
			chunk = b[:end+1]
		}
		if !w.write(chunk) {
			w.dropped.Add(int64(bytes.Count(b[len(chunk):], []byte{'\n'})))
			return
		}
		b = b[len(chunk):]
	}
}

// write writes whole lines to crawl.log, after a newline if it ends in a
// partial line, and reports whether all were written. Called with ioMu.
func (w *Writer) write(lines []byte) bool {
	if w.needNL {
		n, err := w.f.Write([]byte{'\n'})
		w.size += int64(n)
		if err != nil {
			w.fail(err)
			w.dropped.Add(int64(bytes.Count(lines, []byte{'\n'})))
			return false
		}
		w.needNL = false
	}
	n, err := w.f.Write(lines)
	w.size += int64(n)
	w.bytes.Add(int64(n))
	done := int64(bytes.Count(lines[:n], []byte{'\n'}))
	w.lines.Add(done)
	if err == nil && n < len(lines) {
		err = io.ErrShortWrite
	}
	if err != nil {
		w.needNL = n > 0 && lines[n-1] != '\n'
		w.dropped.Add(int64(bytes.Count(lines[n:], []byte{'\n'})))
		w.fail(err)
		return false
	}
	w.failing = false
	return true
}

// rotate closes crawl.log (after an fsync), renames it to its rotated
// name and opens a new one. Called with ioMu.
func (w *Writer) rotate() error {
	name := w.rotatedName()
	syncErr := w.f.Sync()
	closeErr := w.f.Close()
	w.f = nil
	if err := errors.Join(syncErr, closeErr); err != nil {
		return err
	}
	if err := os.Rename(w.path, filepath.Join(w.dir, name)); err != nil {
		return err
	}
	w.rotations.Add(1)
	if d, err := os.Open(w.dir); err == nil { // make the rename durable; best effort
		d.Sync()
		d.Close()
	}
	return w.open()
}

// rotatedName returns the next rotated file's name: the time of the
// rotation, never before the previous rotation's (so that names sort in
// rotation order even if the clock steps back), and a sequence number
// that tells apart rotations within one second.
func (w *Writer) rotatedName() string {
	t := w.opts.Now().UTC().Truncate(time.Second)
	seq := 0
	if !t.After(w.lastRot) {
		t, seq = w.lastRot, w.lastSeq+1
	}
	for {
		name := rotatedFileName(t, seq)
		if _, err := os.Lstat(filepath.Join(w.dir, name)); errors.Is(err, os.ErrNotExist) {
			w.lastRot, w.lastSeq = t, seq
			return name
		}
		seq++
	}
}

func rotatedFileName(t time.Time, seq int) string {
	return fmt.Sprintf("crawl-%s-%04d.log", t.Format(rotatedLayout), seq)
}
