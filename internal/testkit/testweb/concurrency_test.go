package testweb

import (
	"strings"
	"testing"
	"time"
)

// TestMaxConcurrencyNamesThePeak: the most requests in flight at once, and
// which they were when that count was first reached (a problem's message
// lists them); ends sort before starts at one instant, and a request with
// no end is in flight to the end of the log.
func TestMaxConcurrencyNamesThePeak(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	req := func(path string, start, end int) Request {
		q := Request{Method: "GET", Host: "a.test", Path: path, Start: at(start)}
		if end >= 0 {
			q.End = at(end)
		}
		return q
	}
	for _, tc := range []struct {
		name string
		reqs []Request
		most int
		peak string // paths in flight at the peak, by start
	}{
		{"none", nil, 0, ""},
		{"one after another, touching", []Request{req("/a", 0, 10), req("/b", 10, 20), req("/c", 20, 30)}, 1, "/a"},
		{"two overlap, then three", []Request{req("/a", 0, 10), req("/b", 5, 50), req("/c", 20, 60), req("/d", 30, 40)}, 3, "/b /c /d"},
		{"one never ended", []Request{req("/a", 0, -1), req("/b", 100, 110), req("/c", 200, 210)}, 2, "/a /b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			most, peak := maxConcurrency(tc.reqs)
			var paths []string
			for _, q := range peak {
				paths = append(paths, q.Path)
			}
			if most != tc.most || strings.Join(paths, " ") != tc.peak {
				t.Errorf("maxConcurrency = %d, peak %v; want %d, %q", most, paths, tc.most, tc.peak)
			}
			if msg := inFlight(peak); strings.Count(msg, "\n") != len(peak) {
				t.Errorf("inFlight gives %d lines for %d requests:%s", strings.Count(msg, "\n"), len(peak), msg)
			}
		})
	}
}
