// Package fleet makes a partitioned node (node.Options.Partitioned) one of
// a fleet on JetStream: it keeps the node's share of the partitions
// (cluster/owner), carries the URLs the node routes to other partitions
// (cluster/route's pump) and those routed to the node's own (one
// route.Follow per served partition into node.Fold), and keeps each served
// partition's checkpoint in the object store (cluster/ckptstore) on
// release and every CheckpointEvery.
//
// How a partition moves, in the order it happens:
//
//	owner.Take  ──▶ ckptstore.Restore (or an empty partition) ──▶ Shard.Serve ──▶
//	               node.ServePartition (takeover: no host before now + TakeoverHold)
//	               ──▶ route.Follow from the checkpoint's route sequence
//	owner.Adopt ──▶ the node's own state ──▶ Shard.Serve ──▶ node.ServePartition ──▶
//	               route.Follow
//	owner.Release ─▶ stop Follow ──▶ node.ReleasePartition (leases done, durable)
//	               ──▶ Shard.Release (stop serving, then wait for the writes
//	               under way) ──▶ ckptstore.Save ──▶ the claim is given up
//	owner.Drop  ──▶ stop Follow ──▶ node.ReleasePartition (bounded wait) ──▶
//	               Shard.Release, no save
//
// Shard (Options.Shard) is the part of a partition's state kept beside the
// node's: the fleet's content-seen gate (cluster/fpshard), whose share of
// a partition is in the store and in its checkpoints.
//
// Join starts a serving node's whole membership in its fixed order (NATS,
// the catalog of crawls, the content-seen gate, the per-IP cap, Start,
// the crawl end) and Member.Close stops it backwards; Start alone is the
// membership proper.
//
// A Fleet is safe for concurrent use.
package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/trawl-crawler/trawl/cluster/checkpoint"
	"github.com/trawl-crawler/trawl/cluster/ckptstore"
	"github.com/trawl-crawler/trawl/cluster/fleetnode"
	"github.com/trawl-crawler/trawl/cluster/owner"
	"github.com/trawl-crawler/trawl/cluster/progress"
	"github.com/trawl-crawler/trawl/cluster/route"
	"github.com/trawl-crawler/trawl/frontier"
	"github.com/trawl-crawler/trawl/internal/outbox"
	"github.com/trawl-crawler/trawl/internal/store"
	"github.com/trawl-crawler/trawl/internal/store/partition"
)

// Options configure a Fleet. Name, Node, DB, Outbox and JS are required.
type Options struct {
	// Name is this member's name, unique in the fleet.
	Name string
	// Node is the partitioned node the fleet drives (a *node.Node opened
	// with node.Options.Partitioned).
	Node fleetnode.Node
	// DB is the node's store (node.Node.DB): the fleet checkpoints and
	// restores its partitions there and reads their route sequences.
	DB *store.DB
	// Outbox is the node's outbox (node.Node.Outbox), which the fleet
	// publishes; nil for a node that is not partitioned.
	Outbox *outbox.Outbox
	// JS is a JetStream context on the fleet's cluster.
	JS jetstream.JetStream
	// Replicas is the replication factor of the fleet's streams, buckets
	// and object store (jsserver.Server.Replicas). Zero: 1.
	Replicas int
	// Expect is how many members the fleet has as it starts, if known
	// (an embedded fleet's servers): see owner.Options.Expect. Zero: not
	// known, no wait.
	Expect int
	// Heartbeat and MemberTTL: see owner.Options. Zero: 1 s and 15 s.
	Heartbeat, MemberTTL time.Duration
	// CheckpointEvery is how often each served partition is checkpointed.
	// Zero: 5 minutes.
	CheckpointEvery time.Duration
	// TakeoverHold is how long a partition taken from a dead owner keeps
	// its hosts unleased: the dead owner's fetches may still be in flight
	// (up to its fetch timeout after it stopped leasing). Zero: 1 minute.
	TakeoverHold time.Duration
	// RouteMaxAge is how long routed URLs stay on the stream: more than
	// the age of any checkpoint a taker may restore. Zero: 24 h.
	RouteMaxAge time.Duration
	// Shard is told when this member starts holding a partition (its keys
	// in the store, before the node serves it) and when it stops (before
	// its last checkpoint). Nil: none.
	Shard Shard
	// Info is published with the membership (the node's API address),
	// JSON. Nil: none.
	Info json.RawMessage
	// Now is the clock. Nil: time.Now.
	Now func() time.Time
	// Logger receives moves and failures. Nil: silent.
	Logger *slog.Logger
}

