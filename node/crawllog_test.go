package node

import (
	"net/url"
	"path/filepath"
	"testing"

	"github.com/trawl-crawler/trawl/crawllog"
)

// checkCrawlLog reads the crawl log a harness run wrote and checks it
// against the web's own request log, the WARC files (as warcio reads
// them) and the job's counts: one line per request the web answered, each
// response line naming the record that holds it with its digest, exact
// verdicts on exactly the revisit records, near verdicts as counted.
func checkCrawlLog(t *testing.T, h *harness, sum *Summary) []crawllog.Entry {
	t.Helper()
	entries := readCrawlLog(t, h)
	rep := validateWARCs(t, h)
	type place struct {
		file   string
		offset int64
	}
	type record struct {
		uri, digest string
		revisit     bool
	}
	records := map[place]record{}
	for _, r := range rep.Responses {
		records[place{filepath.Base(r.File), r.Offset}] = record{r.URI, r.PayloadDigest, false}
	}
	for _, r := range rep.Revisits {
		records[place{filepath.Base(r.File), r.Offset}] = record{r.URI, r.PayloadDigest, true}
	}

	// Lines per host and path, against the web's requests.
	webReqs := map[string]int{}
	for _, req := range h.srv.Log() {
		webReqs[req.Host+req.Path]++
	}
	logged := map[string]int{}
	var exact, near, dropped int
	seenRecord := map[place]bool{}
	for _, e := range entries {
		if e.Dropped != "" {
			dropped++
			if e.Status != 0 || e.WARC != "" {
				t.Errorf("dropped line with a response: %+v", e)
			}
			continue
		}
		u, err := url.Parse(e.URL)
		if err != nil {
			t.Errorf("crawl log line with a bad URL: %+v", e)
			continue
		}
		logged[u.Hostname()+u.RequestURI()]++
		if e.Status == 0 {
			if e.Error == "" || e.WARC != "" {
				t.Errorf("a failed fetch without an error class, or with a record: %+v", e)
			}
			continue
		}
		p := place{e.WARC, e.Offset}
		rec, ok := records[p]
		switch {
		case !ok:
			// A body a hostile server cut off is archived cut off; warcio
			// still reads it. Anything else must be found.
			t.Errorf("%s: no record at %s:%d", e.URL, e.WARC, e.Offset)
		case rec.uri != e.URL:
			t.Errorf("%s: the record at %s:%d is of %s", e.URL, e.WARC, e.Offset, rec.uri)
		case e.Digest != "" && rec.digest != e.Digest:
			t.Errorf("%s: digest %s, its record %s", e.URL, e.Digest, rec.digest)
		case rec.revisit != (e.Dedup == crawllog.DedupExact):
			t.Errorf("%s: verdict %q, record is a revisit: %v", e.URL, e.Dedup, rec.revisit)
		}
		if seenRecord[p] {
			t.Errorf("two lines name the record at %s:%d", e.WARC, e.Offset)
		}
		seenRecord[p] = true
		switch e.Dedup {
		case crawllog.DedupExact:
			exact++
		case crawllog.DedupNear:
			near++
		}
		if e.Dedup != "" && e.Original == "" {
			t.Errorf("%s: verdict %q without the original's URL", e.URL, e.Dedup)
		}
		if e.Depth > 0 && !e.Robots && e.Via == "" {
			t.Errorf("%s at depth %d has no via", e.URL, e.Depth)
		}
	}
	for k, n := range webReqs {
		if logged[k] != n {
			t.Errorf("%s: the web answered %d requests, the crawl log has %d lines", k, n, logged[k])
		}
	}
	for k, n := range logged {
		if _, ok := webReqs[k]; !ok {
			// A request that never reached the server (a connection refused).
			t.Logf("%s: %d lines for requests the web did not answer", k, n)
		}
	}
	if int64(exact) != sum.Total.Revisits || int64(near) != sum.Total.NearDuplicates {
		t.Errorf("crawl log: %d exact and %d near verdicts; the job counted %d revisits and %d near-duplicates",
			exact, near, sum.Total.Revisits, sum.Total.NearDuplicates)
	}
	t.Logf("crawl log: %d lines, %d fetches, %d dropped, %d exact, %d near", len(entries), len(entries)-dropped, dropped, exact, near)
	return entries
}
