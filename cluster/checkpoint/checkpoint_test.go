package checkpoint

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/trawl-crawler/trawl/internal/outbox"
	"github.com/trawl-crawler/trawl/internal/testkit/clustertest"
	"github.com/trawl-crawler/trawl/internal/testkit/storetest"

	"github.com/trawl-crawler/trawl/internal/store"
	"github.com/trawl-crawler/trawl/internal/store/partition"
	"github.com/trawl-crawler/trawl/simhash"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func open(t *testing.T) *store.DB {
	t.Helper()
	db := storetest.Open(t)
	return db
}

// fill writes keys of every kind a partition holds for each host, with
// values naming tag, plus content and meta keys no partition holds.
func fill(t *testing.T, db *store.DB, hosts []string, tag string) {
	t.Helper()
	b := db.NewBatch()
	due := time.Unix(1_800_000_000, 0)
	for i, h := range hosts {
		u := "http://" + h + "/a?b"
		v := []byte(tag + " " + h)
		for _, k := range [][]byte{
			store.HostKey(h), store.QueueKey(h, 1, 7), store.URLKey(h, u), store.RobotsKey(h, "http://"+h+":80"),
			store.SeenKey(3, h, u), store.HeldKey(h, 3, 1, 9), store.PolicyKey(h), store.SitemapKey(h, 3, "http://"+h+":80"), store.TDMRepKey(h, "http://"+h+":80"),
			store.DueKey(due, h, u), store.JobPartKey(partition.Of(h), uint32(i)), // a job per host: a key per host and kind
		} {
			b.Set(k, v)
		}
	}
	for _, h := range hosts { // the partitions' progress keys: one each
		b.Set(store.ProgressKey(partition.Of(h)), []byte(tag))
	}
	b.Set(store.DigestKey([32]byte{1}), []byte(tag))
	b.Set(store.JobKey(3), []byte(tag))
	if err := db.Commit(b); err != nil {
		t.Fatal(err)
	}
}

// keysOf is how many keys fill writes for hosts hosts of parts partitions:
// a key of each per-host kind for each host, and each partition's progress
// key.
func keysOf(hosts, parts int) int { return hosts*(len(Kinds)-1) + parts }

