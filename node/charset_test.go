package node

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/unicode"

	"github.com/trawl-crawler/trawl/internal/store/urlstate"
	"github.com/trawl-crawler/trawl/job"
	"github.com/trawl-crawler/trawl/simhash"
)

// TestCrawlFollowsLinksInDeclaredCharsets crawls a loopback site whose only
// links to some pages are on pages a browser decodes from UTF-16 (by BOM,
// by the Content-Type header alone) or from Shift_JIS (declared by <meta
// charset>). Every such page must be requested, at the URL a browser
// requests (paths and queries percent-encoded as UTF-8: links' choice for
// queries); each page's record keeps the digest of the bytes as sent and
// the SimHash of the decoded text, whether or not its links were read.
func TestCrawlFollowsLinksInDeclaredCharsets(t *testing.T) {
	t.Parallel()
	type page struct {
		contentType string
		enc         encoding.Encoding // nil: UTF-8
		html        string
		robotsTag   string // X-Robots-Tag, if any
	}
	const words = "<p>a page with enough words in it for a fingerprint of its visible text to be taken</p>"
	pages := map[string]page{
		"/": {"text/html; charset=utf-8", nil,
			`<html><body>` + words + `<a href="/le">le</a> <a href="/be">be</a> <a href="/sjis">sjis</a> <a href="/le-nofollow">nofollow</a></body></html>`, ""},
		// UTF-16LE with a byte order mark, no charset anywhere.
		"/le": {"text/html", unicode.UTF16(unicode.LittleEndian, unicode.UseBOM),
			`<html><body>` + words + `<a href="/only-from-le">next</a></body></html>`, ""},
		// The same, but its links are not to be followed: the node does not
		// extract them, and takes the page's SimHash on its own.
		"/le-nofollow": {"text/html", unicode.UTF16(unicode.LittleEndian, unicode.UseBOM),
			`<html><body>` + words + `<a href="/not-followed">next</a></body></html>`, "nofollow"},
		// UTF-16BE declared by the header only: no BOM, no meta.
		"/be": {"text/html; charset=UTF-16BE", unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM),
			`<html><body>` + words + `<a href="/only-from-be">next</a></body></html>`, ""},
		// Shift_JIS declared by <meta charset> only; the ASCII links on such
		// a page were always found, so these carry Japanese in the path and
		// in the query.
		"/sjis": {"text/html", japanese.ShiftJIS,
			`<html><head><meta charset="Shift_JIS"><title>日本語</title></head><body>` + words +
				`<a href="/日本/ページ">path</a> <a href="/search?q=日本語">query</a></body></html>`, ""},
	}
	leaves := []string{"/only-from-le", "/only-from-be", "/日本/ページ", "/search?q=日本語"}
	var mu sync.Mutex
	hits := map[string]int{} // decoded path and query
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.URL.Path
		if r.URL.RawQuery != "" {
			key += "?" + r.URL.Query().Get("q")
		}
		mu.Lock()
		hits[key]++
		mu.Unlock()
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		p, ok := pages[r.URL.Path]
		if !ok {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, "<html><body><p>a leaf</p></body></html>")
			return
		}
		w.Header().Set("Content-Type", p.contentType)
		if p.robotsTag != "" {
			w.Header().Set("X-Robots-Tag", p.robotsTag)
		}
		_, _ = w.Write(bodyOf(t, p.enc, p.html))
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	base := "http://charsets.test:" + port
	dir := t.TempDir()
	h := &harness{
		opts: Options{
			DataDir:     dir,
			MinDelay:    5 * time.Millisecond,
			Concurrency: 4,
			AllowNets:   loopback,
			Hosts:       map[string][]netip.Addr{"charsets.test": {netip.MustParseAddr("127.0.0.1")}},
		},
		spec: job.Spec{Seeds: []string{base + "/"}},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	h.run(t, ctx)

	mu.Lock()
	defer mu.Unlock()
	for _, leaf := range leaves {
		want := leaf
		if path, q, ok := strings.Cut(leaf, "?q="); ok {
			want = path + "?" + q
		}
		if hits[want] != 1 {
			t.Errorf("%s requested %d times, want 1 (requests: %v)", leaf, hits[want], hits)
		}
	}
	if hits["/not-followed"] != 0 {
		t.Errorf("/not-followed requested %d times; its only link is on an X-Robots-Tag: nofollow page", hits["/not-followed"])
	}
	stored := storedURLs(t, dir)
	for path, p := range pages {
		r, err := urlstate.Decode(stored[base+path])
		if err != nil {
			t.Errorf("%s: Decode: %v", path, err)
			continue
		}
		if sent := bodyOf(t, p.enc, p.html); !r.HasDigest || r.Digest != sha256.Sum256(sent) {
			t.Errorf("%s: Digest %x, want the SHA-256 of the %d bytes sent", path, r.Digest, len(sent))
		}
		if want := simhash.HTML([]byte(p.html)); r.SimHash != want {
			t.Errorf("%s: SimHash %#x, want %#x (that of the decoded text)", path, r.SimHash, want)
		}
	}
}

// bodyOf returns s encoded in e (nil: UTF-8 as it is).
func bodyOf(t *testing.T, e encoding.Encoding, s string) []byte {
	t.Helper()
	if e == nil {
		return []byte(s)
	}
	b, err := e.NewEncoder().Bytes([]byte(s))
	if err != nil {
		t.Fatalf("encode %q: %v", s, err)
	}
	return b
}
