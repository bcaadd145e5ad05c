package catalog_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/trawl-crawler/trawl/cluster/catalog"
	"github.com/trawl-crawler/trawl/internal/testkit/jstest"
	"github.com/trawl-crawler/trawl/job"
)

// TestSubmitRefusesBadSpec: a spec that fails job.Spec.Validate comes back
// with its field errors, and nothing is added to the catalog.
func TestSubmitRefusesBadSpec(t *testing.T) {
	m := join(t, "m1", jstest.Start(t), nil)
	for _, c := range []struct {
		name  string
		spec  job.Spec
		field string
	}{
		{"no seeds", job.Spec{Name: "x"}, "Seeds"},
		{"ftp seed", job.Spec{Seeds: []string{"ftp://127.0.0.1/"}}, "Seeds"},
		{"negative depth", job.Spec{Seeds: spec.Seeds, MaxDepth: -1}, "MaxDepth"},
		{"priority 2", job.Spec{Seeds: spec.Seeds, Priority: 2}, "Priority"},
	} {
		t.Run(c.name, func(t *testing.T) {
			j, err := m.cat.Node().Submit(c.spec)
			var fe *job.FieldError
			if !errors.As(err, &fe) || fe.Field != c.field {
				t.Fatalf("Submit: %v, %v; want a *job.FieldError for %s", j, err, c.field)
			}
		})
	}
	kv, err := m.js.KeyValue(context.Background(), catalog.Bucket)
	if err != nil {
		t.Fatal(err)
	}
	if keys, err := kv.Keys(context.Background()); !errors.Is(err, jetstream.ErrNoKeysFound) {
		t.Errorf("the catalog holds %v (%v) after refused specs, want nothing", keys, err)
	}
	if n := len(m.node.Jobs()); n != 0 {
		t.Errorf("the node holds %d jobs after refused specs", n)
	}
}

// skipped is a slog.Handler that keeps the keys of the catalog's skipped
// records logged at Warn.
type skipped struct {
	mu   sync.Mutex
	keys []string
}

func (s *skipped) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }
func (s *skipped) WithAttrs([]slog.Attr) slog.Handler           { return s }
func (s *skipped) WithGroup(string) slog.Handler                { return s }
func (s *skipped) Handle(_ context.Context, r slog.Record) error {
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "key" {
			s.mu.Lock()
			s.keys = append(s.keys, a.Value.String())
			s.mu.Unlock()
		}
		return true
	})
	return nil
}

func (s *skipped) list() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := slices.Clone(s.keys)
	slices.Sort(out)
	return out
}

func record(id job.ID, sp job.Spec, st job.State) []byte {
	return job.Record{ID: id, Spec: sp, Created: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC), State: st}.Encode()
}

// TestCorruptRecordsSkipped: records that cannot be read or applied are
// logged with their keys and skipped, once each; the others are applied,
// before the catalog is ready and after, and a submission's ID is above
// every key seen, readable or not.
func TestCorruptRecordsSkipped(t *testing.T) {
	srv := jstest.Start(t)
	nc, err := srv.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: catalog.Bucket, History: 1})
	if err != nil {
		t.Fatal(err)
	}
	put := func(k string, v []byte) {
		t.Helper()
		if _, err := kv.Put(ctx, k, v); err != nil {
			t.Fatal(err)
		}
	}
	put("job.1", record(1, named("one"), job.Running))
	put("job.2", []byte("not json"))
	put("job.3", record(4, named("three"), job.Running)) // another job's record
	put("job.4", record(4, job.Spec{Name: "no seeds"}, job.Running))
	put("job.x", record(9, named("x"), job.Running))
	put("job.05", record(5, named("five"), job.Running))
	put("job.6", record(6, named("six"), job.Paused))

	log := &skipped{}
	m := join(t, "m1", srv, slog.New(log))
	want := []string{"job.05", "job.2", "job.3", "job.4", "job.x"}
	if got := log.list(); !slices.Equal(got, want) {
		t.Errorf("skipped keys logged: %v, want %v", got, want)
	}
	for id, st := range map[job.ID]job.State{1: job.Running, 6: job.Paused} {
		if j := m.node.Job(id); j == nil {
			t.Errorf("job %d not applied", id)
		} else if got, _ := j.State(); got != st {
			t.Errorf("job %d: %s, want %s", id, got, st)
		}
	}
	if n := len(m.node.Jobs()); n != 2 {
		t.Errorf("the node holds %d jobs, want 2", n)
	}

	// The watcher goes on after bad records.
	put("job.7", []byte("{}"))
	put("job.8", record(8, named("eight"), job.Running))
	waitFor(t, 10*time.Second, "job 8 applied", func() bool { return m.node.Job(8) != nil })
	waitFor(t, 10*time.Second, "job.7 logged", func() bool { return slices.Contains(log.list(), "job.7") })
	j, err := m.cat.Node().Submit(named("next"))
	if err != nil {
		t.Fatal(err)
	}
	if j.ID != 9 {
		t.Errorf("submitted after keys up to job.8: id %d, want 9", j.ID)
	}
}

