package node

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"fmt"
	"image"
	"image/png"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/trawl-crawler/trawl/internal/testkit/testweb"
	"github.com/trawl-crawler/trawl/internal/testkit/warccheck"
	"github.com/trawl-crawler/trawl/job"
	"github.com/trawl-crawler/trawl/warc"
)

// bodyWebCap is the body cap of TestEveryBodyArchived's crawl.
const bodyWebCap = 64 << 10

// sentBody is what the server of TestEveryBodyArchived serves at a path:
// the payload bytes as transferred, and how a crawler may find them cut.
type sentBody struct {
	ctype, encoding string
	body            []byte
	// cutAt, if not 0, is where the server stops sending body, under a
	// Content-Length of all of it, and closes the connection.
	cutAt int
	// truncated is the WARC-Truncated the record must carry: "" for a
	// complete body, "length" past bodyWebCap, "disconnect" for a lie.
	truncated string
}

// bodyWeb returns the bodies TestEveryBodyArchived serves: HTML, a
// 5,009-byte PDF and a copy of it at a second URL, a PNG, plain text, a
// gzip-coded JSON file, a zstd-coded page, the JSON file coded gzip then
// zstd, a binary past the cap and a PDF whose server declares more than
// it sends.
func bodyWeb(t *testing.T) map[string]sentBody {
	rng := rand.New(rand.NewPCG(10, 22))
	random := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	pdf := append([]byte("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n"), random(5009)...)[:5009]
	img := image.NewNRGBA(image.Rect(0, 0, 40, 30))
	for i := range img.Pix {
		img.Pix[i] = byte(rng.Uint32())
	}
	var pngBuf bytes.Buffer
	if err := png.Encode(&pngBuf, img); err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	fmt.Fprintf(zw, `{"items": [%s1]}`, strings.Repeat("1, ", 2000))
	zw.Close()
	// zstd (RFC 9659), alone and over gzip: archived as transferred.
	ze, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	zs := ze.EncodeAll([]byte(`<html><body><p>zstd</p><a href="/">home</a></body></html>`), nil)
	zgz := ze.EncodeAll(gz.Bytes(), nil)
	ze.Close()
	return map[string]sentBody{
		"/":           {ctype: "text/html; charset=utf-8", body: []byte(`<html><body><p>files</p><a href="/doc.pdf">doc</a> <a href="/copy.pdf">copy</a></body></html>`)},
		"/doc.pdf":    {ctype: "application/pdf", body: pdf},
		"/copy.pdf":   {ctype: "application/pdf", body: pdf},
		"/img.png":    {ctype: "image/png", body: pngBuf.Bytes()},
		"/notes.txt":  {ctype: "text/plain; charset=utf-8", body: []byte("plain text, read before and after the change\n")},
		"/data.json":  {ctype: "application/json", encoding: "gzip", body: gz.Bytes()},
		"/zstd.html":  {ctype: "text/html", encoding: "zstd", body: zs},
		"/data2.json": {ctype: "application/json", encoding: "gzip, zstd", body: zgz},
		"/big.bin":    {ctype: "application/octet-stream", body: random(3 * bodyWebCap), truncated: "length"},
		"/cut.pdf":    {ctype: "application/pdf", body: pdf, cutAt: 3000, truncated: "disconnect"},
	}
}

