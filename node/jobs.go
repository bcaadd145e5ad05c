package node

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/trawl-crawler/trawl/frontier"
	"github.com/trawl-crawler/trawl/internal/store"
	"github.com/trawl-crawler/trawl/job"
)

// ErrNoJob is returned for a job ID the node does not know.
var ErrNoJob = errors.New("node: no such job")

// loadJobs restores the jobs kept in the store and tells the frontier their
// states, before any lease.
func (n *Node) loadJobs() (err error) {
	it, err := n.db.NewIter(store.KindPrefix(store.KindJob))
	if err != nil {
		return fmt.Errorf("node: load jobs: %w", err)
	}
	// Closed once, on every path: Pebble pools a closed iterator, so a
	// second Close would touch one another goroutine may be using.
	defer func() {
		if cerr := it.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("node: load jobs: %w", cerr)
		}
	}()
	for it.First(); it.Valid(); it.Next() {
		rec, err := job.DecodeRecord(it.Value())
		if err != nil {
			return fmt.Errorf("node: load jobs: key %q: %w", it.Key(), err)
		}
		j, err := job.Restore(rec)
		if err != nil {
			return fmt.Errorf("node: load jobs: %w", err)
		}
		if err := n.loadTally(j); err != nil {
			return err
		}
		n.jobs[j.ID] = j
		n.nextJob = max(n.nextJob, j.ID+1)
		if err := n.frontier.SetJobState(j.ID, frontierState(j)); err != nil {
			return fmt.Errorf("node: load jobs: %w", err)
		}
		if st, _ := j.State(); st == job.Running {
			n.running.Add(1)
		}
	}
	return nil
}

// loadTally restores what j counted in earlier runs. An unreadable tally
// is logged and counting starts again from zero: counts are not worth
// refusing to start for.
func (n *Node) loadTally(j *job.Job) error {
	v, err := n.db.Get(store.JobTallyKey(j.ID))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil
	case err != nil:
		return fmt.Errorf("node: load job %d's tally: %w", j.ID, err)
	}
	t, err := job.DecodeTally(v)
	if err != nil {
		n.opts.Logger.Warn("stored job tally unreadable; counting from zero", "job", j.ID, "err", err)
		return nil
	}
	j.Stats.SetPrior(t)
	return nil
}

// frontierState is what the frontier does with j's queued items: lease
// them while it runs, set them aside while it is paused or stopped (a job
// that reached a limit or failed can be revived by name), drop them once
// it is cancelled.
func frontierState(j *job.Job) frontier.JobMode {
	switch st, _ := j.State(); st {
	case job.Running:
		return frontier.JobActive
	case job.Cancelled:
		return frontier.JobCancelled
	default:
		return frontier.JobPaused
	}
}

// keep writes j's record to the store, synced.
func (n *Node) keep(j *job.Job) error { return n.keepRecord(j.Record()) }

func (n *Node) keepRecord(r job.Record) error {
	b := n.db.NewBatch()
	if err := b.Set(store.JobKey(r.ID), r.Encode()); err != nil {
		b.Close()
		return fmt.Errorf("node: keep job %d: %w", r.ID, err)
	}
	if err := n.db.Commit(b); err != nil {
		return fmt.Errorf("node: keep job %d: %w", r.ID, err)
	}
	return nil
}

// Submit adds a job of spec and queues its seeds. If spec has a Name and
// the node already holds a job of that name, that job is revived instead
// (running again with spec's limits; its seeds queued again if new to it):
// this is how `trawl crawl` on the same data directory resumes its crawl.
// A job whose seeds cannot be queued fails (and Submit says why).
func (n *Node) Submit(spec job.Spec) (*job.Job, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if n.failed() {
		return nil, n.Err()
	}
	n.jobMu.Lock()
	n.mu.Lock()
	var old *job.Job
	if spec.Name != "" {
		for _, j := range n.jobs {
			if j.Spec.Name == spec.Name && (old == nil || j.ID > old.ID) {
				old = j
			}
		}
	}
	id := n.nextJob
	created := n.opts.Now().UTC()
	if old != nil {
		id, created = old.ID, old.Created
	} else {
		n.nextJob++
	}
	n.mu.Unlock()
	j, err := job.New(id, spec, created)
	if err != nil {
		n.jobMu.Unlock()
		return nil, err
	}
	return n.launch(j, old)
}

