package node

// A partitioned node (Options.Partitioned) is one of a fleet: it serves
// the partitions package cluster/fleet gives it, routes what it finds for
// the others through its outbox, and folds in what the others route to
// it. The wiring, in the order a URL travels:
//
//	admit (worker, seeds, sitemaps) ──served here?──▶ seen gate ▶ frontier
//	        │ no: outbox.Outbox.Add in the completion's batch
//	        ▼
//	route.Pump ──▶ JetStream TRAWL_ROUTE ──▶ route.Follow (owner) ──▶ Fold:
//	        seen gate ▶ frontier, with the message's sequence, one batch
//
// A partition is served between ServePartition (after its keys are in the
// store: a checkpoint restored, or this node's own) and ReleasePartition.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/trawl-crawler/trawl/frontier"
	"github.com/trawl-crawler/trawl/internal/outbox"
	"github.com/trawl-crawler/trawl/internal/store"
	"github.com/trawl-crawler/trawl/internal/store/partition"
	"github.com/trawl-crawler/trawl/internal/store/urlstate"
	"github.com/trawl-crawler/trawl/job"
	"github.com/trawl-crawler/trawl/urlnorm"
)

// routeForeign writes into b, as outbox entries for their owners, the
// URLs among urls (kept[i] is urls[i]'s candidate) whose host's partition
// this node does not serve, or (home not "") is not home's, at the level
// level gives, and reports which it routed. They skip this node's seen
// gate: the owner's decides.
//
// home is the host whose fetch b completes. A fleet replicates each
// partition's share of a batch on its own (cluster/progress): links to
// another partition served here, written with the page's completion,
// could be lost with a member killed between the two shares' publishes
// while the completion was kept, so they go through the outbox too,
// published before the completion is (and folded here from the route
// stream).
func (n *Node) routeForeign(b *store.Batch, j *job.Job, urls []string, kept []candidate, level func(candidate) int, home string) ([]bool, error) {
	var routed []bool
	homePart := partition.Of(home)
	for i, cd := range kept {
		host := urlnorm.HostKey(cd.u)
		if n.frontier.Serves(host) && (home == "" || partition.Of(host) == homePart) {
			continue
		}
		if routed == nil {
			routed = make([]bool, len(urls))
		}
		routed[i] = true
		it := frontier.Item{URL: urls[i], Host: host, Job: j.ID, Depth: cd.depth, Level: level(cd),
			Redirects: cd.redirects, ShapeRun: cd.shapeRun, Via: cd.via, Requisite: cd.requisite}
		if err := n.outbox.Add(b, it); err != nil {
			return nil, fmt.Errorf("node: route %s: %w", it.URL, err)
		}
	}
	if routed != nil {
		j.Stats.Routed.Add(int64(countTrue(routed)))
	}
	return routed, nil
}

func countTrue(bs []bool) int {
	c := 0
	for _, b := range bs {
		if b {
			c++
		}
	}
	return c
}

// unrouted returns the elements of s whose routed flag is not set (all of
// s when routed is nil), in place.
func unrouted[T any](s []T, routed []bool) []T {
	if routed == nil {
		return s
	}
	out := s[:0]
	for i, v := range s {
		if !routed[i] {
			out = append(out, v)
		}
	}
	return out
}

// rerouteUnserved moves the items of add whose partition is no longer
// served into b's outbox entries, returning the rest.
func (n *Node) rerouteUnserved(b *store.Batch, add []frontier.Item) ([]frontier.Item, error) {
	if n.outbox == nil {
		return add, nil
	}
	keep := add[:0:0]
	for _, it := range add {
		if n.frontier.Serves(it.Host) {
			keep = append(keep, it)
			continue
		}
		if err := n.outbox.Add(b, it); err != nil {
			return nil, fmt.Errorf("node: route %s: %w", it.URL, err)
		}
	}
	return keep, nil
}

