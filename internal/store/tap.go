package store

import (
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// A Tap sees every batch committed to the store, one at a time in the
// order they are applied, while it may still add writes to it: a fleet
// member replicates its partitions' changes this way (cluster/progress).
//
// Stage is called with each batch about to be applied (never with a sync
// of the log alone) and with no other commit in between; the writes it
// adds (TapBatch.Set) are applied atomically with the batch. The function
// it returns, if not nil, is called with the outcome of the apply (nil:
// applied, visible to reads, not yet durable unless the commit asked) and
// before the next batch's Stage. Both run under the store's commit order
// lock: they must be quick and must not commit to the store.
//
// With a tap set, a commit that waits for durability applies its batch in
// that order first, then waits for a sync of the log (shared with every
// other commit's): the order in which the tap sees batches is the order
// in which they are applied, and Commit still returns only once its batch
// is durable.
type Tap interface {
	Stage(b TapBatch) (done func(err error))
}

// SetTap sets the store's tap (nil: none). Set it before the writes it
// must see: a commit under way when it is set may not be seen.
func (db *DB) SetTap(t Tap) {
	if t == nil {
		db.tap.Store(nil)
		return
	}
	db.tap.Store(&t)
}

// OpKind is the kind of one write in a batch.
type OpKind uint8

// Kinds of writes.
const (
	OpSet         OpKind = iota + 1 // key = value
	OpDelete                        // key deleted
	OpDeleteRange                   // every key in [key, value) deleted
)

func (k OpKind) String() string {
	switch k {
	case OpSet:
		return "set"
	case OpDelete:
		return "delete"
	case OpDeleteRange:
		return "delete range"
	}
	return fmt.Sprintf("op(%d)", uint8(k))
}

// TapBatch is a batch as a Tap sees it.
type TapBatch struct{ b *pebble.Batch }

// Each calls fn with each write of the batch in order: for OpDeleteRange,
// value is the range's exclusive end. key and value are valid only during
// the call. A kind of write trawl never makes (a merge, a single delete, a
// range key) is an error, and so is a batch that does not decode.
func (t TapBatch) Each(fn func(op OpKind, key, value []byte)) error {
	r := t.b.Reader()
	for {
		kind, key, value, ok, err := r.Next()
		if err != nil {
			return fmt.Errorf("store: tap: read batch: %w", err)
		}
		if !ok {
			return nil
		}
		switch kind {
		case pebble.InternalKeyKindSet:
			fn(OpSet, key, value)
		case pebble.InternalKeyKindDelete, pebble.InternalKeyKindDeleteSized:
			fn(OpDelete, key, nil)
		case pebble.InternalKeyKindRangeDelete:
			fn(OpDeleteRange, key, value)
		case pebble.InternalKeyKindLogData:
		default:
			return fmt.Errorf("store: tap: a write of kind %v in a batch, which trawl does not make", kind)
		}
	}
}

// Set adds key = value to the batch, applied with it.
func (t TapBatch) Set(key, value []byte) error { return t.b.Set(key, value, nil) }

// commitTapped applies b in the tap's order, then syncs the log if o asks.
func (db *DB) commitTapped(t Tap, b *pebble.Batch, o *pebble.WriteOptions) error {
	db.tapMu.Lock()
	done := t.Stage(TapBatch{b})
	err := db.pdb.Apply(b, pebble.NoSync)
	if err != nil {
		db.fail(err)
		err = fmt.Errorf("store: %s: commit: %w", db.dir, err)
	} else {
		// Pebble reports WAL failures through Logger.Fatalf and then
		// returns nil.
		err = db.Err()
	}
	if done != nil {
		done(err)
	}
	db.tapMu.Unlock()
	if err != nil || o != pebble.Sync {
		return err
	}
	s := db.pdb.NewBatch()
	defer s.Close()
	if err := s.LogData(nil, nil); err != nil {
		return fmt.Errorf("store: %s: sync: %w", db.dir, err)
	}
	if err := db.pdb.Apply(s, pebble.Sync); err != nil {
		db.fail(err)
		return fmt.Errorf("store: %s: sync: %w", db.dir, err)
	}
	return db.Err()
}
