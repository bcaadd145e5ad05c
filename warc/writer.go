// Package warc writes HTTP exchanges to WARC 1.1 files (.warc.gz), one gzip
// member per record, rotating files by size. Records are built with gowarc v3;
// file handling (naming, rotation, recovery after a failed write) is done here.
// A Writer is safe for concurrent use. Invariants: every file begins with a
// warcinfo record, a file only ever holds whole exchanges (response then
// request), and a file still being written carries the suffix ".open".
//
// # On-disk format
//
// This layout is part of the on-disk format (format version: WARC/1.1).
//
//	DIR/PREFIX-YYYYMMDDhhmmss-NNNNN.warc.gz        finished file
//	DIR/PREFIX-YYYYMMDDhhmmss-NNNNN.warc.gz.open   being written, or left by a crash
//
// The time stamp is the UTC time the file was begun; NNNNN is a serial that
// starts at 00000 for each Writer and skips names already present in DIR.
//
//	┌ gzip member ┐┌ gzip member ┐┌ gzip member ┐┌ gzip member ┐┌ gzip member ┐
//	│  warcinfo   ││ response #1 ││ request #1  ││ response #2 ││ request #2  │ ...
//	└─────────────┘└─────────────┘└─────────────┘└─────────────┘└─────────────┘
//
// Each member holds exactly one record:
//
//	"WARC/1.1" CRLF *(field ": " value CRLF) CRLF block CRLF CRLF
//
// A response block is the status line and headers as received, CRLF, and the
// body as transferred (content-encoding kept, transfer-encoding removed); a
// request block is the request as sent. WARC-Block-Digest and
// WARC-Payload-Digest are "sha1:" + base32. Response and request name each
// other in WARC-Concurrent-To and name the file's warcinfo in
// WARC-Warcinfo-ID. A Location's Offset and Length are those of the
// response's gzip member, so the member can be read on its own.
//
// # Failures
//
// If writing an exchange fails, the file is cut back to the end of its last
// complete record, closed and renamed as on Close; the error names the file,
// and the next Write begins a new file. If it cannot be cut back, it keeps
// its ".open" suffix (and is listed by Files under that name) so the broken
// tail is recognisable.
package warc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// OpenSuffix ends the name of a file that is still being written (or was
// being written when the process died).
const OpenSuffix = ".open"

// Extension ends the name of every finished WARC file.
const Extension = ".warc.gz"

// ErrClosed is returned by Write after Close.
var ErrClosed = errors.New("warc: writer is closed")

// Exchange is one HTTP request and its response, as they went over the wire.
type Exchange struct {
	// URL is the WARC-Target-URI. Required; no spaces or control characters.
	URL string
	// IP is the WARC-IP-Address of the server; empty if unknown.
	IP string
	// Date is when the request was sent (WARC-Date of both records). If
	// zero, the writer's clock at Write is used.
	Date time.Time
	// Request is the raw HTTP request as sent: request line, headers, CRLF
	// CRLF, and the body if any. Required.
	Request []byte
	// ResponseHeader is the status line and headers as received, ending
	// with CRLF CRLF. Required.
	ResponseHeader []byte
	// Body is the payload exactly as transferred: content-encoding kept,
	// transfer-encoding removed. May be empty.
	Body []byte
	// Truncated is "" or a WARC-Truncated reason: "length", "time",
	// "disconnect" or "unspecified".
	Truncated string
}

// Location is where a response record lives, for a later CDXJ index.
type Location struct {
	// File is the path (Options.Dir joined with the name) the file has once
	// it is finished, without OpenSuffix.
	File string
	// Offset is the byte offset of the record's gzip member in File.
	Offset int64
	// Length is the length in bytes of that gzip member.
	Length int64
}

// file is what the Writer needs of an open file; tests substitute one that fails.
type file interface {
	io.Writer
	Sync() error
	Close() error
	Truncate(size int64) error
}

// maxPooledBuffer bounds the encoder buffers kept for reuse.
const maxPooledBuffer = 4 << 20

// Writer writes exchanges to a series of WARC files. Create it with NewWriter.
// Records are built and compressed outside mu, so concurrent Writes compress
// in parallel; mu covers the file. Lock order: mu, then newBuilderMu.
type Writer struct {
	opts     Options
	create   func(name string) (file, error)
	encoders sync.Pool // of *encoder; buffers above maxPooledBuffer are dropped

	mu        sync.Mutex
	closed    bool
	f         file   // current file, nil if none
	path      string // final path of the current file
	size      int64  // bytes in the current file, all whole records
	exchanges int    // exchanges in the current file
	infoID    string // WARC-Record-ID of the current file's warcinfo
	serial    int    // next file serial
	files     []string
}

