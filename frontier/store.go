package frontier

import "sync"

// Store holds the queued URLs of every host, one FIFO queue per host and
// priority level. The frontier keeps only a small window of each active
// host's queue in memory and asks the Store for more as the window drains,
// so an implementation on disk (issue 3: Pebble, keyed by partition, host,
// level and a sequence number) keeps the frontier's memory independent of
// the number of queued URLs.
//
// The frontier calls a Store from one goroutine at a time (under its own
// lock); implementations need not be safe for concurrent use.
type Store interface {
	// Push appends items, in order, to the tail of host's queue at level.
	Push(host string, level int, items []Item) error
	// Pop removes up to n items from the head of host's queue at level and
	// returns them in order. An empty queue returns no items and no error.
	Pop(host string, level int, n int) ([]Item, error)
	// Drop discards every queued item of host at every level and reports
	// how many there were.
	Drop(host string) (int, error)
}

// MemStore is a Store in memory. Its zero value is ready to use. It is the
// store for tests and for crawls small enough to fit in memory.
type MemStore struct {
	mu     sync.Mutex
	queues map[string][][]Item // host → level → FIFO
}

// Push implements Store.
func (s *MemStore) Push(host string, level int, items []Item) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.queues == nil {
		s.queues = make(map[string][][]Item)
	}
	levels := s.queues[host]
	for len(levels) <= level {
		levels = append(levels, nil)
	}
	levels[level] = append(levels[level], items...)
	s.queues[host] = levels
	return nil
}

// Pop implements Store.
func (s *MemStore) Pop(host string, level int, n int) ([]Item, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	levels := s.queues[host]
	if level >= len(levels) {
		return nil, nil
	}
	q := levels[level]
	n = min(n, len(q))
	out := make([]Item, n)
	copy(out, q[:n])
	clear(q[:n]) // let the strings go
	if n == len(q) {
		levels[level] = nil
	} else {
		levels[level] = q[n:]
	}
	return out, nil
}

// Drop implements Store.
func (s *MemStore) Drop(host string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, q := range s.queues[host] {
		n += len(q)
	}
	delete(s.queues, host)
	return n, nil
}