// Shard is per-partition state a member holds beside its node's
// (cluster/fpshard.Shard): Serve once the partition's keys are in the
// store, Release before its last checkpoint. Release stops serving p and
// then waits, until ctx ends, for its writes under way to be in the store;
// an error means some may not be yet (the checkpoint must wait).
type Shard interface {
	Serve(p partition.ID) error
	Release(ctx context.Context, p partition.ID) error
}

// Validate reports every bad field by name.
func (o *Options) Validate() error {
	var errs []error
	if o.Name == "" {
		errs = append(errs, errors.New("fleet: Name: empty"))
	}
	if o.Node == nil {
		errs = append(errs, errors.New("fleet: Node: nil"))
	}
	if o.DB == nil {
		errs = append(errs, errors.New("fleet: DB: nil"))
	}
	if o.Outbox == nil {
		errs = append(errs, errors.New("fleet: Outbox: nil (the node is not partitioned: node.Options.Partitioned)"))
	}
	if o.JS == nil {
		errs = append(errs, errors.New("fleet: JS: nil"))
	}
	for name, d := range map[string]time.Duration{"CheckpointEvery": o.CheckpointEvery, "TakeoverHold": o.TakeoverHold, "RouteMaxAge": o.RouteMaxAge} {
		if d < 0 {
			errs = append(errs, fmt.Errorf("fleet: %s: %v, negative", name, d))
		}
	}
	return errors.Join(errs...)
}

