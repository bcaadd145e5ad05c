package fpshard_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/trawl-crawler/trawl/cluster/checkpoint"
	"github.com/trawl-crawler/trawl/cluster/fpshard"
	"github.com/trawl-crawler/trawl/cluster/jsserver"
	"github.com/trawl-crawler/trawl/internal/store"
	"github.com/trawl-crawler/trawl/internal/store/dedup"
	"github.com/trawl-crawler/trawl/internal/store/partition"
	"github.com/trawl-crawler/trawl/internal/testkit/jstest"
	"github.com/trawl-crawler/trawl/internal/testkit/storetest"
	"github.com/trawl-crawler/trawl/simhash"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// member is one fleet member's store and shard.
type member struct {
	db    *store.DB
	shard *fpshard.Shard
}

func join(t *testing.T, s *jsserver.Server, o fpshard.Options, serves ...partition.ID) *member {
	t.Helper()
	db := storetest.Open(t)
	ix, err := dedup.New(db)
	if err != nil {
		t.Fatal(err)
	}
	nc, err := s.Connect()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	o.Conn, o.Index, o.DB = nc, ix, db
	sh, err := fpshard.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sh.Close)
	for _, p := range serves {
		if err := sh.Serve(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.Flush(); err != nil { // the subscriptions are the server's
		t.Fatal(err)
	}
	return &member{db: db, shard: sh}
}

// commit runs add on a batch of m's store and commits it, as a page's
// completion does.
func (m *member) commit(t *testing.T, add func(b *store.Batch) error) {
	t.Helper()
	b := m.db.NewBatch()
	if err := add(b); err != nil {
		b.Close()
		t.Fatal(err)
	}
	if err := m.db.Commit(b); err != nil {
		t.Fatal(err)
	}
}

// sumIn returns a SHA-256-sized digest of partition p, told apart by tag.
func sumIn(p partition.ID, tag byte) (s [sha256.Size]byte) {
	lo, _ := partition.FingerprintRange(p)
	s[0], s[1], s[31] = byte(lo>>8), byte(lo), tag
	return s
}

// band returns the 16-bit band value of partition p, told apart by tag.
func band(p partition.ID, tag uint16) uint64 {
	lo, _ := partition.FingerprintRange(p)
	return uint64(lo + tag)
}

func span(from, to int) []partition.ID {
	var out []partition.ID
	for p := from; p < to; p++ {
		out = append(out, partition.ID(p))
	}
	return out
}

// waitFor polls cond until it holds or 10 s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestTwoMembers: two members serving disjoint halves of the partitions
// find each other's exact and near duplicates; an add for the other half
// is written by its owner only after the adder's batch commits; a lookup
// of a partition no one serves is "not seen" at once and counted.
func TestTwoMembers(t *testing.T) {
	s := jstest.Start(t)
	a := join(t, s, fpshard.Options{MoveWait: 500 * time.Millisecond}, span(0, 128)...)
	b := join(t, s, fpshard.Options{}, span(128, 256)...)
	origA := dedup.Original{URL: "http://a.test/", Date: time.Unix(1_700_000_000, 0).UTC(), File: "a.warc.gz", Offset: 10, RecordID: "<urn:uuid:a>", Job: 1}
	origB := dedup.Original{URL: "http://b.test/", Date: time.Unix(1_700_000_001, 0).UTC(), File: "b.warc.gz", Offset: 20, RecordID: "<urn:uuid:b>", Job: 1}
	inA, inB := sumIn(3, 1), sumIn(200, 2)

	// a archives a page whose digest is b's: sent only once a's batch commits.
	batch := a.db.NewBatch()
	if err := a.shard.AddExact(batch, inB, origA); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if n := b.shard.Stats().AddsReceived; n != 0 {
		t.Fatalf("b received %d adds before a's batch committed", n)
	}
	if err := a.db.Commit(batch); err != nil {
		t.Fatal(err)
	}
	b.commit(t, func(bt *store.Batch) error { return b.shard.AddExact(bt, inA, origB) })
	waitFor(t, "b to write a's add", func() bool { return b.shard.Stats().AddsReceived == 1 })
	waitFor(t, "a to write b's add", func() bool { return a.shard.Stats().AddsReceived == 1 })

	for _, c := range []struct {
		name string
		m    *member
		sum  [sha256.Size]byte
		want dedup.Original
	}{
		{"a asks b", a, inB, origA}, {"b at home", b, inB, origA},
		{"b asks a", b, inA, origB}, {"a at home", a, inA, origB},
	} {
		got, ok, err := c.m.shard.Exact(c.sum)
		if err != nil || !ok || got != c.want {
			t.Errorf("%s: Exact = %+v, %v, %v; want %+v", c.name, got, ok, err, c.want)
		}
	}
	if _, ok, err := a.shard.Exact(sumIn(200, 9)); ok || err != nil {
		t.Errorf("Exact of an unknown digest of b's: %v, %v", ok, err)
	}

	// A print whose bands 0 and 3 are a's, 1 and 2 b's, archived by a.
	fp := band(10, 1) | band(150, 2)<<16 | band(160, 3)<<32 | band(20, 4)<<48
	pr := printAt(fp)
	a.commit(t, func(bt *store.Batch) error { return a.shard.AddNear(bt, pr, "http://a.test/page", 7) })
	// Bands 1 and 2 are two partitions of b's: an add to each.
	waitFor(t, "b to write a's near bands", func() bool { return b.shard.Stats().AddsReceived == 3 })
	for _, c := range []struct {
		name string
		m    *member
		flip uint64 // bits changed in the lookup
	}{
		{"b, only a's bands equal", b, 1<<16 | 1<<32},
		{"b, only b's bands equal", b, 1 | 1<<48},
		{"a, only b's bands equal", a, 1 | 1<<48},
		{"a, only a's bands equal", a, 1<<17 | 1<<33},
	} {
		m, ok, err := c.m.shard.Near(printAt(fp^c.flip), 0.75)
		if err != nil || !ok || m.URL != "http://a.test/page" || m.Job != 7 || m.Resemblance != 1 {
			t.Errorf("%s: Near = %+v, %v, %v; want a.test/page at resemblance 1", c.name, m, ok, err)
		}
	}
	if m, ok, err := b.shard.Near(printAt(fp^0xf000f000f000f), 0.75); ok || err != nil {
		t.Errorf("Near with every band changed: %+v, %v, %v", m, ok, err)
	}

	// No one serves partition 5 once a lets it go: not seen, counted.
	if err := a.shard.Release(context.Background(), 5); err != nil {
		t.Fatal(err)
	}
	before := a.shard.Stats()
	start := time.Now()
	if _, ok, err := a.shard.Exact(sumIn(5, 1)); ok || err != nil {
		t.Errorf("Exact of a partition no one serves: %v, %v", ok, err)
	}
	if d := time.Since(start); d > 1500*time.Millisecond {
		t.Errorf("a lookup no one can answer took %v, with MoveWait 500 ms", d)
	}
	if st := a.shard.Stats(); st.RemoteMisses != before.RemoteMisses+1 || st.LookupsRemote != before.LookupsRemote+1 {
		t.Errorf("stats after an unanswered lookup: %+v (before %+v)", st, before)
	}
	st := a.shard.Stats()
	if st.LookupsLocal == 0 || st.LookupsRemote == 0 || st.AddsSent != 3 || st.AddsLocal != 2 {
		t.Errorf("a's stats: %+v", st)
	}
}

// TestBatching: concurrent lookups bound for one partition share requests
// (at most MaxBatch a request: a full batch is sent at once and the next
// lookup starts another), and a lone one is sent after Linger.
func TestBatching(t *testing.T) {
	s := jstest.Start(t)
	owner := join(t, s, fpshard.Options{}, 9)
	served := 0
	for _, tc := range []struct{ lookups, maxBatch int }{{64, 16}, {400, 2}} {
		// With a Linger of an hour only full batches are ever sent: a
		// batch that grew past MaxBatch would leave the last lookups
		// waiting for the hour.
		asker := join(t, s, fpshard.Options{MaxBatch: tc.maxBatch, Linger: time.Hour})
		var wg sync.WaitGroup
		for i := range tc.lookups {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, ok, err := asker.shard.Exact(sumIn(9, byte(i))); ok || err != nil {
					t.Errorf("Exact: %v, %v", ok, err)
				}
			}()
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatalf("%d lookups in batches of %d: some still wait after 20 s (%+v)", tc.lookups, tc.maxBatch, asker.shard.Stats())
		}
		want := int64(tc.lookups / tc.maxBatch)
		if st := asker.shard.Stats(); st.Requests != want || st.LookupsRemote != int64(tc.lookups) || st.RemoteMisses != 0 {
			t.Errorf("%d lookups in batches of %d: %+v, want %d requests", tc.lookups, tc.maxBatch, st, want)
		}
		served += tc.lookups
	}
	if n := owner.shard.Stats().Served; n != int64(served) {
		t.Errorf("owner answered %d lookups, want %d", n, served)
	}
	lone := join(t, s, fpshard.Options{Linger: 20 * time.Millisecond})
	start := time.Now()
	if _, _, err := lone.shard.Exact(sumIn(9, 1)); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 20*time.Millisecond {
		t.Errorf("a lone lookup was sent after %v, before Linger", d)
	}
	if st := lone.shard.Stats(); st.Requests != 1 {
		t.Errorf("a lone lookup: %d requests", st.Requests)
	}
}

