// Package ckptstore keeps the fleet's partition checkpoints in the
// JetStream object store bucket trawl-ckpt: one object per partition,
// named p-<n>, holding a checkpoint.Write stream, with object metadata
// saying which node wrote it, when, how many keys it holds and the route
// sequence it was folded up to.
//
// Invariants:
//   - A checkpoint is streamed from the store into the bucket (Save) and
//     from the bucket into the store (Restore) in chunks; it is never
//     whole in memory.
//   - An object is replaced whole: its info is published only after all
//     its chunks were acknowledged, each in order (put), so a Save that
//     fails (a store error, a lost connection) leaves the previous
//     checkpoint of the partition in place.
//   - The route sequence of an object (header and metadata) is that of the
//     keys it holds (checkpoint.Write reads both from one snapshot).
//   - Restore either fills the partition with a whole, checked checkpoint
//     or, on any error after the object was found (a corrupt object, a
//     connection lost part way), leaves the partition empty, with an error
//     naming it. A partition never saved is reported not found and left as
//     it was: the caller then starts it empty (checkpoint.Clear).
//
// A Store is safe for concurrent use on different partitions. Concurrent
// Saves of one partition (two owners) both succeed; the later is kept.
// Ownership (cluster/owner) makes that not happen.
package ckptstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/trawl-crawler/trawl/cluster/checkpoint"
	"github.com/trawl-crawler/trawl/cluster/jsensure"
	"github.com/trawl-crawler/trawl/internal/store"
	"github.com/trawl-crawler/trawl/internal/store/partition"
)

// Bucket is the object store bucket of checkpoints.
const Bucket = "trawl-ckpt"

// Object metadata keys.
const (
	metaNode      = "node"
	metaWritten   = "written-unix-ms"
	metaKeys      = "keys"
	metaRouteSeq  = "route-seq"
	metaPartition = "partition"
)

// Name returns the object name of partition p's checkpoint.
func Name(p partition.ID) string { return "p-" + strconv.Itoa(int(p)) }

// Options configure Open.
type Options struct {
	// Replicas is the bucket's replication factor. Zero: 1.
	Replicas int
	// BeforeCommit, if set, is called by Save once the checkpoint's keys
	// have all been read (from the store snapshot taken when the save
	// began) and before the checkpoint replaces the previous one; an error
	// aborts the save. The fleet publishes its outbox there: a page the
	// checkpoint records as fetched must not have links still waiting to
	// be routed, which a crash would lose.
	BeforeCommit func(ctx context.Context, p partition.ID) error
}

// Store is the bucket of checkpoints.
type Store struct {
	js     jetstream.JetStream
	obs    jetstream.ObjectStore
	stream jetstream.Stream // the bucket's
	before func(ctx context.Context, p partition.ID) error
	// retryWait is the wait before Restore's first retry of an unreadable
	// checkpoint (defaultRetryWait); each next retry waits one more.
	retryWait time.Duration
}

const defaultRetryWait = 250 * time.Millisecond

// Open creates the bucket, or updates its settings, and returns it.
func Open(ctx context.Context, js jetstream.JetStream, o Options) (*Store, error) {
	if o.Replicas <= 0 {
		o.Replicas = 1
	}
	obs, err := jsensure.ObjectStore(ctx, js, jetstream.ObjectStoreConfig{
		Bucket:      Bucket,
		Description: "trawl: the latest checkpoint of each partition",
		Storage:     jetstream.FileStorage,
		Replicas:    o.Replicas,
	})
	if err != nil {
		return nil, fmt.Errorf("ckptstore: bucket %s: %w", Bucket, err)
	}
	stream, err := js.Stream(ctx, "OBJ_"+Bucket)
	if err != nil {
		return nil, fmt.Errorf("ckptstore: bucket %s: stream: %w", Bucket, err)
	}
	return &Store{js: js, obs: obs, stream: stream, before: o.BeforeCommit, retryWait: defaultRetryWait}, nil
}

// Info describes a stored checkpoint.
type Info struct {
	Partition partition.ID
	// Node is the name of the node that wrote it.
	Node string
	// Written is when it was written (to the millisecond).
	Written time.Time
	// Keys is the number of keys it holds; -1 if the metadata lacks it.
	Keys int
	// RouteSeq is the route stream sequence its keys were folded up to.
	RouteSeq uint64
	// Size is the object's size in bytes (compressed).
	Size uint64
}

