package clustertest

import (
	"path/filepath"
	"slices"
	"time"

	"github.com/trawl-crawler/trawl/crawllog"
)

// ShorterPathRefetches reads the crawl logs of the given data directories
// (each DataDir/logs) and returns the URLs a fleet fetched at one depth
// and again later at a smaller one: node.Fold fetches a page again when a
// routed link reaches it by a shorter path than the one that first
// fetched it at the crawl's depth limit (limit), whose links were cut
// (docs/design/fleet.md, "A shorter path is followed"). Such a repeat is
// by design.
func ShorterPathRefetches(dataDirs []string, limit int) (map[string]bool, error) {
	type fetch struct {
		at    time.Time
		depth int
	}
	fetches := map[string][]fetch{}
	for _, dir := range dataDirs {
		err := crawllog.Scan(filepath.Join(dir, "logs"), crawllog.Filter{OnBad: func(string, int, error) {}}, func(e crawllog.Entry) error {
			if e.Status != 0 { // a response (not a drop, not a failure)
				fetches[e.URL] = append(fetches[e.URL], fetch{e.Time, e.Depth})
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	out := map[string]bool{}
	for u, fs := range fetches {
		slices.SortFunc(fs, func(a, b fetch) int { return a.at.Compare(b.at) })
		for i, f := range fs {
			if f.depth == limit && slices.ContainsFunc(fs[i+1:], func(g fetch) bool { return g.depth < limit }) {
				out[u] = true
			}
		}
	}
	return out, nil
}
