package fetch

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// zstdBytes compresses data with zstd at level, in one frame whose window
// is at most window bytes (0: the encoder's choice).
func zstdBytes(t testing.TB, data []byte, level zstd.EncoderLevel, window int) []byte {
	t.Helper()
	opts := []zstd.EOption{zstd.WithEncoderLevel(level), zstd.WithEncoderConcurrency(1)}
	if window > 0 {
		opts = append(opts, zstd.WithWindowSize(window))
	}
	e, err := zstd.NewWriter(nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	return e.EncodeAll(data, nil)
}

// zstdRLEFrame hand-builds one zstd frame (RFC 8878 section 3.1.1) that
// declares the window 1<<windowLog (no content size, no checksum) and
// holds blocks RLE blocks of n bytes of c each: a stream a few bytes long
// whose declared window and output are whatever the sender likes.
func zstdRLEFrame(windowLog, blocks, n int, c byte) []byte {
	b := []byte{0x28, 0xB5, 0x2F, 0xFD, 0x00, byte(windowLog-10) << 3}
	for i := range blocks {
		h := uint32(n)<<3 | 1<<1 // Block_Type 1: RLE
		if i == blocks-1 {
			h |= 1 // Last_Block
		}
		b = append(b, byte(h), byte(h>>8), byte(h>>16), c)
	}
	return b
}

// TestZstd fetches zstd bodies from a loopback server: a page decodes
// whole, alone and stacked with gzip either way round; a bomb stops at
// MaxDecodedBytes with WARC-Truncated "length" as a gzip or br bomb does;
// a frame declaring a window past 8 MiB (RFC 9659's bound) is refused
// without allocating it; bytes that are not zstd leave DecodeErr and the
// body as transferred; a body cut short, by the connection or by
// MaxBodyBytes, decodes as far as it goes.
func TestZstd(t *testing.T) {
	page := []byte(strings.Repeat("<p>a page worth compressing, 0123456789</p>\n", 2000))
	// Text that stays long compressed, over several 128 KiB blocks: a
	// decoder yields whole blocks, so a cut stream yields the blocks
	// before the cut.
	rng := rand.New(rand.NewPCG(1, 2))
	var vb bytes.Buffer
	for vb.Len() < 400<<10 {
		fmt.Fprintf(&vb, "<p>%x</p>\n", rng.Uint64())
	}
	varied := vb.Bytes()
	bodies := map[string][]byte{
		"/page":      zstdBytes(t, page, zstd.SpeedDefault, 0),
		"/bomb":      zstdBytes(t, make([]byte, 4<<20), zstd.SpeedFastest, 0),
		"/rle-bomb":  zstdRLEFrame(17, 1000, 100_000, 'a'), // 100 MB from 4 KB
		"/window":    zstdRLEFrame(30, 1, 10, 'a'),         // declares a 1 GiB window
		"/window8":   zstdRLEFrame(23, 1, 10, 'a'),         // 8 MiB: the most RFC 9659 asks a recipient to take
		"/corrupt":   []byte("this is not zstd at all, whatever the header says\n"),
		"/varied":    zstdBytes(t, varied, zstd.SpeedDefault, 1<<16),
		"/gzip-zstd": zstdBytes(t, gzipBytes(t, page), zstd.SpeedDefault, 0),
		"/zstd-gzip": gzipBytes(t, zstdBytes(t, page, zstd.SpeedDefault, 0)),
	}
	encodings := map[string]string{"/gzip-zstd": "gzip, zstd", "/zstd-gzip": "zstd, gzip"}
	srv := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Encoding", "zstd")
		if e, ok := encodings[r.URL.Path]; ok {
			w.Header().Set("Content-Encoding", e)
		}
		w.Write(bodies[r.URL.Path])
	}))
	o := testOptions()
	o.MaxDecodedBytes = 256 << 10
	f := newFetcher(t, o)
	o.MaxDecodedBytes = 0
	o.MaxBodyBytes = int64(len(bodies["/varied"]) / 2)
	short := newFetcher(t, o)

	for _, path := range []string{"/page", "/gzip-zstd", "/zstd-gzip"} {
		resp, err := get(t, f, srv.URL+path)
		if err != nil {
			t.Fatalf("Fetch %s: %v", path, err)
		}
		if !bytes.Equal(resp.Decoded, page) || resp.Truncated != "" || resp.DecodeErr != nil || resp.Identity() ||
			!bytes.Equal(resp.Body, bodies[path]) {
			t.Errorf("%s: len(Decoded) = %d (want %d), Truncated = %q, DecodeErr = %v, len(Body) = %d (want %d, as transferred)",
				path, len(resp.Decoded), len(page), resp.Truncated, resp.DecodeErr, len(resp.Body), len(bodies[path]))
		}
		resp.Release()
	}

	for _, path := range []string{"/bomb", "/rle-bomb"} {
		resp, err := get(t, f, srv.URL+path)
		if err != nil {
			t.Fatalf("Fetch %s: %v", path, err)
		}
		if !bytes.Equal(resp.Body, bodies[path]) || len(resp.Decoded) != 256<<10 || resp.Truncated != "length" || resp.DecodeErr != nil {
			t.Errorf("%s: len(Body) = %d (want %d), len(Decoded) = %d (want %d), Truncated = %q, DecodeErr = %v",
				path, len(resp.Body), len(bodies[path]), len(resp.Decoded), 256<<10, resp.Truncated, resp.DecodeErr)
		}
		resp.Release()
	}

	// The 1 GiB window is refused before anything is allocated for it.
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	resp, err := get(t, f, srv.URL+"/window")
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatalf("Fetch window: %v", err)
	}
	if resp.DecodeErr == nil || resp.Decoded != nil || !strings.Contains(resp.DecodeErr.Error(), "zstd") || !bytes.Equal(resp.Body, bodies["/window"]) {
		t.Errorf("window: DecodeErr = %v, len(Decoded) = %d; want a zstd error, no output and the body kept", resp.DecodeErr, len(resp.Decoded))
	}
	if a := after.TotalAlloc - before.TotalAlloc; a > 8<<20 {
		t.Errorf("window: %d bytes allocated by a fetch of a stream declaring a 1 GiB window, want under 8 MiB", a)
	}
	resp, err = get(t, f, srv.URL+"/window8")
	if err != nil || resp.DecodeErr != nil || string(resp.Decoded) != "aaaaaaaaaa" {
		t.Errorf("window8: %v, DecodeErr %v, Decoded %q; want 10 a's", err, resp.DecodeErr, resp.Decoded)
	}

	checkCodingFaults(t, f, short, srv.URL, "zstd", bodies["/corrupt"], page, varied)

	// A server that declares the whole stream and sends half of it.
	cut := bodies["/varied"][:len(bodies["/varied"])/2]
	raw := newRawServer(t, func(c net.Conn) {
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: zstd\r\nContent-Length: %d\r\n\r\n", len(bodies["/varied"]))
		c.Write(cut)
	})
	resp, err = get(t, f, raw.URL()+"/varied")
	if err != nil {
		t.Fatalf("Fetch cut: %v", err)
	}
	if resp.Truncated != "disconnect" || resp.DecodeErr != nil || !bytes.Equal(resp.Body, cut) || len(resp.Decoded) == 0 || !bytes.HasPrefix(varied, resp.Decoded) {
		t.Errorf("cut by the server: Truncated = %q, DecodeErr = %v, len(Body) = %d (want %d), len(Decoded) = %d; want \"disconnect\", nil and a prefix of the page",
			resp.Truncated, resp.DecodeErr, len(resp.Body), len(cut), len(resp.Decoded))
	}
}

