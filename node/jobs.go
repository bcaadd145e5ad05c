package node

import (
	"errors"
	"fmt"

	"github.com/trawl-crawler/trawl/frontier"
	"github.com/trawl-crawler/trawl/job"
	"github.com/trawl-crawler/trawl/store"
)

// ErrNoJob is returned for a job ID the node does not know.
var ErrNoJob = errors.New("node: no such job")

// loadJobs restores the jobs kept in the store and tells the frontier their
// states, before any lease.
func (n *Node) loadJobs() error {
	it, err := n.db.NewIter(store.KindPrefix(store.KindJob))
	if err != nil {
		return fmt.Errorf("node: load jobs: %w", err)
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		rec, err := job.DecodeRecord(it.Value())
		if err != nil {
			return fmt.Errorf("node: load jobs: key %q: %w", it.Key(), err)
		}
		j, err := job.Restore(rec)
		if err != nil {
			return fmt.Errorf("node: load jobs: %w", err)
		}
		n.jobs[j.ID] = j
		n.nextJob = max(n.nextJob, j.ID+1)
		n.frontier.SetJobState(j.ID, frontierState(j))
		if st, _ := j.State(); st == job.Running {
			n.running.Add(1)
		}
	}
	return it.Close()
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
func (n *Node) keep(j *job.Job) error {
	b := n.db.NewBatch()
	if err := b.Set(store.JobKey(j.ID), j.Record().Encode()); err != nil {
		b.Close()
		return fmt.Errorf("node: keep job %d: %w", j.ID, err)
	}
	if err := n.db.Commit(b); err != nil {
		return fmt.Errorf("node: keep job %d: %w", j.ID, err)
	}
	return nil
}

// Submit adds a job of spec and queues its seeds. If spec has a Name and
// the node already holds a job of that name, that job is revived instead
// (running again with spec's limits; its seeds queued again if new to it):
// this is how `trawl crawl` on the same data directory resumes its crawl.
func (n *Node) Submit(spec job.Spec) (*job.Job, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if n.failed() {
		return nil, n.Err()
	}
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
	j, err := job.New(id, spec, created)
	if err != nil {
		n.mu.Unlock()
		return nil, err
	}
	n.jobs[id] = j
	n.submitting[id] = true // not done before its seeds are queued
	n.mu.Unlock()
	defer func() {
		n.mu.Lock()
		delete(n.submitting, id)
		n.mu.Unlock()
		n.checkDone(j)
		n.poke()
	}()
	if old != nil {
		if was, ok := old.End(job.Finished, job.ReasonSignal, nil); ok && was == job.Running {
			n.running.Add(-1) // replaced by j below
		}
	}
	if err := n.keep(j); err != nil {
		return nil, err
	}
	n.running.Add(1)
	j.Stats.Start(n.opts.Now())
	n.frontier.SetJobState(id, frontier.JobActive)
	if old != nil {
		if err := n.frontier.ResumeJob(id); err != nil {
			return nil, fmt.Errorf("node: revive job %d: %w", id, err)
		}
	}
	cands := make([]candidate, len(j.Seeds))
	for i, u := range j.Seeds {
		cands[i] = candidate{u: u}
	}
	b := n.db.NewBatch()
	items, err := n.admit(b, j, cands, false)
	if err == nil {
		err = <-n.frontier.Add(b, items...)
	} else {
		b.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("node: job %d: queue seeds: %w", id, err)
	}
	j.Stats.Discovered.Add(int64(len(items)))
	return j, nil
}

// Pause stops leasing job id's URLs; they are set aside as they come up
// and put back by Resume. Fetches in flight finish.
func (n *Node) Pause(id job.ID) error {
	j := n.Job(id)
	if j == nil {
		return fmt.Errorf("%w: %d", ErrNoJob, id)
	}
	if st, _ := j.State(); st == job.Paused {
		return nil
	}
	if err := j.SetPaused(true); err != nil {
		return err
	}
	n.running.Add(-1)
	n.frontier.SetJobState(id, frontier.JobPaused)
	return n.keep(j)
}

// Resume runs a paused job again.
func (n *Node) Resume(id job.ID) error {
	j := n.Job(id)
	if j == nil {
		return fmt.Errorf("%w: %d", ErrNoJob, id)
	}
	if st, _ := j.State(); st == job.Running {
		return nil
	}
	if err := j.SetPaused(false); err != nil {
		return err
	}
	n.running.Add(1)
	if err := n.keep(j); err != nil {
		return err
	}
	n.frontier.SetJobState(id, frontier.JobActive)
	if err := n.frontier.ResumeJob(id); err != nil {
		return fmt.Errorf("node: resume job %d: %w", id, err)
	}
	n.poke()
	return nil
}

// Cancel ends job id: its queued URLs are dropped as they come up, and
// fetches in flight finish.
func (n *Node) Cancel(id job.ID) error {
	j := n.Job(id)
	if j == nil {
		return fmt.Errorf("%w: %d", ErrNoJob, id)
	}
	was, ok := j.End(job.Cancelled, job.ReasonCancelled, nil)
	if !ok {
		return nil
	}
	if was == job.Running {
		n.running.Add(-1)
	}
	n.frontier.SetJobState(id, frontier.JobCancelled)
	n.poke()
	return n.keep(j)
}

// checkDone ends j once nothing of it is queued or in flight.
func (n *Node) checkDone(j *job.Job) {
	if st, _ := j.State(); st != job.Running {
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

// end moves a running job to a final state and keeps it.
func (n *Node) end(j *job.Job, s job.State, reason string, err error) {
	was, ok := j.End(s, reason, err)
	if !ok {
		return
	}
	if was == job.Running {
		n.running.Add(-1)
	}
	if s != job.Cancelled {
		// Anything still queued (a limit was reached) is set aside, so
		// that the job can be revived by name.
		n.frontier.SetJobState(j.ID, frontier.JobPaused)
	}
	if kerr := n.keep(j); kerr != nil {
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
