// Package fpshard is a fleet's content-seen gate (node.ContentIndex): the
// digest and SimHash band indexes of package dedup, sharded over the
// members by fingerprint value. A fingerprint belongs to a partition
// (partition.OfFingerprint of its first 16 bits: the digest's, or a band
// value, so a print's four bands may be four partitions'), and the member
// that serves the partition holds it in its store, where the partition's
// checkpoint carries it (cluster/checkpoint).
//
// The fingerprints of partitions this member serves (Serve to Release) are
// looked up and added in its own store. The others are asked of their
// owner by request-reply on subject trawl.fp.<partition>, to which the
// owner subscribes while it serves the partition: lookups bound for one
// partition are coalesced (up to Options.MaxBatch, or Options.Linger after
// the first) into one request. Invariants: a lookup that gets no answer (no
// owner yet, a timeout, a partition moving) counts as not seen, so the
// page is archived in full: waste, never loss. An add for another member
// is sent only once the completion batch that carries it has been applied
// to the store (store.Batch OnDone: the frontier applies completions in
// groups that become durable a moment later, but the page's WARC records
// were durable before the batch was built), so an entry never names a
// record a crash could lose. The add is handed to the Shard's publisher
// goroutine through a bounded queue the committer never waits on: when
// it is full the add is dropped and counted (Stats.AddsDropped). A lost
// add costs a duplicate archived in full later.
//
// A partition this member serves has a gate: a local add holds it from
// the check that the partition is served here until its batch is done,
// and a request from another member holds it for the whole of its
// handling. Release stops serving the partition, then waits for those
// holders, so that the partition's last checkpoint, taken after Release,
// holds every fingerprint written to it here. A Shard is safe for
// concurrent use.
package fpshard

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/trawl-crawler/trawl/internal/store"
	"github.com/trawl-crawler/trawl/internal/store/dedup"
	"github.com/trawl-crawler/trawl/internal/store/partition"
	"github.com/trawl-crawler/trawl/simhash"
)

// Subject returns the subject partition p's fingerprints are asked on.
func Subject(p partition.ID) string { return "trawl.fp." + strconv.Itoa(int(p)) }

// Options configure a Shard. Conn, Index and DB are required.
type Options struct {
	// Conn is the connection to the fleet's NATS cluster. The Shard does
	// not close it.
	Conn *nats.Conn
	// Index is the node's own content-seen gate (node.Node.Dedup), over
	// DB, the node's store: this member's share is kept there.
	Index *dedup.Index
	DB    *store.DB
	// Timeout bounds a request to another member; no answer by then is
	// "not seen". Zero: 2 s.
	Timeout time.Duration
	// MoveWait is how long lookups for a partition that no member serves
	// right now (no responder: its owner lost, or a move under way) are
	// asked again, every moveRetry, before they count as "not seen".
	// Zero: 5 s; negative: not asked again.
	MoveWait time.Duration
	// MaxBatch is the most lookups (or adds) sent in one message. Zero: 64.
	MaxBatch int
	// Linger is how long the first lookup (or add) of a batch waits for
	// others bound for the same partition. Zero: 2 ms.
	Linger time.Duration
	// AddQueue is how many adds for other members may wait for the
	// publisher; more are dropped and counted. Zero: 4096.
	AddQueue int
	// Logger receives failures. Nil: silent.
	Logger *slog.Logger
}

// Validate reports every bad field by name.
func (o *Options) Validate() error {
	var errs []error
	if o.Conn == nil {
		errs = append(errs, errors.New("fpshard: Conn: nil"))
	}
	if o.Index == nil {
		errs = append(errs, errors.New("fpshard: Index: nil"))
	}
	if o.DB == nil {
		errs = append(errs, errors.New("fpshard: DB: nil"))
	}
	if o.Timeout < 0 || o.Linger < 0 || o.MaxBatch < 0 || o.AddQueue < 0 {
		errs = append(errs, fmt.Errorf("fpshard: Timeout %v, Linger %v, MaxBatch %d, AddQueue %d: negative", o.Timeout, o.Linger, o.MaxBatch, o.AddQueue))
	}
	return errors.Join(errs...)
}

