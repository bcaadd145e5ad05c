package node

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/trawl-crawler/trawl/frontier"
	"github.com/trawl-crawler/trawl/internal/frontierdb"
	"github.com/trawl-crawler/trawl/internal/store"
	"github.com/trawl-crawler/trawl/internal/store/urlseen"
	"github.com/trawl-crawler/trawl/internal/store/urlstate"
)

// State is a node's durable crawl state: the store and the parts that
// live in it, the frontier's queues and host clocks and the URL-seen gate.
// The node opens it once; `trawl bench frontier` opens it the same way.
type State struct {
	DB       *store.DB
	Queue    *frontierdb.Store
	Frontier *frontier.Frontier
	Seen     *urlseen.Durable
	// Fetched holds every per-URL record's key (store.KindURL) in a Bloom
	// filter, so that a first fetch skips the read of a record it cannot
	// have. Sized and loaded as Seen is.
	Fetched *urlseen.KeyFilter
	// Digests holds the keys of the content-seen gate's exact index
	// (store.KindDigest) likewise, so that a page whose payload is new
	// skips the index read.
	Digests *urlseen.KeyFilter
	// Resumed reports that the store held an earlier run's state.
	Resumed bool
	// Opened is how long OpenState spent on each part: start-up reads
	// every seen key, URL record key and digest key (the filters) and
	// every queue key (the frontier's per-host counts), the parts side by
	// side.
	Opened OpenTimes
}

// OpenTimes is how long each part of OpenState took. The store is opened
// first; the other parts run at the same time.
type OpenTimes struct {
	Store    time.Duration // opening the store (its log replayed, if it holds one)
	Seen     time.Duration // the URL-seen gate's filter, from the seen keys
	Filters  time.Duration // the filters over URL records and digests (the longer)
	Frontier time.Duration // host states, queue counts and job counters
}

// StateOptions configures OpenState.
type StateOptions struct {
	// Dir is the store's directory (DataDir/state for a node). Required.
	Dir string
	// FS is the file system Dir is on. Default vfs.Default.
	FS vfs.FS
	// Fresh deletes Dir first.
	Fresh bool
	// Frontier configures the frontier; its Store is set by OpenState.
	Frontier frontier.Options
	// Seen configures the URL-seen gate.
	Seen urlseen.DurableOptions
	// Logger receives the store's log. Default: discard.
	Logger *slog.Logger
	// MinSyncInterval is the least time between two fsyncs of the store's
	// log (store.Options.MinSyncInterval).
	MinSyncInterval time.Duration
}

// Validate reports every bad field, the frontier's and the seen gate's
// included, without touching Dir.
func (o StateOptions) Validate() error {
	var errs []error
	if o.Dir == "" {
		errs = append(errs, errors.New("node: state: Dir is empty"))
	}
	return errors.Join(append(errs, o.storeOptions().Validate(), o.Frontier.Validate(), o.Seen.Validate())...)
}

// storeOptions are the options of the store under Dir.
func (o StateOptions) storeOptions() store.Options {
	return store.Options{FS: o.FS, Logger: o.Logger, MinSyncInterval: o.MinSyncInterval}
}

// OpenState validates o, then opens (or, with Fresh, recreates) the store
// in o.Dir and restores the seen set and the frontier from it.
func OpenState(o StateOptions) (*State, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if o.FS == nil {
		o.FS = vfs.Default
	}
	if o.Fresh {
		if err := o.FS.RemoveAll(o.Dir); err != nil {
			return nil, fmt.Errorf("node: fresh start: remove %s: %w", o.Dir, err)
		}
	}
	_, statErr := o.FS.Stat(o.Dir)
	s := &State{Resumed: statErr == nil}
	t0 := time.Now()
	db, err := store.Open(o.Dir, o.storeOptions())
	if err != nil {
		return nil, fmt.Errorf("node: open state: %w", err)
	}
	s.DB = db
	s.Opened.Store = time.Since(t0)
	// The filters and the frontier read disjoint keys (start-up reads
	// every seen key, URL record, digest and queue key): side by side.
	// Except in a store of the previous format version, whose upgrade the
	// frontier's load commits: there the filters are loaded first, so
	// that a store they cannot read is left as it was, for the binary
	// that wrote it.
	s.Queue = frontierdb.New(db, frontierdb.Options{})
	fo := o.Frontier
	fo.Store = s.Queue
	var seenErr, fetchedErr, digestsErr, frontierErr error
	var wg sync.WaitGroup
	timed := func(d *time.Duration, f func()) {
		wg.Go(func() {
			t := time.Now()
			f()
			*d = time.Since(t)
		})
	}
	loadFrontier := func() { s.Frontier, frontierErr = frontier.New(fo) }
	upgrade := db.NeedsUpgrade()
	var fetchedTime, digestsTime time.Duration
	timed(&s.Opened.Seen, func() { s.Seen, seenErr = urlseen.NewDurable(db, o.Seen) })
	timed(&fetchedTime, func() { s.Fetched, fetchedErr = urlseen.NewKeyFilter(db, store.KindURL, o.Seen) })
	timed(&digestsTime, func() { s.Digests, digestsErr = urlseen.NewKeyFilter(db, store.KindDigest, o.Seen) })
	if !upgrade {
		timed(&s.Opened.Frontier, loadFrontier)
	}
	wg.Wait()
	s.Opened.Filters = max(fetchedTime, digestsTime)
	if seenErr != nil {
		seenErr = fmt.Errorf("node: load seen URLs: %w", seenErr)
	}
	if fetchedErr != nil {
		fetchedErr = fmt.Errorf("node: load URL records: %w", fetchedErr)
	}
	if digestsErr != nil {
		digestsErr = fmt.Errorf("node: load payload digests: %w", digestsErr)
	}
	err = errors.Join(seenErr, fetchedErr, digestsErr)
	if upgrade && err == nil {
		timed(&s.Opened.Frontier, loadFrontier)
		wg.Wait()
	}
	if err := errors.Join(err, frontierErr); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Close commits what is queued for the store and closes it.
func (s *State) Close() error {
	var errs []error
	if s.Queue != nil {
		if err := s.Queue.Close(); err != nil && !errors.Is(err, frontierdb.ErrClosed) {
			errs = append(errs, err)
		}
	}
	if s.DB != nil {
		if err := s.DB.Close(); err != nil && !errors.Is(err, store.ErrClosed) {
			errs = append(errs, fmt.Errorf("node: close state: %w", err))
		}
	}
	return errors.Join(errs...)
}

// loadRecord returns the stored record of it's URL (package urlstate):
// the zero Record if there is none or it cannot be read (logged).
func (n *Node) loadRecord(it frontier.Item) urlstate.Record {
	key := store.URLKey(it.Host, it.URL)
	if !n.state.Fetched.MayHave(key) {
		return urlstate.Record{}
	}
	v, err := n.db.Get(key)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return urlstate.Record{}
	case err != nil:
		n.opts.Logger.Warn("read URL state; starting afresh", "url", it.URL, "err", err)
		return urlstate.Record{}
	}
	r, err := urlstate.Decode(v)
	if err != nil {
		n.opts.Logger.Warn("stored URL state unreadable; starting afresh", "url", it.URL, "err", err)
	}
	return r
}