func (o *Options) ensureDefaults() {
	if o.Replicas <= 0 {
		o.Replicas = 1
	}
	if o.CheckpointEvery == 0 {
		o.CheckpointEvery = 5 * time.Minute
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = time.Second // owner's default too
	}
	if o.TakeoverHold == 0 {
		o.TakeoverHold = time.Minute
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// Fleet is a node's membership of a fleet.
type Fleet struct {
	opts   Options
	ckpt   *ckptstore.Store
	runner *owner.Runner
	pump   *route.Pump
	log    *progress.Log // the served partitions' changes, replicated
	gapc   chan partition.ID

	ctx    context.Context // the fleet's life: Close cancels it
	cancel context.CancelFunc
	wg     sync.WaitGroup

	// The progress publisher's life: it outlives ctx, so that Close
	// publishes what is queued once the partitions are handed on.
	logStop context.CancelFunc
	logDone chan struct{}

	// saveMu orders the periodic checkpoints against releases and drops:
	// a periodic save that ran after a release would overwrite the next
	// owner's newer checkpoint with this member's stale copy (seen: a
	// handed-on host's robots.txt fetched again by the taker).
	saveMu sync.Mutex

	// Counters for Stats.
	takes, takeovers, adopts, releases, drops atomic.Int64
	saved, saveFailed, restores, folded       atomic.Int64
	ckptUnreadable                            atomic.Int64

	mu       sync.Mutex
	follows  map[partition.ID]*follow          // one per served partition
	dropped  map[partition.ID]bool             // served until a Drop, not served since: the store's copy is the latest of this member's tenure
	restored map[partition.ID][]ckptstore.Info // the checkpoints takeovers restored (Takeovers)
	// unreadable counts the takes of a partition in a row that found its
	// checkpoint unreadable (giveUpCheckpoint).
	unreadable map[partition.ID]int
}

type follow struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// Start joins the fleet: it makes sure the stream, buckets and object
// store exist, then runs the membership, the pump and the checkpoints
// until Close.
func Start(ctx context.Context, opts Options) (*Fleet, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts.ensureDefaults()
	f := &Fleet{opts: opts, follows: map[partition.ID]*follow{}, dropped: map[partition.ID]bool{}, restored: map[partition.ID][]ckptstore.Info{}, unreadable: map[partition.ID]int{},
		gapc: make(chan partition.ID, partition.Count)}
	f.pump = route.NewPump(opts.Outbox, opts.JS, route.PumpOptions{Node: opts.Name, Logger: opts.Logger})
	// The stream, the object store and the buckets are made (or bound) at
	// once: a replicated one answers only when its Raft group has elected
	// a leader, seconds on a fleet just formed, and one after another
	// those waits added up to half a minute.
	var (
		wg                               sync.WaitGroup
		streamErr, ckErr, ownErr, logErr error
	)
	wg.Add(4)
	go func() {
		defer wg.Done()
		_, streamErr = route.EnsureStream(ctx, opts.JS, route.StreamOptions{Replicas: opts.Replicas, MaxAge: opts.RouteMaxAge})
	}()
	go func() {
		defer wg.Done()
		f.ckpt, ckErr = ckptstore.Open(ctx, opts.JS, ckptstore.Options{Replicas: opts.Replicas,
			// Every outbox entry committed before a checkpoint's snapshot
			// is published before the checkpoint counts: see BeforeCommit.
			// And a member past its fence commits none: its membership may
			// have lapsed and another member may have taken the partition
			// over and checkpointed it since (a round that outlived the
			// membership, then served and saved late, would otherwise
			// replace the newer checkpoint with its older state).
			BeforeCommit: func(ctx context.Context, p partition.ID) error {
				if _, err := f.pump.Flush(ctx); err != nil {
					return err
				}
				if f.pastFence() {
					return fmt.Errorf("partition %d: this member is past its fence (its membership may have lapsed): not saved, as another member may own it now", p)
				}
				return nil
			}})
	}()
	go func() {
		defer wg.Done()
		f.log, logErr = progress.Open(ctx, opts.JS, progress.Options{Replicas: opts.Replicas, MaxAge: opts.RouteMaxAge,
			// A replicated page's links are routed first: a taker that
			// replays the page does not fetch it again, so its links
			// must not wait in this member's outbox.
			BeforePublish: func(ctx context.Context) error { _, err := f.pump.Flush(ctx); return err },
			OnGap: func(p partition.ID) {
				select {
				case f.gapc <- p:
				default: // the next periodic round saves it
				}
			},
			Logger: opts.Logger})
	}()
	go func() {
		defer wg.Done()
		f.runner, ownErr = owner.New(ctx, opts.JS, handler{f}, owner.Options{
			Name: opts.Name, Partitions: partition.Count, Info: opts.Info,
			Heartbeat: opts.Heartbeat, MemberTTL: opts.MemberTTL, Replicas: opts.Replicas, Expect: opts.Expect,
			Now: opts.Now, Logger: opts.Logger,
		})
	}()
	wg.Wait()
	if err := errors.Join(streamErr, ckErr, ownErr, logErr); err != nil {
		return nil, fmt.Errorf("fleet: %w", err)
	}
	opts.DB.SetTap(f.log)
	opts.Node.SetFence(f.runner.Fence)
	f.ctx, f.cancel = context.WithCancel(context.Background())
	logCtx, logStop := context.WithCancel(context.Background())
	f.logStop, f.logDone = logStop, make(chan struct{})
	go func() { defer close(f.logDone); f.log.Run(logCtx) }()
	f.wg.Add(3)
	go func() { defer f.wg.Done(); f.runner.Run(f.ctx) }()
	go func() { defer f.wg.Done(); f.pump.Run(f.ctx) }()
	go func() { defer f.wg.Done(); f.checkpoints() }()
	return f, nil
}

// Members returns the live members and the partitions each owns.
func (f *Fleet) Members() []owner.MemberInfo { return f.runner.Members() }

// Fence returns the time after which the node must start no fetch
// (owner.Runner.Fence).
func (f *Fleet) Fence() time.Time { return f.runner.Fence() }

// Since returns when this member's current unbroken membership began
// (owner.Runner.Since).
func (f *Fleet) Since() time.Time { return f.runner.Since() }

// Alive reports whether member is in the fleet now (owner.Runner.Alive).
func (f *Fleet) Alive(ctx context.Context, member string) (bool, error) {
	return f.runner.Alive(ctx, member)
}

// Takeovers returns, for each partition this member took from a dead (or
// fenced) owner, the checkpoints it restored, in order (a zero Info if
// there was none): what the owner did after Info.Written was lost, and is
// done again.
func (f *Fleet) Takeovers() map[partition.ID][]ckptstore.Info {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[partition.ID][]ckptstore.Info, len(f.restored))
	for p, infos := range f.restored {
		out[p] = slices.Clone(infos)
	}
	return out
}

// Published returns how many URLs this node has routed to others.
func (f *Fleet) Published() int64 { return f.pump.Published() }

// Stats is what a member has done in the fleet since Start, and where it
// stands: the figures its metrics export (package metrics), to be summed
// over the members by whoever scrapes them.
type Stats struct {
	// Members is how many live members this one sees (itself included);
	// Served the partitions its node serves; Fenced whether its node may
	// start no fetch now (its membership may have lapsed).
	Members, Served int
	Fenced          bool
	// Partition moves served by this member: Takes (of a free partition,
	// from its checkpoint), Takeovers (from a dead or fenced owner, also
	// counted in Takes), Adopts (a claim kept across a restart),
	// Releases (handed on, checkpointed) and Drops (let go without a
	// checkpoint: fenced, or the whole fleet stopping).
	Takes, Takeovers, Adopts, Releases, Drops int64
	// Checkpoints saved and failed (periodic, baseline and release),
	// restored by takes, and given up as unreadable (the partition served
	// from an empty state).
	CheckpointsSaved, CheckpointsFailed, CheckpointsRestored, CheckpointsUnreadable int64
	// URLs routed to other members' partitions (published) and from the
	// route stream into this member's (folded; a takeover folds again
	// what came after its checkpoint).
	RoutedOut, RoutedIn int64
	// Outbox is how many routed URLs wait to be published (a scan of the
	// outbox: read it at a scrape's pace, not per page).
	Outbox int
	// The served partitions' changes replicated (package progress):
	// published (and their bytes), replayed by takes, not published (a
	// gap each, closed by the next checkpoint) and waiting.
	ChangesPublished, ChangeBytes, ChangesReplayed, ChangeGaps int64
	ChangesQueued                                              int
	ChangeLagMean, ChangeLagMax, ChangeLagSum                  time.Duration
}

// Stats returns the member's figures now.
func (f *Fleet) Stats() Stats {
	s := Stats{
		Members: len(f.runner.Members()), Served: len(f.opts.Node.Partitions()),
		Takes: f.takes.Load(), Takeovers: f.takeovers.Load(), Adopts: f.adopts.Load(),
		Releases: f.releases.Load(), Drops: f.drops.Load(),
		CheckpointsSaved: f.saved.Load(), CheckpointsFailed: f.saveFailed.Load(), CheckpointsRestored: f.restores.Load(),
		CheckpointsUnreadable: f.ckptUnreadable.Load(),
		RoutedOut:             f.pump.Published(), RoutedIn: f.folded.Load(),
	}
	ls := f.log.Stats()
	s.ChangesPublished, s.ChangeBytes, s.ChangesReplayed, s.ChangeGaps, s.ChangesQueued = ls.Published, ls.Bytes, ls.Replayed, ls.Gaps, ls.Queued
	s.ChangeLagMean, s.ChangeLagMax, s.ChangeLagSum = ls.LagMean, ls.LagMax, ls.LagSum
	if fence := f.runner.Fence(); !fence.IsZero() && !f.opts.Now().Before(fence) {
		s.Fenced = true
	}
	if n, err := f.opts.Outbox.Len(); err == nil {
		s.Outbox = n
	}
	return s
}

// pastFence reports whether this member may start nothing now: before its
// first renewal, or once its fence has passed (owner.Runner.Fence).
func (f *Fleet) pastFence() bool {
	fence := f.runner.Fence()
	return fence.IsZero() || !f.opts.Now().Before(fence)
}

// save checkpoints p and counts the outcome; the changes of p the
// checkpoint holds are then purged from the progress log.
func (f *Fleet) save(ctx context.Context, p partition.ID) error {
	// Read before the save's snapshot, so the checkpoint holds at least st.
	st, err := progress.Load(f.opts.DB, p)
	if err != nil {
		f.saveFailed.Add(1)
		return err
	}
	if _, err := f.ckpt.Save(ctx, p, f.opts.DB, f.opts.Name); err != nil {
		f.saveFailed.Add(1)
		return err
	}
	f.saved.Add(1)
	if err := f.log.Saved(ctx, p, st); err != nil {
		f.opts.Logger.Warn("fleet: checkpoint saved, its changes not purged from the progress log", "partition", p, "err", err)
	}
	return nil
}

// Close leaves the fleet cleanly: the membership loop stops, every served
// partition is released (checkpointed) for the others to take, the outbox
// is flushed, and the membership deleted. ctx bounds the wait; on its end
// the partitions not yet released are taken over as a dead member's.
func (f *Fleet) Close(ctx context.Context) error {
	f.cancel()
	f.wg.Wait()
	err := f.runner.Leave(ctx)
	// The outbox is durable: what cannot be published now (the whole fleet
	// stopping takes JetStream's quorum with it) is published when this
	// member runs again. Bounded, so a stop does not wait for a fleet
	// that is gone.
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), flushOnClose) // its own time, even when the leave used all of ctx's
	defer cancel()
	// The changes of partitions kept (a whole fleet stopping keeps its
	// claims) are published too, so that a member that takes one over
	// before this one is back does not do them again.
	if ferr := f.log.Flush(fctx); ferr != nil {
		err = errors.Join(err, fmt.Errorf("fleet: publish the partitions' last changes (%d left: a member taking one over before this one is back fetches its pages again): %w", f.log.Stats().Queued, ferr))
	}
	f.logStop()
	<-f.logDone
	if _, ferr := f.pump.Flush(fctx); ferr != nil {
		n, _ := f.opts.Outbox.Len()
		err = errors.Join(err, fmt.Errorf("fleet: flush outbox (%d batches of URLs for other members' partitions kept, sent when this member runs again): %w", n, ferr))
	}
	f.mu.Lock()
	ps := make([]partition.ID, 0, len(f.follows))
	for p := range f.follows {
		ps = append(ps, p)
	}
	f.mu.Unlock()
	for _, p := range ps {
		f.stopFollow(p)
	}
	f.opts.DB.SetTap(nil)
	return err
}

