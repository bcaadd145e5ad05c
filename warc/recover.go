package warc

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// Limits of the record parser used by Recover. A record beyond them is
// treated as not complete.
const (
	// maxRecoverLine bounds one line of a record's WARC header.
	maxRecoverLine = 1 << 20
	// maxRecoverFields bounds the number of fields in a record's WARC header.
	maxRecoverFields = 1000
)

// Recovered describes one file that Recover found still open.
type Recovered struct {
	// File is the file's path (the directory joined with its name) after
	// renaming, without OpenSuffix; "" if the file held no complete exchange
	// and was removed.
	File string
	// Kept is the number of complete records kept, the warcinfo included;
	// 0 if the file was removed.
	Kept int
	// CutBytes is the number of bytes removed from the end of the file (its
	// whole size if it was removed).
	CutBytes int64
	// URIs holds the WARC-Target-URI of every response (or revisit) record
	// kept, in file order: the exchanges that survived. Any other page being
	// fetched when the crawler stopped was lost and must be fetched again.
	URIs []string
}

// Recover is RecoverFS on the operating system's file system (vfs.Default).
func Recover(dir string) ([]Recovered, error) {
	return RecoverFS(vfs.Default, dir)
}

// RecoverFS repairs the files left with OpenSuffix in dir, on fsys (nil
// means vfs.Default), by a crash (kill -9, power loss) of the process
// writing them. It must run before a Writer is started on dir, and not
// concurrently with one. For each regular file named "*.warc.gz.open", in
// name order, it reads the gzip members from the start:
//
//   - A member is complete if it decompresses to its end with a valid CRC-32
//     and length trailer, and its content is exactly one WARC record whose
//     block has Content-Length bytes (and matches WARC-Block-Digest, when
//     that is sha256 or sha1) followed by CRLF CRLF.
//   - The first member must be a complete warcinfo record. After it come
//     exchanges: a response (or revisit) record, then the request record
//     whose WARC-Concurrent-To names it. An exchange is kept whole or not
//     at all.
//   - The first member that is not complete (cut short, corrupt, or bytes
//     that are not a gzip member, such as the zeros some file systems leave
//     after a power loss) ends the file: the file is cut back to the end of
//     its last complete exchange, fsynced, and renamed to drop OpenSuffix.
//   - A file holding no complete exchange (empty, only zeros, a first block
//     of 4096 zero bytes whatever follows, a first member cut short, or only
//     a warcinfo record) is removed, since it holds no capture; the next
//     Writer begins a fresh file.
//
// After a power cut, a file the Writer had begun may be shorter than it was
// (its unsynced tail lost), still carry OpenSuffix (its rename not synced:
// Recover renames it, cutting nothing if it is whole), or be missing (its
// creation not synced; it held no exchange Durable had acknowledged). An
// exchange Durable acknowledged is synced, with everything before it in its
// file, so Recover keeps it. Every change Recover makes is synced before it
// returns: the cut file, then the directory after a rename or removal.
//
// A file is left untouched, and an error naming it and the offset returned,
// when it does not look like a crash of this package's Writer: its first
// bytes are not gzip, its first member is whole but not a warcinfo record,
// or complete records break the order above (a crash only ever cuts the
// end of a file, so that is not damage Recover may cut away). It is also
// left alone when its finished name already exists.
//
// Cutting a file back uses its Truncate method when the file system's
// files have one (vfs.Default's do). Otherwise the bytes to keep are
// copied to NAME.warc.gz.open.cut, which is fsynced and renamed over the
// open file; a crash during the copy leaves the open file as it was (and
// the partial copy, replaced by the next Recover).
//
// Recover carries on after a failing file and returns the files it
// repaired with the errors joined. A missing dir holds nothing to recover.
//
// Reading member boundaries: gzip.Reader reads straight from an io.Reader
// that is also an io.ByteReader (flate.Reader) without buffering of its
// own, and flate then consumes exactly the bytes of the deflate stream. The
// reader handed to gzip is a countingReader over a bufio.Reader owned here,
// so its count is the offset just past the member once gzip has reported
// io.EOF (Multistream(false)) after checking the trailer.
func RecoverFS(fsys vfs.FS, dir string) ([]Recovered, error) {
	if fsys == nil {
		fsys = vfs.Default
	}
	names, err := fsys.List(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("warc: recover %s: %w", dir, err)
	}
	slices.Sort(names)
	var (
		out  []Recovered
		errs []error
	)
	for _, name := range names {
		if !strings.HasSuffix(name, Extension+OpenSuffix) {
			continue
		}
		r, err := recoverFile(fsys, fsys.PathJoin(dir, name))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, r)
	}
	return out, errors.Join(errs...)
}

