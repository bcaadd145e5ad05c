package warc

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/gzip"
)

// Digests use SHA-256 in upper-case base32 ("sha256:" + 56 characters,
// padding included), as WARC 1.1 allows (section 5.8, and its annex on
// digests) and warcio and Browsertrix write. SHA-1, the older convention
// of Heritrix and wget, would cost a pass of its own over every body: the
// crawler takes a page's SHA-256 anyway, for its content gate, and hands
// it to the writer (Exchange.PayloadSHA256). Recovery checks SHA-1 block
// digests too, for files written before.
const digestAlgorithm = "sha256"

// WARC 1.1 identifiers written into every warcinfo record.
const (
	warcFormat     = "WARC File Format 1.1"
	warcConformsTo = "http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/"
)

// dateFormat is WARC-Date with microsecond precision, as WARC 1.1 allows.
const dateFormat = "2006-01-02T15:04:05.000000Z"

// field is one WARC header field the writer sets.
type field struct{ name, value string }

// record is one WARC record ready to encode: its header fields in order
// (WARC-Type first; Content-Length and the digests last) and its block, in
// parts that are written one after the other.
//
// The writer serialises records itself rather than through gowarc's
// record builder: the builder re-parsed the HTTP message the fetcher had
// just parsed, validated every field with a WHATWG URL parser and read
// the block twice for its digests, about a tenth of a page's CPU on
// `trawl bench crawl`. Every field value is the writer's own or checked
// by Exchange.validate; the tests read each record back with gowarc and
// with warcio.
type record struct {
	fields []field
	parts  [][]byte
}

// newRecordID returns a random (version 4) UUID URN in angle brackets.
func newRecordID() string {
	var u [16]byte
	_, _ = rand.Read(u[:]) // crypto/rand.Read never fails (Go 1.24+)
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	const prefix = "<urn:uuid:"
	b := make([]byte, 0, len(prefix)+36+1)
	b = append(b, prefix...)
	for i, part := range [...][]byte{u[0:4], u[4:6], u[6:8], u[8:10], u[10:16]} {
		if i > 0 {
			b = append(b, '-')
		}
		b = hex.AppendEncode(b, part)
	}
	return string(append(b, '>'))
}

// newRecord returns a record of type typ with fields, then Content-Length
// and WARC-Block-Digest of the block made of parts, and, if payload >= 0,
// WARC-Payload-Digest of the block from byte payload on (an HTTP
// message's entity body: WARC 1.1 section 5.9). payloadSum, if not nil,
// is that payload's SHA-256, known to the caller.
func newRecord(typ string, fields []field, payload int, payloadSum []byte, parts ...[]byte) *record {
	size := 0
	block := sha256.New()
	for _, p := range parts {
		size += len(p)
		block.Write(p)
	}
	r := &record{parts: parts, fields: make([]field, 0, len(fields)+4)}
	r.fields = append(r.fields, field{"WARC-Type", typ})
	r.fields = append(r.fields, fields...)
	r.fields = append(r.fields,
		field{"Content-Length", strconv.Itoa(size)},
		field{"WARC-Block-Digest", digestOf(block.Sum(nil))})
	if payload >= 0 {
		if payloadSum == nil {
			h := sha256.New()
			skip := payload
			for _, p := range parts {
				if skip >= len(p) {
					skip -= len(p)
					continue
				}
				h.Write(p[skip:])
				skip = 0
			}
			payloadSum = h.Sum(nil)
		}
		r.fields = append(r.fields, field{"WARC-Payload-Digest", digestOf(payloadSum)})
	}
	return r
}

// Digest formats a SHA-256 sum as the WARC records' digest fields carry
// it: "sha256:" and base32.
func Digest(sum []byte) string { return digestOf(sum) }

// digestOf formats a SHA-256 sum as a WARC digest: "sha256:" and base32.
func digestOf(sum []byte) string {
	return digestAlgorithm + ":" + base32.StdEncoding.EncodeToString(sum)
}