// Save checkpoints partition p of db into the bucket as written by node,
// replacing the partition's previous checkpoint once the new one is whole.
func (s *Store) Save(ctx context.Context, p partition.ID, db *store.DB, node string) (Info, error) {
	type result struct {
		h   checkpoint.Header
		st  checkpoint.Stats
		err error
	}
	// The snapshot holds only what the store has made durable: a
	// checkpoint ahead of its writer's own store (writes applied, not yet
	// synced, then lost with the machine) would give a taker a state
	// whose later changes the writer numbered from an older one.
	if err := db.SyncWAL(); err != nil {
		return Info{}, fmt.Errorf("ckptstore: partition %d: %w", p, err)
	}
	pr, pw := io.Pipe()
	done := make(chan result, 1)
	go func() {
		h, st, err := checkpoint.Write(pw, db, p, time.Now())
		pw.CloseWithError(err) // nil: the reader sees io.EOF
		done <- result{h, st, err}
	}()
	var (
		res      result
		received bool
	)
	wait := func() result {
		if !received {
			res, received = <-done, true
		}
		return res
	}
	meta := map[string]string{
		metaPartition: strconv.Itoa(int(p)),
		metaNode:      node,
	}
	// The header's fields and the key count are known once the stream has
	// ended, before the object's info is published.
	finish := func() error {
		r := wait()
		if r.err != nil {
			return r.err
		}
		if s.before != nil {
			if err := s.before(ctx, p); err != nil {
				return fmt.Errorf("before commit: %w", err)
			}
		}
		meta[metaWritten] = strconv.FormatInt(r.h.Written.UnixMilli(), 10)
		meta[metaRouteSeq] = strconv.FormatUint(r.h.RouteSeq, 10)
		meta[metaKeys] = strconv.Itoa(r.st.Keys)
		return nil
	}
	oi, err := s.put(ctx, jetstream.ObjectMeta{
		Name:        Name(p),
		Description: fmt.Sprintf("trawl checkpoint of partition %d", p),
		Metadata:    meta,
	}, pr, finish)
	if err != nil {
		pr.CloseWithError(err) // unblocks the writer
		if r := wait(); r.err != nil && !errors.Is(r.err, err) && !errors.Is(err, r.err) {
			err = errors.Join(err, r.err)
		}
		return Info{}, fmt.Errorf("ckptstore: save partition %d: %w", p, err)
	}
	r := wait()
	return Info{Partition: p, Node: node, Written: time.UnixMilli(r.h.Written.UnixMilli()), Keys: r.st.Keys, RouteSeq: r.h.RouteSeq, Size: oi.Size}, nil
}

// Latest returns the Info of partition p's checkpoint without reading it;
// found is false when there is none.
func (s *Store) Latest(ctx context.Context, p partition.ID) (info Info, found bool, err error) {
	oi, err := s.obs.GetInfo(ctx, Name(p))
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return Info{}, false, nil
	}
	if err != nil {
		return Info{}, false, fmt.Errorf("ckptstore: partition %d: %w", p, err)
	}
	return infoOf(p, oi), true, nil
}

// ErrUnreadable is wrapped by Restore's error when the partition's
// checkpoint was found but did not read whole and valid, read again and
// again (not a lost connection, nor a checkpoint of another store
// format).
var ErrUnreadable = errors.New("checkpoint unreadable")

// Restore replaces partition p's keys in db with its latest checkpoint;
// found is false (and db untouched) when there is none. On any error
// after the checkpoint was found, the partition is left empty.
func (s *Store) Restore(ctx context.Context, p partition.ID, db *store.DB) (info Info, found bool, err error) {
	// A read through one server just after another wrote the object was
	// seen (1 in ~10 runs of a new 3-server bucket) to end its chunks
	// early, failing the object's digest; the object was whole, and read
	// again it was read whole. A read that began past the first chunk (the
	// 32-byte header: "corrupt: magic" on zstd's bytes) was seen once in a
	// loaded CI run, again and again for a partition just written through
	// another server. So a digest mismatch or a stream that does not parse
	// is tried again, four times, further apart each time.
	for try := 0; ; try++ {
		info, found, err = s.restore(ctx, p, db)
		retry := errors.Is(err, jetstream.ErrDigestMismatch) || errors.Is(err, checkpoint.ErrCorrupt)
		if retry && try == 4 {
			return info, found, fmt.Errorf("%w: %w", ErrUnreadable, err)
		}
		if !retry || ctx.Err() != nil {
			return info, found, err
		}
		select {
		case <-ctx.Done():
			return info, found, err
		case <-time.After(time.Duration(try+1) * s.retryWait):
		}
	}
}

