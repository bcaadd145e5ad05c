package frontier

import (
	"fmt"
	"slices"
)

// Job accounting. Every item belongs to a job. The frontier counts each
// job's items as they move (queued, in flight, held, dropped): in memory
// per job (Job, O(1)), and durably per job and partition (JobState, carried
// by every change that moves them: write). A job's mode (JobMode) applies
// to its items as they reach the head of their host's queue: held while
// the job is paused, dropped once it is cancelled; SetJobState moves the
// held ones back or drops them.

// JobMode is what the frontier does with a job's items.
type JobMode uint8

// The job modes. A job the frontier has not been told of is active.
const (
	// JobActive: its items are leased.
	JobActive JobMode = iota
	// JobPaused: its items are set aside (held) as they reach the head of
	// their host's queue, until ResumeJob.
	JobPaused
	// JobCancelled: its items are dropped as they reach the head of their
	// host's queue, and its held items are dropped.
	JobCancelled
)

func (m JobMode) String() string {
	switch m {
	case JobActive:
		return "active"
	case JobPaused:
		return "paused"
	case JobCancelled:
		return "cancelled"
	}
	return fmt.Sprintf("JobMode(%d)", uint8(m))
}

// JobStats counts one job's items.
type JobStats struct {
	Mode     JobMode
	Queued   int // waiting: in windows or unread in the store
	InFlight int // leased
	Held     int // set aside while the job was paused
	Dropped  int // discarded: cancelled, dead host, spent host budget
}

// Done reports that nothing of the job is queued or in flight. Held items
// do not count: a paused job whose items are all held is done in this
// sense; the node tells it from a finished one by its mode.
func (s JobStats) Done() bool { return s.Queued == 0 && s.InFlight == 0 }

// job is the frontier's record of one job. Its counts are totals over
// the partitions loaded (all, without Options.Partitioned): queued +
// inFlight is the sum of parts' stored, held and dropped of theirs.
type job struct {
	mode     JobMode
	queued   int
	inFlight int
	held     int
	dropped  int
	// parts holds the job's durable counters per partition (JobState),
	// those of partitions not loaded zero; nil until it has any.
	parts *[partCount]partCounts
}

// partCounts are a job's durable counters over one partition's items.
type partCounts struct {
	stored, held, dropped int
	touched               bool // in Frontier.touched
}

// heldBatch is how many held items SetJobState moves per change.
const heldBatch = 512

// job returns the record of job id, making it (active) if new.
func (f *Frontier) job(id uint32) *job {
	j := f.jobs[id]
	if j == nil {
		j = &job{}
		f.jobs[id] = j
	}
	return j
}

// counts returns job id's (record j's) durable counters in partition p,
// about to change: the next write carries them.
func (f *Frontier) counts(id uint32, j *job, p Partition) *partCounts {
	if j.parts == nil {
		j.parts = new([partCount]partCounts)
	}
	c := &j.parts[p]
	if !c.touched {
		c.touched = true
		f.touched = append(f.touched, jobPart{id, p})
	}
	return c
}

// loadCounts adds the stored counters js of a partition being loaded (New,
// ServePartition), whose counters in memory are zero, to its job's.
// Leased items are in the store: they are offered again, so Stored counts
// as queued.
func (f *Frontier) loadCounts(js JobState) {
	j := f.job(js.Job)
	if j.parts == nil {
		j.parts = new([partCount]partCounts)
	}
	j.parts[js.Part] = partCounts{stored: js.Stored, held: js.Held, dropped: js.Dropped}
	j.queued += js.Stored
	j.held += js.Held
	j.dropped += js.Dropped
	f.dropped += js.Dropped
}

// unloadCounts takes the counters of partition p, being forgotten (no
// lease of it out, none of its counters unwritten), out of its jobs'.
func (f *Frontier) unloadCounts(p Partition) {
	for _, j := range f.jobs {
		if j.parts == nil {
			continue
		}
		c := j.parts[p]
		j.queued -= c.stored
		j.held -= c.held
		j.dropped -= c.dropped
		f.dropped -= c.dropped
		j.parts[p] = partCounts{}
	}
}

// write hands ch to the store with the counters touched since the last
// write. Every change of a job's durable counters is followed by a write
// before mu is released, so the counters a change carries agree with the
// store as it stands after that change.
func (f *Frontier) write(ch *Change) <-chan error {
	for _, r := range f.touched {
		c := &f.jobs[r.job].parts[r.part]
		c.touched = false
		ch.Jobs = append(ch.Jobs, JobState{Job: r.job, Part: r.part, Stored: c.stored, Held: c.held, Dropped: c.dropped})
	}
	f.touched = f.touched[:0]
	return f.opts.Store.Write(ch)
}

// Job returns the counts of job id's items. It takes constant time.
func (f *Frontier) Job(id uint32) JobStats {
	f.mu.Lock()
	defer f.mu.Unlock()
	j := f.jobs[id]
	if j == nil {
		return JobStats{}
	}
	return JobStats{Mode: j.mode, Queued: j.queued, InFlight: j.inFlight, Held: j.held, Dropped: j.dropped}
}

