// Package warc writes HTTP exchanges to WARC 1.1 files (.warc.gz), one gzip
// member per record, rotating files by size. Records are serialised here
// (WARC 1.1 fields, SHA-256 block and payload digests; see record), as is file
// handling (naming, rotation, recovery after a failed write); the tests read
// every file back with gowarc v3's strict reader and with warcio.
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
// WARC-Payload-Digest are "sha256:" + base32. Both records carry one
// WARC-Protocol field per protocol the exchange names (h2, tls/1.3). Response and request name each
// other in WARC-Concurrent-To and name the file's warcinfo in
// WARC-Warcinfo-ID. A Location's Offset and Length are those of the
// response's gzip member, so the member can be read on its own.
//
// # Durability
//
// Write returns once both records are whole in the file, handed to the OS.
// Durable(loc) yields nil once the exchange is on stable storage: its bytes
// fsynced, and the directory entry of its file synced. Exchanges are
// numbered in the order they are written (a Location carries its number),
// and one syncer goroutine makes them durable in groups, in two stages
// like the store's committer:
//
//	Write ── mu: append to the current file, seq++ ──▶ current file
//	   │ rotation: the full file is handed over (retired), a new one begun
//	   ▼
//	retired files ─┐
//	Durable ── mu: waiter ──▶ wake (cap 1) ──▶ syncer
//	   syncer: under mu, note N = seq of the last exchange written and take
//	   the retired files; without mu, fsync each retired file, close it and
//	   rename it to drop OpenSuffix, fsync the current file, sync the
//	   directory if a file was created or renamed; under mu, acknowledge
//	   every waiter up to N.
//
// Writes go on appending while an fsync runs; waiters that arrive
// meanwhile are covered by the next round. The waiters are bounded by the
// callers blocked on them; the retired files by the rotations between two
// rounds. If an fsync (of a file or the directory), or the close or rename
// of a finished file, fails, the writer stops: that error, naming the file,
// is the outcome of every pending and later Durable and of every later
// Write, and files not yet made durable are left with OpenSuffix for
// Recover.
//
// # Failures
//
// If writing an exchange fails, the file is cut back to the end of its last
// complete record and finished (fsynced, closed and renamed) as on
// rotation; the error names the file, and the next Write begins a new file.
// The exchanges already in it are still made durable. If it cannot be cut
// back (the file system has no Truncate), it keeps its ".open" suffix (and
// is listed by Files under that name) so the broken tail is recognisable;
// Recover cuts it.
package warc

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
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
	// Protocols are the protocols the exchange went over, highest layer
	// first ("h2", "tls/1.3"), each written as a WARC-Protocol field of
	// both records (see record.go). Nil: no such field. Each is a
	// protocol id of the WARC-Protocol extension's form: lower-case
	// letters, digits, '.', '/' and '-'.
	Protocols []string
	// PayloadSHA256, if set, is the SHA-256 of Body (32 bytes), which the
	// caller has computed anyway: the writer then takes the payload digest
	// from it instead of hashing Body again. The writer cannot tell a
	// wrong sum from a right one; a reader's digest check will.
	PayloadSHA256 []byte
	// Revisit, if set, makes the response a revisit record: the HTTP
	// headers without a payload; Body is not written and Truncated must
	// be "". With the identical-payload-digest profile (WARC 1.1 section
	// 6.7.2) the payload digest (PayloadSHA256, then required) is the
	// original response's. With the server-not-modified profile (section
	// 6.7.3, a 304 to a conditional request) the record has no payload
	// digest at all (PayloadSHA256 must be nil): the block is the 304's
	// status line and headers.
	Revisit *Revisit
	// Metadata, if set, is written as a third record, of type metadata
	// (WARC 1.1 section 6.6), after the request: its block is Body, of
	// ContentType, and it names the response (or revisit) record it
	// describes in WARC-Refers-To, with the same WARC-Target-URI and
	// WARC-Date.
	Metadata *Metadata
}

// Metadata is a metadata record about an exchange's response.
type Metadata struct {
	// ContentType is the block's media type, e.g. "application/json".
	// Required; no control characters.
	ContentType string
	// Body is the block. May be empty.
	Body []byte
}