// unreadableTries is how many takes of a partition in a row meet its
// checkpoint unreadable (each having read it five times: Restore) before
// the partition is served without it.
const unreadableTries = 3

// giveUpCheckpoint counts a failed restore of p and says whether p is now
// to be served without its checkpoint: its unreadableTries-th unreadable
// one in a row. Other failures (a connection lost, a checkpoint of another
// store format) leave the count as it is and p unserved.
func (f *Fleet) giveUpCheckpoint(p partition.ID, err error) bool {
	if !errors.Is(err, ckptstore.ErrUnreadable) {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.unreadable[p]++
	return f.unreadable[p] >= unreadableTries
}

// flushOnClose bounds Close's last publication of the outbox.
const flushOnClose = 10 * time.Second

// handler is the owner's view of the fleet.
type handler struct{ f *Fleet }

func (h handler) Serve(ctx context.Context, a owner.Action) error {
	f, p := h.f, partition.ID(a.Partition)
	db := f.opts.DB
	if !slices.Contains(f.opts.Node.Partitions(), p) {
		// A Drop whose release ran out of time left p stopped but loaded
		// (no lease of it); finish that release before serving p again.
		if err := f.opts.Node.ReleasePartition(ctx, p); err != nil && !errors.Is(err, frontier.ErrNotServed) {
			return err
		}
	}
	f.setDropped(p, false)
	if a.Kind == owner.Take {
		info, found, err := f.ckpt.Restore(ctx, p, db)
		if err != nil {
			if !f.giveUpCheckpoint(p, err) {
				return err
			}
			// Restore left p empty. Its checkpoint's keys are lost: the
			// hosts' state, the URLs p's own pages queued (links within a
			// host are not routed), its content fingerprints. What the
			// route stream still holds for p comes back, and the progress
			// log's changes replay if they follow on from nothing; the
			// rest is found again or lost. Said loudly: a partition
			// never served is worse (the crawl would never end).
			f.ckptUnreadable.Add(1)
			f.opts.Logger.Error("fleet: partition's checkpoint unreadable after "+strconv.Itoa(unreadableTries)+" restores; served from an empty state (its queued URLs and hosts' state are lost, its pages may be fetched again)",
				"partition", p, "err", err)
			info, found = ckptstore.Info{}, false
		}
		f.mu.Lock()
		delete(f.unreadable, p)
		f.mu.Unlock()
		if found {
			f.restores.Add(1)
		}
		if !found {
			if err := checkpoint.Clear(db, p); err != nil {
				return err
			}
		} else {
			f.opts.Logger.Info("fleet: partition restored", "partition", p, "from", info.Node, "written", info.Written, "keys", info.Keys)
		}
		if a.Takeover {
			f.mu.Lock()
			f.restored[p] = append(f.restored[p], info) // zero if none was found
			f.mu.Unlock()
		}
	}
	// The changes made since the checkpoint (or since this member's own
	// state was written), then this member's own, replicated.
	res, err := f.log.Resume(ctx, db, p)
	if err != nil {
		return err
	}
	if res.Replayed > 0 || res.Ignored > 0 {
		f.opts.Logger.Info("fleet: partition's changes replayed", "partition", p, "replayed", res.Replayed, "ignored", res.Ignored, "from", res.From.N, "to", res.To.N)
	}
	var hold time.Time
	if a.Takeover {
		hold = f.opts.Now().Add(f.opts.TakeoverHold)
	}
	if f.opts.Shard != nil {
		if err := f.opts.Shard.Serve(p); err != nil {
			f.log.Stop(p)
			return err
		}
	}
	if err := f.opts.Node.ServePartition(p, hold); err != nil {
		f.log.Stop(p)
		return errors.Join(err, f.releaseShard(ctx, p))
	}
	seq, err := outbox.RouteSeq(db, p)
	if err != nil {
		// The claim goes back to the fleet: stop serving p first (or at
		// least leasing it, if the release runs out of time; the next
		// Serve of p finishes it).
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), dropTimeout)
		defer cancel()
		err = errors.Join(err, f.opts.Node.ReleasePartition(rctx, p))
		f.log.Stop(p)
		return errors.Join(err, f.releaseShard(rctx, p))
	}
	f.startFollow(p, seq)
	// A baseline at once: without one, a member that loses p before its
	// first periodic checkpoint (killed, or fenced) would leave the next
	// owner nothing but the route stream, and the URLs p's own pages
	// queued (links within a host are never routed) would be lost, where
	// a checkpoint keeps them queued to be found again.
	if err := f.save(ctx, p); err != nil {
		f.opts.Logger.Warn("fleet: baseline checkpoint", "partition", p, "err", err)
	}
	switch {
	case a.Kind != owner.Take:
		f.adopts.Add(1)
	case a.Takeover:
		f.takes.Add(1)
		f.takeovers.Add(1)
	default:
		f.takes.Add(1)
	}
	return nil
}

