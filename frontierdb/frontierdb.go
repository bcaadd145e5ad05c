// Package frontierdb keeps the frontier's queues and host states in the
// crawl's Pebble store: it implements frontier.Store on store.DB.
//
// Changes reach it in the frontier's order and are applied in that order
// by one committer goroutine, which takes every change queued meanwhile
// into one batch (group commit without reordering: two changes to one host
// are never applied out of order). A second goroutine makes applied groups
// durable, one WAL fsync for all groups applied before it, and only then
// acknowledges them; since the WAL is written in order, a crash keeps a
// prefix of the changes. A change's Attach, if it is a *store.Batch (the
// URL-seen keys of the items it puts), is committed atomically with it.
// Safe for concurrent use.
//
// Value encodings are part of the on-disk format (store.FormatVersion);
// they are drawn in codec.go and listed in docs/storage.md.
package frontierdb

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"

	"github.com/trawl-crawler/trawl/frontier"
	"github.com/trawl-crawler/trawl/store"
)

// Options configures a Store. A zero field takes the default named.
type Options struct {
	// QueueLen bounds the changes waiting for the committer; Write blocks
	// (under the frontier's lock, so the whole crawl waits) when it is full.
	// Default 4096.
	QueueLen int
	// MaxGroup bounds the changes committed in one batch. Default 512.
	MaxGroup int
}

// Store is a frontier.Store on a store.DB. Create it with New, stop it
// with Close before closing the DB.
type Store struct {
	db   *store.DB
	opts Options

	changes chan pending
	stopped chan struct{}

	mu     sync.Mutex
	closed bool
	err    error // first commit failure; every later Write fails with it
	// commitGen counts completed commits; it is bumped before the
	// committed items leave unsynced.
	commitGen atomic.Uint64

	itMu             sync.Mutex // guards the shared queue iterator
	it               *pebble.Iterator
	itGen            uint64
	itLower, itUpper []byte

	// unsynced lists the changes with puts that are not yet committed, in
	// write order, so that Read sees the frontier's own writes at once (the
	// frontier counts an item as queued the moment it puts it); unsyncedN
	// counts their items per host, so that Read scans unsynced only for a
	// host that has some. Neither is copied per item: a commit group
	// leaves from the front.
	unsynced  []*frontier.Change
	unsyncedN map[string]int32
}

type pending struct {
	ch   *frontier.Change
	done chan error
}

// New starts a Store's committer on db.
func New(db *store.DB, opts Options) *Store {
	if opts.QueueLen <= 0 {
		opts.QueueLen = 4096
	}
	if opts.MaxGroup <= 0 {
		opts.MaxGroup = 512
	}
	s := &Store{
		db:        db,
		opts:      opts,
		changes:   make(chan pending, opts.QueueLen),
		stopped:   make(chan struct{}),
		unsyncedN: make(map[string]int32),
	}
	go s.commitLoop()
	return s
}

// ErrClosed is the outcome of a Write after Close.
var ErrClosed = errors.New("frontierdb: store closed")

// Write implements frontier.Store.
func (s *Store) Write(ch *frontier.Change) <-chan error {
	done := make(chan error, 1)
	s.mu.Lock()
	closed, err := s.closed, s.err
	s.mu.Unlock()
	switch {
	case closed:
		err = ErrClosed
	case err != nil:
	default:
		if len(ch.Put) > 0 {
			s.mu.Lock()
			for i := range ch.Put {
				s.unsyncedN[ch.Put[i].Host]++
			}
			s.unsynced = append(s.unsynced, ch)
			s.mu.Unlock()
		}
		s.changes <- pending{ch, done}
		return done
	}
	if b, ok := ch.Attach.(*store.Batch); ok {
		b.Close()
	}
	done <- err
	close(done)
	return done
}

// Close commits every change written so far and stops the committer.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	s.closed = true
	s.mu.Unlock()
	close(s.changes)
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

