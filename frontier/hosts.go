package frontier

import (
	"container/heap"
	"encoding/binary"
	"hash/maphash"
	"math"
	"time"
	"unsafe"
)

// A crawl knows millions of hosts, and the garbage collector would visit
// every pointer in their states at every cycle. So host states hold no
// pointers: they live in fixed-size chunks (a pointer per chunk, not per
// host), their names in an append-only byte arena, their index is a map
// from a 64-bit name hash to a hostID (no string keys), and the ready heap
// holds hostIDs. A *hostState is stable once made (chunks never move) and
// may be held while f.mu is.

// hostID numbers hosts in the order they became known, from 0.
type hostID int32

// hostState is what the frontier knows of one host. No pointers (see above).
type hostState struct {
	id   hostID
	part Partition
	dead bool
	// deadWhy is why a dead host's items are dropped
	deadWhy DropReason
	parked  bool
	active  bool // counted in Frontier.active
	// refilling: a window at refillLevel is queued to be read, or being
	// read (out of the heap).
	refilling   bool
	refillLevel uint8
	spare       bool // holds an item read past WindowBudget (Frontier.spare) until its next take
	policy      bool // has an operator policy (Frontier.policies)
	paused      bool // its policy pauses it: not leased
	sweeping    bool // GiveUp sweeps its queue (Frontier.sweeps)
	// strikes counts its latest requests in a row that failed (429, 503,
	// time-outs, failures; at most 255), for GiveUp.
	strikes uint8
	gapWhy  GapReason
	failWay failWay // how its latest fetches failed (Frontier.failed)
	// fenced: its partition is being loaded or released
	// (Options.Partitioned): it is not leased and reads no window.
	fenced bool
	free   bool // the slot holds no host (hostTable.remove); its id is reused
	name   nameRef
	ip     int32 // index+1 into Frontier.ips; 0: not resolved yet
	window int32 // index+1 into Frontier.windows; 0: no items held

	readSeq [maxLevels]uint64 // per level, the highest Seq read into the window
	unread  [maxLevels]int32  // per level, items in the Store after readSeq
	total   [maxLevels]int32  // per level, items in the Store (leased ones included)

	nextSeq     uint64
	tick        uint64 // drives the biased level selector
	nextAllowed mono   // when the host may be contacted next
	lastDone    mono   // when its last request ended (start-up after a restart); noTime if never
	crawlDelay  time.Duration
	backoff     time.Duration
	inFlight    int32
	fails       int32 // its latest fetches in a row that failed as failWay
	leased      int32 // towards HostBudget
	dups        int32 // of the leased, completed as duplicates (DuplicateAllowance)
	heapIdx     int32 // index in ready, -1 if not there
	due         int32 // how Frontier.due holds it (dueCount)
	runIdx      int32 // index in runnable, -1 if not there
	runKey      mono  // its order in runnable (see Frontier.run)
}

// failWay is how a fetch ended without a response, for Options.FailLimit.
type failWay uint8

const (
	failNone    failWay = iota // a response, or no fetch yet
	failTimeout                // Outcome.Timeout
	failNetwork                // Outcome.Failed without a Status
)

func (w failWay) String() string {
	switch w {
	case failTimeout:
		return "timeout"
	case failNetwork:
		return "network"
	}
	return ""
}

// key orders h in the ready heap: its next allowed time, or noTime (first)
// for a dead host, whose queue is drained without contacting it.
func (h *hostState) key() mono {
	if h.draining() {
		return noTime
	}
	return h.nextAllowed
}

// draining reports that h's queue is being emptied without contacting it:
// dropped (dead), or swept by GiveUp.
func (h *hostState) draining() bool { return h.dead || h.sweeping }

// hostChunk is the number of host states allocated together.
const hostChunk = 4096

// hostTable holds every host's state. Not safe for concurrent use: the
// frontier's lock guards it.
type hostTable struct {
	chunks [][]hostState // each of length hostChunk
	n      int
	names  nameArena
	hash   func(string) uint64
	// byHash finds a host by the hash of its name; collided holds the
	// names whose hash an earlier host's name already had.
	byHash   map[uint64]hostID
	collided map[string]hostID
	// free lists the ids of removed hosts (Options.Partitioned), which
	// new hosts take first.
	free []hostID
}

func newHostTable() *hostTable {
	seed := maphash.MakeSeed()
	return &hostTable{
		hash:   func(s string) uint64 { return maphash.String(seed, s) },
		byHash: make(map[uint64]hostID),
	}
}

// len is the number of hosts.
func (t *hostTable) len() int { return t.n - len(t.free) }

// end is one past the highest id given out (free slots included).
func (t *hostTable) end() hostID { return hostID(t.n) }