func (o *Options) ensureDefaults() {
	if o.Timeout == 0 {
		o.Timeout = 2 * time.Second
	}
	if o.MoveWait == 0 {
		o.MoveWait = 5 * time.Second
	}
	if o.MaxBatch == 0 {
		o.MaxBatch = 64
	}
	if o.Linger == 0 {
		o.Linger = 2 * time.Millisecond
	}
	if o.AddQueue == 0 {
		o.AddQueue = 4096
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// maxAddBytes bounds one message of adds (NATS's default payload limit is
// 1 MiB).
const maxAddBytes = 256 << 10

// Shard is this member's view of the fleet's content-seen gate.
type Shard struct {
	opts Options
	// publishFn publishes a message of adds: opts.Conn.Publish (a test
	// stalls it).
	publishFn func(subject string, data []byte) error

	mu       sync.Mutex
	parts    map[partition.ID]*part  // served here, or released and draining
	lookups  map[partition.ID]*batch // lookups waiting to be sent
	closed   bool
	handlers sync.WaitGroup // requests being handled

	addq      chan pendingAdd // adds for the publisher
	quit      chan struct{}   // closed by Close: the publisher sends what it has and ends
	done      chan struct{}   // closed by the publisher as it ends
	isClosed  atomic.Bool
	closeOnce sync.Once

	st struct {
		lookupsLocal, lookupsRemote, remoteMisses, requests    atomic.Int64
		moveRetries                                            atomic.Int64
		addsLocal, addsSent, addsDropped, served, addsReceived atomic.Int64
	}
}

// part is the gate of a partition served here.
type part struct {
	sub   *nats.Subscription // nil once released: not served
	holds int                // local adds and requests in progress
	idle  chan struct{}      // closed when holds falls to 0; made by a Release that waits
}

// batch is the lookups bound for one partition, sent together.
type batch struct {
	msg   []byte  // version, then the ops
	calls []*call // the lookups' waiters, in order
	timer *time.Timer
}

// call is one lookup waiting for its answer.
type call struct {
	done   chan struct{}
	answer answer // the owner's; not found if it did not answer
}

// pendingAdd is an add op bound for partition p's owner.
type pendingAdd struct {
	p  partition.ID
	op []byte
}

// New returns a Shard serving no partition yet. Close stops it.
func New(opts Options) (*Shard, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts.ensureDefaults()
	s := &Shard{opts: opts, publishFn: opts.Conn.Publish,
		parts: map[partition.ID]*part{}, lookups: map[partition.ID]*batch{},
		addq: make(chan pendingAdd, opts.AddQueue), quit: make(chan struct{}), done: make(chan struct{})}
	go s.publishAdds()
	return s, nil
}

// Serve makes this member the holder of partition p's fingerprints: they
// are looked up and added here, and asked of it by the others. Call it
// once p's keys are in the store (a checkpoint restored), before the
// node's crawl of p starts; it notes the band values the store holds
// (dedup.Index.LoadPartition).
func (s *Shard) Serve(p partition.ID) error {
	if err := s.opts.Index.LoadPartition(p); err != nil {
		return fmt.Errorf("fpshard: serve partition %d: %w", p, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("fpshard: serve partition %d: closed", p)
	}
	pt := s.parts[p]
	if pt != nil && pt.sub != nil {
		return nil
	}
	sub, err := s.opts.Conn.Subscribe(Subject(p), func(m *nats.Msg) { s.handle(p, m) })
	if err != nil {
		return fmt.Errorf("fpshard: serve partition %d: %w", p, err)
	}
	if pt == nil { // else released and still draining: its holders count on
		pt = &part{}
		s.parts[p] = pt
	}
	pt.sub = sub
	return nil
}

// Release stops holding partition p's fingerprints here: from now on they
// are asked of its next owner, and added there. It then waits, until ctx
// ends, for the writes to p already under way here: local adds whose
// completion batch is not yet applied, and requests being handled. Call
// it before p's last checkpoint is taken, so that what this member added
// to p is in it; if it returns an error (ctx ended first), some may not
// be yet, and calling Release again waits for them again.
func (s *Shard) Release(ctx context.Context, p partition.ID) error {
	s.mu.Lock()
	pt := s.parts[p]
	if pt == nil {
		s.mu.Unlock()
		return nil
	}
	sub := pt.sub
	pt.sub = nil
	var wait chan struct{}
	if pt.holds > 0 {
		if pt.idle == nil {
			pt.idle = make(chan struct{})
		}
		wait = pt.idle
	} else {
		delete(s.parts, p)
	}
	s.mu.Unlock()
	if sub != nil {
		if err := sub.Unsubscribe(); err != nil && !errors.Is(err, nats.ErrConnectionClosed) {
			s.opts.Logger.Warn("fpshard: release partition", "partition", p, "err", err)
		}
	}
	if wait == nil {
		return nil
	}
	select {
	case <-wait:
		s.mu.Lock()
		if s.parts[p] == pt && pt.sub == nil && pt.holds == 0 {
			delete(s.parts, p)
		}
		s.mu.Unlock()
		return nil
	case <-ctx.Done():
		return fmt.Errorf("fpshard: release partition %d: writes still under way: %w", p, ctx.Err())
	}
}

// Close stops serving every partition, waits for the requests being
// handled (so the caller may close the store next), and publishes the
// adds still waiting. Lookups still in flight end as not seen. It does not
// wait for local adds under way: they ride in the node's completion
// batches, which the node applies or discards (Release waits for them).
func (s *Shard) Close() {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.isClosed.Store(true)
		var subs []*nats.Subscription
		for _, pt := range s.parts {
			if pt.sub != nil {
				subs = append(subs, pt.sub)
				pt.sub = nil
			}
		}
		s.mu.Unlock()
		for _, sub := range subs {
			if err := sub.Unsubscribe(); err != nil && !errors.Is(err, nats.ErrConnectionClosed) {
				s.opts.Logger.Warn("fpshard: close", "err", err)
			}
		}
		s.handlers.Wait()
		close(s.quit)
		<-s.done
	})
}

func (s *Shard) serves(p partition.ID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	pt := s.parts[p]
	return pt != nil && pt.sub != nil
}

// hold returns p's gate, held, if p is served here; nil if not. A
// request's hold (handler) counts in s.handlers as well.
func (s *Shard) hold(p partition.ID, handler bool) *part {
	s.mu.Lock()
	defer s.mu.Unlock()
	pt := s.parts[p]
	if pt == nil || pt.sub == nil {
		return nil
	}
	pt.holds++
	if handler {
		s.handlers.Add(1)
	}
	return pt
}

// unhold lets go of a hold of pt.
func (s *Shard) unhold(pt *part, handler bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	pt.holds--
	if pt.holds == 0 && pt.idle != nil {
		close(pt.idle)
		pt.idle = nil
	}
	if handler {
		s.handlers.Done()
	}
}

// Stats counts what a Shard did since New.
type Stats struct {
	// LookupsLocal and LookupsRemote count lookups in this member's store
	// and asked of others (a near lookup counts once per partition its
	// bands fall in); RemoteMisses the remote ones that got no answer (no
	// owner, a timeout, a partition moving), counted as not seen;
	// Requests the messages those were sent in; MoveRetries the requests
	// sent again because their partition was moving (Options.MoveWait).
	LookupsLocal, LookupsRemote, RemoteMisses, Requests, MoveRetries int64
	// AddsLocal and AddsSent count fingerprints added here and published
	// to others (a near add once per partition); AddsDropped the adds for
	// others dropped because the publisher's queue was full (or a publish
	// failed).
	AddsLocal, AddsSent, AddsDropped int64
	// Served and AddsReceived count the lookups answered for others and
	// their adds written here.
	Served, AddsReceived int64
}

// Stats returns the counts now.
func (s *Shard) Stats() Stats {
	return Stats{
		LookupsLocal: s.st.lookupsLocal.Load(), LookupsRemote: s.st.lookupsRemote.Load(),
		RemoteMisses: s.st.remoteMisses.Load(), Requests: s.st.requests.Load(), MoveRetries: s.st.moveRetries.Load(),
		AddsLocal: s.st.addsLocal.Load(), AddsSent: s.st.addsSent.Load(), AddsDropped: s.st.addsDropped.Load(),
		Served: s.st.served.Load(), AddsReceived: s.st.addsReceived.Load(),
	}
}

func digestPartition(sum [sha256.Size]byte) partition.ID {
	return partition.OfFingerprint(binary.BigEndian.Uint16(sum[:]))
}

// Exact returns the archived original of a payload whose SHA-256 is sum,
// and false if none is known (or its owner did not answer).
func (s *Shard) Exact(sum [sha256.Size]byte) (dedup.Original, bool, error) {
	p := digestPartition(sum)
	if s.serves(p) {
		s.st.lookupsLocal.Add(1)
		return s.opts.Index.Exact(sum)
	}
	c := s.ask(p, appendExact(nil, sum))
	<-c.done
	if !c.answer.found {
		return dedup.Original{}, false, nil
	}
	o, err := dedup.DecodeOriginal(c.answer.payload)
	if err != nil {
		return dedup.Original{}, false, fmt.Errorf("fpshard: partition %d's answer: %w", p, err)
	}
	return o, true, nil
}

// parts splits fp's bands by partition: up to NumBands entries.
func parts(fp uint64) map[partition.ID]dedup.Bands {
	out := make(map[partition.ID]dedup.Bands, simhash.NumBands)
	for band := range simhash.NumBands {
		out[partition.OfFingerprint(simhash.Band(fp, band))] |= 1 << band
	}
	return out
}

// probeParts splits a lookup's probes (dedup.Probes) by the partition of
// their values.
func probeParts(p simhash.Print) map[partition.ID][]dedup.Probe {
	out := make(map[partition.ID][]dedup.Probe)
	for _, pr := range dedup.Probes(p) {
		part := partition.OfFingerprint(pr.Value)
		out[part] = append(out[part], pr)
	}
	return out
}

// Near returns the stored page most like p, if it resembles p at least
// minRes (dedup.Index.Near), asking each partition its probes fall in at
// once.
func (s *Shard) Near(p simhash.Print, minRes float64) (dedup.Match, bool, error) {
	best := dedup.Match{Resemblance: -1}
	found := false
	var errs []error
	consider := func(m dedup.Match) {
		if m.Resemblance >= minRes && m.Resemblance > best.Resemblance {
			best, found = m, true
		}
	}
	var calls []*call
	var local [][]dedup.Probe
	for part, probes := range probeParts(p) {
		if s.serves(part) {
			local = append(local, probes)
			continue
		}
		calls = append(calls, s.ask(part, appendNear(nil, p, minRes, probes)))
	}
	for _, probes := range local { // while the requests are out
		s.st.lookupsLocal.Add(1)
		m, ok, err := s.opts.Index.NearProbes(p, probes, minRes)
		if err != nil {
			errs = append(errs, err)
		} else if ok {
			consider(m)
		}
	}
	for _, c := range calls {
		<-c.done
		if !c.answer.found {
			continue
		}
		m, err := decodeMatch(c.answer.payload)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		consider(m)
	}
	if found {
		return best, true, nil
	}
	return dedup.Match{}, false, errors.Join(errs...)
}

// AddExact puts o as the original of payload sum: into b if this member
// holds sum's partition (whose gate it then holds until b is done), else
// to its owner once b has been applied, and a copy into b all the same:
// the store keeps every original this member archived, which the node
// refers a 304's revisit to when the owner does not answer (a lookup
// here asks the owner; only the node's fallback reads the copy).
func (s *Shard) AddExact(b *store.Batch, sum [sha256.Size]byte, o dedup.Original) error {
	p := digestPartition(sum)
	if pt := s.hold(p, false); pt != nil {
		b.OnDone(func(error) { s.unhold(pt, false) })
		s.st.addsLocal.Add(1)
		return s.opts.Index.AddExact(b, sum, o)
	}
	op := appendAddExact(nil, sum, o)
	b.OnDone(func(err error) {
		if err == nil {
			s.add(p, op)
		}
	})
	return s.opts.Index.AddExact(b, sum, o)
}

// AddNear puts the print p of the page at url, archived by job, under each
// of its bands: into b for the partitions this member holds, to their
// owners once b has been applied for the others. It holds the gate of each
// partition it writes into b until b is done.
func (s *Shard) AddNear(b *store.Batch, p simhash.Print, url string, job uint32) error {
	for part, bands := range parts(p.FP) {
		if pt := s.hold(part, false); pt != nil {
			b.OnDone(func(error) { s.unhold(pt, false) })
			s.st.addsLocal.Add(1)
			if err := s.opts.Index.AddNearBands(b, p, url, job, bands); err != nil {
				return err
			}
			continue
		}
		op := appendAddNear(nil, p, url, job, bands)
		b.OnDone(func(err error) {
			if err == nil {
				s.add(part, op)
			}
		})
	}
	return nil
}

// ask queues lookup op for partition p's owner and returns its call,
// whose done closes once answered or given up.
func (s *Shard) ask(p partition.ID, op []byte) *call {
	s.st.lookupsRemote.Add(1)
	c := &call{done: make(chan struct{})}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.st.remoteMisses.Add(1)
		close(c.done)
		return c
	}
	b := s.lookups[p]
	if b == nil {
		b = &batch{msg: []byte{version}}
		s.lookups[p] = b
		b.timer = time.AfterFunc(s.opts.Linger, func() { s.flushLookups(p, b) })
	}
	b.msg = append(b.msg, op...)
	b.calls = append(b.calls, c)
	full := len(b.calls) >= s.opts.MaxBatch
	if full {
		// Taken out while the lock is held, so no other lookup joins a
		// full batch (MaxBatch is a bound) and the next one starts a
		// batch of its own.
		delete(s.lookups, p)
	}
	s.mu.Unlock()
	if full {
		b.timer.Stop()
		s.send(p, b)
	}
	return c
}

