package indexcmd

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/internal/testkit/warccheck"
	"github.com/trawl-crawler/trawl/warc"
)

// writeIndexWARCs writes four exchanges with the real Writer and returns
// the files: one per exchange, since each is over MaxFileSize (at 4 KiB
// the count of files hung on how well the random record IDs compressed,
// and TestIndexCommandErrors, which needs two, failed now and then).
func writeIndexWARCs(t *testing.T, dir string) []string {
	t.Helper()
	w, err := warc.NewWriter(warc.Options{Dir: dir, MaxFileSize: 1 << 10, Now: func() time.Time { return time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	for i, u := range []string{"http://www.a.test/", "http://b.test/x?z=1&a=2", "https://c.test:8443/", "http://a.test/gone"} {
		status := "200 OK"
		if i == 3 {
			status = "404 Not Found"
		}
		_, err := w.Write(&warc.Exchange{
			URL:            u,
			Request:        []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
			ResponseHeader: []byte("HTTP/1.1 " + status + "\r\nContent-Type: text/html; charset=utf-8\r\n\r\n"),
			Body:           bytes.Repeat([]byte("page "), 300*(i+1)),
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return w.Files()
}

func TestIndexCommand(t *testing.T) {
	dir := t.TempDir()
	files := writeIndexWARCs(t, dir)
	want, err := warccheck.CDXIndex(files...)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(want)
	wantText := strings.Join(want, "\n") + "\n"

	var out, errb bytes.Buffer
	if code := Main(Options{Files: files}, &out, &errb); code != 0 {
		t.Fatalf("trawl index = %d, stderr: %s", code, errb.String())
	}
	if out.String() != wantText {
		t.Errorf("trawl index printed\n%s\nwarcio cdx-index, sorted:\n%s", out.String(), wantText)
	}

	idx := filepath.Join(dir, "index.cdxj")
	out.Reset()
	if code := Main(Options{Files: files, Out: idx}, &out, &errb); code != 0 || out.Len() != 0 {
		t.Fatalf("trawl index --out = %d, stdout %q, stderr: %s", code, out.String(), errb.String())
	}
	if got, err := os.ReadFile(idx); err != nil || string(got) != wantText {
		t.Errorf("--out file: %q (%v), want warcio's lines sorted", got, err)
	}
}

func TestIndexCommandErrors(t *testing.T) {
	dir := t.TempDir()
	files := writeIndexWARCs(t, dir)
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "cut.warc.gz")
	if err := os.WriteFile(cut, data[:len(data)-20], 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := Main(Options{Files: []string{cut, files[1]}}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "cut.warc.gz: offset ") {
		t.Errorf("trawl index CUT = %d, stderr %q; want 1 naming the file and offset", code, errb.String())
	}
	if !strings.Contains(out.String(), filepath.Base(files[1])) {
		t.Errorf("the readable file was not indexed:\n%s", out.String())
	}
}

// TestIndexData: --data rewrites each finished WARC file's own index from
// the file, sorted; an index that was wrong is replaced.
func TestIndexData(t *testing.T) {
	data := t.TempDir()
	files := writeIndexWARCs(t, filepath.Join(data, "warc"))
	if err := os.WriteFile(files[0]+".cdxj", []byte("stale\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := Main(Options{Data: data}, &out, &errb); code != 0 {
		t.Fatalf("trawl index --data = %d, stderr: %s", code, errb.String())
	}
	for _, f := range files {
		want, err := warccheck.CDXIndex(f)
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(want)
		got, err := os.ReadFile(f + ".cdxj")
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != strings.Join(want, "\n")+"\n" {
			t.Errorf("%s.cdxj:\n%s\nwarcio, sorted:\n%s", f, got, strings.Join(want, "\n"))
		}
	}
	if !strings.HasSuffix(out.String(), " WARC files, 4 index lines\n") {
		t.Errorf("stdout %q", out.String())
	}
}
