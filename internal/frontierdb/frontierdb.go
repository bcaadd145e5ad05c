// Package frontierdb keeps the frontier's queues and host states in the
// crawl's Pebble store: it implements frontier.Store on store.DB.
//
// Changes reach it in the frontier's order and are applied in that order
// by one committer goroutine, which takes every change queued meanwhile
// into one batch (group commit without reordering: two changes to one host
// are never applied out of order), with the group's WAL fsync asked for at
// once (store.DB.ApplyGroupSynced: Pebble shares one fsync among every
// group waiting for one). A second goroutine waits for each group's fsync in
// turn and only then acknowledges its changes; since the WAL is written in
// order, a crash keeps a prefix of the changes. A change's Attach, if it is
// a *store.Batch (the URL-seen keys of the items it puts), is committed
// atomically with it. Safe for concurrent use.
//
// Value encodings are part of the on-disk format (store.FormatVersion);
// they are drawn in codec.go and listed in docs/design/storage.md.
package frontierdb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"

	"github.com/trawl-crawler/trawl/frontier"
	"github.com/trawl-crawler/trawl/internal/store"
	"github.com/trawl-crawler/trawl/internal/store/partition"
)

// Options configures a Store. A zero field takes the default named.
type Options struct {
	// QueueLen bounds the changes waiting for the committer; Write blocks
	// (under the frontier's lock, so the whole crawl waits) when it is full.
	// Default 4096.
	QueueLen int
	// MaxGroup bounds the changes committed in one batch. Default 512.
	MaxGroup int
	// StaleWrites is how many writes may be applied after the read
	// iterator was made before it is remade (it pins the memtables and
	// tables it reads). Default 200,000.
	StaleWrites int
	// MaxOverlay bounds the items held in memory because the read
	// iterator may not see them; past it the iterator is dropped, to be
	// remade by the next Read. Default 50,000.
	MaxOverlay int
}

// Store is a frontier.Store on a store.DB. Create it with New, stop it
// with Close before closing the DB.
type Store struct {
	db   *store.DB
	opts Options

	changes chan pending
	stopped chan struct{}
	// writeMu serialises Write and Close: a change's place in the overlay
	// and in changes is the same, and changes is never sent on once Close
	// has closed it.
	writeMu sync.Mutex

	// commitGen counts applied groups.
	commitGen atomic.Uint64

	// Read serves queues from one long-lived iterator, so that reads of
	// neighbouring hosts reuse its loaded blocks and read-ahead. A Pebble
	// iterator sees the store as it was when it was made, so the items
	// put since then are served from the overlay; the iterator is remade
	// (and the overlay trimmed) once it is stale: see iterator and trim.
	// Lock order: itMu → mu; writeMu → mu.
	itMu             sync.Mutex
	it               *pebble.Iterator
	itLower, itUpper []byte
	readBuf          []frontier.Item // Read's items before they are handed out

	// batches is apply's, kept for the next group (the committer's only).
	batches []*store.Batch

	mu     sync.Mutex
	closed bool
	err    error // first failure; every later Write fails with it
	// overlay lists, in write order, the changes with puts that the
	// iterator may not see: written but not yet applied, or applied after
	// the iterator was made (the frontier counts an item as queued the
	// moment it puts it, so Read must see it at once). overlay[:applied]
	// are applied, each with its group's commitGen. overlayN counts the
	// items per host, so that Read scans the overlay only for a host that
	// has some. Nothing is copied per item: trimmed changes leave from the
	// front.
	overlay      []overlayChange
	applied      int
	overlayN     map[string]int32
	overlayItems int
	staleOps     int // writes applied since the iterator was made
}

type overlayChange struct {
	ch  *frontier.Change
	gen uint64 // commitGen of its group once applied
}

type pending struct {
	ch   *frontier.Change
	done chan error
}

// applied is a group applied, its fsync asked for: wait returns once it is
// durable (store.DB.ApplyGroupSynced).
type applied struct {
	group []pending
	wait  func() error
}

