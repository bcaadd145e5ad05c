package finish

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/trawl-crawler/trawl/job"
)

const parts = 4

// quiet is a snapshot of two quiet members, a serving partitions 0-1 and b
// 2-3, both running crawls 1 and 2, the stream folded; edit changes it.
func quiet(edit func(*Snapshot)) Snapshot {
	s := Snapshot{
		Members: []string{"a", "b"},
		Reports: map[string]Report{
			"a": {Quiet: true, Jobs: []job.ID{1, 2}, Folded: map[int]uint64{0: 10, 1: 0}, Activity: 100},
			"b": {Quiet: true, Jobs: []job.ID{1, 2}, Folded: map[int]uint64{2: 12, 3: 7}, Activity: 50},
		},
		Revs:    map[string]uint64{"a": 1, "b": 2},
		Last:    map[int]uint64{0: 10, 2: 12, 3: 5},
		Running: []job.ID{1, 2},
	}
	if edit != nil {
		edit(&s)
	}
	return s
}

func report(s *Snapshot, m string, edit func(*Report)) {
	r := s.Reports[m]
	r.Folded = maps.Clone(r.Folded)
	r.Jobs = slices.Clone(r.Jobs)
	edit(&r)
	s.Reports[m] = r
}

// activity gives m's report activity counts per crawl: n1 for crawl 1,
// n2 for crawl 2.
func activity(s *Snapshot, m string, n1, n2 int64) {
	report(s, m, func(r *Report) {
		r.JobActivity = map[job.ID]int64{1: n1, 2: n2}
		r.Activity = n1 + n2
	})
}

// busy2 makes member a busy with crawl 2 (its activity for it n), idle
// for crawl 1, in s.
func busy2(s Snapshot, n int64) Snapshot {
	report(&s, "a", func(r *Report) { r.Quiet, r.Idle = false, []job.ID{1} })
	activity(&s, "a", 10, n)
	return s
}

// idle2 makes member a idle for both crawls, its activity for crawl 2 n.
func idle2(s Snapshot, n int64) Snapshot {
	report(&s, "a", func(r *Report) { r.Quiet, r.Idle = false, []job.ID{1, 2} })
	activity(&s, "a", 10, n)
	return s
}

func TestQuiet(t *testing.T) {
	for _, c := range []struct {
		name string
		s    Snapshot
		want []job.ID
		why  string
	}{
		{"all quiet", quiet(nil), []job.ID{1, 2}, ""},
		{"no crawl", quiet(func(s *Snapshot) { s.Running = nil }), nil, "no running crawl"},
		{"no member", quiet(func(s *Snapshot) { s.Members = nil }), nil, "no member"},
		{"a member without a report", quiet(func(s *Snapshot) { delete(s.Reports, "b") }), nil, "no report from b"},
		{"a member with work (a report without crawls idle: older code)", quiet(func(s *Snapshot) { report(s, "a", func(r *Report) { r.Quiet = false }) }), nil, "a has work for crawl 1"},
		{"a member with work for crawl 1 only", quiet(func(s *Snapshot) {
			report(s, "a", func(r *Report) { r.Quiet, r.Idle = false, []job.ID{2} })
		}), []job.ID{2}, ""},
		{"members with work for a crawl each", quiet(func(s *Snapshot) {
			report(s, "a", func(r *Report) { r.Quiet, r.Idle = false, []job.ID{2} })
			report(s, "b", func(r *Report) { r.Quiet, r.Idle = false, []job.ID{1} })
		}), nil, "a has work for crawl 1"},
		{"idle for every crawl, not quiet", quiet(func(s *Snapshot) {
			report(s, "a", func(r *Report) { r.Quiet, r.Idle = false, []job.ID{1, 2} })
		}), []job.ID{1, 2}, ""},
		{"a crawl one member does not run yet", quiet(func(s *Snapshot) { report(s, "b", func(r *Report) { r.Jobs = []job.ID{2} }) }), []job.ID{2}, ""},
		{"no crawl on every member", quiet(func(s *Snapshot) { report(s, "b", func(r *Report) { r.Jobs = nil }) }), nil, "crawl 1 does not run on b"},
		{"a lapsed member with work", quiet(func(s *Snapshot) { s.Others = map[string]Report{"c": {Quiet: false}} }), nil, "c (not a live member) has work for crawl 1"},
		{"a lapsed member with work for crawl 2", quiet(func(s *Snapshot) { s.Others = map[string]Report{"c": {Idle: []job.ID{1}}} }), []job.ID{1}, ""},
		{"a lapsed member quiet", quiet(func(s *Snapshot) { s.Others = map[string]Report{"c": {Quiet: true}} }), []job.ID{1, 2}, ""},
		{"a partition unserved", quiet(func(s *Snapshot) { report(s, "b", func(r *Report) { delete(r.Folded, 3) }) }), nil, "3 of 4 partitions served"},
		{"a partition served twice", quiet(func(s *Snapshot) { report(s, "b", func(r *Report) { r.Folded[1] = 0 }) }), nil, "partition 1 served by"},
		{"the stream ahead of a fold: judged by Decide", quiet(func(s *Snapshot) { s.Last[3] = 8 }), []job.ID{1, 2}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, why := Quiet(c.s, parts)
			if !slices.Equal(got, c.want) || !strings.Contains(why, c.why) || (c.why == "") != (why == "") {
				t.Errorf("Quiet = %v, %q; want %v, %q", got, why, c.want, c.why)
			}
		})
	}
}

