package warc_test

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/trawl-crawler/trawl/warc"
)

func Example() {
	dir, err := os.MkdirTemp("", "warc-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	w, err := warc.NewWriter(warc.Options{
		Dir:  dir,
		Info: map[string]string{"operator": "crawl-team@example.org"},
		Now:  func() time.Time { return time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC) },
	})
	if err != nil {
		panic(err)
	}
	loc, err := w.Write(&warc.Exchange{
		URL:            "http://example.org/",
		IP:             "192.0.2.1",
		Request:        []byte("GET / HTTP/1.1\r\nHost: example.org\r\n\r\n"),
		ResponseHeader: []byte("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\n"),
		Body:           []byte("hello"),
	})
	if err != nil {
		panic(err)
	}
	if err := w.Close(); err != nil {
		panic(err)
	}
	fmt.Println(filepath.Base(loc.File), loc.Offset > 0, loc.Length > 0)
	for _, f := range w.Files() {
		fmt.Println(filepath.Base(f))
	}
	// Output:
	// trawl-20240506070809-00000.warc.gz true true
	// trawl-20240506070809-00000.warc.gz
}
