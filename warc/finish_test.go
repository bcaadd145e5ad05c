package warc

import (
	"crypto/sha256"
	"io"
	"os"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// finished collects what OnFinish was given.
type finished struct {
	mu    sync.Mutex
	paths []string
	caps  map[string][]Capture
}

func (f *finished) onFinish(path string, caps []Capture) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.caps == nil {
		f.caps = map[string][]Capture{}
	}
	f.paths = append(f.paths, path)
	f.caps[path] = caps
}

// capturesRead reads path back with Reader and returns what a Capture
// holds of each response and revisit record.
func capturesRead(t *testing.T, fsys vfs.FS, path string) []Capture {
	t.Helper()
	f, err := fsys.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd := NewReader(f, path)
	var out []Capture
	for {
		rec, err := rd.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, err := rd.End(); err != nil {
			t.Fatal(err)
		}
		if rec.Type != "response" && rec.Type != "revisit" {
			continue
		}
		c := Capture{Type: rec.Type, URL: rec.TargetURI, Date: rec.Date, PayloadDigest: rec.PayloadDigest, Offset: rec.Offset, Length: rec.Length}
		if rec.HTTP != nil {
			c.HTTP = &HTTPHead{Proto: rec.HTTP.Proto, Status: rec.HTTP.Status, ContentType: rec.HTTP.ContentType}
		}
		out = append(out, c)
	}
}

// TestOnFinishCaptures: OnFinish is called once per finished file, in
// order, after rotation and at Close, with a Capture per response and
// revisit record equal to what Reader reads back from the file (HTTP
// heads that do not parse, several Content-Types and revisits included).
func TestOnFinishCaptures(t *testing.T) {
	var got finished
	w := newTestWriter(t, Options{MaxFileSize: 8 << 10, OnFinish: got.onFinish})
	exs := sampleExchanges(t)
	twoTypes := exchange("http://d.test/two", 200, "content-type: text/css\r\nContent-Type: text/html\r\n", []byte("x"))
	noColon := exchange("http://d.test/nocolon", 200, "garbage line\r\nContent-Type:  image/png ; q=1 \r\n", []byte("y"))
	badStatus := exchange("http://d.test/bad", 200, "", []byte("z"))
	badStatus.ResponseHeader = []byte("HTTP/1.1 2000 Odd\r\nContent-Type: text/html\r\n\r\n")
	body := []byte("<p>copy</p>")
	sum := sha256.Sum256(body)
	rev := exchange("http://d.test/copy", 200, "Content-Type: text/html\r\n", body)
	rev.PayloadSHA256 = sum[:]
	rev.Revisit = okRevisit()
	exs = append(exs, twoTypes, noColon, badStatus, rev)
	for range 3 { // enough to rotate a few times
		for _, ex := range exs {
			if _, err := w.Write(ex); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	files := w.Files()
	if len(files) < 2 {
		t.Fatalf("%d files: the test wants rotation", len(files))
	}
	if !slices.Equal(got.paths, files) {
		t.Fatalf("OnFinish got %v, want every file once, in order: %v", got.paths, files)
	}
	n := 0
	for _, f := range files {
		want := capturesRead(t, vfs.Default, f)
		if !reflect.DeepEqual(got.caps[f], want) {
			t.Errorf("%s: OnFinish captures\n%+v\nread back\n%+v", f, got.caps[f], want)
		}
		n += len(want)
	}
	if n != 3*len(exs) {
		t.Errorf("%d captures, want %d", n, 3*len(exs))
	}
}

// TestOnFinishNotDurable: a file the writer could not finish (its fsync
// failed) is never passed to OnFinish.
func TestOnFinishNotDurable(t *testing.T) {
	var got finished
	dir := t.TempDir()
	fsys := syncFailFS{vfs.Default}
	w := newTestWriter(t, Options{Dir: dir, FS: fsys, OnFinish: got.onFinish})
	if _, err := w.Write(sampleExchanges(t)[0]); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err == nil {
		t.Fatal("Close: no error from a failing fsync")
	}
	if len(got.paths) > 0 {
		t.Errorf("OnFinish got %v for a file that is not durable", got.paths)
	}
	if names, _ := os.ReadDir(dir); len(names) != 1 || names[0].Name() != (w.Files()[0])[len(dir)+1:] {
		t.Errorf("files %v, want the one left open: %v", names, w.Files())
	}
}

// syncFailFS's files fail Sync.
type syncFailFS struct{ vfs.FS }

func (s syncFailFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := s.FS.Create(name, c)
	return syncFailFile{f}, err
}

type syncFailFile struct{ vfs.File }

func (syncFailFile) Sync() error { return os.ErrInvalid }

// BenchmarkCapture is what OnFinish costs a Write: the capture of one
// response with a typical header (its HTTP head parsed once more).
func BenchmarkCapture(b *testing.B) {
	ex := exchange("http://bench.test/page", 200, "Content-Type: text/html; charset=utf-8\r\nServer: testweb\r\nLast-Modified: Mon, 06 May 2024 07:08:09 GMT\r\nETag: \"abc\"\r\nCache-Control: max-age=60\r\n", make([]byte, 40<<10))
	b.ReportAllocs()
	for b.Loop() {
		_ = captureOf(ex, "2024-05-06T07:08:09.000000Z", "sha256:ABC", Location{Offset: 1, Length: 2})
	}
}
