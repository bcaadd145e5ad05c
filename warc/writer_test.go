package warc

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base32"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/nlnwa/gowarc/v3"
	"github.com/trawl-crawler/trawl/internal/testkit/warccheck"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

var testTime = time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)

func fixedClock() time.Time { return testTime }

// newTestWriter returns a Writer on a fresh directory with a fixed clock.
func newTestWriter(t testing.TB, opts Options) *Writer {
	t.Helper()
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	if opts.Now == nil {
		opts.Now = fixedClock
	}
	w, err := NewWriter(opts)
	if err != nil {
		t.Fatalf("NewWriter: %v", err)
	}
	return w
}

func gzipped(t testing.TB, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// exchange returns a GET exchange for url with the given response.
func exchange(url string, status int, headers string, body []byte) *Exchange {
	host := strings.SplitN(strings.TrimPrefix(strings.TrimPrefix(url, "https://"), "http://"), "/", 2)[0]
	return &Exchange{
		URL:            url,
		IP:             "127.0.0.1",
		Date:           testTime,
		Request:        []byte("GET / HTTP/1.1\r\nHost: " + host + "\r\nUser-Agent: trawl-test\r\n\r\n"),
		ResponseHeader: []byte(fmt.Sprintf("HTTP/1.1 %d %s\r\n%sContent-Length: %d\r\n\r\n", status, "X", headers, len(body))),
		Body:           body,
	}
}

// sampleExchanges covers the body kinds the writer must carry byte for byte.
func sampleExchanges(t testing.TB) []*Exchange {
	binary := make([]byte, 3000)
	for i := range binary {
		binary[i] = byte(i * 7)
	}
	binary[10], binary[11], binary[12], binary[13] = '\r', '\n', '\r', '\n'
	truncated := exchange("http://a.test/big", 200, "Content-Type: text/html\r\n", bytes.Repeat([]byte("x"), 500))
	truncated.Truncated = "length"
	v6 := exchange("http://b.test/v6", 404, "", []byte("not found"))
	v6.IP = "::1"
	noIP := exchange("http://b.test/noip", 301, "Location: http://b.test/\r\n", nil)
	noIP.IP = ""
	post := exchange("http://c.test/form?q=1", 200, "", []byte("ok"))
	post.Request = []byte("POST /form?q=1 HTTP/1.1\r\nHost: c.test\r\nContent-Length: 7\r\n\r\na=1&b=2")
	first := exchange("http://a.test/", 200, "Content-Type: text/html; charset=utf-8\r\n", []byte("<html><body><a href=/x>x</a></body></html>"))
	first.Protocols = []string{"http/1.1"}
	// An HTTP/2 exchange in HTTP/1.1 form, as the fetcher records one:
	// no reason phrase, WARC-Protocol h2 then the TLS version.
	h2 := exchange("https://d.test/h2", 200, "Content-Type: text/plain\r\n", []byte("over h2"))
	h2.ResponseHeader = []byte("HTTP/1.1 200 \r\nContent-Length: 7\r\nContent-Type: text/plain\r\n\r\n")
	h2.Protocols = []string{"h2", "tls/1.3"}
	return []*Exchange{
		first,
		exchange("http://a.test/image.bin", 200, "Content-Type: application/octet-stream\r\n", binary),
		exchange("http://a.test/gz", 200, "Content-Type: text/plain\r\nContent-Encoding: gzip\r\n", gzipped(t, strings.Repeat("hello gzip ", 200))),
		exchange("http://a.test/empty", 204, "", nil),
		truncated,
		v6,
		noIP,
		post,
		h2,
	}
}

// readRecord is a record read back with gowarc.
type readRecord struct {
	typ     string
	headers *gowarc.WarcFields
	block   []byte
	payload []byte
	offset  int64
	size    int64
}

var b32 = base32.StdEncoding

func sha256Digest(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + b32.EncodeToString(s[:])
}

// readBack reads path with gowarc's strict reader (which fails on a wrong
// digest) and checks both digests again with crypto/sha256.
func readBack(t *testing.T, path string) []readRecord {
	t.Helper()
	return readBackWith(t, path, true)
}

// readBackWith reads path with gowarc. If strict is false, findings about
// field values are allowed (gowarc blanks a value it cannot parse); wrong
// digests and lengths are not.
func readBackWith(t *testing.T, path string, strict bool) []readRecord {
	t.Helper()
	opts := []gowarc.WarcRecordOption{gowarc.WithStrictValidation()}
	if !strict {
		opts = []gowarc.WarcRecordOption{gowarc.WithSpecViolationPolicy(gowarc.ErrWarn), gowarc.WithSyntaxErrorPolicy(gowarc.ErrWarn)}
	}
	r, err := gowarc.NewWarcFileReader(path, 0, opts...)
	if err != nil {
		t.Fatalf("gowarc open %s: %v", path, err)
	}
	defer func() { _ = r.Close() }()
	var out []readRecord
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("gowarc read %s record %d: %v", path, len(out), err)
		}
		for _, v := range rec.Validation {
			var de *gowarc.DigestError
			var le *gowarc.ContentLengthError
			if strict || errors.As(v, &de) || errors.As(v, &le) {
				t.Errorf("gowarc read %s record %d: %v", path, len(out), v)
			}
		}
		wr := rec.WarcRecord
		raw, err := wr.Block().RawBytes()
		if err != nil {
			t.Fatal(err)
		}
		block, err := io.ReadAll(raw)
		if err != nil {
			t.Fatal(err)
		}
		rr := readRecord{typ: wr.Type().String(), headers: wr.WarcHeader(), block: block, offset: rec.Offset, size: rec.Size}
		if got, want := wr.WarcHeader().Get(gowarc.WarcBlockDigest), sha256Digest(block); got != want {
			t.Errorf("%s record %d: WARC-Block-Digest = %q, want %q", path, len(out), got, want)
		}
		// A revisit's payload digest is its original's (it has no payload).
		if pb, ok := wr.Block().(gowarc.PayloadBlock); ok && wr.Type() != gowarc.Warcinfo && wr.Type() != gowarc.Revisit {
			p, err := pb.PayloadBytes()
			if err != nil {
				t.Fatal(err)
			}
			if rr.payload, err = io.ReadAll(p); err != nil {
				t.Fatal(err)
			}
			if got, want := wr.WarcHeader().Get(gowarc.WarcPayloadDigest), sha256Digest(rr.payload); got != want {
				t.Errorf("%s record %d: WARC-Payload-Digest = %q, want %q", path, len(out), got, want)
			}
		}
		out = append(out, rr)
		_ = rec.Close()
	}
	return out
}