// Revisit names the archived response a revisit record refers to: always
// a response record, never another revisit.
type Revisit struct {
	// Profile is the WARC-Profile: ProfileIdenticalPayload (also when "")
	// or ProfileServerNotModified.
	Profile string
	// TargetURI is WARC-Refers-To-Target-URI, the original's
	// WARC-Target-URI. Required for identical-payload-digest; for
	// server-not-modified "" when not known (the field is left out).
	TargetURI string
	// Date is WARC-Refers-To-Date, the original's WARC-Date. Required for
	// identical-payload-digest; for server-not-modified zero when not
	// known (the field is left out).
	Date time.Time
	// RecordID is WARC-Refers-To, the original's WARC-Record-ID; "" if
	// not known.
	RecordID string
}

// The revisit profiles of WARC 1.1 (section 6.7).
const (
	// ProfileIdenticalPayload is the WARC-Profile of a revisit record
	// whose payload is identical to the original's (section 6.7.2).
	ProfileIdenticalPayload = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
	// ProfileServerNotModified is the WARC-Profile of a revisit record
	// of a server's answer that the content is unchanged, such as a 304
	// Not Modified to a conditional GET (section 6.7.3).
	ProfileServerNotModified = "http://netpreserve.org/warc/1.1/revisit/server-not-modified"
)

// Location is where a response record lives, for a later CDXJ index, and
// which exchange it is, for Durable. The zero Location names no exchange.
type Location struct {
	// File is the path (Options.Dir joined with the name) the file has once
	// it is finished, without OpenSuffix.
	File string
	// Offset is the byte offset of the record's gzip member in File.
	Offset int64
	// Length is the length in bytes of that gzip member.
	Length int64
	// RecordID is the record's WARC-Record-ID (what a revisit's
	// WARC-Refers-To names).
	RecordID string

	// seq numbers the exchange among those of its Writer, from 1, in the
	// order they were written.
	seq uint64
}

// Capture is what a Writer tells Options.OnFinish of one response or
// revisit record it wrote: the fields an index of the file needs, as a
// Reader would read them from the file (package cdxj turns them into
// CDXJ lines without reading the file again). Request and warcinfo
// records have none.
type Capture struct {
	Type          string // WARC-Type: "response" or "revisit"
	URL           string // WARC-Target-URI
	Date          string // WARC-Date, as written
	PayloadDigest string // WARC-Payload-Digest
	// HTTP is the record's HTTP status line and headers as Reader parses
	// them (Size left 0, Header nil: only Status and ContentType are
	// kept); nil when Reader would find none.
	HTTP   *HTTPHead
	Offset int64 // of the record's gzip member in the file
	Length int64 // of that gzip member
}

// captureOf is the Capture of the response record of ex, built with date
// and payloadDigest, at loc.
func captureOf(ex *Exchange, date, payloadDigest string, loc Location) Capture {
	c := Capture{Type: "response", URL: ex.URL, Date: date, PayloadDigest: payloadDigest, Offset: loc.Offset, Length: loc.Length}
	if ex.Revisit != nil {
		c.Type = "revisit"
	}
	// As Reader.Next: the head is parsed if it ends within MaxHeaderBytes.
	if i := headerEnd(ex.ResponseHeader); i >= 0 && i <= MaxHeaderBytes {
		if h, err := parseHTTPHead(ex.ResponseHeader[:i]); err == nil {
			// Cloned: the parsed strings share the whole header's memory.
			c.HTTP = &HTTPHead{Proto: strings.Clone(h.Proto), Status: h.Status, ContentType: strings.Clone(h.ContentType)}
		}
	}
	return c
}

// truncater is a file that can be cut back; vfs.Default's files are (a
// vfs.File need not be).
type truncater interface {
	Truncate(size int64) error
}

// maxPooledBuffer bounds the encoder buffers kept for reuse.
const maxPooledBuffer = 4 << 20

// segment is one file the Writer has begun.
type segment struct {
	f        vfs.File
	path     string // finished path, without OpenSuffix
	index    int    // in Writer.files
	last     uint64 // seq of the last exchange in it; 0 if none
	keepOpen bool   // not to be renamed: could not be cut back after a failed write
	// captures of the exchanges in it, in file order, for OnFinish; nil if
	// there is no OnFinish.
	captures []Capture
}

