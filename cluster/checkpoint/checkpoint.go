// Package checkpoint moves one partition's state between stores, for a
// fleet's handoff: Write streams every key of a partition (its hosts'
// state, queues, URL records, robots copies, seen and held keys, policies,
// sitemap progress and its recrawl schedule) and the content fingerprints
// that are the partition's by value (store.FingerprintRanges: the fleet's
// shard of the content-seen gate moves with the partition's owner) from
// one consistent view of a store; Read replaces that partition's per-host
// keys in a store with a stream's and adds its fingerprints to those the
// store holds (each one names an archived record, true wherever it was
// written), checking every key and the stream's checksum first. Functions
// are safe for concurrent use on different partitions.
//
// The route sequence (the last routed-URL message folded into the
// partition, see package route) lives in the store under
// outbox.RouteSeqKey(p), written by the fold in the batch of the URLs it
// folds (outbox.SetRouteSeq).
// Write takes it from the same snapshot as the keys, so a checkpoint's
// Header.RouteSeq always names exactly the messages its keys hold; Read
// writes it back with the keys (deleting it for 0) and Clear deletes it.
package checkpoint

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/trawl-crawler/trawl/internal/outbox"
	"github.com/trawl-crawler/trawl/internal/store"
	"github.com/trawl-crawler/trawl/internal/store/partition"
	"github.com/trawl-crawler/trawl/simhash"
)

// Stream layout. Part of the fleet's protocol (a checkpoint written by one
// node is read by another) and of what the object store keeps:
//
//	header (uncompressed, 32 B):
//	+----------+---------------+-----------+--------------+-------------+
//	| magic    | store format  | partition | route stream | written at  |
//	| 8 B      | 4 B, BE       | 2 B, BE   | seq 8 B, BE  | Unix ms 8 B |
//	| TRWLCKP2 | FormatVersion |           |              | (+2 B zero) |
//	+----------+---------------+-----------+--------------+-------------+
//
// The route stream seq is the value of outbox.RouteSeqKey(partition) in the
// snapshot the records come from (0 when the key is absent); it is not
// repeated among the records.
//
//	body (zstd): records, then an end marker and a trailer:
//	+----------------+-----+------------------+-------+
//	| uvarint keylen | key | uvarint valuelen | value |   per record
//	+----------------+-----+------------------+-------+
//	| 0x00 (a record's keylen is never 0)             |   end
//	| records: 8 B, BE | SHA-256 of every record's bytes (32 B) |
//
// The records are the per-host kinds (Kinds, each under its partition
// prefix), then the fingerprint keys in store.FingerprintRanges order.
// Magic TRWLCKP1 is the same stream without fingerprint records (written
// before fingerprints were sharded); it is still read. A reader refuses
// another magic or format version, a record outside the partition or of a
// kind a partition does not hold, and a stream whose count or checksum
// disagrees.
const (
	magic      = "TRWLCKP2"
	magicV1    = "TRWLCKP1" // no fingerprint records
	headerSize = 32
)

// Kinds are the key kinds a partition holds, each under
// store.PartitionPrefix(kind, p). The job counters of the partition
// (store.KindJobPart) travel with its items, so that its new owner's
// counts of each job agree with what it holds.
var Kinds = []store.Kind{
	store.KindHost, store.KindQueue, store.KindURL, store.KindRobots, store.KindSeen,
	store.KindHeld, store.KindPolicy, store.KindSitemap, store.KindDue, store.KindJobPart,
	store.KindProgress, store.KindTDMRep,
}

// Header describes a checkpoint.
type Header struct {
	Partition partition.ID
	// RouteSeq is the sequence of the last routed-URL message folded into
	// the state (the reader replays the stream after it); 0: none. Write
	// takes it from the store (outbox.RouteSeqKey), never from its caller.
	RouteSeq uint64
	Written  time.Time
}

// Stats says what a Write or Read moved.
type Stats struct {
	Keys  int
	Bytes int64 // keys and values, uncompressed
}