// Adopt makes the node hold job r as a fleet's catalog defines it
// (package cluster/catalog), under r's ID. A job the node does not hold
// is created with exactly r.ID, r.Spec and r.Created, in r.State: paused
// (its seeds queued and set aside), or ended (Cancelled, Finished or
// Failed: nothing queued); the node's next local ID moves past r.ID. A
// job the node holds is brought to r.State: resumed, paused or cancelled
// (a Finished or Failed record ends it so too); a job that has ended here
// stays ended, and its spec is not changed. Adopting the same record
// twice changes nothing. An invalid spec is an error naming the job, and
// so is a job of r.ID the node holds with another creation time (another
// job, submitted here before the node joined the fleet).
func (n *Node) Adopt(r job.Record) (*job.Job, error) {
	if n.failed() {
		return nil, n.Err()
	}
	n.jobMu.Lock()
	if j := n.Job(r.ID); j != nil {
		n.jobMu.Unlock()
		if !j.Created.Equal(r.Created) {
			return nil, fmt.Errorf("node: adopt job %d: the node holds another job %d (%q, created %s; the record's %q was created %s)",
				r.ID, r.ID, j.Spec.Name, j.Created.Format(time.RFC3339Nano), r.Spec.Name, r.Created.Format(time.RFC3339Nano))
		}
		return j, n.bringTo(j, r)
	}
	j, err := job.New(r.ID, r.Spec, r.Created)
	if err != nil {
		n.jobMu.Unlock()
		return nil, fmt.Errorf("node: adopt job %d: %w", r.ID, err)
	}
	switch r.State {
	case job.Running:
	case job.Paused:
		j.SetPaused(true)
	case job.Cancelled, job.Finished, job.Failed:
		j.End(r.State, endReason(r), recordErr(r))
	default:
		n.jobMu.Unlock()
		return nil, fmt.Errorf("node: adopt job %d: unknown state %q", r.ID, r.State)
	}
	return n.launch(j, nil)
}

// bringTo moves j, which the node holds, to r's exclusion patterns and
// state (Adopt).
func (n *Node) bringTo(j *job.Job, r job.Record) error {
	if err := n.adoptExclusions(j, r.Spec.Exclude); err != nil {
		return err
	}
	st, _ := j.State()
	if st.Ended() || st == r.State {
		return nil
	}
	var err error
	switch r.State {
	case job.Running:
		err = n.Resume(j.ID)
	case job.Paused:
		err = n.Pause(j.ID)
	case job.Cancelled:
		err = n.Cancel(j.ID)
	case job.Finished, job.Failed:
		n.end(j, r.State, endReason(r), recordErr(r))
	default:
		return fmt.Errorf("node: adopt job %d: unknown state %q", r.ID, r.State)
	}
	if errors.Is(err, job.ErrEnded) {
		return nil // it ended here meanwhile, and stays ended
	}
	if err != nil {
		return fmt.Errorf("node: adopt job %d: %w", r.ID, err)
	}
	return nil
}

// endReason is why a record's ended job ended: its Reason, or the reason
// its state implies.
func endReason(r job.Record) string {
	switch {
	case r.Reason != "":
		return r.Reason
	case r.State == job.Cancelled:
		return job.ReasonCancelled
	case r.State == job.Failed:
		return job.ReasonError
	}
	return job.ReasonExhausted
}

func recordErr(r job.Record) error {
	if r.Error == "" {
		return nil
	}
	return errors.New(r.Error)
}

// launch adds j, new to the node and in the state it was made with
// (running, paused or ended), replacing old (the job of j's ID it
// revives; nil for none): keeps it, tells the frontier its state and,
// unless it has ended, queues its seeds. The caller holds jobMu; launch
// releases it before the seeds are queued. A job whose seeds cannot be
// queued fails, and launch says why.
func (n *Node) launch(j, old *job.Job) (*job.Job, error) {
	id := j.ID
	n.mu.Lock()
	n.jobs[id] = j
	n.submitting[id] = true // not done before its seeds are queued
	n.nextJob = max(n.nextJob, id+1)
	n.mu.Unlock()
	if old != nil {
		j.Stats.SetPrior(old.Stats.Total()) // the same job, counting on
		if was, ok := old.End(job.Finished, job.ReasonSignal, nil); ok && was == job.Running {
			n.running.Add(-1) // replaced by j below
		}
	}
	st, _ := j.State()
	if st == job.Running {
		n.running.Add(1)
	}
	j.Stats.Start(n.opts.Now())
	err := n.keep(j)
	if err == nil {
		// Its state, and (if revived) the items it held put back.
		err = n.frontier.SetJobState(id, frontierState(j))
	}
	n.jobMu.Unlock()
	defer func() {
		n.mu.Lock()
		delete(n.submitting, id)
		n.mu.Unlock()
		n.checkDone(j)
		n.poke()
	}()
	if err == nil && !st.Ended() {
		err = n.queueSeeds(j)
	}
	if err != nil {
		err = fmt.Errorf("node: job %d: %w", id, err)
		n.end(j, job.Failed, job.ReasonError, err)
		return nil, err
	}
	return j, nil
}

