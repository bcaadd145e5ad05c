package frontierdb

import (
	"encoding/binary"
	"fmt"

	"github.com/trawl-crawler/trawl/frontier"
	"github.com/trawl-crawler/trawl/internal/store"
	"github.com/trawl-crawler/trawl/internal/store/partition"
)

// convertCounters upgrades a store of store.PreviousFormatVersion (3) to
// store.FormatVersion (4): it converts the whole-store job counters ('c'
// keys) into counters per job and partition ('k' keys), in one durable
// batch that also deletes the 'c' keys and writes the new version
// (store.Batch.Upgrade), so that a crash leaves either the old store or
// the upgraded one. A store of version 3 without 'c' keys is only marked 4;
// a store of version 4 is left as it is. Stored and Held are
// counted from the queue and held keys (the job of a queue item is the
// first field of its value); Dropped, a count of the past that no key
// keeps per partition, is kept where a 'k' key already holds it (a store
// written by this code, then by an older binary), and the rest of the 'c'
// key's is put on partition 0. It reads every queue and held key once.
func convertCounters(db *store.DB) error {
	if !db.NeedsUpgrade() {
		return nil
	}
	old := make(map[uint32]frontier.JobState)
	it, err := db.NewIter(store.KindPrefix(store.KindJobCounters))
	if err != nil {
		return err
	}
	for ok := it.First(); ok; ok = it.Next() {
		k, err := store.DecodeKey(it.Key())
		if err != nil {
			it.Close()
			return fmt.Errorf("convert job counters: %w", err)
		}
		j, err := decodeJobState(it.Value())
		if err != nil {
			it.Close()
			return fmt.Errorf("convert job counters: job %d: %w", k.Job, err)
		}
		old[k.Job] = j
	}
	if err := it.Close(); err != nil {
		return err
	}
	if len(old) == 0 {
		b := db.NewBatch()
		if err := b.Upgrade(); err != nil {
			b.Close()
			return err
		}
		if err := db.Commit(b); err != nil {
			return fmt.Errorf("upgrade store to format version %d: %w", store.FormatVersion, err)
		}
		return nil
	}
	counts := make(map[jobPart]*frontier.JobState)
	at := func(job uint32, p partition.ID) *frontier.JobState {
		c := counts[jobPart{job, p}]
		if c == nil {
			c = &frontier.JobState{Job: job, Part: frontier.Partition(p)}
			counts[jobPart{job, p}] = c
		}
		return c
	}
	// Dropped kept per partition by an earlier conversion.
	err = scan(db, store.KindJobPart, func(k store.Key, v []byte) error {
		j, err := decodeJobState(v)
		if err != nil {
			return fmt.Errorf("job %d partition %d: %w", k.Job, k.Part, err)
		}
		if j.Dropped > 0 {
			at(k.Job, k.Part).Dropped = j.Dropped
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("convert job counters: %w", err)
	}
	for _, c := range counts {
		o := old[c.Job]
		o.Dropped -= c.Dropped
		old[c.Job] = o
	}
	for job, o := range old {
		if o.Dropped > 0 {
			at(job, 0).Dropped += o.Dropped
		}
	}
	err = scan(db, store.KindQueue, func(k store.Key, v []byte) error {
		job, err := itemJob(v)
		if err != nil {
			return fmt.Errorf("queue item %s seq %d: %w", k.Host, k.Seq, err)
		}
		at(job, k.Part).Stored++
		return nil
	})
	if err == nil {
		err = scan(db, store.KindHeld, func(k store.Key, _ []byte) error {
			at(k.Job, k.Part).Held++
			return nil
		})
	}
	if err != nil {
		return fmt.Errorf("convert job counters: %w", err)
	}
	b := db.NewBatch()
	prefix := store.KindPrefix(store.KindJobPart)
	for _, err = range []error{
		b.DeleteRange(prefix, store.PrefixEnd(prefix)),
		b.DeleteRange(store.KindPrefix(store.KindJobCounters), store.PrefixEnd(store.KindPrefix(store.KindJobCounters))),
		b.Upgrade(),
	} {
		if err != nil {
			b.Close()
			return fmt.Errorf("convert job counters: %w", err)
		}
	}
	var buf []byte
	for _, c := range counts {
		buf = appendJobState(buf[:0], *c)
		if err := b.Set(store.JobPartKey(partition.ID(c.Part), c.Job), buf); err != nil {
			b.Close()
			return fmt.Errorf("convert job counters: %w", err)
		}
	}
	if err := db.Commit(b); err != nil {
		return fmt.Errorf("convert job counters: upgrade store to format version %d: %w", store.FormatVersion, err)
	}
	return nil
}

// jobPart identifies a job's counters in one partition.
type jobPart struct {
	job  uint32
	part partition.ID
}

// scan calls fn with every key of kind, decoded, and its value.
func scan(db *store.DB, kind store.Kind, fn func(store.Key, []byte) error) error {
	it, err := db.NewIter(store.KindPrefix(kind))
	if err != nil {
		return err
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		k, err := store.DecodeKey(it.Key())
		if err != nil {
			return err
		}
		if err := fn(k, it.Value()); err != nil {
			return err
		}
	}
	return it.Error()
}

// itemJob decodes the job of a queue item's value (appendItem) alone.
func itemJob(v []byte) (uint32, error) {
	if len(v) == 0 || (v[0] != itemVersion && v[0] != 2) {
		return 0, fmt.Errorf("queue item encoding version not 2 or %d", itemVersion)
	}
	job, n := binary.Uvarint(v[1:])
	if n <= 0 || job > 1<<32-1 {
		return 0, fmt.Errorf("queue item: bad job")
	}
	return uint32(job), nil
}
