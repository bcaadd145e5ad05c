package crawl

import (
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/robots"
)

func TestRobotsCodec(t *testing.T) {
	in := robots.FetchResult{Status: 200, Body: []byte("User-agent: *\nDisallow: /x\n"), At: time.Unix(1_800_000_000, 7).UTC()}
	out, err := decodeRobots(encodeRobots(in))
	if err != nil || out.Status != in.Status || string(out.Body) != string(in.Body) || !out.At.Equal(in.At) {
		t.Errorf("round trip = %+v, %v; want %+v", out, err, in)
	}
	for _, bad := range [][]byte{nil, {9}, {1}, {1, 0xff, 0xff, 0xff}, {1, 200, 1}} {
		if _, err := decodeRobots(bad); err == nil {
			t.Errorf("decodeRobots(%x) = nil error", bad)
		}
	}
}

func TestRobotsAttemptRecords(t *testing.T) {
	at := time.Unix(1_800_000_000, 5).UTC()
	for _, tc := range []struct {
		name    string
		v       []byte
		pending bool
	}{
		{"failure", encodeRobotsFailures(3, at), false},
		{"pending", encodeRobotsPending(3, at), true},
	} {
		n, gotAt, pending, ok := decodeRobotsAttempts(tc.v)
		if !ok || n != 3 || !gotAt.Equal(at) || pending != tc.pending {
			t.Errorf("%s: decodeRobotsAttempts = %d, %v, %v, %v; want 3, %v, %v, true", tc.name, n, gotAt, pending, ok, at, tc.pending)
		}
		if _, err := decodeRobots(tc.v); err == nil {
			t.Errorf("%s: decodeRobots accepted it", tc.name)
		}
		for i := range len(tc.v) {
			if _, _, _, ok := decodeRobotsAttempts(tc.v[:i]); ok {
				t.Errorf("%s: decodeRobotsAttempts accepted it cut to %d bytes", tc.name, i)
			}
		}
	}
	if _, _, _, ok := decodeRobotsAttempts(encodeRobots(robots.FetchResult{Status: 200})); ok {
		t.Error("decodeRobotsAttempts accepted a robots copy")
	}
}

// FuzzRobotsRecords: any bytes under an 'r' key decode as a copy, an
// attempt record or an error, never a panic, and what decodes encodes back
// to the same value.
func FuzzRobotsRecords(f *testing.F) {
	f.Add(encodeRobots(robots.FetchResult{Status: 200, Body: []byte("User-agent: *\n"), At: time.Unix(1e9, 0)}))
	f.Add(encodeRobotsFailures(2, time.Unix(1e9, 0)))
	f.Add(encodeRobotsPending(0, time.Unix(1e9, 0)))
	f.Fuzz(func(t *testing.T, v []byte) {
		if r, err := decodeRobots(v); err == nil {
			again, err := decodeRobots(encodeRobots(r))
			if err != nil || again.Status != r.Status || !again.At.Equal(r.At) || string(again.Body) != string(r.Body) {
				t.Fatalf("robots copy %x does not round-trip: %+v", v, r)
			}
		}
		if n, at, pending, ok := decodeRobotsAttempts(v); ok {
			enc := encodeRobotsFailures(n, at)
			if pending {
				enc = encodeRobotsPending(n, at)
			}
			n2, at2, pending2, ok2 := decodeRobotsAttempts(enc)
			if !ok2 || n2 != n || !at2.Equal(at) || pending2 != pending {
				t.Fatalf("attempt record %x does not round-trip", v)
			}
		}
	})
}