// waiter is a Durable call waiting for the exchange seq.
type waiter struct {
	seq  uint64
	done chan error
}

// Writer writes exchanges to a series of WARC files. Create it with NewWriter.
// Records are built and compressed outside mu, so concurrent Writes compress
// in parallel; mu covers the files and the sequence numbers. The syncer
// goroutine (see Durability) does its I/O without mu. Lock order: mu, then
// newBuilderMu.
type Writer struct {
	opts     Options
	fs       vfs.FS
	encoders sync.Pool // of *encoder; buffers above maxPooledBuffer are dropped

	// Counts for Stats, kept outside mu so that reading them waits for no
	// write.
	rounds  atomic.Uint64 // syncer rounds that fsynced a file
	bytes   atomic.Int64  // of whole records written
	records atomic.Int64
	begun   atomic.Int64 // files

	wake   chan struct{} // cap 1: work for the syncer
	stop   chan struct{} // closed by Close
	synced chan struct{} // closed when the syncer has returned

	mu        sync.Mutex
	closed    bool
	started   bool  // the syncer is running (it starts with the first file)
	err       error // why the syncer stopped the writer; sticky
	cur       *segment
	size      int64  // bytes in the current file, all whole records
	exchanges int    // exchanges in the current file
	infoID    string // WARC-Record-ID of the current file's warcinfo
	serial    int    // next file serial
	files     []string
	written   uint64     // seq of the last exchange written
	durable   uint64     // every exchange up to this seq is durable
	retired   []*segment // rotated out, for the syncer to finish, in order
	dirDirty  bool       // a file was created since the syncer last synced the directory
	waiters   []waiter   // Durable calls with seq > durable
}

// NewWriter checks opts, creates opts.Dir if missing (syncing its parent
// directories, so that it survives a crash) and returns a Writer. The first
// file, and the syncer goroutine, are begun by the first Write; a Writer
// that has written must be closed.
func NewWriter(opts Options) (*Writer, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	if err := opts.FS.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("warc: create directory %s: %w", opts.Dir, err)
	}
	if err := syncParents(opts.FS, opts.Dir); err != nil {
		return nil, fmt.Errorf("warc: create directory %s: %w", opts.Dir, err)
	}
	w := &Writer{
		opts:   opts,
		fs:     opts.FS,
		wake:   make(chan struct{}, 1),
		stop:   make(chan struct{}),
		synced: make(chan struct{}),
	}
	w.encoders.New = func() any { return newEncoder(w.opts.GzipLevel) }
	return w, nil
}

