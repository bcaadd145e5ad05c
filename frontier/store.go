package frontier

import (
	"slices"
	"sort"
	"strings"
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
// every item that was leased, with no lease table (at-least-once). An item
// of a paused job is moved, when it reaches the head of its host's queue,
// to a held range, from which ResumeJob streams it back (ReadHeld).
//
// Every Change carries the counters of the jobs it touched (Change.Jobs),
// one JobState per job and partition (partition.Of of the items' hosts),
// as they stand after the change; a Store commits them with it, so that
// after a crash that keeps a prefix of the changes the counters Load
// returns agree with the queues and held items it keeps. Counters are kept
// per partition so that they move with it (a fleet's checkpoint): a job's
// totals are the sum over the partitions loaded.
//
// The frontier calls Write with its own lock held, in the order the
// changes happen, and a Store must apply them in that order; Read and
// ReadHeld run concurrently with Write. Write must not
// wait for I/O; it returns a channel that yields the outcome (nil once the
// change is durable) and is then closed.
type Store interface {
	// Read returns up to n items of host's queue at level whose Seq is
	// greater than after, in Seq order, without removing them. The
	// frontier calls it without its lock held, from its refillers, and it
	// must see every change written before the call (Write's order). The
	// slice returned is the caller's: the frontier keeps it as the
	// host's window.
	Read(host string, level int, after uint64, n int) ([]Item, error)
	// ReadHeld returns up to n held items of job (Change.Hold) that come
	// after the item after in the store's order (nil: from the first), in
	// that order, without removing them. The frontier calls it without its
	// lock held, once every change that held an item of job is applied.
	ReadHeld(job uint32, after *Item, n int) ([]Item, error)
	// Write applies ch after every change written before it.
	Write(ch *Change) <-chan error
	// Load calls hosts with the state of every host that has a stored
	// state or queued items, at start-up, streaming: a Store must not read
	// all hosts into memory first. Queued counts the host's items per level
	// in the store, and NextSeq is above every Seq of them (whatever the
	// stored state says; the frontier writes a host's state with every
	// change that holds one of its items, so that a held item's Seq is
	// never given again). Then it calls jobs with the last counters
	// written of every job in every partition (Change.Jobs). hosts and
	// jobs may be nil: then nothing is read for them
	// (Options.Partitioned).
	Load(hosts func(HostState) error, jobs func(JobState) error) error
	// LoadPartition calls hosts, as Load does (same Queued and NextSeq),
	// with the state of every host of partition p (partition.Of), and of
	// no other host, streaming, in the store's order; then jobs with the
	// counters of every job in p. The frontier calls it without its lock
	// held, for a partition it does not serve: no change written since
	// touches p.
	LoadPartition(p Partition, hosts func(HostState) error, jobs func(JobState) error) error
}

// Change is one atomic step of the frontier's durable state.
type Change struct {
	Put []Item // items queued (Seq set)
	Del []Item // items done or dropped (Host, Level and Seq identify them)
	// Hold lists items set aside while their job is paused: each leaves
	// its host's queue and enters the held range under the same Host,
	// Level and Seq.
	Hold []Item
	// Unhold lists held items that leave the held range (resumed, under a
	// new Seq in Put, or dropped).
	Unhold []Item
	// Hosts holds the new politeness state of the hosts whose clock or
	// budget changed (the completed lease's host). Putting items does not
	// write a host's state: Load derives Queued and NextSeq from the
	// queue itself, so discovering links on many hosts costs no extra
	// writes.
	Hosts []HostState
	// Jobs holds the counters of the jobs whose counters this change
	// altered, as they stand after it.
	Jobs []JobState
	// Attach is opaque to the frontier: a caller's writes (the URL-seen
	// keys of the items put) that a durable Store commits atomically with
	// the change.
	Attach any
}

// JobState is a job's durable counters over the items of one partition.
type JobState struct {
	Job  uint32
	Part Partition
	// Stored counts the job's items in the partition's hosts' queues:
	// queued and in flight (a restart offers the items in flight again).
	Stored int
	// Held counts the job's items of the partition in the held range.
	Held int
	// Dropped counts the job's items of the partition discarded: its
	// cancellation, a dead host, a spent host budget.
	Dropped int
}

// jobPart identifies a job's counters in one partition.
type jobPart struct {
	job  uint32
	part Partition
}

// HostState is a host's durable politeness and queue state.
type HostState struct {
	Host        string
	NextAllowed time.Time     // no fetch starts before this
	Backoff     time.Duration // current backoff delay, 0 if none
	CrawlDelay  time.Duration // from robots.txt
	Leased      int           // URLs leased towards the host budget
	Duplicates  int           // of those, pages completed as duplicates
	NextSeq     uint64        // Seq of the next item put
	Queued      []int         // items in the Store, per level
	Dead        bool          // queue dropped (drained lazily); later items are discarded
	// DeadReason is why a dead host was given up: DropHost, DropBudget,
	// DropDuplicates or DropFailing (HostInfo.DeadReason); 0 if the host
	// is not dead, or if its state was written without a reason (an older
	// store), which Load takes as DropHost, or as the host's budget if it
	// is spent.
	DeadReason DropReason
	// Why is the rule that set NextAllowed (HostInfo.DelayReason): a
	// restart keeps the reason a host waits, a Retry-After told from a
	// backoff. GapNone if the state was written without one (an older
	// store), which Load takes as backoff while Backoff is set.
	Why GapReason
}

// MemStore is a Store in memory. Its zero value is ready to use. It keeps
// host states too, so a Frontier can be "restarted" on the same MemStore
// in tests.
type MemStore struct {
	mu     sync.Mutex
	queues map[string][][]Item // host → level → items in Seq order
	held   map[heldRef]Item
	hosts  map[string]HostState
	jobs   map[jobPart]JobState
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

// heldRef identifies a held item in a MemStore.
type heldRef struct {
	host  string
	level int
	seq   uint64
}

func (a heldRef) compare(b heldRef) int {
	if c := strings.Compare(a.host, b.host); c != 0 {
		return c
	}
	if a.level != b.level {
		return a.level - b.level
	}
	return compareSeq(a.seq, b.seq)
}

// ReadHeld implements Store: held items in (host, level, seq) order.
func (s *MemStore) ReadHeld(job uint32, after *Item, n int) ([]Item, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var refs []heldRef
	for r, it := range s.held {
		if it.Job == job && (after == nil || r.compare(heldRef{after.Host, after.Level, after.Seq}) > 0) {
			refs = append(refs, r)
		}
	}
	slices.SortFunc(refs, heldRef.compare)
	out := make([]Item, 0, min(n, len(refs)))
	for _, r := range refs[:min(n, len(refs))] {
		out = append(out, s.held[r])
	}
	return out, nil
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
		s.held = make(map[heldRef]Item)
		s.jobs = make(map[jobPart]JobState)
	}
	del := func(it Item) {
		levels := s.queues[it.Host]
		if it.Level >= len(levels) {
			return
		}
		q := levels[it.Level]
		if i, ok := slices.BinarySearchFunc(q, it.Seq, func(x Item, seq uint64) int {
			return compareSeq(x.Seq, seq)
		}); ok {
			levels[it.Level] = slices.Delete(q, i, i+1)
		}
	}
	for _, it := range ch.Del {
		del(it)
	}
	for _, it := range ch.Hold {
		del(it)
		s.held[heldRef{it.Host, it.Level, it.Seq}] = it
	}
	for _, it := range ch.Unhold {
		delete(s.held, heldRef{it.Host, it.Level, it.Seq})
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
	for _, j := range ch.Jobs {
		s.jobs[jobPart{j.Job, j.Part}] = j
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
func (s *MemStore) Load(fn func(HostState) error, jobFn func(JobState) error) error {
	if fn != nil {
		if err := s.loadHosts(func(string) bool { return true }, fn); err != nil {
			return err
		}
	}
	if jobFn == nil {
		return nil
	}
	return s.loadJobs(func(Partition) bool { return true }, jobFn)
}

// loadJobs calls fn with the counters of every job in every partition
// that keep takes, in (partition, job) order.
func (s *MemStore) loadJobs(keep func(Partition) bool, fn func(JobState) error) error {
	s.mu.Lock()
	jobs := make([]JobState, 0, len(s.jobs))
	for _, j := range s.jobs {
		if keep(j.Part) {
			jobs = append(jobs, j)
		}
	}
	s.mu.Unlock()
	slices.SortFunc(jobs, func(a, b JobState) int {
		if a.Part != b.Part {
			return int(a.Part) - int(b.Part)
		}
		return compareSeq(uint64(a.Job), uint64(b.Job))
	})
	for _, j := range jobs {
		if err := fn(j); err != nil {
			return err
		}
	}
	return nil
}

// LoadPartition implements Store.
func (s *MemStore) LoadPartition(p Partition, fn func(HostState) error, jobFn func(JobState) error) error {
	if fn != nil {
		if err := s.loadHosts(func(host string) bool { return partOf(host) == p }, fn); err != nil {
			return err
		}
	}
	if jobFn == nil {
		return nil
	}
	return s.loadJobs(func(q Partition) bool { return q == p }, jobFn)
}

// Counters returns the counters last written of job id, per partition
// (tests).
func (s *MemStore) Counters(id uint32) map[Partition]JobState {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[Partition]JobState)
	for k, j := range s.jobs {
		if k.job == id {
			out[k.part] = j
		}
	}
	return out
}

// loadHosts calls fn with the state of every host that keep takes, in
// name order.
func (s *MemStore) loadHosts(keep func(host string) bool, fn func(HostState) error) error {
	s.mu.Lock()
	byName := make(map[string]HostState, len(s.hosts))
	for name, h := range s.hosts {
		if !keep(name) {
			continue
		}
		h.Queued = nil
		byName[name] = h
	}
	for name, levels := range s.queues {
		if !keep(name) {
			continue
		}
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

// Contents returns, per job, the items in the store's queues and in its
// held range (tests: the truth that a job's counters must agree with).
func (s *MemStore) Contents() (queued, held map[uint32]int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	queued, held = make(map[uint32]int), make(map[uint32]int)
	for _, levels := range s.queues {
		for _, q := range levels {
			for _, it := range q {
				queued[it.Job]++
			}
		}
	}
	for _, it := range s.held {
		held[it.Job]++
	}
	return queued, held
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
