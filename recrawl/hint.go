package recrawl

import "time"

// Stated change intervals: what a site says of how often a page changes
// (a sitemap's <changefreq>), as a prior on the page's rate before its
// own visits or its neighbours' have shown it.
//
// A statement is weak evidence: sites often give one value to every page,
// or a value that was true once. So a stated interval is worth
// HintChanges pseudo-changes, a quarter of what a fitted group prior may
// weigh (MaxPriorChanges), and a page's own visits outweigh it after one
// change or a few unchanged visits as long as the interval stated. The
// node also pools the pages of one site that state the same interval
// (a hint group): once enough of them have been seen twice, what they
// showed replaces what they stated, so that a site whose statements are
// wrong is believed only until its pages are seen.

// HintChanges is the weight of a stated interval, in pseudo-changes.
const HintChanges = 1

// HintPrior is the prior a page stated to change every `every` starts
// from: HintChanges changes over HintChanges intervals, so its mean is one
// change per `every`. The zero Prior if every is not positive.
func HintPrior(every time.Duration) Prior {
	if every <= 0 {
		return Prior{}
	}
	return Prior{Changes: HintChanges, Hours: HintChanges * every.Hours()}
}
