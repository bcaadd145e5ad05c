package dedup

import (
	"math/bits"
	"sync"

	"github.com/trawl-crawler/trawl/simhash"
)

// Recent holds the prints of the last RecentPrints pages judged original,
// in memory, for the near-duplicate gate's pages in flight: a page enters
// the index only with its completion batch, after its WARC records are
// durable, so a copy fetched while its original is being archived (two
// workers on one site's copies at once) would not find it there.
// CheckAndAdd finds a page among them and, if it is not a copy of one,
// adds it in the same step, so that of two copies judged at once the
// second finds the first. Safe for concurrent use.
type Recent struct {
	mu sync.Mutex
	// fps[i] is ring[i].p.FP, kept apart so that a lookup, which rules out
	// nearly every kept page by its fingerprint alone, reads 8 KiB rather
	// than the whole ring.
	fps  []uint64
	ring []recentPrint
	next int // where the next print goes once the ring is full: the oldest
}

// RecentPrints is how many prints a Recent keeps: far more than a node's
// pages in flight.
const RecentPrints = 1024

type recentPrint struct {
	p   simhash.Print
	url string
	job uint32
}

// CheckAndAdd returns the kept page most like p (Compare), if it
// resembles p at least minResemblance and is not url itself; if there is
// none, it keeps p as the page at url, archived by job.
func (x *Recent) CheckAndAdd(p simhash.Print, url string, job uint32, minResemblance float64) (Match, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	best := Match{Resemblance: -1}
	compared := 0
	// Newest first (from next-1 down to 0, then from the end down to
	// next), comparing at most MaxLookupScan candidates (prints of pages
	// of one small vocabulary are all within MaxCandidateDistance).
	segments := [2][2]int{{0, x.next}, {x.next, len(x.fps)}}
scan:
	for _, s := range segments {
		for i := s[1] - 1; i >= s[0]; i-- {
			if bits.OnesCount64(x.fps[i]^p.FP) > MaxCandidateDistance {
				continue
			}
			e := &x.ring[i]
			if e.url == url {
				continue
			}
			if compared++; compared > MaxLookupScan {
				break scan
			}
			if r, ok := Compare(p, e.p); ok && r >= minResemblance && r > best.Resemblance {
				best = Match{URL: e.url, Job: e.job, Resemblance: r}
			}
		}
	}
	if best.Resemblance >= 0 {
		return best, true
	}
	e := recentPrint{p: p, url: url, job: job}
	if len(x.ring) < RecentPrints {
		x.ring = append(x.ring, e)
		x.fps = append(x.fps, p.FP)
	} else {
		x.ring[x.next] = e
		x.fps[x.next] = p.FP
		x.next = (x.next + 1) % RecentPrints
	}
	return Match{}, false
}
