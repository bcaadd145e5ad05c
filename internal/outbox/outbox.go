// Package outbox is a node's store of URLs found for partitions that other
// nodes serve, waiting to be published to them, and of the sequence up to
// which each served partition has folded the URLs routed to it.
//
// An entry is written into the batch of the completion that found its URL
// (Outbox.Add), so that a crash loses neither; it is deleted only once its
// publisher (cluster/route's pump) has had it acknowledged (Delete). Its
// key is store.OutboxKey(partition of the URL's host, number): numbers
// grow in the order entries were added, and Open numbers new entries
// after every entry the store holds, so that within a partition the key
// order is the order of addition. Its value is the item in the form of
// AppendItem, the same form a routed message carries its items in.
//
// The route sequence of partition p (RouteSeqKey) is the stream sequence
// of the last routed message folded into p: written by the fold in the
// batch of the URLs it folds (SetRouteSeq), so that the two are durable
// together, and carried by p's checkpoints (cluster/checkpoint).
//
// An Outbox is safe for concurrent use.
package outbox

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/trawl-crawler/trawl/frontier"
	"github.com/trawl-crawler/trawl/internal/store"
	"github.com/trawl-crawler/trawl/internal/store/partition"
)

// Outbox writes URLs for other partitions into a store's outbox.
type Outbox struct {
	db     *store.DB
	mu     sync.Mutex
	next   uint64
	notify chan struct{}
}

// Open returns the outbox of db, numbering new entries after every entry
// it holds.
func Open(db *store.DB) (*Outbox, error) {
	it, err := db.NewIter(store.KindPrefix(store.KindOutbox))
	if err != nil {
		return nil, fmt.Errorf("outbox: open: %w", err)
	}
	defer it.Close()
	var next uint64 = 1
	for p := 0; p < partition.Count; p++ {
		prefix := store.PartitionPrefix(store.KindOutbox, partition.ID(p))
		if it.SeekLT(store.PrefixEnd(prefix)) && bytes.HasPrefix(it.Key(), prefix) && len(it.Key()) == len(prefix)+8 {
			next = max(next, binary.BigEndian.Uint64(it.Key()[len(prefix):])+1)
		}
	}
	if err := it.Error(); err != nil {
		return nil, fmt.Errorf("outbox: open: %w", err)
	}
	return &Outbox{db: db, next: next, notify: make(chan struct{}, 1)}, nil
}

// Add writes it into b as an outbox entry for its host's partition. The
// entry exists once b commits; call Notify after.
func (o *Outbox) Add(b *store.Batch, it frontier.Item) error {
	o.mu.Lock()
	seq := o.next
	o.next++
	o.mu.Unlock()
	return b.Set(store.OutboxKey(partition.Of(it.Host), seq), AppendItem(nil, it))
}

// Notify wakes the publisher: entries were committed.
func (o *Outbox) Notify() {
	select {
	case o.notify <- struct{}{}:
	default:
	}
}

// Notified receives a value after Notify (several Notify calls before it
// is read make one).
func (o *Outbox) Notified() <-chan struct{} { return o.notify }

// Len counts the entries waiting (a scan: for tests and status).
func (o *Outbox) Len() (int, error) { return o.db.Count(store.KindPrefix(store.KindOutbox)) }

// Jobs returns the jobs of the entries waiting, reading at most limit
// of them: all is true if more wait, and then any job may have some.
func (o *Outbox) Jobs(limit int) (jobs map[uint32]bool, all bool, err error) {
	it, err := o.db.NewIter(store.KindPrefix(store.KindOutbox))
	if err != nil {
		return nil, false, fmt.Errorf("outbox: jobs: %w", err)
	}
	defer it.Close()
	jobs = make(map[uint32]bool)
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		if n == limit {
			return jobs, true, nil
		}
		n++
		item, err := DecodeItem(it.Value())
		if err != nil {
			return nil, false, fmt.Errorf("outbox: entry %q: %w", it.Key(), err)
		}
		jobs[item.Job] = true
	}
	if err := it.Error(); err != nil {
		return nil, false, fmt.Errorf("outbox: jobs: %w", err)
	}
	return jobs, false, nil
}

// Empty reports whether nothing waits in the outbox, reading at most one
// key (Len reads them all).
func (o *Outbox) Empty() (bool, error) {
	it, err := o.db.NewIter(store.KindPrefix(store.KindOutbox))
	if err != nil {
		return false, err
	}
	defer it.Close()
	return !it.First(), it.Error()
}

// Entry is one outbox entry as Range reads it.
type Entry struct {
	Key  []byte       // its store key (a copy: the caller may keep it)
	Part partition.ID // the partition its key is under
	Seq  uint64       // its number
	Item frontier.Item
	// Err, if not nil, says why the entry cannot be published: its key
	// does not decode (wrapping ErrBadKey), its value does not decode, or
	// its item's host is not of the partition its key is under. Only Key
	// is set then.
	Err error
}

// ErrBadKey is wrapped by the Err of an Entry whose key does not decode.
var ErrBadKey = errors.New("outbox: key unreadable")

// Range calls fn for each entry, in key order (by partition, then in the
// order they were added), from one consistent view of the store: entries
// deleted meanwhile (Delete, by fn or not) are still delivered. An error
// from fn stops Range and is returned.
func (o *Outbox) Range(fn func(Entry) error) error {
	it, err := o.db.NewIter(store.KindPrefix(store.KindOutbox))
	if err != nil {
		return err
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		e := Entry{Key: bytes.Clone(it.Key())}
		k, err := store.DecodeKey(e.Key)
		if err != nil {
			e.Err = fmt.Errorf("%w: %w", ErrBadKey, err)
		} else {
			e.Part, e.Seq = k.Part, k.Seq
			e.Item, e.Err = DecodeItem(it.Value())
			if e.Err == nil && partition.Of(e.Item.Host) != k.Part {
				e.Err = fmt.Errorf("outbox: host %s is not of partition %d", e.Item.Host, k.Part)
			}
			if e.Err != nil {
				e.Item = frontier.Item{}
			}
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	return it.Error()
}

// Delete deletes the entries of keys (published, or unreadable). Not
// synced: a crash that loses the deletes leaves the entries to be
// published again.
func (o *Outbox) Delete(keys ...[]byte) error {
	b := o.db.NewBatch()
	for _, k := range keys {
		b.Delete(k)
	}
	return o.db.CommitNoSync(b)
}
