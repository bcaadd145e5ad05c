// Package progress replicates a fleet member's partitions as they change,
// so that a member killed between two checkpoints loses no more than what
// it was doing: every batch the node commits is seen by the Log (a
// store.Tap), split by partition (checkpoint.Holder: the keys a partition's
// checkpoint carries), and each served partition's share is published, in
// commit order, to the JetStream stream TRAWL_PROGRESS on subject
// trawl.progress.<p>. A member that takes a partition restores its latest
// checkpoint and then replays the partition's messages the checkpoint does
// not hold (Resume); a checkpoint saved lets the messages it holds be
// purged (Saved).
//
// Numbering and fencing. Each partition's state in a store carries its
// place in the log, store.ProgressKey(p) = State{Epoch, N}: N counts the
// partition's replicated changes, written in the batch of each change, so
// a checkpoint (a snapshot of the store) names exactly the changes it
// holds. A member that starts serving a partition first publishes a
// marker on its subject; the marker's stream sequence is its epoch, and
// every change it publishes carries (epoch, N). A replay walks the
// subject up to its own marker: it applies the changes of the epoch in
// force (the checkpoint's, then each marker's in turn) whose N follows the
// state's without a gap, and ignores any other: a change published by an
// earlier owner after a later owner's marker was not replayed by that
// owner, so it is not part of the partition's history.
//
// Invariants:
//   - A replay applies a change only if every change before it (by N, in
//     its epoch chain) is in the state: a change lost in flight (a publish
//     that failed, a member killed before its publish was acknowledged)
//     stops the replay there, and what follows is done again by the
//     taker, never applied out of order. OnGap asks for a checkpoint of a
//     partition whose change failed to publish, which closes the gap.
//   - A change is published only after everything the node's outbox held
//     when it was committed has been published (Options.BeforePublish):
//     a replayed page never has links that were not routed.
//   - The tap sees nothing of a partition that is not being served
//     (restores and replays are not replicated again).
//
// A Log is safe for concurrent use.
package progress

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/trawl-crawler/trawl/cluster/checkpoint"
	"github.com/trawl-crawler/trawl/cluster/jsensure"
	"github.com/trawl-crawler/trawl/internal/store"
	"github.com/trawl-crawler/trawl/internal/store/partition"
)

// Stream is the JetStream stream of partitions' changes.
const Stream = "TRAWL_PROGRESS"

// Subject returns the subject of partition p's changes.
func Subject(p partition.ID) string { return "trawl.progress." + strconv.Itoa(int(p)) }

// Message headers.
const (
	hdrEpoch = "Trawl-Epoch"
	hdrN     = "Trawl-N"
	hdrKind  = "Trawl-Kind" // "marker" or absent (a change)
)

// State is where a partition's state stands in its log: the epoch of the
// owner that wrote its last change (the stream sequence of that owner's
// marker), and how many changes it holds. The zero State is a partition
// with none.
type State struct{ Epoch, N uint64 }

func (s State) encode() []byte {
	return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(make([]byte, 0, 16), s.Epoch), s.N)
}

func decodeState(v []byte) (State, error) {
	if len(v) != 16 {
		return State{}, fmt.Errorf("progress: state of %d bytes, want 16", len(v))
	}
	return State{binary.BigEndian.Uint64(v), binary.BigEndian.Uint64(v[8:])}, nil
}

// Load returns partition p's State in db (zero if it has none).
func Load(db *store.DB, p partition.ID) (State, error) {
	v, err := db.Get(store.ProgressKey(p))
	if errors.Is(err, store.ErrNotFound) {
		return State{}, nil
	}
	if err != nil {
		return State{}, err
	}
	return decodeState(v)
}

// Options configure Open.
type Options struct {
	// Replicas is the stream's replication factor. Zero: 1.
	Replicas int
	// MaxAge bounds how long a change stays in the stream if no
	// checkpoint purges it. Zero: 24 h.
	MaxAge time.Duration
	// BeforePublish, if set, is called before each round of publishes
	// with what the round holds already committed: the fleet publishes
	// the node's outbox there. An error delays the round.
	BeforePublish func(ctx context.Context) error
	// OnGap, if set, is told of a partition one of whose changes could
	// not be published: its next checkpoint closes the gap, the sooner
	// the better. It must not block.
	OnGap func(p partition.ID)
	// Logger receives failures. Nil: silent.
	Logger *slog.Logger
}

