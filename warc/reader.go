package warc

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Limits of Reader. A record beyond them is an error.
const (
	// MaxHeaderBytes bounds a record's WARC header, and separately the HTTP
	// status line and headers at the start of a response or revisit block.
	MaxHeaderBytes = 1 << 20
	// maxHeaderFields bounds the number of fields in one header.
	maxHeaderFields = 1000
)

// Record is one record as Reader read it: its WARC header fields and where
// it lies in the file. Its block is read through Reader.Block.
type Record struct {
	// Offset is the offset in the file of the record's gzip member (or, in
	// an uncompressed file, of its version line).
	Offset int64
	// Length is the length of that gzip member (or of the record up to and
	// including the CRLF CRLF after its block). It is 0 until Reader.End
	// (or the next Reader.Next) has read to the end of the record.
	Length int64

	Version       string // "WARC/1.1" or "WARC/1.0"
	Type          string // WARC-Type
	ID            string // WARC-Record-ID
	Date          string // WARC-Date, as written
	TargetURI     string // WARC-Target-URI
	ContentType   string // Content-Type of the block
	ContentLength int64  // Content-Length: the block's size
	BlockDigest   string // WARC-Block-Digest
	PayloadDigest string // WARC-Payload-Digest
	Profile       string // WARC-Profile (revisit records)
	// RefersTo, RefersToTargetURI and RefersToDate are WARC-Refers-To,
	// WARC-Refers-To-Target-URI and WARC-Refers-To-Date (revisit records).
	RefersTo, RefersToTargetURI, RefersToDate string
	ConcurrentTo                              []string // WARC-Concurrent-To, in order
	// Fields holds every WARC header field in order, names as written.
	Fields [][2]string

	// HTTP is the HTTP status line and headers at the start of the block of
	// a response or revisit record whose Content-Type is application/http;
	// nil for other records, or if the block does not start with them
	// (HTTPErr says why).
	HTTP    *HTTPHead
	HTTPErr error
}

// HTTPHead is the status line and headers of an HTTP response.
type HTTPHead struct {
	Proto       string // "HTTP/1.1"
	Status      int    // 200
	Reason      string // "OK"
	ContentType string // the first Content-Type header's value, or ""
	// Header holds every header in order, names as written.
	Header [][2]string
	// Size is the number of bytes of the status line, headers and the
	// blank line after them.
	Size int
}

// Values returns the values of every WARC header field named name (any
// case), in order: a field that may be repeated, such as WARC-Protocol or
// WARC-Concurrent-To. Nil if there is none.
func (r *Record) Values(name string) []string {
	var vs []string
	for _, f := range r.Fields {
		if strings.EqualFold(f[0], name) {
			vs = append(vs, f[1])
		}
	}
	return vs
}

// Get returns the value of the first WARC header field named name (any
// case), or "".
func (r *Record) Get(name string) string {
	for _, f := range r.Fields {
		if strings.EqualFold(f[0], name) {
			return f[1]
		}
	}
	return ""
}

// ReadError is a malformed or unreadable record: the file (as given to
// NewReader), the offset of the record's gzip member (or version line), and
// what is wrong.
type ReadError struct {
	File   string
	Offset int64
	Err    error
}

func (e *ReadError) Error() string {
	return fmt.Sprintf("warc: read %s: offset %d: %v", e.File, e.Offset, e.Err)
}

func (e *ReadError) Unwrap() error { return e.Err }

// Reader reads the records of a WARC file in order: a file of one gzip
// member per record (as Writer writes them), or an uncompressed file. It
// holds at most one header (MaxHeaderBytes) in memory; blocks are streamed.
// It is not safe for concurrent use. After an error other than io.EOF, every
// later call returns that error.
//
// Member boundaries are found as Recover finds them: gzip reads from a
// counting io.ByteReader, so the count is the offset just past a member once
// gzip reports its end (see RecoverFS).
type Reader struct {
	name       string
	src        *countingReader
	compressed bool
	zr         gzip.Reader
	content    *contentReader
	body       *bufio.Reader // over the record's content (decompressed)
	rec        *Record
	block      io.Reader // the current block: HTTP head bytes, then rest
	rest       *io.LimitedReader
	err        error
	started    bool
}

