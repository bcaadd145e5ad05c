package ipcap

import (
	"context"
	"testing"
	"time"
)

type fixedMembership struct {
	fence, since time.Time
	alive        map[string]bool
}

func (f fixedMembership) Fence() time.Time { return f.fence }
func (f fixedMembership) Since() time.Time { return f.since }
func (f fixedMembership) Alive(_ context.Context, m string) (bool, error) {
	return f.alive[m], nil
}

// TestLaterBindsOnce checks that a gate whose membership is not bound yet
// counts as fenced and frees nobody's slots, and answers from the
// membership once bound.
func TestLaterBindsOnce(t *testing.T) {
	var l Later
	var o Options
	o.Use(&l)
	if f := o.Fence(); !f.IsZero() {
		t.Errorf("fence before Bind = %v, want the zero time (fenced)", f)
	}
	if s := o.Since(); !s.IsZero() {
		t.Errorf("since before Bind = %v, want the zero time", s)
	}
	if alive, err := o.Alive(context.Background(), "n2"); err == nil || alive {
		t.Errorf("Alive before Bind = %v, %v; want an error", alive, err)
	}
	now := time.Date(2026, 12, 3, 5, 0, 0, 0, time.UTC)
	l.Bind(fixedMembership{fence: now.Add(time.Second), since: now.Add(-time.Minute), alive: map[string]bool{"n1": true}})
	if f := o.Fence(); !f.Equal(now.Add(time.Second)) {
		t.Errorf("fence = %v, want %v", f, now.Add(time.Second))
	}
	if s := o.Since(); !s.Equal(now.Add(-time.Minute)) {
		t.Errorf("since = %v, want %v", s, now.Add(-time.Minute))
	}
	for member, want := range map[string]bool{"n1": true, "n2": false} {
		if alive, err := o.Alive(context.Background(), member); err != nil || alive != want {
			t.Errorf("Alive(%s) = %v, %v; want %v", member, alive, err, want)
		}
	}
}