// validate runs warcio over files and fails the test on any error it reports.
func validate(t *testing.T, files ...string) *warccheck.Report {
	t.Helper()
	rep, err := warccheck.Validate(files...)
	if err != nil {
		t.Fatalf("warccheck.Validate: %v", err)
	}
	for _, e := range rep.Errors {
		t.Errorf("warcio: %s", e)
	}
	return rep
}

func TestWriteRoundTrip(t *testing.T) {
	w := newTestWriter(t, Options{Info: map[string]string{"operator": "ops@trawl.test", "isPartOf": "test-crawl"}})
	exs := sampleExchanges(t)
	locs := make([]Location, len(exs))
	for i, ex := range exs {
		loc, err := w.Write(ex)
		if err != nil {
			t.Fatalf("Write(%q): %v", ex.URL, err)
		}
		locs[i] = loc
	}
	files := w.Files()
	if len(files) != 1 {
		t.Fatalf("Files() = %q, want one file", files)
	}
	if _, err := os.Stat(files[0] + OpenSuffix); err != nil {
		t.Fatalf("before Close: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := os.Stat(files[0] + OpenSuffix); !os.IsNotExist(err) {
		t.Errorf("after Close, %s still exists (err %v)", files[0]+OpenSuffix, err)
	}
	if got, want := filepath.Base(files[0]), "trawl-20240102030405-00000.warc.gz"; got != want {
		t.Errorf("file name = %q, want %q", got, want)
	}

	rep := validate(t, files...)
	if rep.Records != 1+2*len(exs) || rep.ByType["warcinfo"] != 1 || rep.ByType["response"] != len(exs) || rep.ByType["request"] != len(exs) {
		t.Errorf("warcio counts: records %d byType %v, want 1 warcinfo and %d responses and requests", rep.Records, rep.ByType, len(exs))
	}
	if len(rep.Responses) != len(exs) {
		t.Fatalf("warcio responses = %d, want %d", len(rep.Responses), len(exs))
	}
	for i, r := range rep.Responses {
		if r.URI != exs[i].URL {
			t.Errorf("response %d: uri %q, want %q", i, r.URI, exs[i].URL)
		}
		var status int
		fmt.Sscanf(string(exs[i].ResponseHeader), "HTTP/1.1 %d", &status)
		if r.Status != status {
			t.Errorf("response %d (%s): status %d, want %d", i, r.URI, r.Status, status)
		}
		if r.Offset != locs[i].Offset || r.Length != locs[i].Length || r.File != locs[i].File {
			t.Errorf("response %d (%s): warcio at %s+%d len %d, Write returned %+v", i, r.URI, r.File, r.Offset, r.Length, locs[i])
		}
	}

	recs := readBack(t, files[0])
	if len(recs) != 1+2*len(exs) {
		t.Fatalf("gowarc read %d records, want %d", len(recs), 1+2*len(exs))
	}
	info := recs[0]
	if info.typ != "warcinfo" {
		t.Fatalf("record 0 type %q, want warcinfo", info.typ)
	}
	wantInfo := "software: trawl\r\nformat: WARC File Format 1.1\r\nconformsTo: " + warcConformsTo + "\r\nisPartOf: test-crawl\r\noperator: ops@trawl.test\r\n"
	if string(info.block) != wantInfo {
		t.Errorf("warcinfo block = %q, want %q", info.block, wantInfo)
	}
	if got := info.headers.Get(gowarc.WarcFilename); got != filepath.Base(files[0]) {
		t.Errorf("WARC-Filename = %q, want %q", got, filepath.Base(files[0]))
	}
	infoID := info.headers.Get(gowarc.WarcRecordID)
	for i, ex := range exs {
		resp, req := recs[1+2*i], recs[2+2*i]
		if resp.typ != "response" || req.typ != "request" {
			t.Fatalf("exchange %d: types %q, %q, want response, request", i, resp.typ, req.typ)
		}
		for _, c := range []struct {
			rec        readRecord
			name, want string
		}{
			{resp, gowarc.WarcTargetURI, ex.URL},
			{req, gowarc.WarcTargetURI, ex.URL},
			{resp, gowarc.WarcIPAddress, ex.IP},
			{resp, gowarc.WarcDate, "2024-01-02T03:04:05.000000Z"},
			{resp, gowarc.WarcTruncated, ex.Truncated},
			{req, gowarc.WarcTruncated, ""},
			{resp, gowarc.WarcWarcinfoID, infoID},
			{req, gowarc.WarcWarcinfoID, infoID},
			{resp, gowarc.WarcConcurrentTo, req.headers.Get(gowarc.WarcRecordID)},
			{req, gowarc.WarcConcurrentTo, resp.headers.Get(gowarc.WarcRecordID)},
			{resp, gowarc.ContentType, "application/http;msgtype=response"},
			{req, gowarc.ContentType, "application/http;msgtype=request"},
		} {
			if got := c.rec.headers.Get(c.name); got != c.want {
				t.Errorf("exchange %d (%s) %s: %s = %q, want %q", i, ex.URL, c.rec.typ, c.name, got, c.want)
			}
		}
		for _, rec := range []readRecord{resp, req} {
			if got := rec.headers.GetAll("WARC-Protocol"); !slices.Equal(got, ex.Protocols) {
				t.Errorf("exchange %d (%s) %s: WARC-Protocol %q, want %q", i, ex.URL, rec.typ, got, ex.Protocols)
			}
		}
		if got := strings.Join(ex.Protocols, ", "); rep.Responses[i].Protocols != got {
			t.Errorf("exchange %d (%s): warcio reads WARC-Protocol %q, want %q", i, ex.URL, rep.Responses[i].Protocols, got)
		}
		if !strings.HasPrefix(resp.headers.Get(gowarc.WarcRecordID), "<urn:uuid:") {
			t.Errorf("WARC-Record-ID = %q, want <urn:uuid:...>", resp.headers.Get(gowarc.WarcRecordID))
		}
		if want := append(append([]byte(nil), ex.ResponseHeader...), ex.Body...); !bytes.Equal(resp.block, want) {
			t.Errorf("exchange %d (%s): response block differs from header+body (%d vs %d bytes)", i, ex.URL, len(resp.block), len(want))
		}
		if !bytes.Equal(resp.payload, ex.Body) {
			t.Errorf("exchange %d (%s): payload %q, want %q", i, ex.URL, resp.payload, ex.Body)
		}
		if !bytes.Equal(req.block, ex.Request) {
			t.Errorf("exchange %d (%s): request block %q, want %q", i, ex.URL, req.block, ex.Request)
		}
		if resp.offset != locs[i].Offset || resp.size != locs[i].Length {
			t.Errorf("exchange %d (%s): gowarc at %d size %d, Write returned %+v", i, ex.URL, resp.offset, resp.size, locs[i])
		}
	}
}

// TestURLKeptVerbatim: gowarc's validator rejects this URL (port out of range)
// and would blank it; the writer keeps what it was given.
func TestURLKeptVerbatim(t *testing.T) {
	const url = "http://a.test:99999/port"
	w := newTestWriter(t, Options{})
	if _, err := w.Write(exchange(url, 200, "", []byte("odd"))); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// Read with gowarc's field validation off, which would blank it too.
	r, err := gowarc.NewWarcFileReader(w.Files()[0], 0, gowarc.WithNoValidation())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.Close() }()
	n := 0
	for rec, err := range r.Records() {
		if err != nil {
			t.Fatal(err)
		}
		if typ := rec.WarcRecord.Type(); typ != gowarc.Warcinfo {
			n++
			if got := rec.WarcRecord.WarcHeader().Get(gowarc.WarcTargetURI); got != url {
				t.Errorf("%s WARC-Target-URI = %q, want %q", typ, got, url)
			}
		}
		_ = rec.Close()
	}
	if n != 2 {
		t.Errorf("read %d request/response records, want 2", n)
	}
	if rep := validate(t, w.Files()...); len(rep.Responses) != 1 || rep.Responses[0].URI != url {
		t.Errorf("warcio responses %+v, want one for %q", rep.Responses, url)
	}
}

