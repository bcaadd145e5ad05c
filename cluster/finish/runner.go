package finish

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/trawl-crawler/trawl/cluster/fleetnode"
	"github.com/trawl-crawler/trawl/cluster/jsensure"
	"github.com/trawl-crawler/trawl/cluster/kvread"
	"github.com/trawl-crawler/trawl/cluster/route"
	"github.com/trawl-crawler/trawl/internal/outbox"
	"github.com/trawl-crawler/trawl/internal/store"
	"github.com/trawl-crawler/trawl/internal/store/partition"
	"github.com/trawl-crawler/trawl/job"
)

// Bucket is the KV bucket of the members' reports, one key per member
// name. Part of the fleet's protocol.
const Bucket = "trawl-finish"

// Catalog is what the coordinator needs of the fleet's crawls
// (*catalog.Catalog has it).
type Catalog interface {
	// Running returns the running crawls that end when their work is
	// done, each with its record's revision.
	Running() map[job.ID]uint64
	// Finish ends crawl id if its record is still at revision rev.
	Finish(ctx context.Context, id job.ID, rev uint64) (bool, error)
}

// Options configure a Runner. Name, Node, DB, JS, Catalog and Members are
// required.
type Options struct {
	Name string
	Node fleetnode.Node
	// DB is the node's store (node.Node.DB), where the route sequence
	// folded into each of its partitions is read.
	DB      *store.DB
	JS      jetstream.JetStream
	Catalog Catalog
	// Members returns the live members' names (fleet.Fleet.Members).
	Members func() []string
	// Every is how often the member reports and the coordinator checks.
	// Zero: 1 s.
	Every time.Duration
	// Replicas of the bucket. Zero: 1.
	Replicas int
	// Logger receives the crawls ended and failures. Nil: silent.
	Logger *slog.Logger
}

// Runner reports this member's work and, on the coordinator, ends the
// crawls that Decide allows.
type Runner struct {
	opts Options
	kv   jetstream.KeyValue
	prev *Snapshot // the coordinator's last check

	toldWhy time.Time // when the coordinator last logged why no crawl ends
}

// checkBudget is the least time a check may take (reading the reports and
// the route stream), whatever Every: a loaded store answers slowly.
const checkBudget = 10 * time.Second

// tellWhyEvery is how often a coordinator whose crawls do not end says
// why at Info (each check's reason is at Debug).
const tellWhyEvery = 30 * time.Second