// TestSubmitByName: a name whose job has not been cancelled returns that
// job as it is; once it is cancelled, the name gets a new job.
func TestSubmitByName(t *testing.T) {
	m := join(t, "m1", jstest.Start(t), nil)
	n := m.cat.Node()
	a, err := n.Submit(named("a"))
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Pause(a.ID); err != nil {
		t.Fatal(err)
	}
	other := named("a")
	other.MaxDepth = 9
	again, err := n.Submit(other)
	if err != nil {
		t.Fatal(err)
	}
	if again != a {
		t.Fatalf("a second submission of name a: job %d, want job %d", again.ID, a.ID)
	}
	if st, _ := again.State(); st != job.Paused || again.Spec.MaxDepth != spec.MaxDepth {
		t.Errorf("job a submitted again: %s, max depth %d; want paused, %d (as it was)", st, again.Spec.MaxDepth, spec.MaxDepth)
	}
	if err := n.Cancel(a.ID); err != nil {
		t.Fatal(err)
	}
	fresh, err := n.Submit(other)
	if err != nil {
		t.Fatal(err)
	}
	if fresh.ID == a.ID || fresh.Spec.MaxDepth != 9 {
		t.Errorf("name a after its job was cancelled: job %d, max depth %d; want a new job with max depth 9", fresh.ID, fresh.Spec.MaxDepth)
	}
}

// TestLocalJobs: a job submitted to the node itself, not through the
// catalog, keeps its ID out of the catalog's way and is changed on the
// node alone.
func TestLocalJobs(t *testing.T) {
	m := join(t, "m1", jstest.Start(t), nil)
	local, err := m.node.Submit(named("local"))
	if err != nil {
		t.Fatal(err)
	}
	fleet, err := m.cat.Node().Submit(named("fleet"))
	if err != nil {
		t.Fatal(err)
	}
	if fleet.ID <= local.ID {
		t.Errorf("fleet job id %d, not above the local job's %d", fleet.ID, local.ID)
	}
	if err := m.cat.Node().Pause(local.ID); err != nil {
		t.Fatal(err)
	}
	if st, _ := local.State(); st != job.Paused {
		t.Errorf("local job after Pause: %s", st)
	}
}

// TestForeign: a job the node holds that the catalog lacks is foreign (a
// member should not join with it: the fleet numbers its jobs from 1 too);
// the catalog's own jobs are not.
func TestForeign(t *testing.T) {
	m := join(t, "m1", jstest.Start(t), nil)
	fleet, err := m.cat.Node().Submit(named("fleet"))
	if err != nil {
		t.Fatal(err)
	}
	if fj := m.cat.Foreign(); len(fj) != 0 {
		t.Fatalf("Foreign with only the fleet's job %d: %v", fleet.ID, fj)
	}
	local, err := m.node.Submit(named("local"))
	if err != nil {
		t.Fatal(err)
	}
	if fj := m.cat.Foreign(); len(fj) != 1 || fj[0] != local {
		t.Errorf("Foreign = %v, want the local job %d only", fj, local.ID)
	}
}

// twoMembers starts a server, joins two members to it and submits spec
// through the first, returning once the second runs it too.
func twoMembers(t *testing.T) (a, b *member, j *job.Job) {
	t.Helper()
	srv := jstest.Start(t)
	a, b = join(t, "m1", srv, nil), join(t, "m2", srv, nil)
	j, err := a.cat.Node().Submit(spec)
	if err != nil {
		t.Fatal(err)
	}
	waitJob(t, b, j, job.Running)
	return a, b, j
}