// maxPending bounds the changes waiting to be published: past it, new
// changes are not queued (each partition concerned reported to OnGap).
const maxPending = 100_000

// roundMax bounds the changes published in one round.
const roundMax = 512

// Rounds are pipelined: up to roundsInFlight rounds' publishes await their
// acknowledgements while the next is sent (an acknowledgement of a
// replicated stream takes a few round trips between servers, and rounds
// sent one after another let changes wait behind them). A round's
// acknowledgements are awaited for ackWait from its sending; those missing
// then are published again one by one for at most retryWait.
//
// roundsInFlight x roundMax (3,072) stays under nats.go's default bound on
// asynchronous publishes awaiting acknowledgement (4,000), with room for
// the route pump's (256), so that a first publish is not refused for it
// and sent again out of order.
const (
	roundsInFlight = 6
	ackWait        = 10 * time.Second
	retryWait      = 30 * time.Second
)

// Log replicates the partitions a member serves. It is a store.Tap:
// set it on the node's store (store.DB.SetTap) before serving any.
type Log struct {
	js     jetstream.JetStream
	stream jetstream.Stream
	opts   Options

	mu     sync.Mutex
	active map[partition.ID]*part
	queue  []change
	notify chan struct{}
	idle   *sync.Cond // signalled when a round is settled
	// Changes ever queued, and ever settled (published or given up):
	// Flush waits for the second to reach what the first was at its call.
	enqueued, settled uint64

	published, bytes, replayed, gaps atomic.Int64
	lagSum, lagMax                   atomic.Int64 // from apply to acknowledgement, ns
}

// part is a served partition's place in its log.
type part struct {
	st    State // the last change staged and applied
	acked []ack // this epoch's changes acknowledged, not yet purged
	// gapN is the highest N of this epoch not published (0: none): a
	// checkpoint holding it closes the gap.
	gapN uint64
}

// ack is a change's place in the stream. first: acknowledged for its first
// publish. The first publishes of a partition's changes go out in N order
// on one connection, so their stream sequences follow N; a change sent
// again may land after later ones, or (its first publish stored, the
// acknowledgement lost) be a duplicate of an earlier sequence.
type ack struct {
	n, seq uint64
	first  bool
}

// change is one partition's share of one committed batch.
type change struct {
	p   partition.ID
	st  State
	ops []byte
	at  time.Time // when it was applied to the store
	// hole: a change the log cannot carry (a write it cannot encode):
	// numbered, never published.
	hole bool
}