// cutSuffix ends the name of the copy recoverFile makes of the part of an
// open file to keep, on a file system that cannot truncate.
const cutSuffix = ".cut"

// lstat is fsys.Stat, except on the operating system's file system, where
// it does not follow a symbolic link (vfs.FS has no Lstat).
func lstat(fsys vfs.FS, name string) (os.FileMode, int64, error) {
	if fsys == vfs.Default {
		info, err := os.Lstat(name)
		if err != nil {
			return 0, 0, err
		}
		return info.Mode(), info.Size(), nil
	}
	info, err := fsys.Stat(name)
	if err != nil {
		return 0, 0, err
	}
	return info.Mode(), info.Size(), nil
}

// recoverFile repairs the open file at path (see RecoverFS).
func recoverFile(fsys vfs.FS, path string) (Recovered, error) {
	final := strings.TrimSuffix(path, OpenSuffix)
	dir := fsys.PathDir(path)
	fail := func(format string, args ...any) (Recovered, error) {
		return Recovered{}, fmt.Errorf("warc: recover %s: "+format, append([]any{path}, args...)...)
	}
	mode, size, err := lstat(fsys, path)
	if err != nil {
		return fail("%w", err)
	}
	if !mode.IsRegular() {
		return fail("not a regular file (%s); left as is", mode.Type())
	}
	f, err := fsys.OpenReadWrite(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		return fail("%w", err)
	}
	closeFail := func(err error) (Recovered, error) {
		_ = f.Close()
		return Recovered{}, err
	}
	plan, err := scan(f)
	if err != nil {
		return closeFail(fmt.Errorf("warc: recover %s: %w; left as is", path, err))
	}

	if plan.exchanges == 0 {
		if err := f.Close(); err != nil {
			return fail("close: %w", err)
		}
		if err := fsys.Remove(path); err != nil {
			return fail("remove (no complete exchange): %w", err)
		}
		if err := SyncDir(fsys, dir); err != nil {
			return fail("remove (no complete exchange): sync directory: %w", err)
		}
		return Recovered{CutBytes: size}, nil
	}

	if _, _, err := lstat(fsys, final); err == nil {
		return closeFail(fmt.Errorf("warc: recover %s: %s already exists; left as is", path, fsys.PathBase(final)))
	}
	if t, ok := f.(truncater); ok || plan.keep == size {
		if plan.keep < size {
			if err := t.Truncate(plan.keep); err != nil {
				return closeFail(fmt.Errorf("warc: recover %s: cut back to %d bytes: %w", path, plan.keep, err))
			}
		}
		// Sync even when nothing was cut: the rename must not make durable a
		// name whose content is not.
		if err := f.Sync(); err != nil {
			return closeFail(fmt.Errorf("warc: recover %s: sync: %w", path, err))
		}
		if err := f.Close(); err != nil {
			return fail("close: %w", err)
		}
	} else if err := cutByCopy(fsys, f, path, plan.keep); err != nil {
		return fail("cut back to %d bytes: %w", plan.keep, err)
	}
	if err := fsys.Rename(path, final); err != nil {
		return fail("rename: %w", err)
	}
	if err := SyncDir(fsys, dir); err != nil {
		return fail("rename: sync directory: %w", err)
	}
	return Recovered{File: final, Kept: 1 + 2*plan.exchanges, CutBytes: size - plan.keep, URIs: plan.uris}, nil
}

// cutByCopy replaces the file at path, open as f, with its first keep bytes
// on a file system that cannot truncate: it copies them to path+cutSuffix,
// fsyncs the copy and renames it over path, then syncs the directory. It
// closes f. On failure path is as it was.
func cutByCopy(fsys vfs.FS, f vfs.File, path string, keep int64) error {
	tmp := path + cutSuffix
	err := func() error {
		defer func() { _ = f.Close() }()
		t, err := fsys.Create(tmp, vfs.WriteCategoryUnspecified)
		if err != nil {
			return err
		}
		n, err := io.Copy(t, io.NewSectionReader(f, 0, keep))
		if err == nil && n != keep {
			err = io.ErrUnexpectedEOF
		}
		if err == nil {
			err = t.Sync()
		}
		if cerr := t.Close(); err == nil {
			err = cerr
		}
		return err
	}()
	if err == nil {
		err = fsys.Rename(tmp, path)
	}
	if err != nil {
		_ = fsys.Remove(tmp)
		return err
	}
	return SyncDir(fsys, fsys.PathDir(path))
}

