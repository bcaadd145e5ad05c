package outbox

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"testing"

	"github.com/trawl-crawler/trawl/frontier"
	"github.com/trawl-crawler/trawl/internal/store"
	"github.com/trawl-crawler/trawl/internal/store/partition"
	"github.com/trawl-crawler/trawl/internal/testkit/clustertest"
)

func openDB(t *testing.T) *store.DB {
	t.Helper()
	db, err := store.Open(t.TempDir(), store.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// add writes items into the outbox in one committed batch.
func add(t *testing.T, db *store.DB, o *Outbox, items []frontier.Item) {
	t.Helper()
	b := db.NewBatch()
	for _, it := range items {
		if err := o.Add(b, it); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Commit(b); err != nil {
		t.Fatal(err)
	}
}

func itemsFor(p partition.ID, n int, tag string) []frontier.Item {
	hosts := clustertest.HostsIn(p, 3)
	var out []frontier.Item
	for i := 0; i < n; i++ {
		h := hosts[i%len(hosts)]
		out = append(out, frontier.Item{URL: fmt.Sprintf("http://%s/%s/%d", h, tag, i), Host: h, Depth: i % 5, Job: 7})
	}
	return out
}

func TestItemRoundTrip(t *testing.T) {
	for _, it := range []frontier.Item{
		{URL: "http://a.test/", Host: "a.test"},
		{URL: "https://b.test/x?y#z", Host: "b.test", Depth: 3, Level: 2, Redirects: 1, Attempts: 2, ShapeRun: 9, Via: "http://a.test/", Job: 1<<32 - 1},
		{URL: "https://b.test/f.woff", Host: "b.test", Depth: 3, Via: "https://b.test/s.css", Requisite: 2},
	} {
		b := AppendItem(nil, it)
		if got, err := DecodeItem(b); err != nil || got != it {
			t.Errorf("DecodeItem(AppendItem(%v)) = %v, %v", it, got, err)
		}
		// An entry written before Requisite (no last byte) reads as a page.
		if it.Requisite == 0 {
			if got, err := DecodeItem(b[:len(b)-1]); err != nil || got != it {
				t.Errorf("DecodeItem(an entry without requisite, %v) = %v, %v", it, got, err)
			}
		}
	}
	good := AppendItem(nil, frontier.Item{URL: "http://a.test/", Host: "a.test"})
	for _, bad := range []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"truncated", good[:len(good)-2]},
		{"trailing", append(slices.Clone(good), 0)},
		{"requisite past 1024", append(slices.Clone(good[:len(good)-1]), 0x81, 0x08)},
		{"no URL", AppendItem(nil, frontier.Item{Host: "a.test"})},
	} {
		if _, err := DecodeItem(bad.b); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: DecodeItem error %v, want ErrMalformed", bad.name, err)
		}
	}
}

// TestOutboxJobs: Jobs names the jobs of the entries waiting, and says
// "all" once more than its limit wait.
func TestOutboxJobs(t *testing.T) {
	db := openDB(t)
	o, err := Open(db)
	if err != nil {
		t.Fatal(err)
	}
	if jobs, all, err := o.Jobs(10); err != nil || all || len(jobs) != 0 {
		t.Fatalf("empty outbox: Jobs = %v, %v, %v", jobs, all, err)
	}
	a, b := itemsFor(partition.ID(3), 2, "a"), itemsFor(partition.ID(9), 2, "b")
	b[1].Job = 8
	add(t, db, o, append(a, b...))
	jobs, all, err := o.Jobs(10)
	if err != nil || all {
		t.Fatalf("Jobs = %v, %v, %v", jobs, all, err)
	}
	if got := slices.Sorted(maps.Keys(jobs)); !slices.Equal(got, []uint32{7, 8}) {
		t.Errorf("Jobs = %v, want 7 and 8", got)
	}
	if _, all, err := o.Jobs(3); err != nil || !all {
		t.Errorf("Jobs(3) of 4 entries: all %v, %v; want true", all, err)
	}
	if _, all, err := o.Jobs(4); err != nil || all {
		t.Errorf("Jobs(4) of 4 entries: all %v, %v; want false", all, err)
	}
}