// New starts a Store's committer on db.
func New(db *store.DB, opts Options) *Store {
	if opts.QueueLen <= 0 {
		opts.QueueLen = 4096
	}
	if opts.MaxGroup <= 0 {
		opts.MaxGroup = 512
	}
	if opts.StaleWrites <= 0 {
		opts.StaleWrites = 200_000
	}
	if opts.MaxOverlay <= 0 {
		opts.MaxOverlay = 50_000
	}
	s := &Store{
		db:       db,
		opts:     opts,
		changes:  make(chan pending, opts.QueueLen),
		stopped:  make(chan struct{}),
		overlayN: make(map[string]int32),
	}
	go s.commitLoop()
	return s
}

// ErrClosed is the outcome of a Write after Close.
var ErrClosed = errors.New("frontierdb: store closed")

// Write implements frontier.Store. After Close its outcome is ErrClosed.
// It may be called from several goroutines, and concurrently with Close.
func (s *Store) Write(ch *frontier.Change) <-chan error {
	done := make(chan error, 1)
	s.writeMu.Lock()
	s.mu.Lock()
	closed, err := s.closed, s.err
	if closed {
		err = ErrClosed
	}
	if err == nil && len(ch.Put) > 0 {
		for i := range ch.Put {
			s.overlayN[ch.Put[i].Host]++
		}
		s.overlay = append(s.overlay, overlayChange{ch: ch})
		s.overlayItems += len(ch.Put)
	}
	s.mu.Unlock()
	if err == nil {
		// This may wait for room (QueueLen); the committer makes it
		// without any lock Write holds.
		s.changes <- pending{ch, done}
		s.writeMu.Unlock()
		return done
	}
	s.writeMu.Unlock()
	if b, ok := ch.Attach.(*store.Batch); ok {
		b.Close()
	}
	done <- err
	close(done)
	return done
}

// Close commits every change written so far and stops the committer.
// Writes after it (or racing with it and ordered after it) yield ErrClosed,
// and so do Reads.
func (s *Store) Close() error {
	s.writeMu.Lock()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.writeMu.Unlock()
		return ErrClosed
	}
	s.closed = true
	s.mu.Unlock()
	close(s.changes)
	s.writeMu.Unlock()
	<-s.stopped
	s.itMu.Lock()
	if s.it != nil {
		s.it.Close()
		s.it = nil
	}
	s.itMu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// commitLoop applies the changes, group by group in write order, each with
// its fsync asked for, and hands each applied group to syncLoop, which waits
// until it is durable and acknowledges it: the fsync of one group overlaps
// the encoding and applying of the next.
//
// A group's slice goes back to the committer through free once its
// changes are acknowledged: made afresh, it was 8 KiB (MaxGroup entries)
// allocated and cleared for each group, however few its changes.
func (s *Store) commitLoop() {
	synced := make(chan applied, syncQueueLen)
	free := make(chan []pending, syncQueueLen+2)
	syncDone := make(chan struct{})
	go s.syncLoop(synced, free, syncDone)
	defer func() {
		close(synced)
		<-syncDone
		close(s.stopped)
	}()
	for p := range s.changes {
		var group []pending
		select {
		case group = <-free:
		default:
			group = make([]pending, 0, s.opts.MaxGroup)
		}
		group = append(group, p)
		ops := changeOps(p.ch)
	drain:
		// Stop at MaxGroup changes or maxGroupOps writes: a batch over
		// half a memtable would be flushed as a table of its own.
		for len(group) < s.opts.MaxGroup && ops < maxGroupOps {
			select {
			case q, ok := <-s.changes:
				if !ok {
					break drain
				}
				group = append(group, q)
				ops += changeOps(q.ch)
			default:
				break drain
			}
		}
		wait, err := s.apply(group)
		s.markApplied(group, s.commitGen.Add(1), ops)
		if err != nil {
			s.ack(group, err)
			recycle(free, group)
			continue
		}
		synced <- applied{group, wait}
	}
}

// recycle gives group's slice back to the committer (free), if it has
// room; group's changes must all be acknowledged.
func recycle(free chan<- []pending, group []pending) {
	clear(group)
	select {
	case free <- group[:0]:
	default:
	}
}

// syncQueueLen bounds the applied groups waiting for their fsync.
const syncQueueLen = 64

