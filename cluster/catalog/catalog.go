// Package catalog holds the fleet's crawl definitions and their run
// state, replicated to every fleet member through the JetStream KV bucket
// trawl-jobs, and applies them to the member's node (node.Adopt): a job
// submitted on any member exists on every member under one fleet-wide ID,
// and a member that joins later learns every job when it opens.
//
// Invariants: a key, once created, names the same job for good (IDs are
// taken by KV create, never reused; the catalog deletes nothing); a record
// changes only by compare-and-set at its revision; applying a record is
// idempotent, and a member never applies an older revision of a key after
// a newer one. A Catalog is safe for concurrent use.
package catalog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/trawl-crawler/trawl/cluster/fleetnode"
	"github.com/trawl-crawler/trawl/cluster/jsensure"
	"github.com/trawl-crawler/trawl/cluster/kvread"
	"github.com/trawl-crawler/trawl/job"
	"github.com/trawl-crawler/trawl/node"
)

// Bucket is the KV bucket of the catalog. Part of the fleet's protocol:
// every member must agree on it and on its layout:
//
//	key:   "job." + the job's ID in decimal (job.7)
//	value: the job's job.Record, JSON (Record.Encode); its State is
//	       running, paused or cancelled (the fleet's state: a member's
//	       own job may have ended sooner, say at its MaxPages)
const Bucket = "trawl-jobs"

const keyPrefix = "job."

func key(id job.ID) string { return keyPrefix + strconv.FormatUint(uint64(id), 10) }

// parseKey returns the job ID of a catalog key.
func parseKey(k string) (job.ID, error) {
	s, ok := strings.CutPrefix(k, keyPrefix)
	if !ok {
		return 0, fmt.Errorf("not %s<id>", keyPrefix)
	}
	id, err := strconv.ParseUint(s, 10, 32)
	if err != nil || id == 0 || strconv.FormatUint(id, 10) != s {
		return 0, fmt.Errorf("%q is not a job ID (a positive decimal)", s)
	}
	return job.ID(id), nil
}

// Options configure a Catalog.
type Options struct {
	// Replicas is the bucket's replication factor (jsserver.Replicas).
	// Zero: 1.
	Replicas int
	// Logger receives the records that could not be applied. Nil: silent.
	Logger *slog.Logger
	// Now is the clock that stamps a submitted job's creation. Nil:
	// time.Now.
	Now func() time.Time
}