// JobDone reports that nothing of job id is queued or in flight
// (JobStats.Done).
func (f *Frontier) JobDone(id uint32) bool { return f.Job(id).Done() }

// SetJobState sets what the frontier does with job id's items (in memory:
// the node keeps its jobs' definitions and sets their modes at start-up,
// before leasing). Making a job active puts its held items back at the
// tail of their hosts' queues (ResumeJob); cancelling it drops them. Those
// items are read from the store in batches without the frontier's lock,
// each batch moved by one change; SetJobState returns once the last is
// durable, or with the first failure. Pausing takes effect for each item
// as it reaches the head of its host's queue; so does cancelling, except
// that items queued for a cancelled job are dropped at once.
func (f *Frontier) SetJobState(id uint32, m JobMode) error {
	if m > JobCancelled {
		return fmt.Errorf("frontier: set job %d: unknown mode %d", id, m)
	}
	f.jobMu.Lock()
	defer f.jobMu.Unlock()
	f.mu.Lock()
	j := f.job(id)
	j.mode = m
	var barrier <-chan error
	if j.held > 0 && m != JobPaused {
		// Once this empty change is applied, so is every change that
		// held an item of the job; and no more will be held.
		barrier = f.opts.Store.Write(&Change{})
	}
	f.signal()
	f.mu.Unlock()
	if barrier == nil {
		return nil
	}
	if err := <-barrier; err != nil {
		return fmt.Errorf("frontier: set job %d %s: %w", id, m, err)
	}
	if err := f.moveHeld(id, m == JobCancelled); err != nil {
		return fmt.Errorf("frontier: set job %d %s: %w", id, m, err)
	}
	return nil
}

// UnholdServed applies job id's mode to its held items that lie in the
// partitions served now: puts them back at the tail of their hosts' queues
// if the job is active, drops them if it is cancelled. A resume or a
// cancellation moves only the items of the partitions served then (see
// moveHeld), so a partition served later, with items held while the job
// was paused, calls this for each job not paused (node.ServePartition).
// It reads all the job's held items from the store; without Options.
// Partitioned, or for a paused job, it does nothing.
func (f *Frontier) UnholdServed(id uint32) error {
	if f.parts == nil {
		return nil
	}
	f.jobMu.Lock()
	defer f.jobMu.Unlock()
	f.mu.Lock()
	mode := f.job(id).mode
	f.mu.Unlock()
	if mode == JobPaused {
		return nil
	}
	if err := f.moveHeld(id, mode == JobCancelled); err != nil {
		return fmt.Errorf("frontier: unhold job %d: %w", id, err)
	}
	return nil
}

// ResumeJob makes job id active and puts its held items back at the tail
// of their hosts' queues: SetJobState(id, JobActive).
func (f *Frontier) ResumeJob(id uint32) error { return f.SetJobState(id, JobActive) }

// moveHeld streams job id's held items from the store, without f.mu, and
// moves each batch under f.mu in one change: back into their hosts' queues
// (new Seqs at the tail), or dropped. f.jobMu is held.
func (f *Frontier) moveHeld(id uint32, drop bool) error {
	var (
		after   *Item
		last    <-chan error
		skipped int
	)
	for {
		items, err := f.opts.Store.ReadHeld(id, after, heldBatch)
		if err != nil {
			return err
		}
		if len(items) == 0 {
			break
		}
		after = &items[len(items)-1]
		f.mu.Lock()
		if f.parts != nil {
			// Items of partitions not served stay held (see
			// ReleasePartition).
			n := len(items)
			items = slices.DeleteFunc(slices.Clone(items), func(it Item) bool { return !f.accepts(it.Host) })
			skipped += n - len(items)
		}
		j := f.job(id)
		ch := &Change{Unhold: items}
		j.held = max(0, j.held-len(items))
		for i := range items {
			c := f.counts(id, j, partOf(items[i].Host))
			c.held = max(0, c.held-1)
			if drop {
				c.dropped++
			}
		}
		if drop {
			j.dropped += len(items)
			f.dropped += len(items)
		} else {
			f.put(ch, slices.Clone(items))
		}
		last = f.write(ch)
		f.signal()
		f.mu.Unlock()
	}
	f.mu.Lock()
	if j := f.job(id); j.held != 0 && skipped == 0 {
		// The store holds fewer than counted; forget the rest rather
		// than wait for it. (Every held item read was of a partition
		// loaded: the rest are counted in loaded partitions only.)
		j.held = 0
		for p := range j.parts {
			if j.parts[p].held != 0 {
				f.counts(id, j, Partition(p)).held = 0
			}
		}
		last = f.write(&Change{})
	}
	f.mu.Unlock()
	if last != nil {
		return <-last
	}
	return nil
}
