package node

import (
	"errors"
	"math"
	"math/bits"
	"net/url"

	"github.com/trawl-crawler/trawl/frontier"
	"github.com/trawl-crawler/trawl/internal/store"
	"github.com/trawl-crawler/trawl/internal/store/urlstate"
	"github.com/trawl-crawler/trawl/job"
	"github.com/trawl-crawler/trawl/scope"
	"github.com/trawl-crawler/trawl/urlnorm"
)

// Shape runs (scope.NextShapeRun): a page's links to URLs of its own
// shape continue its run, and what they carry depends on whether the page
// yielded anything new. The judgement is made here, when the page has been
// fetched and parsed, and travels with its links in their queue items
// (frontier.Item.ShapeRun, durable like the depth): nothing is held in
// memory per run, and a restart or a fleet's routing loses nothing.
//
// A page yields something new if
//   - a link of it leads out of the run to a URL of its own host that is
//     new to the job (the posts of a blog's listing page, the products of
//     a catalogue's), or
//   - its visible text has a paragraph (newTextWords) or more that the
//     page before it in the run has not (the posts of a forum thread's
//     page), as newWords estimates it from the two pages' SimHashes.
//
// A calendar's month, an empty listing past the last page, a counter's
// next value yield neither: their text differs by a date or a number,
// and their links lead only onward. The text test costs one read of the
// page before's stored record (its SimHash), made only for a page in a run
// that found nothing new to queue.

// newTextWords is how many words of a page in a shape run must be new
// (not in the page before it in the run) for its text to count as new: a
// paragraph. newWords estimates them from the two pages' fingerprints.
const newTextWords = 50

// admitLinks admits the candidates found on the page at u (job j's item
// it): first those that leave the page's shape run, then those that
// continue it, whose run value (scope.NextShapeRun) depends on what the
// page yielded: a new URL of its host queued by the first step, or, if
// none, text unlike the page before it (text is the page's).
func (n *Node) admitLinks(b *store.Batch, j *job.Job, it frontier.Item, u *url.URL, found []candidate, text textPrint) ([]frontier.Item, error) {
	via := &viaText{n: n, it: it}
	var out, run []candidate
	for _, cd := range found {
		if cd.inRun {
			run = append(run, cd)
		} else {
			out = append(out, cd)
		}
	}
	items, err := n.admit(b, j, out, true, it.Host)
	if err != nil {
		return nil, err
	}
	if len(run) > 0 {
		yielded := false
		if it.ShapeRun > 0 { // a page that starts its run is new to it
			for _, q := range items {
				if q.Host == it.Host {
					yielded = true
					break
				}
			}
			yielded = yielded || n.newText(it, u, text, via)
		}
		v := scope.NextShapeRun(it.ShapeRun, yielded)
		for i := range run {
			run[i].shapeRun = v
		}
		more, err := n.admit(b, j, run, true, it.Host)
		if err != nil {
			return nil, err
		}
		items = append(items, more...)
	}
	n.earnRoom(j, it, u, items, text, via)
	return items, nil
}

// newText reports whether the visible text of the page at u (its item
// it, in a shape run) is unlike that of the page before it in the run,
// it.Via (via). A page whose page before is not of its shape (a redirect)
// does not count as new, nor do those textYields refuses.
func (n *Node) newText(it frontier.Item, u *url.URL, text textPrint, via *viaText) bool {
	if !text.read || text.words < newTextWords || it.Via == "" {
		return false
	}
	v, err := url.Parse(it.Via)
	if err != nil || !scope.SameShape(v, u) {
		return false
	}
	return textYields(text, via)
}

// textYields reports whether a page's text (text) has newTextWords
// words or more that the page that linked it (via) has not. A page of
// fewer words, or whose via page has no fingerprint (a seed, a redirect,
// not HTML), does not yield by its text.
func textYields(text textPrint, via *viaText) bool {
	if !text.read || text.words < newTextWords {
		return false
	}
	prev, ok := via.print()
	return ok && newWords(prev, text.fp, text.words) >= newTextWords
}

// viaText reads, at most once, the fingerprint of the visible text of
// the page that linked a fetched page (its item it, it.Via), as the URL's
// stored record has it: what the yield judgements compare the page with.
type viaText struct {
	n    *Node
	it   frontier.Item
	done bool
	sim  uint64
	ok   bool
}

// print returns the fingerprint, and false if there is none: no via (a
// seed), or a page not fetched, not HTML or without text.
func (v *viaText) print() (uint64, bool) {
	if v.done {
		return v.sim, v.ok
	}
	v.done = true
	if v.it.Via == "" {
		return 0, false
	}
	host := v.it.Host
	if u, err := url.Parse(v.it.Via); err == nil && u.Host != "" {
		host = urlnorm.HostKey(u) // a link from another host
	}
	key := store.URLKey(host, v.it.Via)
	if !v.n.state.Fetched.MayHave(key) {
		return 0, false
	}
	b, err := v.n.db.Get(key)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			v.n.opts.Logger.Warn("read the URL state of the page that linked a page", "url", v.it.Via, "err", err)
		}
		return 0, false
	}
	rec, err := urlstate.Decode(b)
	if err != nil || !rec.HasDigest || rec.SimHash == 0 {
		return 0, false
	}
	v.sim, v.ok = rec.SimHash, true
	return v.sim, v.ok
}

// newWords estimates how many of the words of a page (words of them,
// fingerprint cur) the page before it (fingerprint prev) has not. Two
// SimHashes differ in a bit with odds θ/π, θ the angle between the pages'
// feature vectors (Charikar 2002); for pages of like length cos θ is about
// the share of the page's distinct words the other has too. So a page
// whose fingerprint is d bits away has about words·(1 − cos(π·d/64)) words
// of its own. A share, not a distance, is what tells a calendar's month
// from a thread's page: a 40-word month whose date moved on is a few bits
// from the month before, a 450-word thread page with a template around
// its posts some 20 (over 100 new words); see TestShapeRunTextDistances.
func newWords(prev, cur uint64, words int) int {
	d := bits.OnesCount64(prev ^ cur)
	return int(float64(words) * (1 - math.Cos(math.Pi*float64(d)/64)))
}