func (o *Options) ensureDefaults() {
	if o.Replicas <= 0 {
		o.Replicas = 1
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// Timing of the watcher. resyncEvery: this long after a watcher started
// it is started afresh, delivering every key's
// current value again (cluster/owner found a KV watcher, an ordered
// consumer, to stop delivering after the bucket's stream leader died;
// applying a record again changes nothing). retryDelay: the pause before a
// watcher that failed or ended is started again.
const (
	resyncEvery = 10 * time.Second
	retryDelay  = 250 * time.Millisecond
)

// casAttempts bounds SetState's compare-and-set tries when other members
// change the same job at once.
const casAttempts = 10

// entry is a record as the catalog last applied it, at its revision.
type entry struct {
	rec job.Record
	rev uint64
}

// Catalog is a member's view of the fleet's jobs, applied to its node.
// Create it with Open; Run keeps it.
type Catalog struct {
	opts Options
	kv   jetstream.KeyValue
	n    fleetnode.Node // every job change goes through it
	view *Node

	// applyMu serialises applies to the node, so that a key's revisions
	// reach it in order. Lock order: applyMu, then mu.
	applyMu sync.Mutex

	mu      sync.Mutex
	records map[job.ID]entry
	maxID   job.ID            // the highest ID of a key seen, readable or not
	logged  map[string]uint64 // the revision of each key whose failure was logged
	ready   chan struct{}     // closed once the bucket's first full delivery is applied
}

// Open binds the bucket, creating it if absent, for node n (which should
// be partitioned: a member of the fleet). Run applies the catalog to n,
// through fleetnode.Node; n itself is what the view Node serves beside the
// catalog's changes.
func Open(ctx context.Context, js jetstream.JetStream, n *node.Node, opts Options) (*Catalog, error) {
	if n == nil {
		return nil, errors.New("catalog: open: no node")
	}
	opts.ensureDefaults()
	kv, err := jsensure.KeyValue(ctx, js, jetstream.KeyValueConfig{
		Bucket: Bucket, History: 1, Replicas: opts.Replicas,
		Description: "trawl's crawls, one job.<id> key each, changed only by compare-and-set",
	})
	if err != nil {
		return nil, fmt.Errorf("catalog: bucket %s: %w", Bucket, err)
	}
	c := &Catalog{opts: opts, kv: kv, n: n, records: map[job.ID]entry{}, logged: map[string]uint64{}, ready: make(chan struct{})}
	c.view = &Node{Node: n, c: c}
	return c, nil
}

// Ready is closed once Run has applied every job the bucket held when it
// started watching: from then on the node holds every job of the fleet.
func (c *Catalog) Ready() <-chan struct{} { return c.ready }

// Foreign returns the jobs the node holds that are not the catalog's: an ID
// the catalog lacks, or one it gives to another job (a node's own jobs
// from before it joined a fleet, numbered from 1 as the fleet's are).
// Meaningful once Ready is closed; a member holding any should not join,
// as the fleet's jobs of those IDs cannot be applied to it.
func (c *Catalog) Foreign() []*job.Job {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*job.Job
	for _, j := range c.n.Jobs() {
		if e, ok := c.records[j.ID]; !ok || !e.rec.Created.Equal(j.Created) {
			out = append(out, j)
		}
	}
	return out
}

// Run watches the bucket and applies every record to the node until ctx
// ends, and returns ctx's error. A record that cannot be read or applied
// is logged (once per revision) and skipped; the others are applied.
func (c *Catalog) Run(ctx context.Context) error {
	for ctx.Err() == nil {
		if !c.watch(ctx) {
			select {
			case <-ctx.Done():
			case <-time.After(retryDelay):
			}
		}
	}
	return ctx.Err()
}

// watch applies what one watcher delivers, until ctx ends or resyncEvery
// after the watcher delivered the bucket's current state (true), or until
// the watcher fails or ends (false).
func (c *Catalog) watch(ctx context.Context) bool {
	w, err := kvread.Watch(ctx, c.kv, 0)
	if err != nil {
		if ctx.Err() != nil {
			return true
		}
		c.opts.Logger.Warn("catalog: watch", "bucket", Bucket, "err", err)
		return false
	}
	defer w.Stop()
	// A watcher is replaced resyncEvery after it starts, whether or not
	// it delivered the bucket's state: one whose stream's leader moved
	// may stall before it does, and would then never deliver a record.
	t := time.NewTimer(resyncEvery)
	defer t.Stop()
	resync := t.C
	for {
		select {
		case <-ctx.Done():
			return true
		case <-resync:
			return true
		case e, ok := <-w.Updates():
			if !ok {
				if ctx.Err() != nil {
					return true
				}
				c.opts.Logger.Warn("catalog: the watcher ended; watching again", "bucket", Bucket)
				return false
			}
			if e != nil {
				c.applyEntry(e)
				continue
			}
			// The bucket's current state has been delivered, and applied.
			c.mu.Lock()
			select {
			case <-c.ready:
			default:
				close(c.ready)
			}
			c.mu.Unlock()
		}
	}
}

// applyEntry applies a watched entry, or logs why not.
func (c *Catalog) applyEntry(e jetstream.KeyValueEntry) {
	id, err := parseKey(e.Key())
	if err != nil {
		c.skip(e, fmt.Errorf("key: %w", err))
		return
	}
	c.mu.Lock()
	c.maxID = max(c.maxID, id)
	c.mu.Unlock()
	if e.Operation() != jetstream.KeyValuePut {
		c.skip(e, fmt.Errorf("%s: the catalog deletes nothing; the node keeps its job", e.Operation()))
		return
	}
	rec, err := job.DecodeRecord(e.Value())
	if err == nil && rec.ID != id {
		err = fmt.Errorf("the record is job %d's", rec.ID)
	}
	if err != nil {
		c.skip(e, err)
		return
	}
	if _, err := c.apply(rec, e.Revision()); err != nil {
		c.skip(e, err)
	}
}

// skip logs that entry e was not applied, once per revision of its key.
func (c *Catalog) skip(e jetstream.KeyValueEntry, why error) {
	c.mu.Lock()
	seen := c.logged[e.Key()] == e.Revision()
	c.logged[e.Key()] = e.Revision()
	c.mu.Unlock()
	level := slog.LevelWarn
	if seen {
		level = slog.LevelDebug
	}
	c.opts.Logger.Log(context.Background(), level, "catalog: record skipped", "key", e.Key(), "revision", e.Revision(), "reason", why)
}

// apply makes the node hold rec, the record of its key at revision rev;
// if the catalog applied a newer revision of the key already, that one is
// applied again instead (a no-op, unless the node failed to take it).
func (c *Catalog) apply(rec job.Record, rev uint64) (*job.Job, error) {
	c.applyMu.Lock()
	defer c.applyMu.Unlock()
	c.mu.Lock()
	if cur, ok := c.records[rec.ID]; ok && cur.rev > rev {
		rec, rev = cur.rec, cur.rev
	}
	c.records[rec.ID] = entry{rec, rev}
	c.maxID = max(c.maxID, rec.ID)
	c.mu.Unlock()
	return c.n.Adopt(rec)
}

// Submit adds a job of spec to the fleet: it takes the first free ID
// above every ID the catalog has seen and the node holds (a KV create of
// its key; a key another member created first moves on to the next),
// applies the job to the node at once and returns the node's job; the
// other members apply it as their watchers deliver it. A spec that fails
// spec.Validate returns its errors unchanged (*job.FieldError values).
//
// A spec whose Name is that of a catalog job that has not been cancelled
// returns that job as it is: its spec is not changed and a paused job
// stays paused (node.Submit's revival by name, kept simple). A name whose
// job was cancelled gets a new job, with a new ID. The name is looked up
// in what this member's catalog has seen: two members submitting one
// name at the same moment may both create a job.
func (c *Catalog) Submit(ctx context.Context, spec job.Spec) (*job.Job, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if spec.Name != "" {
		if e, ok := c.byName(spec.Name); ok {
			j, err := c.apply(e.rec, e.rev)
			if err != nil {
				return nil, fmt.Errorf("catalog: submit %q: %w", spec.Name, err)
			}
			return j, nil
		}
	}
	rec := job.Record{ID: c.nextID(), Spec: spec, Created: c.opts.Now().UTC(), State: job.Running}
	for {
		rev, err := c.kv.Create(ctx, key(rec.ID), rec.Encode())
		if errors.Is(err, jetstream.ErrKeyExists) {
			rec.ID++
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("catalog: submit %q: create %s: %w", spec.Name, key(rec.ID), err)
		}
		j, err := c.apply(rec, rev)
		if err != nil {
			return nil, fmt.Errorf("catalog: submit %q: %w", spec.Name, err)
		}
		return j, nil
	}
}

// byName returns the newest catalog job named name that has not ended.
func (c *Catalog) byName(name string) (entry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var found entry
	for _, e := range c.records {
		if e.rec.Spec.Name == name && !e.rec.State.Ended() && e.rec.ID > found.rec.ID {
			found = e
		}
	}
	return found, found.rec.ID != 0
}

// nextID is the first ID above those the catalog has seen and the node
// holds.
func (c *Catalog) nextID() job.ID {
	c.mu.Lock()
	top := c.maxID
	c.mu.Unlock()
	for _, j := range c.n.Jobs() {
		top = max(top, j.ID)
	}
	return top + 1
}

// SetState moves job id to state s (running, paused or cancelled) for the
// whole fleet: the record is changed at its revision (tried again, a few
// times, when another member changed it meanwhile) and applied to the
// node at once. Setting the state a job has changes nothing; a cancelled
// job cannot be changed (an error wrapping job.ErrEnded). An ID the
// catalog does not hold is changed on the node alone if the node holds it
// (a job submitted to the node itself, not through the catalog), else is
// an error wrapping node.ErrNoJob.
func (c *Catalog) SetState(ctx context.Context, id job.ID, s job.State) error {
	if s != job.Running && s != job.Paused && s != job.Cancelled {
		return fmt.Errorf("catalog: job %d: set state %q: want running, paused or cancelled", id, s)
	}
	found, err := c.update(ctx, id, "set "+string(s), func(rec *job.Record) (bool, error) {
		if rec.State == s {
			return false, nil
		}
		if rec.State.Ended() {
			return false, fmt.Errorf("catalog: job %d: %w (%s)", id, job.ErrEnded, rec.Reason)
		}
		rec.State, rec.Reason = s, ""
		if s == job.Cancelled {
			rec.Reason = job.ReasonCancelled
		}
		return true, nil
	})
	if !found {
		return c.setLocal(id, s)
	}
	return err
}

// update reads job id's record, lets edit change it and writes it back at
// the revision read (read again and edited again when another member
// changed it meanwhile, up to casAttempts), then applies the record to the
// node. edit returns false to write nothing: the record read is applied as
// it is. found is false, and nothing done, when the catalog has no such
// key; what names the change in errors.
func (c *Catalog) update(ctx context.Context, id job.ID, what string, edit func(*job.Record) (bool, error)) (found bool, err error) {
	k := key(id)
	for attempt := 1; ; attempt++ {
		e, err := c.kv.Get(ctx, k)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			return false, nil
		}
		if err != nil {
			return true, fmt.Errorf("catalog: job %d: read %s: %w", id, k, err)
		}
		rec, err := job.DecodeRecord(e.Value())
		if err != nil {
			return true, fmt.Errorf("catalog: job %d: %w", id, err)
		}
		write, err := edit(&rec)
		if err != nil {
			return true, err
		}
		rev := e.Revision()
		if write {
			rev, err = c.kv.Update(ctx, k, rec.Encode(), e.Revision())
			if errors.Is(err, jetstream.ErrKeyRevisionMismatch) && attempt < casAttempts {
				continue
			}
			if err != nil {
				return true, fmt.Errorf("catalog: job %d: %s: %w", id, what, err)
			}
		}
		_, err = c.apply(rec, rev)
		return true, err
	}
}

// EditExclusions adds and removes job id's exclusion patterns
// (job.Exclusions.Edit) in its catalog record, by compare-and-set, and
// applies the record to the node: every member applies it as its watcher
// delivers it (node.Adopt). Errors change nothing: pattern errors are
// *job.FieldError values, an ended job's wraps job.ErrEnded. A job the
// catalog does not hold is edited on the node alone.
func (c *Catalog) EditExclusions(ctx context.Context, id job.ID, add, remove []string) (*job.Exclusions, error) {
	var x *job.Exclusions
	found, err := c.update(ctx, id, "edit exclusions", func(rec *job.Record) (bool, error) {
		if rec.State.Ended() {
			return false, fmt.Errorf("catalog: exclusions of job %d: %w (%s)", id, job.ErrEnded, rec.Reason)
		}
		cur, err := job.CompileExclusions(rec.Spec.Exclude)
		if err != nil {
			return false, fmt.Errorf("catalog: job %d: %w", id, err)
		}
		if x, err = cur.Edit(add, remove); err != nil {
			return false, err
		}
		rec.Spec.Exclude = x.Patterns()
		return true, nil
	})
	if !found {
		return c.n.EditExclusions(id, add, remove)
	}
	if err != nil {
		return nil, err
	}
	return x, nil
}

// Running returns the catalog's running jobs that end once their work is
// done (not continuous), each with the revision of its record the catalog
// has applied.
func (c *Catalog) Running() map[job.ID]uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[job.ID]uint64{}
	for id, e := range c.records {
		if e.rec.State == job.Running && !e.rec.Spec.Continuous {
			out[id] = e.rev
		}
	}
	return out
}