func (h handler) Release(ctx context.Context, pi int) error {
	f, p := h.f, partition.ID(pi)
	f.saveMu.Lock()
	defer f.saveMu.Unlock()
	f.stopFollow(p)
	if err := f.opts.Node.ReleasePartition(ctx, p); errors.Is(err, frontier.ErrNotServed) {
		f.mu.Lock()
		dropped := f.dropped[p]
		f.mu.Unlock()
		if !dropped {
			// Claimed but never served (a Take interrupted before its
			// Serve): the store's copy of p is not this member's to
			// save; the latest checkpoint stays the latest.
			return f.releaseShard(ctx, p)
		}
		// Dropped (fenced, or a round that saw a stale claim) with the
		// claim still this member's: no one else served p since, and the
		// store holds all this member did. Saving it is what makes the
		// release a clean one: the next owner takes the claim as freed
		// by a release and restores this checkpoint, holding no host.
	} else if err != nil {
		return err
	}
	// Not served now: if the shard's release or the save fails, the
	// owner calls Release again, which must then save from the store, as
	// after a Drop. The shard is let go first (it stops serving p, then
	// waits for the fingerprints of p being written here), so that the
	// checkpoint holds every fingerprint added to p here.
	f.setDropped(p, true)
	if err := f.releaseShard(ctx, p); err != nil {
		return err
	}
	if err := f.save(ctx, p); err != nil {
		return err
	}
	f.log.Stop(p)
	f.setDropped(p, false)
	f.releases.Add(1)
	return nil
}

