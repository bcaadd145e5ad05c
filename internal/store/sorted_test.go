package store

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// contents is every queue key and its value in db, in key order, as text.
func contents(t *testing.T, db *DB) string {
	t.Helper()
	it, err := db.NewIter(KindPrefix(KindQueue))
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var out bytes.Buffer
	for ok := it.First(); ok; ok = it.Next() {
		fmt.Fprintf(&out, "%q=%q\n", it.Key(), it.Value())
	}
	if err := it.Error(); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// TestApplyGroupSortedSameAsInOrder applies random groups (sets and
// deletions of few keys, so that writes of one key meet within a batch
// and across the batches of a group, some groups with a range deletion)
// with ApplyGroup to one store and batch by batch, in order, to another:
// the stores must hold the same keys and values after every group, and
// after a crash once the groups are synced.
func TestApplyGroupSortedSameAsInOrder(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			mem := vfs.NewCrashableMem()
			grouped := mustOpen(t, "/g", memOpts(mem))
			defer func() { grouped.Close() }()
			plain := mustOpen(t, "/p", memOpts(vfs.NewMem()))
			defer plain.Close()
			key := func() []byte {
				return QueueKey(fmt.Sprintf("h%d.test", rng.IntN(5)), uint8(rng.IntN(2)), uint64(rng.IntN(4)))
			}
			for g := range 30 {
				var group []*Batch
				for range 1 + rng.IntN(5) {
					gb, pb := grouped.NewBatch(), plain.NewBatch()
					for range rng.IntN(12) {
						k, v := key(), fmt.Appendf(nil, "g%d-%d", g, rng.IntN(1000))
						switch r := rng.IntN(20); {
						case r == 0 && g%3 == 0:
							end := key()
							if bytes.Compare(k, end) > 0 {
								k, end = end, k
							}
							gb.DeleteRange(k, end)
							pb.DeleteRange(k, end)
						case r < 7:
							gb.Delete(k)
							pb.Delete(k)
						default:
							gb.Set(k, v)
							pb.Set(k, v)
						}
					}
					group = append(group, gb)
					if err := plain.CommitNoSync(pb); err != nil {
						t.Fatal(err)
					}
				}
				if err := grouped.ApplyGroup(group); err != nil {
					t.Fatalf("group %d: ApplyGroup = %v", g, err)
				}
				if got, want := contents(t, grouped), contents(t, plain); got != want {
					t.Fatalf("group %d: grouped store holds\n%s\nbatch by batch\n%s", g, got, want)
				}
			}
			if err := grouped.SyncWAL(); err != nil {
				t.Fatal(err)
			}
			want := contents(t, plain)
			crashed := mem.CrashClone(vfs.CrashCloneCfg{})
			grouped.Close()
			grouped = mustOpen(t, "/g", memOpts(crashed))
			if got := contents(t, grouped); got != want {
				t.Fatalf("after a crash the grouped store holds\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// TestMergeSortedOrder: a group of sets and deletions is handed to Pebble
// in key order, ties in group order; a range deletion, or a lone write,
// leaves the group in its own order.
func TestMergeSortedOrder(t *testing.T) {
	db := mustOpen(t, "", memOpts(vfs.NewMem()))
	defer db.Close()
	batch := func(ops ...string) *Batch {
		b := db.NewBatch()
		for _, op := range ops {
			switch op[0] {
			case '+':
				b.Set([]byte(op[1:2]), []byte(op[2:]))
			case '-':
				b.Delete([]byte(op[1:]))
			case '~':
				b.DeleteRange([]byte(op[1:2]), []byte(op[2:]))
			}
		}
		return b
	}
	read := func(bs []*Batch) string {
		size, count := 0, 0
		for _, b := range bs {
			size, count = size+b.b.Len(), count+int(b.b.Count())
		}
		m, ok := db.mergeSorted(bs, size, count)
		for _, b := range bs {
			b.Close()
		}
		if !ok {
			return "in order"
		}
		defer m.Close()
		var out []string
		r := m.Reader()
		for {
			kind, k, v, ok, err := r.Next()
			if err != nil || !ok {
				break
			}
			out = append(out, fmt.Sprintf("%v %s%s", kind, k, v))
		}
		return fmt.Sprint(out)
	}
	if got, want := read([]*Batch{batch("+c1", "+a1", "-b"), batch("+b2", "+a2", "-c")}), "[SET a1 SET a2 DEL b SET b2 SET c1 DEL c]"; got != want {
		t.Errorf("sorted group = %s, want %s", got, want)
	}
	if got := read([]*Batch{batch("+c1", "+a1"), batch("~ab")}); got != "in order" {
		t.Errorf("group with a range deletion = %s, want it left in order", got)
	}
	if got := read([]*Batch{batch("+c1")}); got != "in order" {
		t.Errorf("one write = %s, want it left in order", got)
	}
}