// TestLocationReadsAlone reads a response from its Location with nothing else.
func TestLocationReadsAlone(t *testing.T) {
	w := newTestWriter(t, Options{})
	var locs []Location
	exs := sampleExchanges(t)
	for _, ex := range exs {
		loc, err := w.Write(ex)
		if err != nil {
			t.Fatal(err)
		}
		locs = append(locs, loc)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for i, loc := range locs {
		f, err := os.Open(loc.File)
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(io.NewSectionReader(f, loc.Offset, loc.Length))
		if err != nil {
			t.Fatalf("Location %+v: %v", loc, err)
		}
		zr.Multistream(false)
		rec, _, _, err := gowarc.NewUnmarshaler(gowarc.WithStrictValidation()).Unmarshal(bufio.NewReader(zr))
		if err != nil {
			t.Fatalf("Location %+v: unmarshal: %v", loc, err)
		}
		if got := rec.WarcHeader().Get(gowarc.WarcTargetURI); rec.Type() != gowarc.Response || got != exs[i].URL {
			t.Errorf("Location %+v: %s record for %q, want response for %q", loc, rec.Type(), got, exs[i].URL)
		}
		_ = rec.Close()
		_ = f.Close()
	}
}

func TestRotation(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: rotates through many files; the full suite runs it")
	}
	tests := []struct {
		name     string
		max      int64
		n        int
		wantFile int // 0: more than one, not checked exactly
	}{
		{"one exchange per file", 1, 5, 5},
		{"several per file", 2500, 12, 0},
		{"all in one", 1 << 30, 12, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newTestWriter(t, Options{MaxFileSize: tt.max, Prefix: "rot"})
			var want []string
			for i := range tt.n {
				body := bytes.Repeat([]byte(fmt.Sprintf("page %d ", i)), 100+i*37)
				ex := exchange(fmt.Sprintf("http://r.test/%d", i), 200, "", body)
				if _, err := w.Write(ex); err != nil {
					t.Fatal(err)
				}
				want = append(want, ex.URL)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			files := w.Files()
			if tt.wantFile > 0 && len(files) != tt.wantFile {
				t.Fatalf("%d files, want %d", len(files), tt.wantFile)
			}
			if tt.wantFile == 0 && (len(files) < 2 || len(files) >= tt.n) {
				t.Fatalf("%d files for %d exchanges, want between 2 and %d", len(files), tt.n, tt.n-1)
			}
			for i, f := range files {
				if got, want := filepath.Base(f), fmt.Sprintf("rot-20240102030405-%05d.warc.gz", i); got != want {
					t.Errorf("file %d = %q, want %q", i, got, want)
				}
				st, err := os.Stat(f)
				if err != nil {
					t.Fatal(err)
				}
				recs := readBack(t, f)
				if len(recs) == 0 || recs[0].typ != "warcinfo" {
					t.Fatalf("%s does not begin with warcinfo", f)
				}
				if len(recs) > 3 && st.Size() > tt.max {
					t.Errorf("%s: %d bytes with %d exchanges, over MaxFileSize %d", f, st.Size(), (len(recs)-1)/2, tt.max)
				}
			}
			rep := validate(t, files...)
			var got []string
			for _, r := range rep.Responses {
				got = append(got, r.URI)
			}
			if !slices.Equal(got, want) {
				t.Errorf("responses %q, want %q", got, want)
			}
			if rep.ByType["warcinfo"] != len(files) {
				t.Errorf("%d warcinfo records in %d files", rep.ByType["warcinfo"], len(files))
			}
			checkStats(t, w, files)
		})
	}
}

