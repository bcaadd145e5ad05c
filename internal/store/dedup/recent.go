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
	mu   sync.Mutex
	ring []recentPrint
	next int
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
	// Newest first, comparing at most MaxLookupScan candidates (prints of
	// pages of one small vocabulary are all within MaxCandidateDistance).
	for k := range len(x.ring) {
		e := &x.ring[(x.next-1-k+2*len(x.ring))%len(x.ring)]
		if e.url == url || bits.OnesCount64(e.p.FP^p.FP) > MaxCandidateDistance {
			continue
		}
		if compared++; compared > MaxLookupScan {
			break
		}
		if r, ok := Compare(p, e.p); ok && r >= minResemblance && r > best.Resemblance {
			best = Match{URL: e.url, Job: e.job, Resemblance: r}
		}
	}
	if best.Resemblance >= 0 {
		return best, true
	}
	e := recentPrint{p: p, url: url, job: job}
	if len(x.ring) < RecentPrints {
		x.ring = append(x.ring, e)
	} else {
		x.ring[x.next] = e
		x.next = (x.next + 1) % RecentPrints
	}
	return Match{}, false
}