// NewReader returns a Reader over r, the content of the file name (used in
// errors only). Whether the file is gzip is decided from its first bytes.
func NewReader(r io.Reader, name string) *Reader {
	return &Reader{
		name: name,
		src:  &countingReader{r: bufio.NewReaderSize(r, 32<<10)},
		body: bufio.NewReaderSize(nil, 16<<10),
	}
}

func (rd *Reader) fail(offset int64, err error) error {
	if rd.src.err != nil && !errors.Is(err, rd.src.err) {
		err = fmt.Errorf("%w (%v)", rd.src.err, err)
	}
	rd.err = &ReadError{File: rd.name, Offset: offset, Err: err}
	return rd.err
}

// Next reads the header of the next record (finishing the current one, as
// End does) and returns it; io.EOF after the last record. The record's block
// can then be read through Block until the next call to Next or End.
func (rd *Reader) Next() (*Record, error) {
	if rd.err != nil {
		return nil, rd.err
	}
	if rd.rec != nil {
		if _, err := rd.End(); err != nil {
			return nil, err
		}
	}
	if !rd.started {
		rd.started = true
		head, _ := rd.src.r.Peek(len(gzipMagic))
		rd.compressed = bytes.Equal(head, gzipMagic)
		if !rd.compressed {
			rd.body.Reset(rd.src)
		}
	}
	start := rd.src.n
	if rd.compressed {
		err := rd.zr.Reset(rd.src)
		if err == io.EOF && rd.src.err == nil {
			rd.err = io.EOF
			return nil, io.EOF
		}
		if err != nil {
			return nil, rd.fail(start, fmt.Errorf("gzip header: %w", err))
		}
		rd.zr.Multistream(false)
		rd.content = &contentReader{zr: &rd.zr}
		rd.body.Reset(rd.content)
	} else {
		// One bufio.Reader over the file for all records: the offset is
		// what src gave it minus what it still holds. Blank lines between
		// records are skipped, as warcio does.
		for {
			b, err := rd.body.Peek(1)
			if len(b) == 0 {
				if err == io.EOF {
					rd.err = io.EOF
					return nil, io.EOF
				}
				return nil, rd.fail(rd.plainOffset(), err)
			}
			if b[0] != '\r' && b[0] != '\n' {
				break
			}
			_, _ = rd.body.ReadByte()
		}
		start = rd.plainOffset()
	}
	rec, err := readHeader(rd.body)
	if err != nil {
		if rd.content != nil && rd.content.err != nil {
			err = fmt.Errorf("gzip: %w", rd.content.err)
		}
		return nil, rd.fail(start, err)
	}
	rec.Offset = start
	rd.rec = rec
	rd.rest = &io.LimitedReader{R: rd.body, N: rec.ContentLength}
	rd.block = rd.rest
	if (rec.Type == "response" || rec.Type == "revisit") && strings.HasPrefix(strings.ToLower(rec.ContentType), "application/http") {
		var raw []byte
		rec.HTTP, raw, rec.HTTPErr = readHTTPHead(rd.rest)
		rd.block = io.MultiReader(bytes.NewReader(raw), rd.rest)
	}
	rd.block = &blockReader{rd: rd, rec: rec, r: rd.block}
	return rec, nil
}

// blockReader reads a block, turning a read error into a *ReadError that
// also ends the Reader.
type blockReader struct {
	rd  *Reader
	rec *Record
	r   io.Reader
}

func (b *blockReader) Read(p []byte) (int, error) {
	if b.rd.err != nil {
		return 0, b.rd.err
	}
	n, err := b.r.Read(p)
	if err != nil && err != io.EOF {
		return n, b.rd.fail(b.rec.Offset, b.rd.contentErr(fmt.Errorf("block: %w", err)))
	}
	return n, err
}

// Block returns a reader of the current record's block (all
// Content-Length bytes), valid until the next call to Next or End. It
// returns an empty reader when there is no current record.
func (rd *Reader) Block() io.Reader {
	if rd.rec == nil || rd.err != nil {
		return strings.NewReader("")
	}
	return rd.block
}

