package route

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/internal/testkit/clustertest"
	"github.com/trawl-crawler/trawl/internal/testkit/jstest"
	"github.com/trawl-crawler/trawl/internal/testkit/storetest"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/trawl-crawler/trawl/cluster/jsserver"
	"github.com/trawl-crawler/trawl/frontier"
	"github.com/trawl-crawler/trawl/internal/outbox"
	"github.com/trawl-crawler/trawl/internal/store"
	"github.com/trawl-crawler/trawl/internal/store/partition"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestCodecRoundTrip(t *testing.T) {
	items := []frontier.Item{
		{URL: "http://a.test/", Host: "a.test"},
		{URL: "https://b.test/x?y#z", Host: "b.test", Depth: 3, Level: 2, Redirects: 1, Attempts: 2, ShapeRun: 9, Via: "http://a.test/", Job: 1<<32 - 1},
		{URL: "https://b.test/i.png", Host: "b.test", Depth: 3, Via: "https://b.test/x?y#z", Requisite: 1},
	}
	got, err := DecodeMessage(AppendMessage(nil, items))
	if err != nil || !reflect.DeepEqual(got, items) {
		t.Fatalf("DecodeMessage(AppendMessage(%v)) = %v, %v", items, got, err)
	}
	// A version 1 message (a member of the version before: items end at
	// Job) reads as pages.
	v1 := []byte{1, 2}
	for _, it := range items[:2] {
		b := outbox.AppendItem(nil, it)
		v1 = append(v1, b[:len(b)-1]...)
	}
	if got, err := DecodeMessage(v1); err != nil || !reflect.DeepEqual(got, items[:2]) {
		t.Errorf("DecodeMessage(version 1) = %v, %v; want %v", got, err, items[:2])
	}
	// Pages alone go as version 1, which a member of the version before
	// reads; a requisite among them makes it version 2.
	if m := AppendMessage(nil, items[:2]); m[0] != 1 || string(m) != string(v1) {
		t.Errorf("pages alone: message %x, want the version 1 form %x", m, v1)
	}
	if m := AppendMessage(nil, items); m[0] != version {
		t.Errorf("with a requisite: version %d, want %d", m[0], version)
	}
	if got, err := DecodeMessage(AppendMessage(nil, nil)); err != nil || len(got) != 0 {
		t.Errorf("empty message: %v, %v", got, err)
	}
	for _, bad := range []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"version", []byte{3, 0}},
		{"count past MaxItems", []byte{1, 0x91, 0x4e}},
		{"truncated", AppendMessage(nil, items)[:20]},
		{"trailing", append(AppendMessage(nil, items), 0)},
		{"no URL", AppendMessage(nil, []frontier.Item{{Host: "a.test"}})},
	} {
		if _, err := DecodeMessage(bad.b); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: DecodeMessage error %v, want ErrMalformed", bad.name, err)
		}
	}
}

func FuzzDecodeMessage(f *testing.F) {
	f.Add(AppendMessage(nil, []frontier.Item{{URL: "http://a.test/", Host: "a.test", Via: "v", Job: 3}}))
	f.Add([]byte{1, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		items, err := DecodeMessage(b)
		if err != nil {
			return
		}
		// What decodes encodes back to the same bytes (the form is
		// unique: version 1 when no item is a requisite).
		again := AppendMessage(nil, items)
		if string(again) != string(b) && !(b[0] == version && again[0] == 1) {
			t.Fatalf("DecodeMessage(%q) = %v, which encodes as %q", b, items, again)
		}
		if back, err := DecodeMessage(again); err != nil || !reflect.DeepEqual(back, items) {
			t.Fatalf("DecodeMessage(%q) = %v; encoded again and decoded: %v, %v", b, items, back, err)
		}
	})
}

type fixture struct {
	db  *store.DB
	js  jetstream.JetStream
	srv *jsserver.Server
}

