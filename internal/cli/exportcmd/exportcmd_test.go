package exportcmd

import (
	"archive/zip"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/wacz"
	"github.com/trawl-crawler/trawl/warc"
)

// writeData writes a data directory with two WARC files of a page each
// (without their CDXJ indexes, which a node writes: the export indexes
// them itself) with the real Writer, and returns it.
func writeData(t *testing.T) string {
	t.Helper()
	data := t.TempDir()
	w, err := warc.NewWriter(warc.Options{Dir: filepath.Join(data, "warc"), MaxFileSize: 1 << 10,
		Now: func() time.Time { return time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"http://a.test/", "http://b.test/"} {
		_, err := w.Write(&warc.Exchange{
			URL:            u,
			Request:        []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
			ResponseHeader: []byte("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n"),
			Body:           []byte("<html><title>Page " + u + "</title>" + strings.Repeat("text ", 300)),
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return data
}

func TestExport(t *testing.T) {
	data := writeData(t)
	empty := t.TempDir()
	out := t.TempDir()
	existing := filepath.Join(out, "old.wacz")
	if err := os.WriteFile(existing, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	dirWACZ := filepath.Join(out, "d.wacz")
	if err := os.Mkdir(dirWACZ, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		o      Options
		code   int
		stderr string
	}{
		{"no --wacz", Options{Data: data}, 2, "--wacz is missing"},
		{"not .wacz", Options{Data: data, WACZ: filepath.Join(out, "x.zip")}, 2, "ends in .wacz (WACZ 1.1.1): e.g. --wacz " + filepath.Join(out, "x.wacz")},
		{"missing directory", Options{Data: data, WACZ: filepath.Join(out, "nope", "x.wacz")}, 2, "directory " + filepath.Join(out, "nope") + " does not exist"},
		{"existing file", Options{Data: data, WACZ: existing}, 2, "exists: give --force"},
		{"a directory", Options{Data: data, WACZ: dirWACZ, Force: true}, 2, "is a directory"},
		{"missing data directory", Options{Data: filepath.Join(empty, "nope"), WACZ: filepath.Join(out, "y.wacz")}, 2, "--data " + filepath.Join(empty, "nope") + ": no such directory"},
		{"no WARC file", Options{Data: empty, WACZ: filepath.Join(out, "y.wacz")}, 2, "no finished WARC file in " + filepath.Join(empty, "warc")},
		{"a crawl with no capture", Options{Data: data, WACZ: filepath.Join(out, "y.wacz"), Job: 9}, 2, "--job 9"},
		{"written", Options{Data: data, WACZ: filepath.Join(out, "z.wacz")}, 0, ""},
		{"replaced", Options{Data: data, WACZ: existing, Force: true}, 0, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := Main(c.o, &stdout, &stderr)
			if code != c.code || !strings.Contains(stderr.String(), c.stderr) {
				t.Fatalf("Main(%+v) = %d, stderr %q; want %d saying %q", c.o, code, stderr.String(), c.code, c.stderr)
			}
			if code != 0 {
				if c.o.WACZ == existing || c.o.WACZ == dirWACZ {
					if b, _ := os.ReadFile(existing); string(b) != "old" {
						t.Errorf("a refused export changed %s", existing)
					}
				} else if _, err := os.Stat(c.o.WACZ); err == nil {
					t.Errorf("a refused export wrote %s", c.o.WACZ)
				}
				return
			}
			zr, err := zip.OpenReader(c.o.WACZ)
			if err != nil {
				t.Fatalf("%s: %v", c.o.WACZ, err)
			}
			defer zr.Close()
			n := 0
			for _, f := range zr.File {
				if strings.HasPrefix(f.Name, wacz.ArchiveDir) {
					n++
				}
			}
			if n != 2 || !strings.Contains(stdout.String(), "2 WARC files, 2 captures, 2 pages") {
				t.Errorf("%d WARC entries; stdout %q", n, stdout.String())
			}
		})
	}
	left, _ := filepath.Glob(filepath.Join(out, ".*"))
	if len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}