// TestHandoff: partition p's fingerprints travel in its checkpoint; the
// member that restores it and serves p answers for them, near bands
// included (the checkpoint's band values are loaded at Serve).
func TestHandoff(t *testing.T) {
	const p = partition.ID(42)
	s := jstest.Start(t)
	giver := join(t, s, fpshard.Options{}, p)
	taker := join(t, s, fpshard.Options{})
	asker := join(t, s, fpshard.Options{MoveWait: 300 * time.Millisecond}) // not served between the two: "not seen" soon
	orig := dedup.Original{URL: "http://g.test/", Date: time.Unix(1_700_000_000, 0).UTC(), File: "g.warc.gz", RecordID: "<urn:uuid:g>", Job: 2}
	sum := sumIn(p, 1)
	fp := band(p, 1) | band(p, 2)<<16 | band(p, 3)<<32 | band(p, 4)<<48
	giver.commit(t, func(b *store.Batch) error {
		if err := giver.shard.AddExact(b, sum, orig); err != nil {
			return err
		}
		return giver.shard.AddNear(b, printAt(fp), "http://g.test/near", 2)
	})
	if _, ok, _ := asker.shard.Exact(sum); !ok {
		t.Fatal("the giver does not answer for its partition")
	}

	if err := giver.shard.Release(context.Background(), p); err != nil { // before the last checkpoint
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, _, err := checkpoint.Write(&buf, giver.db, p, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := asker.shard.Exact(sum); ok {
		t.Fatal("a partition released and not yet served answered")
	}
	if _, _, err := checkpoint.Read(&buf, taker.db, p); err != nil {
		t.Fatal(err)
	}
	if err := taker.shard.Serve(p); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := asker.shard.Exact(sum); !ok || err != nil || got != orig {
		t.Errorf("Exact after the handoff = %+v, %v, %v", got, ok, err)
	}
	m, ok, err := asker.shard.Near(printAt(fp^1<<5), 0.75)
	if !ok || err != nil || m.URL != "http://g.test/near" || m.Resemblance != 1 {
		t.Errorf("Near after the handoff = %+v, %v, %v", m, ok, err)
	}
}

// TestLookupWaitsForAMovingPartition: a lookup for a partition no member
// serves (its owner lost, a move under way) is asked again until its next
// owner answers, within MoveWait; past MoveWait it counts as not seen.
func TestLookupWaitsForAMovingPartition(t *testing.T) {
	const p = partition.ID(77)
	s := jstest.Start(t)
	owner := join(t, s, fpshard.Options{})
	asker := join(t, s, fpshard.Options{MoveWait: 5 * time.Second})
	orig := dedup.Original{URL: "http://m.test/", Date: time.Unix(1_700_000_000, 0).UTC(), File: "m.warc.gz", RecordID: "<urn:uuid:m>", Job: 1}
	sum := sumIn(p, 7)
	// The owner's store holds the fingerprint (restored from a
	// checkpoint, say); it serves the partition 600 ms after the ask.
	owner.commit(t, func(b *store.Batch) error { return owner.shard.AddExact(b, sum, orig) })
	served := time.AfterFunc(600*time.Millisecond, func() {
		if err := owner.shard.Serve(p); err != nil {
			t.Error(err)
		}
	})
	defer served.Stop()
	start := time.Now()
	got, ok, err := asker.shard.Exact(sum)
	if !ok || err != nil || got != orig {
		t.Fatalf("Exact while the partition moved = %+v, %v, %v; want the original once its owner serves it", got, ok, err)
	}
	st := asker.shard.Stats()
	if st.MoveRetries == 0 || st.RemoteMisses != 0 {
		t.Errorf("stats %+v: want move retries and no miss", st)
	}
	t.Logf("answered after %v, %d move retries", time.Since(start).Round(time.Millisecond), st.MoveRetries)

	// Past MoveWait: not seen, counted as a miss.
	quick := join(t, s, fpshard.Options{MoveWait: 300 * time.Millisecond})
	if _, ok, err := quick.shard.Exact(sumIn(partition.ID(78), 1)); ok || err != nil {
		t.Errorf("Exact of a partition no one serves = %v, %v; want not seen", ok, err)
	}
	if st := quick.shard.Stats(); st.RemoteMisses != 1 || st.MoveRetries == 0 {
		t.Errorf("stats %+v: want one miss after retries", st)
	}
}

// TestAddsNeverBlock: adds for another member are handed to the Shard's
// publisher; while its publishing is stalled, completion batches still
// finish (their OnDone runs on the node's one committer), the adds the
// queue has no room for are dropped and counted, and the rest are
// published once publishing resumes.
func TestAddsNeverBlock(t *testing.T) {
	const p = partition.ID(30)
	s := jstest.Start(t)
	owner := join(t, s, fpshard.Options{}, p)
	asker := join(t, s, fpshard.Options{AddQueue: 4, MaxBatch: 1})
	stall := make(chan struct{})
	var stalled sync.Once
	entered := make(chan struct{})
	nc, err := s.Connect()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	fpshard.SetPublish(asker.shard, func(subject string, data []byte) error {
		stalled.Do(func() { close(entered) })
		<-stall
		return nc.Publish(subject, data)
	})
	orig := dedup.Original{URL: "http://a.test/", Date: time.Unix(1_700_000_000, 0).UTC(), File: "a.warc.gz", RecordID: "<urn:uuid:a>", Job: 1}
	const n = 20
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range n {
			b := asker.db.NewBatch()
			if err := asker.shard.AddExact(b, sumIn(p, byte(i)), orig); err != nil {
				t.Error(err)
			}
			if err := asker.db.ApplyGroup([]*store.Batch{b}); err != nil { // as the frontier's committer does
				t.Error(err)
			}
			if i == 0 {
				<-entered // the publisher holds the first, stalled
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		close(stall)
		t.Fatal("completions waited for a stalled publish")
	}
	dropped := asker.shard.Stats().AddsDropped
	// One add in the stalled publish, AddQueue waiting: the rest dropped.
	if want := int64(n - 1 - 4); dropped != want {
		t.Errorf("%d adds dropped while publishing stalled, want %d", dropped, want)
	}
	close(stall)
	waitFor(t, "the queued adds to arrive", func() bool { return owner.shard.Stats().AddsReceived == n-dropped })
	if st := asker.shard.Stats(); st.AddsSent != n-dropped {
		t.Errorf("asker's stats: %+v, want %d sent", st, n-dropped)
	}
}

// TestReleaseWaitsForWrites: Release of a partition stops serving it at
// once (adds from then on go to its next owner) and returns only once the
// local adds to it already under way are in the store, so that the
// checkpoint taken next holds them; a Release whose context ends first
// says so, and a later Release waits again.
func TestReleaseWaitsForWrites(t *testing.T) {
	const p = partition.ID(77)
	s := jstest.Start(t)
	m := join(t, s, fpshard.Options{}, p)
	orig := dedup.Original{URL: "http://a.test/", Date: time.Unix(1_700_000_000, 0).UTC(), File: "a.warc.gz", RecordID: "<urn:uuid:a>", Job: 1}

	held := m.db.NewBatch() // a page's completion batch, not yet applied
	if err := m.shard.AddExact(held, sumIn(p, 1), orig); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	err := m.shard.Release(ctx, p)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Release with an add under way and a context ending: %v, want DeadlineExceeded", err)
	}
	// Not served any more: an add now is for the next owner.
	before := m.shard.Stats().AddsLocal
	later := m.db.NewBatch()
	if err := m.shard.AddExact(later, sumIn(p, 2), orig); err != nil {
		t.Fatal(err)
	}
	later.Close()
	if n := m.shard.Stats().AddsLocal; n != before {
		t.Errorf("an add after Release began was written here (%d local adds, %d before)", n, before)
	}

	released := make(chan error, 1)
	go func() { released <- m.shard.Release(context.Background(), p) }()
	select {
	case err := <-released:
		t.Fatalf("Release returned (%v) before the add under way was applied", err)
	case <-time.After(50 * time.Millisecond):
	}
	if err := m.db.ApplyGroup([]*store.Batch{held}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-released:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Release still waiting after the add was applied")
	}
	var buf bytes.Buffer
	_, st, err := checkpoint.Write(&buf, m.db, p, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if st.Keys != 1 {
		t.Errorf("the checkpoint after Release holds %d keys, want the 1 digest added", st.Keys)
	}

	// A batch discarded lets go of its hold too.
	if err := m.shard.Serve(p); err != nil {
		t.Fatal(err)
	}
	discarded := m.db.NewBatch()
	if err := m.shard.AddNear(discarded, printAt(band(p, 1)|band(p, 2)<<16|band(p, 3)<<32|band(p, 4)<<48), "http://a.test/n", 1); err != nil {
		t.Fatal(err)
	}
	discarded.Close()
	ctx, cancel = context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := m.shard.Release(ctx, p); err != nil {
		t.Errorf("Release after the batch was discarded: %v", err)
	}
}

// printAt is the print of one page with its fingerprint set to fp and no
// weak bits: looked up, it probes fp's four bands as they are, and two
// prints of it resemble each other at 1.
func printAt(fp uint64) simhash.Print {
	p := simhash.HTMLContent([]byte("<title>t</title><p>the words of one page, always the same</p>")).Print(nil)
	p.FP, p.Probe = fp, 0
	return p
}