func setup(t *testing.T) fixture {
	t.Helper()
	db := storetest.Open(t)
	srv := jstest.Start(t, func(o *jsserver.Options) { o.Name = "r" })
	js := jstest.JetStream(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := EnsureStream(ctx, js, StreamOptions{}); err != nil {
		t.Fatal(err)
	}
	return fixture{db, js, srv}
}

// add writes items into the outbox in one committed batch.
func add(t *testing.T, db *store.DB, o *outbox.Outbox, items []frontier.Item) {
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

// follow collects partition p's URLs after seq until want have come or the
// wait ends; it returns them and the last sequence folded.
func follow(t *testing.T, js jetstream.JetStream, p partition.ID, after uint64, want int) ([]frontier.Item, []uint64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var got []frontier.Item
	var seqs []uint64
	err := Follow(ctx, js, p, after, FollowOptions{}, func(seq uint64, items []frontier.Item) error {
		got = append(got, items...)
		seqs = append(seqs, seq)
		if len(got) >= want {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Follow(%d after %d): %v with %d of %d URLs", p, after, err, len(got), want)
	}
	return got, seqs
}

// TestOutboxToOwner: URLs for two partitions go through the outbox, the
// pump and the stream to each partition's follower, in order, once; a
// follower resuming after a sequence gets only what came after it.
func TestOutboxToOwner(t *testing.T) {
	f := setup(t)
	o, err := outbox.Open(f.db)
	if err != nil {
		t.Fatal(err)
	}
	const p1, p2 = partition.ID(11), partition.ID(200)
	a, b := itemsFor(p1, 600, "a"), itemsFor(p2, 40, "b")
	add(t, f.db, o, append(append([]frontier.Item(nil), a[:300]...), b...))
	add(t, f.db, o, a[300:])
	pump := NewPump(o, f.js, PumpOptions{Node: "n1", MaxBatch: 250})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if n, err := pump.Flush(ctx); err != nil || n != 640 {
		t.Fatalf("Flush = %d, %v, want 640", n, err)
	}
	if n, err := o.Len(); err != nil || n != 0 {
		t.Fatalf("outbox holds %d (%v) after the flush", n, err)
	}
	got, seqs := follow(t, f.js, p1, 0, 600)
	if !reflect.DeepEqual(got, a) {
		t.Fatalf("partition %d received %d URLs, not the 600 sent in order", p1, len(got))
	}
	if len(seqs) != 3 {
		t.Errorf("600 URLs in %d messages, want 3 of at most 250", len(seqs))
	}
	if got, _ := follow(t, f.js, p2, 0, 40); !reflect.DeepEqual(got, b) {
		t.Fatalf("partition %d received %v", p2, got)
	}
	// Resume after the first message of p1: the rest, nothing before.
	if got, _ := follow(t, f.js, p1, seqs[0], 350); !reflect.DeepEqual(got, a[250:]) {
		t.Fatalf("resumed after %d: %d URLs, want the last 350", seqs[0], len(got))
	}
}

// TestRepublishAfterLostDeletes: a crash after JetStream acknowledged but
// before the outbox deletes were durable publishes the same entries again;
// the message IDs repeat, and the stream keeps one copy.
func TestRepublishAfterLostDeletes(t *testing.T) {
	f := setup(t)
	o, err := outbox.Open(f.db)
	if err != nil {
		t.Fatal(err)
	}
	const p = partition.ID(5)
	items := itemsFor(p, 30, "c")
	// Write the entries, remember their keys and values, flush, then put
	// them back as a crash that lost the deletes would leave them.
	add(t, f.db, o, items)
	saved := map[string][]byte{}
	it, err := f.db.NewIter(store.KindPrefix(store.KindOutbox))
	if err != nil {
		t.Fatal(err)
	}
	for ok := it.First(); ok; ok = it.Next() {
		saved[string(it.Key())] = append([]byte(nil), it.Value()...)
	}
	it.Close()
	pump := NewPump(o, f.js, PumpOptions{Node: "n1"})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := pump.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	bt := f.db.NewBatch()
	for k, v := range saved {
		bt.Set([]byte(k), v)
	}
	if err := f.db.Commit(bt); err != nil {
		t.Fatal(err)
	}
	// A restarted node reopens its outbox: numbering continues after it.
	o2, err := outbox.Open(f.db)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := NewPump(o2, f.js, PumpOptions{Node: "n1"}).Flush(ctx); err != nil || n != 30 {
		t.Fatalf("second Flush = %d, %v", n, err)
	}
	s, _ := f.js.Stream(ctx, Stream)
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 1 {
		t.Errorf("stream holds %d messages after a republish, want 1", info.State.Msgs)
	}
	if got, _ := follow(t, f.js, p, 0, 30); !reflect.DeepEqual(got, items) {
		t.Errorf("follower got %d URLs, want the 30 once", len(got))
	}
}

// TestFlushKeepsWhatWasNotAcknowledged: a flush that JetStream does not
// acknowledge (here the stream is gone) fails and deletes nothing; the
// next, once the stream is back, publishes every entry, in order.
func TestFlushKeepsWhatWasNotAcknowledged(t *testing.T) {
	f := setup(t)
	o, err := outbox.Open(f.db)
	if err != nil {
		t.Fatal(err)
	}
	const p1, p2 = partition.ID(3), partition.ID(140)
	a, b := itemsFor(p1, 120, "a"), itemsFor(p2, 30, "b")
	add(t, f.db, o, append(append([]frontier.Item(nil), a...), b...))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := f.js.DeleteStream(ctx, Stream); err != nil {
		t.Fatal(err)
	}
	pump := NewPump(o, f.js, PumpOptions{Node: "n1", MaxBatch: 50})
	if n, err := pump.Flush(ctx); err == nil || n != 0 {
		t.Fatalf("Flush with no stream = %d, %v; want 0 and an error", n, err)
	}
	if n, err := o.Len(); err != nil || n != 150 {
		t.Fatalf("outbox holds %d (%v) after a failed flush, want 150", n, err)
	}
	if _, err := EnsureStream(ctx, f.js, StreamOptions{}); err != nil {
		t.Fatal(err)
	}
	if n, err := pump.Flush(ctx); err != nil || n != 150 {
		t.Fatalf("Flush = %d, %v, want 150", n, err)
	}
	if got, _ := follow(t, f.js, p1, 0, 120); !reflect.DeepEqual(got, a) {
		t.Fatalf("partition %d received %d URLs, not the 120 sent in order", p1, len(got))
	}
	if got, _ := follow(t, f.js, p2, 0, 30); !reflect.DeepEqual(got, b) {
		t.Fatalf("partition %d received %v", p2, got)
	}
}
