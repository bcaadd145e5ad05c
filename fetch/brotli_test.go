package fetch

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"
)

// brotliBytes compresses data with brotli at quality q and window lgwin.
func brotliBytes(t testing.TB, data []byte, q, lgwin int) []byte {
	t.Helper()
	var b bytes.Buffer
	w := brotli.NewWriterOptions(&b, brotli.WriterOptions{Quality: q, LGWin: lgwin})
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestBrotli fetches br bodies from a loopback server: a page decodes
// whole, a bomb stops at MaxDecodedBytes as a gzip bomb does, bytes that
// are not brotli leave DecodeErr, and a body cut by MaxBodyBytes decodes
// as far as it goes.
func TestBrotli(t *testing.T) {
	page := []byte(strings.Repeat("<p>a page worth compressing, 0123456789</p>\n", 2000))
	varied := bytes.Clone(page)
	for i := range varied {
		varied[i] ^= byte(i * 7 % 3) // so that the stream stays long
	}
	bodies := map[string][]byte{
		"/page":    brotliBytes(t, page, 5, 22),
		"/bomb":    brotliBytes(t, make([]byte, 4<<20), 4, 18),
		"/corrupt": []byte("this is not brotli at all, whatever the header says\n"),
		"/varied":  brotliBytes(t, varied, 5, 16),
		"/layers":  gzipBytes(t, brotliBytes(t, page, 5, 22)),
	}
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Encoding", "br")
		if r.URL.Path == "/layers" {
			w.Header().Set("Content-Encoding", "br, gzip")
		}
		w.Write(bodies[r.URL.Path])
	}))
	o := testOptions()
	o.MaxDecodedBytes = 256 << 10
	f := newFetcher(t, o)
	o.MaxBodyBytes = int64(len(bodies["/varied"]) / 2)
	short := newFetcher(t, o)

	for _, path := range []string{"/page", "/layers"} {
		resp, err := get(t, f, srv.URL+path)
		if err != nil {
			t.Fatalf("Fetch %s: %v", path, err)
		}
		if !bytes.Equal(resp.Decoded, page) || resp.Truncated != "" || resp.DecodeErr != nil || resp.Identity() {
			t.Errorf("%s: len(Decoded) = %d (want %d), Truncated = %q, DecodeErr = %v", path, len(resp.Decoded), len(page), resp.Truncated, resp.DecodeErr)
		}
		resp.Release()
	}

	resp, err := get(t, f, srv.URL+"/bomb")
	if err != nil {
		t.Fatalf("Fetch bomb: %v", err)
	}
	if !bytes.Equal(resp.Body, bodies["/bomb"]) || len(resp.Decoded) != 256<<10 || resp.Truncated != "length" || resp.DecodeErr != nil {
		t.Errorf("bomb: len(Body) = %d (want %d), len(Decoded) = %d (want %d), Truncated = %q, DecodeErr = %v",
			len(resp.Body), len(bodies["/bomb"]), len(resp.Decoded), 256<<10, resp.Truncated, resp.DecodeErr)
	}

	checkCodingFaults(t, f, short, srv.URL, "brotli", bodies["/corrupt"], page, varied)
}

// TestBrotliWindow reads the window a stream declares as the encoder
// wrote it.
func TestBrotliWindow(t *testing.T) {
	for lgwin := 10; lgwin <= 24; lgwin++ {
		b := brotliBytes(t, []byte("<p>hello</p>"), 5, lgwin)
		if got := brotliWindow(b[0]); got != 1<<lgwin {
			t.Errorf("LGWin %d: window %d, want %d", lgwin, got, 1<<lgwin)
		}
	}
}

// TestBrotliDecodeAllocs: decoding a small br page reuses a pooled
// reader, allocating little more than the decoded page and its ring
// buffer; a fresh reader would add its 32 KiB input buffer and tables.
func TestBrotliDecodeAllocs(t *testing.T) {
	page := []byte(strings.Repeat("<p>a small page</p>\n", 200)) // 4 KB
	body := brotliBytes(t, page, 5, 19)
	per := decodeAllocs(t, body, "br", page)
	if per > 32<<10 {
		t.Errorf("%d bytes allocated per decode, want at most 32 KiB", per)
	}
}

// checkCodingFaults checks a content coding's faults against the server
// at base: /corrupt (its bytes corrupt) fails to decode with an error
// naming coding and keeps the body as sent; the pooled decoder that
// failed then decodes /page whole; /varied cut by short's MaxBodyBytes
// decodes to a prefix of varied, marked "length".
func checkCodingFaults(t *testing.T, f, short *Fetcher, base, coding string, corrupt, page, varied []byte) {
	t.Helper()
	resp, err := get(t, f, base+"/corrupt")
	if err != nil {
		t.Fatalf("Fetch corrupt: %v", err)
	}
	if resp.DecodeErr == nil || resp.Decoded != nil || !bytes.Equal(resp.Body, corrupt) || resp.Truncated != "" ||
		!strings.Contains(resp.DecodeErr.Error(), coding) {
		t.Errorf("corrupt: DecodeErr = %v, Decoded = %q, len(Body) = %d, Truncated = %q; want a %s error and the body kept",
			resp.DecodeErr, resp.Decoded, len(resp.Body), resp.Truncated, coding)
	}
	resp, err = get(t, f, base+"/page")
	if err != nil || !bytes.Equal(resp.Decoded, page) || resp.DecodeErr != nil {
		t.Errorf("page after corrupt: %v, DecodeErr %v", err, resp.DecodeErr)
	}
	resp, err = get(t, short, base+"/varied")
	if err != nil {
		t.Fatalf("Fetch varied: %v", err)
	}
	if resp.Truncated != "length" || resp.DecodeErr != nil || len(resp.Decoded) == 0 || !bytes.HasPrefix(varied, resp.Decoded) {
		t.Errorf("cut by MaxBodyBytes: Truncated = %q, DecodeErr = %v, len(Decoded) = %d; want \"length\", nil and a prefix of the page",
			resp.Truncated, resp.DecodeErr, len(resp.Decoded))
	}
}
