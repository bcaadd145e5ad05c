package node

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/cdxj"
	"github.com/trawl-crawler/trawl/internal/testkit/testweb"
	"github.com/trawl-crawler/trawl/internal/testkit/warccheck"
)

// TestCrawlCDXJMatchesWarcio crawls a small synthetic web (hostile hosts
// included: redirects, errors, odd media types), rotating WARC files, and
// checks that the CDXJ index of the WARC files it wrote is, line for line,
// what warcio cdx-index outputs for them: both the index read from the
// files and the per-file indexes the node wrote as each file closed,
// merged. Every revisit resolves through the merged index.
func TestCrawlCDXJMatchesWarcio(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a crawl whose indexes warcio checks; the full suite runs it")
	}
	t.Parallel()
	h := newHarness(t, testweb.Options{Seed: 9, Hosts: 12, BigPages: 10, Hostile: true}, 20*time.Millisecond)
	h.opts.WARCMaxSize = 256 << 10
	sum := h.run(t, context.Background())
	dir := filepath.Join(h.opts.DataDir, "warc")
	files, err := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	if err != nil || len(files) < 2 {
		t.Fatalf("%d WARC files (%v), want rotation; summary lists %v", len(files), err, sum.WARCFiles)
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
	diffLines(t, "read from the files", got, want)

	slices.Sort(want)
	merged := loadIndexes(t, dir)
	diffLines(t, "written as files closed, merged", merged, want)
	rep, err := warccheck.Validate(files...)
	if err != nil {
		t.Fatal(err)
	}
	problems, err := warccheck.ResolveRevisits(merged, rep)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
	t.Logf("%d files, %d lines (%d revisits), identical to warcio's", len(files), len(got), len(rep.Revisits))
}

// loadIndexes returns the per-file CDXJ indexes of the WARC files in dir,
// merged, failing if a finished file has none.
func loadIndexes(t *testing.T, dir string) []string {
	t.Helper()
	lines, missing, err := cdxj.LoadDir(nil, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(missing) > 0 {
		t.Errorf("WARC files without a CDXJ index: %v", missing)
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = l.String()
	}
	return out
}

// diffLines reports the lines of got that differ from want's.
func diffLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d lines, warcio %d", what, len(got), len(want))
	}
	diffs := 0
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			if diffs++; diffs <= 10 {
				t.Errorf("%s: line %d:\ntrawl:  %s\nwarcio: %s", what, i, got[i], want[i])
			}
		}
	}
	if diffs > 0 {
		t.Errorf("%s: %d of %d lines differ", what, diffs, len(got))
	}
}
