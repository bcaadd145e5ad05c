package frontierdb

import (
	"fmt"
	"testing"

	"github.com/trawl-crawler/trawl/frontier"
	"github.com/trawl-crawler/trawl/internal/clustertest"
	"github.com/trawl-crawler/trawl/internal/store"
)

// TestConvertCounters: a store with whole-store job counters ('c' keys,
// as written before counters were kept per partition) is converted at
// Load: per (job, partition) counters counted from its queue and held
// keys, the old Dropped put on partition 0, the 'c' keys gone; a second
// Load finds nothing to convert.
func TestConvertCounters(t *testing.T) {
	dir := t.TempDir()
	db, s := open(t, dir)
	f, err := frontier.New(frontier.Options{Store: s})
	if err != nil {
		t.Fatal(err)
	}
	// Job 1: 2 items in partition 3, 1 in partition 9; job 2: 1 in
	// partition 9, paused and held as it reaches its host's head.
	h3, h9 := clustertest.HostIn(3, 0), clustertest.HostIn(9, 0)
	items := []frontier.Item{
		{URL: "http://" + h3 + "/a", Host: h3, Job: 1},
		{URL: "http://" + h3 + "/b", Host: h3, Job: 1},
		{URL: "http://" + h9 + "/a", Host: h9, Job: 2},
		{URL: "http://" + h9 + "/b", Host: h9, Job: 1},
	}
	if err := <-f.Add(nil, items...); err != nil {
		t.Fatal(err)
	}
	if err := f.SetJobState(2, frontier.JobPaused); err != nil {
		t.Fatal(err)
	}
	for {
		if l, _ := f.Lease(); l == nil {
			break
		}
	}
	if j := f.Job(2); j.Held != 1 {
		t.Fatalf("job 2: %+v, want 1 held", j)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Make it an old store: 'c' keys only.
	b := db.NewBatch()
	prefix := store.KindPrefix(store.KindJobPart)
	b.DeleteRange(prefix, store.PrefixEnd(prefix))
	b.Set(store.JobCountersKey(1), appendJobState(nil, frontier.JobState{Stored: 3, Dropped: 4}))
	b.Set(store.JobCountersKey(2), appendJobState(nil, frontier.JobState{Stored: 0, Held: 1, Dropped: 1}))
	if err := db.Commit(b); err != nil {
		t.Fatal(err)
	}

	for round := range 2 {
		s := New(db, Options{})
		got := map[string]frontier.JobState{}
		err := s.Load(nil, func(j frontier.JobState) error {
			got[fmt.Sprintf("job %d partition %d", j.Job, j.Part)] = j
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]frontier.JobState{
			"job 1 partition 0": {Job: 1, Part: 0, Dropped: 4},
			"job 2 partition 0": {Job: 2, Part: 0, Dropped: 1},
			"job 1 partition 3": {Job: 1, Part: 3, Stored: 2},
			"job 1 partition 9": {Job: 1, Part: 9, Stored: 1},
			"job 2 partition 9": {Job: 2, Part: 9, Held: 1},
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("round %d: counters %v\nwant %v", round, got, want)
		}
		if n, err := db.Count(store.KindPrefix(store.KindJobCounters)); err != nil || n != 0 {
			t.Errorf("round %d: %d 'c' keys left, %v", round, n, err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
}