// get returns the value of the field named name, "" if none.
func (r *record) get(name string) string {
	for _, f := range r.fields {
		if f.name == name {
			return f.value
		}
	}
	return ""
}

// set replaces the value of the field named name (which must be there).
func (r *record) set(name, value string) {
	for i := range r.fields {
		if r.fields[i].name == name {
			r.fields[i].value = value
			return
		}
	}
	panic("warc: set of a missing field " + name)
}

// writeTo writes r, serialised as WARC 1.1 (version line, fields, empty
// line, block, two CRLFs), to w.
func (r *record) writeTo(w io.Writer) error {
	size := len("WARC/1.1\r\n\r\n")
	for _, f := range r.fields {
		size += len(f.name) + len(": \r\n") + len(f.value)
	}
	head := make([]byte, 0, size)
	head = append(head, "WARC/1.1\r\n"...)
	for _, f := range r.fields {
		head = append(head, f.name...)
		head = append(head, ": "...)
		head = append(head, f.value...)
		head = append(head, "\r\n"...)
	}
	head = append(head, "\r\n"...)
	if _, err := w.Write(head); err != nil {
		return err
	}
	for _, p := range r.parts {
		if _, err := w.Write(p); err != nil {
			return err
		}
	}
	_, err := w.Write(recordEnd)
	return err
}

// recordEnd ends every record: two CRLFs after the block.
var recordEnd = []byte("\r\n\r\n")

// headerEnd is the length of an HTTP message's header in msg, through
// the empty line that ends it (a line end followed by CRLF or LF), or -1
// if msg has no empty line.
func headerEnd(msg []byte) int {
	crlf, lf := bytes.Index(msg, []byte("\n\r\n")), bytes.Index(msg, []byte("\n\n"))
	switch {
	case crlf >= 0 && (lf < 0 || crlf < lf):
		return crlf + 3
	case lf >= 0:
		return lf + 2
	}
	return -1
}

// buildExchange builds the response and request records of ex, linked both
// ways with WARC-Concurrent-To.
//
// Both records (a revisit too) carry one WARC-Protocol field per protocol
// of ex.Protocols, highest layer first, as the IIPC's WARC-Protocol
// extension has it (iipc/warc-specifications: specifications/
// warc-extensions/warc-protocol.md, adopted from issue 42, whose
// discussion settled on repeated fields rather than a comma-separated
// list; Browsertrix, Common Crawl's Nutch and StormCrawler write them
// so, and warcio.js reads them as one multi-valued field):
//
//	WARC-Protocol: h2
//	WARC-Protocol: tls/1.3
//
// An HTTP/2 exchange is written in HTTP/1.1 form ("WARC Extensions for
// HTTP/2", same repository): the field is what says it was h2.
func buildExchange(ex *Exchange, date time.Time, infoID string) (resp, req *record) {
	respID, reqID := newRecordID(), newRecordID()
	d := date.UTC().Format(dateFormat)
	common := func(id, other, ct string, extra int) []field {
		fs := make([]field, 0, 8+len(ex.Protocols)+extra)
		fs = append(fs,
			field{"WARC-Record-ID", id},
			field{"WARC-Date", d},
			field{"WARC-Target-URI", ex.URL})
		if ex.IP != "" {
			fs = append(fs, field{"WARC-IP-Address", ex.IP})
		}
		for _, p := range ex.Protocols {
			fs = append(fs, field{"WARC-Protocol", p})
		}
		return append(fs,
			field{"WARC-Concurrent-To", other},
			field{"WARC-Warcinfo-ID", infoID},
			field{"Content-Type", ct})
	}
	respFields := common(respID, reqID, "application/http;msgtype=response", 4)
	if ex.Truncated != "" {
		respFields = append(respFields, field{"WARC-Truncated", ex.Truncated})
	}
	if rv := ex.Revisit; rv != nil {
		// The HTTP headers only. Identical payload: the payload digest is
		// the original's. Server not modified: there is no payload, so no
		// payload digest, and the original is named as far as it is known.
		profile, payload := ProfileIdenticalPayload, len(ex.ResponseHeader)
		if rv.Profile == ProfileServerNotModified {
			profile, payload = ProfileServerNotModified, -1
		}
		respFields = append(respFields, field{"WARC-Profile", profile})
		if rv.TargetURI != "" {
			respFields = append(respFields, field{"WARC-Refers-To-Target-URI", rv.TargetURI})
		}
		if !rv.Date.IsZero() {
			respFields = append(respFields, field{"WARC-Refers-To-Date", rv.Date.UTC().Format(dateFormat)})
		}
		if rv.RecordID != "" {
			respFields = append(respFields, field{"WARC-Refers-To", rv.RecordID})
		}
		resp = newRecord("revisit", respFields, payload, ex.PayloadSHA256, ex.ResponseHeader)
	} else {
		resp = newRecord("response", respFields, len(ex.ResponseHeader), ex.PayloadSHA256, ex.ResponseHeader, ex.Body)
	}
	// Exchange.validate made sure the request has its empty line.
	req = newRecord("request", common(reqID, respID, "application/http;msgtype=request", 0), headerEnd(ex.Request), nil, ex.Request)
	return resp, req
}

