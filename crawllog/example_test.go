package crawllog_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/trawl-crawler/trawl/crawllog"
)

func ExampleAppendJSON() {
	e := crawllog.Entry{Time: time.Date(2026, 12, 2, 3, 4, 5, 678e6, time.UTC), Job: 1, URL: "http://a.test/cal/2026/12",
		Depth: 5, Via: "http://a.test/cal/2026/11", Dropped: crawllog.DropTrap, Detail: "shape run > 3"}
	line := crawllog.AppendJSON(nil, &e)
	fmt.Print(string(line))
	back, err := crawllog.Parse(line)
	fmt.Println(back == e, err)
	// Output:
	// {"time":"2026-12-02T03:04:05.678Z","job":1,"url":"http://a.test/cal/2026/12","bytes":0,"duration_ms":0.000,"depth":5,"via":"http://a.test/cal/2026/11","dropped":"trap","detail":"shape run > 3"}
	// true <nil>
}

func ExampleScan() {
	dir, _ := os.MkdirTemp("", "crawllog")
	defer os.RemoveAll(dir)
	logs := filepath.Join(dir, "logs")
	w, err := crawllog.Open(logs, crawllog.Options{})
	if err != nil {
		log.Fatal(err)
	}
	t := time.Date(2026, 12, 2, 3, 4, 5, 0, time.UTC)
	w.Write(&crawllog.Entry{Time: t, Job: 1, URL: "http://a.test/", Status: 200, Bytes: 5120})
	w.Write(&crawllog.Entry{Time: t, Job: 1, URL: "http://a.test/gone", Status: 404, Depth: 1, Via: "http://a.test/"})
	w.Write(&crawllog.Entry{Time: t, Job: 1, URL: "http://b.test/", Error: "dns", Depth: 1, Via: "http://a.test/"})
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	err = crawllog.Scan(logs, crawllog.Filter{Status: "4xx,error"}, func(e crawllog.Entry) error {
		fmt.Println(e.URL, e.Status, e.Error, "via", e.Via)
		return nil
	})
	fmt.Println(err)
	// Output:
	// http://a.test/gone 404  via http://a.test/
	// http://b.test/ 0 dns via http://a.test/
	// <nil>
}