// checkStats checks w.Stats against files, all of them w's and whole:
// their sizes, records and number; at least one sync.
func checkStats(t *testing.T, w *Writer, files []string) {
	t.Helper()
	var want WriterStats
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		want.Bytes += st.Size()
		want.Records += int64(len(readBack(t, f)))
		want.Files++
	}
	got := w.Stats()
	if got.Syncs == 0 {
		t.Errorf("Stats().Syncs = 0 after Close")
	}
	want.Syncs = got.Syncs
	if got != want {
		t.Errorf("Stats() = %+v, want %+v (the files)", got, want)
	}
}

func TestConcurrentWrites(t *testing.T) {
	w := newTestWriter(t, Options{MaxFileSize: 16 << 10})
	const workers, each = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for g := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				body := bytes.Repeat([]byte{byte(g), byte(i), 0, 0xff}, 200+g*50)
				if _, err := w.Write(exchange(fmt.Sprintf("http://c%d.test/%d", g, i), 200, "", body)); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	files := w.Files()
	if len(files) < 2 {
		t.Fatalf("%d files, want rotation to several", len(files))
	}
	rep := validate(t, files...)
	if rep.ByType["response"] != workers*each || rep.ByType["request"] != workers*each || rep.ByType["warcinfo"] != len(files) {
		t.Errorf("byType %v, want %d responses and requests and %d warcinfo", rep.ByType, workers*each, len(files))
	}
	seen := map[string]int{}
	for _, r := range rep.Responses {
		seen[r.URI]++
	}
	for g := range workers {
		for i := range each {
			if u := fmt.Sprintf("http://c%d.test/%d", g, i); seen[u] != 1 {
				t.Errorf("%s written %d times, want 1", u, seen[u])
			}
		}
	}
	// Each response is followed by its own request in the same file.
	for _, f := range files {
		recs := readBack(t, f)
		for i := 1; i+1 < len(recs); i += 2 {
			a, b := recs[i], recs[i+1]
			if a.typ != "response" || b.typ != "request" || a.headers.Get(gowarc.WarcTargetURI) != b.headers.Get(gowarc.WarcTargetURI) {
				t.Errorf("%s records %d,%d: %s %s then %s %s, want a response and its request",
					f, i, i+1, a.typ, a.headers.Get(gowarc.WarcTargetURI), b.typ, b.headers.Get(gowarc.WarcTargetURI))
			}
		}
	}
}

