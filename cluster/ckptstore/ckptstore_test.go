package ckptstore

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/internal/outbox"
	"github.com/trawl-crawler/trawl/internal/testkit/clustertest"
	"github.com/trawl-crawler/trawl/internal/testkit/jstest"
	"github.com/trawl-crawler/trawl/internal/testkit/storetest"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/trawl-crawler/trawl/cluster/checkpoint"
	"github.com/trawl-crawler/trawl/cluster/jsserver"
	"github.com/trawl-crawler/trawl/internal/store"
	"github.com/trawl-crawler/trawl/internal/store/partition"
	"go.uber.org/goleak"
)

// TestMain checks that no goroutine outlives the tests but nats.go's
// resetPendingAcksOnReconnect, which the object store's asynchronous
// publishes start and which never returns once the connection has closed
// (see cluster/fleet's TestMain).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/nats-io/nats.go/jetstream.(*jetStream).resetPendingAcksOnReconnect"))
}

func openDB(t *testing.T) *store.DB {
	t.Helper()
	db := storetest.Open(t)
	return db
}

// fill writes keys of several kinds for each host, valued tag, with a
// fold of route message seq.
func fill(t *testing.T, db *store.DB, hosts []string, tag string, seq uint64) {
	t.Helper()
	b := db.NewBatch()
	for _, h := range hosts {
		u := "http://" + h + "/a"
		for _, k := range [][]byte{store.HostKey(h), store.QueueKey(h, 1, 7), store.URLKey(h, u), store.SeenKey(3, h, u)} {
			b.Set(k, []byte(tag+" "+h))
		}
		outbox.SetRouteSeq(b, partition.Of(h), seq)
	}
	if err := db.Commit(b); err != nil {
		t.Fatal(err)
	}
}

// partKeys returns partition p's keys and values in db, and its route seq.
func partKeys(t *testing.T, db *store.DB, p partition.ID) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, kind := range checkpoint.Kinds {
		it, err := db.NewIter(store.PartitionPrefix(kind, p))
		if err != nil {
			t.Fatal(err)
		}
		for ok := it.First(); ok; ok = it.Next() {
			out[string(it.Key())] = string(it.Value())
		}
		it.Close()
	}
	seq, err := outbox.RouteSeq(db, p)
	if err != nil {
		t.Fatal(err)
	}
	out["route-seq"] = fmt.Sprint(seq)
	return out
}

func sameKeys(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d keys, want %d", what, len(got), len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: key %q = %q, want %q", what, k, got[k], v)
		}
	}
}

func standalone(t *testing.T, _ context.Context) jetstream.JetStream {
	t.Helper()
	return jstest.JetStream(t, jstest.Start(t, func(o *jsserver.Options) { o.Name = "solo" }))
}

// TestSaveRestore saves a partition of one store, restores it into another
// holding a stale copy, saves again after a change (the object is
// replaced), and restores a partition never saved (not found, untouched).
func TestSaveRestore(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	js := standalone(t, ctx)
	cs, err := Open(ctx, js, Options{})
	if err != nil {
		t.Fatal(err)
	}
	const p, q = partition.ID(7), partition.ID(8)
	src, dst := openDB(t), openDB(t)
	fill(t, src, clustertest.HostsIn(p, 50), "v1", 17)
	fill(t, dst, clustertest.HostsIn(p, 60), "stale", 99)
	fill(t, dst, clustertest.HostsIn(q, 3), "other", 5)
	dstQ := partKeys(t, dst, q)

	before := time.Now().Add(-time.Millisecond)
	saved, err := cs.Save(ctx, p, src, "n1")
	if err != nil {
		t.Fatal(err)
	}
	if saved.Partition != p || saved.Node != "n1" || saved.Keys != 50*4 || saved.RouteSeq != 17 || saved.Written.Before(before) || saved.Size == 0 {
		t.Errorf("Save = %+v, want partition %d, node n1, 200 keys, seq 17, written now", saved, p)
	}
	latest, found, err := cs.Latest(ctx, p)
	if err != nil || !found || latest != saved {
		t.Errorf("Latest = %+v, %v, %v, want %+v", latest, found, err, saved)
	}
	got, found, err := cs.Restore(ctx, p, dst)
	if err != nil || !found || got != saved {
		t.Fatalf("Restore = %+v, %v, %v, want %+v", got, found, err, saved)
	}
	sameKeys(t, "restored", partKeys(t, dst, p), partKeys(t, src, p))
	sameKeys(t, "other partition", partKeys(t, dst, q), dstQ)

	// A second save replaces the first.
	fill(t, src, clustertest.HostsIn(p, 55)[50:], "v2", 18)
	saved2, err := cs.Save(ctx, p, src, "n2")
	if err != nil {
		t.Fatal(err)
	}
	if saved2.Keys != 55*4 || saved2.RouteSeq != 18 || saved2.Node != "n2" {
		t.Errorf("second Save = %+v, want 220 keys, seq 18, node n2", saved2)
	}
	dst2 := openDB(t)
	if got, found, err := cs.Restore(ctx, p, dst2); err != nil || !found || got != saved2 {
		t.Fatalf("Restore after the second save = %+v, %v, %v, want %+v", got, found, err, saved2)
	}
	sameKeys(t, "restored after the second save", partKeys(t, dst2, p), partKeys(t, src, p))
	objs, err := cs.obs.List(ctx)
	if err != nil || len(objs) != 1 || objs[0].Name != Name(p) {
		t.Errorf("bucket lists %d objects (%v), want only %s", len(objs), err, Name(p))
	}

	// Never saved: not found, and the store as it was.
	if _, found, err := cs.Restore(ctx, q, dst); err != nil || found {
		t.Errorf("Restore of a partition never saved: found %v, %v", found, err)
	}
	if _, found, err := cs.Latest(ctx, q); err != nil || found {
		t.Errorf("Latest of a partition never saved: found %v, %v", found, err)
	}
	sameKeys(t, "partition never saved", partKeys(t, dst, q), dstQ)
}