// TestZstdWindow reads the largest window a stream's frames declare, as
// the encoder or a hand-built frame wrote it.
func TestZstdWindow(t *testing.T) {
	page := []byte(strings.Repeat("<p>hello</p>", 10_000)) // 120 KB
	skippable := []byte{0x50, 0x2A, 0x4D, 0x18, 3, 0, 0, 0, 'x', 'y', 'z'}
	for _, tc := range []struct {
		name string
		body []byte
		want uint64
	}{
		{"empty", nil, 0},
		{"garbage", []byte("not zstd"), 0},
		{"window 1<<17", zstdRLEFrame(17, 2, 10, 'a'), 1 << 17},
		{"window 1<<30", zstdRLEFrame(30, 1, 10, 'a'), 1 << 30},
		{"second frame's window", append(zstdRLEFrame(12, 1, 10, 'a'), zstdRLEFrame(23, 1, 10, 'b')...), 1 << 23},
		{"skippable frame first", append(bytes.Clone(skippable), zstdRLEFrame(20, 1, 10, 'a')...), 1 << 20},
		{"header cut", zstdRLEFrame(20, 1, 10, 'a')[:5], 0},
		{"second frame cut", append(zstdRLEFrame(12, 1, 10, 'a'), zstdRLEFrame(23, 1, 10, 'b')[:5]...), 1 << 12},
		// The encoder writes a single-segment frame for a small input:
		// its window is its content size.
		{"encoder, single segment", zstdBytes(t, page[:5000], zstd.SpeedDefault, 0), 5000},
		{"encoder, checksum and two frames", append(zstdBytes(t, page, zstd.SpeedFastest, 1<<16), zstdBytes(t, page[:2000], zstd.SpeedFastest, 0)...), 1 << 16},
	} {
		if got := zstdWindow(tc.body); got != tc.want {
			t.Errorf("%s: zstdWindow = %d, want %d", tc.name, got, tc.want)
		}
	}
}

