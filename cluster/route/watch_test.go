package route

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// TestWatchStall checks the Follow watchdog: a message in the stream that
// stays unfolded for a reading ends the follow with ErrStalled; a
// consumer that keeps up, a subject with nothing new and readings that
// fail do not.
func TestWatchStall(t *testing.T) {
	const every = 10 * time.Millisecond
	errRead := errors.New("no response from stream")
	for _, tc := range []struct {
		name    string
		folded  uint64
		last    func(folded *atomic.Uint64) (uint64, error)
		stalled bool
	}{
		{name: "message waiting", folded: 3, last: func(*atomic.Uint64) (uint64, error) { return 5, nil }, stalled: true},
		{name: "from the start", folded: 0, last: func(*atomic.Uint64) (uint64, error) { return 209, nil }, stalled: true},
		{name: "caught up", folded: 5, last: func(*atomic.Uint64) (uint64, error) { return 5, nil }},
		{name: "empty subject", folded: 0, last: func(*atomic.Uint64) (uint64, error) { return 0, nil }},
		{name: "reading fails", folded: 3, last: func(*atomic.Uint64) (uint64, error) { return 0, errRead }},
		// A new message at each reading, folded at once after it.
		{name: "delivering", folded: 3, last: func(f *atomic.Uint64) (uint64, error) { return f.Add(1), nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var folded atomic.Uint64
			folded.Store(tc.folded)
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			done := make(chan struct{})
			go func() {
				defer close(done)
				watch(ctx, cancel, 27, &folded, every, func(context.Context) (uint64, error) { return tc.last(&folded) })
			}()
			select {
			case <-done:
			case <-time.After(40 * every):
				cancel(nil)
				<-done
			}
			err := context.Cause(ctx)
			if got := errors.Is(err, ErrStalled); got != tc.stalled {
				t.Fatalf("stalled = %v (%v), want %v", got, err, tc.stalled)
			}
		})
	}
}
