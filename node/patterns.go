package node

import (
	"net/url"

	"github.com/trawl-crawler/trawl/frontier"
	"github.com/trawl-crawler/trawl/internal/patternbudget"
	"github.com/trawl-crawler/trawl/job"
	"github.com/trawl-crawler/trawl/scope"
)

// The per-pattern room (scope.Rules.MaxURLsPerPattern): a job queues the
// first PatternLimit new URLs of each host and scope.Pattern as they
// come; past that, only as many as the pattern's own fetched pages have
// earned, scope.PatternRoomPerYield per page that yielded. A page of a
// pattern yields if
//   - it queued a URL of its own host outside its pattern that was new to
//     the job (a catalogue's ?page=N listing queues its products), or
//   - its visible text has newTextWords words or more that the page that
//     linked it has not (a product, a post, a thread page, an article),
//     as textYields estimates from the two fingerprints,
//
// and it is neither an exact nor a near duplicate of a page archived.
// A faceted listing's filter combinations (the products they list are
// queued already; their text is the listing's, filtered), a soft-404
// directory's pages (each the same "not found") and session-ID copies
// (duplicates) yield nothing, so they stop at PatternLimit URLs, while a
// family whose pages yield earns its room as it is crawled.
//
// The counts (queued and earned, per job and pattern) live in the node's
// patternbudget sketch, whose memory does not grow with the crawl. They
// are not stored: a job resumed after a restart counts afresh, each
// pattern with PatternLimit URLs of room again.
//
// A URL refused for want of room is not marked seen (as with the
// shape-run rule): a link to it found later, once its pattern has earned
// room, queues it. So a listing that links more URLs of one pattern at
// once than PatternLimit (an archive page of every post) loses none that
// are linked again (the posts' "older" links).

// patternRoom passes urls (kept's, a page's links for job j past its
// scope, exclusions and routing, in order) through the per-pattern room,
// lim URLs to start with: a URL that the URL-seen gate has not seen and
// that its pattern has no room for is dropped, not marked seen (counted
// out of scope, logged). It returns the URLs kept, their candidates and
// patterns. The room is the count before this page's new URLs, less
// those of them kept (a URL the gate's filter may have seen takes no
// room here: the count after the seen check, in admit, settles it).
func (n *Node) patternRoom(j *job.Job, urls []string, kept []candidate, lim int) ([]string, []candidate, []string) {
	left := make(map[string]int64) // room left per pattern
	pats := make([]string, 0, len(kept))
	ku, kk := urls[:0], kept[:0]
	for i, cd := range kept {
		p := scope.Pattern(cd.u)
		r, ok := left[p]
		if !ok {
			q, e := n.patterns.Count(j.ID, p)
			r = patternbudget.Room(lim, scope.PatternRoomPerYield, e) - int64(q)
		}
		if !n.seen.MaybeSeen(j.ID, urls[i]) {
			if r <= 0 {
				left[p] = r
				j.Stats.OutOfScope.Add(1)
				n.patternDropped(j, cd, p, lim)
				continue
			}
			r--
		}
		left[p] = r
		ku, kk, pats = append(ku, urls[i]), append(kk, cd), append(pats, p)
	}
	return ku, kk, pats
}

// patternDropped logs cd, dropped for want of room in its pattern p.
func (n *Node) patternDropped(j *job.Job, cd candidate, p string, lim int) {
	if !n.clog.on() {
		return
	}
	_, e := n.patterns.Count(j.ID, p)
	n.clog.scopeDropped(j, cd, scope.PatternRejection(cd.u, patternbudget.Room(lim, scope.PatternRoomPerYield, e), lim))
}

// earnRoom judges the page at u (job j's item it), whose links queued
// queued, for its pattern's room: if it yielded, the pattern earns
// scope.PatternRoomPerYield more URLs. A page not read as HTML (a
// redirect, a PDF) or a duplicate earns nothing.
func (n *Node) earnRoom(j *job.Job, it frontier.Item, u *url.URL, queued []frontier.Item, text textPrint, via *viaText) {
	if !text.read || text.dup || j.Scope.PatternLimit() <= 0 {
		return
	}
	p := scope.Pattern(u)
	if queuedOutside(p, it.Host, queued) || textYields(text, via) {
		n.patterns.Earn(j.ID, p)
	}
}

// queuedOutside reports whether queued has a URL of host whose pattern
// is not p.
func queuedOutside(p, host string, queued []frontier.Item) bool {
	for _, q := range queued {
		if q.Host != host {
			continue
		}
		if u, err := url.Parse(q.URL); err == nil && scope.Pattern(u) != p {
			return true
		}
	}
	return false
}