// syncLoop waits until each applied group, in order, is durable, then
// acknowledges it. Groups whose fsync failed fail, and so does every later
// Write (setErr).
func (s *Store) syncLoop(groups <-chan applied, free chan<- []pending, done chan<- struct{}) {
	defer close(done)
	for g := range groups {
		err := g.wait()
		if err != nil {
			err = fmt.Errorf("frontierdb: sync: %w", err)
			s.setErr(err)
		}
		s.ack(g.group, err)
		recycle(free, g.group)
	}
}

// ack gives every change of group its outcome.
func (s *Store) ack(group []pending, err error) {
	for _, q := range group {
		q.done <- err
		close(q.done)
	}
}

// setErr records the first failure; every later Write fails with it.
func (s *Store) setErr(err error) {
	s.mu.Lock()
	if s.err == nil {
		s.err = err
	}
	s.mu.Unlock()
}

// maxGroupOps bounds the writes of one commit group: about 10 MiB of
// batch, well under half of the store's 64 MiB memtable.
const maxGroupOps = 50000

func changeOps(ch *frontier.Change) int {
	return len(ch.Put)*2 + len(ch.Del) + len(ch.Hold)*2 + len(ch.Unhold) + len(ch.Hosts) + len(ch.Jobs)
}

// markApplied marks the changes of group applied (or failed: the crawl is then
// stopping) with gen, and drops the iterator if it has become stale with
// no Read to remake it.
func (s *Store) markApplied(group []pending, gen uint64, ops int) {
	s.mu.Lock()
	for _, p := range group {
		if len(p.ch.Put) == 0 {
			continue
		}
		if s.applied >= len(s.overlay) || s.overlay[s.applied].ch != p.ch {
			panic("frontierdb: changes applied out of write order")
		}
		s.overlay[s.applied].gen = gen
		s.applied++
	}
	s.staleOps += ops
	stale := s.staleOps > s.opts.StaleWrites || s.overlayItems > s.opts.MaxOverlay
	s.mu.Unlock()
	if stale {
		s.itMu.Lock()
		if s.it != nil {
			s.it.Close()
			s.it = nil
		}
		s.trim(gen)
		s.itMu.Unlock()
	}
}

// trim drops from the overlay the changes applied in groups up to gen:
// an iterator made after gen was reached sees them. s.itMu must be held.
func (s *Store) trim(gen uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for n < s.applied && s.overlay[n].gen <= gen {
		for i := range s.overlay[n].ch.Put {
			h := s.overlay[n].ch.Put[i].Host
			if c := s.overlayN[h] - 1; c > 0 {
				s.overlayN[h] = c
			} else {
				delete(s.overlayN, h)
			}
		}
		s.overlayItems -= len(s.overlay[n].ch.Put)
		n++
	}
	clear(s.overlay[:n])
	s.overlay = s.overlay[n:]
	s.applied -= n
	if len(s.overlay) == 0 {
		s.overlay = s.overlay[:0:0]
	}
	s.staleOps = 0
}

// apply encodes group into batches and applies them as one, with their
// fsync asked for and not waited for: wait returns once they are durable.
func (s *Store) apply(group []pending) (wait func() error, err error) {
	s.mu.Lock()
	failed := s.err
	s.mu.Unlock()
	batches := s.batches[:0]
	defer func() {
		clear(batches)
		s.batches = batches[:0]
	}()
	for _, p := range group {
		b, ok := p.ch.Attach.(*store.Batch)
		if !ok {
			b = s.db.NewBatch()
		}
		batches = append(batches, b)
	}
	if failed != nil {
		for _, b := range batches {
			b.Close()
		}
		return nil, failed
	}
	for i, p := range group {
		if err = encodeChange(batches[i], p.ch); err != nil {
			break
		}
	}
	if err == nil {
		wait, err = s.db.ApplyGroupSynced(batches)
	} else {
		for _, b := range batches {
			b.Close()
		}
	}
	if err != nil {
		err = fmt.Errorf("frontierdb: commit %d changes: %w", len(group), err)
		s.setErr(err)
		return nil, err
	}
	return wait, nil
}

