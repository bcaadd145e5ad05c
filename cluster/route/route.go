// Package route carries URLs to the node that serves their partition.
//
// Send side: a node writes each URL it found for a partition it does not
// serve into its store's outbox (outbox.Outbox.Add), in the same batch as the
// completion that found it, so that a crash loses neither. A Pump
// publishes the outbox, in batches per partition, to the subject
// trawl.route.<partition> of the stream TRAWL_ROUTE, and deletes entries
// only once JetStream has acknowledged them (at least once: a crash
// between the two publishes again; the message ID lets JetStream drop the
// repeat within its duplicate window, and the owner's seen gate drops it
// after).
//
// Receive side: the owner of a partition follows its subject from the
// sequence after the last message it folded (Follow); the fold writes the
// URLs and that sequence (outbox.SetRouteSeq) in one durable batch,
// and a checkpoint carries the sequence its keys were folded up to, so a
// restart or a new owner (restoring that checkpoint) resumes exactly
// there. The stream keeps messages for MaxAge whatever is acknowledged, so
// a checkpoint younger than that can always be replayed.
//
// A Pump is safe for concurrent use.
package route

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/trawl-crawler/trawl/cluster/jsensure"
	"github.com/trawl-crawler/trawl/frontier"
	"github.com/trawl-crawler/trawl/internal/outbox"
	"github.com/trawl-crawler/trawl/internal/store/partition"
)

// Stream is the JetStream stream routed URLs travel on.
const Stream = "TRAWL_ROUTE"

// Subject returns the subject of partition p's messages.
func Subject(p partition.ID) string { return "trawl.route." + strconv.Itoa(int(p)) }

// StreamOptions configure EnsureStream.
type StreamOptions struct {
	// Replicas is the stream's replication factor. Zero: 1.
	Replicas int
	// MaxAge is how long a message is kept, acknowledged or not: it must
	// exceed the age of any checkpoint a new owner may restore. Zero: 24 h.
	MaxAge time.Duration
}

// EnsureStream creates the stream, or updates its settings.
func EnsureStream(ctx context.Context, js jetstream.JetStream, o StreamOptions) (jetstream.Stream, error) {
	if o.Replicas <= 0 {
		o.Replicas = 1
	}
	if o.MaxAge <= 0 {
		o.MaxAge = 24 * time.Hour
	}
	s, err := jsensure.Stream(ctx, js, jetstream.StreamConfig{
		Name:        Stream,
		Description: "trawl: URLs found by one node for a partition another serves",
		Subjects:    []string{"trawl.route.*"},
		Retention:   jetstream.LimitsPolicy,
		MaxAge:      o.MaxAge,
		Replicas:    o.Replicas,
		Storage:     jetstream.FileStorage,
		Duplicates:  2 * time.Minute,
	})
	if err != nil {
		return nil, fmt.Errorf("route: stream %s: %w", Stream, err)
	}
	return s, nil
}

// PumpOptions configure a Pump.
type PumpOptions struct {
	// Node names the sender in message IDs; unique in the fleet.
	Node string
	// MaxBatch bounds the URLs in one message. Zero: 500.
	MaxBatch int
	// Every is how often the outbox is scanned when no Notify came. Zero:
	// 1 s.
	Every time.Duration
	// Logger receives failures. Nil: silent.
	Logger *slog.Logger
}

// Pump publishes an outbox.
type Pump struct {
	o    *outbox.Outbox
	js   jetstream.JetStream
	opts PumpOptions

	flushMu   sync.Mutex // one Flush at a time: two would publish the same entries
	mu        sync.Mutex
	published int64
}

// NewPump returns a pump of o publishing through js.
func NewPump(o *outbox.Outbox, js jetstream.JetStream, opts PumpOptions) *Pump {
	if opts.MaxBatch <= 0 {
		opts.MaxBatch = 500
	}
	if opts.Every <= 0 {
		opts.Every = time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Pump{o: o, js: js, opts: opts}
}

// Published returns how many URLs the pump has published.
func (p *Pump) Published() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.published
}