// Write appends the response record of ex, then its request record, each its
// own gzip member, to the current file, beginning a new file first if the
// pair would take the current one past MaxFileSize. When Write returns nil,
// both records are whole in the file (handed to the OS, not fsynced: see
// Durable). It returns where the response record is.
func (w *Writer) Write(ex *Exchange) (Location, error) {
	if err := ex.validate(); err != nil {
		return Location{}, err
	}

	// Learn the current warcinfo ID (beginning a file if needed) so that the
	// records can be built and compressed outside the lock.
	w.mu.Lock()
	if err := w.usableLocked(); err != nil {
		w.mu.Unlock()
		return Location{}, err
	}
	if w.cur == nil {
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
	resp, req := buildExchange(ex, date, infoID)
	recs := []*record{resp, req}
	if ex.Metadata != nil {
		recs = append(recs, buildMetadata(ex, resp, infoID))
	}
	enc := w.encoders.Get().(*encoder)
	defer func() {
		if enc.buf.Cap() <= maxPooledBuffer {
			w.encoders.Put(enc)
		}
	}()
	if err := enc.encode(recs...); err != nil {
		return Location{}, fmt.Errorf("warc: write %s: %w", ex.URL, err)
	}

	w.mu.Lock()
	defer w.mu.Unlock()
	for {
		if err := w.usableLocked(); err != nil {
			return Location{}, err
		}
		if w.cur != nil && w.exchanges > 0 && w.size+int64(enc.buf.Len()) > w.opts.MaxFileSize {
			w.retireLocked(false)
		}
		if w.cur == nil {
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
		for _, r := range recs {
			r.set("WARC-Warcinfo-ID", infoID)
		}
		if err := enc.encode(recs...); err != nil {
			return Location{}, fmt.Errorf("warc: write %s: %w", ex.URL, err)
		}
	}

	loc := Location{File: w.cur.path, Offset: w.size, Length: enc.lens[0], RecordID: resp.get("WARC-Record-ID")}
	n := int64(enc.buf.Len())
	if _, err := w.cur.f.Write(enc.buf.Bytes()); err != nil {
		name := w.cur.path + OpenSuffix
		return Location{}, errors.Join(
			fmt.Errorf("warc: write %s to %s: %w", ex.URL, name, err),
			w.abandonLocked())
	}
	w.size += n
	w.bytes.Add(n)
	w.records.Add(int64(len(recs)))
	w.exchanges++
	w.written++
	w.cur.last = w.written
	loc.seq = w.written
	if w.opts.OnFinish != nil {
		w.cur.captures = append(w.cur.captures, captureOf(ex, resp.get("WARC-Date"), resp.get("WARC-Payload-Digest"), loc))
	}
	return loc, nil
}

// usableLocked returns why Write may not go on, if it may not.
func (w *Writer) usableLocked() error {
	if w.closed {
		return ErrClosed
	}
	return w.err
}

// Durable returns a channel that yields, once, nil when the exchange at loc
// (a Location returned by this Writer's Write) is on stable storage, or the
// error that prevented it: the one that stopped the writer. It never blocks.
// Exchanges are made durable in groups (see Durability), so many concurrent
// callers share each fsync. After Close every exchange is either durable
// or failed. A Location that this Writer did not return yields an error at
// once (if its number is out of range; it cannot tell otherwise).
func (w *Writer) Durable(loc Location) <-chan error {
	done := make(chan error, 1)
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case loc.seq == 0 || loc.seq > w.written:
		done <- fmt.Errorf("warc: durable %s+%d: not a Location returned by this Writer", loc.File, loc.Offset)
	case loc.seq <= w.durable:
		done <- nil
	case w.err != nil:
		done <- w.err
	default:
		// loc.seq <= written, so the syncer has started, and it acknowledges
		// every waiter before it returns.
		w.waiters = append(w.waiters, waiter{loc.seq, done})
		w.wakeSyncer()
		return done
	}
	close(done)
	return done
}

// Sync waits until every exchange written before it is durable (as
// Durable). It returns nil at once if nothing was written.
func (w *Writer) Sync() error {
	w.mu.Lock()
	seq := w.written
	w.mu.Unlock()
	if seq == 0 {
		return nil
	}
	return <-w.Durable(Location{seq: seq})
}

// Close finishes the current file, makes every exchange durable (fsync,
// close, rename to drop OpenSuffix, directory sync) and stops the syncer.
// It returns the error that stopped the writer, if any; then the files not
// made durable keep OpenSuffix. Write after Close returns ErrClosed; a
// second Close returns nil.
func (w *Writer) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	if w.cur != nil {
		w.retireLocked(false)
	}
	started := w.started
	w.mu.Unlock()
	if !started {
		return nil
	}
	close(w.stop)
	<-w.synced
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Files returns the paths of the files begun so far, in order, under their
// finished names; a file exists with OpenSuffix until the syncer finishes
// it, soon after rotation or at Close. A file that could not be repaired
// after a failed write, or not made durable because the writer stopped, is
// listed under its OpenSuffix name.
func (w *Writer) Files() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.files...)
}

// WriterStats counts what a Writer has written since NewWriter.
type WriterStats struct {
	// Bytes is the size of the records written to files, as stored
	// (gzip members). A record cut off by a failed write is not counted.
	Bytes int64
	// Records counts them: a warcinfo per file, a response and a request
	// per exchange.
	Records int64
	// Files is the number of files begun.
	Files int64
	// Syncs counts the syncer's rounds that fsynced a file: exchanges
	// written meanwhile share one (see Durability).
	Syncs uint64
}

