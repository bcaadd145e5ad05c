package jsserver

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"time"
)

// The embedded server's log, as an operator wants it: nats-server's
// start-up banner and routine notices (connections, the JetStream
// settings, the ASCII art) at debug; changes of leadership, which say
// where a fleet's state moved, at info; warnings and errors as they are,
// except that one repeated (a peer's route refused every second while it
// is down) is logged the first time and then at most once a minute, with
// the count of the repeats in between.

// repeatEvery is how often a repeated warning or error is logged again.
const repeatEvery = time.Minute

// maxRepeatKeys bounds the messages whose repeats are tracked; past it
// the table is cleared (a repeat is then logged once more).
const maxRepeatKeys = 1024

// attemptRE matches the attempt counter nats-server puts in a repeated
// message ("(attempt 12)"), which would make every repeat look new.
var attemptRE = regexp.MustCompile(`\s*\(attempt \d+\)`)

// logAdapter hands the server's log lines to a slog.Logger. Safe for
// concurrent use (the server logs from many goroutines).
type logAdapter struct {
	l   *slog.Logger
	now func() time.Time

	mu      sync.Mutex
	repeats map[string]*repeat
}

// repeat is one message's repeats since it was last logged.
type repeat struct {
	logged time.Time
	count  int
}

func newLogAdapter(l *slog.Logger, now func() time.Time) *logAdapter {
	return &logAdapter{l: l, now: now, repeats: make(map[string]*repeat)}
}

func (a *logAdapter) Noticef(f string, v ...any) {
	msg := fmt.Sprintf(f, v...)
	if strings.Contains(msg, "leader") {
		a.l.Info(msg)
		return
	}
	a.l.Debug(msg)
}

func (a *logAdapter) Warnf(f string, v ...any)  { a.limited(slog.LevelWarn, fmt.Sprintf(f, v...)) }
func (a *logAdapter) Errorf(f string, v ...any) { a.limited(slog.LevelError, fmt.Sprintf(f, v...)) }
func (a *logAdapter) Fatalf(f string, v ...any) { a.l.Error(fmt.Sprintf(f, v...)) }
func (a *logAdapter) Debugf(f string, v ...any) { a.l.Debug(fmt.Sprintf(f, v...)) }
func (a *logAdapter) Tracef(f string, v ...any) { a.l.Debug(fmt.Sprintf(f, v...)) }

// limited logs msg at level unless the same message (its attempt counter
// aside) was logged less than repeatEvery ago; then it only counts it.
// The next time it is logged it says how many repeats were not.
func (a *logAdapter) limited(level slog.Level, msg string) {
	key := attemptRE.ReplaceAllString(msg, "")
	now := a.now()
	a.mu.Lock()
	r := a.repeats[key]
	if r != nil && now.Sub(r.logged) < repeatEvery {
		r.count++
		a.mu.Unlock()
		return
	}
	if r == nil {
		if len(a.repeats) >= maxRepeatKeys {
			clear(a.repeats)
		}
		r = &repeat{}
		a.repeats[key] = r
	}
	n := r.count
	r.logged, r.count = now, 0
	a.mu.Unlock()
	if n > 0 {
		a.l.Log(context.Background(), level, key, "repeats", n, "since", repeatEvery)
		return
	}
	a.l.Log(context.Background(), level, msg)
}
