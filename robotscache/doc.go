// Package robotscache is a crawler's keeper of robots.txt: Keeper, the one
// owner of every origin's robots.txt, which says when to fetch it, keeps
// its record in the store (store.RobotsKey; layout in record.go), caches
// its policy (package robots parses and applies it), retries it and
// applies the outage rule (RFC 9309 2.3.1.4, 2.4).
//
// A *Keeper is safe for concurrent use. Its only I/O is the store; its
// clock is injected.
//
// For each leased URL, in its host's politeness slot, a crawler asks:
//
//	v := keeper.Check(host, origin) // host: urlnorm.HostKey; origin: "scheme://host:port"
//	switch v.Action {
//	case robotscache.Apply: // v.Policy.Allowed(agent, u); v.Policy.CrawlDelay(agent) to the frontier
//	case robotscache.Wait:  // put the URL back untouched, not before v.Until
//	case robotscache.Fetch: // fetch v.URL in this slot, then put the URL back:
//		if err := keeper.Begin(host, origin); err != nil { keeper.Cancel(host, origin); ... }
//		resp, err := fetch(v.URL) // archive it
//		res, err := keeper.Done(batch, host, origin, robotscache.Answer{...})
//		// commit batch with the lease's completion; res.Redirect: the next hop is
//		// fetched in the host's next slot; res.Policy: settled (feed its Crawl-delay);
//		// res.Unavailable: nothing until res.RetryAt.
//	}
//
// v.Attempts and v.OutageSince let a caller give up on a host whose
// robots.txt stays unreachable; the keeper itself never drops a host.
//
// Invariants: at most one Fetch verdict per origin is outstanding (others
// get Wait with Until = now) until Done, Cancel or ClaimTimeout; a request
// is recorded durably before it is sent, so a restart that finds it
// unanswered waits LostAnswerWait before contacting the origin again.
package robotscache