func encodeChange(b *store.Batch, ch *frontier.Change) error {
	for _, it := range ch.Del {
		if err := b.Delete(store.QueueKey(it.Host, uint8(it.Level), it.Seq)); err != nil {
			return err
		}
	}
	var buf []byte
	for _, it := range ch.Hold {
		if err := b.Delete(store.QueueKey(it.Host, uint8(it.Level), it.Seq)); err != nil {
			return err
		}
		buf = appendItem(buf[:0], it)
		if err := b.Set(store.HeldKey(it.Host, it.Job, uint8(it.Level), it.Seq), buf); err != nil {
			return err
		}
	}
	for _, it := range ch.Unhold {
		if err := b.Delete(store.HeldKey(it.Host, it.Job, uint8(it.Level), it.Seq)); err != nil {
			return err
		}
	}
	for _, it := range ch.Put {
		buf = appendItem(buf[:0], it)
		if err := b.Set(store.QueueKey(it.Host, uint8(it.Level), it.Seq), buf); err != nil {
			return err
		}
	}
	for _, h := range ch.Hosts {
		buf = appendHostState(buf[:0], h)
		if err := b.Set(store.HostKey(h.Host), buf); err != nil {
			return err
		}
	}
	for _, j := range ch.Jobs {
		buf = appendJobState(buf[:0], j)
		if err := b.Set(store.JobPartKey(partition.ID(j.Part), j.Job), buf); err != nil {
			return err
		}
	}
	return nil
}

// ReadHeld implements frontier.Store: job's held items in key order
// (partition, host, level, seq), read by a fresh iterator that skips the
// other jobs' items host by host.
func (s *Store) ReadHeld(job uint32, after *frontier.Item, n int) ([]frontier.Item, error) {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	it, err := s.db.NewIter(store.KindPrefix(store.KindHeld))
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var ok bool
	if after != nil {
		// The smallest key above after's.
		ok = it.SeekGE(append(store.HeldKey(after.Host, job, uint8(after.Level), after.Seq), 0))
	} else {
		ok = it.First()
	}
	var out []frontier.Item
	for ok && len(out) < n {
		k, err := store.DecodeKey(it.Key())
		if err != nil {
			return out, fmt.Errorf("frontierdb: read held items of job %d: %w", job, err)
		}
		switch {
		case k.Job < job:
			ok = it.SeekGE(store.HeldJobPrefix(k.Host, job))
			continue
		case k.Job > job:
			ok = it.SeekGE(store.PrefixEnd(store.HeldPrefix(k.Host)))
			continue
		}
		item, err := decodeItem(k.Host, it.Value())
		if err != nil {
			return out, fmt.Errorf("frontierdb: read held item %s seq %d: %w", k.Host, k.Seq, err)
		}
		item.Host, item.Level, item.Seq, item.Job = k.Host, int(k.Level), k.Seq, job
		out = append(out, item)
		ok = it.Next()
	}
	return out, it.Error()
}