// at returns the state of host id.
func (t *hostTable) at(id hostID) *hostState {
	return &t.chunks[id/hostChunk][id%hostChunk]
}

// name returns h's name. The string shares the arena's memory, which is
// never written again.
func (t *hostTable) name(h *hostState) string { return t.names.get(h.name) }

// find returns the host called name, or nil.
func (t *hostTable) find(name string) *hostState {
	if id, ok := t.byHash[t.hash(name)]; ok {
		if h := t.at(id); t.name(h) == name {
			return h
		}
	}
	if id, ok := t.collided[name]; ok {
		return t.at(id)
	}
	return nil
}

// add makes a state for a new host called name (find returned nil).
func (t *hostTable) add(name string) *hostState {
	if t.n == math.MaxInt32 {
		panic("frontier: more than 2^31-1 hosts")
	}
	var id hostID
	if n := len(t.free); n > 0 {
		id = t.free[n-1]
		t.free = t.free[:n-1]
	} else {
		id = hostID(t.n)
		if t.n%hostChunk == 0 {
			t.chunks = append(t.chunks, make([]hostState, hostChunk))
		}
		t.n++
	}
	h := t.at(id)
	*h = hostState{id: id, part: partOf(name), name: t.names.add(name), heapIdx: -1, runIdx: -1, lastDone: noTime}
	sum := t.hash(name)
	if _, taken := t.byHash[sum]; taken {
		if t.collided == nil {
			t.collided = make(map[string]hostID)
		}
		t.collided[t.name(h)] = id
	} else {
		t.byHash[sum] = id
	}
	return h
}

// remove forgets h: its slot is cleared and its id given to the next
// host added. Its name stays in the arena (strings handed out stay
// valid), so a host table whose hosts come and go grows by their names.
func (t *hostTable) remove(h *hostState) {
	name := t.name(h)
	if id, ok := t.collided[name]; ok && id == h.id {
		delete(t.collided, name)
	} else if sum := t.hash(name); t.byHash[sum] == h.id {
		delete(t.byHash, sum)
	}
	id := h.id
	*h = hostState{id: id, free: true, heapIdx: -1, runIdx: -1, lastDone: noTime}
	t.free = append(t.free, id)
}

// each calls fn for every host in id order.
func (t *hostTable) each(fn func(h *hostState)) {
	for id := range hostID(t.n) {
		if h := t.at(id); !h.free {
			fn(h)
		}
	}
}

// nameRef locates a name in a nameArena.
type nameRef struct {
	chunk, off, len uint32
}

// nameChunk is the size of a nameArena chunk; a longer name gets a chunk
// of its own.
const nameChunk = 1 << 20

// nameArena stores strings back to back in chunks that are appended to and
// never rewritten, so a string handed out stays valid.
type nameArena struct {
	chunks [][]byte
}

func (a *nameArena) add(s string) nameRef {
	last := len(a.chunks) - 1
	if last < 0 || len(a.chunks[last])+len(s) > cap(a.chunks[last]) {
		a.chunks = append(a.chunks, make([]byte, 0, max(nameChunk, len(s))))
		last++
	}
	c := a.chunks[last]
	ref := nameRef{chunk: uint32(last), off: uint32(len(c)), len: uint32(len(s))}
	a.chunks[last] = append(c, s...)
	return ref
}

func (a *nameArena) get(r nameRef) string {
	if r.len == 0 {
		return ""
	}
	return unsafe.String(&a.chunks[r.chunk][r.off], int(r.len))
}

// mono is a point in time as nanoseconds since the frontier's epoch (its
// clock's reading at New), so that host clocks hold no *time.Location.
// noTime stands for the zero time.Time: never.
type mono int64

const noTime mono = math.MinInt64

// epochClock converts between time.Time and mono.
type epochClock struct {
	epoch time.Time
}

func (c epochClock) mono(t time.Time) mono {
	if t.IsZero() {
		return noTime
	}
	return mono(t.Sub(c.epoch))
}

func (c epochClock) time(m mono) time.Time {
	if m == noTime {
		return time.Time{}
	}
	return c.epoch.Add(time.Duration(m))
}

// heapEntry is a host's place in the ready or the runnable heap: its id
// with what orders it, copied from its state when it is pushed or fixed
// (a host's key changes only just before its schedule, which fixes it).
// Comparing two entries so reads neither host's state nor, mostly, its
// name: with many hosts each was a cache miss, and Lease and Complete sift
// these heaps under the frontier's lock. 16 B a host in a heap (the ids
// alone took 4).
type heapEntry struct {
	key mono // hostState.key() (ready) or runKey (runnable)
	// tie orders entries of equal keys as far as it can: the host's
	// partition in the top byte, then its name's first 3 bytes
	// (zero-padded: 0 is the least byte). Entries of equal ties compare
	// their names whole.
	tie uint32
	id  hostID
}

