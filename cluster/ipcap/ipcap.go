// Package ipcap holds the per-IP cap across a fleet. Hosts that share an
// address may sit in partitions served by different members, and each
// member's frontier caps only its own fetches to an address; the cap of
// the fleet is Slots fetches at once to an address, whichever members ask.
//
// Each address has Slots slots, keys ip.<hex address>.<k> in the KV
// bucket trawl-ipcap. A member holds a slot as a lease: taken by a KV
// create (one holder), renewed by an update at its revision every TTL/6,
// deleted once unused for Idle, and gone TTL after its last write if the
// holder dies (the bucket's age limit). A fetch to an address runs on a
// slot this member holds, one fetch per slot at a time, and starts only
// while the slot's lease has at least Hold (the longest a fetch takes)
// plus a margin left, counted from the start of its last successful
// write: a member that cannot renew stops using a slot before anyone else
// can take it. So at no moment do more than Slots fetches run to one
// address, over the whole fleet.
//
// A slot is kept across fetches while they come (Idle), so an address
// one member alone fetches costs a create per busy spell and a renewal
// per TTL/6, not a write per fetch; members sharing an address take
// turns.
//
// A dead member's slots need not keep their address for a whole TTL. A
// slot's value names its holder's run (name, start time) and the
// holder's Hold. A member starts no fetch past its fence (Fence), which
// passes before its membership can expire, and none on a slot last
// written before its current unbroken membership began (Since): a member
// whose membership lapsed and came back uses an old slot only once it has
// renewed it, which changes the slot's revision. So a member found gone
// (Alive) at T starts nothing more on a slot at the revision seen then,
// and what it started has ended by T + its Hold: a member that finds a
// slot at one revision held by a member gone for that Hold plus the
// margin deletes it at that revision. A slot of an earlier run of this
// member is freed likewise, MemberTTL plus Hold after this run began.
//
// The bucket's TTL is the fleet's: the first member makes the bucket, the
// others adopt its TTL (and refuse to join if their Hold does not fit in
// it). A Gate is safe for concurrent use.
package ipcap

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Bucket is the KV bucket of the slots. Part of the fleet's protocol.
const Bucket = "trawl-ipcap"

// Options configure a Gate. Name and JS are required.
type Options struct {
	// Name is this member's, written in the slots it holds.
	Name string
	JS   jetstream.JetStream
	// Slots is the cap: fetches at once to one address over the fleet.
	// Zero: 2 (the frontier's default per-IP cap).
	Slots int
	// Hold is the longest a fetch takes (node.Options.FetchTimeout).
	// Zero: 60 s.
	Hold time.Duration
	// TTL is a slot's life after its last write: how long a dead
	// member's slots stay taken. Zero: 1.5 x (Hold + margin), the least
	// that leaves room for Hold and two renewals (every TTL/6).
	TTL time.Duration
	// Idle is how long a slot this member holds stays unused before it
	// is given back. Zero: 2 s.
	Idle time.Duration
	// Poll is the wait between tries while every slot is taken. Zero:
	// 100 ms.
	Poll time.Duration
	// Replicas of the bucket. Zero: 1.
	Replicas int
	// Fence, if set, is the time after which this member must start no
	// fetch (cluster/owner's Runner.Fence); the zero time counts as
	// passed (not a member yet). Past it Acquire hands out nothing.
	Fence func() time.Time
	// Since, if set, is when this member's current unbroken membership
	// began (cluster/owner's Runner.Since): a slot last written before it
	// is not used until renewed.
	Since func() time.Time
	// Alive, if set, reports whether a member is in the fleet now (a
	// direct read of its membership). With Fence and Since set on every
	// member, a slot whose holder has been gone for its Hold plus the
	// margin is freed. Nil: a dead member's slots stay until their TTL.
	Alive func(ctx context.Context, member string) (bool, error)
	// MemberTTL is how long a silent member's membership lasts (for the
	// slots of an earlier run of this member). Zero: 15 s.
	MemberTTL time.Duration
	// Now is the clock. Nil: time.Now.
	Now    func() time.Time
	Logger *slog.Logger
}

// margin is kept on a slot's lease beyond Hold before a fetch starts on
// it (for the clock's and the store's delays): 5.5 s for a 60 s Hold.
func (o *Options) margin() time.Duration { return marginOf(o.Hold) }

// marginOf is the margin kept beyond a Hold of hold.
func marginOf(hold time.Duration) time.Duration { return hold/12 + 500*time.Millisecond }