func (f *Fleet) setDropped(p partition.ID, on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if on {
		f.dropped[p] = true
	} else {
		delete(f.dropped, p)
	}
}

func (h handler) Drop(pi int) {
	f, p := h.f, partition.ID(pi)
	f.saveMu.Lock()
	defer f.saveMu.Unlock()
	f.stopFollow(p)
	ctx, cancel := context.WithTimeout(context.Background(), dropTimeout)
	defer cancel()
	if err := f.opts.Node.ReleasePartition(ctx, p); err != nil {
		// p leases nothing now; its release finishes at its next Serve.
		f.opts.Logger.Warn("fleet: drop partition", "partition", p, "err", err)
	}
	if err := f.releaseShard(ctx, p); err != nil {
		// Not served by the shard now; a Release of p (which saves it)
		// waits for its writes again.
		f.opts.Logger.Warn("fleet: drop partition's fingerprints", "partition", p, "err", err)
	}
	f.log.Stop(p)
	f.setDropped(p, true)
	f.drops.Add(1)
}

// releaseShard stops the shard serving p and waits, until ctx ends or
// dropTimeout passes, for its writes to p under way (completion batches
// of the node's, applied within moments unless the node is stuck: then
// the release fails and is tried again).
func (f *Fleet) releaseShard(ctx context.Context, p partition.ID) error {
	if f.opts.Shard == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, dropTimeout)
	defer cancel()
	return f.opts.Shard.Release(ctx, p)
}

