package frontier

import "fmt"

// A host's queue counted per job (HostQueue), consistent with its
// HostInfo of the same moment, reading the Store without the lock.

// HostJobs is a host's items counted per job (HostQueue).
type HostJobs struct {
	// Queued counts the items waiting, in memory or still only in the
	// Store; InFlight the items leased out. A job with none is absent.
	Queued, InFlight map[uint32]int
	// Complete is false if not every item was counted: the host had more
	// unread items than HostQueue was allowed to read, or its queue moved
	// too fast for a count of one moment.
	Complete bool
}

// hostQueueTries bounds HostQueue's counts: a count is taken again when
// the Store no longer holds what was unread when it began.
const hostQueueTries = 4

// HostQueue returns what the frontier knows of host (as Host does) with
// its items counted per job, all figures of one moment: while Complete,
// HostJobs.Queued sums to HostInfo.Queued and HostJobs.InFlight to
// HostInfo.InFlight. The items in memory and the leases out are counted
// under the frontier's lock, with the host's place in its queue; the items
// that were then still only in the Store are read after, without the lock
// (as a refill reads them), up to maxRead of them: those after what was
// read into memory and no later than the host's last item of that moment.
// Since the Store holds every item put before the read, and an item
// leaves it only once read into memory, it holds each of them, unless it
// was read, leased and completed meanwhile; then fewer are found than
// were unread, and the count is taken again (a few times, then reported
// not Complete). For a host the frontier does not know, every stored item
// is counted as queued, and the bool is false.
func (f *Frontier) HostQueue(host string, maxRead int) (HostInfo, HostJobs, bool, error) {
	var (
		hi HostJobs
		in HostInfo
	)
	for try := 0; ; try++ {
		var snap hostSnapshot
		known := f.snapshotHost(host, &snap)
		if known {
			in = snap.info
		}
		hi = HostJobs{Queued: snap.queued, InFlight: snap.inFlight, Complete: true}
		c, err := f.countUnread(host, &snap, hi.Queued, maxRead)
		if err != nil {
			return in, hi, known, fmt.Errorf("frontier: count the queue of %s: %w", host, err)
		}
		if c != unreadMoved || try == hostQueueTries-1 {
			hi.Complete = c == unreadExact
			return in, hi, known, nil
		}
	}
}

// hostSnapshot is one host's queue as HostQueue found it under f.mu.
type hostSnapshot struct {
	info             HostInfo
	queued, inFlight map[uint32]int
	// after and unread are, per level, the highest Seq read into memory
	// and the items after it in the Store (-1: every stored item, the
	// host being unknown); last is the host's highest Seq.
	after  [maxLevels]uint64
	unread [maxLevels]int32
	last   uint64
}

// snapshotHost fills s with host's items in memory and leases, counted
// per job, and where its unread items lie; false if the host is unknown.
func (f *Frontier) snapshotHost(host string, s *hostSnapshot) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	s.queued, s.inFlight = map[uint32]int{}, map[uint32]int{}
	h := f.hosts.find(host)
	if h == nil {
		for l := range s.unread {
			s.unread[l] = -1
		}
		s.last = ^uint64(0)
		return false
	}
	s.info = f.info(h, f.clock.mono(f.opts.Now()))
	for l := range maxLevels {
		for _, it := range f.win(h, l) {
			s.queued[it.Job]++
		}
	}
	for _, l := range f.leases {
		if l.host == h && !l.done {
			s.inFlight[l.Item.Job]++
		}
	}
	s.after, s.unread, s.last = h.readSeq, h.unread, h.nextSeq
	return true
}

// The outcomes of countUnread.
type unreadCount uint8

const (
	unreadExact unreadCount = iota // as many as the snapshot says
	unreadMoved                    // another number: the queue moved
	unreadCut                      // more than maxRead
)

// countUnread adds to queued, per job, the items s says were unread,
// reading at most maxRead of them.
func (f *Frontier) countUnread(host string, s *hostSnapshot, queued map[uint32]int, maxRead int) (unreadCount, error) {
	const batch = 1024
	out := unreadExact
	for l := range f.opts.Levels {
		want := int(s.unread[l])
		if want == 0 {
			continue
		}
		found, after := 0, s.after[l]
		for after < s.last {
			if maxRead <= 0 {
				return unreadCut, nil
			}
			n := min(batch, maxRead)
			items, err := f.opts.Store.Read(host, l, after, n)
			if err != nil {
				return out, err
			}
			maxRead -= len(items)
			for _, it := range items {
				if it.Seq > s.last {
					after = s.last
					break
				}
				queued[it.Job]++
				found++
				after = it.Seq
			}
			if len(items) < n || found == want {
				break
			}
		}
		if want >= 0 && found != want {
			out = unreadMoved
		}
	}
	return out, nil
}
