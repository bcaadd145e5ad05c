package node

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/trawl-crawler/trawl/cdxj"
	"github.com/trawl-crawler/trawl/internal/store"
	"github.com/trawl-crawler/trawl/internal/store/urlstate"
	"github.com/trawl-crawler/trawl/internal/testkit/storetest"
	"github.com/trawl-crawler/trawl/internal/testkit/testweb"
	"github.com/trawl-crawler/trawl/internal/testkit/warccheck"
	"github.com/trawl-crawler/trawl/warc"
)

// TestPowerCut puts a node's store and WARC files on one crash-simulating
// file system and cuts the power at several moments of a crawl: each cut
// keeps only what was fsynced (file contents and directory entries). A
// node reopened on what is left must find, for every page its store
// records as fetched, the page's response record in a WARC file that the
// independent reader (warcio) accepts; and it must crawl on to the end.
func TestPowerCut(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: power cuts of a crawl at many moments; the full suite runs it")
	}
	t.Parallel()
	web := testweb.Options{Seed: 31, Hosts: 40, BigPages: 20, Latency: -1}
	h := newHarness(t, web, 10*time.Millisecond)
	mem := vfs.NewCrashableMem()
	h.opts.FS = mem
	h.opts.DataDir = "/data"
	h.opts.WARCMaxSize = 256 << 10 // rotations happen between cuts too

	n, err := Open(h.opts)
	if err != nil {
		t.Fatal(err)
	}
	j, err := n.Submit(h.spec)
	if err != nil {
		t.Fatal(err)
	}
	n.Start()
	var (
		cuts   []*vfs.MemFS
		served []int // requests the web had answered at each cut
	)
	for _, at := range []int{15, 60, 150} {
		waitFor(t, time.Minute, "requests before a power cut", func() bool {
			return len(h.srv.Log()) >= at || isEnded(j.Ended())
		})
		before := len(h.srv.Log())
		cuts = append(cuts, mem.CrashClone(vfs.CrashCloneCfg{}))
		served = append(served, (before+len(h.srv.Log()))/2)
	}
	<-j.Ended()
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}

	for i, fs := range cuts {
		recorded := fetchedPages(t, fs, "/data")
		// Reopening repairs the WARC files the cut left half-written.
		h.opts.FS = fs
		n, err := Open(h.opts)
		if err != nil {
			t.Fatalf("cut %d: reopen: %v", i, err)
		}
		// The stored tally trails the web by at most the fetches in
		// flight (their completions were not durable), and leads it by
		// at most those whose answer the web had not logged yet.
		if tot := n.Job(j.ID).Stats.Total(); abs(tot.Requests-int64(served[i])) > int64(h.opts.Concurrency) {
			t.Errorf("cut %d: the stored tally counts %d requests; the web had answered about %d (%d workers)", i, tot.Requests, served[i], h.opts.Concurrency)
		}
		if err := n.Close(); err != nil {
			t.Fatalf("cut %d: close: %v", i, err)
		}
		archived := archivedResponses(t, fs, "/data/warc")
		lost := 0
		for _, u := range recorded {
			if !archived[u] {
				lost++
				if lost <= 5 {
					t.Errorf("cut %d: %s recorded as fetched, but its response record was lost", i, u)
				}
			}
		}
		t.Logf("cut %d: %d pages recorded as fetched, %d response records survived", i, len(recorded), len(archived))
		if i > 0 && len(recorded) == 0 {
			t.Errorf("cut %d: no page recorded as fetched; the cut came too early to test anything", i)
		}
	}

	// The last cut's node crawls on to the end.
	h.opts.FS = cuts[len(cuts)-1]
	sum := h.run(t, t.Context())
	if sum.StopReason != "exhausted" {
		t.Errorf("after the cut: StopReason %q, want exhausted", sum.StopReason)
	}
}

func abs(v int64) int64 { return max(v, -v) }

func isEnded(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// fetchedPages lists the URLs whose per-URL record in the store on fs
// says a response was received.
func fetchedPages(t *testing.T, fs vfs.FS, dataDir string) []string {
	t.Helper()
	db := storetest.OpenDir(t, filepath.Join(dataDir, "state"), store.Options{FS: fs})
	defer db.Close()
	it, err := db.NewIter(store.KindPrefix(store.KindURL))
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var out []string
	for it.First(); it.Valid(); it.Next() {
		_, u, err := store.DecodeURLKey(it.Key())
		if err != nil {
			t.Fatal(err)
		}
		r, err := urlstate.Decode(it.Value())
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != 0 {
			out = append(out, u)
		}
	}
	return out
}

// archivedResponses copies the WARC files on fs to a real directory,
// validates them with warcio and returns the URIs of their response
// records.
func archivedResponses(t *testing.T, fs vfs.FS, dir string) map[string]bool {
	t.Helper()
	names, err := fs.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	var files []string
	for _, name := range names {
		if strings.HasSuffix(name, ".warc.gz.cdxj") {
			continue // checked below
		}
		if !strings.HasSuffix(name, ".warc.gz") {
			t.Errorf("after recovery: unfinished or foreign file %s in warc/", name)
			continue
		}
		f, err := fs.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		_, err = io.Copy(&buf, f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(tmp, name)
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, path)
	}
	out := map[string]bool{}
	if len(files) == 0 {
		return out
	}
	rep, err := warccheck.Validate(files...)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Errors) > 0 {
		t.Fatalf("warcio found %d errors after a power cut: %v", len(rep.Errors), rep.Errors)
	}
	// Every file has its CDXJ index, written as it closed or at the reopen,
	// and the indexes hold what the files hold: not a line more.
	indexed, missing, err := cdxj.LoadDir(fs, dir)
	if err != nil || len(missing) > 0 {
		t.Errorf("after recovery: CDXJ indexes: %v; WARC files without one: %v", err, missing)
	}
	var want []cdxj.Line
	for _, f := range files {
		lines, err := cdxj.IndexFile(f)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, lines...)
	}
	cdxj.Sort(want)
	if !slices.Equal(indexed, want) {
		t.Errorf("after recovery: the CDXJ indexes hold %d lines, the WARC files %d records", len(indexed), len(want))
	}
	for u := range rep.Archived() { // responses, and revisits of pages archived before
		out[canonicalOf(t, u)] = true
	}
	for _, r := range rep.Unresolved(warc.ProfileIdenticalPayload) {
		t.Errorf("after a power cut: revisit of %s refers to %s at %s, which no surviving response record is", r.URI, r.RefersToURI, r.RefersToDate)
	}
	return out
}