// FuzzZstdWindow: zstdWindow reads network bytes (the body's frame and
// block headers) before any decoder does: it must not panic, and a
// prefix of a stream never declares a larger window than the stream.
func FuzzZstdWindow(f *testing.F) {
	f.Add(zstdRLEFrame(17, 2, 10, 'a'))
	f.Add(append(zstdRLEFrame(12, 1, 10, 'a'), zstdRLEFrame(23, 1, 10, 'b')...))
	f.Add([]byte{0x50, 0x2A, 0x4D, 0x18, 3, 0, 0, 0, 'x', 'y', 'z'})
	f.Add(zstdBytes(f, []byte(strings.Repeat("<p>hello</p>", 100)), zstd.SpeedDefault, 0))
	f.Fuzz(func(t *testing.T, data []byte) {
		w := zstdWindow(data)
		for _, k := range []int{len(data) / 2, len(data) - 1} {
			if k >= 0 && zstdWindow(data[:k]) > w {
				t.Fatalf("zstdWindow(%x[:%d]) = %d > zstdWindow of the whole, %d", data, k, zstdWindow(data[:k]), w)
			}
		}
	})
}

// BenchmarkDecodeZstd decodes a 50 KB page sent as zstd, with a pooled
// decoder (as fetches do) and with a fresh one each time.
func BenchmarkDecodeZstd(b *testing.B) {
	page := []byte(strings.Repeat("<p>a page of about fifty kilobytes, 0123456789</p>\n", 1000)) // 51 KB
	for i := range page {
		page[i] ^= byte(i * 7 % 3) // some work for the decoder
	}
	body := zstdBytes(b, page, zstd.SpeedDefault, 0)
	b.Run("pooled", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			out, _, err := decode(body, "zstd", 1<<20, false)
			if err != nil || len(out) != len(page) {
				b.Fatalf("decode: %v", err)
			}
			putBuf(out)
		}
	})
	b.Run("fresh", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			d := newZstd()
			if err := d.Reset(bytes.NewReader(body)); err != nil {
				b.Fatal(err)
			}
			out, _, err := readCapped(zstdReader{d}, 1<<20, int64(len(body))*4)
			d.Close()
			if err != nil || len(out) != len(page) {
				b.Fatalf("decode: %v", err)
			}
			putBuf(out)
		}
	})
}

// TestZstdDecodeAllocs: decoding a small zstd page reuses a pooled
// decoder, allocating little more than the decoded page.
func TestZstdDecodeAllocs(t *testing.T) {
	page := []byte(strings.Repeat("<p>a small page</p>\n", 200)) // 4 KB
	body := zstdBytes(t, page, zstd.SpeedDefault, 0)
	per := decodeAllocs(t, body, "zstd", page)
	if per > 32<<10 {
		t.Errorf("%d bytes allocated per decode, want at most 32 KiB", per)
	}
}
