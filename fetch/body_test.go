package fetch

import (
	"bytes"
	"math"
	"runtime"
	"strings"
	"testing"
)

func TestMediaType(t *testing.T) {
	cases := []struct{ in, want string }{
		{"text/html", "text/html"},
		{"Text/HTML; charset=UTF-8", "text/html"},
		{"  application/xhtml+xml ;q=1", "application/xhtml+xml"},
		{"text/html; charset", "text/html"}, // malformed parameter
		{"text/html;;", "text/html"},
		{"", ""},
		{";charset=utf-8", ""},
	}
	for _, c := range cases {
		if got := mediaType(c.in); got != c.want {
			t.Errorf("mediaType(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestReadCapped(t *testing.T) {
	cases := []struct {
		in        string
		limit     int64
		hint      int64
		want      string
		truncated bool
	}{
		{"hello", 10, 0, "hello", false},
		{"hello", 5, 5, "hello", false},
		{"hello!", 5, 6, "hello", true},
		{"hello!", 5, 2, "hello", true}, // a lying hint does not matter
		{"", 5, 0, "", false},
	}
	for _, c := range cases {
		got, tr, err := readCapped(strings.NewReader(c.in), c.limit, c.hint)
		if err != nil || string(got) != c.want || tr != c.truncated {
			t.Errorf("readCapped(%q, %d, %d) = %q, %v, %v; want %q, %v, nil", c.in, c.limit, c.hint, got, tr, err, c.want, c.truncated)
		}
	}
}

// TestReadCappedSizes reads bodies around the pool's size classes, with
// and without a (possibly wrong) size hint, each into buffers that earlier
// reads released dirty: every byte must be the body's.
func TestReadCappedSizes(t *testing.T) {
	sizes := []int{0, 1, 4095, 4096, 4097, 65536, 1 << 18, 1<<18 + 1, 700_000}
	limits := []int64{10, 4096, 1 << 18, 1 << 20, math.MaxInt64 - 1, math.MaxInt64} // limit+1 must not overflow
	for _, n := range sizes {
		body := bytes.Repeat([]byte("0123456789abcdefg"), n/17+1)[:n]
		for _, limit := range limits {
			want, wantTrunc := body, false
			if int64(n) > limit {
				want, wantTrunc = body[:limit], true
			}
			for _, hint := range []int64{0, int64(n), int64(n) / 2, int64(n) * 3} {
				got, tr, err := readCapped(bytes.NewReader(body), limit, hint)
				if err != nil || tr != wantTrunc || !bytes.Equal(got, want) {
					t.Fatalf("readCapped(%d bytes, limit %d, hint %d) = %d bytes, %v, %v; want %d bytes, %v", n, limit, hint, len(got), tr, err, len(want), wantTrunc)
				}
				for i := range got[:cap(got)] {
					got[:cap(got)][i] = 0xAA // dirty it for the next read
				}
				putBuf(got)
			}
		}
	}
}

func TestSizeClass(t *testing.T) {
	for _, c := range []struct {
		n    int
		want int
		ok   bool
	}{{0, 0, true}, {1, 0, true}, {4096, 0, true}, {4097, 1, true}, {8192, 1, true}, {1 << 18, 6, true}, {1<<18 + 1, 0, false}} {
		if got, ok := sizeClass(c.n); got != c.want || ok != c.ok {
			t.Errorf("sizeClass(%d) = %d, %v; want %d, %v", c.n, got, ok, c.want, c.ok)
		}
	}
	// Only buffers getBuf made (a class's exact capacity) enter a pool.
	putBuf(make([]byte, 0, 5000))
	if b := getBuf(5000); cap(b) != 8192 {
		t.Errorf("getBuf(5000) has capacity %d, want 8192", cap(b))
	}
}

func TestDecodeIdentity(t *testing.T) {
	body := []byte("plain")
	for _, enc := range []string{"", "identity", " Identity "} {
		got, tr, err := decode(body, enc, 100, false)
		if err != nil || tr || &got[0] != &body[0] {
			t.Errorf("decode(%q, %q) = %q, %v, %v; want the body itself", body, enc, got, tr, err)
		}
	}
	if got, tr, _ := decode(body, "", 3, false); string(got) != "pla" || !tr {
		t.Errorf("decode(%q, \"\", cap 3) = %q, %v; want \"pla\", true", body, got, tr)
	}
	if _, _, err := decode(body, "gzip,gzip,gzip,gzip,gzip", 100, false); err == nil {
		t.Errorf("decode with five codings: want an error")
	}
}

// FuzzDecode feeds arbitrary bodies and codings to decode: it must not
// panic, must respect the cap, and gzip of the input must round-trip.
// zstd is reached through its seeds: a pooled decoder that failed on one
// input decodes the next.
func FuzzDecode(f *testing.F) {
	f.Add([]byte("hello"), "gzip", int64(100))
	f.Add([]byte("\x1f\x8b\x08\x00"), "x-gzip", int64(10))
	f.Add([]byte("x\x9c\x01\x00\x00\xff\xff"), "deflate", int64(1))
	f.Add([]byte{}, "identity, gzip", int64(0))
	f.Add(zstdRLEFrame(17, 2, 1000, 'a'), "zstd", int64(1500))
	f.Add(zstdRLEFrame(30, 1, 10, 'a'), "zstd", int64(100))
	f.Add([]byte("\x28\xb5\x2f\xfd\x00"), "gzip, zstd", int64(100))
	f.Fuzz(func(t *testing.T, data []byte, encoding string, limit int64) {
		if limit < 0 || limit > 1<<20 {
			limit = 1 << 20
		}
		out, truncated, err := decode(data, encoding, limit, false)
		if int64(len(out)) > limit {
			t.Fatalf("decode(%q, %q, %d) returned %d bytes", data, encoding, limit, len(out))
		}
		if err != nil && (out != nil || truncated) {
			t.Fatalf("decode(%q, %q) = %q, %v, %v; want nil output with an error", data, encoding, out, truncated, err)
		}
		z := gzipBytes(t, data)
		got, truncated, err := decode(z, "gzip", limit, false)
		want := data
		if int64(len(want)) > limit {
			want = want[:limit]
		}
		if err != nil || !bytes.Equal(got, want) || truncated != (int64(len(data)) > limit) {
			t.Fatalf("decode(gzip(%q), cap %d) = %q, %v, %v; want %q", data, limit, got, truncated, err, want)
		}
	})
}

// FuzzMediaType: no panic, lower-case, no parameters, idempotent.
func FuzzMediaType(f *testing.F) {
	for _, s := range []string{"text/html; charset=utf-8", "TEXT/Plain", "", ";", "a/b;c=\"d;e\""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ct string) {
		got := mediaType(ct)
		if strings.Contains(got, ";") || got != strings.TrimSpace(got) {
			t.Fatalf("mediaType(%q) = %q, want no parameters or padding", ct, got)
		}
		if again := mediaType(got); again != got {
			t.Fatalf("mediaType(%q) = %q, want %q (idempotent)", got, again, got)
		}
	})
}

// TestGzipDecodeAllocs: decoding a gzipped page reuses a pooled reader,
// allocating little more than the decoded page; a fresh reader would add
// its inflater's window and tables. A pooled reader that failed on a
// corrupt stream decodes the next one whole.
func TestGzipDecodeAllocs(t *testing.T) {
	page := []byte(strings.Repeat("<p>a page of some size</p>\n", 1500)) // 42 KB
	body := gzipBytes(t, page)
	corrupt := append([]byte(nil), body...)
	corrupt[len(corrupt)/2] ^= 0xff
	if _, _, err := decode(corrupt, "gzip", 1<<20, false); err == nil {
		t.Fatal("decode of a corrupt stream: no error")
	}
	per := decodeAllocs(t, body, "gzip", page)
	if per > 8<<10 && !raceEnabled {
		t.Errorf("%d bytes allocated per decode, want at most 8 KiB", per)
	}
}

// decodeAllocs returns the bytes one decode of body (page under coding)
// allocates, averaged over 100, each decoded page's buffer given back.
func decodeAllocs(t *testing.T, body []byte, coding string, page []byte) uint64 {
	t.Helper()
	const runs = 100
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range runs {
		out, _, err := decode(body, coding, 1<<20, false)
		if err != nil || !bytes.Equal(out, page) {
			t.Fatalf("decode %s: %v", coding, err)
		}
		putBuf(out)
	}
	runtime.ReadMemStats(&after)
	per := (after.TotalAlloc - before.TotalAlloc) / runs
	t.Logf("%d bytes allocated per %s decode of a %d-byte page (%d on the wire)", per, coding, len(page), len(body))
	return per
}
