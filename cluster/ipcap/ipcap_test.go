package ipcap_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/goleak"

	"github.com/trawl-crawler/trawl/cluster/ipcap"
	"github.com/trawl-crawler/trawl/cluster/jsserver"
	"github.com/trawl-crawler/trawl/internal/testkit/jstest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/nats-io/nats.go/jetstream.(*jetStream).resetPendingAcksOnReconnect"))
}

// member is one fleet member's gate on a shared server.
type member struct {
	gate   *ipcap.Gate
	cancel context.CancelFunc
	done   chan struct{}
}

func join(t *testing.T, s *jsserver.Server, name string, o ipcap.Options) *member {
	t.Helper()
	nc, err := s.Connect()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	o.Name, o.JS = name, js
	g, err := ipcap.Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &member{gate: g, cancel: cancel, done: make(chan struct{})}
	go func() { defer close(m.done); g.Run(ctx) }()
	t.Cleanup(m.stop)
	return m
}

func (m *member) stop() {
	m.cancel()
	<-m.done
	m.gate.Close(context.Background())
}

// TestCapOverMembers: three members fetch one address from 6 workers each
// at once; never more than Slots fetches run together, all of them get
// through, and every slot is given back when they stop.
func TestCapOverMembers(t *testing.T) {
	s := jstest.Start(t)
	o := ipcap.Options{Slots: 2, Hold: 5 * time.Second, Idle: 200 * time.Millisecond, Poll: 10 * time.Millisecond}
	members := []*member{join(t, s, "a", o), join(t, s, "b", o), join(t, s, "c", o)}
	var (
		running, peak, done atomic.Int32
		wg                  sync.WaitGroup
	)
	for _, m := range members {
		for range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 5 {
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
					release, err := m.gate.Acquire(ctx, "192.0.2.7")
					cancel()
					if err != nil {
						t.Error(err)
						return
					}
					n := running.Add(1)
					for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
					}
					time.Sleep(5 * time.Millisecond)
					running.Add(-1)
					release()
					done.Add(1)
				}
			}()
		}
	}
	wg.Wait()
	if p := peak.Load(); p > 2 || p < 1 {
		t.Errorf("at most %d fetches at once over the members, want 1 to 2", p)
	}
	if d := done.Load(); d != 3*6*5 {
		t.Errorf("%d fetches done, want %d", d, 3*6*5)
	}
	// Another address is not held up by the first's slots.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	release, err := members[0].gate.Acquire(ctx, "2001:db8::1")
	if err != nil {
		t.Fatal(err)
	}
	release()
	for _, m := range members {
		m.stop()
		if h := m.gate.Held(); h != 0 {
			t.Errorf("a member holds %d slots after Close", h)
		}
	}
	t.Logf("peak %d fetches at once, %d done", peak.Load(), done.Load())
}

// TestDeadMembersSlotExpires: a member that holds both slots and dies
// (no renewal, no release) keeps the others out until its slots' TTL has
// passed, not longer; Acquire gives up with its context meanwhile.
func TestDeadMembersSlotExpires(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out a member TTL: the full suite runs it")
	}
	s := jstest.Start(t)
	o := ipcap.Options{Slots: 2, Hold: time.Second, TTL: 3 * time.Second, Idle: time.Minute, Poll: 20 * time.Millisecond}
	dead := join(t, s, "dead", o)
	for range 2 {
		if _, err := dead.gate.Acquire(context.Background(), "192.0.2.9"); err != nil {
			t.Fatal(err)
		}
	}
	dead.cancel() // dies: its Run stops, and it neither renews nor gives back
	<-dead.done
	took := time.Now()
	live := join(t, s, "live", o)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	_, err := live.gate.Acquire(ctx, "192.0.2.9")
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Acquire while the dead member's slots live: %v, want the context's deadline", err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	release, err := live.gate.Acquire(ctx, "192.0.2.9")
	if err != nil {
		t.Fatal(err)
	}
	release()
	if d := time.Since(took); d < 2*time.Second {
		t.Errorf("the dead member's slot was free after %v, before its TTL", d)
	}
}

