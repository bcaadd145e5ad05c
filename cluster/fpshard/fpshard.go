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
// is published only once the completion batch that carries it has
// committed (the page's WARC records were durable before it), so an
// entry never names a record a crash could lose; a lost add costs a
// duplicate archived in full later. A Shard is safe for concurrent use.
package fpshard

import (
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

	"github.com/trawl-crawler/trawl/internal/dedup"
	"github.com/trawl-crawler/trawl/internal/partition"
	"github.com/trawl-crawler/trawl/internal/store"
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
	// MaxBatch is the most lookups (or adds) sent in one message. Zero: 64.
	MaxBatch int
	// Linger is how long the first lookup (or add) of a batch waits for
	// others bound for the same partition. Zero: 2 ms.
	Linger time.Duration
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
	if o.Timeout < 0 || o.Linger < 0 || o.MaxBatch < 0 {
		errs = append(errs, fmt.Errorf("fpshard: Timeout %v, Linger %v, MaxBatch %d: negative", o.Timeout, o.Linger, o.MaxBatch))
	}
	return errors.Join(errs...)
}

func (o *Options) ensureDefaults() {
	if o.Timeout == 0 {
		o.Timeout = 2 * time.Second
	}
	if o.MaxBatch == 0 {
		o.MaxBatch = 64
	}
	if o.Linger == 0 {
		o.Linger = 2 * time.Millisecond
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

	mu      sync.Mutex
	subs    map[partition.ID]*nats.Subscription // the partitions served here
	lookups map[partition.ID]*batch             // lookups waiting to be sent
	adds    map[partition.ID]*batch             // adds waiting to be published
	closed  bool

	st struct {
		lookupsLocal, lookupsRemote, remoteMisses, requests atomic.Int64
		addsLocal, addsSent, served, addsReceived           atomic.Int64
	}
}

// batch is the ops bound for one partition, sent together.
type batch struct {
	msg   []byte  // version, then the ops
	calls []*call // the lookups' waiters, in order (none for adds)
	timer *time.Timer
}

// call is one lookup waiting for its answer.
type call struct {
	done   chan struct{}
	answer answer // the owner's; not found if it did not answer
}

// New returns a Shard serving no partition yet.
func New(opts Options) (*Shard, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts.ensureDefaults()
	return &Shard{opts: opts, subs: map[partition.ID]*nats.Subscription{},
		lookups: map[partition.ID]*batch{}, adds: map[partition.ID]*batch{}}, nil
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
	if s.subs[p] != nil {
		return nil
	}
	sub, err := s.opts.Conn.Subscribe(Subject(p), func(m *nats.Msg) { s.handle(p, m) })
	if err != nil {
		return fmt.Errorf("fpshard: serve partition %d: %w", p, err)
	}
	s.subs[p] = sub
	return nil
}

// Release stops holding partition p's fingerprints here: from now on they
// are asked of its next owner. Call it before p's last checkpoint is
// taken, so that what this member added to p is in it.
func (s *Shard) Release(p partition.ID) {
	s.mu.Lock()
	sub := s.subs[p]
	delete(s.subs, p)
	s.mu.Unlock()
	if sub != nil {
		if err := sub.Unsubscribe(); err != nil && !errors.Is(err, nats.ErrConnectionClosed) {
			s.opts.Logger.Warn("fpshard: release partition", "partition", p, "err", err)
		}
	}
}

// Close releases every partition and publishes the adds still waiting.
// Lookups still in flight end as not seen.
func (s *Shard) Close() {
	s.mu.Lock()
	s.closed = true
	var ps []partition.ID
	for p := range s.subs {
		ps = append(ps, p)
	}
	adds := s.adds
	s.adds = map[partition.ID]*batch{}
	s.mu.Unlock()
	for _, p := range ps {
		s.Release(p)
	}
	for p, b := range adds {
		b.timer.Stop()
		s.publish(p, b)
	}
}

func (s *Shard) serves(p partition.ID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.subs[p] != nil
}

// Stats counts what a Shard did since New.
type Stats struct {
	// LookupsLocal and LookupsRemote count lookups in this member's store
	// and asked of others (a near lookup counts once per partition its
	// bands fall in); RemoteMisses the remote ones that got no answer (no
	// owner, a timeout, a partition moving), counted as not seen;
	// Requests the messages those were sent in.
	LookupsLocal, LookupsRemote, RemoteMisses, Requests int64
	// AddsLocal and AddsSent count fingerprints added here and published
	// to others (a near add once per partition).
	AddsLocal, AddsSent int64
	// Served and AddsReceived count the lookups answered for others and
	// their adds written here.
	Served, AddsReceived int64
}

// Stats returns the counts now.
func (s *Shard) Stats() Stats {
	return Stats{
		LookupsLocal: s.st.lookupsLocal.Load(), LookupsRemote: s.st.lookupsRemote.Load(),
		RemoteMisses: s.st.remoteMisses.Load(), Requests: s.st.requests.Load(),
		AddsLocal: s.st.addsLocal.Load(), AddsSent: s.st.addsSent.Load(),
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

// Near returns the stored page nearest to p within maxDist
// (dedup.Index.Near), asking each partition its bands fall in at once.
func (s *Shard) Near(p dedup.Print, maxDist int) (dedup.Match, bool, error) {
	best := dedup.Match{Dist: simhash.MaxNear + 1}
	found := false
	var errs []error
	consider := func(m dedup.Match) {
		if m.Dist <= maxDist && m.Dist < best.Dist {
			best, found = m, true
		}
	}
	var calls []*call
	var local []dedup.Bands
	for part, bands := range parts(p.FP) {
		if s.serves(part) {
			local = append(local, bands)
			continue
		}
		calls = append(calls, s.ask(part, appendNear(nil, p, maxDist, bands)))
	}
	for _, bands := range local { // while the requests are out
		s.st.lookupsLocal.Add(1)
		m, ok, err := s.opts.Index.NearBands(p, maxDist, bands)
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
// holds sum's partition, else to its owner once b has committed.
func (s *Shard) AddExact(b *store.Batch, sum [sha256.Size]byte, o dedup.Original) error {
	p := digestPartition(sum)
	if s.serves(p) {
		s.st.addsLocal.Add(1)
		return s.opts.Index.AddExact(b, sum, o)
	}
	op := appendAddExact(nil, sum, o)
	b.OnDone(func(err error) {
		if err == nil {
			s.add(p, op)
		}
	})
	return nil
}

// AddNear puts the print p of the page at url, archived by job, under each
// of its bands: into b for the partitions this member holds, to their
// owners once b has committed for the others.
func (s *Shard) AddNear(b *store.Batch, p dedup.Print, url string, job uint32) error {
	for part, bands := range parts(p.FP) {
		if s.serves(part) {
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
	s.mu.Unlock()
	if full {
		s.flushLookups(p, b)
	}
	return c
}

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
	s.st.requests.Add(1)
	var answers []answer
	resp, err := s.opts.Conn.Request(Subject(p), b.msg, s.opts.Timeout)
	if err == nil {
		var status byte
		status, answers, err = decodeReply(resp.Data, len(b.calls))
		if err == nil && status != statusOK {
			err = fmt.Errorf("status %d", status)
		}
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

// add queues add op for partition p's owner.
func (s *Shard) add(p partition.ID, op []byte) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	b := s.adds[p]
	if b == nil {
		b = &batch{msg: []byte{version}}
		s.adds[p] = b
		b.timer = time.AfterFunc(s.opts.Linger, func() { s.flushAdds(p, b) })
	}
	b.msg = append(b.msg, op...)
	b.calls = append(b.calls, nil) // counted, no waiter
	full := len(b.calls) >= s.opts.MaxBatch || len(b.msg) >= maxAddBytes
	s.mu.Unlock()
	if full {
		s.flushAdds(p, b)
	}
}

func (s *Shard) flushAdds(p partition.ID, b *batch) {
	s.mu.Lock()
	if s.adds[p] != b {
		s.mu.Unlock()
		return
	}
	delete(s.adds, p)
	s.mu.Unlock()
	b.timer.Stop()
	s.publish(p, b)
}

// publish sends b's adds, best-effort: no one may be listening.
func (s *Shard) publish(p partition.ID, b *batch) {
	if err := s.opts.Conn.Publish(Subject(p), b.msg); err != nil {
		s.opts.Logger.Debug("fpshard: adds not sent", "partition", p, "adds", len(b.calls), "err", err)
		return
	}
	s.st.addsSent.Add(int64(len(b.calls)))
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
	if !s.serves(p) { // released since the message came
		reply(statusNotServed, nil)
		return
	}
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
			if bands := o.bands & dedup.PartitionBands(o.print.FP, p); bands != 0 {
				mt, ok, err := s.opts.Index.NearBands(o.print, o.maxDist, bands)
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