// add queues items with b's writes (frontier.Add). With
// Options.Partitioned, items of a partition released since admit split
// them are routed in b instead, and the rest queued.
func (n *Node) add(b *store.Batch, items []frontier.Item) <-chan error {
	if n.outbox == nil {
		return n.frontier.Add(b, items...)
	}
	for {
		err := <-n.frontier.Add(b, items...)
		if !errors.Is(err, frontier.ErrNotServed) {
			out := make(chan error, 1)
			out <- err
			close(out)
			return out
		}
		if items, err = n.rerouteUnserved(b, items); err != nil {
			b.Close()
			out := make(chan error, 1)
			out <- err
			close(out)
			return out
		}
	}
}

// routed wakes the outbox's pump after a batch that may hold entries
// committed.
func (n *Node) routed() {
	if n.outbox != nil {
		n.outbox.Notify()
	}
}

// Outbox returns the node's outbox (Options.Partitioned), for the fleet's
// pump; nil otherwise.
func (n *Node) Outbox() *outbox.Outbox { return n.outbox }

// DB returns the node's store, for the fleet's checkpoints
// (cluster/ckptstore).
func (n *Node) DB() *store.DB { return n.db }

// ErrUnknownJob is returned by Fold for URLs of a job the node does not
// hold (yet).
var ErrUnknownJob = errors.New("node: a job this node does not know")

// ErrNotPartitioned is returned by the partition methods of a node opened
// without Options.Partitioned.
var ErrNotPartitioned = errors.New("node: not partitioned")

// ServePartition starts serving partition p, whose keys must be in the
// store (restored from a checkpoint, or this node's own): its hosts are
// loaded, none leased before hold (a takeover's wait for a dead owner's
// fetches), and the seen gate learns its URLs (the filter of per-URL
// records its records).
func (n *Node) ServePartition(p partition.ID, hold time.Time) error {
	if !n.opts.Partitioned {
		return ErrNotPartitioned
	}
	if err := n.seen.LoadPartition(p); err != nil {
		return fmt.Errorf("node: serve partition %d: %w", p, err)
	}
	// The per-URL records another node wrote (a restored checkpoint):
	// without them in the filter, a refetch would start the URL's record
	// afresh, losing its validators and change history.
	if err := n.state.Fetched.LoadPartition(n.db, store.KindURL, p); err != nil {
		return fmt.Errorf("node: serve partition %d: %w", p, err)
	}
	if err := n.frontier.ServePartition(frontier.Partition(p), hold); err != nil {
		return fmt.Errorf("node: serve partition %d: %w", p, err)
	}
	// Items p holds for a job paused when they reached their heads, and
	// resumed or cancelled since while p was served elsewhere or nowhere,
	// go back to their queues or are dropped (a resume or a cancellation
	// moves only the partitions served then).
	for _, j := range n.Jobs() {
		if st, _ := j.State(); st == job.Running || st == job.Cancelled {
			if err := n.frontier.UnholdServed(uint32(j.ID)); err != nil {
				// They stay held (a later resume moves them): logged,
				// as p is served already.
				n.opts.Logger.Warn("held URLs of a job not moved", "partition", p, "job", j.ID, "state", st, "err", err)
			}
		}
	}
	n.poke()
	return nil
}

// ReleasePartition stops serving partition p: no lease of its hosts from
// now, the leases out completed (or ctx ends: then it returns ctx's error
// and a later call finishes), every change to it durable. Its keys stay in
// the store, for a checkpoint.
func (n *Node) ReleasePartition(ctx context.Context, p partition.ID) error {
	if !n.opts.Partitioned {
		return ErrNotPartitioned
	}
	if err := n.frontier.ReleasePartition(ctx, frontier.Partition(p)); err != nil {
		return fmt.Errorf("node: release partition %d: %w", p, err)
	}
	return nil
}

// SetFence makes the node lease nothing once fence's time has passed (a
// zero time: no fence yet): a fleet member whose membership may have
// expired must start no fetch, as another member may have taken its
// partitions over (cluster/owner's Runner.Fence). Leasing resumes when
// fence moves on (the membership renewed). Fetches already leased run on:
// a taker holds the hosts for that (cluster/fleet's TakeoverHold).
func (n *Node) SetFence(fence func() time.Time) { n.fence.Store(&fence) }