// TestStaleSlotNotUsed: a slot whose lease has too little left for a
// fetch (no renewal came) is not used: Acquire takes another or waits.
func TestStaleSlotNotUsed(t *testing.T) {
	s := jstest.Start(t)
	now := time.Now()
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	o := ipcap.Options{Slots: 1, Hold: 10 * time.Second, TTL: time.Minute, Idle: time.Hour, Poll: 10 * time.Millisecond, Now: clock}
	nc, err := s.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	o.Name, o.JS = "m", js
	g, err := ipcap.Open(context.Background(), o) // no Run: no renewal
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close(context.Background())
	release, err := g.Acquire(context.Background(), "192.0.2.1")
	if err != nil {
		t.Fatal(err)
	}
	release()
	mu.Lock()
	now = now.Add(50 * time.Second) // 10 s of lease left: less than Hold + margin
	mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := g.Acquire(ctx, "192.0.2.1"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Acquire on a slot with 10 s left: %v, want to wait (the one slot is stale and still taken)", err)
	}
}

// fleetView is the membership the gates' Alive and Fence read in tests.
type fleetView struct {
	mu    sync.Mutex
	alive map[string]bool
	since map[string]time.Time
}

func newView(names ...string) *fleetView {
	v := &fleetView{alive: map[string]bool{}, since: map[string]time.Time{}}
	for _, n := range names {
		v.set(n, true)
	}
	return v
}

func (v *fleetView) set(name string, on bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if on && !v.alive[name] {
		v.since[name] = time.Now()
	}
	v.alive[name] = on
}

// sinceOf is a member's Since: when it last came (back) into the fleet.
func (v *fleetView) sinceOf(name string) func() time.Time {
	return func() time.Time {
		v.mu.Lock()
		defer v.mu.Unlock()
		return v.since[name]
	}
}

func (v *fleetView) Alive(_ context.Context, name string) (bool, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.alive[name], nil
}

// fence is a member's fence: far ahead while it is alive in v, passed
// once it is not.
func (v *fleetView) fence(name string) func() time.Time {
	return func() time.Time {
		if ok, _ := v.Alive(context.Background(), name); ok {
			return time.Now().Add(time.Hour)
		}
		return time.Unix(0, 1)
	}
}

// TestGoneMembersSlotsFreed: slots held by a member whose membership is
// gone are freed by the others Hold (plus the margin) after they find it
// gone, long before the slots' TTL; a live member's slots are left alone,
// however long the others wait.
func TestGoneMembersSlotsFreed(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: waits out the members' TTL; the full suite runs it")
	}
	s := jstest.Start(t)
	v := newView("dead", "busy", "live")
	opts := func(name string) ipcap.Options {
		return ipcap.Options{Slots: 2, Hold: time.Second, TTL: time.Minute, Idle: time.Hour,
			Poll: 20 * time.Millisecond, Alive: v.Alive, Fence: v.fence(name), Since: v.sinceOf(name)}
	}
	dead, busy := join(t, s, "dead", opts("dead")), join(t, s, "busy", opts("busy"))
	for range 2 {
		if _, err := dead.gate.Acquire(context.Background(), "192.0.2.20"); err != nil {
			t.Fatal(err)
		}
		if _, err := busy.gate.Acquire(context.Background(), "192.0.2.21"); err != nil {
			t.Fatal(err)
		}
	}
	dead.cancel() // dies holding both slots, and its membership lapses
	<-dead.done
	v.set("dead", false)
	found := time.Now()
	live := join(t, s, "live", opts("live"))

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	release, err := live.gate.Acquire(ctx, "192.0.2.20")
	if err != nil {
		t.Fatalf("Acquire on a gone member's address: %v (TTL is a minute; want it freed after Hold)", err)
	}
	release()
	took := time.Since(found)
	if took < time.Second {
		t.Errorf("a gone member's slot was freed %v after it was found gone, before Hold (1 s)", took)
	}
	if f := live.gate.Stats().Freed; f != 1 {
		t.Errorf("Freed = %d, want 1 (one slot was enough)", f)
	}
	// A busy live member's slots stay its own.
	ctx2, cancel2 := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel2()
	if _, err := live.gate.Acquire(ctx2, "192.0.2.21"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Acquire on a live member's full address: %v, want to wait until the deadline", err)
	}
	t.Logf("a gone member's slot freed after %v", took.Round(time.Millisecond))
}