func TestWriteAfterClose(t *testing.T) {
	w := newTestWriter(t, Options{})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(exchange("http://a.test/", 200, "", nil)); !errors.Is(err, ErrClosed) {
		t.Errorf("Write after Close = %v, want ErrClosed", err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close = %v, want nil", err)
	}
	if err := w.Sync(); err != nil {
		t.Errorf("Sync after Close = %v, want nil", err)
	}
	if files := w.Files(); len(files) != 0 {
		t.Errorf("Files() = %q, want none: nothing was written", files)
	}
}

func TestSync(t *testing.T) {
	w := newTestWriter(t, Options{})
	defer func() { _ = w.Close() }()
	if err := w.Sync(); err != nil {
		t.Errorf("Sync with no file = %v", err)
	}
	if _, err := w.Write(exchange("http://a.test/", 200, "", []byte("x"))); err != nil {
		t.Fatal(err)
	}
	if err := w.Sync(); err != nil {
		t.Errorf("Sync = %v", err)
	}
	// What Write returned is in the file already, before Close.
	recs := readBack(t, w.Files()[0]+OpenSuffix)
	if len(recs) != 3 {
		t.Errorf("%d records in the open file, want 3", len(recs))
	}
}

// TestNameCollision: a name already taken in Dir is skipped, not overwritten.
func TestNameCollision(t *testing.T) {
	dir := t.TempDir()
	taken := []string{"trawl-20240102030405-00000.warc.gz", "trawl-20240102030405-00001.warc.gz" + OpenSuffix}
	for _, n := range taken {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w := newTestWriter(t, Options{Dir: dir})
	if _, err := w.Write(exchange("http://a.test/", 200, "", nil)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got, want := filepath.Base(w.Files()[0]), "trawl-20240102030405-00002.warc.gz"; got != want {
		t.Errorf("file = %q, want %q", got, want)
	}
	for _, n := range taken {
		if b, err := os.ReadFile(filepath.Join(dir, n)); err != nil || string(b) != "old" {
			t.Errorf("%s was changed: %q, %v", n, b, err)
		}
	}
}

// createFS is an FS whose Create is create.
type createFS struct {
	vfs.FS
	create func(name string) (vfs.File, error)
}

func (c createFS) Create(name string, _ vfs.DiskWriteCategory) (vfs.File, error) {
	return c.create(name)
}

// failingFile fails the write that would take it past limit, after writing
// part of it (a short write), and fails Truncate if noTruncate is set.
type failingFile struct {
	vfs.File
	limit      int64
	written    int64
	noTruncate bool
	slow       time.Duration // each Write takes this long
}

func (f *failingFile) Write(p []byte) (int, error) {
	time.Sleep(f.slow)
	if f.written+int64(len(p)) > f.limit {
		n, _ := f.File.Write(p[:len(p)/2])
		f.written += int64(n)
		return n, errors.New("disk full")
	}
	n, err := f.File.Write(p)
	f.written += int64(n)
	return n, err
}

func (f *failingFile) Truncate(size int64) error {
	if f.noTruncate {
		return errors.New("truncate refused")
	}
	return f.File.(truncater).Truncate(size)
}

func TestFailedWrite(t *testing.T) {
	for _, noTruncate := range []bool{false, true} {
		t.Run(fmt.Sprintf("noTruncate=%v", noTruncate), func(t *testing.T) {
			calls := 0
			w := newTestWriter(t, Options{FS: createFS{vfs.Default, func(name string) (vfs.File, error) {
				f, err := vfs.Default.Create(name, vfs.WriteCategoryUnspecified)
				if err != nil {
					return nil, err
				}
				calls++
				if calls == 1 {
					// Room for warcinfo and one exchange, not two.
					return &failingFile{File: f, limit: 2500, noTruncate: noTruncate}, nil
				}
				return f, nil
			}}})
			// Bytes that do not compress, so that sizes are predictable.
			body := make([]byte, 1000)
			rng := rand.New(rand.NewPCG(1, 2))
			for i := range body {
				body[i] = byte(rng.Uint32())
			}
			if _, err := w.Write(exchange("http://f.test/1", 200, "", body)); err != nil {
				t.Fatalf("first Write: %v", err)
			}
			_, err := w.Write(exchange("http://f.test/2", 200, "", body))
			first := w.Files()[0]
			if err == nil || !strings.Contains(err.Error(), filepath.Base(first)) || !strings.Contains(err.Error(), "disk full") {
				t.Fatalf("failing Write = %v, want an error naming %s and the cause", err, filepath.Base(first))
			}
			if _, err := w.Write(exchange("http://f.test/3", 200, "", body)); err != nil {
				t.Fatalf("Write after failure: %v", err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			files := w.Files()
			if len(files) != 2 {
				t.Fatalf("Files() = %q, want the failed file and a new one", files)
			}
			if noTruncate {
				if !strings.HasSuffix(files[0], OpenSuffix) {
					t.Errorf("file that could not be cut back listed as %q, want the %s name", files[0], OpenSuffix)
				}
				if _, err := os.Stat(files[0]); err != nil {
					t.Error(err)
				}
				validate(t, files[1])
				return
			}
			rep := validate(t, files...)
			var got []string
			for _, r := range rep.Responses {
				got = append(got, r.URI)
			}
			if want := []string{"http://f.test/1", "http://f.test/3"}; !slices.Equal(got, want) {
				t.Errorf("responses %q, want %q", got, want)
			}
			checkStats(t, w, files) // the record cut off is not counted
		})
	}
}

// TestConcurrentWritesFail writes from several goroutines into a file that
// runs out of space part way: the Writes that return nil are exactly the
// responses the files hold (valid, every Location made durable), the ones
// that fail name the file, and writing goes on in a new file.
func TestConcurrentWritesFail(t *testing.T) {
	calls := 0
	w := newTestWriter(t, Options{FS: createFS{vfs.Default, func(name string) (vfs.File, error) {
		f, err := vfs.Default.Create(name, vfs.WriteCategoryUnspecified)
		if err != nil {
			return nil, err
		}
		if calls++; calls == 1 {
			// Slow writes, so that Writes queue behind the one writing.
			return &failingFile{File: f, limit: 40_000, slow: 2 * time.Millisecond}, nil
		}
		return f, nil
	}}})
	body := make([]byte, 1000)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range body {
		body[i] = byte(rng.Uint32())
	}
	const goroutines, each = 8, 25
	var (
		mu     sync.Mutex
		ok     = map[string]Location{}
		failed int
		wg     sync.WaitGroup
	)
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				u := fmt.Sprintf("http://f.test/%d/%d", g, i)
				loc, err := w.Write(exchange(u, 200, "", body))
				mu.Lock()
				if err == nil {
					ok[u] = loc
				} else if first := w.Files()[0]; !strings.Contains(err.Error(), filepath.Base(first)) {
					t.Errorf("Write(%s) = %v, want an error naming %s", u, err, first)
				} else {
					failed++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if failed == 0 || len(ok) == 0 {
		t.Fatalf("%d Writes failed and %d succeeded; want both", failed, len(ok))
	}
	for u, loc := range ok {
		if err := <-w.Durable(loc); err != nil {
			t.Errorf("Durable(%s) = %v", u, err)
		}
	}
	rep := validate(t, w.Files()...)
	var got, want []string
	for _, r := range rep.Responses {
		got = append(got, r.URI)
	}
	for u := range ok {
		want = append(want, u)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("the files hold %d responses, %d Writes succeeded: %q against %q", len(got), len(want), got, want)
	}
}

func TestCreateFails(t *testing.T) {
	w := newTestWriter(t, Options{FS: createFS{vfs.Default, func(string) (vfs.File, error) { return nil, errors.New("no space") }}})
	_, err := w.Write(exchange("http://a.test/", 200, "", nil))
	if err == nil || !strings.Contains(err.Error(), "trawl-20240102030405-00000.warc.gz.open") {
		t.Errorf("Write = %v, want an error naming the file", err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
}

func TestExchangeValidate(t *testing.T) {
	ok := func() *Exchange { return exchange("http://a.test/", 200, "", []byte("x")) }
	tests := []struct {
		name string
		edit func(*Exchange)
		want string // substring of the error; "" for no error
	}{
		{"valid", func(*Exchange) {}, ""},
		{"valid LF only", func(e *Exchange) { e.ResponseHeader = []byte("HTTP/1.0 200 OK\nA: b\n\n") }, ""},
		{"empty URL", func(e *Exchange) { e.URL = "" }, "URL is empty"},
		{"URL with CRLF", func(e *Exchange) { e.URL = "http://a.test/\r\nWARC-Type: x" }, "control"},
		{"URL with space", func(e *Exchange) { e.URL = "http://a.test/a b" }, "space"},
		{"relative URL", func(e *Exchange) { e.URL = "/a/b" }, "absolute"},
		{"URL digit first", func(e *Exchange) { e.URL = "0http://a" }, "absolute"},
		{"URL odd scheme", func(e *Exchange) { e.URL = "x-y.z+w:stuff" }, ""},
		{"bad IP", func(e *Exchange) { e.IP = "300.1.1.1" }, "IP"},
		{"bad truncated", func(e *Exchange) { e.Truncated = "because" }, "Truncated"},
		{"no status line", func(e *Exchange) { e.ResponseHeader = []byte("Content-Type: x\r\n\r\n") }, "status line"},
		{"header not ended", func(e *Exchange) { e.ResponseHeader = []byte("HTTP/1.1 200 OK\r\nA: b\r\n") }, "empty line"},
		{"no request", func(e *Exchange) { e.Request = nil }, "Request is empty"},
		{"request not ended", func(e *Exchange) { e.Request = []byte("GET / HTTP/1.1\r\nHost: a\r\n") }, "Request has no empty line"},
		{"revisit", func(e *Exchange) { e.PayloadSHA256, e.Revisit = make([]byte, 32), okRevisit() }, ""},
		{"revisit without digest", func(e *Exchange) { e.Revisit = okRevisit() }, "PayloadSHA256"},
		{"revisit truncated", func(e *Exchange) { e.PayloadSHA256, e.Revisit, e.Truncated = make([]byte, 32), okRevisit(), "length" }, "truncated"},
		{"revisit relative target", func(e *Exchange) {
			e.PayloadSHA256, e.Revisit = make([]byte, 32), okRevisit()
			e.Revisit.TargetURI = "/x"
		}, "TargetURI"},
		{"revisit no date", func(e *Exchange) {
			e.PayloadSHA256, e.Revisit = make([]byte, 32), okRevisit()
			e.Revisit.Date = time.Time{}
		}, "Date"},
		{"revisit bad record id", func(e *Exchange) {
			e.PayloadSHA256, e.Revisit = make([]byte, 32), okRevisit()
			e.Revisit.RecordID = "urn:uuid:x"
		}, "RecordID"},
		{"not-modified revisit, original unknown", func(e *Exchange) {
			e.Revisit = &Revisit{Profile: ProfileServerNotModified}
		}, ""},
		{"not-modified revisit with a digest", func(e *Exchange) {
			e.PayloadSHA256, e.Revisit = make([]byte, 32), &Revisit{Profile: ProfileServerNotModified}
		}, "PayloadSHA256"},
		{"not-modified revisit bad target", func(e *Exchange) {
			e.Revisit = &Revisit{Profile: ProfileServerNotModified, TargetURI: "/x"}
		}, "TargetURI"},
		{"revisit unknown profile", func(e *Exchange) {
			e.PayloadSHA256, e.Revisit = make([]byte, 32), okRevisit()
			e.Revisit.Profile = "http://netpreserve.org/warc/1.1/revisit/other"
		}, "Profile"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ex := ok()
			tt.edit(ex)
			err := ex.validate()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("validate(%q) = %v, want nil", ex.URL, err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("validate(%q) = %v, want an error with %q", ex.URL, err, tt.want)
			}
		})
	}
}

func TestOptionsValidate(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want []string // substrings of the error; nil for no error
	}{
		{"minimal", Options{Dir: "d"}, nil},
		{"full", Options{Dir: "d", Prefix: "p", MaxFileSize: 10, GzipLevel: 9, Software: "s 1.0", Info: map[string]string{"operator": "me"}}, nil},
		{"fastest gzip", Options{Dir: "d", GzipLevel: 1}, nil},
		{"gzip level 10", Options{Dir: "d", GzipLevel: 10}, []string{"GzipLevel 10"}},
		{"gzip level -1", Options{Dir: "d", GzipLevel: -1}, []string{"GzipLevel -1"}},
		{"sync interval", Options{Dir: "d", MinSyncInterval: 5 * time.Millisecond}, nil},
		{"negative sync interval", Options{Dir: "d", MinSyncInterval: -1}, []string{"MinSyncInterval -1ns"}},
		{"sync interval over 1s", Options{Dir: "d", MinSyncInterval: 2 * time.Second}, []string{"MinSyncInterval 2s"}},
		{"no dir", Options{}, []string{"Dir"}},
		{"everything bad", Options{Prefix: "a/b", MaxFileSize: -1, Software: "x\ny", Info: map[string]string{"software": "x", "a b": "c", "ok": "v\r\n"}},
			[]string{"Dir", "Prefix", "MaxFileSize", "Software", `"software"`, `"a b"`, `Info["ok"]`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.opts.Validate()
			if tt.want == nil {
				if err != nil {
					t.Errorf("Validate(%+v) = %v, want nil", tt.opts, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate(%+v) = nil, want errors naming %q", tt.opts, tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate(%+v) = %q, want it to name %q", tt.opts, err, w)
				}
			}
		})
	}
	if _, err := NewWriter(Options{}); err == nil {
		t.Error("NewWriter(Options{}) = nil error, want Dir is required")
	}
}

// FuzzWrite writes an exchange made of arbitrary header and body bytes and
// reads it back: no panic, and whatever Write accepts reads back byte for
// byte with valid digests.
func FuzzWrite(f *testing.F) {
	f.Add("http://a.test/", []byte("HTTP/1.1 200 OK\r\n\r\n"), []byte("body"), []byte("GET / HTTP/1.1\r\n\r\n"))
	f.Add("http://a.test/x", []byte("HTTP/1.1 200 OK\nA: b\n\n"), []byte{0, 1, 2, '\r', '\n', '\r', '\n'}, []byte("GET /x HTTP/1.1\n\nextra"))
	f.Add("u:", []byte("HTTP/"), []byte(nil), []byte("\n\n"))
	f.Add("http://a.test:99999/", []byte("HTTP/\n\n"), []byte("0"), []byte("00\n\n"))
	f.Add("http://a.test/", []byte("HTTP/1.1 200 OK\r\nA\r\n\r\n"), []byte("\r\n"), []byte("x\r\n\r\n"))
	f.Fuzz(func(t *testing.T, url string, header, body, request []byte) {
		w, err := NewWriter(Options{Dir: t.TempDir(), Now: fixedClock})
		if err != nil {
			t.Fatal(err)
		}
		ex := &Exchange{URL: url, Date: testTime, ResponseHeader: header, Body: body, Request: request}
		loc, werr := w.Write(ex)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if werr != nil {
			return
		}
		recs := readBackWith(t, loc.File, false)
		if len(recs) != 3 {
			t.Fatalf("%d records, want 3", len(recs))
		}
		if want := append(append([]byte(nil), header...), body...); !bytes.Equal(recs[1].block, want) {
			t.Errorf("response block %q, want %q", recs[1].block, want)
		}
		if !bytes.Equal(recs[2].block, request) {
			t.Errorf("request block %q, want %q", recs[2].block, request)
		}
		// gowarc's reader blanks a URL its parser rejects: look at the bytes.
		zr, err := os.Open(loc.File)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = zr.Close() }()
		gz, err := gzip.NewReader(zr)
		if err != nil {
			t.Fatal(err)
		}
		all, err := io.ReadAll(gz)
		if err != nil {
			t.Fatal(err)
		}
		if n := bytes.Count(all, []byte("\r\nWARC-Target-URI: "+url+"\r\n")); n != 2 {
			t.Errorf("WARC-Target-URI %q found %d times, want 2", url, n)
		}
	})
}

// BenchmarkWrite writes exchanges with 40 KB bodies; MB/s counts request,
// response header and body bytes.
func BenchmarkWrite(b *testing.B) {
	body := make([]byte, 40<<10)
	for i := range body {
		body[i] = "<html>lorem ipsum dolor sit amet</html>\n"[i%40] ^ byte(i/4096)
	}
	ex := exchange("http://bench.test/page", 200, "Content-Type: text/html\r\n", body)
	size := int64(len(body) + len(ex.ResponseHeader) + len(ex.Request))
	b.Run("serial", func(b *testing.B) {
		w := newTestWriter(b, Options{MaxFileSize: 64 << 20})
		defer func() { _ = w.Close() }()
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := w.Write(ex); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		w := newTestWriter(b, Options{MaxFileSize: 64 << 20})
		defer func() { _ = w.Close() }()
		b.SetBytes(size)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := w.Write(ex); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

// TestProtocols: each of Exchange.Protocols is a WARC-Protocol field of
// both records, in order, read back by Reader.Values; a value that is no
// protocol id (a list, upper case, a space) is refused.
func TestProtocols(t *testing.T) {
	w := newTestWriter(t, Options{})
	for _, bad := range [][]string{{"h2, tls/1.3"}, {"HTTP/1.1"}, {""}, {"h2", "tls 1.3"}} {
		ex := exchange("https://a.test/", 200, "", []byte("x"))
		ex.Protocols = bad
		if _, err := w.Write(ex); err == nil || !strings.Contains(err.Error(), "Protocols") {
			t.Errorf("Write with Protocols %q: %v, want an error naming Protocols", bad, err)
		}
	}
	ex := exchange("https://a.test/", 200, "", []byte("x"))
	ex.Protocols = []string{"h2", "tls/1.3"}
	if _, err := w.Write(ex); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(w.Files()[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd := NewReader(f, w.Files()[0])
	var types []string
	for {
		rec, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		types = append(types, rec.Type)
		want := ex.Protocols
		if rec.Type == "warcinfo" {
			want = nil
		}
		if got := rec.Values("WARC-Protocol"); !slices.Equal(got, want) {
			t.Errorf("%s record: Values(WARC-Protocol) = %q, want %q", rec.Type, got, want)
		}
	}
	if !slices.Equal(types, []string{"warcinfo", "response", "request"}) {
		t.Errorf("records %q, want warcinfo, response, request", types)
	}
	validate(t, w.Files()...)
}

// TestMetadataRecord: an exchange with Metadata gets a third record, of
// type metadata, naming its response in WARC-Refers-To, with its body as
// given; the Location is still the response's, and a strict reader takes
// all three.
func TestMetadataRecord(t *testing.T) {
	w := newTestWriter(t, Options{})
	ex := exchange("http://a.test/page", 200, "Content-Type: text/html\r\n", []byte("<p>x</p>"))
	meta := []byte(`{"format":1,"signals":[]}`)
	ex.Metadata = &Metadata{ContentType: "application/json", Body: meta}
	loc, err := w.Write(ex)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := w.Write(exchange("http://a.test/other", 200, "", []byte("y")))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(loc.File)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd := NewReader(f, loc.File)
	var types []string
	var respID string
	for {
		rec, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		types = append(types, rec.Type)
		switch {
		case rec.Type == "response" && rec.TargetURI == "http://a.test/page":
			respID = rec.ID
			if rec.Offset != loc.Offset || rec.ID != loc.RecordID {
				t.Errorf("response at %d+%d (%s), Location %+v", rec.Offset, rec.Length, rec.ID, loc)
			}
		case rec.Type == "metadata":
			body, err := io.ReadAll(rd.Block())
			if err != nil {
				t.Fatal(err)
			}
			if rec.RefersTo != respID || rec.TargetURI != ex.URL || rec.ContentType != "application/json" || !bytes.Equal(body, meta) || rec.PayloadDigest != "" {
				t.Errorf("metadata record: refers to %q (response %q), URI %q, type %q, body %q, payload digest %q",
					rec.RefersTo, respID, rec.TargetURI, rec.ContentType, body, rec.PayloadDigest)
			}
		}
	}
	if want := []string{"warcinfo", "response", "request", "metadata", "response", "request"}; !slices.Equal(types, want) {
		t.Errorf("records %q, want %q", types, want)
	}
	if plain.Offset <= loc.Offset+loc.Length {
		t.Errorf("the next exchange at %d, within the first's records (%d+%d)", plain.Offset, loc.Offset, loc.Length)
	}
	// A strict reader of another project reads every record.
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	un := gowarc.NewUnmarshaler(gowarc.WithStrictValidation())
	br := bufio.NewReader(f)
	n := 0
	for {
		rec, _, val, err := un.Unmarshal(br)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("record %d: %v", n, err)
		}
		if len(val) > 0 {
			t.Errorf("record %d (%s): %v", n, rec.Type(), val)
		}
		rec.Close()
		n++
	}
	if n != 6 {
		t.Errorf("strict reader read %d records, want 6", n)
	}
	bad := exchange("http://a.test/", 200, "", nil)
	bad.Metadata = &Metadata{ContentType: "application/json\r\nX: y"}
	if _, err := newTestWriter(t, Options{}).Write(bad); err == nil || !strings.Contains(err.Error(), "Metadata.ContentType") {
		t.Errorf("a content type with CRLF: %v, want an error naming Metadata.ContentType", err)
	}
}
