package urlseen

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/trawl-crawler/trawl/cluster/checkpoint"
	"github.com/trawl-crawler/trawl/internal/store/partition"
)

// TestLoadPartition moves a partition's seen keys from store A to store B
// by a checkpoint, under B's open gate: after LoadPartition, B's gate knows
// A's URLs of the partition (not new, though B's filter never saw them
// added) and calls fresh ones new, and a URL B had seen (and cached) before
// the partition was replaced by A's copy, which lacks it, is new again.
func TestLoadPartition(t *testing.T) {
	const p = partition.ID(11)
	var hosts []string
	for i := 0; len(hosts) < 3; i++ {
		if h := fmt.Sprintf("lp%d.test", i); partition.Of(h) == p {
			hosts = append(hosts, h)
		}
	}
	url := func(i int, path string) string { return fmt.Sprintf("http://%s/%s", hosts[i%len(hosts)], path) }
	var moved, fresh []string
	for i := range 300 {
		moved = append(moved, url(i, fmt.Sprintf("moved/%d", i)))
		fresh = append(fresh, url(i, fmt.Sprintf("fresh/%d", i)))
	}
	const job = 4

	dbA := openStore(t, vfs.NewMem(), "/a")
	defer dbA.Close()
	dA := newDurable(t, dbA, DurableOptions{ExpectedURLs: 10_000})
	b := dbA.NewBatch()
	if isNew, err := dA.AddBatch(b, job, moved); err != nil || slices.Contains(isNew, false) {
		t.Fatalf("A: AddBatch(moved) = %v, %v; want all new", isNew, err)
	}
	if err := dbA.Commit(b); err != nil {
		t.Fatal(err)
	}
	var ckpt bytes.Buffer
	if _, st, err := checkpoint.Write(&ckpt, dbA, p, time.Now()); err != nil || st.Keys != len(moved) {
		t.Fatalf("checkpoint of A: %d keys, %v; want %d", st.Keys, err, len(moved))
	}

	dbB := openStore(t, vfs.NewMem(), "/b")
	defer dbB.Close()
	dB := newDurable(t, dbB, DurableOptions{ExpectedURLs: 10_000})
	stale := url(0, "stale")
	for round, want := range []bool{true, false} { // the second reads the store, and caches the key
		b := dbB.NewBatch()
		if isNew, err := dB.AddTo(b, job, stale); err != nil || isNew != want {
			t.Fatalf("B: AddTo(stale) round %d = %v, %v; want %v", round, isNew, err, want)
		}
		if err := dbB.Commit(b); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := checkpoint.Read(bytes.NewReader(ckpt.Bytes()), dbB, p); err != nil {
		t.Fatal(err)
	}
	notInFilter := 0
	for _, u := range moved {
		if !dB.MaybeSeen(job, u) {
			notInFilter++
		}
	}
	if notInFilter == 0 {
		t.Fatalf("B's filter already answers maybe for all %d moved URLs: the test shows nothing", len(moved))
	}
	lenBefore := dB.Len()
	if err := dB.LoadPartition(p); err != nil {
		t.Fatal(err)
	}
	if got := dB.Len() - lenBefore; got < notInFilter || got > len(moved) {
		t.Errorf("Len grew by %d, want %d..%d", got, notInFilter, len(moved))
	}

	b = dbB.NewBatch()
	defer b.Close()
	isNew, err := dB.AddBatch(b, job, moved)
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range isNew {
		if n {
			t.Errorf("B: moved URL %s reported new after LoadPartition", moved[i])
		}
	}
	isNew, err = dB.AddBatch(b, job, append(slices.Clone(fresh), stale))
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range isNew {
		if !n {
			t.Errorf("B: URL %s, not in the imported partition, reported seen", append(fresh, stale)[i])
		}
	}
}