// TestFencedMemberStartsNothing: past its fence a member hands out no
// slot, not even one it holds; back in the fleet, it uses a slot it held
// only once it has renewed it (a new revision: a member that found it gone
// meanwhile would have deleted it at the old one, and now fails to).
func TestFencedMemberStartsNothing(t *testing.T) {
	s := jstest.Start(t)
	v := newView("m")
	o := ipcap.Options{Slots: 1, Hold: time.Second, TTL: 3 * time.Second, Idle: time.Hour,
		Poll: 20 * time.Millisecond, Alive: v.Alive, Fence: v.fence("m"), Since: v.sinceOf("m")}
	m := join(t, s, "m", o)
	kv := bucket(t, s)
	release, err := m.gate.Acquire(context.Background(), "192.0.2.30")
	if err != nil {
		t.Fatal(err)
	}
	release()
	v.set("m", false)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	_, err = m.gate.Acquire(ctx, "192.0.2.30")
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Acquire past the fence: %v, want to wait", err)
	}
	v.set("m", true)
	back := time.Now()
	before := revision(t, kv, "ip.c000021e.0")
	ctx, cancel = context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	release, err = m.gate.Acquire(ctx, "192.0.2.30")
	if err != nil {
		t.Fatalf("Acquire once back in the fleet: %v", err)
	}
	release()
	e, err := kv.Get(context.Background(), "ip.c000021e.0")
	if err != nil {
		t.Fatal(err)
	}
	if e.Revision() == before || !e.Created().After(back.Add(-100*time.Millisecond)) {
		t.Errorf("the slot was used back in the fleet at revision %d (%v), the one it had before (%d): want a renewal first", e.Revision(), e.Created(), before)
	}
	if h := m.gate.Stats().Held; h != 1 {
		t.Errorf("holds %d slots, want the one, renewed", h)
	}
}

// bucket is the slots' bucket, read directly.
func bucket(t *testing.T, s *jsserver.Server) jetstream.KeyValue {
	t.Helper()
	nc, err := s.Connect()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, _ := jetstream.New(nc)
	kv, err := js.KeyValue(context.Background(), ipcap.Bucket)
	if err != nil {
		t.Fatal(err)
	}
	return kv
}

func revision(t *testing.T, kv jetstream.KeyValue, k string) uint64 {
	t.Helper()
	e, err := kv.Get(context.Background(), k)
	if err != nil {
		t.Fatalf("slot %s: %v", k, err)
	}
	return e.Revision()
}

// TestEarlierRunsSlotsFreed: a member restarted under its name frees the
// slots its earlier run left, MemberTTL and Hold (plus the margin) after it
// started, not before.
func TestEarlierRunsSlotsFreed(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: waits out the members' TTL; the full suite runs it")
	}
	s := jstest.Start(t)
	o := ipcap.Options{Slots: 1, Hold: time.Second, TTL: time.Minute, Idle: time.Hour, Poll: 20 * time.Millisecond, MemberTTL: 2 * time.Second}
	first := join(t, s, "m", o)
	if _, err := first.gate.Acquire(context.Background(), "192.0.2.40"); err != nil {
		t.Fatal(err)
	}
	first.cancel() // killed: neither renews nor gives back
	<-first.done
	restarted := time.Now()
	second := join(t, s, "m", o)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	release, err := second.gate.Acquire(ctx, "192.0.2.40")
	if err != nil {
		t.Fatalf("Acquire on the slot of this member's earlier run: %v", err)
	}
	release()
	if d := time.Since(restarted); d < 3*time.Second {
		t.Errorf("the earlier run's slot was freed %v after the restart, before MemberTTL + Hold (3 s)", d)
	}
	if f := second.gate.Stats().Freed; f != 1 {
		t.Errorf("Freed = %d, want 1", f)
	}
}

// TestFleetTTLAdopted: the slots' TTL is the bucket's, made by the first
// member; a member whose fetches fit in it adopts it, one whose Hold does
// not is refused, naming the bucket.
func TestFleetTTLAdopted(t *testing.T) {
	s := jstest.Start(t)
	join(t, s, "first", ipcap.Options{Hold: time.Second, TTL: 3 * time.Second})
	nc, err := s.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	if _, err := ipcap.Open(context.Background(), ipcap.Options{Name: "slow", JS: js, Hold: 10 * time.Second}); err == nil || !strings.Contains(err.Error(), ipcap.Bucket) {
		t.Errorf("Open with a 10 s Hold in a fleet of 3 s slots: %v, want refused naming %s", err, ipcap.Bucket)
	}
	g, err := ipcap.Open(context.Background(), ipcap.Options{Name: "fast", JS: js, Hold: 500 * time.Millisecond})
	if err != nil {
		t.Fatalf("Open with a 0.5 s Hold in a fleet of 3 s slots: %v", err)
	}
	defer g.Close(context.Background())
	st, err := bucket(t, s).Status(context.Background())
	if err != nil || st.TTL() != 3*time.Second {
		t.Errorf("bucket TTL after the others joined: %v (%v), want the first member's 3 s", st.TTL(), err)
	}
}