// Open makes sure the stream exists and returns a Log on it.
func Open(ctx context.Context, js jetstream.JetStream, o Options) (*Log, error) {
	if o.Replicas <= 0 {
		o.Replicas = 1
	}
	if o.MaxAge == 0 {
		o.MaxAge = 24 * time.Hour
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	s, err := jsensure.Stream(ctx, js, jetstream.StreamConfig{
		Name:        Stream,
		Description: "trawl: each served partition's changes since its checkpoint",
		Subjects:    []string{"trawl.progress.*"},
		Retention:   jetstream.LimitsPolicy,
		MaxAge:      o.MaxAge,
		Replicas:    o.Replicas,
		Storage:     jetstream.FileStorage,
		Duplicates:  2 * time.Minute,
	})
	if err != nil {
		return nil, fmt.Errorf("progress: stream %s: %w", Stream, err)
	}
	l := &Log{js: js, stream: s, opts: o, active: map[partition.ID]*part{}, notify: make(chan struct{}, 1)}
	l.idle = sync.NewCond(&l.mu)
	return l, nil
}

// Op codes of a change's body: a sequence of
// op (1 B) | uvarint key length | key | uvarint value length | value.
const (
	opSet    = 1
	opDelete = 2
)

// Stage implements store.Tap: it numbers each served partition's share of
// b, writes the partition's new State into b, and queues the share once b
// is applied.
func (l *Log) Stage(b store.TapBatch) func(error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.active) == 0 {
		return nil
	}
	var (
		shares map[partition.ID][]byte
		bad    []partition.ID // a write the log cannot carry
	)
	err := b.Each(func(op store.OpKind, key, value []byte) {
		p, ok := checkpoint.Holder(key)
		if !ok || l.active[p] == nil {
			return
		}
		if store.Kind(key[0]) == store.KindProgress {
			return // the state itself: written by Stage, Resume and replays
		}
		var code byte
		switch op {
		case store.OpSet:
			code = opSet
		case store.OpDelete:
			code = opDelete
		default: // a range deletion: made only while a partition is not served
			bad = append(bad, p)
			return
		}
		if shares == nil {
			shares = map[partition.ID][]byte{}
		}
		buf := append(shares[p], code)
		buf = binary.AppendUvarint(buf, uint64(len(key)))
		buf = append(buf, key...)
		buf = binary.AppendUvarint(buf, uint64(len(value)))
		shares[p] = append(buf, value...)
	})
	if err != nil {
		l.opts.Logger.Error("progress: a batch could not be read: every served partition's log has a gap until its next checkpoint", "err", err)
		shares = nil // what was read is not the whole of any share
		bad = bad[:0]
		for p := range l.active {
			bad = append(bad, p)
		}
	}
	// Each partition with writes in b takes the next N, in b. A partition
	// whose share cannot be carried takes one too but publishes nothing:
	// a real gap, where a replay stops (without it, its next change would
	// follow without a gap and be applied over a write that never came).
	holes := map[partition.ID]bool{}
	for _, p := range bad {
		holes[p] = true
	}
	staged := make([]change, 0, len(shares)+len(holes))
	now := time.Now()
	stage := func(p partition.ID, ops []byte, hole bool) {
		pt := l.active[p]
		st := State{pt.st.Epoch, pt.st.N + 1}
		if err := b.Set(store.ProgressKey(p), st.encode()); err != nil {
			l.opts.Logger.Error("progress: a partition's state could not be written with its change", "partition", p, "err", err)
			return
		}
		staged = append(staged, change{p: p, st: st, ops: ops, at: now, hole: hole})
	}
	for p, ops := range shares {
		if !holes[p] {
			stage(p, ops, false)
		}
	}
	for p := range holes {
		stage(p, nil, true)
	}
	return func(err error) {
		l.mu.Lock()
		defer l.mu.Unlock()
		if err != nil {
			return // not applied: the store has failed, and refuses every later write
		}
		for _, c := range staged {
			pt := l.active[c.p]
			if pt == nil || pt.st.Epoch != c.st.Epoch {
				continue
			}
			pt.st = c.st
			if c.hole || len(l.queue) >= maxPending {
				l.gapLocked(c.p, c.st.N)
				continue
			}
			l.queue = append(l.queue, c)
			l.enqueued++
		}
		if len(staged) > 0 {
			select {
			case l.notify <- struct{}{}:
			default:
			}
		}
	}
}

// gapLocked records that a change of p was not published.
func (l *Log) gapLocked(p partition.ID, n uint64) {
	l.gaps.Add(1)
	if pt := l.active[p]; pt != nil {
		if pt.gapN == 0 && l.opts.OnGap != nil {
			l.opts.OnGap(p)
		}
		pt.gapN = max(pt.gapN, n)
	}
}

// Resumed says what Resume did.
type Resumed struct {
	From     State // the partition's state before the replay
	To       State // after it (To.Epoch is this member's epoch)
	Replayed int   // changes applied
	Ignored  int   // changes in the stream not applied (held already, of a fenced owner, or after a gap)
}

// Resume starts replicating partition p, whose state is in db (restored
// from its checkpoint, or this member's own): it publishes p's marker,
// applies the changes of p's log before the marker that the state does
// not hold, and from then on publishes p's changes. The caller serves p
// only after Resume returns nil.
func (l *Log) Resume(ctx context.Context, db *store.DB, p partition.ID) (Resumed, error) {
	var r Resumed
	l.Stop(p) // resumed again (served again without a release): a new epoch
	from, err := Load(db, p)
	if err != nil {
		return r, fmt.Errorf("progress: partition %d: %w", p, err)
	}
	r.From = from
	ack, err := l.js.PublishMsg(ctx, &nats.Msg{Subject: Subject(p), Header: nats.Header{hdrKind: []string{"marker"}}})
	if err != nil {
		return r, fmt.Errorf("progress: partition %d: marker: %w", p, err)
	}
	marker := ack.Sequence
	rp := replay{p: p, db: db, epoch: from.Epoch, applied: from.N, pending: map[uint64][]byte{}, logger: l.opts.Logger}
	for seq := uint64(1); seq < marker; {
		m, err := l.stream.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(Subject(p)))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			break
		}
		if err != nil {
			return r, fmt.Errorf("progress: partition %d: read the log at %d: %w", p, seq, err)
		}
		if m.Sequence >= marker {
			break
		}
		if err := rp.message(m); err != nil {
			return r, err
		}
		seq = m.Sequence + 1
	}
	if err := rp.flush(); err != nil {
		return r, err
	}
	r.Replayed, r.Ignored = rp.replayed, rp.ignored
	r.To = State{Epoch: marker, N: rp.applied}
	b := db.NewBatch()
	b.Set(store.ProgressKey(p), r.To.encode())
	if err := db.Commit(b); err != nil {
		return r, fmt.Errorf("progress: partition %d: %w", p, err)
	}
	l.replayed.Add(int64(r.Replayed))
	l.mu.Lock()
	l.active[p] = &part{st: r.To}
	l.mu.Unlock()
	return r, nil
}

