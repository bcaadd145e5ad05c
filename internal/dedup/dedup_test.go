package dedup

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/trawl-crawler/trawl/internal/partition"
	"github.com/trawl-crawler/trawl/internal/store"
	"github.com/trawl-crawler/trawl/simhash"
)

func memDB(t *testing.T) *store.DB {
	t.Helper()
	db, err := store.Open("state", store.Options{FS: vfs.NewMem(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func commit(t *testing.T, db *store.DB, fill func(*store.Batch) error) {
	t.Helper()
	b := db.NewBatch()
	if err := fill(b); err != nil {
		b.Close()
		t.Fatal(err)
	}
	if err := db.Commit(b); err != nil {
		t.Fatal(err)
	}
}

func TestExact(t *testing.T) {
	db := memDB(t)
	x, err := New(db)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("<html>same</html>"))
	if _, ok, err := x.Exact(sum); ok || err != nil {
		t.Fatalf("Exact before any add: %v, %v", ok, err)
	}
	o := Original{URL: "http://a.test/x", Date: time.Date(2026, 12, 2, 3, 4, 5, 6, time.UTC), File: "trawl-1.warc.gz", Offset: 12345, RecordID: "<urn:uuid:1>", Job: 7}
	commit(t, db, func(b *store.Batch) error { return x.AddExact(b, sum, o) })
	got, ok, err := x.Exact(sum)
	if err != nil || !ok || got != o {
		t.Fatalf("Exact = %+v, %v, %v; want %+v", got, ok, err, o)
	}
	if _, ok, _ := x.Exact(sha256.Sum256([]byte("other"))); ok {
		t.Error("Exact found another digest")
	}
}

func TestOriginalDecodeRejects(t *testing.T) {
	good := Original{URL: "http://a.test/", File: "f", Offset: 1}.Encode()
	for name, b := range map[string][]byte{
		"empty": nil, "version": {2}, "cut": good[:len(good)-1], "trailing": append(append([]byte{}, good...), 0),
	} {
		if _, err := DecodeOriginal(b); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v, want ErrMalformed", name, err)
		}
	}
}

func FuzzDecodeOriginal(f *testing.F) {
	f.Add(Original{URL: "http://a.test/", Date: time.Unix(1, 2), File: "f.warc.gz", Offset: 99}.Encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := DecodeOriginal(b)
		if err != nil {
			return
		}
		back, err := DecodeOriginal(o.Encode())
		if err != nil || back != o {
			t.Fatalf("re-encoding %+v: %+v, %v", o, back, err)
		}
	})
}

// TestNear: against a linear scan over the same fingerprints, the store's
// banded lookup finds the nearest one within the distance asked (up to
// simhash.MaxNear), or reports none when the scan finds none.
func TestNear(t *testing.T) {
	db := memDB(t)
	x, err := New(db)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	flip := func(fp uint64, n int) uint64 {
		for range n {
			fp ^= 1 << rng.IntN(64)
		}
		return fp
	}
	weak := func() uint64 { return flip(0, 4) }
	var stored []Print
	jobOf := map[string]uint32{}
	page := map[string]Print{}
	last := map[uint64]Print{} // fingerprint → the print last stored under it
	commit(t, db, func(b *store.Batch) error {
		for i := range 2000 {
			p := Print{rng.Uint64(), weak()}
			if i%4 == 0 && i > 0 {
				o := stored[rng.IntN(len(stored))]
				p = Print{flip(o.FP, rng.IntN(7)), o.Weak}
			}
			stored = append(stored, p)
			u := fmt.Sprintf("http://h%d.test/", i)
			page[u], jobOf[u], last[p.FP] = p, uint32(i%3), p
			if err := x.AddNear(b, p, u, jobOf[u]); err != nil {
				return err
			}
		}
		return nil
	})
	// dist is what Near promises of a stored page: found if its
	// fingerprint shares a band with the query's, at Print.Distance.
	dist := func(p, q Print) (int, bool) {
		for band := range simhash.NumBands {
			if simhash.Band(p.FP, band) == simhash.Band(q.FP, band) {
				return p.Distance(q), true
			}
		}
		return 0, false
	}
	byWeak := 0 // lookups found only thanks to the weak bits
	for q := range 2000 {
		o := stored[rng.IntN(len(stored))]
		query := Print{flip(o.FP, rng.IntN(6)), weak()}
		maxDist := q % (simhash.MaxNear + 1)
		best := maxDist + 1
		for _, p := range stored {
			if last[p.FP] != p {
				continue // a later page with the same fingerprint took its keys
			}
			if d, ok := dist(p, query); ok {
				best = min(best, d)
			}
			// Every page within maxDist by its whole fingerprint is found.
			if d := simhash.Distance(p.FP, query.FP); d <= maxDist && best > d {
				t.Fatalf("page at distance %d not found by a band", d)
			}
		}
		m, ok, err := x.Near(query, maxDist)
		if err != nil {
			t.Fatal(err)
		}
		if ok != (best <= maxDist) || ok && m.Dist != best {
			t.Fatalf("Near(%x, %d) = %+v, %v; a scan finds the nearest at %d", query, maxDist, m, ok, best)
		}
		if !ok {
			continue
		}
		p, known := page[m.URL]
		if d, shares := dist(p, query); !known || !shares || d != m.Dist || m.Job != jobOf[m.URL] {
			t.Fatalf("Near(%x) = %+v: not a stored page at that distance", query, m)
		}
		if simhash.Distance(p.FP, query.FP) > maxDist {
			byWeak++
		}
	}
	if byWeak == 0 {
		t.Error("no lookup was within the distance only outside the weak bits")
	}
}

// TestNearBandsLoaded: an index opened on a store that holds prints knows
// their band values (New reads them) and finds them; its in-memory bands
// are exactly those of the index that added them.
func TestNearBandsLoaded(t *testing.T) {
	db := memDB(t)
	x, err := New(db)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	var stored []Print
	commit(t, db, func(b *store.Batch) error {
		for i := range 300 {
			fps := Print{rng.Uint64(), rng.Uint64()}
			if i == 0 {
				fps = Print{0, 0} // the lowest band values
			}
			if i == 1 {
				fps = Print{1<<64 - 1, 0} // the highest
			}
			stored = append(stored, fps)
			if err := x.AddNear(b, fps, fmt.Sprintf("http://h%d.test/", i), 1); err != nil {
				return err
			}
		}
		return nil
	})
	y, err := New(db)
	if err != nil {
		t.Fatal(err)
	}
	if x.occupied != y.occupied {
		t.Fatal("an index opened on the store holds other band values than the one that stored them")
	}
	for i, fps := range stored {
		m, ok, err := y.Near(Print{fps.FP ^ 1, fps.Weak}, simhash.MaxNear)
		if err != nil || !ok || m.URL != fmt.Sprintf("http://h%d.test/", i) {
			t.Fatalf("Near(stored print %d, one bit off) = %+v, %v, %v", i, m, ok, err)
		}
	}
}

// TestNearSharded: an index split by partition (each shard holding only
// its partitions' bands, AddNearBands) answers, shard by shard
// (NearBands), what one whole index does; keys copied into a store other
// than by AddNear are found once their partition is loaded
// (LoadPartition).
func TestNearSharded(t *testing.T) {
	whole, err := New(memDB(t))
	if err != nil {
		t.Fatal(err)
	}
	shardDB := memDB(t)
	shard, err := New(shardDB) // made before the keys are copied in
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	var stored []Print
	commit(t, whole.db, func(b *store.Batch) error {
		for i := range 200 {
			p := Print{FP: rng.Uint64()}
			stored = append(stored, p)
			if err := whole.AddNear(b, p, fmt.Sprintf("http://h%d.test/", i), 1); err != nil {
				return err
			}
		}
		return nil
	})
	// Copy every fingerprint key into the shard's store, by partition.
	it, err := whole.db.NewIter(nil)
	if err != nil {
		t.Fatal(err)
	}
	commit(t, shardDB, func(b *store.Batch) error {
		for part := range partition.Count {
			for _, r := range store.FingerprintRanges(partition.ID(part)) {
				for ok := it.SeekGE(r.Start); ok && bytes.Compare(it.Key(), r.End) < 0; ok = it.Next() {
					if err := b.Set(it.Key(), it.Value()); err != nil {
						return err
					}
				}
			}
		}
		return nil
	})
	it.Close()
	for i, p := range stored {
		q := Print{FP: p.FP ^ 0b101} // two bits off, in band 0
		want, ok, err := whole.Near(q, simhash.MaxNear)
		if err != nil || !ok {
			t.Fatalf("whole Near(print %d) = %v, %v", i, ok, err)
		}
		parts := map[partition.ID]bool{}
		for band := range simhash.NumBands {
			parts[partition.OfFingerprint(simhash.Band(q.FP, band))] = true
		}
		best := Match{Dist: simhash.MaxNear + 1}
		for part := range parts {
			if i == 0 { // before LoadPartition, the copied keys are not seen
				if _, ok, _ := shard.NearBands(q, simhash.MaxNear, PartitionBands(q.FP, part)); ok {
					t.Fatalf("NearBands before LoadPartition(%d) found a match", part)
				}
			}
			if err := shard.LoadPartition(part); err != nil {
				t.Fatal(err)
			}
			m, ok, err := shard.NearBands(q, simhash.MaxNear, PartitionBands(q.FP, part))
			if err != nil {
				t.Fatal(err)
			}
			if ok && m.Dist < best.Dist {
				best = m
			}
		}
		if best != want {
			t.Errorf("print %d: shards' best %+v, whole index's %+v", i, best, want)
		}
	}
	// PartitionBands splits every fingerprint's bands among its partitions.
	for _, p := range stored {
		var all Bands
		for part := range partition.Count {
			s := PartitionBands(p.FP, partition.ID(part))
			if all&s != 0 {
				t.Fatalf("PartitionBands(%#x): band in two partitions", p.FP)
			}
			all |= s
		}
		if all != AllBands {
			t.Fatalf("PartitionBands(%#x) cover %b, want %b", p.FP, all, AllBands)
		}
	}
}