// NewWriter checks opts, creates opts.Dir if missing and returns a Writer.
// The first file is begun by the first Write.
func NewWriter(opts Options) (*Writer, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("warc: create directory %s: %w", opts.Dir, err)
	}
	w := &Writer{opts: opts, create: createFile}
	w.encoders.New = func() any { return newEncoder() }
	return w, nil
}

func createFile(name string) (file, error) {
	return os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
}

// Write appends the response record of ex, then its request record, each its
// own gzip member, to the current file, beginning a new file first if the
// pair would take the current one past MaxFileSize. When Write returns nil,
// both records are whole in the file (handed to the OS, not fsynced). It
// returns where the response record is.
func (w *Writer) Write(ex *Exchange) (Location, error) {
	if err := ex.validate(); err != nil {
		return Location{}, err
	}

	// Learn the current warcinfo ID (beginning a file if needed) so that the
	// records can be built and compressed outside the lock.
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return Location{}, ErrClosed
	}
	if w.f == nil {
		if err := w.beginLocked(); err != nil {
			w.mu.Unlock()
			return Location{}, err
		}
	}
	infoID := w.infoID
	w.mu.Unlock()

	date := ex.Date
	if date.IsZero() {
		date = w.opts.Now()
	}
	resp, req, err := buildExchange(ex, date, infoID)
	if err != nil {
		return Location{}, fmt.Errorf("warc: write %s: %w", ex.URL, err)
	}
	defer func() { _ = resp.Close(); _ = req.Close() }()
	enc := w.encoders.Get().(*encoder)
	defer func() {
		if enc.buf.Cap() <= maxPooledBuffer {
			w.encoders.Put(enc)
		}
	}()
	if err := enc.encode(resp, req); err != nil {
		return Location{}, fmt.Errorf("warc: write %s: %w", ex.URL, err)
	}

	w.mu.Lock()
	defer w.mu.Unlock()
	for {
		if w.closed {
			return Location{}, ErrClosed
		}
		if w.f != nil && w.exchanges > 0 && w.size+int64(enc.buf.Len()) > w.opts.MaxFileSize {
			if err := w.finishLocked(); err != nil {
				return Location{}, fmt.Errorf("warc: write %s: rotate: %w", ex.URL, err)
			}
		}
		if w.f == nil {
			if err := w.beginLocked(); err != nil {
				return Location{}, fmt.Errorf("warc: write %s: %w", ex.URL, err)
			}
		}
		if infoID == w.infoID {
			break
		}
		// The file changed since the records were built: point them at the
		// new warcinfo and compress again (the size may change slightly, so
		// the rotation check runs again).
		infoID = w.infoID
		resp.WarcHeader().Set("WARC-Warcinfo-ID", infoID)
		req.WarcHeader().Set("WARC-Warcinfo-ID", infoID)
		if err := enc.encode(resp, req); err != nil {
			return Location{}, fmt.Errorf("warc: write %s: %w", ex.URL, err)
		}
	}

	loc := Location{File: w.path, Offset: w.size, Length: enc.lens[0]}
	if _, err := w.f.Write(enc.buf.Bytes()); err != nil {
		name := w.path + OpenSuffix
		return Location{}, errors.Join(
			fmt.Errorf("warc: write %s to %s: %w", ex.URL, name, err),
			w.abandonLocked())
	}
	w.size += int64(enc.buf.Len())
	w.exchanges++
	return loc, nil
}

// Sync flushes the current file to stable storage (fsync). It does nothing
// if no file is open.
func (w *Writer) Sync() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return nil
	}
	if err := w.f.Sync(); err != nil {
		return fmt.Errorf("warc: sync %s: %w", w.path+OpenSuffix, err)
	}
	return nil
}

// Close finishes the current file (close, then rename to drop OpenSuffix).
// Write after Close returns ErrClosed; a second Close returns nil.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	if w.f == nil {
		return nil
	}
	return w.finishLocked()
}

// Files returns the paths of the files begun so far, in order, under their
// finished names; the current one exists with OpenSuffix until it is
// finished. A file that could not be repaired after a failed write is listed
// under its OpenSuffix name.
func (w *Writer) Files() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.files...)
}