// replay applies one partition's log to a store.
type replay struct {
	p                 partition.ID
	db                *store.DB
	epoch, applied    uint64
	pending           map[uint64][]byte // changes of the epoch in force past a gap, by N
	broken            bool              // a change of the epoch in force was unreadable: its replay stopped
	logger            *slog.Logger
	batch             *store.Batch
	size              int
	replayed, ignored int
}

// replayBatch bounds the bytes of one batch of a replay.
const replayBatch = 4 << 20

func (r *replay) message(m *jetstream.RawStreamMsg) error {
	if m.Header.Get(hdrKind) == "marker" {
		// The changes of the epoch that ends here: those past a gap are
		// never applied, and the new owner went on from where its own
		// replay (the same walk) stopped.
		r.ignored += len(r.pending)
		clear(r.pending)
		r.epoch, r.broken = m.Sequence, false
		return nil
	}
	epoch, err1 := strconv.ParseUint(m.Header.Get(hdrEpoch), 10, 64)
	n, err2 := strconv.ParseUint(m.Header.Get(hdrN), 10, 64)
	if err1 != nil || err2 != nil {
		r.ignored++
		return nil
	}
	if epoch != r.epoch || n <= r.applied || r.broken {
		r.ignored++
		return nil
	}
	r.pending[n] = m.Data
	for {
		ops, ok := r.pending[r.applied+1]
		if !ok {
			return nil
		}
		delete(r.pending, r.applied+1)
		if err := r.apply(r.applied+1, ops); err != nil {
			return err
		}
	}
}

// apply adds change n's writes to the batch under way. A change that does
// not decode, or writes a key of another partition, is applied not at all:
// it is a gap (broken), where the epoch's replay stops.
func (r *replay) apply(n uint64, ops []byte) error {
	type write struct {
		code       byte
		key, value []byte
	}
	var ws []write
	for rest := ops; len(rest) > 0; {
		code := rest[0]
		key, r1, ok1 := field(rest[1:])
		value, r2, ok2 := field(r1)
		switch {
		case !ok1 || !ok2:
			return r.corrupt(n, "truncated")
		case code != opSet && code != opDelete:
			return r.corrupt(n, fmt.Sprintf("op %d", code))
		}
		if p, ok := checkpoint.Holder(key); !ok || p != r.p {
			return r.corrupt(n, fmt.Sprintf("key %q is not of the partition", key))
		}
		ws = append(ws, write{code, key, value})
		rest = r2
	}
	if r.batch == nil {
		r.batch = r.db.NewBatch()
	}
	for _, w := range ws {
		if w.code == opSet {
			r.batch.Set(w.key, w.value)
		} else {
			r.batch.Delete(w.key)
		}
		r.size += len(w.key) + len(w.value)
	}
	r.applied = n
	r.replayed++
	r.batch.Set(store.ProgressKey(r.p), State{r.epoch, n}.encode())
	if r.size >= replayBatch {
		return r.flush()
	}
	return nil
}

// corrupt records change n as unreadable: the epoch's replay stops before
// it (what follows is fetched again), and the walk goes on to the next
// epoch's marker, whose owner went on from the same place.
func (r *replay) corrupt(n uint64, why string) error {
	r.broken = true
	r.ignored += 1 + len(r.pending)
	clear(r.pending)
	r.logger.Warn("progress: a change unreadable: the partition's replay stops before it", "partition", r.p, "epoch", r.epoch, "n", n, "why", why)
	return nil
}

func (r *replay) flush() error {
	if r.batch == nil {
		return nil
	}
	b := r.batch
	r.batch, r.size = nil, 0
	if err := r.db.Commit(b); err != nil {
		return fmt.Errorf("progress: partition %d: %w", r.p, err)
	}
	return nil
}

