package owner

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/trawl-crawler/trawl/cluster/assign"
	"github.com/trawl-crawler/trawl/cluster/jsserver"
	"github.com/trawl-crawler/trawl/internal/testkit/jstest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// world is what every member's handler serves, checked for overlap: a
// partition served by two members at once is the failure ownership exists
// to prevent.
type world struct {
	t         *testing.T
	mu        sync.Mutex
	serving   map[int]string
	fences    map[string]func() time.Time // each member's Runner.Fence
	takeovers map[string]int
	releases  int
	block     map[string]chan struct{} // a member's Serve waits for its channel to close
	waiting   map[string]int           // Serves waiting on block, by member
}

type handler struct {
	w    *world
	name string
}

func (h handler) Serve(_ context.Context, a Action) error {
	p, takeover := a.Partition, a.Takeover
	h.w.mu.Lock()
	block := h.w.block[h.name]
	h.w.mu.Unlock()
	if block != nil {
		h.w.mu.Lock()
		if h.w.waiting == nil {
			h.w.waiting = map[string]int{}
		}
		h.w.waiting[h.name]++
		h.w.mu.Unlock()
		<-block
	}
	h.w.mu.Lock()
	defer h.w.mu.Unlock()
	// A member past its fence starts no fetch (the node's lease gate,
	// node.SetFence), so its serving until it drops is no overlap.
	now := time.Now()
	if o := h.w.serving[p]; o != "" && o != h.name && now.Before(h.w.fences[o]()) {
		if now.Before(h.w.fences[h.name]()) {
			h.w.t.Errorf("%s serves partition %d while %s still does", h.name, p, o)
		}
		// Past its own fence (a round that outlived its membership):
		// it fetches nothing, and drops p at its next step.
		return nil
	}
	h.w.serving[p] = h.name
	if takeover {
		h.w.takeovers[h.name]++
	}
	return nil
}

func (h handler) Release(_ context.Context, p int) error {
	h.w.mu.Lock()
	defer h.w.mu.Unlock()
	if h.w.serving[p] == h.name {
		delete(h.w.serving, p)
	}
	h.w.releases++
	return nil
}

func (h handler) Drop(p int) {
	h.w.mu.Lock()
	defer h.w.mu.Unlock()
	if h.w.serving[p] == h.name {
		delete(h.w.serving, p)
	}
}

// died forgets what a killed member served: a dead process fetches nothing.
func (w *world) died(name string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for p, o := range w.serving {
		if o == name {
			delete(w.serving, p)
		}
	}
}

type member struct {
	name   string
	nc     *nats.Conn
	r      *Runner
	cancel context.CancelFunc
	done   chan error
}

const testPartitions = 64

func startMember(t *testing.T, w *world, s *jsserver.Server, name string, tune ...func(*Options)) *member {
	t.Helper()
	nc, err := s.Connect()
	if err != nil {
		t.Fatal(err)
	}
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var r *Runner
	for {
		o := Options{
			Name: name, Partitions: testPartitions, Heartbeat: 100 * time.Millisecond, MemberTTL: 2 * time.Second,
			Replicas: s.Replicas(), Info: []byte(fmt.Sprintf(`{"api":"%s"}`, name)),
		}
		for _, f := range tune {
			f(&o)
		}
		r, err = New(ctx, js, handler{w, name}, o)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("%s: %v", name, err)
		}
		time.Sleep(100 * time.Millisecond) // buckets' Raft groups electing
	}
	w.mu.Lock()
	w.fences[name] = r.Fence
	w.mu.Unlock()
	rctx, rcancel := context.WithCancel(context.Background())
	m := &member{name: name, nc: nc, r: r, cancel: rcancel, done: make(chan error, 1)}
	go func() { m.done <- r.Run(rctx) }()
	return m
}

func (m *member) stop() {
	m.cancel()
	<-m.done
	m.nc.Close()
}

