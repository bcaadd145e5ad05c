package testweb

// maxRedirectHops is the redirect chain cap of the crawlable set.
const maxRedirectHops = 5

// Reachable returns the crawlable set from seeds for a crawler with the
// given agent: the canonical URLs a polite crawler should request, robots
// files aside. maxDepth bounds link depth from the seeds (seeds are depth
// 0); zero means unlimited.
//
// The set is a breadth-first walk over followable links: <a href> outside
// comments and scripts, not rel=nofollow, on hosts within the web's domain,
// allowed by the host's robots.txt for agent (so a 500-forever host
// contributes nothing), and not calendar trap pages. Redirecting URLs are
// in the set, and so are their targets up to maxRedirectHops redirects
// away; a redirect does not add link depth. Linked URLs that answer 404 are
// in the set (they are fetched once). Links on hostile pages, PDFs and PNGs
// are not followed; a hostile host's home page is in the set when linked.
//
// Reachable counts no sitemap: a sitemap-only page (Page.SitemapOnly) is
// never in the set. ReachableWithSitemaps counts them.
func (w *Web) Reachable(seeds []string, agent string, maxDepth int) map[string]bool {
	return w.reachable(seeds, agent, maxDepth, w.opts.Domain, false)
}

// ReachableWithSitemaps is Reachable for a crawler that reads sitemaps:
// once it reaches a host, the pages the host's sitemaps list (and the
// sitemaps.org host rule allows) join the walk one link deeper than that
// first URL, under the same robots and depth rules. Sitemap-only pages
// are reachable only so.
func (w *Web) ReachableWithSitemaps(seeds []string, agent string, maxDepth int) map[string]bool {
	return w.reachable(seeds, agent, maxDepth, w.opts.Domain, true)
}

func (w *Web) reachable(seeds []string, agent string, maxDepth int, domain string, sitemaps bool) map[string]bool {
	type item struct {
		h           *host
		r           *resource // nil: a URL the web does not know (404)
		pq          string
		depth, hops int
	}
	type state struct{ depth, hops int }
	best := make(map[string]state)
	queue := make([]item, 0, 1024)
	reached := make(map[*host]bool) // hosts whose sitemaps were read
	var push func(it item)
	push = func(it item) {
		if !inDomain(it.h.name, domain) || isTrapPath(it.pq) || it.r != nil && it.r.kind == kindTrap ||
			it.h.robots.disallowed(it.pq, agent) || maxDepth > 0 && it.depth > maxDepth {
			return
		}
		key := w.urlOf(it.h, it.pq)
		if b, ok := best[key]; ok && (b.depth < it.depth || b.depth == it.depth && b.hops <= it.hops) {
			return
		}
		best[key] = state{it.depth, it.hops}
		queue = append(queue, it)
		if sitemaps && !reached[it.h] {
			reached[it.h] = true
			for _, r := range w.sitemapListed(it.h) {
				push(item{h: r.host, r: r, pq: r.pq, depth: it.depth + 1})
			}
		}
	}
	for _, s := range seeds {
		h, r, pq, err := w.lookup(s)
		if err != nil {
			continue // not a URL of this web: nothing to crawl
		}
		push(item{h: h, r: r, pq: pq})
	}
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		r := it.r
		if r == nil {
			continue
		}
		switch r.kind {
		case kindRedirect:
			if it.hops < maxRedirectHops {
				push(item{h: r.to.host, r: r.to, pq: r.to.pq, depth: it.depth, hops: it.hops + 1})
			}
		case kindHTML:
			for _, l := range r.body.links {
				if l.followable() {
					push(item{h: l.to.host, r: l.to, pq: l.to.pq, depth: it.depth + 1})
				}
			}
		}
	}
	out := make(map[string]bool, len(best))
	for k := range best {
		out[k] = true
	}
	return out
}
