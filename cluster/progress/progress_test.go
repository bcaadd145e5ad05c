package progress

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/trawl-crawler/trawl/cluster/checkpoint"
	"github.com/trawl-crawler/trawl/internal/outbox"
	"github.com/trawl-crawler/trawl/internal/store"
	"github.com/trawl-crawler/trawl/internal/store/partition"
	"github.com/trawl-crawler/trawl/internal/testkit/jstest"
	"github.com/trawl-crawler/trawl/internal/testkit/storetest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// hostOf returns a host of partition p.
func hostOf(t *testing.T, p partition.ID) string {
	t.Helper()
	for i := range 100000 {
		h := fmt.Sprintf("h%d.test", i)
		if partition.Of(h) == p {
			return h
		}
	}
	t.Fatalf("no host of partition %d", p)
	return ""
}

// member is one store with its log, as a fleet member holds them.
type member struct {
	db  *store.DB
	log *Log
}

func newMember(t *testing.T, js jetstream.JetStream) *member {
	t.Helper()
	return newMemberWith(t, js, Options{})
}

func newMemberWith(t *testing.T, js jetstream.JetStream, o Options) *member {
	t.Helper()
	l, err := Open(context.Background(), js, o)
	if err != nil {
		t.Fatal(err)
	}
	db := storetest.Open(t)
	db.SetTap(l)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); l.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return &member{db: db, log: l}
}

// write commits one batch: sets key=value for each pair, deletes each
// key whose value is "".
func (m *member) write(t *testing.T, kv ...string) {
	t.Helper()
	b := m.db.NewBatch()
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == "" {
			b.Delete([]byte(kv[i]))
		} else {
			b.Set([]byte(kv[i]), []byte(kv[i+1]))
		}
	}
	if err := m.db.Commit(b); err != nil {
		t.Fatal(err)
	}
}

func (m *member) flush(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := m.log.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}