func (o *Options) defaults() error {
	if o.Name == "" || o.JS == nil {
		return errors.New("ipcap: Name and JS are required")
	}
	if o.Slots <= 0 {
		o.Slots = 2
	}
	if o.Hold <= 0 {
		o.Hold = 60 * time.Second
	}
	if o.TTL <= 0 {
		o.TTL = (o.Hold+o.margin())*3/2 + time.Second
	}
	if o.TTL < o.Hold+o.margin()+2*(o.TTL/6) {
		return fmt.Errorf("ipcap: TTL %v leaves no room for Hold %v and two renewals", o.TTL, o.Hold)
	}
	if o.Idle <= 0 {
		o.Idle = 2 * time.Second
	}
	if o.Poll <= 0 {
		o.Poll = 100 * time.Millisecond
	}
	if o.Replicas <= 0 {
		o.Replicas = 1
	}
	if o.MemberTTL <= 0 {
		o.MemberTTL = 15 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}

// Gate takes and keeps this member's slots.
type Gate struct {
	opts    Options
	kv      jetstream.KeyValue
	started time.Time
	holder  []byte // the value of this run's slots: name, start (Unix ns), Hold (ns)

	mu      sync.Mutex
	slots   map[string]*slot // by key
	looked  map[string]look  // by key: others' slots this member looked at
	stopped bool
	freed   int64 // slots of gone holders deleted
	waits   int64 // Acquires that found no slot at first
}

// look is what a member last saw of another's slot: its value and
// revision, since when its holder is known gone (zero: alive), and when.
type look struct {
	value   string
	rev     uint64
	gone    time.Time
	checked time.Time
}

// ErrStopped is Acquire's error once Stop or Close was called.
var ErrStopped = errors.New("ipcap: stopped")

// checkEvery is the least time between two looks at one taken slot of
// another member's.
const checkEvery = time.Second

type slot struct {
	rev      uint64
	written  time.Time // start of the last successful create or update
	busy     bool      // a fetch runs on it
	lastUsed time.Time // end of its last fetch
}

// Open binds the bucket, creating it if absent.
func Open(ctx context.Context, opts Options) (*Gate, error) {
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	kv, err := opts.JS.CreateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket: Bucket, History: 1, Replicas: opts.Replicas, TTL: opts.TTL,
		Description: "trawl fleet's per-IP fetch slots, each held by one member as a lease",
	})
	if errors.Is(err, jetstream.ErrBucketExists) {
		kv, err = opts.JS.KeyValue(ctx, Bucket)
	}
	if err != nil {
		return nil, fmt.Errorf("ipcap: bucket %s: %w", Bucket, err)
	}
	// The slots' TTL is the fleet's (every member must renew and stop
	// by the one the bucket enforces).
	st, err := kv.Status(ctx)
	if err != nil {
		return nil, fmt.Errorf("ipcap: bucket %s: %w", Bucket, err)
	}
	if ttl := st.TTL(); ttl != opts.TTL {
		if ttl < opts.Hold+opts.margin()+2*(ttl/6) {
			return nil, fmt.Errorf("ipcap: the fleet's per-IP slots live %v (bucket %s), too short for a fetch of up to %v: give this member the fleet's fetch timeout", ttl, Bucket, opts.Hold)
		}
		opts.Logger.Info("ipcap: using the fleet's slot TTL", "fleet", ttl, "member", opts.TTL)
		opts.TTL = ttl
	}
	now := opts.Now()
	return &Gate{
		opts: opts, kv: kv, started: now,
		holder: fmt.Appendf(nil, "%s %d %d", opts.Name, now.UnixNano(), opts.Hold.Nanoseconds()),
		slots:  map[string]*slot{}, looked: map[string]look{},
	}, nil
}

// key names slot k of ip (KV keys take no colons: the address in hex).
func key(ip string, k int) string {
	if a, err := netip.ParseAddr(ip); err == nil {
		ip = hex.EncodeToString(a.AsSlice())
	} else {
		ip = hex.EncodeToString([]byte(ip))
	}
	return "ip." + ip + "." + strconv.Itoa(k)
}

// usable reports whether a fetch may start on s now, for a member whose
// membership began at since. g.mu must be held.
func (g *Gate) usable(s *slot, now, since time.Time) bool {
	return !s.busy && !s.written.Before(since) && now.Sub(s.written) < g.opts.TTL-g.opts.Hold-g.opts.margin()
}