// Stats returns the writer's counts. It takes no lock.
func (w *Writer) Stats() WriterStats {
	return WriterStats{Bytes: w.bytes.Load(), Records: w.records.Load(), Files: w.begun.Load(), Syncs: w.rounds.Load()}
}

// beginLocked creates the next file and writes its warcinfo record.
func (w *Writer) beginLocked() error {
	now := w.opts.Now()
	stamp := now.UTC().Format("20060102150405")
	var path string
	for tries := 0; ; tries++ {
		name := fmt.Sprintf("%s-%s-%05d%s", w.opts.Prefix, stamp, w.serial, Extension)
		w.serial++
		path = w.fs.PathJoin(w.opts.Dir, name)
		// vfs.FS has no exclusive create: a name taken, finished or open
		// (by an earlier writer, or left by a crash), is skipped.
		taken, err := w.exists(path)
		if err == nil && !taken {
			taken, err = w.exists(path + OpenSuffix)
		}
		if err != nil {
			return fmt.Errorf("warc: create %s: %w", path+OpenSuffix, err)
		}
		if !taken {
			break
		}
		if tries >= 1000 {
			return fmt.Errorf("warc: create %s: %w", path+OpenSuffix, fs.ErrExist)
		}
	}
	f, err := w.fs.Create(path+OpenSuffix, vfs.WriteCategoryUnspecified)
	if err != nil {
		return fmt.Errorf("warc: create %s: %w", path+OpenSuffix, err)
	}
	w.dirDirty = true
	if !w.started {
		w.started = true
		go w.syncLoop()
	}

	info := buildWarcinfo(w.fs.PathBase(path), now, &w.opts)
	enc := newEncoder(w.opts.GzipLevel)
	if err = enc.encode(info); err == nil {
		n := int64(enc.buf.Len())
		if _, err = f.Write(enc.buf.Bytes()); err == nil {
			w.cur = &segment{f: f, path: path, index: len(w.files)}
			w.size, w.exchanges = n, 0
			w.infoID = info.get("WARC-Record-ID")
			w.files = append(w.files, path)
			w.bytes.Add(n)
			w.records.Add(1)
			w.begun.Add(1)
			return nil
		}
	}
	// A file without its warcinfo is of no use: remove it.
	_ = f.Close()
	_ = w.fs.Remove(path + OpenSuffix)
	return fmt.Errorf("warc: write warcinfo to %s: %w", path+OpenSuffix, err)
}

// exists reports whether name is taken.
func (w *Writer) exists(name string) (bool, error) {
	_, err := w.fs.Stat(name)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	default:
		return false, err
	}
}

// retireLocked hands the current file to the syncer, which will fsync,
// close and (unless keepOpen) rename it; the next Write begins a new file.
func (w *Writer) retireLocked(keepOpen bool) {
	w.cur.keepOpen = keepOpen
	w.retired = append(w.retired, w.cur)
	w.cur = nil
	w.wakeSyncer()
}

// wakeSyncer tells the syncer there is work, without blocking.
func (w *Writer) wakeSyncer() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// abandonLocked ends the current file after a failed write: it cuts the
// partial record off and retires the file, or, if it cannot, retires it to
// be left under its OpenSuffix name. Either way the exchanges before the
// failure are made durable.
func (w *Writer) abandonLocked() error {
	path := w.cur.path + OpenSuffix
	t, ok := w.cur.f.(truncater)
	if !ok {
		w.retireLocked(true)
		return fmt.Errorf("warc: cut back %s to %d bytes (left as is): the file system cannot truncate", path, w.size)
	}
	if err := t.Truncate(w.size); err != nil {
		w.retireLocked(true)
		return fmt.Errorf("warc: cut back %s to %d bytes (left as is): %w", path, w.size, err)
	}
	w.retireLocked(false)
	return nil
}

// syncLoop is the syncer: it makes exchanges durable in rounds (see
// Durability) until Close, then runs a last round.
func (w *Writer) syncLoop() {
	defer close(w.synced)
	var last time.Time // when the last round began
	for {
		select {
		case <-w.wake:
		case <-w.stop:
			w.syncRound(true)
			return
		}
		// Rounds begin at most every MinSyncInterval, so that under load
		// more exchanges share each fsync.
		if d := w.opts.MinSyncInterval - time.Since(last); d > 0 {
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-w.stop:
				t.Stop()
				w.syncRound(true)
				return
			}
		}
		last = time.Now()
		w.syncRound(false)
	}
}