// commitLoop applies the changes, group by group in write order, and hands
// each applied group to syncLoop, which makes it durable and acknowledges
// it: the fsync of one group overlaps the encoding and applying of the next.
func (s *Store) commitLoop() {
	synced := make(chan []pending, syncQueueLen)
	syncDone := make(chan struct{})
	go s.syncLoop(synced, syncDone)
	defer func() {
		close(synced)
		<-syncDone
		close(s.stopped)
	}()
	for p := range s.changes {
		group := make([]pending, 1, s.opts.MaxGroup)
		group[0] = p
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
		err := s.apply(group)
		// Applied changes are visible to Read in the store.
		s.commitGen.Add(1)
		s.forget(group)
		if err != nil {
			s.ack(group, err)
			continue
		}
		synced <- group
	}
}

// syncQueueLen bounds the applied groups waiting for an fsync.
const syncQueueLen = 64

// syncLoop makes applied groups durable: one WAL fsync for every group
// applied before it starts, then their acknowledgements.
func (s *Store) syncLoop(applied <-chan []pending, done chan<- struct{}) {
	defer close(done)
	var groups [][]pending
	for g := range applied {
		groups = append(groups[:0], g)
	drain:
		for {
			select {
			case g, ok := <-applied:
				if !ok {
					break drain
				}
				groups = append(groups, g)
			default:
				break drain
			}
		}
		err := s.db.SyncWAL()
		if err != nil {
			err = fmt.Errorf("frontierdb: sync: %w", err)
			s.setErr(err)
		}
		for _, g := range groups {
			s.ack(g, err)
		}
		clear(groups)
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
	return len(ch.Put)*2 + len(ch.Del) + len(ch.Hosts) + len(ch.Drop)
}

// forget drops the changes of a committed (or failed) group from
// unsynced: they are on disk now (or the crawl is stopping). Changes are
// committed in write order, so they are at the front of unsynced.
func (s *Store) forget(group []pending) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, p := range group {
		if len(p.ch.Put) == 0 {
			continue
		}
		if n >= len(s.unsynced) || s.unsynced[n] != p.ch {
			panic("frontierdb: changes committed out of write order")
		}
		n++
		for i := range p.ch.Put {
			h := p.ch.Put[i].Host
			if c := s.unsyncedN[h] - 1; c > 0 {
				s.unsyncedN[h] = c
			} else {
				delete(s.unsyncedN, h)
			}
		}
	}
	clear(s.unsynced[:n])
	s.unsynced = s.unsynced[n:]
	if len(s.unsynced) == 0 {
		s.unsynced = s.unsynced[:0:0]
	}
}

// apply encodes group into batches and applies them as one, without
// waiting for durability.
func (s *Store) apply(group []pending) error {
	s.mu.Lock()
	failed := s.err
	s.mu.Unlock()
	batches := make([]*store.Batch, 0, len(group))
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
		return failed
	}
	var err error
	for i, p := range group {
		if err = encodeChange(batches[i], p.ch); err != nil {
			break
		}
	}
	if err == nil {
		err = s.db.ApplyGroup(batches)
	} else {
		for _, b := range batches {
			b.Close()
		}
	}
	if err != nil {
		err = fmt.Errorf("frontierdb: commit %d changes: %w", len(group), err)
		s.setErr(err)
	}
	return err
}

func encodeChange(b *store.Batch, ch *frontier.Change) error {
	for _, h := range ch.Drop {
		prefix := store.QueuePrefix(h)
		if err := b.DeleteRange(prefix, store.PrefixEnd(prefix)); err != nil {
			return err
		}
	}
	for _, it := range ch.Del {
		if err := b.Delete(store.QueueKey(it.Host, uint8(it.Level), it.Seq)); err != nil {
			return err
		}
	}
	var buf []byte
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
	return nil
}