// scanError is a reason to leave a file untouched, at a byte offset: the
// file does not look like one cut short by a crash, or it could not be read.
type scanError struct {
	offset int64
	msg    string
	err    error // the read error, if any
}

func (e *scanError) Error() string {
	if e.err != nil {
		return fmt.Sprintf("offset %d: read: %v", e.offset, e.err)
	}
	return fmt.Sprintf("offset %d: %s", e.offset, e.msg)
}

func (e *scanError) Unwrap() error { return e.err }

// recoverPlan is what scan found: keep the first keep bytes, which hold the
// warcinfo record and exchanges whole exchanges. exchanges == 0 means the
// file holds no capture and is to be removed.
type recoverPlan struct {
	keep      int64
	exchanges int
	uris      []string
	ends      []int64 // end offset of every complete member read, in order
}

// scan reads r, the content of an open file, and decides what to keep. Its
// error, a *scanError, means the file must be left untouched.
func scan(r io.Reader) (recoverPlan, error) {
	var plan recoverPlan
	src := &countingReader{r: bufio.NewReaderSize(r, 32<<10)}
	rd := &memberReader{src: src, body: bufio.NewReaderSize(nil, 16<<10)}

	// The first member: a whole warcinfo record, or a crash before one
	// was written.
	head, err := src.r.Peek(len(gzipMagic))
	if len(head) == 0 && err == io.EOF {
		return plan, nil // empty file
	}
	if err != nil && err != io.EOF {
		return plan, &scanError{offset: 0, err: err}
	}
	if !bytes.HasPrefix(gzipMagic, head) {
		// A first block of zeros is one the file system allocated but never
		// got written before a power cut, whatever follows it (later blocks
		// may have been written back first). Nothing after it was ever
		// synced: an fsync covers the file from its start.
		if block, err := src.r.Peek(zeroBlock); err == nil && allZeroBytes(block) {
			return plan, nil
		}
		zero, err := allZero(src.r)
		if err != nil {
			return plan, &scanError{offset: 0, err: err}
		}
		if zero {
			return plan, nil // blocks allocated, never written
		}
		return plan, &scanError{offset: 0, msg: "not a gzip file"}
	}
	m, err := rd.next()
	if err != nil {
		return plan, &scanError{offset: 0, err: err}
	}
	switch {
	case errors.Is(m.gzErr, io.ErrUnexpectedEOF) && bytes.HasPrefix([]byte("WARC/"), m.head[:min(len(m.head), 5)]):
		return plan, nil // crash while the warcinfo was written
	case m.gzErr != nil:
		return plan, &scanError{offset: 0, msg: fmt.Sprintf("first gzip member unreadable: %v", m.gzErr)}
	case m.recErr != nil:
		return plan, &scanError{offset: 0, msg: fmt.Sprintf("first gzip member is not a WARC record: %v", m.recErr)}
	case m.rec.typ != "warcinfo":
		return plan, &scanError{offset: 0, msg: fmt.Sprintf("first record is %q, want warcinfo", m.rec.typ)}
	}
	plan.keep = m.end
	plan.ends = append(plan.ends, m.end)

	var pending *warcRecord // response waiting for its request
	var pendingAt int64
	for {
		m, err := rd.next()
		if err != nil {
			return plan, &scanError{offset: m.start, err: err}
		}
		if m.eof || m.gzErr != nil || m.recErr != nil {
			return plan, nil // clean end, or the damage a crash leaves
		}
		plan.ends = append(plan.ends, m.end)
		if pending == nil {
			if m.rec.typ != "response" && m.rec.typ != "revisit" {
				return plan, &scanError{offset: m.start, msg: fmt.Sprintf("%q record where a response or revisit was expected", m.rec.typ)}
			}
			pending, pendingAt = &m.rec, m.start
			continue
		}
		if m.rec.typ != "request" {
			return plan, &scanError{offset: m.start, msg: fmt.Sprintf("%q record where the request of the response at offset %d was expected", m.rec.typ, pendingAt)}
		}
		if !m.rec.concurrentTo(pending.id) {
			return plan, &scanError{offset: m.start, msg: fmt.Sprintf("request record does not name the response at offset %d (%s) in WARC-Concurrent-To", pendingAt, pending.id)}
		}
		plan.keep = m.end
		plan.exchanges++
		plan.uris = append(plan.uris, pending.uri)
		pending = nil
	}
}