// TestEveryBodyArchived crawls, as seeds, files of every kind a site
// serves and reads every WARC record back: a response record holds the
// bytes the server sent, whole, or says WARC-Truncated and holds the
// bytes it received (a prefix of them). A PDF was archived with an empty
// payload under its Content-Length of 5,009 and no WARC-Truncated: the
// fetcher read only the bodies of a few text types. Exact copies of a
// non-HTML payload are revisits like those of HTML.
func TestEveryBodyArchived(t *testing.T) {
	t.Parallel()
	sent := bodyWeb(t)
	var mu sync.Mutex
	hits := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Path]++
		mu.Unlock()
		s, ok := sent[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if s.cutAt > 0 {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				fmt.Fprintf(conn, "HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n", s.ctype, len(s.body))
				conn.Write(s.body[:s.cutAt])
				conn.Close()
			}
			return
		}
		w.Header().Set("Content-Type", s.ctype)
		if s.encoding != "" {
			w.Header().Set("Content-Encoding", s.encoding)
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(s.body)))
		w.Write(s.body)
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	base := "http://files.test:" + port
	var seeds []string
	for p := range sent {
		seeds = append(seeds, base+p)
	}
	slices.Sort(seeds)
	h := &harness{
		opts: Options{
			DataDir:      t.TempDir(),
			MinDelay:     5 * time.Millisecond,
			Concurrency:  4,
			AllowNets:    loopback,
			Hosts:        map[string][]netip.Addr{"files.test": {netip.MustParseAddr("127.0.0.1")}},
			MaxBodyBytes: bodyWebCap,
		},
		spec: job.Spec{Seeds: seeds},
	}
	sum := h.run(t, context.Background())
	if sum.Total.Revisits != 1 {
		t.Errorf("%d revisits, want 1: /copy.pdf and /doc.pdf are the same bytes", sum.Total.Revisits)
	}
	// A cut body is named in the summary, whatever its type.
	if sum.Errors[ErrorTooLarge] != 1 || sum.Errors[ErrorBodyCut] != 1 {
		t.Errorf("summary errors %v, want 1 %q (/big.bin) and 1 %q (/cut.pdf)", sum.Errors, ErrorTooLarge, ErrorBodyCut)
	}
	files, err := filepath.Glob(filepath.Join(h.opts.DataDir, "warc", "*.warc.gz"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no WARC files (%v)", err)
	}
	bodies := map[string][]byte{}
	for p, s := range sent {
		bodies[base+p] = s.body
	}
	got := readPayloads(t, files, bodies)
	revisits := 0
	for p, s := range sent {
		u := base + p
		recs := got[u]
		mu.Lock()
		n := hits[p]
		mu.Unlock()
		if len(recs) != n || n == 0 {
			t.Errorf("%s: %d records, %d requests; want one record per request", u, len(recs), n)
			continue
		}
		for _, r := range recs {
			if r.typ == "revisit" {
				revisits++
				continue
			}
			if r.truncated != s.truncated {
				t.Errorf("%s: WARC-Truncated %q, want %q", u, r.truncated, s.truncated)
			}
			want := s.body
			switch {
			case s.truncated == "length":
				want = s.body[:bodyWebCap]
			case s.cutAt > 0:
				want = s.body[:s.cutAt]
			}
			if !bytes.Equal(r.payload, want) {
				t.Errorf("%s: payload of %d bytes (sha256 %x), the server sent %d (sha256 %x)",
					u, len(r.payload), sha256.Sum256(r.payload), len(want), sha256.Sum256(want))
			}
		}
	}
	if revisits != 1 {
		t.Errorf("%d revisit records, want 1 (of /doc.pdf or /copy.pdf)", revisits)
	}
	rep, err := warccheck.Validate(files...)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Errors) > 0 {
		t.Errorf("warcio found %d errors: %v", len(rep.Errors), rep.Errors)
	}
	if p := rep.Payloads(bodies); len(p) > 0 {
		t.Errorf("warcio's reading of the payloads: %v", p)
	}
	for _, r := range rep.Responses {
		if r.Protocols != "http/1.1" {
			t.Errorf("%s: WARC-Protocol %q, want http/1.1", r.URI, r.Protocols)
		}
	}
	for _, r := range rep.Unresolved(warc.ProfileIdenticalPayload) {
		t.Errorf("revisit of %s does not resolve to %s at %s", r.URI, r.RefersToURI, r.RefersToDate)
	}
}

// archivedPayload is one response or revisit record read back.
type archivedPayload struct {
	typ       string
	truncated string // WARC-Truncated
	payload   []byte // the block past the HTTP head
}

