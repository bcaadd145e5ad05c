package catalog_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/trawl-crawler/trawl/api"
	"github.com/trawl-crawler/trawl/cluster/catalog"
	"github.com/trawl-crawler/trawl/cluster/jsserver"
	"github.com/trawl-crawler/trawl/internal/testkit/jstest"
	"github.com/trawl-crawler/trawl/job"
	"github.com/trawl-crawler/trawl/node"
	"go.uber.org/goleak"
)

// TestMain checks that no goroutine outlives the tests but nats.go's
// resetPendingAcksOnReconnect (see cluster/fleet's TestMain).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/nats-io/nats.go/jetstream.(*jetStream).resetPendingAcksOnReconnect"))
}

// The HTTP API serves a member's catalog.Node.
var _ api.Node = (*catalog.Node)(nil)

var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

// member is one fleet member: a partitioned node that serves no partition
// (so nothing is fetched: its seeds wait in its outbox) and its catalog.
type member struct {
	name string
	nc   *nats.Conn
	js   jetstream.JetStream
	node *node.Node
	cat  *catalog.Catalog
	stop func()
}

// seeds are on a loopback port nothing listens on; nothing fetches them.
var spec = job.Spec{Name: "crawl", Seeds: []string{"http://127.0.0.1:9/"}, MaxDepth: 3}

func named(name string) job.Spec {
	s := spec
	s.Name = name
	return s
}

// join opens a member on srv, runs its catalog (logging to logger; nil:
// nowhere) and waits until it is ready. Cleanup stops it.
func join(t *testing.T, name string, srv *jsserver.Server, logger *slog.Logger) *member {
	t.Helper()
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	m := &member{name: name}
	var err error
	m.node, err = node.Open(node.Options{DataDir: t.TempDir(), AllowNets: loopback, Partitioned: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if m.nc, err = srv.Connect(); err != nil {
		m.node.Close()
		t.Fatal(err)
	}
	m.js, _ = jetstream.New(m.nc)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		m.cat, err = catalog.Open(ctx, m.js, m.node, catalog.Options{Replicas: srv.Replicas(), Logger: logger})
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("%s: %v", name, err)
		}
		time.Sleep(100 * time.Millisecond) // the bucket's Raft group electing
	}
	rctx, rcancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.cat.Run(rctx) }()
	var once sync.Once
	m.stop = func() {
		once.Do(func() {
			rcancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Errorf("%s: Run: %v, want context.Canceled", name, err)
			}
			m.nc.Close()
			m.node.Close()
		})
	}
	t.Cleanup(m.stop)
	select {
	case <-m.cat.Ready():
	case <-ctx.Done():
		t.Fatalf("%s: catalog not ready", name)
	}
	return m
}

// waitFor polls cond until it holds or d passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitJob waits until m's node holds job id in state st, with want's
// spec name and creation time.
func waitJob(t *testing.T, m *member, want *job.Job, st job.State) {
	t.Helper()
	waitFor(t, 15*time.Second, fmt.Sprintf("%s to hold job %d %s", m.name, want.ID, st), func() bool {
		j := m.node.Job(want.ID)
		if j == nil {
			return false
		}
		got, _ := j.State()
		return got == st
	})
	j := m.node.Job(want.ID)
	if j.Spec.Name != want.Spec.Name || !j.Created.Equal(want.Created) || fmt.Sprint(j.Spec.Seeds) != fmt.Sprint(want.Spec.Seeds) {
		t.Errorf("%s's job %d: %q created %v seeds %v; the submitted one: %q created %v seeds %v",
			m.name, j.ID, j.Spec.Name, j.Created, j.Spec.Seeds, want.Spec.Name, want.Created, want.Spec.Seeds)
	}
}

// TestFleetCatalog runs three members on a 3-server cluster: a job
// submitted on one exists on every member under one ID; a state change on
// any member reaches all; submissions on every member at once get
// distinct IDs; a member that joins afterwards learns every job before it
// is ready.
func TestFleetCatalog(t *testing.T) {
	servers := jstest.Cluster(t, 3, 3)
	var ms []*member
	for i, s := range servers {
		ms = append(ms, join(t, fmt.Sprintf("m%d", i+1), s, nil))
	}
	a, b, c := ms[0], ms[1], ms[2]

	first, err := a.cat.Node().Submit(spec)
	if err != nil {
		t.Fatal(err)
	}
	if first.ID != 1 {
		t.Errorf("first fleet job: id %d, want 1", first.ID)
	}
	for _, m := range ms {
		waitJob(t, m, first, job.Running)
	}

	for _, step := range []struct {
		on   *member
		do   func(*catalog.Node, job.ID) error
		want job.State
	}{
		{b, (*catalog.Node).Pause, job.Paused},
		{c, (*catalog.Node).Pause, job.Paused}, // again: nothing changes
		{a, (*catalog.Node).Resume, job.Running},
		{c, (*catalog.Node).Cancel, job.Cancelled},
	} {
		if err := step.do(step.on.cat.Node(), first.ID); err != nil {
			t.Fatalf("%s: to %s: %v", step.on.name, step.want, err)
		}
		for _, m := range ms {
			waitJob(t, m, first, step.want)
		}
	}
	if err := b.cat.Node().Resume(first.ID); !errors.Is(err, job.ErrEnded) {
		t.Errorf("resume of a cancelled job: %v, want job.ErrEnded", err)
	}
	if err := b.cat.Node().Pause(99); !errors.Is(err, node.ErrNoJob) {
		t.Errorf("pause of an unknown job: %v, want node.ErrNoJob", err)
	}

	// Every member submits at once.
	got := make([]*job.Job, len(ms))
	errs := make([]error, len(ms))
	var wg sync.WaitGroup
	for i, m := range ms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], errs[i] = m.cat.Node().Submit(named(fmt.Sprintf("at-once-%d", i)))
		}()
	}
	wg.Wait()
	ids := map[job.ID]string{first.ID: "first"}
	for i, j := range got {
		if errs[i] != nil {
			t.Fatalf("%s: submit: %v", ms[i].name, errs[i])
		}
		if o, dup := ids[j.ID]; dup {
			t.Errorf("%s's job %q got id %d, as did %q", ms[i].name, j.Spec.Name, j.ID, o)
		}
		ids[j.ID] = j.Spec.Name
	}
	for _, j := range got {
		for _, m := range ms {
			waitJob(t, m, j, job.Running)
		}
	}

	late := join(t, "m4", servers[0], nil)
	for _, j := range append(got, first) {
		want := job.Running
		if j == first {
			want = job.Cancelled
		}
		if lj := late.node.Job(j.ID); lj == nil {
			t.Errorf("the late member, ready, lacks job %d", j.ID)
		} else if st, _ := lj.State(); st != want {
			t.Errorf("the late member's job %d is %s, want %s", j.ID, st, want)
		}
		waitJob(t, late, j, want)
	}
	next, err := late.cat.Node().Submit(named("late"))
	if err != nil {
		t.Fatal(err)
	}
	if next.ID != job.ID(len(ids)+1) {
		t.Errorf("the late member's job got id %d, want %d", next.ID, len(ids)+1)
	}
	for _, m := range append(ms, late) {
		waitJob(t, m, next, job.Running)
	}
}