// End reads the current record to its end (the rest of its block, the CRLF
// CRLF after it and, in a gzip file, the member's trailer), sets its Length
// and returns it. A block shorter than Content-Length, or a damaged gzip
// member, is an error.
func (rd *Reader) End() (int64, error) {
	if rd.err != nil {
		return 0, rd.err
	}
	rec := rd.rec
	if rec == nil {
		return 0, nil
	}
	rd.rec = nil
	if _, err := io.Copy(io.Discard, rd.rest); err != nil {
		return 0, rd.fail(rec.Offset, fmt.Errorf("block: %w", err))
	}
	if rd.rest.N > 0 {
		return 0, rd.fail(rec.Offset, rd.contentErr(fmt.Errorf("block cut short: %d of Content-Length %d bytes missing", rd.rest.N, rec.ContentLength)))
	}
	if rd.compressed {
		// Line ends may follow the block in the member (the writer puts
		// exactly CRLF CRLF there); anything else is another record, of a
		// file gzipped whole or with several records a member, which would
		// have no offset of its own: an error, not records lost silently.
		// Reading to the end checks the member's CRC and length.
		for {
			b, err := rd.body.ReadByte()
			if err != nil {
				break
			}
			if b != '\r' && b != '\n' {
				if rd.content.err == nil {
					return 0, rd.fail(rec.Offset, errors.New("gzip member holds more than one record (each record must be a gzip member of its own)"))
				}
				break
			}
		}
		if rd.content.err != nil {
			return 0, rd.fail(rec.Offset, fmt.Errorf("gzip: %w", rd.content.err))
		}
		if rd.src.err != nil {
			return 0, rd.fail(rec.Offset, rd.src.err)
		}
		rec.Length = rd.src.n - rec.Offset
		return rec.Length, nil
	}
	var end [4]byte
	if _, err := io.ReadFull(rd.body, end[:]); err != nil || string(end[:]) != "\r\n\r\n" {
		return 0, rd.fail(rec.Offset, errors.New("block not followed by CRLF CRLF"))
	}
	rec.Length = rd.plainOffset() - rec.Offset
	return rec.Length, nil
}

// plainOffset is the offset in an uncompressed file of the next byte
// rd.body will return.
func (rd *Reader) plainOffset() int64 {
	return rd.src.n - int64(rd.body.Buffered())
}

func (rd *Reader) contentErr(err error) error {
	if rd.content != nil && rd.content.err != nil {
		return fmt.Errorf("%v: gzip: %w", err, rd.content.err)
	}
	return err
}