// A partition fits in a tie's top byte.
var _ [256 - partCount]struct{}

// entry is h's heap entry with key.
func (t *hostTable) entry(h *hostState, key mono) heapEntry {
	var p [4]byte
	p[0] = byte(h.part)
	copy(p[1:], t.name(h))
	return heapEntry{key: key, tie: binary.BigEndian.Uint32(p[:]), id: h.id}
}

// less orders two entries by key; ties (every host ready at start-up) in
// the store's key order, partition then name, so that consecutive window
// reads touch neighbouring keys.
func (t *hostTable) less(a, b *heapEntry) bool {
	if a.key != b.key {
		return a.key < b.key
	}
	if a.tie != b.tie {
		return a.tie < b.tie
	}
	return t.name(t.at(a.id)) < t.name(t.at(b.id))
}

// hostHeap is a min-heap of hosts by key (next allowed time).
type hostHeap struct {
	es []heapEntry
	t  *hostTable
}

func (q *hostHeap) Len() int           { return len(q.es) }
func (q *hostHeap) Less(i, j int) bool { return q.t.less(&q.es[i], &q.es[j]) }
func (q *hostHeap) Swap(i, j int) {
	q.es[i], q.es[j] = q.es[j], q.es[i]
	q.t.at(q.es[i].id).heapIdx = int32(i)
	q.t.at(q.es[j].id).heapIdx = int32(j)
}
func (q *hostHeap) Push(x any) {
	h := x.(*hostState)
	h.heapIdx = int32(len(q.es))
	q.es = append(q.es, q.t.entry(h, h.key()))
}
func (q *hostHeap) Pop() any {
	h := q.t.at(q.es[len(q.es)-1].id)
	q.es = q.es[:len(q.es)-1]
	h.heapIdx = -1
	return h
}

// fix moves h, in the heap, to the place of its key now.
func (q *hostHeap) fix(h *hostState) {
	q.es[h.heapIdx].key = h.key()
	heap.Fix(q, int(h.heapIdx))
}

// top is the host with the earliest next allowed time; Len must be > 0.
func (q *hostHeap) top() *hostState { return q.t.at(q.es[0].id) }

// removeMoved takes out of the heap the hosts whose heapIdx was set to -1
// (Frontier.moveDue) and makes a heap of the rest, in O(n).
func (q *hostHeap) removeMoved() {
	rest := q.es[:0]
	for _, e := range q.es {
		if h := q.t.at(e.id); h.heapIdx >= 0 {
			h.heapIdx = int32(len(rest))
			rest = append(rest, e)
		}
	}
	clear(q.es[len(rest):])
	q.es = rest
	heap.Init(q)
}

// due counts the entries whose key is at or before now, and the dead
// hosts among them, visiting only those entries and their children: a
// child's key is never before its parent's, so the due entries form a
// subtree at the root. At most 2 x due + 1 entries are visited.
func (q *hostHeap) due(now mono) (due, dead int) {
	if len(q.es) == 0 {
		return 0, 0
	}
	stack := []int{0}
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if q.es[i].key > now {
			continue
		}
		due++
		if q.t.at(q.es[i].id).draining() {
			dead++
		}
		for _, c := range [2]int{2*i + 1, 2*i + 2} {
			if c < len(q.es) {
				stack = append(stack, c)
			}
		}
	}
	return due, dead
}

// Values of hostState.due other than a place in the later heap.
const (
	dueNone    int32 = 0  // not in the ready heap
	dueCounted int32 = -1 // in the ready heap, counted due
	dueDead    int32 = -2 // in the ready heap, dead (always due), counted
)

// dueCount splits the ready heap's hosts at a mark, the latest time
// Stats asked about: it counts those whose key is at or before the mark
// (due: ready, or dead and to be drained) and keeps the others in a
// min-heap of their own (later), out of which Stats moves the hosts that
// have come due since. So Stats costs O(log n) per host that came due
// since the last call, not a walk of every due host (47 ms with a
// million hosts ready, under the frontier's lock). Invariant: every host
// of the ready heap is either counted or in later, never both; schedule
// calls set wherever it moves a host in the ready heap, and a host's key
// changes only just before its schedule, as the ready heap itself needs.
// A host's hostState.due says where it is: dueNone, dueCounted, dueDead,
// or its index+1 in later.
type dueCount struct {
	mark      mono
	due, dead int       // hosts counted (dead ones among them)
	later     laterHeap // hosts of the ready heap whose key is after mark
}