// Write writes partition p of db to w as one consistent view (an
// iterator's snapshot), stamped written, and returns the header it wrote:
// its RouteSeq is p's route sequence in that same view. It refuses a store
// not yet upgraded to store.FormatVersion (which the header names), as
// Read's commit does.
func Write(w io.Writer, db *store.DB, p partition.ID, written time.Time) (Header, Stats, error) {
	h := Header{Partition: p, Written: written}
	var st Stats
	if db.NeedsUpgrade() {
		return h, st, fmt.Errorf("checkpoint: write partition %d: store of format version %d, not yet upgraded to %d", p, db.Version(), store.FormatVersion)
	}
	it, err := db.NewRangeIter(nil, nil)
	if err != nil {
		return h, st, fmt.Errorf("checkpoint: write partition %d: %w", h.Partition, err)
	}
	defer it.Close()
	if seqKey := outbox.RouteSeqKey(h.Partition); it.SeekGE(seqKey) && bytes.Equal(it.Key(), seqKey) {
		v, err := it.ValueAndErr()
		if err != nil {
			return h, st, fmt.Errorf("checkpoint: write partition %d: %w", h.Partition, err)
		}
		if h.RouteSeq, err = outbox.DecodeRouteSeq(h.Partition, v); err != nil {
			return h, st, err
		}
	} else if err := it.Error(); err != nil {
		return h, st, fmt.Errorf("checkpoint: write partition %d: %w", h.Partition, err)
	}
	var hdr [headerSize]byte
	copy(hdr[:8], magic)
	binary.BigEndian.PutUint32(hdr[8:], store.FormatVersion)
	binary.BigEndian.PutUint16(hdr[12:], uint16(h.Partition))
	binary.BigEndian.PutUint64(hdr[14:], h.RouteSeq)
	binary.BigEndian.PutUint64(hdr[22:], uint64(h.Written.UnixMilli()))
	if _, err := w.Write(hdr[:]); err != nil {
		return h, st, fmt.Errorf("checkpoint: write partition %d: %w", h.Partition, err)
	}
	zw, err := zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1))
	if err != nil {
		return h, st, fmt.Errorf("checkpoint: %w", err)
	}
	bw := bufio.NewWriterSize(zw, 64<<10)
	sum := sha256.New()
	var lenBuf [2 * binary.MaxVarintLen64]byte
	for _, r := range ranges(h.Partition) {
		for ok := it.SeekGE(r.Start); ok && (r.End == nil || bytes.Compare(it.Key(), r.End) < 0); ok = it.Next() {
			k := it.Key()
			v, err := it.ValueAndErr()
			if err != nil {
				zw.Close()
				return h, st, fmt.Errorf("checkpoint: write partition %d: read %q: %w", h.Partition, k, err)
			}
			n := binary.PutUvarint(lenBuf[:], uint64(len(k)))
			for _, b := range [][]byte{lenBuf[:n], k} {
				bw.Write(b)
				sum.Write(b)
			}
			n = binary.PutUvarint(lenBuf[:], uint64(len(v)))
			for _, b := range [][]byte{lenBuf[:n], v} {
				bw.Write(b)
				sum.Write(b)
			}
			st.Keys++
			st.Bytes += int64(len(k) + len(v))
		}
		if err := it.Error(); err != nil {
			zw.Close()
			return h, st, fmt.Errorf("checkpoint: write partition %d: %w", h.Partition, err)
		}
	}
	var tr [1 + 8]byte
	binary.BigEndian.PutUint64(tr[1:], uint64(st.Keys))
	bw.Write(tr[:])
	bw.Write(sum.Sum(nil))
	if err := bw.Flush(); err != nil {
		zw.Close()
		return h, st, fmt.Errorf("checkpoint: write partition %d: %w", h.Partition, err)
	}
	if err := zw.Close(); err != nil {
		return h, st, fmt.Errorf("checkpoint: write partition %d: %w", h.Partition, err)
	}
	return h, st, nil
}

// ErrCorrupt is wrapped by every error Read returns for a stream that is
// not a whole, valid checkpoint.
var ErrCorrupt = errors.New("checkpoint: corrupt")

// ReadHeader reads and checks a stream's header.
func ReadHeader(r io.Reader) (Header, error) {
	var hdr [headerSize]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return Header{}, fmt.Errorf("%w: header: %w", ErrCorrupt, err)
	}
	if m := string(hdr[:8]); m != magic && m != magicV1 {
		return Header{}, fmt.Errorf("%w: magic %q, want %q", ErrCorrupt, hdr[:8], magic)
	}
	if v := binary.BigEndian.Uint32(hdr[8:]); v != store.FormatVersion {
		return Header{}, fmt.Errorf("checkpoint: store format %d, this binary reads %d", v, store.FormatVersion)
	}
	p := binary.BigEndian.Uint16(hdr[12:])
	if int(p) >= partition.Count {
		return Header{}, fmt.Errorf("%w: partition %d of %d", ErrCorrupt, p, partition.Count)
	}
	return Header{
		Partition: partition.ID(p),
		RouteSeq:  binary.BigEndian.Uint64(hdr[14:]),
		Written:   time.UnixMilli(int64(binary.BigEndian.Uint64(hdr[22:]))),
	}, nil
}

// batchBytes bounds one import batch.
const batchBytes = 4 << 20