// Run publishes until ctx ends, returning ctx's error.
func (p *Pump) Run(ctx context.Context) error {
	t := time.NewTicker(p.opts.Every)
	defer t.Stop()
	for {
		if _, err := p.Flush(ctx); err != nil && ctx.Err() == nil {
			p.opts.Logger.Warn("route: publish outbox", "err", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-p.o.Notified():
		case <-t.C:
		}
	}
}

// Flush publishes every entry the outbox holds now and deletes what
// JetStream acknowledged. It returns the URLs published. Calls are
// serialised.
func (p *Pump) Flush(ctx context.Context) (int, error) {
	p.flushMu.Lock()
	defer p.flushMu.Unlock()
	total := 0
	var (
		cur         partition.ID
		items       []frontier.Item
		keys        [][]byte
		first, last uint64 // the numbers of the first and last entry of items
		haveCur     bool
	)
	// The messages are published asynchronously, at most flushInFlight
	// awaiting their acknowledgements at once (one round trip for a
	// flush, not one per destination partition); an entry is deleted
	// once its message is acknowledged.
	type sentMsg struct {
		f    jetstream.PubAckFuture
		keys [][]byte
		n    int
		part partition.ID
	}
	var inFlight []sentMsg
	settle := func() error {
		var failed error
		wait := time.NewTimer(flushAckWait)
		defer wait.Stop()
		var del [][]byte
		n := 0
		noAck := fmt.Errorf("no acknowledgement in %v", flushAckWait)
		expired := false // past the wait: the rest are only looked at
		for _, m := range inFlight {
			var err error
			if expired {
				select {
				case <-m.f.Ok():
				case err = <-m.f.Err():
				default:
					err = noAck
				}
			} else {
				select {
				case <-m.f.Ok():
				case err = <-m.f.Err():
				case <-wait.C:
					expired, err = true, noAck
				case <-ctx.Done():
					err = ctx.Err()
				}
			}
			if err != nil {
				failed = cmp.Or(failed, fmt.Errorf("route: publish %d URLs to partition %d: %w", m.n, m.part, err))
				continue
			}
			del = append(del, m.keys...)
			n += m.n
		}
		inFlight = inFlight[:0]
		if len(del) > 0 {
			// Not synced: a crash that loses the deletes publishes again,
			// which the duplicate window and the owner's seen gate absorb.
			if err := p.o.Delete(del...); err != nil {
				return fmt.Errorf("route: delete %d published outbox entries: %w", len(del), err)
			}
		}
		total += n
		p.mu.Lock()
		p.published += int64(n)
		p.mu.Unlock()
		return failed
	}
	send := func() error {
		if len(items) == 0 {
			return nil
		}
		id := fmt.Sprintf("%s-%d-%d", p.opts.Node, first, last)
		f, err := p.js.PublishMsgAsync(&nats.Msg{Subject: Subject(cur), Data: AppendMessage(nil, items), Header: nats.Header{jetstream.MsgIDHeader: []string{id}}})
		if err != nil {
			return fmt.Errorf("route: publish %d URLs to partition %d: %w", len(items), cur, err)
		}
		inFlight = append(inFlight, sentMsg{f: f, keys: slices.Clone(keys), n: len(items), part: cur})
		items, keys = items[:0], keys[:0]
		if len(inFlight) >= flushInFlight {
			return settle()
		}
		return nil
	}
	err := p.o.Range(func(e outbox.Entry) error {
		if e.Err != nil {
			what := "route: outbox entry unreadable, deleted"
			if errors.Is(e.Err, outbox.ErrBadKey) {
				what = "route: outbox key unreadable, deleted"
			}
			p.opts.Logger.Error(what, "key", fmt.Sprintf("%q", e.Key), "err", e.Err)
			if err := p.o.Delete(e.Key); err != nil {
				p.opts.Logger.Warn("route: delete outbox entry", "err", err)
			}
			return nil
		}
		if haveCur && (e.Part != cur || len(items) >= p.opts.MaxBatch) {
			if err := send(); err != nil {
				return err
			}
		}
		if len(items) == 0 {
			first = e.Seq
		}
		cur, haveCur, last = e.Part, true, e.Seq
		items = append(items, e.Item)
		keys = append(keys, e.Key)
		return nil
	})
	if err == nil {
		err = send()
	}
	return total, errors.Join(err, settle()) // what was sent is settled, whatever failed
}

// A flush has at most flushInFlight messages awaiting acknowledgement, each
// for at most flushAckWait (an acknowledgement lost with a stream leader
// would otherwise be awaited for ever).
const (
	flushInFlight = 256
	flushAckWait  = 10 * time.Second
)

// ErrGap is wrapped by Follow's error when the stream no longer holds the
// messages after the sequence to resume from (they aged out): URLs were
// lost, and the caller must say so.
var ErrGap = errors.New("route: stream gap")

// Fold receives the URLs of one message and its stream sequence. It must
// make both durable together (the sequence is where Follow resumes) before
// returning nil; an error stops Follow.
type Fold func(seq uint64, items []frontier.Item) error

// LastSeq returns the sequence of the last message of partition p in s
// (the route stream), 0 if it holds none.
func LastSeq(ctx context.Context, s jetstream.Stream, p partition.ID) (uint64, error) {
	m, err := s.GetLastMsgForSubject(ctx, Subject(p))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return m.Sequence, nil
}

// ErrStalled is wrapped by Follow's error when its consumer delivered
// nothing while a message it had not folded waited in the stream for a
// whole Stall: the caller follows again from the last sequence folded.
var ErrStalled = errors.New("route: consumer stalled")

// FollowOptions configure Follow.
type FollowOptions struct {
	// Stall, if positive, is how often a watchdog reads the stream's last
	// sequence of the partition while nothing is folded. A message in
	// the stream at one reading and still not folded at the next (one
	// Stall later) ends Follow with ErrStalled. Under load, an ordered
	// consumer of nats.go was seen to deliver nothing, and say nothing,
	// for minutes while its subject held messages (cluster/finish could
	// then never end the crawl).
	Stall time.Duration
	// Logger receives skipped messages. Nil: silent.
	Logger *slog.Logger
}

// Follow delivers partition p's messages after sequence after, in order,
// to fold until ctx ends (returning ctx's error), fold fails or the
// consumer stalls (ErrStalled). A message that does not decode is skipped
// with a log line (its sequence is still folded, with no URLs, so that it
// is not read again).
func Follow(ctx context.Context, js jetstream.JetStream, p partition.ID, after uint64, o FollowOptions, fold Fold) error {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s, err := js.Stream(ctx, Stream)
	if err != nil {
		return fmt.Errorf("route: partition %d: %w", p, err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		return fmt.Errorf("route: partition %d: %w", p, err)
	}
	if after > 0 && info.State.FirstSeq > after+1 && info.State.Msgs > 0 {
		// Messages before FirstSeq aged out; whether any was p's is
		// unknown, so the caller is told.
		err := fmt.Errorf("%w: partition %d resumes after %d, the stream starts at %d", ErrGap, p, after, info.State.FirstSeq)
		log.Error("route: messages lost", "err", err)
	}
	outer := ctx
	ctx, cancel := context.WithCancelCause(ctx)
	watched := make(chan struct{})
	defer func() { cancel(nil); <-watched }()
	var folded atomic.Uint64
	folded.Store(after)
	if o.Stall > 0 {
		last := func(ctx context.Context) (uint64, error) { return LastSeq(ctx, s, p) }
		go func() { defer close(watched); watch(ctx, cancel, p, &folded, o.Stall, last) }()
	} else {
		close(watched)
	}
	c, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{Subject(p)},
		DeliverPolicy:  jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:    after + 1,
		// nats.go recreates a failed ordered consumer inside Messages and
		// Next, by default for ever and deaf to any context: a member was
		// seen waiting 5 minutes on one while JetStream refused it. A few
		// attempts, then Next fails, and the caller follows again.
		MaxResetAttempts: resetAttempts,
	})
	if err != nil {
		return fmt.Errorf("route: partition %d: consumer: %w", p, err)
	}
	next := read(ctx, c)
	for {
		var r nextMsg
		select {
		case r = <-next:
		case <-ctx.Done():
		}
		if outer.Err() != nil {
			return outer.Err()
		}
		if cause := context.Cause(ctx); errors.Is(cause, ErrStalled) {
			return cause
		}
		if r.m == nil && r.err == nil { // ctx ended (a cause not told above)
			return fmt.Errorf("route: partition %d: %w", p, context.Cause(ctx))
		}
		if r.err != nil {
			return fmt.Errorf("route: partition %d: %w", p, r.err)
		}
		m := r.m
		md, err := m.Metadata()
		if err != nil {
			return fmt.Errorf("route: partition %d: message metadata: %w", p, err)
		}
		items, err := DecodeMessage(m.Data())
		if err != nil {
			log.Error("route: message skipped", "partition", p, "seq", md.Sequence.Stream, "err", err)
			items = nil
		}
		var keep []frontier.Item
		for _, it := range items {
			if partition.Of(it.Host) == p {
				keep = append(keep, it)
			} else {
				log.Error("route: URL of another partition skipped", "partition", p, "url", it.URL)
			}
		}
		if err := fold(md.Sequence.Stream, keep); err != nil {
			return fmt.Errorf("route: partition %d: fold message %d: %w", p, md.Sequence.Stream, err)
		}
		folded.Store(md.Sequence.Stream)
	}
}

