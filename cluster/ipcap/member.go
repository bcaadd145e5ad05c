package ipcap

import (
	"context"
	"errors"
	"sync/atomic"
	"time"
)

// Membership is what a Gate asks of this member's place in the fleet
// (cluster/fleet's Fleet provides it).
type Membership interface {
	// Fence is the time after which this member must start no fetch.
	Fence() time.Time
	// Since is when this member's current unbroken membership began.
	Since() time.Time
	// Alive reports whether member is in the fleet now.
	Alive(ctx context.Context, member string) (bool, error)
}

// errNotJoined is Alive's answer before the membership is bound.
var errNotJoined = errors.New("ipcap: not in the fleet yet")

// Later is a Membership bound after the Gate opens: the gate must be set
// on the node before the node serves a partition, which is before the
// fleet's membership exists. Until Bind, the member counts as fenced
// (zero Fence: nothing starts) and Alive answers an error (no slot is
// freed on its word). The zero Later is ready for use.
type Later struct{ m atomic.Pointer[Membership] }

// Bind sets the membership the gate answers from.
func (l *Later) Bind(m Membership) { l.m.Store(&m) }

// Fence is the bound membership's fence, the zero time before Bind.
func (l *Later) Fence() time.Time {
	if m := l.m.Load(); m != nil {
		return (*m).Fence()
	}
	return time.Time{}
}

// Since is the bound membership's start, the zero time before Bind.
func (l *Later) Since() time.Time {
	if m := l.m.Load(); m != nil {
		return (*m).Since()
	}
	return time.Time{}
}

// Alive asks the bound membership; before Bind it answers an error.
func (l *Later) Alive(ctx context.Context, member string) (bool, error) {
	if m := l.m.Load(); m != nil {
		return (*m).Alive(ctx, member)
	}
	return false, errNotJoined
}

// Use sets o's Fence, Since and Alive to m's.
func (o *Options) Use(m Membership) {
	o.Fence, o.Since, o.Alive = m.Fence, m.Since, m.Alive
}
