package owner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/trawl-crawler/trawl/cluster/jsensure"
	"github.com/trawl-crawler/trawl/cluster/kvread"
)

// Bucket names. Part of the fleet's protocol: every node must agree.
const (
	MembersBucket = "trawl-members"
	OwnersBucket  = "trawl-owners"
)

// Handler is what a node does when the runner moves a partition. The
// runner calls it from one goroutine, never two calls at once.
type Handler interface {
	// Serve starts serving partition a.Partition. a.Kind says how this
	// member came to own it: Take (the key was free: a clean release by
	// its last owner, or never owned; with a.Takeover, its last owner died
	// holding it, so what that owner did since its last checkpoint is lost
	// and its hosts may have a fetch of the dead owner still in flight) or
	// Adopt (the key already named this member: its own state is the
	// latest). An error gives a Take's claim back.
	Serve(ctx context.Context, a Action) error
	// Release stops serving p and saves its state for the next owner; the
	// claim is given up only after it returns nil (an error keeps it, and
	// the runner tries again at its next round).
	Release(ctx context.Context, p int) error
	// Drop stops serving p at once, without saving: another member owns it
	// now, or this member's membership lapsed (fencing).
	Drop(p int)
}

// Options configure a Runner. Name and Partitions are required.
type Options struct {
	// Name is the member's name, unique in the fleet.
	Name string
	// Partitions is the fleet's partition count.
	Partitions int
	// Info is published with the membership (say, the node's API
	// address), JSON. Nil: none.
	Info json.RawMessage
	// Heartbeat is how often the membership is renewed and ownership
	// reconciled. Zero: 1 s.
	Heartbeat time.Duration
	// MemberTTL is how long a membership lives unrenewed; a member silent
	// that long is dead and its partitions are taken over. Zero: 15 s
	// (more than a Raft election of JetStream takes after a server dies,
	// about 6 s on loopback: during one no member can renew). At
	// least 4 heartbeats.
	MemberTTL time.Duration
	// StuckAfter is how long one step of a round (its listing, or one
	// move through the handler) may run before the member stops renewing
	// its membership. A member whose ownership loop is stuck still
	// heartbeats, and would keep its partitions (and the dead members'
	// ones the table gives it) from the others for as long; without
	// renewals its fence passes (its node starts no fetch) and the others
	// take its share over. Once the step ends, the lapse makes it drop
	// everything and join again. Zero: max(10 x MemberTTL, 2 min), well
	// past the longest move (a restore, or a drop waiting out its
	// fetches).
	StuckAfter time.Duration
	// Replicas is the buckets' replication factor (jsserver.Replicas).
	// Zero: 1.
	Replicas int
	// Expect is how many members the fleet is expected to have as it
	// starts (an embedded fleet's servers). In a fleet whose partitions
	// no other member owns yet, a member's first round that moves
	// partitions waits, up to MemberTTL from Run, until that many are
	// listed: otherwise the first members up take the partitions of those
	// a second behind and hand them over at once (churn: a third of the
	// partitions taken, restored and released at every start). Zero: no
	// wait.
	Expect int
	// Now is the clock. Nil: time.Now.
	Now func() time.Time
	// Logger receives moves and failures. Nil: silent.
	Logger *slog.Logger
}