func (s *Store) restore(ctx context.Context, p partition.ID, db *store.DB) (info Info, found bool, err error) {
	// nats.go (v1.55.0, jetstream/object.go) leaks a goroutine when the
	// context of a Get ends while Get subscribes to the chunks: the
	// server has begun to send them, the callback blocks writing the
	// first into a pipe that nobody reads or closes, for good (a member
	// stopping mid-takeover met it). So Get runs on a context of its own,
	// and ctx is checked after it and before each read. Its deadline is
	// also every read's (a read blocked on a stalled stream waits for it,
	// whatever ctx does): ctx's if it has one, else restoreTime of the
	// object's size.
	oi, err := s.obs.GetInfo(ctx, Name(p))
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return Info{}, false, nil
	}
	if err != nil {
		return Info{}, false, fmt.Errorf("ckptstore: restore partition %d: %w", p, err)
	}
	// An object whose chunks are not all there (purged: a save that
	// failed after publishing the object's info did so once) never reads
	// whole: the read would wait for the missing ones until its deadline.
	// Counted first, it fails at once.
	if n, err := s.chunksStored(ctx, oi); err != nil {
		return Info{}, false, fmt.Errorf("ckptstore: restore partition %d: %w", p, err)
	} else if n < uint64(oi.Chunks) {
		info := infoOf(p, oi)
		return info, true, emptied(db, p, fmt.Errorf("ckptstore: restore partition %d (written by %q at %s): %w: %d of its %d chunks are in the bucket",
			p, info.Node, info.Written.Format(time.RFC3339), checkpoint.ErrCorrupt, n, oi.Chunks))
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(restoreTime(oi.Size))
	}
	gctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
	defer cancel()
	obj, err := s.obs.Get(gctx, Name(p))
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return Info{}, false, nil
	}
	if err != nil {
		return Info{}, false, fmt.Errorf("ckptstore: restore partition %d: %w", p, err)
	}
	defer obj.Close() // before cancel: the chunk writer then fails at once
	if err := ctx.Err(); err != nil {
		return Info{}, false, fmt.Errorf("ckptstore: restore partition %d: %w", p, err)
	}
	oi, err = obj.Info()
	if err != nil {
		return Info{}, true, emptied(db, p, fmt.Errorf("ckptstore: restore partition %d: %w", p, err))
	}
	info = infoOf(p, oi)
	r := ctxReader{ctx, obj}
	h, st, err := checkpoint.Read(r, db, p)
	if err == nil {
		// Read to the object's end, where its SHA-256 digest is checked.
		_, err = io.Copy(io.Discard, r)
	}
	if err != nil {
		return info, true, emptied(db, p, fmt.Errorf("ckptstore: restore partition %d (written by %q at %s): %w",
			p, info.Node, info.Written.Format(time.RFC3339), err))
	}
	info.Written, info.RouteSeq, info.Keys = h.Written, h.RouteSeq, st.Keys
	return info, true, nil
}

// chunksStored counts the messages the bucket's stream holds on the
// chunk subject of the object oi.
func (s *Store) chunksStored(ctx context.Context, oi *jetstream.ObjectInfo) (uint64, error) {
	subj := "$O." + Bucket + ".C." + oi.NUID
	si, err := s.stream.Info(ctx, jetstream.WithSubjectFilter(subj))
	if err != nil {
		return 0, fmt.Errorf("count the object's chunks: %w", err)
	}
	return si.State.Subjects[subj], nil
}

// restoreTime bounds a Restore's reading of a checkpoint of size bytes:
// 15 s, and a second per 4 MiB (far slower than JetStream serves it), so
// that a stalled read ends the restore (the owner tries again next round)
// without holding its member up for long.
func restoreTime(size uint64) time.Duration {
	return 15*time.Second + time.Duration(size/(4<<20))*time.Second
}

// ctxReader reads from r until ctx ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// emptied clears partition p (checkpoint.Read does on most errors, not
// on a refused header) and returns err.
func emptied(db *store.DB, p partition.ID, err error) error {
	if cerr := checkpoint.Clear(db, p); cerr != nil {
		return errors.Join(err, cerr)
	}
	return err
}

// infoOf reads an object's metadata; fields it lacks stay zero (Keys -1).
func infoOf(p partition.ID, oi *jetstream.ObjectInfo) Info {
	info := Info{Partition: p, Node: oi.Metadata[metaNode], Keys: -1, Size: oi.Size}
	if ms, err := strconv.ParseInt(oi.Metadata[metaWritten], 10, 64); err == nil {
		info.Written = time.UnixMilli(ms)
	}
	if n, err := strconv.Atoi(oi.Metadata[metaKeys]); err == nil {
		info.Keys = n
	}
	if seq, err := strconv.ParseUint(oi.Metadata[metaRouteSeq], 10, 64); err == nil {
		info.RouteSeq = seq
	}
	return info
}
