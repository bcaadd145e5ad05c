package warc

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"github.com/klauspost/compress/gzip"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nlnwa/gowarc/v3"
)

// Digests use SHA-1 in upper-case base32 ("sha1:" + 32 characters), the
// convention of Heritrix, wget, warcio and the CDX(J) "digest" field.
const digestAlgorithm = "sha1"

// WARC 1.1 identifiers written into every warcinfo record.
const (
	warcFormat     = "WARC File Format 1.1"
	warcConformsTo = "http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/"
)

// dateFormat is WARC-Date with microsecond precision, as WARC 1.1 allows.
const dateFormat = "2006-01-02T15:04:05.000000Z"

// newBuilderMu serialises gowarc.NewRecordBuilder: in gowarc v3.1.0 every
// call writes a package variable of github.com/google/uuid (through
// uuid.EnableRandPool), a data race when two goroutines build records at once.
// It guards that third-party global; the package keeps no state of its own.
var newBuilderMu sync.Mutex

// field is one WARC header field the writer sets.
type field struct{ name, value string }

// newRecordID returns a random (version 4) UUID URN in angle brackets.
func newRecordID() string {
	var u [16]byte
	_, _ = rand.Read(u[:]) // crypto/rand.Read never fails (Go 1.24+)
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return fmt.Sprintf("<urn:uuid:%x-%x-%x-%x-%x>", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}

// buildRecord builds one record of type rt with the given fields and a block
// made of parts. gowarc adds Content-Length and the block and payload digests.
func buildRecord(rt gowarc.RecordType, fields []field, parts ...[]byte) (gowarc.WarcRecord, error) {
	size := 0
	for _, p := range parts {
		size += len(p)
	}
	newBuilderMu.Lock()
	b := gowarc.NewRecordBuilder(rt,
		gowarc.WithDefaultDigestAlgorithm(digestAlgorithm),
		gowarc.WithAddMissingDigest(true),
		// The block is already in memory: keep gowarc's copy there too
		// rather than spilling it to a temporary file.
		gowarc.WithBufferMaxMemBytes(int64(size)+1),
	)
	newBuilderMu.Unlock()
	for _, f := range fields {
		b.AddWarcHeader(f.name, f.value)
	}
	for _, p := range parts {
		if _, err := b.Write(p); err != nil {
			_ = b.Close()
			return nil, err
		}
	}
	// Validation findings (a malformed header from a server, say) are data
	// about the capture, not reasons to refuse it: they are dropped.
	rec, _, err := b.Build()
	if err != nil {
		return nil, err
	}
	// gowarc's validator blanks a field value it cannot parse (a URL its
	// WHATWG parser rejects, for one). The writer has checked its own values,
	// so it puts them back.
	h := rec.WarcHeader()
	for _, f := range fields {
		if h.Get(f.name) != f.value {
			h.Set(f.name, f.value)
		}
	}
	return rec, nil
}

// buildExchange builds the response and request records of ex, linked both
// ways with WARC-Concurrent-To.
func buildExchange(ex *Exchange, date time.Time, infoID string) (resp, req gowarc.WarcRecord, err error) {
	respID, reqID := newRecordID(), newRecordID()
	d := date.UTC().Format(dateFormat)
	common := func(id, other, ct string) []field {
		fs := []field{
			{gowarc.WarcRecordID, id},
			{gowarc.WarcDate, d},
			{gowarc.WarcTargetURI, ex.URL},
		}
		if ex.IP != "" {
			fs = append(fs, field{gowarc.WarcIPAddress, ex.IP})
		}
		fs = append(fs,
			field{gowarc.WarcConcurrentTo, other},
			field{gowarc.WarcWarcinfoID, infoID},
			field{gowarc.ContentType, ct})
		return fs
	}
	respFields := common(respID, reqID, "application/http;msgtype=response")
	if ex.Truncated != "" {
		respFields = append(respFields, field{gowarc.WarcTruncated, ex.Truncated})
	}
	resp, err = buildRecord(gowarc.Response, respFields, ex.ResponseHeader, ex.Body)
	if err != nil {
		return nil, nil, fmt.Errorf("response record: %w", err)
	}
	req, err = buildRecord(gowarc.Request, common(reqID, respID, "application/http;msgtype=request"), ex.Request)
	if err != nil {
		_ = resp.Close()
		return nil, nil, fmt.Errorf("request record: %w", err)
	}
	return resp, req, nil
}

// buildWarcinfo builds the warcinfo record that opens the file named name.
func buildWarcinfo(name string, date time.Time, o *Options) (gowarc.WarcRecord, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "software: %s\r\n", o.Software)
	fmt.Fprintf(&b, "format: %s\r\n", warcFormat)
	fmt.Fprintf(&b, "conformsTo: %s\r\n", warcConformsTo)
	for _, k := range slices.Sorted(maps.Keys(o.Info)) {
		fmt.Fprintf(&b, "%s: %s\r\n", k, o.Info[k])
	}
	return buildRecord(gowarc.Warcinfo, []field{
		{gowarc.WarcRecordID, newRecordID()},
		{gowarc.WarcDate, date.UTC().Format(dateFormat)},
		{gowarc.WarcFilename, name},
		{gowarc.ContentType, gowarc.ApplicationWarcFields},
	}, []byte(b.String()))
}

// encoder turns records into gzip members, one member per record, in buf.
// It is not safe for concurrent use; the Writer pools them.
type encoder struct {
	buf  bytes.Buffer
	gz   *gzip.Writer
	m    gowarc.Marshaler
	lens []int64 // compressed length of each record of the last encode
}

// newEncoder returns an encoder compressing at level (1 to 9, checked by
// Options.Validate).
func newEncoder(level int) *encoder {
	gz, err := gzip.NewWriterLevel(nil, level)
	if err != nil {
		panic(fmt.Sprintf("warc: gzip level %d: %v", level, err)) // Validate bounds level
	}
	return &encoder{gz: gz, m: gowarc.NewMarshaler()}
}

// encode replaces the content of e.buf with recs, each its own gzip member,
// and records each member's length in e.lens. A record may be encoded again
// (after a header change): its block is cached in memory.
func (e *encoder) encode(recs ...gowarc.WarcRecord) error {
	e.buf.Reset()
	e.lens = e.lens[:0]
	for _, r := range recs {
		start := e.buf.Len()
		e.gz.Reset(&e.buf)
		if _, _, err := e.m.Marshal(e.gz, r, 0); err != nil {
			return fmt.Errorf("marshal %s record: %w", r.Type(), err)
		}
		if err := e.gz.Close(); err != nil {
			return fmt.Errorf("compress %s record: %w", r.Type(), err)
		}
		e.lens = append(e.lens, int64(e.buf.Len()-start))
	}
	return nil
}