// settled waits until the owners bucket, as every live member's runner
// sees it, and what the handlers serve both match the table over names.
func settled(t *testing.T, w *world, live []*member, within time.Duration) {
	t.Helper()
	var names []string
	for _, m := range live {
		names = append(names, m.name)
	}
	target := assign.Of(testPartitions, names)
	deadline := time.Now().Add(within)
	for {
		bad := ""
		w.mu.Lock()
		for p, want := range target {
			if w.serving[p] != want {
				bad = fmt.Sprintf("partition %d served by %q, table %q", p, w.serving[p], want)
				break
			}
		}
		if len(w.serving) != testPartitions && bad == "" {
			bad = fmt.Sprintf("%d partitions served", len(w.serving))
		}
		w.mu.Unlock()
		if bad == "" {
			for _, m := range live {
				held := m.r.Held()
				mine := 0
				for _, o := range target {
					if o == m.name {
						mine++
					}
				}
				if len(held) != mine {
					bad = fmt.Sprintf("%s holds %d partitions, table %d", m.name, len(held), mine)
				}
			}
		}
		if bad == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not settled after %v: %s", within, bad)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestFleetOwnership runs runners on a 4-server embedded JetStream cluster
// (so that one server can die with a quorum left): three members settle;
// a 4th joins and the move is what the table moves, without takeovers; a
// member is killed and its partitions are taken over once its membership
// expires; a member whose connection is cut is fenced (drops everything)
// before anyone takes over; a member leaves cleanly. No partition is ever
// served by two members at once (the handlers check).
func TestFleetOwnership(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a cluster of four through joins, kills and fences; the full suite runs it")
	}
	servers := jstest.Cluster(t, 4, 4)
	w := &world{t: t, serving: map[int]string{}, fences: map[string]func() time.Time{}, takeovers: map[string]int{}}
	var live []*member
	defer func() {
		for _, m := range live {
			m.stop()
		}
	}()
	for i := 0; i < 3; i++ {
		live = append(live, startMember(t, w, servers[i], fmt.Sprintf("node-%d", i+1)))
	}
	settled(t, w, live, 90*time.Second)

	before := assign.Of(testPartitions, []string{"node-1", "node-2", "node-3"})
	w.mu.Lock()
	w.releases = 0 // the first members handed partitions on as the others started
	w.mu.Unlock()
	live = append(live, startMember(t, w, servers[3], "node-4"))
	settled(t, w, live, 90*time.Second)
	after := assign.Of(testPartitions, []string{"node-1", "node-2", "node-3", "node-4"})
	if w.releases != assign.Moved(before, after) {
		t.Errorf("the join released %d partitions, the table moved %d", w.releases, assign.Moved(before, after))
	}
	t.Logf("4th member joined 3: %d of %d partitions moved", w.releases, testPartitions)
	for n, k := range w.takeovers {
		t.Errorf("%s took %d partitions over from a dead owner, with none dead", n, k)
	}

	// Kill node-2: no release, no leave; its handler's state dies with it.
	killed := live[1]
	killed.stop()
	w.died(killed.name)
	live = append(live[:1], live[2:]...)
	t0 := time.Now()
	settled(t, w, live, 90*time.Second)
	t.Logf("node-2 killed: its partitions taken over in %v", time.Since(t0).Round(10*time.Millisecond))
	total := 0
	for _, k := range w.takeovers {
		total += k
	}
	if want := assign.Of(testPartitions, []string{"node-1", "node-2", "node-3", "node-4"}); total != countOf(want, "node-2") {
		t.Errorf("%d takeovers after node-2 died owning %d", total, countOf(want, "node-2"))
	}

	// Cut node-3's connection: its runner keeps going but cannot renew; it
	// must drop its partitions before its membership expires and others
	// take them (the handlers would report an overlap).
	cut := live[1]
	cut.nc.Close()
	rest := []*member{live[0], live[2]}
	settled(t, w, rest, 90*time.Second)
	if h := cut.r.Held(); len(h) != 0 {
		t.Errorf("cut-off node-3 still holds %v", h)
	}
	cut.stop()
	live = rest

	// node-4 leaves cleanly: node-1 takes everything, no takeover.
	takeoversBefore := 0
	for _, k := range w.takeovers {
		takeoversBefore += k
	}
	leaver := live[1]
	leaver.cancel()
	<-leaver.done
	lctx, lcancel := context.WithTimeout(context.Background(), 30*time.Second)
	if err := leaver.r.Leave(lctx); err != nil {
		t.Fatal(err)
	}
	lcancel()
	leaver.nc.Close()
	live = live[:1]
	settled(t, w, live, 90*time.Second)
	takeoversAfter := 0
	for _, k := range w.takeovers {
		takeoversAfter += k
	}
	if takeoversAfter != takeoversBefore {
		t.Errorf("a clean leave caused %d takeovers", takeoversAfter-takeoversBefore)
	}
	// The last member leaves: no one stays, so it releases nothing (a
	// checkpoint for no taker), keeps its claims for its return, and
	// leaves at once.
	w.mu.Lock()
	releasesBefore := w.releases
	w.mu.Unlock()
	defer func(last *member) {
		lctx, lcancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer lcancel()
		last.cancel()
		<-last.done
		if err := last.r.Leave(lctx); err != nil {
			t.Errorf("the last member's leave: %v", err)
		}
		last.nc.Close()
		mine := 0
		for _, c := range last.r.claims {
			if c.Owner == last.name {
				mine++
			}
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		if mine != testPartitions || w.releases != releasesBefore || len(last.r.Held()) != 0 {
			t.Errorf("the last member left with %d claims (want %d), %d releases (want none), serving %v (want nothing)",
				mine, testPartitions, w.releases-releasesBefore, last.r.Held())
		}
	}(live[0])
	leaverLast := live[0]
	live = nil // stopped by the leave above, not by stop

	// Members is the last round's listing: the leaver's entry may still
	// be in it for a round after its partitions settled.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		ms := leaverLast.r.Members()
		if len(ms) == 1 && ms[0].Name == "node-1" && len(ms[0].Owns) == testPartitions && string(ms[0].Info) == `{"api":"node-1"}` {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("Members() = %+v, want node-1 alone owning all %d", ms, testPartitions)
			break
		}
	}
}

func countOf(t assign.Table, m string) int {
	n := 0
	for _, o := range t {
		if o == m {
			n++
		}
	}
	return n
}

// TestMembersAdoptTheFleetTTL: a member whose MemberTTL differs from the
// one the fleet's members bucket was made with fences by the bucket's (its
// entry expires by that one), and one whose heartbeat is too slow for the
// bucket's TTL is refused with the reason.
func TestMembersAdoptTheFleetTTL(t *testing.T) {
	s := jstest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	nc, err := s.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	w := &world{t: t, serving: map[int]string{}, fences: map[string]func() time.Time{}, takeovers: map[string]int{}}
	first, err := New(ctx, js, handler{w, "a"}, Options{Name: "a", Partitions: 4, Heartbeat: 100 * time.Millisecond, MemberTTL: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	second, err := New(ctx, js, handler{w, "b"}, Options{Name: "b", Partitions: 4, Heartbeat: 100 * time.Millisecond, MemberTTL: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if first.opts.MemberTTL != 2*time.Second || second.opts.MemberTTL != 2*time.Second {
		t.Errorf("MemberTTL: first %v, second %v; want the bucket's 2s for both", first.opts.MemberTTL, second.opts.MemberTTL)
	}
	_, err = New(ctx, js, handler{w, "c"}, Options{Name: "c", Partitions: 4, Heartbeat: time.Second, MemberTTL: 8 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "under 4 heartbeats") {
		t.Errorf("a member with 1s heartbeats on a 2s fleet: %v, want refused", err)
	}
}

// TestLapseLatchesTheFence: a renewal that starts after the fence has
// passed (the member was cut off long enough to be taken over) does not
// move the fence on by itself: it stays passed until the loop has dropped
// every partition, and only then does the renewal count.
func TestLapseLatchesTheFence(t *testing.T) {
	w := &world{t: t, serving: map[int]string{3: "a", 5: "a"}, fences: map[string]func() time.Time{}, takeovers: map[string]int{}}
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	r := &Runner{h: handler{w, "a"}, held: map[int]bool{3: true, 5: true}, absent: map[string]time.Time{}}
	r.opts = Options{Name: "a", Partitions: 8, Heartbeat: 100 * time.Millisecond, MemberTTL: 2 * time.Second, Now: func() time.Time { return now }}
	r.opts.ensureDefaults()

	r.renewed(now)
	if want := now.Add(1800 * time.Millisecond); !r.Fence().Equal(want) {
		t.Fatalf("Fence() = %v, want %v", r.Fence(), want)
	}
	r.renewed(now.Add(time.Second)) // in time
	if r.lapsed.Load() {
		t.Fatal("a renewal before the fence lapsed")
	}
	now = now.Add(10 * time.Second)
	r.renewed(now) // long after the fence: others may hold its partitions
	if f := r.Fence(); !now.After(f) {
		t.Fatalf("after a lapse Fence() = %v, want passed at %v", f, now)
	}
	if !r.fenced() {
		t.Fatal("fenced() = false after a lapse")
	}
	if h := r.Held(); len(h) != 0 || len(w.serving) != 0 {
		t.Errorf("after the lapse: held %v, serving %v; want nothing", h, w.serving)
	}
	if want := now.Add(1800 * time.Millisecond); !r.Fence().Equal(want) {
		t.Errorf("once everything is dropped Fence() = %v, want %v", r.Fence(), want)
	}
}

// TestStuckRoundGivesWay: a member whose round is stuck in its handler
// (here a Serve that does not return) stops renewing its membership after
// StuckAfter, though its heartbeat goroutine is healthy: its fence passes
// and the other member takes the whole table over. When the round ends,
// the stuck member drops what it served, joins again and gets its share.
func TestStuckRoundGivesWay(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: waits out a stuck round; the full suite runs it")
	}
	srv := jstest.Start(t, func(o *jsserver.Options) { o.Name = "s" })
	unblock := make(chan struct{})
	var once sync.Once
	release := func() { once.Do(func() { close(unblock) }) }
	w := &world{t: t, serving: map[int]string{}, fences: map[string]func() time.Time{}, takeovers: map[string]int{},
		block: map[string]chan struct{}{"a": unblock}}
	stuck := func(o *Options) {
		o.StuckAfter = 2 * time.Second
		o.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	a := startMember(t, w, srv, "a", stuck)
	defer a.stop()
	defer release() // before a.stop (deferred calls run last first): its Run waits for the Serve
	b := startMember(t, w, srv, "b", stuck)
	defer b.stop()

	// a's first Serve never returns: b ends up serving everything.
	settled(t, w, []*member{b}, 30*time.Second)
	if f := a.r.Fence(); f.IsZero() || time.Now().Before(f) {
		t.Errorf("the stuck member's fence is %v, want passed", f)
	}
	if w.takeovers["b"] == 0 {
		t.Error("b took nothing over from the stuck member")
	}

	release()
	settled(t, w, []*member{a, b}, 30*time.Second)
}

// TestStartWaitsForTheFleet: members of a fleet starting afresh, told how
// many it has (Expect), move nothing until that many are listed, so the
// first up takes none of the partitions of those a second behind and no
// partition is handed on at start; a member that waits for more than ever
// come moves once MemberTTL has passed.
func TestStartWaitsForTheFleet(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a cluster of three")
	}
	servers := jstest.Cluster(t, 3, 3)
	w := &world{t: t, serving: map[int]string{}, fences: map[string]func() time.Time{}, takeovers: map[string]int{}}
	expect := func(o *Options) { o.Expect = 3 }
	var live []*member
	defer func() {
		for _, m := range live {
			m.stop()
		}
	}()
	live = append(live, startMember(t, w, servers[0], "node-1", expect))
	time.Sleep(time.Second) // ten heartbeats alone
	w.mu.Lock()
	early := len(w.serving)
	w.mu.Unlock()
	if early != 0 {
		t.Errorf("the first member served %d partitions before the others were listed", early)
	}
	for i := 1; i < 3; i++ {
		live = append(live, startMember(t, w, servers[i], fmt.Sprintf("node-%d", i+1), expect))
	}
	settled(t, w, live, 90*time.Second)
	if w.releases != 0 {
		t.Errorf("%d partitions handed on at start, want none", w.releases)
	}

	alone := jstest.Start(t)
	w2 := &world{t: t, serving: map[int]string{}, fences: map[string]func() time.Time{}, takeovers: map[string]int{}}
	m := startMember(t, w2, alone, "solo", func(o *Options) { o.Expect = 2 })
	defer m.stop()
	settled(t, w2, []*member{m}, 30*time.Second) // after MemberTTL (2 s)
}

// TestLeaveWhileARoundIsUnderWay: a member told to stop while its round
// is in a step that outlasts its membership's TTL (fleet: a restore of a
// checkpoint reads on a context of its own, up to 15 s; seen under load
// on a member stopped with SIGTERM) stays a member until that step has
// ended and its Leave has handed its partitions on: none of them is taken
// over as a dead member's, which would lose what it did since its last
// checkpoint and have two members fetch them.
func TestLeaveWhileARoundIsUnderWay(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: waits out a round longer than the TTL")
	}
	srv := jstest.Start(t, func(o *jsserver.Options) { o.Name = "s" })
	unblock := make(chan struct{})
	var once sync.Once
	release := func() { once.Do(func() { close(unblock) }) }
	defer release()
	w := &world{t: t, serving: map[int]string{}, fences: map[string]func() time.Time{}, takeovers: map[string]int{},
		block: map[string]chan struct{}{"a": unblock}}
	const ttl = time.Second
	short := func(o *Options) { o.MemberTTL = ttl }
	b := startMember(t, w, srv, "b", short)
	defer b.stop()
	settled(t, w, []*member{b}, 30*time.Second)

	// a joins; its round takes a partition and stays in its Serve.
	a := startMember(t, w, srv, "a", short)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		w.mu.Lock()
		n := w.waiting["a"]
		w.mu.Unlock()
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a never took a partition")
		}
	}
	// Told to stop (SIGTERM) while the Serve runs on, for three TTLs: a
	// member silent that long is found gone and taken over.
	a.cancel()
	time.Sleep(3 * ttl)
	release()
	<-a.done
	lctx, lcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer lcancel()
	if err := a.r.Leave(lctx); err != nil {
		t.Fatal(err)
	}
	a.nc.Close()
	settled(t, w, []*member{b}, 30*time.Second)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.takeovers["b"] != 0 {
		t.Errorf("b took %d partitions over from a member that was leaving", w.takeovers["b"])
	}
}