func TestDecide(t *testing.T) {
	next := func(edit func(*Snapshot)) Snapshot {
		return quiet(func(s *Snapshot) {
			s.Revs = map[string]uint64{"a": 3, "b": 4}
			if edit != nil {
				edit(s)
			}
		})
	}
	for _, c := range []struct {
		name      string
		prev, cur Snapshot
		want      []job.ID
		why       string
	}{
		{"two quiet checks", quiet(nil), next(nil), []job.ID{1, 2}, ""},
		{"only the crawls both allow", quiet(func(s *Snapshot) { s.Running = []job.ID{2} }), next(nil), []job.ID{2}, ""},
		{"the check before had work", quiet(func(s *Snapshot) { report(s, "a", func(r *Report) { r.Quiet = false }) }), next(nil), nil, "the check before: a has work"},
		{"this check has work", quiet(nil), next(func(s *Snapshot) { report(s, "b", func(r *Report) { r.Quiet = false }) }), nil, "b has work"},
		{"a member joined", quiet(func(s *Snapshot) { s.Members = []string{"a", "b"} }), next(func(s *Snapshot) {
			s.Members = []string{"a", "b", "c"}
			s.Reports["c"] = Report{Quiet: true, Jobs: []job.ID{1, 2}}
		}), nil, "the members changed"},
		{"a stale report", quiet(nil), next(func(s *Snapshot) { s.Revs["b"] = 2 }), nil, "no new report from b"},
		{"activity between the checks (reports without activity per crawl)", quiet(nil), next(func(s *Snapshot) { report(s, "a", func(r *Report) { r.Activity++ }) }), nil, "a was active for crawl 1"},
		{"the stream not read at the check before", quiet(func(s *Snapshot) { s.Last = nil }), next(nil), nil, "route stream not read at the check before"},
		{"the stream at the check before not folded yet", quiet(func(s *Snapshot) { s.Last[3] = 8 }), next(nil), nil, "partition 3: the stream held sequence 8 at the check before, b has folded up to 7"},
		{"a partition's first message not folded", quiet(func(s *Snapshot) { s.Last[1] = 1 }), next(nil), nil, "partition 1: the stream held sequence 1"},
		{"the stream ahead at this check only", quiet(nil), next(func(s *Snapshot) { s.Last[3] = 8 }), []job.ID{1, 2}, ""},
		{"folded since the check before", quiet(func(s *Snapshot) { s.Last[3] = 8 }), next(func(s *Snapshot) {
			report(s, "b", func(r *Report) { r.Folded[3] = 8 })
		}), []job.ID{1, 2}, ""},
		// Crawl 2 has work on a (and its activity grows) while crawl 1
		// has none anywhere: crawl 1 ends on its own.
		{"one crawl ends while the other has work", busy2(quiet(nil), 5), busy2(next(nil), 9), []job.ID{1}, ""},
		{"crawl 2 active though idle at both checks", idle2(quiet(nil), 5), idle2(next(nil), 9), []job.ID{1}, ""},
		{"both active", quiet(func(s *Snapshot) { activity(s, "b", 3, 3) }), next(func(s *Snapshot) { activity(s, "b", 4, 4) }), nil, "b was active for crawl 1"},
		{"an older member's total activity stands for each crawl", busy2(quiet(nil), 5), busy2(next(func(s *Snapshot) {
			report(s, "b", func(r *Report) { r.Activity++ })
		}), 9), nil, "b was active for crawl 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, why := Decide(c.prev, c.cur, parts)
			if !slices.Equal(got, c.want) || !strings.Contains(why, c.why) || (c.why == "") != (why == "") {
				t.Errorf("Decide = %v, %q; want %v, %q", got, why, c.want, c.why)
			}
		})
	}
}