// beginLocked creates the next file and writes its warcinfo record.
func (w *Writer) beginLocked() error {
	now := w.opts.Now()
	stamp := now.UTC().Format("20060102150405")
	var (
		f    file
		path string
	)
	for tries := 0; ; tries++ {
		name := fmt.Sprintf("%s-%s-%05d%s", w.opts.Prefix, stamp, w.serial, Extension)
		w.serial++
		path = filepath.Join(w.opts.Dir, name)
		_, statErr := os.Lstat(path)
		var err error
		if statErr == nil {
			err = fs.ErrExist // finished by an earlier writer
		} else {
			f, err = w.create(path + OpenSuffix)
		}
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) || tries >= 1000 {
			return fmt.Errorf("warc: create %s: %w", path+OpenSuffix, err)
		}
	}

	info, err := buildWarcinfo(filepath.Base(path), now, &w.opts)
	if err == nil {
		defer func() { _ = info.Close() }()
		enc := newEncoder()
		if err = enc.encode(info); err == nil {
			_, err = f.Write(enc.buf.Bytes())
		}
		if err == nil {
			w.f, w.path, w.size, w.exchanges = f, path, int64(enc.buf.Len()), 0
			w.infoID = info.WarcHeader().Get("WARC-Record-ID")
			w.files = append(w.files, path)
			return nil
		}
	}
	// A file without its warcinfo is of no use: remove it.
	_ = f.Close()
	_ = os.Remove(path + OpenSuffix)
	return fmt.Errorf("warc: write warcinfo to %s: %w", path+OpenSuffix, err)
}

// finishLocked closes the current file and renames it to its finished name.
func (w *Writer) finishLocked() error {
	f, path := w.f, w.path
	w.f = nil
	if err := f.Close(); err != nil {
		w.files[len(w.files)-1] = path + OpenSuffix
		return fmt.Errorf("warc: close %s: %w", path+OpenSuffix, err)
	}
	if err := os.Rename(path+OpenSuffix, path); err != nil {
		w.files[len(w.files)-1] = path + OpenSuffix
		return fmt.Errorf("warc: rename %s: %w", path+OpenSuffix, err)
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("warc: rename %s: %w", path+OpenSuffix, err)
	}
	return nil
}

// abandonLocked ends the current file after a failed write: it cuts the
// partial record off and finishes the file, or, if it cannot, closes it and
// leaves it under its OpenSuffix name.
func (w *Writer) abandonLocked() error {
	if err := w.f.Truncate(w.size); err != nil {
		path := w.path
		_ = w.f.Close()
		w.f = nil
		w.files[len(w.files)-1] = path + OpenSuffix
		return fmt.Errorf("warc: cut back %s to %d bytes (left as is): %w", path+OpenSuffix, w.size, err)
	}
	return w.finishLocked()
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// truncReasons are the WARC-Truncated values of WARC 1.1.
var truncReasons = map[string]bool{"length": true, "time": true, "disconnect": true, "unspecified": true}

// validate checks that ex can be written as two well-formed records.
func (ex *Exchange) validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("warc: write %q: %s", ex.URL, fmt.Sprintf(format, args...))
	}
	switch {
	case ex.URL == "":
		return bad("URL is empty")
	case strings.ContainsFunc(ex.URL, isCTLOrSpace):
		return bad("URL contains a space or control character")
	case !hasScheme(ex.URL):
		return bad("URL is not absolute (no scheme)")
	case ex.Truncated != "" && !truncReasons[ex.Truncated]:
		return bad("Truncated %q is not a WARC-Truncated reason", ex.Truncated)
	case !bytes.HasPrefix(ex.ResponseHeader, []byte("HTTP/")):
		return bad("ResponseHeader does not begin with a status line (HTTP/...)")
	case !bytes.HasSuffix(ex.ResponseHeader, []byte("\n\r\n")) && !bytes.HasSuffix(ex.ResponseHeader, []byte("\n\n")):
		return bad("ResponseHeader does not end with an empty line")
	case len(ex.Request) == 0:
		return bad("Request is empty")
	case !bytes.Contains(ex.Request, []byte("\n\r\n")) && !bytes.Contains(ex.Request, []byte("\n\n")):
		return bad("Request has no empty line after its headers")
	}
	if ex.IP != "" {
		if _, err := netip.ParseAddr(ex.IP); err != nil {
			return bad("IP: %v", err)
		}
	}
	return nil
}

// hasScheme reports whether u begins with an RFC 3986 scheme and ':'.
func hasScheme(u string) bool {
	for i := 0; i < len(u); i++ {
		c := u[i]
		switch {
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		case i > 0 && c == ':':
			return true
		default:
			return false
		}
	}
	return false
}
