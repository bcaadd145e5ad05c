package jsserver

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestLogQuiet: a peer's route refused every second for five minutes is
// logged once, then once a minute with the count of the repeats; another
// error is logged at once; the banner goes to debug, leadership to info.
func TestLogQuiet(t *testing.T) {
	var buf bytes.Buffer
	now := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	a := newLogAdapter(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})), func() time.Time { return now })
	for i := 1; i <= 300; i++ {
		a.Errorf("Error trying to connect to route (attempt %d): dial tcp 127.0.0.1:6222: connect: connection refused", i)
		if i == 30 {
			a.Errorf("Error trying to connect to route (attempt %d): dial tcp 127.0.0.1:6223: connect: connection refused", 1)
		}
		now = now.Add(time.Second)
	}
	a.Noticef("Starting nats-server")
	a.Noticef("  Version:  %s", "2.15.2")
	a.Noticef("JetStream cluster new metadata leader: %s/%s", "n2", "trawl")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	var refused6222, refused6223, repeats int
	for _, l := range lines {
		switch {
		case strings.Contains(l, "6222"):
			refused6222++
			if strings.Contains(l, "repeats=") {
				var n int
				if _, err := fmt.Sscanf(l[strings.Index(l, "repeats="):], "repeats=%d", &n); err == nil {
					repeats += n
				}
			}
			if strings.Contains(l, "attempt") && strings.Contains(l, "repeats=") {
				t.Errorf("a repeat's line names an attempt: %s", l)
			}
		case strings.Contains(l, "6223"):
			refused6223++
		}
	}
	// 300 s: the first at 0 s, then one a minute (at 60, 120, 180, 240 s)
	// counting the 59 of the minute before; the last minute's are still
	// to be told.
	if refused6222 != 5 || repeats != 4*59 {
		t.Errorf("6222 refused 300 times in 5 min: %d lines, %d repeats counted; want 5 lines and %d repeats\n%s", refused6222, repeats, 4*59, buf.String())
	}
	if refused6223 != 1 {
		t.Errorf("another peer's error: %d lines, want 1", refused6223)
	}
	if strings.Contains(buf.String(), "Starting nats-server") || strings.Contains(buf.String(), "Version") {
		t.Errorf("the banner at info:\n%s", buf.String())
	}
	if !strings.Contains(buf.String(), "new metadata leader: n2/trawl") {
		t.Errorf("a change of leader not at info:\n%s", buf.String())
	}
}
