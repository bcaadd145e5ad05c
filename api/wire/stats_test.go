package wire

import (
	"reflect"
	"testing"
)

// TestStatsAdd: a fleet's sum of a crawl's stats adds the counts and the
// counts by class, keeps the longest elapsed time and the soonest wait,
// and waits for nothing while a member has a fetch in flight.
func TestStatsAdd(t *testing.T) {
	hour := &Waiting{ForSeconds: 3540, Hosts: 1}
	soon := &Waiting{ForSeconds: 20, Hosts: 2}
	var sum Stats
	sum.Add(Stats{Fetched: 3, Requests: 4, Queued: 1, ElapsedSeconds: 10, ErrorsByClass: map[string]int64{"dns": 1}, Waiting: hour})
	sum.Add(Stats{Fetched: 2, Requests: 2, Queued: 2, ElapsedSeconds: 7, ErrorsByClass: map[string]int64{"dns": 2, "tls": 1},
		StatusByClass: map[string]int64{"2xx": 5}, Waiting: soon})
	want := Stats{Fetched: 5, Requests: 6, Queued: 3, ElapsedSeconds: 10, ErrorsByClass: map[string]int64{"dns": 3, "tls": 1},
		StatusByClass: map[string]int64{"2xx": 5}, Waiting: soon}
	if !reflect.DeepEqual(sum, want) {
		t.Errorf("sum = %+v, want %+v", sum, want)
	}
	sum.Add(Stats{InFlight: 1})
	if sum.Waiting != nil {
		t.Errorf("sum waits %+v while a member fetches, want no wait", sum.Waiting)
	}
}

// TestAddCounts: a nil sum is made only when there is something to add.
func TestAddCounts(t *testing.T) {
	if got := AddCounts(nil, nil); got != nil {
		t.Errorf("AddCounts(nil, nil) = %v, want nil", got)
	}
	if got := AddCounts(nil, map[string]int64{"5xx": 2}); !reflect.DeepEqual(got, map[string]int64{"5xx": 2}) {
		t.Errorf("AddCounts(nil, 5xx:2) = %v", got)
	}
}