// field reads one uvarint-prefixed field.
func field(b []byte) (f, rest []byte, ok bool) {
	n, k := binary.Uvarint(b)
	if k <= 0 || uint64(len(b)-k) < n {
		return nil, nil, false
	}
	return b[k : k+int(n)], b[k+int(n):], true
}

// Stop stops replicating p: its changes from now on are not published
// (those queued still are).
func (l *Log) Stop(p partition.ID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.active, p)
}

// Saved tells the log that a checkpoint of p holding at least state st
// was saved: p's changes it holds are purged from the stream, and p's
// gap, if it had one and st is past it, is closed.
func (l *Log) Saved(ctx context.Context, p partition.ID, st State) error {
	l.mu.Lock()
	pt := l.active[p]
	if pt == nil || pt.st.Epoch != st.Epoch {
		l.mu.Unlock()
		return nil
	}
	// Purged: up to the last first-publish sequence of a change st holds
	// (those follow N: ack), and below every sequence of one it does not.
	// A change sent again may sit above later ones; it stays, and a
	// replay passes over it as held.
	var upTo uint64
	below := uint64(math.MaxUint64)
	keep := pt.acked[:0]
	for _, a := range pt.acked {
		switch {
		case a.n > st.N:
			below = min(below, a.seq)
			keep = append(keep, a)
		case a.first:
			upTo = max(upTo, a.seq)
		}
	}
	if upTo >= below {
		upTo = below - 1
	}
	pt.acked = keep
	if pt.gapN != 0 && st.N >= pt.gapN {
		pt.gapN = 0
	}
	l.mu.Unlock()
	if upTo == 0 {
		return nil
	}
	if err := l.stream.Purge(ctx, jetstream.WithPurgeSubject(Subject(p)), jetstream.WithPurgeSequence(upTo+1)); err != nil {
		return fmt.Errorf("progress: partition %d: purge: %w", p, err)
	}
	return nil
}

// Run publishes queued changes until ctx ends.
func (l *Log) Run(ctx context.Context) {
	sent := make(chan []pending, roundsInFlight-1)
	settled := make(chan struct{})
	go func() {
		defer close(settled)
		for r := range sent {
			l.settle(ctx, r)
		}
	}()
	defer func() { close(sent); <-settled }()
	for {
		select {
		case <-ctx.Done():
			return
		case <-l.notify:
		}
		for ctx.Err() == nil && l.send(ctx, sent) {
		}
	}
}

// pending is a change sent and not yet acknowledged.
type pending struct {
	c  change
	f  jetstream.PubAckFuture // nil: the asynchronous publish failed at once
	at time.Time              // when it was sent
}

// send publishes up to roundMax queued changes without waiting for their
// acknowledgements (settle waits) and reports whether more wait.
func (l *Log) send(ctx context.Context, sent chan<- []pending) bool {
	l.mu.Lock()
	n := min(len(l.queue), roundMax)
	l.mu.Unlock()
	if n == 0 {
		return false
	}
	// Only send takes changes off the queue (Stage appends): the first n
	// stay the first n.
	if l.opts.BeforePublish != nil {
		if err := l.opts.BeforePublish(ctx); err != nil {
			if ctx.Err() == nil {
				l.opts.Logger.Warn("progress: publish of the outbox before the partitions' changes", "err", err)
				select {
				case <-ctx.Done():
				case <-time.After(time.Second):
				}
			}
			return true
		}
	}
	l.mu.Lock()
	batch := l.queue[:n:n]
	l.queue = l.queue[n:]
	more := len(l.queue) > 0
	l.mu.Unlock()
	r := make([]pending, len(batch))
	now := time.Now()
	for i, c := range batch {
		r[i] = pending{c: c, at: now}
		if f, err := l.js.PublishMsgAsync(c.msg()); err == nil {
			r[i].f = f
		}
	}
	select {
	case sent <- r:
	case <-ctx.Done():
		return false
	}
	return more
}