// readHeader reads a record's version line and WARC header fields, up to
// and including the blank line after them.
func readHeader(r *bufio.Reader) (*Record, error) {
	budget := MaxHeaderBytes
	line, err := readBoundedLine(r, &budget)
	if err != nil {
		return nil, fmt.Errorf("version line: %w", err)
	}
	if line != "WARC/1.1" && line != "WARC/1.0" {
		return nil, fmt.Errorf("version line %q, want WARC/1.1 or WARC/1.0", truncateForError(line))
	}
	rec := &Record{Version: line, ContentLength: -1}
	for {
		line, err := readBoundedLine(r, &budget)
		if err != nil {
			return nil, fmt.Errorf("header: %w", err)
		}
		if line == "" {
			break
		}
		if len(rec.Fields) >= maxHeaderFields {
			return nil, fmt.Errorf("more than %d header fields", maxHeaderFields)
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok || name == "" || strings.ContainsFunc(name, isCTLOrSpace) {
			return nil, fmt.Errorf("malformed header line %q", truncateForError(line))
		}
		value = strings.Trim(value, " \t")
		rec.Fields = append(rec.Fields, [2]string{name, value})
		switch strings.ToLower(name) {
		case "warc-type":
			rec.Type = value
		case "warc-record-id":
			rec.ID = value
		case "warc-date":
			rec.Date = value
		case "warc-target-uri":
			rec.TargetURI = value
		case "content-type":
			rec.ContentType = value
		case "warc-block-digest":
			rec.BlockDigest = value
		case "warc-payload-digest":
			rec.PayloadDigest = value
		case "warc-profile":
			rec.Profile = value
		case "warc-refers-to":
			rec.RefersTo = value
		case "warc-refers-to-target-uri":
			rec.RefersToTargetURI = value
		case "warc-refers-to-date":
			rec.RefersToDate = value
		case "warc-concurrent-to":
			rec.ConcurrentTo = append(rec.ConcurrentTo, value)
		case "content-length":
			if rec.ContentLength >= 0 {
				return nil, errors.New("two Content-Length fields")
			}
			n, err := strconv.ParseInt(value, 10, 64)
			if err != nil || n < 0 || value == "" || value[0] == '+' {
				return nil, fmt.Errorf("Content-Length %q is not a length", truncateForError(value))
			}
			rec.ContentLength = n
		}
	}
	if rec.ContentLength < 0 {
		return nil, errors.New("no Content-Length")
	}
	if rec.Type == "" {
		return nil, errors.New("no WARC-Type")
	}
	return rec, nil
}

// readBoundedLine reads a CRLF-ended line, charging its length to budget,
// and returns it without the CRLF.
func readBoundedLine(r *bufio.Reader, budget *int) (string, error) {
	line, err := readLineMax(r, *budget)
	if errors.Is(err, errLineTooLong) {
		return "", fmt.Errorf("header longer than %d bytes", MaxHeaderBytes)
	}
	if err == nil {
		*budget -= len(line) + 2
	}
	return line, err
}

// readHTTPHead reads an HTTP response's status line and headers from the
// start of a block, at most MaxHeaderBytes. It returns the bytes it read
// (so the block can be replayed whole) whether or not they parse. Lines may
// end in LF alone, as HTTP parsers accept.
func readHTTPHead(r io.Reader) (*HTTPHead, []byte, error) {
	var raw []byte
	buf := make([]byte, 4096)
	for {
		if i := headerEnd(raw); i >= 0 {
			// Hand back what was read past the head with the head: the
			// caller replays raw whole.
			h, err := parseHTTPHead(raw[:i])
			if h != nil {
				h.Size = i
			}
			return h, raw, err
		}
		if len(raw) >= MaxHeaderBytes {
			return nil, raw, fmt.Errorf("HTTP header longer than %d bytes", MaxHeaderBytes)
		}
		n, err := r.Read(buf[:min(len(buf), MaxHeaderBytes-len(raw))])
		raw = append(raw, buf[:n]...)
		if err == io.EOF {
			if i := headerEnd(raw); i >= 0 {
				continue
			}
			return nil, raw, errors.New("HTTP header not ended by a blank line")
		}
		if err != nil {
			return nil, raw, err
		}
	}
}

// parseHTTPHead parses a status line and header lines, the blank line
// after them included.
func parseHTTPHead(head []byte) (*HTTPHead, error) {
	lines := strings.Split(strings.ReplaceAll(string(head), "\r\n", "\n"), "\n")
	proto, rest, _ := strings.Cut(lines[0], " ")
	code, reason, _ := strings.Cut(rest, " ")
	if !strings.HasPrefix(proto, "HTTP/") {
		return nil, fmt.Errorf("HTTP status line %q", truncateForError(lines[0]))
	}
	status, err := strconv.Atoi(code)
	if err != nil || len(code) != 3 || status < 100 {
		return nil, fmt.Errorf("HTTP status line %q: bad status code", truncateForError(lines[0]))
	}
	h := &HTTPHead{Proto: proto, Status: status, Reason: reason}
	for _, l := range lines[1:] {
		if l == "" {
			continue
		}
		name, value, ok := strings.Cut(l, ":")
		if !ok {
			continue // tolerated, as browsers and warcio do
		}
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		h.Header = append(h.Header, [2]string{name, value})
		if h.ContentType == "" && strings.EqualFold(name, "Content-Type") {
			h.ContentType = value
		}
	}
	return h, nil
}