// Read implements frontier.Store.
func (s *Store) Read(host string, level int, after uint64, n int) ([]frontier.Item, error) {
	if after == ^uint64(0) {
		return nil, nil
	}
	lower := store.QueueKey(host, uint8(level), after+1)
	upper := store.PrefixEnd(store.QueueKey(host, uint8(level), 0)[:len(lower)-8])
	// Items not yet committed are the host's newest: take them from memory
	// after what is on disk, skipping any that were committed meanwhile.
	// The copy is taken before the iterator's snapshot: an item committed
	// in between is then in one or the other, and an item missing from
	// both was put after the copy, so its Seq is above all returned and a
	// later Read finds it.
	s.mu.Lock()
	var mem []frontier.Item
	if s.unsyncedN[host] > 0 {
		for _, ch := range s.unsynced {
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
	it, err := s.iterator()
	if err != nil {
		return nil, err
	}
	// The slices given to SetBounds must live until the next SetBounds.
	s.itLower, s.itUpper = lower, upper
	it.SetBounds(s.itLower, s.itUpper)
	out := make([]frontier.Item, 0, min(n, 64))
	for ok := it.First(); ok && len(out) < n; ok = it.Next() {
		_, lvl, seq, err := store.DecodeQueueKey(it.Key())
		if err != nil {
			return out, fmt.Errorf("frontierdb: read %s: %w", host, err)
		}
		item, err := decodeItem(it.Value())
		if err != nil {
			return out, fmt.Errorf("frontierdb: read %s seq %d: %w", host, seq, err)
		}
		item.Host, item.Level, item.Seq = host, int(lvl), seq
		out = append(out, item)
	}
	if err := it.Error(); err != nil {
		return out, err
	}
	for _, x := range mem {
		if len(out) >= n {
			break
		}
		if len(out) == 0 || x.Seq > out[len(out)-1].Seq {
			out = append(out, x)
		}
	}
	return out, nil
}

// iterator returns the shared queue iterator, made anew if a commit has
// completed since it was made (a Pebble iterator sees the store as it was
// when it was made). Reads of neighbouring hosts between two commits reuse
// it, which saves re-reading index blocks. s.itMu must be held.
func (s *Store) iterator() (*pebble.Iterator, error) {
	gen := s.commitGen.Load()
	if s.it != nil && s.itGen == gen {
		return s.it, nil
	}
	if s.it != nil {
		s.it.Close()
		s.it = nil
	}
	prefix := store.KindPrefix(store.KindQueue)
	it, err := s.db.NewIter(prefix)
	if err != nil {
		return nil, err
	}
	s.it, s.itGen = it, gen
	return it, nil
}

// Load implements frontier.Store: one streaming pass over the host states
// merged with one over the queue keys (which give each host's counts and
// next seq), both in (partition, host) order.
func (s *Store) Load(fn func(frontier.HostState) error) error {
	hit, err := s.db.NewIter(store.KindPrefix(store.KindHost))
	if err != nil {
		return err
	}
	defer hit.Close()
	qit, err := s.db.NewIter(store.KindPrefix(store.KindQueue))
	if err != nil {
		return err
	}
	defer qit.Close()
	hOK, qOK := hit.First(), qit.First()
	var hk, qk store.Key
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
		// The host's queue keys, if any, follow in the same order.
		for qOK && qk.Host == h.Host {
			for len(h.Queued) <= int(qk.Level) {
				h.Queued = append(h.Queued, 0)
			}
			h.Queued[qk.Level]++
			h.NextSeq = max(h.NextSeq, qk.Seq)
			qOK = qit.Next()
			if qOK, err = decode(qOK, qit.Key(), &qk); err != nil {
				return err
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
func (s *Store) QueueLen() (int, error) {
	it, err := s.db.NewIter(store.KindPrefix(store.KindQueue))
	if err != nil {
		return 0, err
	}
	defer it.Close()
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		n++
	}
	return n, it.Error()
}

var _ frontier.Store = (*Store)(nil)
