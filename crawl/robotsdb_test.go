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

func TestRobotsFailureRecord(t *testing.T) {
	v := encodeRobotsFailures(3, time.Unix(1_800_000_000, 0))
	if n, ok := decodeRobotsFailures(v); !ok || n != 3 {
		t.Errorf("decodeRobotsFailures = %d, %v; want 3, true", n, ok)
	}
	if _, err := decodeRobots(v); err == nil {
		t.Error("decodeRobots accepted a failure record")
	}
	if _, ok := decodeRobotsFailures(encodeRobots(robots.FetchResult{Status: 200})); ok {
		t.Error("decodeRobotsFailures accepted a robots copy")
	}
}