// queueSeeds passes j's seeds through its seen gate and queues the new ones.
func (n *Node) queueSeeds(j *job.Job) error {
	cands := make([]candidate, len(j.Seeds))
	for i, u := range j.Seeds {
		cands[i] = candidate{u: u}
	}
	b := n.db.NewBatch()
	items, err := n.admit(b, j, cands, false, "")
	if err != nil {
		b.Close()
		return fmt.Errorf("queue seeds: %w", err)
	}
	if err := <-n.add(b, items); err != nil {
		return fmt.Errorf("queue seeds: %w", err)
	}
	n.routed()
	j.Stats.Discovered.Add(int64(len(items)))
	return nil
}

// AddSeeds queues seeds for job id, which must not have ended, through
// its exclusions and URL-seen gate (a URL the job has seen already is not
// queued again), and returns how many were new. Each seed must be an
// absolute http(s) URL within the job's scope, the check a new job's
// seeds meet (job.Job.CheckSeeds); errors are *job.FieldError values for
// "Seeds" naming the seed, and queue nothing.
func (n *Node) AddSeeds(id job.ID, seeds []string) (added int, err error) {
	j, err := n.lookup(id)
	if err != nil {
		return 0, err
	}
	us, err := j.CheckSeeds(seeds)
	if err != nil {
		return 0, err
	}
	if st, reason := j.State(); st.Ended() {
		return 0, fmt.Errorf("node: add seeds to job %d: %w (%s)", id, job.ErrEnded, reason)
	}
	cands := make([]candidate, len(us))
	for i, u := range us {
		cands[i] = candidate{u: u}
	}
	b := n.db.NewBatch()
	items, err := n.admit(b, j, cands, false, "")
	if err != nil {
		b.Close()
		return 0, fmt.Errorf("node: add seeds to job %d: %w", id, err)
	}
	if err := <-n.add(b, items); err != nil {
		return 0, fmt.Errorf("node: add seeds to job %d: %w", id, err)
	}
	n.routed()
	j.Stats.Discovered.Add(int64(len(items)))
	n.poke()
	return len(items), nil
}

// EditExclusions adds and removes job id's exclusion patterns
// (job.Exclusions.Edit) and stores the job; the new set applies to the
// next link found and the next queued URL leased. Errors change nothing.
func (n *Node) EditExclusions(id job.ID, add, remove []string) (*job.Exclusions, error) {
	j, err := n.lookup(id)
	if err != nil {
		return nil, err
	}
	n.jobMu.Lock()
	defer n.jobMu.Unlock()
	if st, reason := j.State(); st.Ended() {
		return nil, fmt.Errorf("node: exclusions of job %d: %w (%s)", id, job.ErrEnded, reason)
	}
	x, err := j.Exclusions().Edit(add, remove)
	if err != nil {
		return nil, err
	}
	rec := j.Record()
	rec.Spec.Exclude = x.Patterns()
	if err := n.keepRecord(rec); err != nil {
		return nil, err
	}
	j.SetExclusions(x)
	return x, nil
}

// adoptExclusions makes j's exclusion patterns those of its record (a
// fleet's exclusion edits reach every member so: cluster/catalog), and
// stores the job, unless they are already or j has ended.
func (n *Node) adoptExclusions(j *job.Job, patterns []string) error {
	if slices.Equal(j.Exclusions().Patterns(), patterns) {
		return nil
	}
	x, err := job.CompileExclusions(patterns)
	if err != nil {
		return fmt.Errorf("node: adopt job %d: %w", j.ID, err)
	}
	n.jobMu.Lock()
	defer n.jobMu.Unlock()
	if st, _ := j.State(); st.Ended() {
		return nil
	}
	rec := j.Record()
	rec.Spec.Exclude = x.Patterns()
	if err := n.keepRecord(rec); err != nil {
		return fmt.Errorf("node: adopt job %d: %w", j.ID, err)
	}
	j.SetExclusions(x)
	return nil
}

