package fetch

import (
	"bytes"
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
func FuzzDecode(f *testing.F) {
	f.Add([]byte("hello"), "gzip", int64(100))
	f.Add([]byte("\x1f\x8b\x08\x00"), "x-gzip", int64(10))
	f.Add([]byte("x\x9c\x01\x00\x00\xff\xff"), "deflate", int64(1))
	f.Add([]byte{}, "identity, gzip", int64(0))
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
