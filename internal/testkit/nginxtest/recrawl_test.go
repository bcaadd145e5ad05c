package nginxtest_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/trawl-crawler/trawl/fetch"
	"github.com/trawl-crawler/trawl/internal/testkit/nginxtest"
	"github.com/trawl-crawler/trawl/internal/testkit/warccheck"
	"github.com/trawl-crawler/trawl/warc"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// site is the static site of the test: files of 1 to 64 KiB, HTML and CSS.
const siteFiles = 40

// changed are the files edited between the second and third recrawl.
var changed = []int{3, 7, 8, 19, 30, 31, 39}

func siteName(i int) string {
	if i%5 == 4 {
		return fmt.Sprintf("css/style%02d.css", i)
	}
	return fmt.Sprintf("page%02d.html", i)
}

// siteContent is file i's content in version v: deterministic, 1 to 64 KiB.
func siteContent(i, v int) []byte {
	r := rand.New(rand.NewPCG(uint64(i), uint64(v)))
	n := 1<<10 + r.IntN(63<<10)
	var b bytes.Buffer
	fmt.Fprintf(&b, "<!doctype html><title>file %d version %d</title>\n", i, v)
	for b.Len() < n {
		fmt.Fprintf(&b, "<p>%d %x</p>\n", v, r.Uint64())
	}
	return b.Bytes()
}

// epoch is the first version's modification time.
var epoch = time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)

func writeFile(t *testing.T, root string, i, v int) {
	t.Helper()
	p := filepath.Join(root, siteName(i))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, siteContent(i, v), 0o644); err != nil {
		t.Fatal(err)
	}
	// A distinct modification time per version: nginx's ETag is the
	// mtime and size, its Last-Modified the mtime.
	mt := epoch.Add(time.Duration(i)*time.Minute + time.Duration(v)*24*time.Hour)
	if err := os.Chtimes(p, mt, mt); err != nil {
		t.Fatal(err)
	}
}

// stored is what a crawl keeps of a URL for its next visit.
type stored struct {
	v        fetch.Validators
	date     time.Time // WARC-Date of the last full capture
	recordID string
	digest   [32]byte
}

// pass is what one crawl of the site saw.
type pass struct {
	status      map[int]int // file -> HTTP status
	bodyBytes   int64       // bytes of bodies received
	headBytes   int64       // bytes of response heads received
	full        []int       // files fetched in full (200), in order
	notModified []int       // files answered 304
}