func (o *Options) ensureDefaults() {
	if o.Heartbeat <= 0 {
		o.Heartbeat = time.Second
	}
	if o.MemberTTL <= 0 {
		o.MemberTTL = 15 * time.Second
	}
	if o.StuckAfter <= 0 {
		o.StuckAfter = max(10*o.MemberTTL, 2*time.Minute)
	}
	if o.Replicas <= 0 {
		o.Replicas = 1
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// Validate reports every bad field by name.
func (o *Options) Validate() error {
	var errs []error
	if o.Name == "" || strings.ContainsAny(o.Name, " \t\r\n.*>") {
		errs = append(errs, fmt.Errorf("Name %q: empty, or holds a space, '.', '*' or '>'", o.Name))
	}
	if o.Partitions <= 0 {
		errs = append(errs, fmt.Errorf("Partitions: %d, want at least 1", o.Partitions))
	}
	if o.Heartbeat > 0 && o.MemberTTL > 0 && o.MemberTTL < 4*o.Heartbeat {
		errs = append(errs, fmt.Errorf("MemberTTL %v: under 4 heartbeats of %v", o.MemberTTL, o.Heartbeat))
	}
	if o.StuckAfter > 0 && o.MemberTTL > 0 && o.StuckAfter < o.MemberTTL {
		errs = append(errs, fmt.Errorf("StuckAfter %v: under MemberTTL %v", o.StuckAfter, o.MemberTTL))
	}
	if len(o.Info) > 0 && !json.Valid(o.Info) {
		errs = append(errs, errors.New("Info: not JSON"))
	}
	return errors.Join(errs...)
}

// memberValue is a membership entry's value.
type memberValue struct {
	Leaving bool            `json:"leaving,omitempty"`
	Info    json.RawMessage `json:"info,omitempty"`
}

// MemberInfo is one live member as the runner last listed it.
type MemberInfo struct {
	Name    string          `json:"name"`
	Leaving bool            `json:"leaving,omitempty"`
	Info    json.RawMessage `json:"info,omitempty"`
	Owns    []int           `json:"owns"` // partitions the owners bucket gives it
}

// Runner keeps its member's share of the partitions, through a Handler.
type Runner struct {
	opts    Options
	h       Handler
	js      jetstream.JetStream
	members jetstream.KeyValue
	owners  jetstream.KeyValue

	leaving   atomic.Bool
	lastRenew atomic.Int64 // Unix ns of the start of the last successful renewal
	lapsed    atomic.Bool  // a renewal came after the fence had passed: fenced until the loop has dropped everything
	since     atomic.Int64 // Unix ns of the start of the first renewal of the current unbroken membership
	inStep    atomic.Int64 // Unix ns of the start of the round's step under way; 0 between rounds

	mu      sync.Mutex
	claims  []Claim              // the owners bucket, kept by the watcher
	listed  []MemberInfo         // the last listing of live members
	held    map[int]bool         // partitions the handler serves; the loop's own
	absent  map[string]time.Time // owners named in claims, not members, since when (as this member saw)
	watchOK chan struct{}        // closed once the watcher has delivered the bucket

	started time.Time // when Run began; the loop's own
	settled bool      // Expect members were listed, or MemberTTL passed; the loop's own
}

// New binds the buckets (creating them if absent) and returns a Runner;
// Run starts it.
func New(ctx context.Context, js jetstream.JetStream, h Handler, opts Options) (*Runner, error) {
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("owner: %w", err)
	}
	opts.ensureDefaults()
	// The members bucket is made once, by the first member; its TTL is
	// the one every member's entry lives by, so each member fences by it
	// rather than by its own setting (a member that fenced later than its
	// entry expires could be taken over while it still fetched).
	members, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket: MembersBucket, History: 1, TTL: opts.MemberTTL, Replicas: opts.Replicas,
		Description: "trawl fleet members; an entry expires when its node stops renewing it",
	})
	if errors.Is(err, jetstream.ErrBucketExists) {
		members, err = js.KeyValue(ctx, MembersBucket)
	}
	if err != nil {
		return nil, fmt.Errorf("owner: bucket %s: %w", MembersBucket, err)
	}
	st, err := members.Status(ctx)
	if err != nil {
		return nil, fmt.Errorf("owner: bucket %s: %w", MembersBucket, err)
	}
	if ttl := st.TTL(); ttl != opts.MemberTTL {
		if ttl < 4*opts.Heartbeat {
			return nil, fmt.Errorf("owner: the fleet's members expire after %v (bucket %s), under 4 heartbeats of %v: a shorter heartbeat, or the fleet's TTL", ttl, MembersBucket, opts.Heartbeat)
		}
		opts.Logger.Warn("owner: the fleet's member TTL differs from this member's; using the fleet's", "fleet", ttl, "member", opts.MemberTTL)
		opts.MemberTTL = ttl
	}
	owners, err := jsensure.KeyValue(ctx, js, jetstream.KeyValueConfig{
		Bucket: OwnersBucket, History: 1, Replicas: opts.Replicas,
		Description: "trawl partition owners, changed only by compare-and-set",
	})
	if err != nil {
		return nil, fmt.Errorf("owner: bucket %s: %w", OwnersBucket, err)
	}
	return &Runner{
		opts: opts, h: h, js: js, members: members, owners: owners,
		claims: make([]Claim, opts.Partitions), held: map[int]bool{}, absent: map[string]time.Time{}, watchOK: make(chan struct{}),
	}, nil
}

