package ckptstore

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/trawl-crawler/trawl/internal/store/partition"
	"github.com/trawl-crawler/trawl/internal/testkit/clustertest"
)

// leaderlessReader hands out data, and on its first Read deletes the
// bucket's stream and has it created again after a pause: the first chunk
// is published to a stream that is not there and answered "no
// responders", as a stream between leaders answers.
type leaderlessReader struct {
	t       *testing.T
	ctx     context.Context
	js      jetstream.JetStream
	r       io.Reader
	started bool
	back    chan error
}

func (l *leaderlessReader) Read(b []byte) (int, error) {
	if !l.started {
		l.started = true
		if err := l.js.DeleteStream(l.ctx, "OBJ_"+Bucket); err != nil {
			l.t.Fatalf("delete the bucket's stream: %v", err)
		}
		l.back = make(chan error, 1)
		go func() {
			time.Sleep(600 * time.Millisecond)
			_, err := l.js.CreateObjectStore(l.ctx, jetstream.ObjectStoreConfig{Bucket: Bucket, Storage: jetstream.FileStorage})
			l.back <- err
		}()
		return copy(b, "a 32-byte header, as Save's is.."), nil
	}
	return l.r.Read(b)
}

// TestPutKeepsChunkOrderWithoutALeader: an object whose first chunk met
// a stream without a leader is stored whole, its chunks in order (a
// checkpoint saved at a fleet's start was once read from its second chunk
// on, for good: nats.go's Put republished the chunk late, from a reused
// buffer).
func TestPutKeepsChunkOrderWithoutALeader(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	js := standalone(t, ctx)
	cs, err := Open(ctx, js, Options{})
	if err != nil {
		t.Fatal(err)
	}
	body := make([]byte, 3*chunkSize+chunkSize/2)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range body {
		body[i] = byte(rng.Uint32())
	}
	lr := &leaderlessReader{t: t, ctx: ctx, js: js, r: bytes.NewReader(body)}
	want := append([]byte("a 32-byte header, as Save's is.."), body...)
	finished := false
	oi, err := cs.put(ctx, jetstream.ObjectMeta{Name: "p-7", Metadata: map[string]string{"k": "v"}}, lr,
		func() error { finished = true; return nil })
	if lr.back != nil {
		if err := <-lr.back; err != nil {
			t.Fatalf("create the bucket's stream again: %v", err)
		}
	}
	if err != nil {
		t.Fatalf("put: %v", err)
	}
	if !finished {
		t.Error("put did not call finish")
	}
	if oi.Chunks != 4 || oi.Size != uint64(len(want)) {
		t.Errorf("put: %d chunks, %d bytes; want 4, %d", oi.Chunks, oi.Size, len(want))
	}
	got, err := cs.obs.GetBytes(ctx, "p-7") // the library checks the digest
	if err != nil {
		t.Fatalf("read back: %v", err)
	}
	if !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		t.Fatalf("read back %d bytes, first difference at %d; want the %d put", len(got), i, len(want))
	}
	info, err := cs.obs.GetInfo(ctx, "p-7")
	if err != nil || info.Metadata["k"] != "v" {
		t.Fatalf("info: %+v, %v; want the metadata put", info, err)
	}
}

// TestPutReplaces: a second put of a name replaces the object and removes
// the first version's chunks; a put whose finish fails leaves the
// previous version as it was, and no chunks of its own.
func TestPutReplaces(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	js := standalone(t, ctx)
	cs, err := Open(ctx, js, Options{})
	if err != nil {
		t.Fatal(err)
	}
	first := bytes.Repeat([]byte("one "), chunkSize/2)
	second := bytes.Repeat([]byte("two "), chunkSize/4)
	if _, err := cs.put(ctx, jetstream.ObjectMeta{Name: "p-1"}, bytes.NewReader(first), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.put(ctx, jetstream.ObjectMeta{Name: "p-1"}, bytes.NewReader(second), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.put(ctx, jetstream.ObjectMeta{Name: "p-1"}, bytes.NewReader(first),
		func() error { return io.ErrClosedPipe }); err == nil {
		t.Fatal("put with a failing finish: no error")
	}
	got, err := cs.obs.GetBytes(ctx, "p-1")
	if err != nil || !bytes.Equal(got, second) {
		t.Fatalf("read back %d bytes (%v), want the second version's %d", len(got), err, len(second))
	}
	si, err := cs.stream.Info(ctx, jetstream.WithSubjectFilter("$O."+Bucket+".C.>"))
	if err != nil {
		t.Fatal(err)
	}
	var chunks uint64
	for _, n := range si.State.Subjects {
		chunks += n
	}
	if want := uint64(len(second)+chunkSize-1) / chunkSize; chunks != want {
		t.Errorf("the bucket holds %d chunks, want the second version's %d", chunks, want)
	}
}

// TestRestoreMissingChunks: a checkpoint whose chunks are not all in the
// bucket (its info published, its chunks purged) is unreadable at once,
// not after a read waits out its deadline for chunks that will not come.
func TestRestoreMissingChunks(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	js := standalone(t, ctx)
	cs, err := Open(ctx, js, Options{})
	if err != nil {
		t.Fatal(err)
	}
	cs.retryWait = 10 * time.Millisecond // the retries are not what is tested
	const p = partition.ID(9)
	src := openDB(t)
	fill(t, src, clustertest.HostsIn(p, 20), "v", 3)
	if _, err := cs.Save(ctx, p, src, "n1"); err != nil {
		t.Fatal(err)
	}
	oi, err := cs.obs.GetInfo(ctx, Name(p))
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.stream.Purge(ctx, jetstream.WithPurgeSubject("$O."+Bucket+".C."+oi.NUID)); err != nil {
		t.Fatal(err)
	}
	dst := openDB(t)
	start := time.Now()
	_, found, err := cs.Restore(ctx, p, dst)
	if !found || !errors.Is(err, ErrUnreadable) || !strings.Contains(err.Error(), "chunks") {
		t.Errorf("Restore of a checkpoint without its chunks: found %v, %v; want ErrUnreadable naming the chunks", found, err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("Restore took %v: it waited for the chunks", took)
	}
}