// readPayloads reads every record of files with warc.Reader and returns
// the response and revisit records by target URI. It checks the
// invariant every response record must hold: its payload digest is that
// of its payload, and the payload is what the server sent (bodies, by
// URL, where the caller knows it; else the HTTP Content-Length says how
// long it was) or the record says WARC-Truncated and holds a prefix of
// it; a revisit's payload digest is that of what was sent.
func readPayloads(t *testing.T, files []string, bodies map[string][]byte) map[string][]archivedPayload {
	t.Helper()
	out := map[string][]archivedPayload{}
	eachRecord(t, files, func(rec *warc.Record, block []byte) {
		if rec.Type != "response" && rec.Type != "revisit" {
			return
		}
		if rec.HTTP == nil {
			t.Errorf("%s: %s record with no HTTP head: %v", rec.TargetURI, rec.Type, rec.HTTPErr)
			return
		}
		a := archivedPayload{typ: rec.Type, truncated: rec.Get("WARC-Truncated"), payload: block[rec.HTTP.Size:]}
		out[rec.TargetURI] = append(out[rec.TargetURI], a)
		sent, known := bodies[rec.TargetURI]
		if rec.Type == "revisit" {
			if known && rec.PayloadDigest != warc.Digest(sum256(sent)) {
				t.Errorf("%s: revisit's payload digest %s is not that of the %d bytes sent", rec.TargetURI, rec.PayloadDigest, len(sent))
			}
			return
		}
		if rec.PayloadDigest != warc.Digest(sum256(a.payload)) {
			t.Errorf("%s: WARC-Payload-Digest %s is not that of its %d payload bytes", rec.TargetURI, rec.PayloadDigest, len(a.payload))
		}
		if !known {
			declared := -1
			for _, hf := range rec.HTTP.Header {
				if strings.EqualFold(hf[0], "Content-Length") {
					declared, _ = strconv.Atoi(strings.TrimSpace(hf[1]))
				}
			}
			if declared >= 0 && declared != len(a.payload) && a.truncated == "" && rec.HTTP.Status != 304 && rec.HTTP.Status != 204 {
				t.Errorf("%s: %d payload bytes under Content-Length %d, and no WARC-Truncated", rec.TargetURI, len(a.payload), declared)
			}
			return
		}
		switch {
		case a.truncated == "" && !bytes.Equal(a.payload, sent):
			t.Errorf("%s: payload of %d bytes is not the %d sent, and no WARC-Truncated", rec.TargetURI, len(a.payload), len(sent))
		case a.truncated != "" && (len(a.payload) >= len(sent) || !bytes.HasPrefix(sent, a.payload)):
			t.Errorf("%s: WARC-Truncated %q over %d payload bytes, not a shorter prefix of the %d sent", rec.TargetURI, a.truncated, len(a.payload), len(sent))
		}
	})
	return out
}

// eachRecord reads every record of files with warc.Reader and calls fn
// with it and its whole block; a file that does not read fails the test.
func eachRecord(t *testing.T, files []string, fn func(rec *warc.Record, block []byte)) {
	t.Helper()
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		rd := warc.NewReader(fh, f)
		for {
			rec, err := rd.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				fh.Close()
				t.Fatal(err)
			}
			block, err := io.ReadAll(rd.Block())
			if err != nil {
				fh.Close()
				t.Fatal(err)
			}
			fn(rec, block)
		}
		if _, err := rd.End(); err != nil && err != io.EOF {
			t.Error(err)
		}
		fh.Close()
	}
}

func sum256(b []byte) []byte {
	s := sha256.Sum256(b)
	return s[:]
}

// checkPayloads checks every response and revisit record warcio read
// (rep) against the bytes the synthetic web sends for its URL, where the
// web knows them in advance (testweb.Web.Body): each holds them whole or
// says WARC-Truncated over a prefix of them. It returns how many records
// were checked.
func checkPayloads(t *testing.T, web *testweb.Web, rep *warccheck.Report) int {
	t.Helper()
	sent := map[string][]byte{}
	checked := 0
	for u := range rep.Archived() {
		if b, ok := web.Body(u); ok {
			sent[u] = b
		}
	}
	for _, x := range rep.Responses {
		if _, ok := sent[x.URI]; ok {
			checked++
		}
	}
	for _, x := range rep.Revisits {
		if _, ok := sent[x.URI]; ok {
			checked++
		}
	}
	for _, p := range rep.Payloads(sent) {
		t.Error(p)
	}
	return checked
}
