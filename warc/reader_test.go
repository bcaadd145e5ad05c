package warc

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

// readerExchanges are written by writeReaderFile; the table of what Reader
// must report is built from them.
var readerExchanges = []Exchange{
	{
		URL:            "http://a.test/",
		IP:             "192.0.2.1",
		Request:        []byte("GET / HTTP/1.1\r\nHost: a.test\r\n\r\n"),
		ResponseHeader: []byte("HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n"),
		Body:           []byte("<p>hello</p>"),
	},
	{
		URL:            "https://b.test/x?b=2&a=1",
		Request:        []byte("GET /x?b=2&a=1 HTTP/1.1\r\nHost: b.test\r\n\r\n"),
		ResponseHeader: []byte("HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\n\r\n"),
		Body:           bytes.Repeat([]byte("gone "), 5000),
	},
	{
		URL:            "http://c.test/redirect",
		Request:        []byte("GET /redirect HTTP/1.1\r\nHost: c.test\r\n\r\n"),
		ResponseHeader: []byte("HTTP/1.0 301 Moved Permanently\nLocation: /\n\n"),
	},
}

// writeReaderFile writes readerExchanges with a Writer into dir and returns
// the file and the exchanges' locations.
func writeReaderFile(t testing.TB, dir string) (string, []Location) {
	t.Helper()
	w, err := NewWriter(Options{Dir: dir, Now: func() time.Time { return time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	var locs []Location
	for i := range readerExchanges {
		ex := readerExchanges[i]
		loc, err := w.Write(&ex)
		if err != nil {
			t.Fatal(err)
		}
		locs = append(locs, loc)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	files := w.Files()
	if len(files) != 1 {
		t.Fatalf("Files() = %v, want one file", files)
	}
	return files[0], locs
}

// readAll reads every record of data, with its block.
func readAll(data []byte, name string) ([]*Record, [][]byte, error) {
	rd := NewReader(bytes.NewReader(data), name)
	var recs []*Record
	var blocks [][]byte
	for {
		rec, err := rd.Next()
		if err == io.EOF {
			return recs, blocks, nil
		}
		if err != nil {
			return recs, blocks, err
		}
		b, err := io.ReadAll(rd.Block())
		if err != nil {
			return recs, blocks, err
		}
		if _, err := rd.End(); err != nil {
			return recs, blocks, err
		}
		recs = append(recs, rec)
		blocks = append(blocks, b)
	}
}

func TestReaderWriterFile(t *testing.T) {
	file, locs := writeReaderFile(t, t.TempDir())
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	recs, blocks, err := readAll(data, file)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1+2*len(readerExchanges) {
		t.Fatalf("read %d records, want %d", len(recs), 1+2*len(readerExchanges))
	}
	if recs[0].Type != "warcinfo" || recs[0].Offset != 0 {
		t.Errorf("first record %s at %d, want warcinfo at 0", recs[0].Type, recs[0].Offset)
	}
	// Members tile the file.
	var next int64
	for i, r := range recs {
		if r.Offset != next {
			t.Errorf("record %d at offset %d, want %d (end of the previous)", i, r.Offset, next)
		}
		next = r.Offset + r.Length
		if int64(len(blocks[i])) != r.ContentLength {
			t.Errorf("record %d: block %d bytes, Content-Length %d", i, len(blocks[i]), r.ContentLength)
		}
	}
	if next != int64(len(data)) {
		t.Errorf("records end at %d, file is %d bytes", next, len(data))
	}
	wantStatus := []int{200, 404, 301}
	wantType := []string{"text/html; charset=utf-8", "text/plain", ""}
	for i, ex := range readerExchanges {
		resp, req := recs[1+2*i], recs[2+2*i]
		if resp.Type != "response" || req.Type != "request" {
			t.Fatalf("exchange %d: records %s, %s; want response, request", i, resp.Type, req.Type)
		}
		if resp.Offset != locs[i].Offset || resp.Length != locs[i].Length {
			t.Errorf("exchange %d: response at %d+%d, Writer said %d+%d", i, resp.Offset, resp.Length, locs[i].Offset, locs[i].Length)
		}
		if resp.TargetURI != ex.URL || req.TargetURI != ex.URL {
			t.Errorf("exchange %d: target URIs %q, %q; want %q", i, resp.TargetURI, req.TargetURI, ex.URL)
		}
		if resp.HTTP == nil {
			t.Fatalf("exchange %d: no HTTP head: %v", i, resp.HTTPErr)
		}
		if resp.HTTP.Status != wantStatus[i] || resp.HTTP.ContentType != wantType[i] {
			t.Errorf("exchange %d: HTTP %d %q, want %d %q", i, resp.HTTP.Status, resp.HTTP.ContentType, wantStatus[i], wantType[i])
		}
		if want := append(append([]byte{}, ex.ResponseHeader...), ex.Body...); !bytes.Equal(blocks[1+2*i], want) {
			t.Errorf("exchange %d: response block differs from what was written", i)
		}
		if !strings.HasPrefix(resp.PayloadDigest, "sha256:") || resp.Date != "2024-05-06T07:08:09.000000Z" {
			t.Errorf("exchange %d: payload digest %q, date %q", i, resp.PayloadDigest, resp.Date)
		}
		if len(req.ConcurrentTo) != 1 || req.ConcurrentTo[0] != resp.ID {
			t.Errorf("exchange %d: request WARC-Concurrent-To %v, want [%s]", i, req.ConcurrentTo, resp.ID)
		}
		if req.HTTP != nil {
			t.Errorf("exchange %d: request record has an HTTP response head", i)
		}
	}
}

// TestReaderSkipsBlocks reads headers only: Next must skip unread blocks.
func TestReaderSkipsBlocks(t *testing.T) {
	file, locs := writeReaderFile(t, t.TempDir())
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd := NewReader(f, file)
	var offsets []int64
	for {
		rec, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if rec.Type == "response" {
			offsets = append(offsets, rec.Offset)
		}
	}
	for i, loc := range locs {
		if i >= len(offsets) || offsets[i] != loc.Offset {
			t.Fatalf("response offsets %v, want those of %v", offsets, locs)
		}
	}
}

// TestReaderUncompressed reads the same records from the file decompressed.
func TestReaderUncompressed(t *testing.T) {
	file, _ := writeReaderFile(t, t.TempDir())
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	gz, gzBlocks, err := readAll(data, file)
	if err != nil {
		t.Fatal(err)
	}
	recs, blocks, err := readAll(plain, "plain.warc")
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(gz) {
		t.Fatalf("uncompressed: %d records, gzip: %d", len(recs), len(gz))
	}
	var next int64
	for i := range recs {
		if recs[i].ID != gz[i].ID || !bytes.Equal(blocks[i], gzBlocks[i]) {
			t.Errorf("record %d differs between the gzip and the uncompressed file", i)
		}
		if recs[i].Offset != next {
			t.Errorf("record %d at %d, want %d", i, recs[i].Offset, next)
		}
		next = recs[i].Offset + recs[i].Length
		if !bytes.HasPrefix(plain[recs[i].Offset:], []byte("WARC/1.1\r\n")) {
			t.Errorf("record %d: offset %d is not a version line", i, recs[i].Offset)
		}
	}
	if next != int64(len(plain)) {
		t.Errorf("records end at %d, file is %d bytes", next, len(plain))
	}
}

func TestReaderMalformed(t *testing.T) {
	file, locs := writeReaderFile(t, t.TempDir())
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	second := locs[1].Offset // the second response's member
	corrupt := bytes.Clone(data)
	corrupt[second+30] ^= 0xff
	gzipOf := func(s string) []byte {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write([]byte(s))
		zw.Close()
		return b.Bytes()
	}
	cases := []struct {
		name   string
		data   []byte
		offset int64
		want   string
	}{
		{"cut in a member", data[:second+40], second, ""},
		{"cut in a block", data[:locs[1].Offset+locs[1].Length-12], second, ""},
		{"corrupt member", corrupt, second, ""},
		{"garbage after", append(bytes.Clone(data), "junk"...), int64(len(data)), "gzip header"},
		{"not WARC", gzipOf("HTTP/1.1 200 OK\r\n\r\n"), 0, "version line"},
		{"no length", gzipOf("WARC/1.1\r\nWARC-Type: resource\r\n\r\n"), 0, "no Content-Length"},
		{"bad length", gzipOf("WARC/1.1\r\nWARC-Type: resource\r\nContent-Length: -1\r\n\r\n"), 0, "not a length"},
		{"short block", gzipOf("WARC/1.1\r\nWARC-Type: resource\r\nContent-Length: 10\r\n\r\nabc"), 0, "cut short"},
		{"two records a member", gzipOf("WARC/1.1\r\nWARC-Type: resource\r\nContent-Length: 1\r\n\r\na\r\n\r\nWARC/1.1\r\nWARC-Type: resource\r\nContent-Length: 1\r\n\r\nb\r\n\r\n"), 0, "more than one record"},
		{"plain short", []byte("WARC/1.1\r\nWARC-Type: resource\r\nContent-Length: 10\r\n\r\nabc"), 0, "cut short"},
		{"long header", gzipOf("WARC/1.1\r\nX: " + strings.Repeat("a", MaxHeaderBytes) + "\r\n\r\n"), 0, "longer than"},
	}
	for _, c := range cases {
		_, _, err := readAll(c.data, "f.warc.gz")
		var re *ReadError
		if !errors.As(err, &re) {
			t.Errorf("%s: error %v, want a *ReadError", c.name, err)
			continue
		}
		if re.Offset != c.offset || re.File != "f.warc.gz" || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q (offset %d), want offset %d and %q", c.name, err, re.Offset, c.offset, c.want)
		}
		if !strings.Contains(err.Error(), "f.warc.gz") {
			t.Errorf("%s: error %q does not name the file", c.name, err)
		}
	}
}

// FuzzReader reads arbitrary bytes: no panic, no error without a file
// name and offset, and records that tile what was read.
func FuzzReader(f *testing.F) {
	file, _ := writeReaderFile(f, f.TempDir())
	data, err := os.ReadFile(file)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add(data[:len(data)/2])
	f.Add([]byte("WARC/1.0\r\nWARC-Type: response\r\nContent-Type: application/http\r\nContent-Length: 19\r\n\r\nHTTP/1.1 200 OK\r\n\r\n\r\n\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, _, err := readAll(data, "fuzz")
		var re *ReadError
		if err != nil && !errors.As(err, &re) {
			t.Fatalf("error %v is not a *ReadError", err)
		}
		for i, r := range recs {
			if r.Offset < 0 || r.Length <= 0 || r.Offset+r.Length > int64(len(data)) {
				t.Fatalf("record %d at %d+%d outside %d bytes", i, r.Offset, r.Length, len(data))
			}
			if i > 0 && r.Offset < recs[i-1].Offset+recs[i-1].Length {
				t.Fatalf("record %d at %d overlaps the previous", i, r.Offset)
			}
		}
	})
}
