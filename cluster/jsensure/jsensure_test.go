package jsensure_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/trawl-crawler/trawl/cluster/jsensure"
	"github.com/trawl-crawler/trawl/internal/testkit/jstest"
)

// A fleet's members ask for the same streams and buckets at once as they
// start. Each member's first request must be answered: with nats.go's
// CreateOrUpdate (update first) every one of them went unanswered until
// its context ended, once per stream.
func TestMembersEnsureAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("a JetStream cluster of three")
	}
	servers := jstest.Cluster(t, 3, 3)
	// Generous: a request is either answered (in milliseconds on an idle
	// machine) or never; the bound only ends a test that would hang.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, 3*len(servers))
	for _, s := range servers {
		js := jstest.JetStream(t, s)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := jsensure.KeyValue(ctx, js, jetstream.KeyValueConfig{Bucket: "kv", Replicas: 3}); err != nil {
				errs <- fmt.Errorf("%s: KeyValue: %w", s.Name(), err)
			}
			if _, err := jsensure.Stream(ctx, js, jetstream.StreamConfig{Name: "S", Subjects: []string{"s.*"}, Replicas: 3}); err != nil {
				errs <- fmt.Errorf("%s: Stream: %w", s.Name(), err)
			}
			if _, err := jsensure.ObjectStore(ctx, js, jetstream.ObjectStoreConfig{Bucket: "obs", Replicas: 3}); err != nil {
				errs <- fmt.Errorf("%s: ObjectStore: %w", s.Name(), err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// What exists afterwards has the configuration asked for: a changed one
// updates what was there, and an unchanged one leaves it as it was.
func TestEnsureUpdatesAChangedConfig(t *testing.T) {
	js := jstest.JetStream(t, jstest.Start(t))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	kv, err := jsensure.KeyValue(ctx, js, jetstream.KeyValueConfig{Bucket: "kv", History: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	for _, hist := range []uint8{1, 5} {
		kv, err = jsensure.KeyValue(ctx, js, jetstream.KeyValueConfig{Bucket: "kv", History: hist})
		if err != nil {
			t.Fatalf("history %d: %v", hist, err)
		}
		st, err := kv.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st.History() != int64(hist) || st.Values() != 1 {
			t.Fatalf("history %d: bucket has history %d and %d values, want %d and 1", hist, st.History(), st.Values(), hist)
		}
	}

	for _, age := range []time.Duration{time.Hour, 2 * time.Hour} {
		s, err := jsensure.Stream(ctx, js, jetstream.StreamConfig{Name: "S", Subjects: []string{"s.*"}, MaxAge: age})
		if err != nil {
			t.Fatalf("max age %v: %v", age, err)
		}
		if got := s.CachedInfo().Config.MaxAge; got != age {
			t.Fatalf("stream's max age %v, want %v", got, age)
		}
	}

	for _, desc := range []string{"one", "two"} {
		obs, err := jsensure.ObjectStore(ctx, js, jetstream.ObjectStoreConfig{Bucket: "obs", Description: desc})
		if err != nil {
			t.Fatalf("description %q: %v", desc, err)
		}
		st, err := obs.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st.Description() != desc {
			t.Fatalf("object store's description %q, want %q", st.Description(), desc)
		}
	}
}