// Read implements frontier.Store.
func (s *Store) Read(host string, level int, after uint64, n int) ([]frontier.Item, error) {
	if after == ^uint64(0) {
		return nil, nil
	}
	lower := store.QueueKey(host, uint8(level), after+1)
	upper := store.PrefixEnd(store.QueueKey(host, uint8(level), 0)[:len(lower)-8])
	// Items the iterator may not see are the host's newest: take them
	// from the overlay after what the iterator has, skipping any it has
	// too. The overlay holds every item put since the iterator's snapshot
	// (it is trimmed only up to what a snapshot covers), and the copy is
	// taken before the iterator is got (and perhaps remade): so an item is
	// in one or the other, or was put after the copy, in which case its
	// Seq is above all returned and a later Read finds it.
	s.mu.Lock()
	var mem []frontier.Item
	if s.overlayN[host] > 0 {
		for _, oc := range s.overlay {
			ch := oc.ch
			for i := range ch.Put {
				if x := &ch.Put[i]; x.Host == host && x.Level == level && x.Seq > after {
					mem = append(mem, *x)
				}
			}
		}
	}
	s.mu.Unlock()
	s.itMu.Lock()
	defer s.itMu.Unlock()
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	it, err := s.iterator()
	if err != nil {
		return nil, err
	}
	// The slices given to SetBounds must live until the next SetBounds.
	s.itLower, s.itUpper = lower, upper
	it.SetBounds(s.itLower, s.itUpper)
	// Items are gathered in a buffer kept for the next Read (under itMu)
	// and handed out in a slice of their number: the caller keeps it
	// (the frontier makes it the host's window), and a slice of n items,
	// most of them never filled, was the largest allocation of a lease.
	out := s.readBuf[:0]
	defer func() {
		clear(out)
		s.readBuf = out[:0]
	}()
	// Every key within the bounds is the host's at level: its seq is
	// its last 8 bytes (decoding the whole key made a string of the host
	// for each item).
	prefix := lower[:len(lower)-8]
	for ok := it.First(); ok && len(out) < n; ok = it.Next() {
		key := it.Key()
		if len(key) != len(lower) || !bytes.HasPrefix(key, prefix) {
			_, _, _, err := store.DecodeQueueKey(key)
			return slices.Clone(out), fmt.Errorf("frontierdb: read %s: queue key %q out of place: %v", host, key, err)
		}
		seq := binary.BigEndian.Uint64(key[len(prefix):])
		item, err := decodeItem(host, it.Value())
		if err != nil {
			return slices.Clone(out), fmt.Errorf("frontierdb: read %s seq %d: %w", host, seq, err)
		}
		item.Host, item.Level, item.Seq = host, level, seq
		out = append(out, item)
	}
	if err := it.Error(); err != nil {
		return slices.Clone(out), err
	}
	for _, x := range mem {
		if len(out) >= n {
			break
		}
		if len(out) == 0 || x.Seq > out[len(out)-1].Seq {
			out = append(out, x)
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	return slices.Clone(out), nil
}

// iterator returns the shared queue iterator, made anew if there is none
// or it is stale (Options.StaleWrites). s.itMu must be held.
func (s *Store) iterator() (*pebble.Iterator, error) {
	s.mu.Lock()
	stale := s.staleOps > s.opts.StaleWrites
	s.mu.Unlock()
	if s.it != nil && !stale {
		return s.it, nil
	}
	if s.it != nil {
		s.it.Close()
		s.it = nil
	}
	// Every group applied up to gen is visible to an iterator made after
	// this load.
	gen := s.commitGen.Load()
	prefix := store.KindPrefix(store.KindQueue)
	it, err := s.db.NewIter(prefix)
	if err != nil {
		return nil, err
	}
	s.it = it
	s.trim(gen)
	return it, nil
}

// Load implements frontier.Store: one streaming pass over the host states
// merged with one over the queue keys (which give each host's counts and
// next seq), both in (partition, host) order; then the job counters, per
// partition ('k' keys).
//
// A store of format version 3 (whole-store 'c' job counters) is upgraded
// to 4 first, once, in one durable batch: see convertCounters. Until then
// the store takes no write (store.DB.NeedsUpgrade), so Load must be called
// before the first Write.
func (s *Store) Load(fn func(frontier.HostState) error, jobFn func(frontier.JobState) error) error {
	if err := convertCounters(s.db); err != nil {
		return fmt.Errorf("frontierdb: load: %w", err)
	}
	if fn != nil {
		if err := s.loadHosts(store.KindPrefix(store.KindHost), store.KindPrefix(store.KindQueue), fn); err != nil {
			return err
		}
	}
	if jobFn == nil {
		return nil
	}
	return s.loadJobs(store.KindPrefix(store.KindJobPart), jobFn)
}

// loadJobs calls fn with the job counters under prefix.
func (s *Store) loadJobs(prefix []byte, fn func(frontier.JobState) error) error {
	it, err := s.db.NewIter(prefix)
	if err != nil {
		return err
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		k, err := store.DecodeKey(it.Key())
		if err != nil {
			return fmt.Errorf("frontierdb: load: %w", err)
		}
		j, err := decodeJobState(it.Value())
		if err != nil {
			return fmt.Errorf("frontierdb: load job %d partition %d: %w", k.Job, k.Part, err)
		}
		j.Job, j.Part = k.Job, frontier.Partition(k.Part)
		if err := fn(j); err != nil {
			return err
		}
	}
	return it.Error()
}

// LoadPartition implements frontier.Store: Load's pass bounded to the
// partition's host state and queue keys (store.PartitionPrefix), then the
// partition's job counters.
//
// A partition's keys may have been written past this Store (a checkpoint
// read into the store by cluster/checkpoint), which the shared queue
// iterator, a snapshot, would not see: it is remade at the next Read. (A
// fleet's clean handoff left the new owner's hosts idle with their items
// in the store until this: a fleet test's coverage stalled at 0.93-0.99.)
func (s *Store) LoadPartition(part frontier.Partition, fn func(frontier.HostState) error, jobFn func(frontier.JobState) error) error {
	p := partition.ID(part)
	s.itMu.Lock()
	if s.it != nil {
		s.it.Close()
		s.it = nil
	}
	s.itMu.Unlock()
	if fn != nil {
		if err := s.loadHosts(store.PartitionPrefix(store.KindHost, p), store.PartitionPrefix(store.KindQueue, p), fn); err != nil {
			return err
		}
	}
	if jobFn == nil {
		return nil
	}
	return s.loadJobs(store.PartitionPrefix(store.KindJobPart, p), jobFn)
}

// loadHosts merges the host state keys under hostPrefix with the queue
// keys under queuePrefix, calling fn once per host.
func (s *Store) loadHosts(hostPrefix, queuePrefix []byte, fn func(frontier.HostState) error) error {
	hit, err := s.db.NewIter(hostPrefix)
	if err != nil {
		return err
	}
	defer hit.Close()
	qit, err := s.db.NewIter(queuePrefix)
	if err != nil {
		return err
	}
	defer qit.Close()
	hOK, qOK := hit.First(), qit.First()
	var hk, qk store.Key
	var first []byte // the current host's first queue key
	decode := func(valid bool, key []byte, into *store.Key) (bool, error) {
		if !valid {
			return false, nil
		}
		k, err := store.DecodeKey(key)
		if err != nil {
			return false, fmt.Errorf("frontierdb: load: %w", err)
		}
		*into = k
		return true, nil
	}
	if hOK, err = decode(hOK, hit.Key(), &hk); err != nil {
		return err
	}
	if qOK, err = decode(qOK, qit.Key(), &qk); err != nil {
		return err
	}
	for hOK || qOK {
		var h frontier.HostState
		switch {
		case hOK && (!qOK || before(hk, qk) <= 0):
			if h, err = decodeHostState(hit.Value()); err != nil {
				return fmt.Errorf("frontierdb: load host %s: %w", hk.Host, err)
			}
			h.Host, h.Queued = hk.Host, nil
			hOK = hit.Next()
			if hOK, err = decode(hOK, hit.Key(), &hk); err != nil {
				return err
			}
		default:
			h.Host = qk.Host
		}
		// The host's queue keys, if any, follow in the same order: the
		// first is decoded, the others only compared with it (start-up
		// reads every queue key; decoding each cost a host string, its
		// partition hash and a fifth of the frontier's start-up).
		if qOK && qk.Host == h.Host {
			first = append(first[:0], qit.Key()...)
			level, seq := qk.Level, qk.Seq
			for {
				for len(h.Queued) <= int(level) {
					h.Queued = append(h.Queued, 0)
				}
				h.Queued[level]++
				h.NextSeq = max(h.NextSeq, seq)
				if qOK = qit.Next(); !qOK {
					break
				}
				var same bool
				if level, seq, same = store.SameQueueHost(first, qit.Key()); !same {
					if qOK, err = decode(qOK, qit.Key(), &qk); err != nil {
						return err
					}
					break
				}
			}
		}
		if err := fn(h); err != nil {
			return err
		}
	}
	if err := hit.Error(); err != nil {
		return err
	}
	return qit.Error()
}

// before orders two decoded per-host keys by partition, then host.
func before(a, b store.Key) int {
	if a.Part != b.Part {
		if a.Part < b.Part {
			return -1
		}
		return 1
	}
	return strings.Compare(a.Host, b.Host)
}

// QueueLen counts the queue items in the store by scanning their keys
// (tests and diagnostics; it reads every queue key).
func (s *Store) QueueLen() (int, error) { return s.db.Count(store.KindPrefix(store.KindQueue)) }

var _ frontier.Store = (*Store)(nil)