// Open binds the reports' bucket, creating it if absent.
func Open(ctx context.Context, opts Options) (*Runner, error) {
	if opts.Name == "" || opts.Node == nil || opts.DB == nil || opts.JS == nil || opts.Catalog == nil || opts.Members == nil {
		return nil, errors.New("finish: Name, Node, DB, JS, Catalog and Members are required")
	}
	if opts.Every <= 0 {
		opts.Every = time.Second
	}
	if opts.Replicas <= 0 {
		opts.Replicas = 1
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	kv, err := jsensure.KeyValue(ctx, opts.JS, jetstream.KeyValueConfig{
		Bucket: Bucket, History: 1, Replicas: opts.Replicas,
		TTL:         30 * opts.Every, // a member gone stops counting
		Description: "trawl fleet members' reports of their work, for the fleet-wide end of a crawl",
	})
	if err != nil {
		return nil, fmt.Errorf("finish: bucket %s: %w", Bucket, err)
	}
	return &Runner{opts: opts, kv: kv}, nil
}

// Run reports every Every and, while this member is the first live member
// by name, checks and ends crawls, until ctx ends; it returns ctx's error.
func (r *Runner) Run(ctx context.Context) error {
	t := time.NewTicker(r.opts.Every)
	defer t.Stop()
	for {
		if err := r.report(ctx); err != nil && ctx.Err() == nil {
			r.opts.Logger.Warn("finish: report", "err", err)
		}
		if ctx.Err() == nil {
			r.check(ctx)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// report writes this member's Report. The folded sequences are read
// before the activity and the node's quiet verdicts after both: a URL
// folded meanwhile is either past a sequence read (then the next check
// needs it folded) or queued, or counted as activity.
func (r *Runner) report(ctx context.Context) error {
	n := r.opts.Node
	rep := Report{Folded: map[int]uint64{}, JobActivity: map[job.ID]int64{}}
	for _, p := range n.Partitions() {
		seq, err := outbox.RouteSeq(r.opts.DB, p)
		if err != nil {
			return err
		}
		rep.Folded[int(p)] = seq
	}
	for _, j := range n.Jobs() {
		a := j.Stats.Requests.Load() + j.Stats.Discovered.Load() + j.Stats.Duplicates.Load()
		rep.Activity += a
		rep.JobActivity[j.ID] = a
	}
	rep.Quiet, rep.Jobs = n.Quiet()
	rep.Idle = n.IdleJobs(rep.Jobs)
	v, err := json.Marshal(rep)
	if err != nil {
		return err
	}
	pctx, cancel := context.WithTimeout(ctx, 5*r.opts.Every)
	defer cancel()
	_, err = r.kv.Put(pctx, r.opts.Name, v)
	return err
}

// check is the coordinator's: a snapshot, Decide against the last one,
// and the crawls it allows finished.
func (r *Runner) check(ctx context.Context) {
	members := r.opts.Members()
	slices.Sort(members)
	if len(members) == 0 || members[0] != r.opts.Name {
		r.prev = nil
		return
	}
	running := r.opts.Catalog.Running()
	cur := &Snapshot{Members: members, Reports: map[string]Report{}, Revs: map[string]uint64{}, JobRevs: running}
	for id := range running {
		cur.Running = append(cur.Running, id)
	}
	slices.Sort(cur.Running)
	if len(cur.Running) == 0 {
		r.prev = nil
		return
	}
	cctx, cancel := context.WithTimeout(ctx, max(10*r.opts.Every, checkBudget))
	defer cancel()
	for _, m := range members {
		e, err := r.kv.Get(cctx, m)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue
		}
		if err != nil {
			r.opts.Logger.Warn("finish: read a report", "member", m, "err", err)
			r.prev = nil
			return
		}
		var rep Report
		if err := json.Unmarshal(e.Value(), &rep); err != nil {
			r.opts.Logger.Warn("finish: unreadable report", "member", m, "err", err)
			continue
		}
		cur.Reports[m], cur.Revs[m] = rep, e.Revision()
	}
	keys, err := kvread.Keys(cctx, r.opts.JS, r.kv)
	if err != nil {
		r.opts.Logger.Warn("finish: list the reports", "err", err)
		r.prev = nil
		return
	}
	for _, k := range keys {
		if slices.Contains(members, k) {
			continue
		}
		e, err := r.kv.Get(cctx, k)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue
		}
		var rep Report
		if err == nil {
			err = json.Unmarshal(e.Value(), &rep)
		}
		if err != nil {
			r.opts.Logger.Warn("finish: read a report", "member", k, "err", err)
			r.prev = nil
			return
		}
		if cur.Others == nil {
			cur.Others = map[string]Report{}
		}
		cur.Others[k] = rep
	}
	if ends, _ := Quiet(*cur, partition.Count); len(ends) > 0 {
		// The next check judges the stream against this one's.
		last, err := r.lastSeqs(cctx)
		if err != nil {
			r.opts.Logger.Warn("finish: read the route stream", "err", err)
			r.prev = nil
			return
		}
		cur.Last = last
	}
	prev := r.prev
	r.prev = cur
	if prev == nil {
		return
	}
	ends, why := Decide(*prev, *cur, partition.Count)
	if len(ends) == 0 {
		if len(cur.Running) > 0 && time.Since(r.toldWhy) >= tellWhyEvery {
			r.toldWhy = time.Now()
			r.opts.Logger.Info("finish: no crawl ends yet", "why", why)
		} else {
			r.opts.Logger.Debug("finish: no crawl ends", "why", why)
		}
		return
	}
	for _, id := range ends {
		// At the revision the first of the two checks saw: seeds added
		// (or any change) since then leave the crawl running.
		done, err := r.opts.Catalog.Finish(cctx, id, prev.JobRevs[id])
		switch {
		case err != nil:
			r.opts.Logger.Warn("finish: end a crawl", "job", id, "err", err)
		case done:
			r.opts.Logger.Info("finish: crawl finished: no member has work for it", "job", id, "members", len(members))
		}
	}
	r.prev = nil // the next end needs two new checks
}

// lastReaders is how many reads of the route stream's last sequences run
// at once: one after another, 256 round trips outlasted a check's budget
// on a loaded machine, and no crawl could end.
const lastReaders = 16

// lastSeqs reads the route stream's last sequence for each partition.
func (r *Runner) lastSeqs(ctx context.Context) (map[int]uint64, error) {
	s, err := r.opts.JS.Stream(ctx, route.Stream)
	if err != nil {
		return nil, err
	}
	seqs := make([]uint64, partition.Count)
	errs := make([]error, partition.Count)
	var wg sync.WaitGroup
	next := make(chan int)
	for range lastReaders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range next {
				seq, err := route.LastSeq(ctx, s, partition.ID(p))
				if err != nil {
					errs[p] = fmt.Errorf("partition %d: %w", p, err)
				}
				seqs[p] = seq
			}
		}()
	}
	for p := range partition.Count {
		next <- p
	}
	close(next)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	last := make(map[int]uint64, partition.Count)
	for p, seq := range seqs {
		if seq > 0 {
			last[p] = seq
		}
	}
	return last, nil
}