// Read replaces partition's per-host keys in db with the stream's, which
// must be a checkpoint of that partition, adds the stream's fingerprints
// (see clearInto), and replaces its route sequence (outbox.RouteSeqKey) with the
// header's (deleted when the header says 0). The stream is checked whole (every key,
// the count and the checksum) while it is written in batches under a
// marker; Pending names a partition whose Read did not finish (a crash,
// or a stream found corrupt after some batches), and Clear empties it.
// On any error the partition's per-host keys are left empty; fingerprints
// of a batch already written stay: each key was checked whole (its shape
// and partition: inPartition), but a stream found corrupt only at its
// trailer (the checksum) may have garbled a value. One that no longer
// decodes makes a lookup fail, which counts as not seen; one that still
// decodes names a wrong record (a revisit referring to it) until the
// fingerprint is added again. Staging fingerprints until the trailer is
// verified would close this; it is not done (a partition's fingerprints
// can be far more than a batch, so they would be written twice).
func Read(r io.Reader, db *store.DB, want partition.ID) (Header, Stats, error) {
	var st Stats
	h, err := ReadHeader(r)
	if err != nil {
		return h, st, err
	}
	if h.Partition != want {
		return h, st, fmt.Errorf("checkpoint: stream holds partition %d, want %d", h.Partition, want)
	}
	zr, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(1<<30))
	if err != nil {
		return h, st, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	defer zr.Close()
	br := bufio.NewReaderSize(zr, 64<<10)

	b := db.NewBatch()
	defer func() { b.Close() }()
	b.Set(markerKey(want), []byte{1})
	clearInto(b, want)
	size := 0
	sum := sha256.New()
	fail := func(err error) (Header, Stats, error) {
		b.Close()
		if cerr := Clear(db, want); cerr != nil {
			err = errors.Join(err, cerr)
		}
		return h, st, err
	}
	var lenBuf [binary.MaxVarintLen64]byte
	for {
		klen, err := binary.ReadUvarint(br)
		if err != nil {
			return fail(fmt.Errorf("%w: partition %d: record %d: %w", ErrCorrupt, want, st.Keys, err))
		}
		if klen == 0 {
			break
		}
		if klen > 64<<10 {
			return fail(fmt.Errorf("%w: partition %d: record %d: key of %d bytes", ErrCorrupt, want, st.Keys, klen))
		}
		key := make([]byte, klen)
		if _, err := io.ReadFull(br, key); err != nil {
			return fail(fmt.Errorf("%w: partition %d: record %d: %w", ErrCorrupt, want, st.Keys, err))
		}
		vlen, err := binary.ReadUvarint(br)
		if err != nil || vlen > 256<<20 {
			if err == nil {
				err = fmt.Errorf("%d bytes", vlen)
			}
			return fail(fmt.Errorf("%w: partition %d: record %d: value length: %w", ErrCorrupt, want, st.Keys, err))
		}
		val := make([]byte, vlen)
		if _, err := io.ReadFull(br, val); err != nil {
			return fail(fmt.Errorf("%w: partition %d: record %d: %w", ErrCorrupt, want, st.Keys, err))
		}
		if err := inPartition(key, want); err != nil {
			return fail(fmt.Errorf("%w: partition %d: record %d: %w", ErrCorrupt, want, st.Keys, err))
		}
		sum.Write(lenBuf[:binary.PutUvarint(lenBuf[:], klen)])
		sum.Write(key)
		sum.Write(lenBuf[:binary.PutUvarint(lenBuf[:], vlen)])
		sum.Write(val)
		b.Set(key, val)
		st.Keys++
		st.Bytes += int64(klen + vlen)
		size += int(klen + vlen)
		if size >= batchBytes {
			if err := db.Commit(b); err != nil {
				return fail(fmt.Errorf("checkpoint: partition %d: %w", want, err))
			}
			b = db.NewBatch()
			size = 0
		}
	}
	var tr [8 + sha256.Size]byte
	if _, err := io.ReadFull(br, tr[:]); err != nil {
		return fail(fmt.Errorf("%w: partition %d: trailer: %w", ErrCorrupt, want, err))
	}
	if n := binary.BigEndian.Uint64(tr[:8]); n != uint64(st.Keys) {
		return fail(fmt.Errorf("%w: partition %d: %d records, trailer says %d", ErrCorrupt, want, st.Keys, n))
	}
	if !bytes.Equal(tr[8:], sum.Sum(nil)) {
		return fail(fmt.Errorf("%w: partition %d: checksum mismatch", ErrCorrupt, want))
	}
	if h.RouteSeq != 0 {
		outbox.SetRouteSeq(b, want, h.RouteSeq)
	} // else deleted by clearInto, in the first batch
	b.Delete(markerKey(want))
	if err := db.Commit(b); err != nil {
		return fail(fmt.Errorf("checkpoint: partition %d: %w", want, err))
	}
	return h, st, nil
}