// resetAttempts bounds how often nats.go tries to recreate a Follow's
// consumer in one recovery (1 s, then 2 s apart; each try waits up to
// 10 s) before Next fails: a recovery lasts 33 s at most.
const resetAttempts = 3

// nextMsg is one result of an ordered consumer's Next.
type nextMsg struct {
	m   jetstream.Msg
	err error
}

// read iterates c on a goroutine of its own and hands each result to the
// returned channel until an error (the last result sent) or ctx's end.
// Messages and Next of nats.go's ordered consumer can block for the whole
// of a recovery whatever their context says, and Stop waits for that
// recovery too; so the Follow that reads the channel returns on ctx at
// once, and this goroutine ends on its own once the recovery has (at most
// resetAttempts tries), stopping the iterator. Nothing it reads after
// ctx's end is handed on.
func read(ctx context.Context, c jetstream.Consumer) <-chan nextMsg {
	out := make(chan nextMsg)
	go func() {
		send := func(r nextMsg) bool {
			select {
			case out <- r:
				return r.err == nil
			case <-ctx.Done():
				return false
			}
		}
		it, err := c.Messages()
		if err != nil {
			send(nextMsg{err: fmt.Errorf("consumer: %w", err)})
			return
		}
		// Stopped here, once Next has returned, and not from another
		// goroutine while a recovery runs: a Stop then (it waits for the
		// recovery's lock) would come before the recovery installs its new
		// subscription, which nothing would stop.
		defer it.Stop()
		for {
			// Next is bound to ctx itself too: Stop alone does not
			// always end it (nats.go v1.55's ordered consumer, reset
			// while being stopped, goes on with a new inner
			// subscription).
			m, err := it.Next(jetstream.NextContext(ctx))
			if !send(nextMsg{m, err}) {
				return
			}
		}
	}()
	return out
}

// watch ends a Follow of partition p (cancel with ErrStalled) once a
// message the stream held at one reading of last is still past folded a
// reading later, every apart. A reading is skipped while folded moves:
// the consumer is delivering. A failed reading counts as none.
func watch(ctx context.Context, cancel context.CancelCauseFunc, p partition.ID, folded *atomic.Uint64, every time.Duration, last func(context.Context) (uint64, error)) {
	t := time.NewTicker(every)
	defer t.Stop()
	var waiting uint64 // the last sequence read, if past folded then
	seen := folded.Load()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := folded.Load()
		if waiting > now {
			cancel(fmt.Errorf("%w: partition %d: message %d waited %v in the stream, folded up to %d", ErrStalled, p, waiting, every, now))
			return
		}
		waiting = 0
		if now != seen {
			seen = now
			continue
		}
		rctx, done := context.WithTimeout(ctx, every)
		seq, err := last(rctx)
		done()
		if err == nil && seq > now {
			waiting = seq
		}
	}
}
