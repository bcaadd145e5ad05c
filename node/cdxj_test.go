package node

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/cdxj"
	"github.com/trawl-crawler/trawl/internal/testweb"
	"github.com/trawl-crawler/trawl/internal/warccheck"
)

// TestCrawlCDXJMatchesWarcio crawls a small synthetic web (hostile hosts
// included: redirects, errors, odd media types) and checks that the CDXJ
// index of the WARC files it wrote is, line for line, what warcio
// cdx-index outputs for them.
func TestCrawlCDXJMatchesWarcio(t *testing.T) {
	t.Parallel()
	h := newHarness(t, testweb.Options{Seed: 9, Hosts: 12, BigPages: 10, Hostile: true}, 20*time.Millisecond)
	sum := h.run(t, context.Background())
	files, err := filepath.Glob(filepath.Join(h.opts.DataDir, "warc", "*.warc.gz"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no WARC files (%v); summary lists %v", err, sum.WARCFiles)
	}
	want, err := warccheck.CDXIndex(files...)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range files {
		lines, err := cdxj.IndexFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range lines {
			got = append(got, l.String())
		}
	}
	if len(got) != len(want) || int64(len(got)) < sum.Pages {
		t.Errorf("trawl indexed %d records, warcio %d; the crawl fetched %d pages", len(got), len(want), sum.Pages)
	}
	diffs := 0
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			if diffs++; diffs <= 10 {
				t.Errorf("line %d:\ntrawl:  %s\nwarcio: %s", i, got[i], want[i])
			}
		}
	}
	if diffs > 0 {
		t.Errorf("%d of %d lines differ", diffs, len(got))
	}
	t.Logf("%d files, %d lines, identical to warcio's", len(files), len(got))
}