// IPGate caps the fetches to an address beyond this node: a fleet's cap
// over all its members (cluster/ipcap). Acquire waits for a slot of ip and
// returns its release, called once the fetch has ended.
type IPGate interface {
	Acquire(ctx context.Context, ip string) (release func(), err error)
}

// SetIPGate makes every fetch wait for a slot of g, after the node's own
// per-IP cap (the frontier's) let it go. A lease that waits ipGateWait
// for one goes back to its queue, for ipGateRetry.
func (n *Node) SetIPGate(g IPGate) { n.ipGate.Store(&g) }

const (
	ipGateWait  = 10 * time.Second
	ipGateRetry = 500 * time.Millisecond
)

// fenceRecheck is how often a fenced node looks at its fence again.
const fenceRecheck = 50 * time.Millisecond

func (n *Node) fenced() bool {
	f := n.fence.Load()
	if f == nil {
		return false
	}
	t := (*f)()
	return !t.IsZero() && !n.opts.Now().Before(t)
}

// Partitions returns the partitions the node serves now, in order.
func (n *Node) Partitions() []partition.ID {
	var out []partition.ID
	for _, p := range n.frontier.Partitions() {
		out = append(out, partition.ID(p))
	}
	return out
}

// serving returns a predicate over partitions: served now (every one
// without Options.Partitioned).
func (n *Node) serving() func(partition.ID) bool {
	if !n.opts.Partitioned {
		return func(partition.ID) bool { return true }
	}
	ps := n.Partitions()
	return func(p partition.ID) bool {
		i := sort.Search(len(ps), func(i int) bool { return ps[i] >= p })
		return i < len(ps) && ps[i] == p
	}
}

// Fold queues, through the seen gate of each item's job, the URLs another
// node routed to partition p (which this node serves), and records seq as
// the last routed message folded into p, in one durable batch. Items of a
// job that ended are dropped; items of a job the node does not know make
// it fold nothing and return an error wrapping ErrUnknownJob, for the
// caller to fold again once the job has reached the node.
func (n *Node) Fold(p partition.ID, seq uint64, items []frontier.Item) error {
	if !n.opts.Partitioned {
		return ErrNotPartitioned
	}
	b := n.db.NewBatch()
	if err := outbox.SetRouteSeq(b, p, seq); err != nil {
		b.Close()
		return err
	}
	byJob := map[uint32][]frontier.Item{}
	var jobs []uint32
	for _, it := range items {
		if _, ok := byJob[it.Job]; !ok {
			jobs = append(jobs, it.Job)
		}
		byJob[it.Job] = append(byJob[it.Job], it)
	}
	var add []frontier.Item
	for _, id := range jobs {
		its := byJob[id]
		j := n.Job(id)
		if j == nil {
			// Not yet: the fleet's catalog of crawls reaches each member a
			// little apart, and a member may route a crawl's links before
			// another has applied the crawl. The caller folds again later
			// (nothing of this batch is committed).
			b.Close()
			return fmt.Errorf("node: fold into partition %d: %w: job %d (%d URLs)", p, ErrUnknownJob, id, len(its))
		}
		if st, _ := j.State(); st.Ended() {
			continue
		}
		urls := make([]string, len(its))
		for i, it := range its {
			urls[i] = it.URL
		}
		isNew, err := n.seen.AddBatch(b, j.ID, urls)
		if err != nil {
			b.Close()
			return fmt.Errorf("node: fold into partition %d: seen-check: %w", p, err)
		}
		before := len(add)
		for i, it := range its {
			if isNew[i] || n.expandAgain(b, j, it) {
				add = append(add, it)
			}
		}
		j.Stats.Duplicates.Add(int64(len(its) - (len(add) - before)))
		j.Stats.Discovered.Add(int64(len(add) - before))
	}
	if err := <-n.frontier.Add(b, add...); err != nil {
		return fmt.Errorf("node: fold message %d into partition %d: %w", seq, p, err)
	}
	if len(add) > 0 {
		n.poke()
	}
	return nil
}