// Acquire waits for a slot of ip and returns its release, to be called
// when the fetch has ended; it returns ctx's error if ctx ends first, or
// the store's if a slot cannot be taken.
func (g *Gate) Acquire(ctx context.Context, ip string) (release func(), err error) {
	for try := 0; ; try++ {
		if try == 1 {
			g.mu.Lock()
			g.waits++
			g.mu.Unlock()
		}
		now := g.opts.Now()
		g.mu.Lock()
		stopped := g.stopped
		g.mu.Unlock()
		if stopped {
			return nil, ErrStopped
		}
		if g.fenced(now) {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(g.opts.Poll):
			}
			continue
		}
		var since time.Time
		if g.opts.Since != nil {
			since = g.opts.Since()
		}
		g.mu.Lock()
		var free []int
		for k := range g.opts.Slots {
			s, held := g.slots[key(ip, k)]
			switch {
			case held && g.usable(s, now, since):
				s.busy = true
				g.mu.Unlock()
				return g.releaser(key(ip, k)), nil
			case !held:
				free = append(free, k)
			}
		}
		g.mu.Unlock()
		for _, k := range free {
			kk := key(ip, k)
			start := g.opts.Now()
			rev, err := g.kv.Create(ctx, kk, g.holder)
			if errors.Is(err, jetstream.ErrKeyExists) && g.free(ctx, kk) {
				rev, err = g.kv.Create(ctx, kk, g.holder)
			}
			if errors.Is(err, jetstream.ErrKeyExists) {
				continue // another member's, or ours being released
			}
			if err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				return nil, fmt.Errorf("ipcap: take a slot of %s: %w", ip, err)
			}
			g.mu.Lock()
			if _, dup := g.slots[kk]; dup {
				// Not possible: only this member creates its keys, and
				// a key it holds is not tried. Keep the first.
				g.mu.Unlock()
				continue
			}
			g.slots[kk] = &slot{rev: rev, written: start, busy: true}
			g.mu.Unlock()
			return g.releaser(kk), nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(g.opts.Poll):
		}
	}
}

func (g *Gate) releaser(k string) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			defer g.mu.Unlock()
			if s := g.slots[k]; s != nil {
				s.busy, s.lastUsed = false, g.opts.Now()
			}
		})
	}
}

// fenced reports whether this member is past its fence (or has none
// yet).
func (g *Gate) fenced(now time.Time) bool {
	if g.opts.Fence == nil {
		return false
	}
	f := g.opts.Fence()
	return f.IsZero() || !now.Before(f)
}

// holderOf parses a slot's value: the holder's name, the start of its run
// and its Hold (zero where the value lacks them).
func holderOf(value string) (name string, start time.Time, hold time.Duration) {
	f := strings.Fields(value)
	if len(f) == 0 {
		return "", time.Time{}, 0
	}
	if len(f) > 1 {
		if ns, err := strconv.ParseInt(f[1], 10, 64); err == nil {
			start = time.Unix(0, ns)
		}
	}
	if len(f) > 2 {
		if ns, err := strconv.ParseInt(f[2], 10, 64); err == nil && ns > 0 {
			hold = time.Duration(ns)
		}
	}
	return f[0], start, hold
}

// free looks at the holder of the taken slot k (at most once per
// checkEvery) and deletes the slot, at the revision it saw, if that
// holder is gone and has been for its Hold plus the margin (see the
// package comment). It reports whether the slot was deleted.
func (g *Gate) free(ctx context.Context, k string) bool {
	now := g.opts.Now()
	g.mu.Lock()
	last, seen := g.looked[k]
	g.mu.Unlock()
	if seen && now.Sub(last.checked) < checkEvery {
		return false
	}
	e, err := g.kv.Get(ctx, k)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		g.forgetLook(k)
		return true
	}
	if err != nil {
		return false
	}
	value := string(e.Value())
	name, start, hold := holderOf(value)
	hold = max(hold, g.opts.Hold)
	seen = seen && last.value == value && last.rev == e.Revision()
	var gone time.Time
	switch {
	case value == string(g.holder):
		// This run's own, being given back.
	case name == g.opts.Name:
		if start.Before(g.started) {
			// An earlier run of this member: its fence passed
			// within MemberTTL of this run's start.
			gone = g.started.Add(g.opts.MemberTTL)
		}
	case g.opts.Alive == nil || g.opts.Fence == nil || g.opts.Since == nil:
	default:
		alive, err := g.opts.Alive(ctx, name)
		if err != nil {
			return false
		}
		if !alive {
			gone = now
			if seen && !last.gone.IsZero() {
				gone = last.gone // gone since, at this very revision
			}
		}
	}
	g.mu.Lock()
	g.looked[k] = look{value: value, rev: e.Revision(), gone: gone, checked: now}
	g.mu.Unlock()
	if gone.IsZero() || now.Sub(gone) < hold+marginOf(hold) {
		return false
	}
	err = g.kv.Delete(ctx, k, jetstream.LastRevision(e.Revision()))
	g.forgetLook(k)
	if err != nil {
		return false
	}
	g.mu.Lock()
	g.freed++
	g.mu.Unlock()
	g.opts.Logger.Info("ipcap: freed the slot of a member gone", "slot", k, "holder", value, "gone", now.Sub(gone).Round(time.Millisecond))
	return true
}