// TestReopenNumbersAfter: a reopened outbox numbers new entries after
// every entry the store holds, whatever their partition.
func TestReopenNumbersAfter(t *testing.T) {
	db := openDB(t)
	o, err := Open(db)
	if err != nil {
		t.Fatal(err)
	}
	add(t, db, o, itemsFor(partition.ID(5), 30, "c"))
	add(t, db, o, itemsFor(partition.ID(2), 1, "d"))
	o2, err := Open(db)
	if err != nil {
		t.Fatal(err)
	}
	if o2.next != 32 {
		t.Errorf("reopened outbox numbers from %d, want 32", o2.next)
	}
}

// TestRange: entries come in partition order, then in the order added,
// with their numbers; an unreadable key or value, or an item under another
// partition's key, comes with an error; Delete removes entries.
func TestRange(t *testing.T) {
	db := openDB(t)
	o, err := Open(db)
	if err != nil {
		t.Fatal(err)
	}
	const p, q = partition.ID(9), partition.ID(4)
	a, b := itemsFor(p, 3, "a"), itemsFor(q, 2, "b")
	add(t, db, o, a)
	add(t, db, o, b)
	bt := db.NewBatch()
	bt.Set(store.OutboxKey(p, 100), []byte{1, 2, 3})                   // value unreadable
	bt.Set(store.OutboxKey(p, 101), AppendItem(nil, b[0]))             // an item of q under p
	bt.Set(append(store.PartitionPrefix(store.KindOutbox, p), 1), nil) // key unreadable
	if err := db.Commit(bt); err != nil {
		t.Fatal(err)
	}
	var got []frontier.Item
	var seqs []uint64
	var bad [][]byte
	badKeys := 0
	err = o.Range(func(e Entry) error {
		if e.Err != nil {
			if errors.Is(e.Err, ErrBadKey) {
				badKeys++
			}
			bad = append(bad, e.Key)
			return nil
		}
		got = append(got, e.Item)
		seqs = append(seqs, e.Seq)
		if e.Part != partition.Of(e.Item.Host) {
			t.Errorf("entry %d: partition %d, its host's is %d", e.Seq, e.Part, partition.Of(e.Item.Host))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := append(slices.Clone(b), a...); !slices.Equal(got, want) {
		t.Errorf("Range delivered %v, want %v", got, want)
	}
	if want := []uint64{4, 5, 1, 2, 3}; !slices.Equal(seqs, want) {
		t.Errorf("numbers %v, want %v", seqs, want)
	}
	if len(bad) != 3 || badKeys != 1 {
		t.Errorf("%d bad entries (%d keys), want 3 (1)", len(bad), badKeys)
	}
	if err := o.Delete(bad...); err != nil {
		t.Fatal(err)
	}
	if n, err := o.Len(); err != nil || n != 5 {
		t.Errorf("Len after deleting the bad entries = %d, %v, want 5", n, err)
	}
	stop := errors.New("stop")
	if err := o.Range(func(Entry) error { return stop }); err != stop {
		t.Errorf("Range returned %v, want fn's error", err)
	}
}

// TestRouteSeq: a partition's route sequence is 0 until set, then what
// was set, apart from every other partition's.
func TestRouteSeq(t *testing.T) {
	db := openDB(t)
	if seq, err := RouteSeq(db, 3); err != nil || seq != 0 {
		t.Fatalf("RouteSeq of a fresh store = %d, %v", seq, err)
	}
	b := db.NewBatch()
	if err := SetRouteSeq(b, 3, 42); err != nil {
		t.Fatal(err)
	}
	if err := db.Commit(b); err != nil {
		t.Fatal(err)
	}
	if seq, err := RouteSeq(db, 3); err != nil || seq != 42 {
		t.Errorf("RouteSeq(3) = %d, %v, want 42", seq, err)
	}
	if seq, err := RouteSeq(db, 4); err != nil || seq != 0 {
		t.Errorf("RouteSeq(4) = %d, %v, want 0", seq, err)
	}
	if _, err := DecodeRouteSeq(3, []byte{1}); err == nil {
		t.Error("DecodeRouteSeq of 1 byte: no error")
	}
}