// expandAgain reports whether it, a URL of job j the seen gate calls a
// duplicate, must be fetched again, and if so readies its record in b. It
// must when the URL was fetched at a depth whose links j's depth limit
// cut, and it (routed here) comes at a depth whose links are in scope:
// the first path to a page is not always the shortest, and routing delays
// in a fleet make a long local path win more often. Its record is then
// written at it's depth (the next copy is no shallower) without
// validators: a 304 would not give the body whose links are wanted (the
// refetch of an exact copy of itself is parsed in a fleet: see fetchPage).
// Routed URLs only: a local link's duplicate costs no read.
func (n *Node) expandAgain(b *store.Batch, j *job.Job, it frontier.Item) bool {
	limit := j.Spec.MaxDepth
	if limit <= 0 || it.Depth >= limit {
		return false
	}
	rec := n.loadRecord(it)
	if !rec.HasDepth || rec.Job != uint32(j.ID) || rec.Depth < limit || rec.LastFetch.IsZero() {
		return false
	}
	rec.Depth, rec.ETag, rec.LastModified = it.Depth, "", ""
	key := store.URLKey(it.Host, it.URL)
	n.state.Fetched.Add(key)
	if err := b.Set(key, urlstate.Encode(rec)); err != nil {
		n.opts.Logger.Warn("record URL state", "url", it.URL, "err", err)
		return false
	}
	n.opts.Logger.Info("fetched again: a shorter path to a page whose links were cut", "url", it.URL, "depth", it.Depth, "limit", limit)
	return true
}

// Quiet reports whether the node has no work now, for a fleet's crawl end
// (cluster/finish): nothing queued or leased in the partitions it serves,
// no host's window being read, no job's seeds being queued, and nothing in
// its outbox. running lists its running jobs that end once their work is
// done (not continuous) and whose seeds it has queued.
func (n *Node) Quiet() (quiet bool, running []job.ID) {
	st := n.frontier.Stats()
	quiet = st.Queued == 0 && st.InFlight == 0 && st.Refilling == 0
	n.mu.Lock()
	for _, j := range n.jobs {
		if n.submitting[j.ID] {
			quiet = false
			continue
		}
		if s, _ := j.State(); s == job.Running && !j.Spec.Continuous {
			running = append(running, j.ID)
		}
	}
	n.mu.Unlock()
	if n.outbox != nil {
		if empty, err := n.outbox.Empty(); err != nil || !empty {
			quiet = false
		}
	}
	slices.Sort(running)
	return quiet, running
}

// outboxScan bounds the outbox entries IdleJobs reads: past it, every job
// may have URLs there.
const outboxScan = 10_000

// IdleJobs returns those of ids the node has no work for now, for a
// fleet's end of each crawl on its own (cluster/finish): nothing of the
// job queued or leased in the partitions it serves (frontier.Job: its
// counters are kept per partition, so they cover the partitions served
// and no other), none of its seeds being queued, none of its URLs in the
// outbox. It says nothing of what a partition not served holds, nor of
// what travels on the route stream.
//
// The outbox is read after the frontier: a completion writes the URLs it
// routes in the batch that ends its lease, so a lease seen ended has its
// URLs in the outbox by then (or published already).
func (n *Node) IdleJobs(ids []job.ID) []job.ID {
	var idle []job.ID
	for _, id := range ids {
		n.mu.Lock()
		submitting := n.submitting[id]
		n.mu.Unlock()
		if !submitting && n.frontier.JobDone(uint32(id)) {
			idle = append(idle, id)
		}
	}
	if n.outbox == nil || len(idle) == 0 {
		return idle
	}
	inOutbox, all, err := n.outbox.Jobs(outboxScan)
	if err != nil || all {
		return nil
	}
	return slices.DeleteFunc(idle, func(id job.ID) bool { return inOutbox[uint32(id)] })
}

// JobQuiet reports whether the node has no work now for job id
// (IdleJobs).
func (n *Node) JobQuiet(id job.ID) bool { return len(n.IdleJobs([]job.ID{id})) == 1 }