var gzipMagic = []byte{0x1f, 0x8b, 0x08}

// zeroBlock is the size of the file system block that scan takes, when it
// begins a file and is all zeros, for one never written.
const zeroBlock = 4096

func allZeroBytes(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// allZero reports whether the rest of r is all zero bytes.
func allZero(r io.Reader) (bool, error) {
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		for _, b := range buf[:n] {
			if b != 0 {
				return false, nil
			}
		}
		if err == io.EOF {
			return true, nil
		}
		if err != nil {
			return false, err
		}
	}
}

// countingReader counts the bytes consumed from r. It is an io.ByteReader
// so that gzip and flate read from it directly, consuming no more than a
// member's bytes (see Recover).
type countingReader struct {
	r   *bufio.Reader
	n   int64
	err error // first error of r other than io.EOF
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	c.note(err)
	return n, err
}

func (c *countingReader) ReadByte() (byte, error) {
	b, err := c.r.ReadByte()
	if err == nil {
		c.n++
	}
	c.note(err)
	return b, err
}

func (c *countingReader) note(err error) {
	if err != nil && err != io.EOF && c.err == nil {
		c.err = err
	}
}

// member is one gzip member as read by memberReader.next.
type member struct {
	start, end int64      // offsets of the member in the file
	eof        bool       // no bytes left: no member
	gzErr      error      // the gzip stream is damaged (header, data or trailer)
	recErr     error      // the stream is whole but not one valid WARC record
	head       []byte     // first decompressed bytes (up to 8)
	rec        warcRecord // valid if gzErr and recErr are nil
}

// memberReader reads consecutive gzip members from src.
type memberReader struct {
	src  *countingReader
	zr   gzip.Reader
	body *bufio.Reader // over the decompressed content
	sha  blockHashes
}

// next reads the member at the current offset. Its error is only ever one
// of the underlying file; damage is reported in member.
func (mr *memberReader) next() (member, error) {
	m := member{start: mr.src.n}
	err := mr.zr.Reset(mr.src)
	if mr.src.err != nil {
		return m, mr.src.err
	}
	if err == io.EOF {
		m.eof, m.end = true, m.start
		return m, nil
	}
	if err != nil {
		m.gzErr, m.end = err, mr.src.n
		return m, nil
	}
	mr.zr.Multistream(false)
	content := &contentReader{zr: &mr.zr}
	mr.body.Reset(content)
	m.rec, m.recErr = parseRecord(mr.body, &mr.sha)
	// Read to the end of the member, so that its trailer is checked and the
	// offset is past it.
	_, _ = io.Copy(io.Discard, mr.body)
	if mr.src.err != nil {
		return m, mr.src.err
	}
	m.gzErr, m.head, m.end = content.err, content.head, mr.src.n
	return m, nil
}

// contentReader reads decompressed bytes, remembering the first bytes and
// the first error of the gzip stream (other than its io.EOF).
type contentReader struct {
	zr   *gzip.Reader
	err  error
	head []byte
}

func (c *contentReader) Read(p []byte) (int, error) {
	n, err := c.zr.Read(p)
	if len(c.head) < 8 {
		c.head = append(c.head, p[:min(n, 8-len(c.head))]...)
	}
	if err != nil && err != io.EOF && c.err == nil {
		c.err = err
	}
	return n, err
}

// warcRecord holds the fields of a record that Recover needs.
type warcRecord struct {
	typ, id, uri string
	concurrent   []string
}

func (r *warcRecord) concurrentTo(id string) bool {
	for _, c := range r.concurrent {
		if c == id {
			return true
		}
	}
	return false
}

// blockHashes holds the hashes recovery checks block digests with, made
// once per memberReader and reset for each record.
type blockHashes struct{ sha1, sha256 hash.Hash }

// get returns a reset hash for the digest algorithm alg ("sha1" or
// "sha256", any case), or nil for any other.
func (b *blockHashes) get(alg string) hash.Hash {
	var h *hash.Hash
	switch {
	case strings.EqualFold(alg, "sha256"):
		if b.sha256 == nil {
			b.sha256 = sha256.New()
		}
		h = &b.sha256
	case strings.EqualFold(alg, "sha1"):
		if b.sha1 == nil {
			b.sha1 = sha1.New()
		}
		h = &b.sha1
	default:
		return nil
	}
	(*h).Reset()
	return *h
}

