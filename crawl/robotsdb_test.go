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
