package frontier

import (
	"slices"
	"sort"
	"sync"
	"time"
)

// Store holds the frontier's durable state: every queued item, one FIFO
// per host and priority level ordered by Seq, and each host's politeness
// state. The frontier keeps only a small window of each active host's
// queue in memory and reads more as the window drains, so a Store on disk
// keeps the frontier's memory independent of the number of queued URLs.
//
// An item stays in the Store from the Change that puts it until the Change
// that deletes it, which is the completion of its lease: a crash re-offers
// every item that was leased, with no lease table (at-least-once).
//
// The frontier calls Write with its own lock held, in the order the
// changes happen, and a Store must apply them in that order. Write must not
// wait for I/O; it returns a channel that yields the outcome (nil once the
// change is durable) and is then closed.
type Store interface {
	// Read returns up to n items of host's queue at level whose Seq is
	// greater than after, in Seq order, without removing them.
	Read(host string, level int, after uint64, n int) ([]Item, error)
	// Write applies ch after every change written before it.
	Write(ch *Change) <-chan error
	// Load calls fn with the state of every host that has a stored state
	// or queued items, at start-up, streaming: a Store must not read all
	// hosts into memory first. Queued counts the host's items per level in
	// the store, and NextSeq is above every Seq of them (whatever the stored
	// state says).
	Load(fn func(HostState) error) error
}

// Change is one atomic step of the frontier's durable state.
type Change struct {
	Put  []Item   // items queued (Seq set)
	Del  []Item   // items done (Host, Level and Seq identify them)
	Drop []string // hosts whose whole queue is deleted
	// Hosts holds the new politeness state of the hosts whose clock or
	// budget changed (the completed lease's host). Putting items does not
	// write a host's state: Load derives Queued and NextSeq from the
	// queue itself, so discovering links on many hosts costs no extra
	// writes.
	Hosts []HostState
	// Attach is opaque to the frontier: a caller's writes (the URL-seen
	// keys of the items put) that a durable Store commits atomically with
	// the change.
	Attach any
}

// HostState is a host's durable politeness and queue state.
type HostState struct {
	Host        string
	NextAllowed time.Time     // no fetch starts before this
	Backoff     time.Duration // current backoff delay, 0 if none
	CrawlDelay  time.Duration // from robots.txt
	Leased      int           // URLs leased towards the host budget
	NextSeq     uint64        // Seq of the next item put
	Queued      []int         // items in the Store, per level
	Dead        bool          // queue dropped; later items are discarded
}

// MemStore is a Store in memory. Its zero value is ready to use. It keeps
// host states too, so a Frontier can be "restarted" on the same MemStore
// in tests.
type MemStore struct {
	mu     sync.Mutex
	queues map[string][][]Item // host → level → items in Seq order
	hosts  map[string]HostState
	// WriteErr, if set, is the outcome of every Write (tests).
	WriteErr error
}

// Read implements Store.
func (s *MemStore) Read(host string, level int, after uint64, n int) ([]Item, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	levels := s.queues[host]
	if level >= len(levels) {
		return nil, nil
	}
	q := levels[level]
	i := sort.Search(len(q), func(i int) bool { return q[i].Seq > after })
	return slices.Clone(q[i:min(len(q), i+n)]), nil
}

// Write implements Store: the change is applied at once.
func (s *MemStore) Write(ch *Change) <-chan error {
	done := make(chan error, 1)
	if s.WriteErr != nil {
		done <- s.WriteErr
		close(done)
		return done
	}
	s.mu.Lock()
	if s.queues == nil {
		s.queues = make(map[string][][]Item)
		s.hosts = make(map[string]HostState)
	}
	for _, h := range ch.Drop {
		delete(s.queues, h)
	}
	for _, it := range ch.Del {
		levels := s.queues[it.Host]
		if it.Level >= len(levels) {
			continue
		}
		q := levels[it.Level]
		if i, ok := slices.BinarySearchFunc(q, it.Seq, func(x Item, seq uint64) int {
			return compareSeq(x.Seq, seq)
		}); ok {
			levels[it.Level] = slices.Delete(q, i, i+1)
		}
	}
	for _, it := range ch.Put {
		levels := s.queues[it.Host]
		for len(levels) <= it.Level {
			levels = append(levels, nil)
		}
		levels[it.Level] = append(levels[it.Level], it) // Seqs only grow
		s.queues[it.Host] = levels
	}
	for _, h := range ch.Hosts {
		h.Queued = slices.Clone(h.Queued)
		s.hosts[h.Host] = h
	}
	s.mu.Unlock()
	close(done)
	return done
}

func compareSeq(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Load implements Store.
func (s *MemStore) Load(fn func(HostState) error) error {
	s.mu.Lock()
	byName := make(map[string]HostState, len(s.hosts))
	for name, h := range s.hosts {
		h.Queued = nil
		byName[name] = h
	}
	for name, levels := range s.queues {
		h := byName[name]
		h.Host = name
		h.Queued = make([]int, len(levels))
		for l, q := range levels {
			h.Queued[l] = len(q)
			if len(q) > 0 {
				h.NextSeq = max(h.NextSeq, q[len(q)-1].Seq)
			}
		}
		byName[name] = h
	}
	hosts := make([]HostState, 0, len(byName))
	for _, h := range byName {
		hosts = append(hosts, h)
	}
	s.mu.Unlock()
	sort.Slice(hosts, func(i, j int) bool { return hosts[i].Host < hosts[j].Host })
	for _, h := range hosts {
		if err := fn(h); err != nil {
			return err
		}
	}
	return nil
}

// Len is the number of items queued in the store.
func (s *MemStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, levels := range s.queues {
		for _, q := range levels {
			n += len(q)
		}
	}
	return n
}
