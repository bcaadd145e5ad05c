package urlseen

import (
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/trawl-crawler/trawl/internal/store"
	"github.com/trawl-crawler/trawl/internal/store/partition"
)

// TestKeyFilter checks the filter's invariant across a reopen: every key
// of its kind in the store, loaded or added, is "maybe"; keys of other
// kinds are not loaded; most absent keys are "no". A filter sized for far
// fewer keys than the store holds grows at load.
func TestKeyFilter(t *testing.T) {
	fs := vfs.NewMem()
	db := openStore(t, fs, "/s")
	urlKey := func(i int) []byte { return store.URLKey("a.test", fmt.Sprintf("http://a.test/%d", i)) }
	b := db.NewBatch()
	for i := range 1000 {
		if err := b.Set(urlKey(i), []byte("r")); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Commit(b); err != nil {
		t.Fatal(err)
	}
	for _, expected := range []uint{10, 100_000} {
		k, err := NewKeyFilter(db, store.KindURL, DurableOptions{ExpectedURLs: expected})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 1000 {
			if !k.MayHave(urlKey(i)) {
				t.Fatalf("expected %d: stored key %d not in the filter", expected, i)
			}
		}
		yes := 0
		for i := 1000; i < 11000; i++ {
			if k.MayHave(urlKey(i)) {
				yes++
			}
		}
		if yes > 300 { // 1% of 10,000 is 100 (and less in a filter sized for more keys than it holds)
			t.Errorf("expected %d: %d of 10,000 absent keys answered maybe, want about 1%%", expected, yes)
		}
		k.Add(urlKey(5000))
		if !k.MayHave(urlKey(5000)) {
			t.Errorf("expected %d: an added key is not in the filter", expected)
		}
		if k.MayHave(store.SeenKey(1, "a.test", "http://a.test/1")) && k.MayHave(store.SeenKey(1, "a.test", "http://a.test/2")) {
			t.Errorf("expected %d: seen keys answer maybe in a filter of URL keys", expected)
		}
	}
	if _, err := NewKeyFilter(db, store.KindURL, DurableOptions{FalsePositiveRate: 1}); err == nil {
		t.Error("NewKeyFilter with rate 1: no error")
	}
	db.Close()
}

// TestKeyFilterLoadPartition: keys written after the filter loaded (a
// partition restored from another node's checkpoint) are in it once their
// partition is loaded, and no other partition's keys are.
func TestKeyFilterLoadPartition(t *testing.T) {
	db := openStore(t, vfs.NewMem(), "/s")
	defer db.Close()
	k, err := NewKeyFilter(db, store.KindURL, DurableOptions{ExpectedURLs: 10_000})
	if err != nil {
		t.Fatal(err)
	}
	hosts := []string{"a.test", "b.test"}
	for partition.Of(hosts[1]) == partition.Of(hosts[0]) {
		hosts[1] = "x" + hosts[1]
	}
	key := func(h string, i int) []byte { return store.URLKey(h, fmt.Sprintf("http://%s/%d", h, i)) }
	b := db.NewBatch()
	for _, h := range hosts {
		for i := range 200 {
			if err := b.Set(key(h, i), []byte("r")); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := db.Commit(b); err != nil {
		t.Fatal(err)
	}
	if err := k.LoadPartition(db, store.KindURL, partition.Of(hosts[0])); err != nil {
		t.Fatal(err)
	}
	others := 0
	for i := range 200 {
		if !k.MayHave(key(hosts[0], i)) {
			t.Fatalf("key %d of the partition loaded is not in the filter", i)
		}
		if k.MayHave(key(hosts[1], i)) {
			others++
		}
	}
	if others > 20 { // false positives at 1%: about 2
		t.Errorf("%d of 200 keys of a partition not loaded answer maybe", others)
	}
}
