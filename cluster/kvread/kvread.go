// Package kvread reads a fleet's key-value buckets in ways that keep
// answering while a member of the fleet is lost.
//
// Listing a bucket's keys and watching it both make a consumer in
// nats.go (an ordered, single-replica one). In a JetStream cluster, the
// meta leader places such a consumer on one of the stream's servers, and
// for a few seconds after a server is killed (until the leader no longer
// counts it as live) it may place it on the dead one: the request is then
// never answered, and the caller waits out its timeout (5 s by default)
// before it can try again. A member joining just after a kill waited that
// long to load the fleet's crawls, and the survivors' membership rounds
// failed for as long.
//
// Keys lists without a consumer: the stream's subjects, as its leader
// reports them. Watch hedges: when a watch is not made within a short
// wait, another is asked for beside it, and the first made is kept.
// Invariants: neither waits on one dead server longer than the hedge
// wait; every watch Watch made but does not return is stopped; a stopped
// watch leaves no goroutine behind, read to its end or not.
package kvread

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Keys returns the keys of the bucket kv (opened on js), sorted: every key
// the bucket's stream holds a message for, which includes a key whose
// latest entry is a delete or purge marker (a Get of it answers
// jetstream.ErrKeyNotFound). A bucket with no keys gives none, not an
// error. Two requests to the stream's leader (the stream, then its
// subjects); no consumer is made.
func Keys(ctx context.Context, js jetstream.JetStream, kv jetstream.KeyValue) ([]string, error) {
	bucket := kv.Bucket()
	s, err := js.Stream(ctx, "KV_"+bucket)
	if err != nil {
		return nil, err
	}
	prefix := "$KV." + bucket + "."
	info, err := s.Info(ctx, jetstream.WithSubjectFilter(prefix+">"))
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(info.State.Subjects))
	for subj := range info.State.Subjects {
		if k, ok := strings.CutPrefix(subj, prefix); ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys, nil
}

// MaxHedged bounds the watches Watch asks for at once.
const MaxHedged = 4

// Watch watches every key of kv, as kv.WatchAll(ctx, opts...) does, but
// asks for another watch beside the first when it is not made within
// hedge (zero: 500 ms), and again each hedge, up to MaxHedged at once. It
// returns the first watch made, or, if none is, the first error once
// every attempt failed, or ctx's once it ends. The watch lives until its
// Stop or until ctx ends.
func Watch(ctx context.Context, kv jetstream.KeyValue, hedge time.Duration, opts ...jetstream.WatchOpt) (jetstream.KeyWatcher, error) {
	if hedge <= 0 {
		hedge = 500 * time.Millisecond
	}
	type made struct {
		w      jetstream.KeyWatcher
		cancel context.CancelFunc
		err    error
	}
	results := make(chan made, MaxHedged)
	inFlight, asked := 0, 0
	ask := func() {
		actx, cancel := context.WithCancel(ctx)
		inFlight++
		asked++
		go func() {
			w, err := kv.WatchAll(actx, opts...)
			if err != nil {
				cancel()
			}
			results <- made{w, cancel, err}
		}()
	}
	// Once one is kept, the others are stopped as they answer.
	drain := func(n int) {
		go func() {
			for range n {
				if r := <-results; r.err == nil {
					stop(r.w)
					r.cancel()
				}
			}
		}()
	}
	ask()
	t := time.NewTimer(hedge)
	defer t.Stop()
	var first error
	for {
		select {
		case r := <-results:
			inFlight--
			if r.err == nil {
				drain(inFlight)
				return &watcher{KeyWatcher: r.w, cancel: r.cancel}, nil
			}
			if first == nil {
				first = r.err
			}
			if inFlight > 0 {
				continue
			}
			if ctx.Err() != nil || asked >= MaxHedged {
				return nil, first
			}
			ask()
			t.Reset(hedge)
		case <-t.C:
			if asked < MaxHedged {
				ask()
				t.Reset(hedge)
			}
		case <-ctx.Done():
			drain(inFlight)
			return nil, errors.Join(ctx.Err(), first)
		}
	}
}

// watcher is a kept watch: Stop also ends its own context.
type watcher struct {
	jetstream.KeyWatcher
	cancel context.CancelFunc
}

func (w *watcher) Stop() error {
	err := stop(w.KeyWatcher)
	w.cancel()
	return err
}

// stop stops w and drains its updates channel until nats.go closes it.
// nats.go's delivery goroutine blocks sending to a full channel while it
// holds the lock the channel's close needs: a watch stopped unread would
// keep that goroutine for ever. Draining lets it see the stop and close
// the channel, which ends the drain. A drain that receives nothing for
// drainIdle gives up: in nats.go a watch whose context ends while it is
// being made can stop before its close handler is set, and its channel
// is then never closed (nor sent to). The caller reads w no more.
func stop(w jetstream.KeyWatcher) error {
	err := w.Stop()
	go func() {
		idle := time.NewTimer(drainIdle)
		defer idle.Stop()
		for {
			select {
			case _, ok := <-w.Updates():
				if !ok {
					return
				}
				idle.Reset(drainIdle)
			case <-idle.C:
				return
			}
		}
	}()
	return err
}

// drainIdle is how long a stopped watch's drain waits for its next
// update before giving up.
const drainIdle = 10 * time.Second
