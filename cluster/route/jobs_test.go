package route

import (
	"maps"
	"slices"
	"testing"

	"github.com/trawl-crawler/trawl/internal/store/partition"
	"github.com/trawl-crawler/trawl/internal/testkit/storetest"
)

// TestOutboxJobs: Jobs names the jobs of the entries waiting, and says
// "all" once more than its limit wait.
func TestOutboxJobs(t *testing.T) {
	db := storetest.Open(t)
	o, err := OpenOutbox(db)
	if err != nil {
		t.Fatal(err)
	}
	if jobs, all, err := o.Jobs(10); err != nil || all || len(jobs) != 0 {
		t.Fatalf("empty outbox: Jobs = %v, %v, %v", jobs, all, err)
	}
	a, b := itemsFor(partition.ID(3), 2, "a"), itemsFor(partition.ID(9), 2, "b")
	b[1].Job = 8
	add(t, db, o, append(a, b...))
	jobs, all, err := o.Jobs(10)
	if err != nil || all {
		t.Fatalf("Jobs = %v, %v, %v", jobs, all, err)
	}
	if got := slices.Sorted(maps.Keys(jobs)); !slices.Equal(got, []uint32{7, 8}) {
		t.Errorf("Jobs = %v, want 7 and 8", got)
	}
	if _, all, err := o.Jobs(3); err != nil || !all {
		t.Errorf("Jobs(3) of 4 entries: all %v, %v; want true", all, err)
	}
	if _, all, err := o.Jobs(4); err != nil || all {
		t.Errorf("Jobs(4) of 4 entries: all %v, %v; want false", all, err)
	}
}