// moveRetry is how often lookups for a moving partition are asked again.
const moveRetry = 250 * time.Millisecond

// flushLookups sends b, partition p's batch of lookups, unless it was sent
// already, and hands each call its answer.
func (s *Shard) flushLookups(p partition.ID, b *batch) {
	s.mu.Lock()
	if s.lookups[p] != b {
		s.mu.Unlock()
		return
	}
	delete(s.lookups, p)
	s.mu.Unlock()
	b.timer.Stop()
	s.send(p, b)
}

// send sends b, partition p's batch of lookups, which no other lookup can
// join any more, and hands each call its answer.
func (s *Shard) send(p partition.ID, b *batch) {
	var answers []answer
	var err error
	for until := time.Now().Add(s.opts.MoveWait); ; {
		s.st.requests.Add(1)
		var (
			resp   *nats.Msg
			status byte
		)
		resp, err = s.opts.Conn.Request(Subject(p), b.msg, s.opts.Timeout)
		if err == nil {
			status, answers, err = decodeReply(resp.Data, len(b.calls))
			if err == nil && status != statusOK {
				err = fmt.Errorf("status %d", status)
			}
		}
		// A partition served by no one, or released by the member that
		// answered, is moving: its next owner answers within moments.
		moving := errors.Is(err, nats.ErrNoResponders) || (err != nil && status == statusNotServed)
		if !moving || s.isClosed.Load() || time.Now().Add(moveRetry).After(until) {
			break
		}
		s.st.moveRetries.Add(1)
		time.Sleep(moveRetry)
	}
	if err != nil {
		s.st.remoteMisses.Add(int64(len(b.calls)))
		if !errors.Is(err, nats.ErrNoResponders) {
			s.opts.Logger.Debug("fpshard: lookups not answered; not seen", "partition", p, "lookups", len(b.calls), "err", err)
		}
		answers = nil
	}
	for i, c := range b.calls {
		if answers != nil {
			c.answer = answers[i]
		}
		close(c.done)
	}
}