// Finish ends job id on every member as finished, nothing left to fetch
// (job.ReasonExhausted), by compare-and-set of its record at revision rev
// (Running's): the fleet's crawl end (cluster/finish decides when, and
// passes the revision it saw before deciding). A record changed since
// (state, exclusions, seeds added: AddSeeds) is left as it is, and false
// returned; so is a job no longer running.
func (c *Catalog) Finish(ctx context.Context, id job.ID, rev uint64) (bool, error) {
	k := key(id)
	e, err := c.kv.Get(ctx, k)
	if err != nil {
		return false, fmt.Errorf("catalog: job %d: read %s: %w", id, k, err)
	}
	if e.Revision() != rev {
		return false, nil
	}
	rec, err := job.DecodeRecord(e.Value())
	if err != nil {
		return false, fmt.Errorf("catalog: job %d: %w", id, err)
	}
	if rec.State != job.Running {
		return false, nil
	}
	rec.State, rec.Reason = job.Finished, job.ReasonExhausted
	nrev, err := c.kv.Update(ctx, k, rec.Encode(), rev)
	if errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("catalog: job %d: finish: %w", id, err)
	}
	_, err = c.apply(rec, nrev)
	return true, err
}

// AddSeeds queues seeds for job id (node.AddSeeds) after giving its
// record a new revision, so that a crawl end decided before the seeds
// were queued does not happen (Finish compares revisions). A job the
// catalog does not hold gets them on the node alone.
func (c *Catalog) AddSeeds(ctx context.Context, id job.ID, seeds []string) (int, error) {
	_, err := c.update(ctx, id, "add seeds", func(rec *job.Record) (bool, error) {
		if rec.State.Ended() {
			return false, fmt.Errorf("catalog: add seeds to job %d: %w (%s)", id, job.ErrEnded, rec.Reason)
		}
		return true, nil // the same record, at a new revision
	})
	if err != nil {
		return 0, err
	}
	return c.n.AddSeeds(id, seeds)
}

