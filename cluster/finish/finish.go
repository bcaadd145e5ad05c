// Package finish ends a fleet's crawls once no member has work for them:
// the fleet-wide form of a single node's end of a crawl (nothing queued,
// held or in flight). No member can see that alone: a crawl's URLs sit in
// every member's partitions, in outboxes and on the route stream between
// them.
//
// Each member keeps a Report in the KV bucket trawl-finish, under its
// name, every Options.Every: whether its node is quiet (node.Quiet:
// nothing queued, leased or being read in the partitions it serves, no
// seeds being queued, nothing in its outbox), the crawls it runs, the
// route sequence folded for each partition it serves, and an activity
// count that grows with every request and every URL admitted.
//
// One member coordinates (the first live member by name). A crawl ends
// when two checks in a row, each after every live member wrote a new
// report, find: every member quiet and running the crawl (and every other
// report still in the bucket quiet: a member whose membership lapsed may
// hold URLs in its outbox), every partition
// served by exactly one of them, the route stream holding nothing for a
// partition past what its server folded, and no member's activity changed
// between the two. Then nothing is queued or in flight anywhere, and
// nothing can come: URLs only come from fetches and from the stream. The
// crawl is then finished through the catalog (catalog.Finish), which
// every member applies.
//
// Decide is the rule, pure; Runner does the I/O.
package finish

import (
	"fmt"
	"slices"

	"github.com/trawl-crawler/trawl/job"
)

// Report is one member's word on its work.
type Report struct {
	// Quiet is node.Quiet's verdict.
	Quiet bool `json:"quiet"`
	// Jobs are the member's running crawls that end when their work is
	// done, seeds queued.
	Jobs []job.ID `json:"jobs"`
	// Folded maps each partition the member serves to the route stream
	// sequence it has folded up to.
	Folded map[int]uint64 `json:"folded"`
	// Activity grows with every request sent and URL admitted.
	Activity int64 `json:"activity"`
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

// Quiet returns the crawls that s alone allows to end (every member quiet
// and running them, every one of partitions served once, the stream
// folded: s.Last must be read), or why none.
func Quiet(s Snapshot, partitions int) ([]job.ID, string) {
	if len(s.Running) == 0 {
		return nil, "no running crawl"
	}
	if len(s.Members) == 0 {
		return nil, "no member"
	}
	served := make(map[int]string, partitions)
	ends := slices.Clone(s.Running)
	for _, m := range s.Members {
		r, ok := s.Reports[m]
		switch {
		case !ok:
			return nil, fmt.Sprintf("no report from %s", m)
		case !r.Quiet:
			return nil, fmt.Sprintf("%s has work", m)
		}
		ends = slices.DeleteFunc(ends, func(id job.ID) bool { return !slices.Contains(r.Jobs, id) })
		for p := range r.Folded {
			if o, dup := served[p]; dup {
				return nil, fmt.Sprintf("partition %d served by %s and %s", p, o, m)
			}
			served[p] = m
		}
	}
	for m, r := range s.Others {
		if !r.Quiet {
			return nil, fmt.Sprintf("%s (not a live member) has work", m)
		}
	}
	if len(served) != partitions {
		return nil, fmt.Sprintf("%d of %d partitions served", len(served), partitions)
	}
	if len(ends) == 0 {
		return nil, "no crawl runs on every member"
	}
	if s.Last == nil {
		return nil, "route stream not read"
	}
	for p, m := range served {
		if last, folded := s.Last[p], s.Reports[m].Folded[p]; last > folded {
			return nil, fmt.Sprintf("partition %d: the stream holds sequence %d, %s folded up to %d", p, last, m, folded)
		}
	}
	return ends, ""
}

// Decide returns the crawls to end after two checks in a row, prev then
// cur: each must allow them (Quiet), with the same members, every member's
// report new since prev, and no member's activity changed.
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
	for _, m := range cur.Members {
		if cur.Revs[m] == prev.Revs[m] {
			return nil, fmt.Sprintf("no new report from %s", m)
		}
		if cur.Reports[m].Activity != prev.Reports[m].Activity {
			return nil, fmt.Sprintf("%s was active", m)
		}
	}
	return slices.DeleteFunc(b, func(id job.ID) bool { return !slices.Contains(a, id) }), ""
}