// TestFinishAtRevision: Finish ends a crawl on every member only at the
// revision its caller saw; seeds added since (through any member) gave
// the record a new one, so a finish decided before them does nothing.
func TestFinishAtRevision(t *testing.T) {
	a, b, j := twoMembers(t)
	before := a.cat.Running()[j.ID]
	if before == 0 {
		t.Fatalf("Running = %v, want job %d", a.cat.Running(), j.ID)
	}
	if _, err := b.cat.Node().AddSeeds(j.ID, []string{spec.Seeds[0] + "more"}); err != nil {
		t.Fatal(err)
	}
	if done, err := a.cat.Finish(context.Background(), j.ID, before); err != nil || done {
		t.Fatalf("Finish at the revision before the seeds: %v, %v; want nothing done", done, err)
	}
	var now uint64
	waitFor(t, 10*time.Second, "m1 sees the new revision", func() bool {
		now = a.cat.Running()[j.ID]
		return now > before
	})
	if done, err := a.cat.Finish(context.Background(), j.ID, now); err != nil || !done {
		t.Fatalf("Finish at the current revision: %v, %v; want done", done, err)
	}
	waitJob(t, a, j, job.Finished)
	waitJob(t, b, j, job.Finished)
	if _, err := a.cat.Node().AddSeeds(j.ID, []string{spec.Seeds[0] + "late"}); !errors.Is(err, job.ErrEnded) {
		t.Errorf("AddSeeds to a finished crawl: %v, want job.ErrEnded", err)
	}
	if len(a.cat.Running()) != 0 {
		t.Errorf("Running after the finish = %v", a.cat.Running())
	}
}

// TestExclusionsFleetWide: exclusion edits made on two members, at once
// and in turn, all land in the record, and every member's job ends with
// the same patterns, which survive a state change; a bad pattern, or the
// removal of one that is not there, changes nothing.
func TestExclusionsFleetWide(t *testing.T) {
	a, b, j := twoMembers(t)
	var wg sync.WaitGroup
	for i, m := range []*member{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 5 {
				if _, err := m.cat.Node().EditExclusions(j.ID, []string{fmt.Sprintf(`/m%d-%d/`, i, k)}, nil); err != nil {
					t.Errorf("%s: edit %d: %v", m.name, k, err)
				}
			}
		}()
	}
	wg.Wait()
	if _, err := b.cat.Node().EditExclusions(j.ID, nil, []string{`/m0-2/`, `/m1-4/`}); err != nil {
		t.Fatal(err)
	}
	var fe *job.FieldError
	if _, err := a.cat.Node().EditExclusions(j.ID, []string{`(`}, nil); !errors.As(err, &fe) || fe.Field != "Add" {
		t.Errorf("a bad pattern: %v, want a *job.FieldError for Add", err)
	}
	if _, err := a.cat.Node().EditExclusions(j.ID, nil, []string{`/never/`}); !errors.As(err, &fe) || fe.Field != "Remove" {
		t.Errorf("removing a pattern not there: %v, want a *job.FieldError for Remove", err)
	}
	if err := a.cat.Node().Pause(j.ID); err != nil {
		t.Fatal(err)
	}
	want := 8 // 10 added, 2 removed
	for _, m := range []*member{a, b} {
		waitJob(t, m, j, job.Paused)
		mj := m.node.Job(j.ID)
		waitFor(t, 10*time.Second, m.name+" has every exclusion", func() bool { return len(mj.Exclusions().Patterns()) == want })
		got := mj.Exclusions().Patterns()
		if slices.Contains(got, `/m0-2/`) || !slices.Contains(got, `/m1-3/`) || !mj.Excludes("http://a.test/m0-0/x") {
			t.Errorf("%s: patterns %q", m.name, got)
		}
		if !slices.Equal(got, a.node.Job(j.ID).Exclusions().Patterns()) {
			t.Errorf("%s: patterns %q, m1's %q", m.name, got, a.node.Job(j.ID).Exclusions().Patterns())
		}
	}
}

// TestConcurrentStateChanges: two members pausing and resuming one job at
// once all succeed (compare-and-set tried again), and every member ends
// in the state the catalog holds.
func TestConcurrentStateChanges(t *testing.T) {
	a, b, j := twoMembers(t)
	var wg sync.WaitGroup
	for i, m := range []*member{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 10 {
				do := (*catalog.Node).Pause
				if (i+k)%2 == 1 {
					do = (*catalog.Node).Resume
				}
				if err := do(m.cat.Node(), j.ID); err != nil {
					t.Errorf("%s: change %d: %v", m.name, k, err)
				}
			}
		}()
	}
	wg.Wait()
	kv, err := a.js.KeyValue(context.Background(), catalog.Bucket)
	if err != nil {
		t.Fatal(err)
	}
	e, err := kv.Get(context.Background(), fmt.Sprintf("job.%d", j.ID))
	if err != nil {
		t.Fatal(err)
	}
	r, err := job.DecodeRecord(e.Value())
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []*member{a, b} {
		waitJob(t, m, j, r.State)
	}
}