// syncRound makes durable every exchange written before it begins and
// finishes the retired files, then acknowledges the waiters. In the last
// round (final), Close has retired the current file.
func (w *Writer) syncRound(final bool) {
	w.mu.Lock()
	target := w.written
	retired := w.retired
	w.retired = nil
	cur := w.cur
	if cur != nil && cur.last <= w.durable {
		cur = nil // nothing in it to make durable
	}
	dirSync := w.dirDirty || len(retired) > 0
	w.dirDirty = false
	failed := w.err
	w.mu.Unlock()

	var err error
	if failed != nil {
		// Stopped: close the retired files, leaving them for Recover.
		for _, s := range retired {
			_ = s.f.Close()
		}
		renamed := make([]bool, len(retired))
		w.endRound(target, retired, renamed, failed, final)
		return
	}
	if len(retired) > 0 || cur != nil {
		w.rounds.Add(1)
	}
	renamed := make([]bool, len(retired))
	for i, s := range retired {
		if err != nil {
			_ = s.f.Close()
			continue
		}
		renamed[i], err = w.finish(s)
	}
	if err == nil && cur != nil {
		if serr := cur.f.Sync(); serr != nil {
			err = fmt.Errorf("warc: sync %s: %w", cur.path+OpenSuffix, serr)
		}
	}
	if err == nil && dirSync {
		if serr := SyncDir(w.fs, w.opts.Dir); serr != nil {
			err = fmt.Errorf("warc: sync directory %s: %w", w.opts.Dir, serr)
		}
	}
	w.endRound(target, retired, renamed, err, final)
	if err != nil || w.opts.OnFinish == nil {
		return
	}
	// Each renamed file is durable under its final name now (its bytes
	// and the directory synced), and the waiters are acknowledged.
	for i, s := range retired {
		if renamed[i] {
			w.opts.OnFinish(s.path, s.captures)
			s.captures = nil
		}
	}
}

// finish fsyncs a retired file, closes it and, unless it is to keep its
// OpenSuffix name, renames it. It reports whether it renamed the file.
func (w *Writer) finish(s *segment) (bool, error) {
	open := s.path + OpenSuffix
	if err := s.f.Sync(); err != nil {
		_ = s.f.Close()
		return false, fmt.Errorf("warc: sync %s: %w", open, err)
	}
	if err := s.f.Close(); err != nil {
		return false, fmt.Errorf("warc: close %s: %w", open, err)
	}
	if s.keepOpen {
		return false, nil
	}
	if err := w.fs.Rename(open, s.path); err != nil {
		return false, fmt.Errorf("warc: rename %s: %w", open, err)
	}
	return true, nil
}

// endRound records the outcome of a round that made everything up to
// target durable, or failed with err, and acknowledges the waiters it
// covers (all of them if it failed, or if it is the last round).
func (w *Writer) endRound(target uint64, retired []*segment, renamed []bool, err error, final bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, s := range retired {
		if !renamed[i] {
			w.files[s.index] = s.path + OpenSuffix
		}
	}
	if err != nil && w.err == nil {
		w.err = err
	}
	if w.err == nil {
		w.durable = target
	}
	keep := w.waiters[:0]
	for _, q := range w.waiters {
		switch {
		case q.seq <= w.durable:
			q.done <- nil
		case w.err != nil:
			q.done <- w.err
		case final:
			// Unreachable: the last round covers every exchange written.
			q.done <- ErrClosed
		default:
			keep = append(keep, q)
			continue
		}
		close(q.done)
	}
	// The waiters kept are for exchanges written during the round: their
	// Durable calls have woken the syncer for another.
	clear(w.waiters[len(keep):])
	w.waiters = keep
}