// ranges are partition p's key ranges, in the order Write writes them:
// each per-host kind's, then its fingerprints'.
func ranges(p partition.ID) []store.KeyRange {
	var out []store.KeyRange
	for _, kind := range Kinds {
		prefix := store.PartitionPrefix(kind, p)
		out = append(out, store.KeyRange{Start: prefix, End: store.PrefixEnd(prefix)})
	}
	return append(out, store.FingerprintRanges(p)...)
}

// inPartition checks that key is a valid key of a kind partition p holds.
func inPartition(key []byte, p partition.ID) error {
	k, err := store.DecodeKey(key)
	if err != nil {
		return err
	}
	if fp, ok := store.FingerprintPartition(key); ok {
		if err := fingerprintShape(key); err != nil {
			return err
		}
		if fp != p {
			return fmt.Errorf("%s key of partition %d", k.Kind, fp)
		}
		return nil
	}
	for _, kind := range Kinds {
		if k.Kind == kind {
			if k.Part != p {
				return fmt.Errorf("%s key of partition %d", kind, k.Part)
			}
			return nil
		}
	}
	return fmt.Errorf("a %s key, which no partition holds", k.Kind)
}

// fingerprintShape checks a fingerprint key whole: a digest key is 'd'
// and a SHA-256; a near band key is 'n', a band below simhash.NumBands,
// that band's value, and the fingerprint (store.NearKey).
func fingerprintShape(key []byte) error {
	switch store.Kind(key[0]) {
	case store.KindDigest:
		if len(key) != 1+sha256.Size {
			return fmt.Errorf("digest key of %d bytes, want %d", len(key), 1+sha256.Size)
		}
	case store.KindNear:
		const n = 1 + simhash.BandPrefixLen + 8
		if len(key) != n {
			return fmt.Errorf("near band key of %d bytes, want %d", len(key), n)
		}
		band := int(key[1])
		if band >= simhash.NumBands {
			return fmt.Errorf("near band key of band %d, of %d", band, simhash.NumBands)
		}
		if fp := binary.BigEndian.Uint64(key[1+simhash.BandPrefixLen:]); !bytes.Equal(key, store.NearKey(fp, band)) {
			return fmt.Errorf("near band key %x: band value %#x is not its fingerprint's", key, key[2:4])
		}
	}
	return nil
}

func markerKey(p partition.ID) []byte {
	return store.MetaKey(fmt.Sprintf("checkpoint-import/%d", p))
}

// clearInto deletes p's per-host keys and route sequence, not its
// fingerprints: those a store holds stay true (each names a record
// archived for good), and a Read adds the stream's.
func clearInto(b *store.Batch, p partition.ID) {
	for _, kind := range Kinds {
		prefix := store.PartitionPrefix(kind, p)
		b.DeleteRange(prefix, store.PrefixEnd(prefix))
	}
	b.Delete(outbox.RouteSeqKey(p))
}

// Clear deletes every per-host key of partition p from db, its route
// sequence and its import marker (not its fingerprints: see clearInto).
func Clear(db *store.DB, p partition.ID) error {
	b := db.NewBatch()
	clearInto(b, p)
	b.Delete(markerKey(p))
	if err := db.Commit(b); err != nil {
		return fmt.Errorf("checkpoint: clear partition %d: %w", p, err)
	}
	return nil
}

// Pending returns the partitions whose Read did not finish: their keys are
// partial, and a node must Clear them (or Read them again) before serving.
func Pending(db *store.DB) ([]partition.ID, error) {
	prefix := store.MetaKey("checkpoint-import/")
	it, err := db.NewIter(prefix)
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var out []partition.ID
	for ok := it.First(); ok; ok = it.Next() {
		var p int
		if _, err := fmt.Sscanf(string(it.Key()[len(prefix):]), "%d", &p); err == nil && p >= 0 && p < partition.Count {
			out = append(out, partition.ID(p))
		}
	}
	return out, it.Error()
}

// Holder returns the partition whose checkpoint carries key (one of Kinds
// under its partition prefix, one of its fingerprints, or its route
// sequence), and false for a key no checkpoint carries. It reads only the
// key's first bytes: a malformed key of those kinds is not detected here
// (Read detects it).
func Holder(key []byte) (partition.ID, bool) {
	if len(key) == 0 {
		return 0, false
	}
	switch k := store.Kind(key[0]); k {
	case store.KindDigest, store.KindNear:
		return store.FingerprintPartition(key)
	case store.KindMeta:
		return outbox.RouteSeqPartition(key)
	default:
		if !heldKind[k] || len(key) < 3 {
			return 0, false
		}
		p := binary.BigEndian.Uint16(key[1:3])
		if int(p) >= partition.Count {
			return 0, false
		}
		return partition.ID(p), true
	}
}

// heldKind is Kinds as a set.
var heldKind = func() (m [256]bool) {
	for _, k := range Kinds {
		m[k] = true
	}
	return m
}()
