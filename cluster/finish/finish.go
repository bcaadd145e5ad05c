// Package finish ends a fleet's crawls once no member has work for them:
// the fleet-wide form of a single node's end of a crawl (nothing queued,
// held or in flight). No member can see that alone: a crawl's URLs sit in
// every member's partitions, in outboxes and on the route stream between
// them.
//
// Each member keeps a Report in the KV bucket trawl-finish, under its
// name, every Options.Every: whether its node is quiet (node.Quiet:
// nothing queued, leased or being read in the partitions it serves, no
// seeds being queued, nothing in its outbox), the crawls it runs and,
// of them, those it has no work for (node.IdleJobs: the frontier counts
// each crawl's items per partition, so a member can tell), the route
// sequence folded for each partition it serves, and an activity count per
// crawl that grows with every request and every URL admitted.
//
// One member coordinates (the first live member by name). Each crawl is
// judged on its own: it ends when two checks in a row, each after every
// live member wrote a new report, find every member running it and
// without work for it (and every other report still in the bucket
// without work for it: a member whose membership lapsed may hold URLs in
// its outbox), every partition served by exactly one member, every
// partition's server at the second check having folded the route stream
// up to what it held at the first, and no member's activity for the crawl
// changed between the two. Then nothing of the crawl is queued or in
// flight anywhere, and nothing can come: its URLs only come from its own
// fetches and from the stream. Another crawl's work does not hold it up.
// The crawl is then finished through the catalog (catalog.Finish), which
// every member applies.
//
// Reports are JSON; a report without the per-crawl fields (a member
// running older code) counts as busy with every crawl unless Quiet, and
// its total activity stands for each crawl's.
//
// Decide is the rule, pure; Runner does the I/O.
package finish

import (
	"fmt"
	"maps"
	"slices"

	"github.com/trawl-crawler/trawl/job"
)

// Report is one member's word on its work.
type Report struct {
	// Quiet is node.Quiet's verdict: no work for any crawl.
	Quiet bool `json:"quiet"`
	// Jobs are the member's running crawls that end when their work is
	// done, seeds queued.
	Jobs []job.ID `json:"jobs"`
	// Idle are those of Jobs the member has no work for (node.IdleJobs).
	Idle []job.ID `json:"idle,omitempty"`
	// Folded maps each partition the member serves to the route stream
	// sequence it has folded up to.
	Folded map[int]uint64 `json:"folded"`
	// Activity grows with every request sent and URL admitted, of any
	// crawl; JobActivity is its share per crawl (nil in an older
	// member's report).
	Activity    int64            `json:"activity"`
	JobActivity map[job.ID]int64 `json:"job_activity,omitempty"`
}

// idle reports whether r says its member has no work for crawl id.
func (r Report) idle(id job.ID) bool { return r.Quiet || slices.Contains(r.Idle, id) }

// activity is r's activity count for crawl id: its own if r has counts
// per crawl, the total otherwise.
func (r Report) activity(id job.ID) int64 {
	if r.JobActivity == nil {
		return r.Activity
	}
	return r.JobActivity[id]
}

// Snapshot is what one check sees.
type Snapshot struct {
	// Members are the live members' names.
	Members []string
	// Reports are their reports, with the KV revision of each (a new
	// revision: a new report). A member without one is missing.
	Reports map[string]Report
	Revs    map[string]uint64
	// Others are the reports, still in the bucket, of names that are not
	// live members: one whose membership lapsed may still hold URLs in
	// its outbox (it publishes them when it is back), so it must be
	// quiet too, until its report expires.
	Others map[string]Report
	// Last maps each partition to the route stream's last sequence for
	// it (0: none). Nil when not read (Decide then says whether it is
	// worth reading).
	Last map[int]uint64
	// Running are the catalog's running crawls that end when their work
	// is done, in ID order; JobRevs their records' revisions.
	Running []job.ID
	JobRevs map[job.ID]uint64
}

// Quiet returns the crawls that s alone allows to end, each on its own
// (every member running it and without work for it, every other report
// without work for it, every one of partitions served once), or why none.
// The route stream is judged by Decide, across two checks.
func Quiet(s Snapshot, partitions int) ([]job.ID, string) {
	if len(s.Running) == 0 {
		return nil, "no running crawl"
	}
	if len(s.Members) == 0 {
		return nil, "no member"
	}
	served := make(map[int]string, partitions)
	ends := slices.Clone(s.Running)
	var why string
	drop := func(keep func(job.ID) bool, reason func(job.ID) string) {
		ends = slices.DeleteFunc(ends, func(id job.ID) bool {
			if keep(id) {
				return false
			}
			if why == "" {
				why = reason(id)
			}
			return true
		})
	}
	for _, m := range s.Members {
		r, ok := s.Reports[m]
		if !ok {
			return nil, fmt.Sprintf("no report from %s", m)
		}
		drop(func(id job.ID) bool { return slices.Contains(r.Jobs, id) }, func(id job.ID) string {
			return fmt.Sprintf("crawl %d does not run on %s", id, m)
		})
		drop(r.idle, func(id job.ID) string { return fmt.Sprintf("%s has work for crawl %d", m, id) })
		for p := range r.Folded {
			if o, dup := served[p]; dup {
				return nil, fmt.Sprintf("partition %d served by %s and %s", p, o, m)
			}
			served[p] = m
		}
	}
	for _, m := range slices.Sorted(maps.Keys(s.Others)) {
		drop(s.Others[m].idle, func(id job.ID) string {
			return fmt.Sprintf("%s (not a live member) has work for crawl %d", m, id)
		})
	}
	if len(served) != partitions {
		return nil, fmt.Sprintf("%d of %d partitions served", len(served), partitions)
	}
	if len(ends) == 0 {
		return nil, why
	}
	return ends, ""
}

// Decide returns the crawls to end after two checks in a row, prev then
// cur: each must allow them (Quiet), with the same members, every member's
// report new since prev, each partition's server at cur having folded the
// route stream up to its last sequence at prev (prev.Last must be read:
// whatever the stream held then has been folded, and its URLs are queued,
// counted as activity, or were already seen), and no member's activity
// for the crawl changed.
func Decide(prev, cur Snapshot, partitions int) ([]job.ID, string) {
	a, why := Quiet(prev, partitions)
	if len(a) == 0 {
		return nil, "the check before: " + why
	}
	b, why := Quiet(cur, partitions)
	if len(b) == 0 {
		return nil, why
	}
	if !slices.Equal(prev.Members, cur.Members) {
		return nil, "the members changed"
	}
	if prev.Last == nil {
		return nil, "route stream not read at the check before"
	}
	for _, m := range cur.Members {
		if cur.Revs[m] == prev.Revs[m] {
			return nil, fmt.Sprintf("no new report from %s", m)
		}
		for p, folded := range cur.Reports[m].Folded {
			if last := prev.Last[p]; last > folded {
				return nil, fmt.Sprintf("partition %d: the stream held sequence %d at the check before, %s has folded up to %d", p, last, m, folded)
			}
		}
	}
	ends := slices.DeleteFunc(b, func(id job.ID) bool { return !slices.Contains(a, id) })
	if len(ends) == 0 {
		return nil, "no crawl allowed by both checks"
	}
	why = ""
	ends = slices.DeleteFunc(ends, func(id job.ID) bool {
		for _, m := range cur.Members {
			if cur.Reports[m].activity(id) != prev.Reports[m].activity(id) {
				if why == "" {
					why = fmt.Sprintf("%s was active for crawl %d", m, id)
				}
				return true
			}
		}
		return false
	})
	if len(ends) == 0 {
		return nil, why
	}
	return ends, ""
}