// buildMetadata builds the metadata record of ex (ex.Metadata set) about
// its response record resp.
func buildMetadata(ex *Exchange, resp *record, infoID string) *record {
	return newRecord("metadata", []field{
		{"WARC-Record-ID", newRecordID()},
		{"WARC-Date", resp.get("WARC-Date")},
		{"WARC-Target-URI", ex.URL},
		{"WARC-Refers-To", resp.get("WARC-Record-ID")},
		{"WARC-Warcinfo-ID", infoID},
		{"Content-Type", ex.Metadata.ContentType},
	}, -1, nil, ex.Metadata.Body)
}

// buildWarcinfo builds the warcinfo record that opens the file named name.
func buildWarcinfo(name string, date time.Time, o *Options) *record {
	var b strings.Builder
	fmt.Fprintf(&b, "software: %s\r\n", o.Software)
	fmt.Fprintf(&b, "format: %s\r\n", warcFormat)
	fmt.Fprintf(&b, "conformsTo: %s\r\n", warcConformsTo)
	for _, k := range slices.Sorted(maps.Keys(o.Info)) {
		fmt.Fprintf(&b, "%s: %s\r\n", k, o.Info[k])
	}
	return newRecord("warcinfo", []field{
		{"WARC-Record-ID", newRecordID()},
		{"WARC-Date", date.UTC().Format(dateFormat)},
		{"WARC-Filename", name},
		{"Content-Type", "application/warc-fields"},
	}, -1, nil, []byte(b.String()))
}

// encoder turns records into gzip members, one member per record, in buf.
// It is not safe for concurrent use; the Writer pools them.
type encoder struct {
	buf  bytes.Buffer
	gz   *gzip.Writer
	lens []int64 // compressed length of each record of the last encode
}

// newEncoder returns an encoder compressing at level (1 to 9, checked by
// Options.Validate).
func newEncoder(level int) *encoder {
	gz, err := gzip.NewWriterLevel(nil, level)
	if err != nil {
		panic(fmt.Sprintf("warc: gzip level %d: %v", level, err)) // Validate bounds level
	}
	return &encoder{gz: gz}
}

// encode replaces the content of e.buf with recs, each its own gzip member,
// and records each member's length in e.lens. A record may be encoded
// again (after a field changed).
func (e *encoder) encode(recs ...*record) error {
	e.buf.Reset()
	e.lens = e.lens[:0]
	for _, r := range recs {
		start := e.buf.Len()
		e.gz.Reset(&e.buf)
		if err := r.writeTo(e.gz); err != nil {
			return fmt.Errorf("compress %s record: %w", r.get("WARC-Type"), err)
		}
		if err := e.gz.Close(); err != nil {
			return fmt.Errorf("compress %s record: %w", r.get("WARC-Type"), err)
		}
		e.lens = append(e.lens, int64(e.buf.Len()-start))
	}
	return nil
}