func (g *Gate) forgetLook(k string) {
	g.mu.Lock()
	delete(g.looked, k)
	g.mu.Unlock()
}

// Stats are a gate's figures since Open.
type Stats struct {
	Held  int   // slots this member holds now
	Waits int64 // fetches that found every slot of their address taken at first (took turns)
	Freed int64 // slots of gone members (or of an earlier run) deleted
}

// Stats returns the gate's figures.
func (g *Gate) Stats() Stats {
	g.mu.Lock()
	defer g.mu.Unlock()
	return Stats{Held: len(g.slots), Waits: g.waits, Freed: g.freed}
}

// Held returns how many slots this member holds.
func (g *Gate) Held() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.slots)
}

// Run renews the slots in use and gives back those idle, every Idle/2 (or
// TTL/12 if shorter),
// until ctx ends; then it gives back every slot not in use (Close gives
// back the rest) and returns ctx's error.
func (g *Gate) Run(ctx context.Context) error {
	t := time.NewTicker(min(g.opts.Idle/2, g.opts.TTL/12))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			g.giveBack(context.Background())
			return ctx.Err()
		case <-t.C:
		}
		g.tend(ctx)
	}
}

// tend renews what is due and gives back what is idle.
func (g *Gate) tend(ctx context.Context) {
	now := g.opts.Now()
	type job struct {
		key   string
		rev   uint64
		renew bool
	}
	var jobs []job
	g.mu.Lock()
	for k, l := range g.looked {
		if now.Sub(l.checked) > g.opts.TTL {
			delete(g.looked, k) // no one asked for it since
		}
	}
	for k, s := range g.slots {
		switch {
		case !s.busy && now.Sub(s.lastUsed) >= g.opts.Idle:
			jobs = append(jobs, job{k, s.rev, false})
		case now.Sub(s.written) >= g.opts.TTL/6:
			jobs = append(jobs, job{k, s.rev, true})
		}
	}
	g.mu.Unlock()
	for _, j := range jobs {
		if !j.renew {
			g.drop(ctx, j.key, j.rev)
			continue
		}
		start := g.opts.Now()
		rev, err := g.kv.Update(ctx, j.key, g.holder, j.rev)
		g.mu.Lock()
		if s := g.slots[j.key]; s != nil && s.rev == j.rev {
			if err == nil {
				s.rev, s.written = rev, start
			} else if errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyNotFound) {
				// Expired and maybe taken: not ours to use, whatever
				// runs on it now ends within Hold of its last write.
				delete(g.slots, j.key)
			}
		}
		g.mu.Unlock()
		if err != nil && ctx.Err() == nil {
			g.opts.Logger.Warn("ipcap: renew a slot", "slot", j.key, "err", err)
		}
	}
}

// drop gives back slot key at rev if it is still held at rev and unused.
func (g *Gate) drop(ctx context.Context, k string, rev uint64) {
	g.mu.Lock()
	s := g.slots[k]
	if s == nil || s.rev != rev || s.busy {
		g.mu.Unlock()
		return
	}
	delete(g.slots, k)
	g.mu.Unlock()
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := g.kv.Delete(dctx, k, jetstream.LastRevision(rev)); err != nil && ctx.Err() == nil {
		// It expires after TTL; until then no one else can take it.
		g.opts.Logger.Warn("ipcap: give back a slot", "slot", k, "err", err)
	}
}

// giveBack gives back every slot no fetch uses.
func (g *Gate) giveBack(ctx context.Context) {
	g.mu.Lock()
	type held struct {
		key string
		rev uint64
	}
	var hs []held
	for k, s := range g.slots {
		if !s.busy {
			hs = append(hs, held{k, s.rev})
		}
	}
	g.mu.Unlock()
	for _, h := range hs {
		g.drop(ctx, h.key, h.rev)
	}
}

// Stop makes every Acquire from now on fail with ErrStopped: a member
// leaving the fleet starts no more fetches.
func (g *Gate) Stop() {
	g.mu.Lock()
	g.stopped = true
	g.mu.Unlock()
}

// Close stops the gate and gives back every slot this member holds that
// no fetch uses; those in use are left to expire (or to be freed by the
// others once this member is gone), as their fetches may still run.
func (g *Gate) Close(ctx context.Context) {
	g.Stop()
	g.giveBack(ctx)
}