// add hands add op for partition p's owner to the publisher. It runs in
// a batch's OnDone, on the goroutine that applied the batch (for a node,
// the frontier's one committer): it never waits; an add the queue has no
// room for is dropped and counted.
func (s *Shard) add(p partition.ID, op []byte) {
	if s.isClosed.Load() {
		return
	}
	select {
	case s.addq <- pendingAdd{p: p, op: op}:
	default:
		s.st.addsDropped.Add(1)
	}
}

// addBatch is the adds bound for one partition, published together.
type addBatch struct {
	msg []byte // version, then the ops
	n   int
}

// publishAdds batches the adds handed to add by partition (up to MaxBatch,
// or maxAddBytes, or Linger after the first of a round) and publishes
// them, until Close; then it publishes what it holds and ends.
func (s *Shard) publishAdds() {
	defer close(s.done)
	pending := map[partition.ID]*addBatch{}
	var linger *time.Timer
	var lingerC <-chan time.Time
	take := func(a pendingAdd) {
		b := pending[a.p]
		if b == nil {
			b = &addBatch{msg: []byte{version}}
			pending[a.p] = b
		}
		b.msg = append(b.msg, a.op...)
		b.n++
		if b.n >= s.opts.MaxBatch || len(b.msg) >= maxAddBytes {
			delete(pending, a.p)
			s.publish(a.p, b)
		}
		if len(pending) > 0 && lingerC == nil {
			linger = time.NewTimer(s.opts.Linger)
			lingerC = linger.C
		}
	}
	flushAll := func() {
		for p, b := range pending {
			delete(pending, p)
			s.publish(p, b)
		}
	}
	for {
		select {
		case a := <-s.addq:
			take(a)
		case <-lingerC:
			lingerC = nil
			flushAll()
		case <-s.quit:
			for drained := false; !drained; {
				select {
				case a := <-s.addq:
					take(a)
				default:
					drained = true
				}
			}
			if linger != nil {
				linger.Stop()
			}
			flushAll()
			return
		}
	}
}