// dropTimeout bounds the wait of a Drop for the fetches of its partition
// still in flight.
const dropTimeout = 30 * time.Second

// startFollow folds partition p's routed URLs after seq until stopFollow.
// followStall is how many heartbeats a routed message may wait unfolded
// before the partition's consumer counts as stalled and is made anew
// (route.FollowOptions.Stall): 20 s at the default heartbeat. While
// nothing is folded, each served partition costs one read of the stream
// per that time.
const followStall = 20

func (f *Fleet) startFollow(p partition.ID, seq uint64) {
	ctx, cancel := context.WithCancel(f.ctx)
	fl := &follow{cancel: cancel, done: make(chan struct{})}
	f.mu.Lock()
	f.follows[p] = fl
	f.mu.Unlock()
	go func() {
		defer close(fl.done)
		after := seq
		for ctx.Err() == nil {
			err := route.Follow(ctx, f.opts.JS, p, after, route.FollowOptions{Stall: followStall * f.opts.Heartbeat, Logger: f.opts.Logger}, func(s uint64, items []frontier.Item) error {
				if err := f.opts.Node.Fold(p, s, items); err != nil {
					return err
				}
				f.folded.Add(int64(len(items)))
				after = s
				return nil
			})
			if ctx.Err() != nil {
				return
			}
			f.opts.Logger.Warn("fleet: follow routed URLs", "partition", p, "err", err)
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}()
}

func (f *Fleet) stopFollow(p partition.ID) {
	f.mu.Lock()
	fl := f.follows[p]
	delete(f.follows, p)
	f.mu.Unlock()
	if fl != nil {
		fl.cancel()
		<-fl.done
	}
}

// checkpoints saves every served partition every CheckpointEvery, and
// at once a partition whose progress log has a gap (a change that could
// not be published, which a taker's replay would stop at).
func (f *Fleet) checkpoints() {
	t := time.NewTicker(f.opts.CheckpointEvery)
	defer t.Stop()
	for {
		select {
		case <-f.ctx.Done():
			return
		case p := <-f.gapc:
			if f.pastFence() {
				continue
			}
			f.saveMu.Lock()
			if slices.Contains(f.opts.Node.Partitions(), p) {
				if err := f.save(f.ctx, p); err != nil && f.ctx.Err() == nil {
					f.opts.Logger.Warn("fleet: checkpoint after a gap in the progress log", "partition", p, "err", err)
				}
			}
			f.saveMu.Unlock()
			continue
		case <-t.C:
		}
		if f.pastFence() {
			// Its saves would be refused (BeforeCommit); the partitions are
			// dropped or kept as the membership turns out.
			continue
		}
		for _, p := range f.opts.Node.Partitions() {
			if f.ctx.Err() != nil || f.pastFence() {
				break
			}
			f.saveMu.Lock()
			if slices.Contains(f.opts.Node.Partitions(), p) { // not released since the round began
				if err := f.save(f.ctx, p); err != nil && f.ctx.Err() == nil {
					f.opts.Logger.Warn("fleet: checkpoint", "partition", p, "err", err)
				}
			}
			f.saveMu.Unlock()
		}
	}
}