func partitionKey(p int) string { return "p." + strconv.Itoa(p) }

// Fence returns the time after which this member must start no fetch: its
// membership may expire at its last renewal plus MemberTTL, and a taker
// may claim its partitions then. The margin of two heartbeats covers the
// runner's own round and a fetch being leased. The zero time before the
// first renewal. Once the membership has lapsed (a renewal started after
// the fence had passed), the fence stays passed until the runner's loop
// has dropped every partition: a renewal must not let the node lease
// again from partitions others may have taken meanwhile.
func (r *Runner) Fence() time.Time {
	ns := r.lastRenew.Load()
	if ns == 0 {
		return time.Time{}
	}
	if r.lapsed.Load() {
		return time.Unix(0, 1) // passed
	}
	return time.Unix(0, ns).Add(r.opts.MemberTTL - 2*r.opts.Heartbeat)
}

// renewed records a renewal that started at start.
func (r *Runner) renewed(start time.Time) {
	f := r.Fence()
	if !f.IsZero() && !start.Before(f) {
		r.lapsed.Store(true)
	}
	if f.IsZero() || !start.Before(f) {
		r.since.Store(start.UnixNano())
	}
	r.lastRenew.Store(start.UnixNano())
}

// Since returns when this member's current unbroken membership began: the
// start of its first renewal, or of the first after a lapse (its fence
// had passed, so others may have found it gone). The zero time before the
// first renewal. Anything the member held before Since (cluster/ipcap's
// slots) may have been given away meanwhile.
func (r *Runner) Since() time.Time {
	ns := r.since.Load()
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

// Held returns the partitions the handler serves now, in order.
func (r *Runner) Held() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]int, 0, len(r.held))
	for p := range r.held {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// Members returns the live members as last listed, with the partitions
// the owners bucket gives each, in name order.
func (r *Runner) Members() []MemberInfo {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := slices.Clone(r.listed)
	for i := range out {
		out[i].Owns = []int{}
		for p, c := range r.claims {
			if c.Owner == out[i].Name {
				out[i].Owns = append(out[i].Owns, p)
			}
		}
	}
	return out
}

// Alive reports whether member is in the fleet now, by a direct read of
// its membership (a listing may miss one being renewed): false once its
// entry has expired or it has left. A member's Fence passes before its
// entry can expire, so a member found absent starts no fetch from then on.
func (r *Runner) Alive(ctx context.Context, member string) (bool, error) {
	_, err := r.members.Get(ctx, member)
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("owner: read the membership of %s: %w", member, err)
	}
	return true, nil
}