// TestRecrawlNginx is the judged test of conditional GET against a real
// server: nginx serving a static site. A recrawl of the unchanged site
// with the stored validators gets 304s only and no body byte; after some
// files change (content and mtime), exactly those are fetched again in
// full and the rest are 304. Every fetch is archived (200 as a response,
// 304 as a server-not-modified revisit naming the earlier capture) and
// warcio reads the files. Bytes nginx sent are compared with an
// unconditional recrawl of the same site.
func TestRecrawlNginx(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: recrawls of nginx; the full suite runs it")
	}
	root := t.TempDir()
	for i := range siteFiles {
		writeFile(t, root, i, 0)
	}
	srv := nginxtest.Start(t, root)

	f, err := fetch.New(fetch.Options{
		UserAgent: "trawl-test/0.1 (+https://example.test/bot)",
		AllowNets: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := warc.NewWriter(warc.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}

	state := make(map[int]*stored, siteFiles)
	logged := 0
	// crawl fetches every file once, conditionally when cond and the file
	// has validators, archives the exchange and returns what it saw and
	// the bytes nginx says it sent.
	crawl := func(name string, cond bool) (pass, int64) {
		t.Helper()
		p := pass{status: make(map[int]int)}
		for i := range siteFiles {
			u, err := url.Parse(srv.URL + "/" + siteName(i))
			if err != nil {
				t.Fatal(err)
			}
			req := &fetch.Request{URL: u}
			st := state[i]
			if cond && st != nil {
				req.Validators = st.v
			}
			resp, err := f.Fetch(context.Background(), req)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			p.status[i] = resp.Status
			p.headBytes += int64(len(resp.RawResponseHeader))
			p.bodyBytes += int64(len(resp.Body))
			ex := &warc.Exchange{URL: resp.URL, IP: resp.IP.String(), Date: resp.Start, Request: resp.RawRequest,
				ResponseHeader: resp.RawResponseHeader, Body: resp.Body}
			switch {
			case resp.NotModified:
				p.notModified = append(p.notModified, i)
				if len(resp.Body) != 0 {
					t.Errorf("%s: %s: 304 with %d body bytes", name, u, len(resp.Body))
				}
				ex.Body = nil
				ex.Revisit = &warc.Revisit{Profile: warc.ProfileServerNotModified, TargetURI: resp.URL, Date: st.date, RecordID: st.recordID}
				if _, err := w.Write(ex); err != nil {
					t.Fatal(err)
				}
			case resp.Status == 200:
				p.full = append(p.full, i)
				sum := sha256.Sum256(resp.Body)
				ex.PayloadSHA256 = sum[:]
				loc, err := w.Write(ex)
				if err != nil {
					t.Fatal(err)
				}
				state[i] = &stored{v: fetch.ValidatorsOf(resp.Header), date: resp.Start, recordID: loc.RecordID, digest: sum}
			default:
				t.Fatalf("%s: %s: status %d\n%s%s", name, u, resp.Status, resp.RawRequest, resp.Body)
			}
			resp.Release()
		}
		// nginx logs a request just after its response: wait for them all.
		var sent []nginxtest.Sent
		deadline := time.Now().Add(5 * time.Second)
		for {
			if sent, err = srv.Log(); err != nil {
				t.Fatal(err)
			}
			if len(sent) >= logged+siteFiles || time.Now().After(deadline) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if len(sent) != logged+siteFiles {
			t.Fatalf("%s: nginx logged %d requests, want %d", name, len(sent)-logged, siteFiles)
		}
		var bytesSent int64
		for _, e := range sent[logged:] {
			bytesSent += e.Bytes
		}
		logged = len(sent)
		return p, bytesSent
	}

	all := make([]int, siteFiles)
	for i := range all {
		all[i] = i
	}
	first, firstSent := crawl("first crawl", true)
	if !slices.Equal(first.full, all) {
		t.Fatalf("first crawl: fetched in full %v, want every file", first.full)
	}
	for i, st := range state {
		if st.v.ETag == "" || st.v.LastModified == "" {
			t.Errorf("%s: nginx sent validators %+v, want an ETag and a Last-Modified", siteName(i), st.v)
		}
	}
	_, uncondSent := crawl("unconditional recrawl", false)

	// The unchanged site: 304 only, not one body byte.
	same, sameSent := crawl("recrawl of the unchanged site", true)
	if len(same.full) != 0 || len(same.notModified) != siteFiles || same.bodyBytes != 0 {
		t.Errorf("recrawl of the unchanged site: %d in full, %d not modified, %d body bytes; want 0, %d, 0",
			len(same.full), len(same.notModified), same.bodyBytes, siteFiles)
	}

	// Some files change: exactly those come again in full, with their new
	// content; the rest are 304.
	for _, i := range changed {
		writeFile(t, root, i, 1)
	}
	before := make(map[int][32]byte, len(state))
	for i, st := range state {
		before[i] = st.digest
	}
	after, afterSent := crawl("recrawl after changes", true)
	if !slices.Equal(after.full, changed) {
		t.Errorf("recrawl after changes: fetched in full %v, want exactly the changed files %v", after.full, changed)
	}
	if len(after.notModified) != siteFiles-len(changed) {
		t.Errorf("recrawl after changes: %d not modified, want %d", len(after.notModified), siteFiles-len(changed))
	}
	var changedBytes int64
	for _, i := range changed {
		want := sha256.Sum256(siteContent(i, 1))
		if state[i].digest != want || state[i].digest == before[i] {
			t.Errorf("%s: the refetched body is not the new version", siteName(i))
		}
		changedBytes += int64(len(siteContent(i, 1)))
	}
	if after.bodyBytes != changedBytes {
		t.Errorf("recrawl after changes: %d body bytes, want the changed files' %d", after.bodyBytes, changedBytes)
	}
	_, uncondAfterSent := crawl("unconditional recrawl after changes", false)

	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rep, err := warccheck.Validate(w.Files()...)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Errors) > 0 {
		t.Errorf("warcio: %v", rep.Errors)
	}
	// Responses: the first crawl, both unconditional recrawls, the changed
	// files. Revisits: the two conditional recrawls' 304s.
	wantResp := 3*siteFiles + len(changed)
	wantRev := siteFiles + siteFiles - len(changed)
	if rep.ByType["response"] != wantResp || rep.ByType["revisit"] != wantRev {
		t.Errorf("warcio counts %v, want %d responses and %d revisits", rep.ByType, wantResp, wantRev)
	}
	for _, r := range rep.Revisits {
		if r.Status != 304 || r.Profile != warc.ProfileServerNotModified || r.RefersTo == "" || r.RefersToDate == "" {
			t.Errorf("revisit %+v: want a 304 with the server-not-modified profile naming its original", r)
		}
	}

	t.Logf("site: %d files, %d bytes; %d changed (%d bytes)", siteFiles, first.bodyBytes, len(changed), changedBytes)
	t.Logf("bytes nginx sent: first crawl %d", firstSent)
	t.Logf("unchanged site: unconditional recrawl %d, conditional %d: %d saved (%.1f%%)",
		uncondSent, sameSent, uncondSent-sameSent, 100*float64(uncondSent-sameSent)/float64(uncondSent))
	t.Logf("after %d changes: unconditional recrawl %d, conditional %d: %d saved (%.1f%%)",
		len(changed), uncondAfterSent, afterSent, uncondAfterSent-afterSent, 100*float64(uncondAfterSent-afterSent)/float64(uncondAfterSent))
}