// parseRecord reads one WARC record from r, which must end right after it:
//
//	"WARC/1.1" CRLF *(name ":" value CRLF) CRLF block CRLF CRLF
//
// with a block of Content-Length bytes. A sha256 or sha1 WARC-Block-Digest
// (base32 or hex) must match the block; other algorithms are not checked.
func parseRecord(r *bufio.Reader, hashes *blockHashes) (warcRecord, error) {
	var rec warcRecord
	line, err := readLine(r)
	if err != nil {
		return rec, fmt.Errorf("version line: %w", err)
	}
	if line != "WARC/1.1" && line != "WARC/1.0" {
		return rec, fmt.Errorf("version line %q, want WARC/1.1 or WARC/1.0", truncateForError(line))
	}
	length := int64(-1)
	var digest string
	for fields := 0; ; fields++ {
		line, err := readLine(r)
		if err != nil {
			return rec, fmt.Errorf("header: %w", err)
		}
		if line == "" {
			break
		}
		if fields >= maxRecoverFields {
			return rec, fmt.Errorf("more than %d header fields", maxRecoverFields)
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok || name == "" || strings.ContainsFunc(name, isCTLOrSpace) {
			return rec, fmt.Errorf("malformed header line %q", truncateForError(line))
		}
		value = strings.Trim(value, " \t")
		switch strings.ToLower(name) {
		case "warc-type":
			rec.typ = value
		case "warc-record-id":
			rec.id = value
		case "warc-target-uri":
			rec.uri = value
		case "warc-concurrent-to":
			rec.concurrent = append(rec.concurrent, value)
		case "warc-block-digest":
			digest = value
		case "content-length":
			if length >= 0 {
				return rec, errors.New("two Content-Length fields")
			}
			n, err := strconv.ParseInt(value, 10, 64)
			if err != nil || n < 0 || value[0] == '+' {
				return rec, fmt.Errorf("Content-Length %q is not a length", truncateForError(value))
			}
			length = n
		}
	}
	if length < 0 {
		return rec, errors.New("no Content-Length")
	}
	if rec.typ == "" || rec.id == "" {
		return rec, errors.New("no WARC-Type or WARC-Record-ID")
	}
	var h hash.Hash // nil: a digest recovery does not check
	alg, want, ok := strings.Cut(digest, ":")
	if ok {
		h = hashes.get(alg)
	}
	var dst io.Writer = io.Discard
	if h != nil {
		dst = h
	}
	if n, err := io.CopyN(dst, r, length); err != nil {
		return rec, fmt.Errorf("block is %d bytes, Content-Length says %d", n, length)
	}
	if h != nil {
		sum := h.Sum(nil)
		b32 := strings.TrimRight(base32.StdEncoding.EncodeToString(sum), "=")
		if !strings.EqualFold(strings.TrimRight(want, "="), b32) && !strings.EqualFold(want, hex.EncodeToString(sum)) {
			return rec, fmt.Errorf("WARC-Block-Digest %q does not match the block", truncateForError(digest))
		}
	}
	var end [4]byte
	if _, err := io.ReadFull(r, end[:]); err != nil || string(end[:]) != "\r\n\r\n" {
		return rec, errors.New("block not followed by CRLF CRLF")
	}
	if _, err := r.ReadByte(); err != io.EOF {
		return rec, errors.New("data after the record")
	}
	return rec, nil
}

// readLine reads a CRLF-ended line of at most maxRecoverLine bytes and
// returns it without the CRLF.
func readLine(r *bufio.Reader) (string, error) {
	line, err := readLineMax(r, maxRecoverLine)
	if errors.Is(err, errLineTooLong) {
		return "", fmt.Errorf("line longer than %d bytes", maxRecoverLine)
	}
	return line, err
}

// errLineTooLong is readLineMax's error for a line past its limit.
var errLineTooLong = errors.New("line too long")

// readLineMax reads a CRLF-ended line of at most limit bytes, CRLF
// included, and returns it without the CRLF.
func readLineMax(r *bufio.Reader, limit int) (string, error) {
	var long []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(long)+len(chunk) > limit {
			return "", errLineTooLong
		}
		switch err {
		case nil:
			line := string(append(long, chunk...))
			if !strings.HasSuffix(line, "\r\n") {
				return "", errors.New("line not ended by CRLF")
			}
			return line[:len(line)-2], nil
		case bufio.ErrBufferFull:
			long = append(long, chunk...)
		case io.EOF:
			return "", io.ErrUnexpectedEOF
		default:
			return "", err
		}
	}
}

func truncateForError(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}