// setLocal changes a job the catalog does not hold on the node alone.
func (c *Catalog) setLocal(id job.ID, s job.State) error {
	if c.n.Job(id) == nil {
		return fmt.Errorf("catalog: job %d: %w", id, node.ErrNoJob)
	}
	switch s {
	case job.Running:
		return c.n.Resume(id)
	case job.Paused:
		return c.n.Pause(id)
	default:
		return c.n.Cancel(id)
	}
}

// Node returns the node whose job changes go through the catalog.
func (c *Catalog) Node() *Node { return c.view }

// opTimeout bounds a change Node makes through the catalog.
const opTimeout = 10 * time.Second

// Node is a member's node whose Submit, Pause, Resume, Cancel and
// EditExclusions act on the whole fleet, through the catalog (each bounded
// by 10 s); everything else is the node's own. It is what the HTTP API (api.Node) serves on a
// fleet member.
type Node struct {
	*node.Node
	c *Catalog
}

// Submit adds a job to the fleet (Catalog.Submit).
func (n *Node) Submit(spec job.Spec) (*job.Job, error) {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	return n.c.Submit(ctx, spec)
}

// Pause pauses job id on every member (Catalog.SetState).
func (n *Node) Pause(id job.ID) error { return n.set(id, job.Paused) }

// Resume runs job id again on every member (Catalog.SetState).
func (n *Node) Resume(id job.ID) error { return n.set(id, job.Running) }

// Cancel cancels job id on every member (Catalog.SetState).
func (n *Node) Cancel(id job.ID) error { return n.set(id, job.Cancelled) }

// AddSeeds adds seeds to job id (Catalog.AddSeeds).
func (n *Node) AddSeeds(id job.ID, seeds []string) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	return n.c.AddSeeds(ctx, id, seeds)
}

// EditExclusions edits job id's exclusion patterns on every member
// (Catalog.EditExclusions).
func (n *Node) EditExclusions(id job.ID, add, remove []string) (*job.Exclusions, error) {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	return n.c.EditExclusions(ctx, id, add, remove)
}

func (n *Node) set(id job.ID, s job.State) error {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	return n.c.SetState(ctx, id, s)
}