// settle waits for a round's acknowledgements, publishes again those
// missing, and records the outcome of each change.
func (l *Log) settle(ctx context.Context, r []pending) {
	if ctx.Err() != nil {
		return
	}
	acks := make([]*jetstream.PubAck, len(r))
	// An acknowledgement can be lost (a stream leader gone mid-publish):
	// without an async timeout on the JetStream context its future never
	// resolves, so the wait is bounded here too.
	wait := time.NewTimer(max(0, ackWait-time.Since(r[0].at)))
	defer wait.Stop()
waiting:
	for i, p := range r {
		if p.f == nil {
			continue
		}
		select {
		case a := <-p.f.Ok():
			acks[i] = a
		case <-p.f.Err():
		case <-wait.C:
			break waiting
		case <-ctx.Done():
			return
		}
	}
	first := make([]bool, len(r))
	for i, p := range r {
		if acks[i] == nil && p.f != nil {
			select { // answered since the wait ended
			case a := <-p.f.Ok():
				acks[i] = a
			default:
			}
		}
		first[i] = acks[i] != nil
	}
	// A change that did land is not stored twice: its message ID is a
	// duplicate. What is left after retryWait is given up (a gap, closed
	// by the partition's next checkpoint).
	rctx, cancel := context.WithTimeout(ctx, retryWait)
	defer cancel()
	for i, p := range r {
		if acks[i] != nil {
			continue
		}
		for try := 0; try < 3 && acks[i] == nil && rctx.Err() == nil; try++ {
			pctx, cancel := context.WithTimeout(rctx, 5*time.Second)
			a, err := l.js.PublishMsg(pctx, p.c.msg())
			cancel()
			if err == nil {
				acks[i] = a
			} else if try == 2 || rctx.Err() != nil {
				l.opts.Logger.Warn("progress: a change not published: the partition's next checkpoint closes the gap", "partition", p.c.p, "n", p.c.st.N, "err", err)
			}
		}
	}
	if ctx.Err() != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, p := range r {
		c := p.c
		if acks[i] == nil {
			l.gapLocked(c.p, c.st.N)
			continue
		}
		l.published.Add(1)
		l.bytes.Add(int64(len(c.ops)))
		lag := int64(time.Since(c.at))
		l.lagSum.Add(lag)
		if lag > l.lagMax.Load() {
			l.lagMax.Store(lag) // only this goroutine stores
		}
		if pt := l.active[c.p]; pt != nil && pt.st.Epoch == c.st.Epoch {
			pt.acked = append(pt.acked, ack{n: c.st.N, seq: acks[i].Sequence, first: first[i]})
		}
	}
	l.settled += uint64(len(r))
	l.idle.Broadcast()
}

// msg is c's message.
func (c change) msg() *nats.Msg {
	return &nats.Msg{Subject: Subject(c.p), Data: c.ops, Header: nats.Header{
		hdrEpoch:              []string{strconv.FormatUint(c.st.Epoch, 10)},
		hdrN:                  []string{strconv.FormatUint(c.st.N, 10)},
		jetstream.MsgIDHeader: []string{fmt.Sprintf("%d.%d.%d", c.p, c.st.Epoch, c.st.N)},
	}}
}

// Flush waits until every change queued before the call is published (or
// given up), or ctx ends.
func (l *Log) Flush(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() {
		l.mu.Lock()
		l.idle.Broadcast()
		l.mu.Unlock()
	})
	defer stop()
	l.mu.Lock()
	defer l.mu.Unlock()
	for target := l.enqueued; l.settled < target && ctx.Err() == nil; {
		l.idle.Wait()
	}
	return ctx.Err()
}

// Stats is what a Log has done.
type Stats struct {
	Published, Bytes int64 // changes published, and their bytes
	Replayed         int64 // changes applied by Resume
	Gaps             int64 // changes not published
	Queued           int   // changes committed, not yet acknowledged
	// From a change's commit to its acknowledgement by JetStream: the
	// mean and the longest. What a member killed loses is what it
	// committed within about that time, and its fetches in flight.
	LagMean, LagMax time.Duration
	LagSum          time.Duration // over every change published
}

// Stats returns the log's figures now.
func (l *Log) Stats() Stats {
	l.mu.Lock()
	q := int(l.enqueued - l.settled)
	l.mu.Unlock()
	st := Stats{Published: l.published.Load(), Bytes: l.bytes.Load(), Replayed: l.replayed.Load(), Gaps: l.gaps.Load(), Queued: q,
		LagMax: time.Duration(l.lagMax.Load()), LagSum: time.Duration(l.lagSum.Load())}
	if st.Published > 0 {
		st.LagMean = time.Duration(l.lagSum.Load() / st.Published)
	}
	return st
}