// Run renews the membership and reconciles ownership every heartbeat
// until ctx ends. It returns ctx's error once the round under way has
// ended, renewing the membership until then; on return the handler still
// serves what it held (Leave releases it).
func (r *Runner) Run(ctx context.Context) error {
	// The membership is renewed until the round under way has returned,
	// not only until ctx ends: a step of a round may outlast ctx (a
	// handler's restore reads on a context of its own, up to its
	// deadline), and a member silent for its TTL meanwhile, its
	// partitions still served, would be taken over as a dead one when it
	// was only stopping (seen under load: a member stopped with SIGTERM
	// while a restore ran for 15 s was taken over while it still served;
	// what it did past the taker's replay is done again). A step stuck
	// past StuckAfter still stops the renewals (heartbeat).
	hctx, stopRenewing := context.WithCancel(context.WithoutCancel(ctx))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer stopRenewing() // first of the deferred: the rounds are over
	wg.Add(2)
	go func() { defer wg.Done(); r.watch(ctx) }()
	go func() { defer wg.Done(); r.heartbeat(hctx) }()
	select {
	case <-r.watchOK:
	case <-ctx.Done():
		return ctx.Err()
	}
	r.started = r.opts.Now()
	t := time.NewTicker(r.opts.Heartbeat)
	defer t.Stop()
	for {
		r.round(ctx)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// Leave releases every partition this member holds, through the
// handler, waiting for each to be taken by no one sooner, then deletes the
// membership. When no other member stays (the whole fleet is stopping:
// two listings in a row find every member leaving), it releases nothing:
// it drops what it serves, keeps its claims for its return (it adopts them
// then, with its store's state) and deletes the membership. Call it after
// Run has returned, with a context bounding the wait.
func (r *Runner) Leave(ctx context.Context) error {
	r.leaving.Store(true)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); r.watch(ctx) }()
	go func() { defer wg.Done(); r.heartbeat(ctx) }()
	defer wg.Wait()
	t := time.NewTicker(r.opts.Heartbeat / 4)
	defer t.Stop()
	alone := 0 // rounds in a row whose listing had no member staying
	for {
		r.round(ctx)
		r.mu.Lock()
		mine := 0
		for _, c := range r.claims {
			if c.Owner == r.opts.Name {
				mine++
			}
		}
		staying := slices.ContainsFunc(r.listed, func(m MemberInfo) bool { return !m.Leaving && m.Name != r.opts.Name })
		r.mu.Unlock()
		if staying {
			alone = 0
		} else {
			alone++
		}
		if alone >= 2 {
			for _, p := range r.Held() {
				r.h.Drop(p)
				r.setHeld(p, false)
			}
			r.opts.Logger.Info("owner: leaving with the whole fleet: partitions kept for this member's return", "member", r.opts.Name, "claims", mine)
		}
		if (mine == 0 || alone >= 2) && len(r.Held()) == 0 {
			cancel()
			wg.Wait()
			dctx, dcancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer dcancel()
			if err := r.members.Delete(dctx, r.opts.Name); err != nil {
				if alone >= 2 {
					// The fleet's last members took JetStream's quorum
					// with them; the entry expires after MemberTTL.
					r.opts.Logger.Info("owner: membership left to expire", "member", r.opts.Name, "err", err)
					return nil
				}
				return fmt.Errorf("owner: leave: delete membership: %w", err)
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("owner: leave: %d partitions still mine: %w", mine, ctx.Err())
		case <-t.C:
		}
	}
}

// heartbeat renews the membership every heartbeat.
func (r *Runner) heartbeat(ctx context.Context) {
	t := time.NewTicker(r.opts.Heartbeat)
	defer t.Stop()
	stuck := false
	for {
		start := r.opts.Now()
		if s := r.inStep.Load(); s != 0 && start.Sub(time.Unix(0, s)) >= r.opts.StuckAfter {
			if !stuck {
				r.opts.Logger.Error("owner: a step of a round has run too long; membership no longer renewed, so the others take this member's partitions over",
					"member", r.opts.Name, "step", start.Sub(time.Unix(0, s)).Round(time.Second), "stuck_after", r.opts.StuckAfter)
			}
			stuck = true
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			continue
		}
		if stuck {
			r.opts.Logger.Warn("owner: the long step has ended; renewing the membership (everything held is dropped first)", "member", r.opts.Name)
			stuck = false
		}
		v, _ := json.Marshal(memberValue{Leaving: r.leaving.Load(), Info: r.opts.Info})
		// A slow put is not a failed one: under load one can take longer
		// than a heartbeat, and the renewal counts from its start anyway.
		pctx, cancel := context.WithTimeout(ctx, r.opts.MemberTTL/3)
		_, err := r.members.Put(pctx, r.opts.Name, v)
		cancel()
		if err == nil {
			r.renewed(start)
		} else if ctx.Err() == nil {
			r.opts.Logger.Warn("owner: membership not renewed", "member", r.opts.Name, "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// resyncEvery is how often the owners watcher is started afresh: a KV
// watcher is an ordered consumer, which was seen to stop delivering after
// the bucket's stream leader died with its server (a test's killed
// member), leaving stale revisions that every compare-and-set then failed
// on. A new watcher delivers every key's current value first.
const resyncEvery = 10 * time.Second

// watch keeps r.claims equal to the owners bucket.
func (r *Runner) watch(ctx context.Context) {
	for ctx.Err() == nil {
		wctx, cancel := context.WithTimeout(ctx, resyncEvery)
		r.watchOnce(wctx)
		cancel()
	}
}

func (r *Runner) watchOnce(ctx context.Context) {
	for ctx.Err() == nil {
		w, err := kvread.Watch(ctx, r.owners, 0)
		if err != nil {
			r.opts.Logger.Warn("owner: watch owners", "err", err)
			select {
			case <-ctx.Done():
			case <-time.After(r.opts.Heartbeat):
			}
			continue
		}
		for e := range w.Updates() {
			if e == nil { // the bucket's current state has been delivered
				r.mu.Lock()
				select {
				case <-r.watchOK:
				default:
					close(r.watchOK)
				}
				r.mu.Unlock()
				continue
			}
			p, err := strconv.Atoi(strings.TrimPrefix(e.Key(), "p."))
			if err != nil || p < 0 || p >= r.opts.Partitions {
				continue
			}
			c := Claim{Revision: e.Revision()}
			if e.Operation() == jetstream.KeyValuePut {
				c.Owner = string(e.Value())
			}
			r.mu.Lock()
			if c.Revision >= r.claims[p].Revision { // refresh may have read a newer one
				r.claims[p] = c
			}
			r.mu.Unlock()
		}
		w.Stop()
	}
}

// listMembers reads the live members.
func (r *Runner) listMembers(ctx context.Context) ([]MemberInfo, error) {
	keys, err := kvread.Keys(ctx, r.js, r.members)
	if err != nil {
		return nil, err
	}
	var out []MemberInfo
	for _, k := range keys {
		e, err := r.members.Get(ctx, k)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue // expired or left since the listing
		}
		if err != nil {
			return nil, err
		}
		var v memberValue
		if err := json.Unmarshal(e.Value(), &v); err != nil {
			r.opts.Logger.Warn("owner: unreadable membership", "member", k, "err", err)
			continue
		}
		out = append(out, MemberInfo{Name: k, Leaving: v.Leaving, Info: v.Info})
	}
	slices.SortFunc(out, func(a, b MemberInfo) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// round does one reconciliation: fence if the membership lapsed, else list
// the members, plan and act.
func (r *Runner) round(ctx context.Context) {
	r.inStep.Store(r.opts.Now().UnixNano())
	defer r.inStep.Store(0)
	if r.fenced() {
		return
	}
	if r.lastRenew.Load() == 0 {
		return // not a member yet
	}
	// A listing asks the stream's leader (kvread.Keys); bounded by more
	// than a short heartbeat, since a member that never lists never sees a
	// member leave.
	lctx, cancel := context.WithTimeout(ctx, max(r.opts.Heartbeat, r.opts.MemberTTL/3))
	listed, err := r.listMembers(lctx)
	cancel()
	if err != nil {
		if ctx.Err() == nil {
			r.opts.Logger.Warn("owner: list members", "err", err)
		}
		return
	}
	listed = r.confirmOwners(ctx, listed)
	members := make([]Member, len(listed))
	for i, m := range listed {
		members[i] = Member{Name: m.Name, Leaving: m.Leaving}
		if m.Name == r.opts.Name {
			// Its own flag as it is now, not as last published: a Leave
			// must not plan as a staying member for a round.
			members[i].Leaving = r.leaving.Load()
		}
	}
	if !r.settled && !r.leaving.Load() {
		live := 0
		for _, m := range members {
			if !m.Leaving {
				live++
			}
		}
		r.mu.Lock()
		running := slices.ContainsFunc(r.claims, func(c Claim) bool { return c.Owner != "" && c.Owner != r.opts.Name })
		r.mu.Unlock()
		// Only a fleet starting afresh waits: one whose partitions are
		// owned already (a member joining or coming back) moves at once.
		if !running && live < r.opts.Expect && r.opts.Now().Sub(r.started) < r.opts.MemberTTL {
			return // the fleet is still gathering: no move yet
		}
		r.settled = true
	}
	r.mu.Lock()
	r.listed = listed
	claims := slices.Clone(r.claims)
	held := make(map[int]bool, len(r.held))
	for p := range r.held {
		held[p] = true
	}
	r.mu.Unlock()
	for _, a := range Plan(r.opts.Name, members, claims, held) {
		// A round can outlast the fence (its actions are KV writes and the
		// handler's work): check it before each action, not only at the
		// start.
		if ctx.Err() != nil || r.fenced() {
			return
		}
		r.inStep.Store(r.opts.Now().UnixNano())
		r.act(ctx, a)
	}
}

// fenced drops every held partition, and reports true, once the fence has
// passed: the membership may have expired and others may take over.
func (r *Runner) fenced() bool {
	f := r.Fence()
	if f.IsZero() || r.opts.Now().Before(f) {
		return false
	}
	for _, p := range r.Held() {
		r.opts.Logger.Warn("owner: fenced, dropping partition", "member", r.opts.Name, "partition", p)
		r.inStep.Store(r.opts.Now().UnixNano()) // each drop is a step (it may wait out its fetches)
		r.h.Drop(p)
		r.setHeld(p, false)
	}
	// Nothing is served now: a lapse has done its harm, and the next
	// rounds take back (by compare-and-set) what is still this member's.
	r.lapsed.Store(false)
	return true
}

// confirmOwners adds to listed every owner named in the claims that the
// listing left out but whose membership a direct read finds. A listing is
// a consumer over the bucket and was seen to miss a live member whose
// entry was being renewed as it ran (the others then took its partitions
// over while it served them); a read of one key has no such window. Only
// owners are checked: a partition is taken over only from its owner, so
// a member missed with nothing owned costs a round's delay, not safety.
func (r *Runner) confirmOwners(ctx context.Context, listed []MemberInfo) []MemberInfo {
	r.mu.Lock()
	var missing []string
	for _, c := range r.claims {
		if c.Owner == "" || slices.Contains(missing, c.Owner) ||
			slices.ContainsFunc(listed, func(m MemberInfo) bool { return m.Name == c.Owner }) {
			continue
		}
		missing = append(missing, c.Owner)
	}
	r.mu.Unlock()
	added := false
	defer func() {
		// Note since when each owner has been absent (for takeovers).
		now := r.opts.Now()
		r.mu.Lock()
		defer r.mu.Unlock()
		gone := map[string]bool{}
		for _, name := range missing {
			if !slices.ContainsFunc(listed, func(m MemberInfo) bool { return m.Name == name }) {
				gone[name] = true
				if _, ok := r.absent[name]; !ok {
					r.absent[name] = now
				}
			}
		}
		for name := range r.absent {
			if !gone[name] {
				delete(r.absent, name)
			}
		}
	}()
	for _, name := range missing {
		gctx, cancel := context.WithTimeout(ctx, r.opts.Heartbeat)
		e, err := r.members.Get(gctx, name)
		cancel()
		var v memberValue
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
			continue // gone indeed
		case err != nil:
			// Unknown: count it live (no takeover on a failed read).
			r.opts.Logger.Warn("owner: confirm member", "member", name, "err", err)
		default:
			if err := json.Unmarshal(e.Value(), &v); err != nil {
				continue
			}
			r.opts.Logger.Debug("owner: listing missed a live member", "member", name)
		}
		listed = append(listed, MemberInfo{Name: name, Leaving: v.Leaving, Info: v.Info})
		added = true
	}
	if added {
		slices.SortFunc(listed, func(a, b MemberInfo) int { return strings.Compare(a.Name, b.Name) })
	}
	return listed
}

func (r *Runner) setHeld(p int, on bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if on {
		r.held[p] = true
	} else {
		delete(r.held, p)
	}
}

// refresh reads partition p's claim from the bucket, after a
// compare-and-set found the watcher's copy stale.
func (r *Runner) refresh(ctx context.Context, p int) {
	e, err := r.owners.Get(ctx, partitionKey(p))
	c := Claim{}
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		// Deleted: Get does not say at which revision; the watcher will.
		return
	case err != nil:
		return
	default:
		c = Claim{Owner: string(e.Value()), Revision: e.Revision()}
	}
	r.mu.Lock()
	if c.Revision > r.claims[p].Revision {
		r.claims[p] = c
	}
	r.mu.Unlock()
}

// touch confirms that partition a.Partition's claim is still this
// member's at a.Revision by rewriting it there, and returns its new
// revision; on a conflict it re-reads the claim and returns the error.
func (r *Runner) touch(ctx context.Context, a Action) (uint64, error) {
	rev, err := r.owners.Update(ctx, partitionKey(a.Partition), []byte(r.opts.Name), a.Revision)
	if err != nil {
		r.opts.Logger.Debug("owner: claim no longer this member's", "member", r.opts.Name, "partition", a.Partition, "err", err)
		r.refresh(ctx, a.Partition)
		return 0, err
	}
	r.noteClaim(a.Partition, rev)
	return rev, nil
}

// noteClaim records this member's own write of p's claim at rev, ahead of
// the watcher (which may lag).
func (r *Runner) noteClaim(p int, rev uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if rev > r.claims[p].Revision {
		r.claims[p] = Claim{Owner: r.opts.Name, Revision: rev}
	}
}

func (r *Runner) act(ctx context.Context, a Action) {
	log := r.opts.Logger.With("member", r.opts.Name, "partition", a.Partition)
	key := partitionKey(a.Partition)
	switch a.Kind {
	case Take:
		// A fenced member must not claim: check the fence again, as the
		// round may have taken a while.
		if f := r.Fence(); !r.opts.Now().Before(f) {
			return
		}
		// An owner whose membership expired may be alive: an outage of
		// the cluster (a stream leader dying with its server: its Raft
		// group takes seconds to elect another) stops every member's
		// renewals, and their entries expire for that, not because they
		// died. Take over only from an owner seen absent for a whole
		// MemberTTL: a live member has renewed again by then (its next
		// heartbeat after the outage), a dead one has not.
		if a.Takeover {
			r.mu.Lock()
			since, ok := r.absent[r.claims[a.Partition].Owner]
			r.mu.Unlock()
			if !ok || r.opts.Now().Sub(since) < r.opts.MemberTTL {
				return
			}
		}
		var rev uint64
		var err error
		if a.Revision == 0 {
			rev, err = r.owners.Create(ctx, key, []byte(r.opts.Name))
		} else {
			rev, err = r.owners.Update(ctx, key, []byte(r.opts.Name), a.Revision)
		}
		if err != nil {
			log.Debug("owner: claim lost", "err", err)
			r.refresh(ctx, a.Partition)
			return
		}
		a.Revision = rev
		// The watcher may lag (it was seen stuck for seconds after an
		// outage): a round that still saw the old owner would drop what
		// this member now serves.
		r.noteClaim(a.Partition, rev)
		if err := r.h.Serve(ctx, a); err != nil {
			log.Warn("owner: serve failed, giving the claim back", "err", err)
			// Even when ctx ended (that may be why Serve failed): a claim
			// left with nothing served would wait for a Release.
			gctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			if err := r.owners.Delete(gctx, key, jetstream.LastRevision(rev)); err != nil {
				log.Warn("owner: give back", "err", err)
			}
			return
		}
		r.setHeld(a.Partition, true)
		log.Info("owner: took partition", "takeover", a.Takeover)
	case Adopt:
		// The claim as the watcher last delivered it may be stale: another
		// member may have taken p over since (this member fenced, its
		// watcher lagging). Confirm it by a compare-and-set first, so
		// that a stale claim serves nothing.
		rev, err := r.touch(ctx, a)
		if err != nil {
			return
		}
		a.Revision = rev
		if err := r.h.Serve(ctx, a); err != nil {
			log.Warn("owner: adopt failed", "err", err)
			return
		}
		r.setHeld(a.Partition, true)
	case Release:
		r.mu.Lock()
		held := r.held[a.Partition]
		r.mu.Unlock()
		if !held {
			// Not served here (dropped, or a Take cut short): the handler
			// may save the store's copy as the latest, which it is only if
			// the claim is still this member's.
			rev, err := r.touch(ctx, a)
			if err != nil {
				return
			}
			a.Revision = rev
		}
		if err := r.h.Release(ctx, a.Partition); err != nil {
			log.Warn("owner: release failed, keeping the partition", "err", err)
			return
		}
		r.setHeld(a.Partition, false)
		if err := r.owners.Delete(ctx, key, jetstream.LastRevision(a.Revision)); err != nil {
			// The claim stays ours with nothing served: the next round
			// adopts or releases it again.
			log.Warn("owner: release: delete claim", "rev", a.Revision, "err", err)
			r.refresh(ctx, a.Partition)
			return
		}
		log.Info("owner: released partition")
	case Drop:
		r.h.Drop(a.Partition)
		r.setHeld(a.Partition, false)
		log.Info("owner: dropped partition (owned elsewhere)")
	}
}