func (m *member) resume(t *testing.T, p partition.ID) Resumed {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	r, err := m.log.Resume(ctx, m.db, p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// contents returns partition p's keys and values in db but its progress
// state, as "key=value" lines.
func contents(t *testing.T, db *store.DB, p partition.ID) string {
	t.Helper()
	it, err := db.NewRangeIter(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var sb strings.Builder
	for ok := it.First(); ok; ok = it.Next() {
		if q, held := checkpoint.Holder(it.Key()); !held || q != p || bytes.Equal(it.Key(), store.ProgressKey(p)) {
			continue
		}
		fmt.Fprintf(&sb, "%q=%q\n", it.Key(), it.Value())
	}
	return sb.String()
}

// setOp is a change's body setting key to v.
func setOp(key []byte, v string) []byte {
	ops := append([]byte{opSet}, binary.AppendUvarint(nil, uint64(len(key)))...)
	ops = append(ops, key...)
	return append(binary.AppendUvarint(ops, uint64(len(v))), v...)
}

// TestReplay: a member's changes of a partition, replayed into an empty
// store by a taker, give the same partition; changes of partitions not
// resumed, and keys no checkpoint carries, are not replicated.
func TestReplay(t *testing.T) {
	js := jstest.JetStream(t, jstest.Start(t))
	a := newMember(t, js)
	const p, q = partition.ID(7), partition.ID(8)
	hp, hq := hostOf(t, p), hostOf(t, q)
	if r := a.resume(t, p); r != (Resumed{To: State{Epoch: r.To.Epoch}}) || r.To.Epoch == 0 {
		t.Fatalf("first resume of an empty partition: %+v", r)
	}
	var digest [32]byte
	lo, _ := partition.FingerprintRange(p)
	digest[0], digest[1] = byte(lo>>8), byte(lo)
	for i := range 20 {
		a.write(t,
			string(store.URLKey(hp, fmt.Sprintf("http://%s/%d", hp, i))), fmt.Sprint("fetched ", i),
			string(store.URLKey(hq, fmt.Sprintf("http://%s/%d", hq, i))), "not replicated",
			string(store.MetaKey("other")), "not a partition's",
		)
	}
	a.write(t, string(store.URLKey(hp, fmt.Sprintf("http://%s/%d", hp, 3))), "", // a delete
		string(store.HostKey(hp)), "host state",
		string(store.DigestKey(digest)), "a fingerprint of p",
		string(outbox.RouteSeqKey(p)), "\x00\x00\x00\x00\x00\x00\x00\x09")
	a.flush(t)

	b := newMember(t, js)
	r := b.resume(t, p)
	if r.Replayed != 21 || r.Ignored != 0 || r.To.N != 21 {
		t.Errorf("replay: %+v, want 21 changes replayed", r)
	}
	if got, want := contents(t, b.db, p), contents(t, a.db, p); got != want || !strings.Contains(got, "a fingerprint") || !strings.Contains(got, "route-seq") {
		t.Errorf("replayed partition:\n%s\nwant:\n%s", got, want)
	}
	if got := contents(t, b.db, q); got != "" {
		t.Errorf("partition %d replicated though not resumed:\n%s", q, got)
	}
	if st, err := Load(b.db, p); err != nil || st != r.To {
		t.Errorf("state in the store %+v, %v; want %+v", st, err, r.To)
	}
}

// TestFencing: changes an owner publishes after a taker's marker are not
// part of the partition's history: the taker did not replay them, and no
// later replay applies them; the taker's own changes follow its replay.
func TestFencing(t *testing.T) {
	js := jstest.JetStream(t, jstest.Start(t))
	const p = partition.ID(3)
	h := hostOf(t, p)
	key := func(i int) string { return string(store.URLKey(h, fmt.Sprintf("http://%s/%d", h, i))) }
	a := newMember(t, js)
	a.resume(t, p)
	for i := range 3 {
		a.write(t, key(i), "by a")
	}
	a.flush(t)
	b := newMember(t, js)
	if r := b.resume(t, p); r.Replayed != 3 {
		t.Fatalf("b replayed %+v, want 3", r)
	}
	a.write(t, key(10), "by a, fenced") // a does not know yet
	a.flush(t)
	b.write(t, key(20), "by b")
	b.flush(t)

	c := newMember(t, js)
	r := c.resume(t, p)
	if r.Replayed != 4 || r.Ignored != 1 {
		t.Errorf("c: %+v, want 4 replayed (a's 3, b's 1) and a's fenced one ignored", r)
	}
	if got, want := contents(t, c.db, p), contents(t, b.db, p); got != want {
		t.Errorf("c holds:\n%s\nb holds:\n%s", got, want)
	}
}

// TestGapStopsReplay: a change missing from the log stops a replay there
// (never applied out of order); a change delivered late but before the
// next marker is applied in its place.
func TestGapStopsReplay(t *testing.T) {
	js := jstest.JetStream(t, jstest.Start(t))
	const p = partition.ID(5)
	h := hostOf(t, p)
	a := newMember(t, js)
	r := a.resume(t, p)
	ctx := context.Background()
	publish := func(n uint64, v string) {
		t.Helper()
		ops := setOp(store.URLKey(h, fmt.Sprintf("http://%s/%d", h, n)), v)
		if _, err := js.PublishMsg(ctx, change{p: p, st: State{r.To.Epoch, n}, ops: ops}.msg()); err != nil {
			t.Fatal(err)
		}
	}
	publish(2, "two") // before 1: a retry that overtook
	publish(1, "one")
	publish(4, "four") // 3 lost
	publish(5, "five")

	b := newMember(t, js)
	got := b.resume(t, p)
	if got.Replayed != 2 || got.To.N != 2 {
		t.Errorf("replay: %+v, want changes 1 and 2 applied, stopped at the gap", got)
	}
	if c := contents(t, b.db, p); !strings.Contains(c, "one") || !strings.Contains(c, "two") || strings.Contains(c, "four") {
		t.Errorf("replayed:\n%s", c)
	}
}

// TestUnreadableChangeIsAGap: a change that does not decode (or writes a
// key of another partition) stops the replay of its epoch before it,
// applying none of its writes, and the resume succeeds (a taker must not
// fail on it until it ages out); the next owner's epoch applies again.
func TestUnreadableChangeIsAGap(t *testing.T) {
	js := jstest.JetStream(t, jstest.Start(t))
	const p = partition.ID(6)
	h, other := hostOf(t, p), hostOf(t, 60)
	a := newMember(t, js)
	r := a.resume(t, p)
	ctx := context.Background()
	publish := func(n uint64, ops []byte) {
		t.Helper()
		if _, err := js.PublishMsg(ctx, change{p: p, st: State{r.To.Epoch, n}, ops: ops}.msg()); err != nil {
			t.Fatal(err)
		}
	}
	set := func(host, v string) []byte { return setOp(store.URLKey(host, "http://"+host+"/"+v), v) }
	publish(1, set(h, "one"))
	publish(2, append(set(h, "two-a"), set(other, "two-b")...)) // a key of partition 60
	publish(3, set(h, "three"))
	publish(4, set(h, "four")[:5]) // truncated, after the gap anyway

	b := newMember(t, js)
	got := b.resume(t, p)
	if got.Replayed != 1 || got.To.N != 1 || got.Ignored != 3 {
		t.Errorf("replay: %+v, want change 1 applied, the rest ignored", got)
	}
	if c := contents(t, b.db, p); !strings.Contains(c, "one") || strings.Contains(c, "two") || strings.Contains(c, "three") {
		t.Errorf("replayed:\n%s", c)
	}
	// b's own epoch goes on from 1, and a later taker applies it.
	b.write(t, string(store.URLKey(h, "http://"+h+"/by-b")), "b")
	b.flush(t)
	c := newMember(t, js)
	if got := c.resume(t, p); got.To.N != 2 || got.Replayed != 2 {
		t.Errorf("replay after b's marker: %+v, want change 1 and b's change 2", got)
	}
	if got, want := contents(t, c.db, p), contents(t, b.db, p); got != want {
		t.Errorf("c holds:\n%s\nb holds:\n%s", got, want)
	}
}

// TestHoleStopsReplay: a batch with a write the log cannot carry (a range
// deletion of a served partition's keys) takes its number and publishes
// nothing: a taker's replay stops before it, instead of applying the
// changes after it over a deletion that never came; the gap is reported.
func TestHoleStopsReplay(t *testing.T) {
	js := jstest.JetStream(t, jstest.Start(t))
	const p = partition.ID(11)
	h := hostOf(t, p)
	key := func(i int) []byte { return store.URLKey(h, fmt.Sprintf("http://%s/%d", h, i)) }
	gaps := make(chan partition.ID, 4)
	a := newMemberWith(t, js, Options{OnGap: func(q partition.ID) { gaps <- q }})
	db := a.db
	a.resume(t, p)
	a.write(t, string(key(1)), "one", string(key(2)), "two")
	b := db.NewBatch()
	if err := b.DeleteRange(key(0), key(9)); err != nil {
		t.Fatal(err)
	}
	if err := db.Commit(b); err != nil {
		t.Fatal(err)
	}
	a.write(t, string(key(3)), "three")
	a.flush(t)
	select {
	case q := <-gaps:
		if q != p {
			t.Errorf("gap reported for %d, want %d", q, p)
		}
	default:
		t.Error("no gap reported")
	}
	if st, _ := Load(db, p); st.N != 3 {
		t.Errorf("state %+v after 3 changes, the second a hole", st)
	}
	taker := newMember(t, js)
	got := taker.resume(t, p)
	if got.Replayed != 1 || got.To.N != 1 {
		t.Errorf("replay: %+v, want change 1 only", got)
	}
}

// TestSavedPurges: a checkpoint saved lets the changes it holds go; a
// taker that restores the checkpoint replays only those after it.
func TestSavedPurges(t *testing.T) {
	js := jstest.JetStream(t, jstest.Start(t))
	const p = partition.ID(9)
	h := hostOf(t, p)
	a := newMember(t, js)
	a.resume(t, p)
	for i := range 5 {
		a.write(t, string(store.URLKey(h, fmt.Sprintf("http://%s/%d", h, i))), "x")
	}
	a.flush(t)
	st, err := Load(a.db, p)
	if err != nil || st.N != 5 {
		t.Fatalf("state %+v, %v", st, err)
	}
	var ckpt bytes.Buffer
	if _, _, err := checkpoint.Write(&ckpt, a.db, p, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := a.log.Saved(context.Background(), p, st); err != nil {
		t.Fatal(err)
	}
	a.write(t, string(store.URLKey(h, fmt.Sprintf("http://%s/%d", h, 99))), "after the checkpoint")
	a.flush(t)
	s, err := js.Stream(context.Background(), Stream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(context.Background(), jetstream.WithSubjectFilter(Subject(p)))
	if err != nil {
		t.Fatal(err)
	}
	if n := info.State.Subjects[Subject(p)]; n != 1 {
		t.Errorf("%d messages of partition %d in the stream after the purge and one change, want 1", n, p)
	}

	b := newMember(t, js)
	if _, _, err := checkpoint.Read(&ckpt, b.db, p); err != nil {
		t.Fatal(err)
	}
	r := b.resume(t, p)
	if r.From != st || r.Replayed != 1 || r.To.N != 6 {
		t.Errorf("resume after the checkpoint: %+v, want from %+v, 1 replayed", r, st)
	}
	if got, want := contents(t, b.db, p), contents(t, a.db, p); got != want {
		t.Errorf("b holds:\n%s\nwant:\n%s", got, want)
	}
}