// TestRestoreCorrupt: an object that is not a checkpoint of its partition
// is an error naming the partition, and leaves the partition empty.
func TestRestoreCorrupt(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	js := standalone(t, ctx)
	cs, err := Open(ctx, js, Options{})
	if err != nil {
		t.Fatal(err)
	}
	cs.retryWait = 10 * time.Millisecond // the retries are not what is tested
	const p = partition.ID(12)
	src := openDB(t)
	fill(t, src, clustertest.HostsIn(p, 20), "v", 3)
	if _, err := cs.Save(ctx, p, src, "n1"); err != nil {
		t.Fatal(err)
	}
	good, err := cs.obs.GetBytes(ctx, Name(p))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"garbage", []byte("not a checkpoint at all, not even its header")},
		{"truncated", good[:len(good)-10]},
	} {
		if _, err := cs.obs.PutBytes(ctx, Name(p), tc.data); err != nil {
			t.Fatal(err)
		}
		dst := openDB(t)
		fill(t, dst, clustertest.HostsIn(p, 5), "stale", 1)
		_, found, err := cs.Restore(ctx, p, dst)
		if err == nil || !found || !strings.Contains(err.Error(), fmt.Sprintf("partition %d", p)) {
			t.Errorf("%s: Restore: found %v, error %v; want an error naming partition %d", tc.name, found, err, p)
		}
		if keys := partKeys(t, dst, p); len(keys) != 1 || keys["route-seq"] != "0" {
			t.Errorf("%s: partition holds %d keys after a refused restore, want none: %v", tc.name, len(keys)-1, keys)
		}
	}
}

// TestFleetOfThree saves through one server of a 3-server cluster into a
// bucket of 3 replicas and restores through another.
func TestFleetOfThree(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	servers := jstest.Cluster(t, 3, 3)
	stores := make([]*Store, 3)
	for i, s := range servers {
		js := jstest.JetStream(t, s)
		var err error
		// The bucket's Raft group may take a moment to elect a leader.
		for {
			if stores[i], err = Open(ctx, js, Options{Replicas: 3}); err == nil {
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("%s: bucket: %v", s.Name(), err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	st, err := stores[2].obs.Status(ctx)
	if err != nil || st.Replicas() != 3 {
		t.Fatalf("bucket status: %v, want 3 replicas", err)
	}
	const p = partition.ID(200)
	src, dst := openDB(t), openDB(t)
	fill(t, src, clustertest.HostsIn(p, 30), "v", 41)
	saved, err := stores[0].Save(ctx, p, src, "s1")
	if err != nil {
		t.Fatal(err)
	}
	got, found, err := stores[2].Restore(ctx, p, dst)
	if err != nil || !found || got != saved {
		t.Fatalf("Restore through s3 = %+v, %v, %v, want %+v", got, found, err, saved)
	}
	sameKeys(t, "restored through s3", partKeys(t, dst, p), partKeys(t, src, p))
}

// TestSaveFails: a Save whose checkpoint cannot be written is an error and
// leaves the partition's previous checkpoint in place.
func TestSaveFails(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	js := standalone(t, ctx)
	cs, err := Open(ctx, js, Options{})
	if err != nil {
		t.Fatal(err)
	}
	const p = partition.ID(1)
	src := openDB(t)
	fill(t, src, clustertest.HostsIn(p, 10), "v", 2)
	saved, err := cs.Save(ctx, p, src, "n1")
	if err != nil {
		t.Fatal(err)
	}
	closed := openDB(t)
	closed.Close()
	if _, err := cs.Save(ctx, p, closed, "n2"); err == nil || !strings.Contains(err.Error(), "partition 1") {
		t.Errorf("Save from a closed store: %v, want an error naming partition 1", err)
	}
	if latest, found, err := cs.Latest(ctx, p); err != nil || !found || latest != saved {
		t.Errorf("Latest after a failed save = %+v, %v, %v, want %+v", latest, found, err, saved)
	}
}