// publish sends b's adds, best-effort: no one may be listening.
func (s *Shard) publish(p partition.ID, b *addBatch) {
	if err := s.publishFn(Subject(p), b.msg); err != nil {
		s.st.addsDropped.Add(int64(b.n))
		s.opts.Logger.Debug("fpshard: adds not sent", "partition", p, "adds", b.n, "err", err)
		return
	}
	s.st.addsSent.Add(int64(b.n))
}

// handle answers (or writes) a message bound for partition p, served here.
func (s *Shard) handle(p partition.ID, m *nats.Msg) {
	reply := func(status byte, answers []byte) {
		if m.Reply == "" {
			return
		}
		if err := m.Respond(append([]byte{version, status}, answers...)); err != nil {
			s.opts.Logger.Debug("fpshard: reply", "partition", p, "err", err)
		}
	}
	pt := s.hold(p, true)
	if pt == nil { // released since the message came
		reply(statusNotServed, nil)
		return
	}
	defer s.unhold(pt, true)
	ops, err := decodeOps(m.Data)
	if err != nil {
		s.opts.Logger.Warn("fpshard: request", "partition", p, "err", err)
		reply(statusMalformed, nil)
		return
	}
	var answers []byte
	var b *store.Batch
	for _, o := range ops {
		switch o.kind {
		case opExact:
			var a answer
			if digestPartition(o.sum) == p {
				orig, ok, err := s.opts.Index.Exact(o.sum)
				if err != nil {
					s.opts.Logger.Warn("fpshard: lookup", "partition", p, "err", err)
				}
				a = answer{found: ok, payload: orig.Encode()}
			}
			answers = appendAnswer(answers, a)
			s.st.served.Add(1)
		case opNear:
			var a answer
			var mine []dedup.Probe
			for _, pr := range o.probes {
				if partition.OfFingerprint(pr.Value) == p {
					mine = append(mine, pr)
				}
			}
			if len(mine) > 0 {
				mt, ok, err := s.opts.Index.NearProbes(o.print, mine, o.minRes)
				if err != nil {
					s.opts.Logger.Warn("fpshard: near lookup", "partition", p, "err", err)
				}
				a = answer{found: ok, payload: encodeMatch(mt)}
			}
			answers = appendAnswer(answers, a)
			s.st.served.Add(1)
		case opAddExact:
			if digestPartition(o.sum) != p {
				continue
			}
			if b == nil {
				b = s.opts.DB.NewBatch()
			}
			if err := s.opts.Index.AddExact(b, o.sum, o.orig); err != nil {
				s.opts.Logger.Warn("fpshard: add", "partition", p, "err", err)
			}
			s.st.addsReceived.Add(1)
		case opAddNear:
			bands := o.bands & dedup.PartitionBands(o.print.FP, p)
			if bands == 0 {
				continue
			}
			if b == nil {
				b = s.opts.DB.NewBatch()
			}
			if err := s.opts.Index.AddNearBands(b, o.print, o.url, o.job, bands); err != nil {
				s.opts.Logger.Warn("fpshard: add", "partition", p, "err", err)
			}
			s.st.addsReceived.Add(1)
		}
	}
	if b != nil {
		if err := s.opts.DB.Commit(b); err != nil {
			s.opts.Logger.Warn("fpshard: write adds", "partition", p, "err", err)
		}
	}
	reply(statusOK, answers)
}