// lookup returns the job with id, or an error wrapping ErrNoJob.
func (n *Node) lookup(id job.ID) (*job.Job, error) {
	j := n.Job(id)
	if j == nil {
		return nil, fmt.Errorf("%w: %d", ErrNoJob, id)
	}
	return j, nil
}

// Pause stops leasing job id's URLs; they are set aside as they come up
// and put back by Resume. Fetches in flight finish. Pausing a paused job
// does nothing; an ended job cannot be paused.
func (n *Node) Pause(id job.ID) error {
	j, err := n.lookup(id)
	if err != nil {
		return err
	}
	n.jobMu.Lock()
	defer n.jobMu.Unlock()
	was, err := j.SetPaused(true)
	if err != nil || was == job.Paused {
		return err
	}
	n.running.Add(-1)
	if err := n.frontier.SetJobState(id, frontier.JobPaused); err != nil {
		return fmt.Errorf("node: pause job %d: %w", id, err)
	}
	return n.keep(j)
}

// Resume runs a paused job again: the URLs it set aside go back to the
// tails of their hosts' queues.
func (n *Node) Resume(id job.ID) error {
	j, err := n.lookup(id)
	if err != nil {
		return err
	}
	n.jobMu.Lock()
	defer n.jobMu.Unlock()
	was, err := j.SetPaused(false)
	if err != nil || was == job.Running {
		return err
	}
	n.running.Add(1)
	if err := n.frontier.SetJobState(id, frontier.JobActive); err != nil {
		// Paused again, so that another Resume tries once more.
		j.SetPaused(true)
		n.running.Add(-1)
		return fmt.Errorf("node: resume job %d: %w", id, err)
	}
	n.poke()
	return n.keep(j)
}

// Cancel ends job id: its queued URLs are dropped, and fetches in flight
// finish. Cancelling an ended job does nothing.
func (n *Node) Cancel(id job.ID) error {
	j, err := n.lookup(id)
	if err != nil {
		return err
	}
	n.jobMu.Lock()
	defer n.jobMu.Unlock()
	was, ok := j.End(job.Cancelled, job.ReasonCancelled, nil)
	if !ok {
		return nil
	}
	if was == job.Running {
		n.running.Add(-1)
	}
	ferr := n.frontier.SetJobState(id, frontier.JobCancelled)
	n.poke()
	return errors.Join(ferr, n.keep(j))
}

// checkDone ends j once nothing of it is queued, held or in flight. A
// continuous job never ends so: with its frontier empty it waits for its
// recrawls (job.Progress.WaitingForRecrawls), until it is cancelled, a
// limit ends it, or the node stops.
func (n *Node) checkDone(j *job.Job) {
	if st, _ := j.State(); st != job.Running || j.Spec.Continuous || n.opts.Partitioned {
		return
	}
	n.mu.Lock()
	submitting := n.submitting[j.ID]
	n.mu.Unlock()
	if submitting {
		return
	}
	js := n.frontier.Job(j.ID)
	if js.Queued > 0 || js.InFlight > 0 || js.Held > 0 {
		return
	}
	n.end(j, job.Finished, job.ReasonExhausted, nil)
}

// end moves a job that has not ended to a final state and keeps it.
// Anything still queued for a job that reached a limit or failed is set
// aside, so that it can be revived by name.
func (n *Node) end(j *job.Job, s job.State, reason string, err error) {
	n.jobMu.Lock()
	defer n.jobMu.Unlock()
	was, ok := j.End(s, reason, err)
	if !ok {
		return
	}
	if was == job.Running {
		n.running.Add(-1)
	}
	mode := frontier.JobPaused
	if s == job.Cancelled {
		mode = frontier.JobCancelled
	}
	if ferr := n.frontier.SetJobState(j.ID, mode); ferr != nil {
		n.opts.Logger.Warn("set aside an ended job's URLs", "job", j.ID, "err", ferr)
	}
	if kerr := n.keep(j); kerr != nil && !n.failed() {
		n.fail(kerr)
	}
	n.opts.Logger.Info("job ended", "job", j.ID, "name", j.Spec.Name, "state", s, "reason", reason)
}

// checkJobs looks at every running job.
func (n *Node) checkJobs() {
	for _, j := range n.Jobs() {
		n.checkDone(j)
	}
}