// SyncDir fsyncs directory dir, making durable the creation, rename and
// removal of the entries in it. (Package cdxj writes its index files
// beside the WARC files with the same care.)
func SyncDir(fsys vfs.FS, dir string) error {
	d, err := fsys.OpenDir(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// syncParents fsyncs every ancestor directory of dir, so that its entry,
// made by MkdirAll, survives a crash.
func syncParents(fsys vfs.FS, dir string) error {
	for d := dir; ; {
		parent := fsys.PathDir(d)
		if parent == d || parent == "" {
			return nil
		}
		if err := SyncDir(fsys, parent); err != nil {
			return fmt.Errorf("sync directory %s: %w", parent, err)
		}
		d = parent
	}
}

// truncReasons are the WARC-Truncated values of WARC 1.1.
var truncReasons = map[string]bool{"length": true, "time": true, "disconnect": true, "unspecified": true}

// isRequestLine reports whether b begins with an HTTP/1.x request line
// (RFC 9112 section 3): a method, a space, a target, a space and a
// version beginning "HTTP/", ending with LF (CR LF allowed).
func isRequestLine(b []byte) bool {
	line, _, ok := bytes.Cut(b, []byte("\n"))
	if !ok {
		return false
	}
	parts := bytes.Split(bytes.TrimSuffix(line, []byte("\r")), []byte(" "))
	return len(parts) == 3 && len(parts[0]) > 0 && len(parts[1]) > 0 && bytes.HasPrefix(parts[2], []byte("HTTP/")) &&
		!bytes.ContainsFunc(parts[0], func(r rune) bool { return r <= ' ' || r >= 0x7f })
}

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
	case !isRequestLine(ex.Request):
		return bad("Request does not begin with a request line (METHOD TARGET HTTP/...)")
	case headerEnd(ex.Request) < 0:
		return bad("Request has no empty line after its headers")
	case ex.PayloadSHA256 != nil && len(ex.PayloadSHA256) != sha256.Size:
		return bad("PayloadSHA256 is %d bytes, not a SHA-256 sum (%d)", len(ex.PayloadSHA256), sha256.Size)
	case ex.Metadata != nil && (ex.Metadata.ContentType == "" || strings.ContainsFunc(ex.Metadata.ContentType, isCTL)):
		return bad("Metadata.ContentType %q is empty or has a control character", ex.Metadata.ContentType)
	}
	if rv := ex.Revisit; rv != nil {
		notModified := rv.Profile == ProfileServerNotModified
		switch {
		case rv.Profile != "" && rv.Profile != ProfileIdenticalPayload && !notModified:
			return bad("Revisit.Profile %q is not a revisit profile trawl writes", rv.Profile)
		case !notModified && ex.PayloadSHA256 == nil:
			return bad("a revisit needs PayloadSHA256, the original's payload digest")
		case notModified && ex.PayloadSHA256 != nil:
			return bad("a server-not-modified revisit has no payload, so no PayloadSHA256")
		case ex.Truncated != "":
			return bad("a revisit has no payload to be truncated (Truncated %q)", ex.Truncated)
		case (rv.TargetURI != "" || !notModified) && (rv.TargetURI == "" || strings.ContainsFunc(rv.TargetURI, isCTLOrSpace) || !hasScheme(rv.TargetURI)):
			return bad("Revisit.TargetURI %q is not an absolute URI", rv.TargetURI)
		case !notModified && rv.Date.IsZero():
			return bad("Revisit.Date is zero")
		case rv.RecordID != "" && (!strings.HasPrefix(rv.RecordID, "<") || !strings.HasSuffix(rv.RecordID, ">") || strings.ContainsFunc(rv.RecordID, isCTLOrSpace)):
			return bad("Revisit.RecordID %q is not a <URI>", rv.RecordID)
		}
	}
	if ex.IP != "" {
		if _, err := netip.ParseAddr(ex.IP); err != nil {
			return bad("IP: %v", err)
		}
	}
	for _, p := range ex.Protocols {
		if !isProtocolID(p) {
			return bad("Protocols: %q is not a protocol id (lower-case letters, digits, '.', '/', '-')", p)
		}
	}
	return nil
}

// isProtocolID reports whether p has the form of a WARC-Protocol id
// ("http/1.1", "h2", "tls/1.3", "quic/1"): one protocol, no list.
func isProtocolID(p string) bool {
	if p == "" || len(p) > 32 {
		return false
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '.' || c == '/' || c == '-') {
			return false
		}
	}
	return true
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