// dump returns every key and value of db, as "key=value" lines.
func dump(t *testing.T, db *store.DB) map[string]string {
	t.Helper()
	it, err := db.NewRangeIter(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	out := map[string]string{}
	for ok := it.First(); ok; ok = it.Next() {
		out[string(it.Key())] = string(it.Value())
	}
	return out
}

func partOf(t *testing.T, key string) (partition.ID, bool) {
	k, err := store.DecodeKey([]byte(key))
	if err != nil {
		t.Fatalf("key %q: %v", key, err)
	}
	for _, kind := range Kinds {
		if k.Kind == kind {
			return k.Part, true
		}
	}
	return 0, false
}

// TestMove checkpoints a partition of one store and reads it into another
// that holds a stale copy of it and other partitions: afterwards the
// partition's keys are exactly the source's, and nothing else changed.
func TestMove(t *testing.T) {
	const p, q = partition.ID(7), partition.ID(8)
	src, dst := open(t), open(t)
	fill(t, src, clustertest.HostsIn(p, 5), "new")
	fill(t, src, clustertest.HostsIn(q, 3), "src-only")
	fill(t, dst, clustertest.HostsIn(p, 8), "stale") // three hosts the source no longer has
	fill(t, dst, clustertest.HostsIn(q, 2), "dst-q")
	before := dump(t, dst)

	// The fold of routed message 42 into p, and one into q after it.
	fold := src.NewBatch()
	outbox.SetRouteSeq(fold, p, 42)
	outbox.SetRouteSeq(fold, q, 43)
	if err := src.Commit(fold); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	written := time.UnixMilli(1_700_000_000_123)
	wh, st, err := Write(&buf, src, p, written)
	if err != nil {
		t.Fatal(err)
	}
	if wh.RouteSeq != 42 || wh.Partition != p || !wh.Written.Equal(written) {
		t.Errorf("Write: header %+v, want partition %d, seq 42, %v", wh, p, written)
	}
	if st.Keys != keysOf(5, 1) {
		t.Errorf("Write: %d keys, want %d (5 hosts x %d kinds, and the progress key)", st.Keys, keysOf(5, 1), len(Kinds)-1)
	}
	h, rst, err := Read(bytes.NewReader(buf.Bytes()), dst, p)
	if err != nil {
		t.Fatal(err)
	}
	if h.Partition != p || h.RouteSeq != 42 || !h.Written.Equal(written) || rst != st {
		t.Errorf("Read: header %+v stats %+v, want partition %d, seq 42, %v, %+v", h, rst, p, written, st)
	}
	srcAll, after := dump(t, src), dump(t, dst)
	for k, v := range srcAll {
		if part, ok := partOf(t, k); ok && part == p && after[k] != v {
			t.Errorf("key %q = %q after the read, source has %q", k, after[k], v)
		}
	}
	for k, v := range after {
		part, ok := partOf(t, k)
		switch {
		case ok && part == p:
			if srcAll[k] != v {
				t.Errorf("key %q = %q in partition %d, not in the source", k, v, p)
			}
		case k == string(outbox.RouteSeqKey(p)):
			// checked below
		case before[k] != v:
			t.Errorf("key %q outside the partition changed: %q -> %q", k, before[k], v)
		}
	}
	for k := range before {
		if part, ok := partOf(t, k); !(ok && part == p) {
			if _, kept := after[k]; !kept {
				t.Errorf("key %q outside the partition was deleted", k)
			}
		}
	}
	if pend, err := Pending(dst); err != nil || len(pend) != 0 {
		t.Errorf("Pending = %v, %v after a whole read", pend, err)
	}
	if seq, err := outbox.RouteSeq(dst, p); err != nil || seq != 42 {
		t.Errorf("RouteSeq after Read = %d, %v, want 42", seq, err)
	}
	if seq, err := outbox.RouteSeq(dst, q); err != nil || seq != 0 {
		t.Errorf("RouteSeq of partition %d, not read = %d, %v, want 0", q, seq, err)
	}
}

// TestRouteSeqTravels: the sequence a checkpoint carries is the one of the
// last fold committed before Write, never a later one; a checkpoint of a
// partition never folded says 0, and reading it (or Clear) removes a
// sequence the destination held.
func TestRouteSeqTravels(t *testing.T) {
	const p = partition.ID(9)
	src, dst := open(t), open(t)
	hosts := clustertest.HostsIn(p, 2)
	foldURL := func(seq uint64, u string) {
		t.Helper()
		b := src.NewBatch()
		b.Set(store.SeenKey(0, hosts[0], u), nil)
		outbox.SetRouteSeq(b, p, seq)
		if err := src.Commit(b); err != nil {
			t.Fatal(err)
		}
	}
	var never bytes.Buffer
	if h, _, err := Write(&never, src, p, time.Now()); err != nil || h.RouteSeq != 0 {
		t.Fatalf("Write before any fold: seq %d, %v, want 0", h.RouteSeq, err)
	}
	foldURL(5, "http://"+hosts[0]+"/five")
	var buf bytes.Buffer
	h, st, err := Write(&buf, src, p, time.Now())
	if err != nil || h.RouteSeq != 5 || st.Keys != 1 {
		t.Fatalf("Write after fold 5: seq %d, %d keys, %v; want 5, 1 key", h.RouteSeq, st.Keys, err)
	}
	foldURL(6, "http://"+hosts[0]+"/six") // after the checkpoint: not in it
	if seq, err := outbox.RouteSeq(src, p); err != nil || seq != 6 {
		t.Fatalf("outbox.RouteSeq(src) = %d, %v, want 6", seq, err)
	}
	fill(t, dst, hosts, "stale")
	b := dst.NewBatch()
	outbox.SetRouteSeq(b, p, 99)
	if err := dst.Commit(b); err != nil {
		t.Fatal(err)
	}
	rh, _, err := Read(bytes.NewReader(buf.Bytes()), dst, p)
	if err != nil || rh.RouteSeq != 5 {
		t.Fatalf("Read: seq %d, %v, want 5", rh.RouteSeq, err)
	}
	if seq, err := outbox.RouteSeq(dst, p); err != nil || seq != 5 {
		t.Errorf("outbox.RouteSeq(dst) after Read = %d, %v, want 5", seq, err)
	}
	if _, _, err := Read(bytes.NewReader(never.Bytes()), dst, p); err != nil {
		t.Fatal(err)
	}
	if seq, err := outbox.RouteSeq(dst, p); err != nil || seq != 0 {
		t.Errorf("outbox.RouteSeq(dst) after reading a checkpoint with seq 0 = %d, %v, want 0", seq, err)
	}
	if has, _ := dst.Has(outbox.RouteSeqKey(p)); has {
		t.Errorf("route seq key kept after reading a checkpoint with seq 0")
	}
	if err := Clear(src, p); err != nil {
		t.Fatal(err)
	}
	if has, _ := src.Has(outbox.RouteSeqKey(p)); has {
		t.Errorf("route seq key kept after Clear")
	}
}

// TestCorruptStreams reads damaged checkpoints: each is refused with an
// error naming what is wrong, leaves the partition empty (its stale copy
// gone: half a state is worse than none) and no import pending.
func TestCorruptStreams(t *testing.T) {
	const p = partition.ID(3)
	src := open(t)
	fill(t, src, clustertest.HostsIn(p, 4), "v")
	var buf bytes.Buffer
	if _, _, err := Write(&buf, src, p, time.Now()); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	flip := func(i int) []byte { b := bytes.Clone(good); b[i] ^= 0x40; return b }
	for _, tc := range []struct {
		name    string
		data    []byte
		want    partition.ID
		corrupt bool
	}{
		{"empty", nil, p, true},
		{"bad magic", flip(0), p, true},
		{"other partition", good, p + 1, false},
		{"truncated body", good[:len(good)-20], p, true},
		{"flipped body byte", flip(len(good) - 30), p, true},
		{"header only", good[:headerSize], p, true},
	} {
		dst := open(t)
		fill(t, dst, clustertest.HostsIn(tc.want, 2), "stale")
		_, _, err := Read(bytes.NewReader(tc.data), dst, tc.want)
		if err == nil {
			t.Errorf("%s: Read succeeded", tc.name)
			continue
		}
		if errors.Is(err, ErrCorrupt) != tc.corrupt {
			t.Errorf("%s: Read error %v: ErrCorrupt %v, want %v", tc.name, err, errors.Is(err, ErrCorrupt), tc.corrupt)
		}
		stale := 0
		for k := range dump(t, dst) {
			if part, ok := partOf(t, k); ok && part == tc.want {
				stale++
			}
		}
		// A stream refused at its header leaves the store as it was; one
		// refused in its body leaves the partition empty.
		atHeader := tc.name == "empty" || tc.name == "bad magic" || tc.name == "other partition"
		if want := map[bool]int{true: keysOf(2, 1), false: 0}[atHeader]; stale != want {
			t.Errorf("%s: %d keys of partition %d left after a refused read, want %d", tc.name, stale, tc.want, want)
		}
		if pend, err := Pending(dst); err != nil || len(pend) != 0 {
			t.Errorf("%s: Pending = %v, %v", tc.name, pend, err)
		}
	}
}

// TestPendingAfterCrash: a read that stopped after committing a batch (a
// crash) leaves its marker; Pending names the partition and Clear empties it.
func TestPendingAfterCrash(t *testing.T) {
	db := open(t)
	fill(t, db, clustertest.HostsIn(5, 2), "partial")
	b := db.NewBatch()
	b.Set(markerKey(5), []byte{1})
	if err := db.Commit(b); err != nil {
		t.Fatal(err)
	}
	pend, err := Pending(db)
	if err != nil || len(pend) != 1 || pend[0] != 5 {
		t.Fatalf("Pending = %v, %v, want [5]", pend, err)
	}
	if err := Clear(db, 5); err != nil {
		t.Fatal(err)
	}
	for k := range dump(t, db) {
		if part, ok := partOf(t, k); ok && part == 5 {
			t.Errorf("key %q of partition 5 left after Clear", k)
		}
	}
	if pend, _ := Pending(db); len(pend) != 0 {
		t.Errorf("Pending = %v after Clear", pend)
	}
}

// FuzzRead feeds Read arbitrary streams (a checkpoint comes from the object
// store, written by another node): no panic, and whatever it accepts holds
// only valid keys of the partition.
func FuzzRead(f *testing.F) {
	src := storetest.OpenDir(f, f.TempDir(), store.Options{Logger: slog.New(slog.DiscardHandler)})
	defer src.Close()
	b := src.NewBatch()
	for _, h := range clustertest.HostsIn(2, 2) {
		b.Set(store.HostKey(h), []byte("x"))
		b.Set(store.URLKey(h, "http://"+h+"/"), []byte("y"))
	}
	outbox.SetRouteSeq(b, 2, 1)
	if err := src.Commit(b); err != nil {
		f.Fatal(err)
	}
	var buf bytes.Buffer
	if _, _, err := Write(&buf, src, 2, time.Now()); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add(buf.Bytes()[:headerSize])
	f.Add([]byte(magic))
	dst := storetest.OpenDir(f, f.TempDir(), store.Options{Logger: slog.New(slog.DiscardHandler)})
	defer dst.Close()
	f.Fuzz(func(t *testing.T, data []byte) {
		// Read keeps the fingerprints a store holds: start without any.
		wipe := dst.NewBatch()
		for _, r := range store.FingerprintRanges(2) {
			wipe.DeleteRange(r.Start, r.End)
		}
		if err := dst.Commit(wipe); err != nil {
			t.Fatal(err)
		}
		_, st, err := Read(bytes.NewReader(data), dst, 2)
		if err != nil {
			return
		}
		n := 0
		it, ierr := dst.NewRangeIter(nil, nil)
		if ierr != nil {
			t.Fatal(ierr)
		}
		defer it.Close()
		for ok := it.First(); ok; ok = it.Next() {
			k, err := store.DecodeKey(it.Key())
			if err != nil {
				t.Fatalf("accepted stream left key %q: %v", it.Key(), err)
			}
			if fp, ok := store.FingerprintPartition(it.Key()); ok {
				k.Part = fp
			}
			if k.Kind != store.KindMeta {
				if k.Part != 2 {
					t.Fatalf("accepted stream left key %q of partition %d", it.Key(), k.Part)
				}
				n++
			}
		}
		if n != st.Keys {
			t.Fatalf("Read reported %d keys, store holds %d", st.Keys, n)
		}
	})
}

// fillFingerprints writes a digest key and a near band key whose values
// (tagged tag) are partition p's, under each of the sums and prints given.
func fillFingerprints(t *testing.T, db *store.DB, tag string, sums [][32]byte, nears []uint64) {
	t.Helper()
	b := db.NewBatch()
	for _, s := range sums {
		b.Set(store.DigestKey(s), []byte(tag))
	}
	for _, fp := range nears {
		for band := range simhash.NumBands {
			b.Set(store.NearKey(fp, band), []byte(tag))
		}
	}
	if err := db.Commit(b); err != nil {
		t.Fatal(err)
	}
}

// TestMoveFingerprints: a checkpoint of partition p carries the digests
// and near band keys whose values are p's (and no others); reading it adds
// them to the destination's and keeps the destination's own.
func TestMoveFingerprints(t *testing.T) {
	const p = partition.ID(7)
	lo, hi := partition.FingerprintRange(p)
	sum := func(v uint16, last byte) (s [32]byte) {
		s[0], s[1], s[31] = byte(v>>8), byte(v), last
		return s
	}
	src, dst := open(t), open(t)
	fill(t, src, clustertest.HostsIn(p, 2), "new")
	// In p: digests at both ends of its range; a print whose band 2 is p's.
	inP := [][32]byte{sum(lo, 1), sum(hi, 2)}
	nearP := uint64(lo+3)<<32 | 0x0001_0000_ffff
	fillFingerprints(t, src, "src", append(inP, sum(lo-1, 3), sum(hi+1, 4)), []uint64{nearP})
	kept := sum(lo+1, 5)
	fillFingerprints(t, dst, "dst", [][32]byte{kept, sum(lo, 1)}, nil)

	var buf bytes.Buffer
	_, st, err := Write(&buf, src, p, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	// 2 hosts x a key of each kind (and the progress key), 2 digests and
	// the one band key of nearP in p.
	if want := keysOf(2, 1) + 2 + 1; st.Keys != want {
		t.Errorf("Write: %d keys, want %d", st.Keys, want)
	}
	if _, _, err := Read(bytes.NewReader(buf.Bytes()), dst, p); err != nil {
		t.Fatal(err)
	}
	after := dump(t, dst)
	for _, s := range inP {
		if v := after[string(store.DigestKey(s))]; v != "src" {
			t.Errorf("digest %x of partition %d after the read: %q, want the source's", s[:2], p, v)
		}
	}
	if v := after[string(store.DigestKey(kept))]; v != "dst" {
		t.Errorf("the destination's own digest of partition %d after the read: %q, want kept", p, v)
	}
	for _, s := range [][32]byte{sum(lo-1, 3), sum(hi+1, 4)} {
		if _, ok := after[string(store.DigestKey(s))]; ok {
			t.Errorf("digest %x of another partition was carried", s[:2])
		}
	}
	for band := range simhash.NumBands {
		_, ok := after[string(store.NearKey(nearP, band))]
		if want := partition.OfFingerprint(simhash.Band(nearP, band)) == p; ok != want {
			t.Errorf("near band %d key (value %#x) carried: %v, want %v", band, simhash.Band(nearP, band), ok, want)
		}
	}
	// Clear leaves the fingerprints.
	if err := Clear(dst, p); err != nil {
		t.Fatal(err)
	}
	if v := dump(t, dst)[string(store.DigestKey(inP[0]))]; v != "src" {
		t.Errorf("Clear deleted a fingerprint: %q", v)
	}
}

// TestReadVersion1: a checkpoint written before fingerprints were carried
// (magic TRWLCKP1) is still read.
func TestReadVersion1(t *testing.T) {
	const p = partition.ID(3)
	src, dst := open(t), open(t)
	fill(t, src, clustertest.HostsIn(p, 2), "old")
	var buf bytes.Buffer
	_, st, err := Write(&buf, src, p, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	copy(b, magicV1)
	_, rst, err := Read(bytes.NewReader(b), dst, p)
	if err != nil || rst != st {
		t.Fatalf("Read of a version 1 stream: %+v, %v; want %+v", rst, err, st)
	}
}

// errAfter reads data, then fails with err instead of io.EOF: a stream
// cut short by its source (an object store's reader that found a digest
// mismatch, a dropped connection).
type errAfter struct {
	data []byte
	err  error
}

func (r *errAfter) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

// TestReadKeepsSourceError: whatever point of the stream its source fails
// at (the header, a key's length, a key, a value's length, a value, the
// trailer), Read's error wraps the source's error (cluster/ckptstore
// retries on jetstream.ErrDigestMismatch) as well as ErrCorrupt.
func TestReadKeepsSourceError(t *testing.T) {
	const p = partition.ID(5)
	src, dst := open(t), open(t)
	fill(t, src, clustertest.HostsIn(p, 1), "v")
	var buf bytes.Buffer
	if _, _, err := Write(&buf, src, p, time.Now()); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	zr, err := zstd.NewReader(bytes.NewReader(good[headerSize:]))
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(zr)
	zr.Close()
	if err != nil {
		t.Fatal(err)
	}
	// The body again, a zstd block a byte: a cut after block i hands Read
	// exactly i bytes of it, so that every read point is reached.
	var re bytes.Buffer
	re.Write(good[:headerSize])
	zw, err := zstd.NewWriter(&re)
	if err != nil {
		t.Fatal(err)
	}
	cuts := []int{0, headerSize / 2, headerSize}
	for i := range body {
		zw.Write(body[i : i+1])
		if err := zw.Flush(); err != nil {
			t.Fatal(err)
		}
		cuts = append(cuts, re.Len())
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	data := re.Bytes()
	if _, _, err := Read(bytes.NewReader(data), dst, p); err != nil {
		t.Fatalf("the stream re-encoded does not read: %v", err)
	}
	sentinel := errors.New("source failed")
	points := map[string]int{}
	for _, cut := range cuts[:len(cuts)-1] {
		_, _, err := Read(&errAfter{data: data[:cut], err: sentinel}, dst, p)
		if !errors.Is(err, sentinel) || !errors.Is(err, ErrCorrupt) {
			t.Errorf("cut at %d of %d: Read error %v: want it to wrap the source's and ErrCorrupt", cut, len(data), err)
			continue
		}
		msg := err.Error()
		for _, point := range []string{"header", "trailer", "value length", "record"} {
			if strings.Contains(msg, point) {
				points[point]++
				break
			}
		}
	}
	t.Logf("cuts by read point: %v", points)
}

// TestFingerprintKeyShapes: a fingerprint key a stream carries must be
// whole, not only in the partition's range: a digest key of exactly a
// SHA-256, a near band key of a valid band whose value is its
// fingerprint's. A stream holding another is refused as corrupt.
func TestFingerprintKeyShapes(t *testing.T) {
	const p = partition.ID(9)
	lo, _ := partition.FingerprintRange(p)
	var sum [32]byte
	sum[0], sum[1] = byte(lo>>8), byte(lo)
	fp := uint64(lo)<<16 | uint64(lo) // bands 0 and 1 are p's
	good := store.NearKey(fp, 1)
	wrongValue := store.NearKey(fp^1<<20, 1)        // band 1's value changed...
	wrongValue[2], wrongValue[3] = good[2], good[3] // ...but keyed under the old one
	badBand := bytes.Clone(good)
	badBand[1] = simhash.NumBands
	for _, c := range []struct {
		name string
		key  []byte
		ok   bool
	}{
		{"digest", store.DigestKey(sum), true},
		{"near band", good, true},
		{"digest too long", append(store.DigestKey(sum), 0), false},
		{"digest too short", store.DigestKey(sum)[:3], false},
		{"near band too short", good[:len(good)-1], false},
		{"near band too long", append(bytes.Clone(good), 0), false},
		{"band out of range", badBand, false},
		{"band value not the fingerprint's", wrongValue, false},
	} {
		if err := inPartition(c.key, p); (err == nil) != c.ok {
			t.Errorf("%s (%x): inPartition = %v, want ok %v", c.name, c.key, err, c.ok)
		}
	}

	src, dst := open(t), open(t)
	b := src.NewBatch()
	b.Set(append(store.DigestKey(sum), 0), []byte("garbled"))
	if err := src.Commit(b); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, _, err := Write(&buf, src, p, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Read(&buf, dst, p); !errors.Is(err, ErrCorrupt) {
		t.Errorf("Read of a stream with a digest key of 34 bytes: %v, want ErrCorrupt", err)
	}
}