// set brings h's place in d in line with its place in the ready heap.
func (d *dueCount) set(h *hostState) {
	if h.due < 0 {
		d.uncount(h) // and counted again below if still due: dead may have changed
	}
	switch {
	case h.heapIdx >= 0 && h.key() > d.mark:
		if h.due > 0 {
			heap.Fix(&d.later, int(h.due-1))
		} else {
			heap.Push(&d.later, h)
		}
		return
	case h.due > 0:
		heap.Remove(&d.later, int(h.due-1))
	}
	if h.heapIdx >= 0 {
		d.count(h)
	}
}

// removeMany does what set does for each of hosts, just taken out of the
// ready heap (Frontier.moveDue), rebuilding later in O(n) rather than
// taking each out in O(log n) if many of them are in it.
func (d *dueCount) removeMany(hosts []hostID) {
	inLater := 0
	for _, id := range hosts {
		if h := d.later.t.at(id); h.due > 0 {
			inLater++
		} else if h.due < 0 {
			d.uncount(h)
		}
	}
	if 16*inLater < d.later.Len() {
		for _, id := range hosts {
			if h := d.later.t.at(id); h.due > 0 {
				heap.Remove(&d.later, int(h.due-1))
			}
		}
		return
	}
	rest := d.later.ids[:0]
	for _, id := range d.later.ids {
		h := d.later.t.at(id)
		if h.heapIdx < 0 {
			h.due = dueNone
			continue
		}
		rest = append(rest, id)
		h.due = int32(len(rest))
	}
	clear(d.later.ids[len(rest):])
	d.later.ids = rest
	heap.Init(&d.later)
}

func (d *dueCount) count(h *hostState) {
	d.due++
	h.due = dueCounted
	if h.draining() {
		d.dead++
		h.due = dueDead
	}
}

func (d *dueCount) uncount(h *hostState) {
	d.due--
	if h.due == dueDead {
		d.dead--
	}
	h.due = dueNone
}

// at returns the counts of hosts due at now and the dead among them,
// moving the mark to now. ok is false if now is before the mark (a clock
// that went back): then the caller counts by walking the ready heap.
func (d *dueCount) at(now mono) (due, dead int, ok bool) {
	if now < d.mark {
		return 0, 0, false
	}
	d.mark = now
	for d.later.Len() > 0 && d.later.top().key() <= now {
		d.count(heap.Pop(&d.later).(*hostState))
	}
	return d.due, d.dead, true
}

// laterHeap is a min-heap of hosts by key, with their index+1 in
// hostState.due.
type laterHeap struct {
	ids []hostID
	t   *hostTable
}

func (q *laterHeap) Len() int { return len(q.ids) }
func (q *laterHeap) Less(i, j int) bool {
	return q.t.at(q.ids[i]).key() < q.t.at(q.ids[j]).key()
}
func (q *laterHeap) Swap(i, j int) {
	q.ids[i], q.ids[j] = q.ids[j], q.ids[i]
	q.t.at(q.ids[i]).due = int32(i + 1)
	q.t.at(q.ids[j]).due = int32(j + 1)
}
func (q *laterHeap) Push(x any) {
	h := x.(*hostState)
	q.ids = append(q.ids, h.id)
	h.due = int32(len(q.ids))
}
func (q *laterHeap) Pop() any {
	h := q.t.at(q.ids[len(q.ids)-1])
	q.ids = q.ids[:len(q.ids)-1]
	h.due = dueNone
	return h
}
func (q *laterHeap) top() *hostState { return q.t.at(q.ids[0]) }

// runHeap is a min-heap of due hosts by runKey (see Frontier.run), ties
// in the store's key order as in hostHeap, with their index in
// hostState.runIdx.
type runHeap struct {
	es []heapEntry
	t  *hostTable
}

func (q *runHeap) Len() int           { return len(q.es) }
func (q *runHeap) Less(i, j int) bool { return q.t.less(&q.es[i], &q.es[j]) }
func (q *runHeap) Swap(i, j int) {
	q.es[i], q.es[j] = q.es[j], q.es[i]
	q.t.at(q.es[i].id).runIdx = int32(i)
	q.t.at(q.es[j].id).runIdx = int32(j)
}
func (q *runHeap) Push(x any) {
	h := x.(*hostState)
	h.runIdx = int32(len(q.es))
	q.es = append(q.es, q.t.entry(h, h.runKey))
}
func (q *runHeap) Pop() any {
	h := q.t.at(q.es[len(q.es)-1].id)
	q.es = q.es[:len(q.es)-1]
	h.runIdx = -1
	return h
}
func (q *runHeap) top() *hostState { return q.t.at(q.es[0].id) }
