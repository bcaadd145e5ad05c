package testweb

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// ChaosJudgeOptions say what crawl of a chaos web is judged, and how.
type ChaosJudgeOptions struct {
	// Seeds are the crawl's entry URLs; nil means the web's Seeds.
	Seeds []string
	// Gap is the crawl's minimum delay between two requests to one host.
	Gap time.Duration
	// FetchTimeout is the crawl's bound on one fetch: what a page that
	// never answers costs.
	FetchTimeout time.Duration
	// MaxRetries is how often the crawl may retry a URL whose answer did
	// not come whole (a time-out, a reset, a short body).
	MaxRetries int
	// MaxDepth is the crawl's link depth limit; zero means unlimited.
	MaxDepth int
	// MaxPerIP is the most requests one IP may see at once. Zero means 2.
	MaxPerIP int
	// Slack is added to the bound: start-up, the last fetch's time-out,
	// the crawl's own retries. Zero means 5s.
	Slack time.Duration
	// TrapCap is the most fetches a calendar may cost one host. Zero means 20.
	TrapCap int
	// Rules, if set, makes the critical path follow the crawler's own
	// stated gap rules (Rules): its adaptive gap and its backoff after
	// failures, which a polite crawler must spend too, rather than one gap
	// between requests whatever they met. The naive path is reported
	// beside it (ChaosVerdict.Naive).
	Rules *GapRules
	// Restarts is how many times the node restarted during the crawls:
	// each may ask a host's robots.txt once more (its cache is in memory).
	Restarts int
	// Took is how long the crawl ran; Ended whether it ended by itself.
	Took  time.Duration
	Ended bool
}

// GapRules are a crawler's stated politeness, as the critical path of
// ChaosJudgeOptions.Rules follows it: the gap between two requests to a
// host counts from the end of the first and is the largest of the min
// delay, the host's Crawl-delay, and AdaptiveFactor x the first's response
// time (at most MaxAdaptive); a failure (time-out, reset, cut body, 429,
// 503) sets the host's backoff to twice the larger of it and that gap (at
// most MaxDelay), a success halves it (to nothing once it is no longer
// above the gap), and the gap is at least the backoff and any Retry-After.
type GapRules struct {
	AdaptiveFactor int
	MaxAdaptive    time.Duration
	MaxDelay       time.Duration
}

// ChaosVerdict is what JudgeChaos found.
type ChaosVerdict struct {
	Seed     int64
	Hosts    int
	Requests int
	// Reachable is the URLs a polite, complete crawler fetches; Fetched
	// how many of them were; Unreachable the URLs unreachable by design.
	Reachable, Fetched, Unreachable int
	// GivenUp counts reachable URLs not fetched on hosts that asked the
	// crawl to wait longer than its horizon (a Retry-After of hours on a
	// page: a polite crawler honours it for the whole host, so a one-shot
	// crawl gives the rest of the host up). They do not count as missed;
	// Coverage is Fetched / (Reachable - GivenUp).
	GivenUp  int
	Coverage float64
	// Critical is the polite critical path, CriticalHost the host that
	// sets it; Bound = 1.3 x Critical + Horizon + Slack.
	Critical     time.Duration
	CriticalHost string
	// Naive is the critical path with one gap between requests whatever
	// they met (no adaptive gap, no backoff): what Critical is without
	// ChaosJudgeOptions.Rules.
	Naive time.Duration
	Bound time.Duration
	Took  time.Duration
	Ratio float64 // Took / Critical
	Ended bool
	// Counts per invariant broken.
	Gaps, Concurrency, Robots, Waits, Repeats, Traps int
	Failures                                         []ChaosFailure
}

// ChaosFailure is one broken invariant, with the host's draws so that a
// failing seed says why.
type ChaosFailure struct {
	Invariant string // "ends", "bound", "gap", "concurrency", "robots", "retry-after", "coverage", "repeat", "trap"
	Host      string
	Drew      string // the host's behaviours and shape
	URL       string
	Detail    string
}

func (f ChaosFailure) String() string {
	s := "[" + f.Invariant + "]"
	if f.Host != "" {
		s += " " + f.Host + " (" + f.Drew + ")"
	}
	if f.URL != "" {
		s += ": " + f.URL
	}
	return s + ": " + f.Detail
}

// OK reports whether every invariant held.
func (v *ChaosVerdict) OK() bool { return len(v.Failures) == 0 }

// String is the verdict as a user reads it: figures, then each failure.
func (v *ChaosVerdict) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "chaos web %d: %d hosts, %d requests; reachable %d, fetched %d, given up past the horizon %d, coverage %.3f, unreachable by design %d\n",
		v.Seed, v.Hosts, v.Requests, v.Reachable, v.Fetched, v.GivenUp, v.Coverage, v.Unreachable)
	ended := "ended by itself"
	if !v.Ended {
		ended = "did NOT end by itself"
	}
	fmt.Fprintf(&b, "took %v (%s) = %.2f x the polite critical path %v (%s); bound %v; %.2f x the naive path %v (one gap between requests, no backoff)\n",
		v.Took.Round(time.Millisecond), ended, v.Ratio, v.Critical.Round(time.Millisecond), v.CriticalHost, v.Bound.Round(time.Millisecond),
		ratio(v.Took, v.Naive), v.Naive.Round(time.Millisecond))
	fmt.Fprintf(&b, "gaps broken %d, concurrency %d, robots violations %d, Retry-After broken %d, repeats %d, trap overruns %d\n",
		v.Gaps, v.Concurrency, v.Robots, v.Waits, v.Repeats, v.Traps)
	if v.OK() {
		b.WriteString("every invariant held\n")
		return b.String()
	}
	fmt.Fprintf(&b, "%d failures:\n", len(v.Failures))
	for i, f := range v.Failures {
		if i == 40 {
			fmt.Fprintf(&b, "  ... and %d more\n", len(v.Failures)-i)
			break
		}
		fmt.Fprintf(&b, "  %s\n", f)
	}
	return b.String()
}

// ChaosHostInfo is what one chaos host drew.
type ChaosHostInfo struct {
	Name  string
	Draws []string
}

// ChaosHosts lists what each host of a chaos web drew; nil for other webs.
func (w *Web) ChaosHosts() []ChaosHostInfo {
	var out []ChaosHostInfo
	for _, h := range w.hosts {
		if h.chaos != nil {
			out = append(out, ChaosHostInfo{h.name, slices.Clone(h.chaos.draws)})
		}
	}
	return out
}

// chaosSeeds are the home pages of every third host; the others are
// reached by the links from each home page to the next host's.
func (w *Web) chaosSeeds() []string {
	var out []string
	for _, h := range w.hosts {
		if h.idx%3 == 0 {
			out = append(out, w.urlOf(h, "/"))
		}
	}
	return out
}

// open reports whether a polite crawler ever gets h's robots rules
// within its horizon.
func (c *chaosHost) open() bool {
	return c.robots != chaosRobots500Forever && c.robots != chaosRobotsHours
}

// settlingRobots is the number of robots.txt requests up to the one that
// settles the rules.
func (c *chaosHost) settlingRobots() int {
	switch c.robots {
	case chaosRobots503Once, chaosRobots503Retry, chaosRobots429Date, chaosRobotsTimeout:
		return 2
	}
	return 1
}

// disallowed reports whether h's rules forbid pq.
func (c *chaosHost) disallowed(pq string) bool {
	return c.robots != chaosRobots404 && strings.HasPrefix(pq, "/private/")
}

// chaosTruth is a chaos web's ground truth for one crawl.
type chaosTruth struct {
	reach   map[string]*chaosPage // URL → page a polite, complete crawler fetches
	depth   map[string]int
	unreach map[string]string // URL → why not
	start   map[*host]time.Duration
}

func (w *Web) chaosTruth(seeds []string, maxDepth int) *chaosTruth {
	t := &chaosTruth{reach: map[string]*chaosPage{}, depth: map[string]int{}, unreach: map[string]string{}}
	type item struct {
		p     *chaosPage
		depth int
	}
	var queue []item
	push := func(p *chaosPage, depth int) {
		u := w.urlOf(p.host, p.pq)
		c := p.host.chaos
		switch {
		case !c.open():
			t.unreach[u] = "host never opens: robots.txt " + c.robots
			return
		case c.disallowed(p.pq):
			t.unreach[u] = "disallowed by robots.txt"
			return
		case p.does == chaosPageCalendar:
			t.unreach[u] = "calendar trap"
			return
		case maxDepth > 0 && depth > maxDepth:
			t.unreach[u] = "beyond the depth limit"
			return
		}
		if d, ok := t.depth[u]; ok && d <= depth {
			return
		}
		t.reach[u], t.depth[u] = p, depth
		delete(t.unreach, u)
		queue = append(queue, item{p, depth})
	}
	for _, s := range seeds {
		h, _, pq, err := w.lookup(s)
		if err != nil || h.chaos == nil || h.chaos.pages[pq] == nil {
			continue
		}
		push(h.chaos.pages[pq], 0)
	}
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		if it.p.to != nil {
			push(it.p.to, it.depth) // a redirect adds no depth
			continue
		}
		if it.p.terminal() {
			continue
		}
		for _, l := range it.p.links {
			push(l, it.depth+1)
		}
	}
	return t
}

// chaosPath is one host's polite critical path from its first request,
// and the part of it up to its settled robots.txt: the requests a polite,
// complete crawler must make of it (robots.txt until it settles, each
// reachable URL, and the retries the judge allows a URL that timed out or
// was reset: a crawler that retries spends them), each as long as its
// answer takes, with the gaps between them. Without rules, one gap (the
// min delay or Crawl-delay) from start to start, plus the waits the host
// forces; with rules, the gaps those rules give (GapRules).
func chaosPath(h *host, reach []*chaosPage, o ChaosJudgeOptions) (robots, total time.Duration) {
	c := h.chaos
	if !c.open() {
		return 0, 0
	}
	type request struct {
		took   time.Duration // until the answer ends
		failed bool          // a time-out, a reset, a cut body, a 429 or 503
		wait   time.Duration // a Retry-After
	}
	var reqs []request
	switch c.robots {
	case chaosRobots503Once:
		reqs = append(reqs, request{failed: true})
	case chaosRobots503Retry, chaosRobots429Date:
		reqs = append(reqs, request{failed: true, wait: c.robotsWait})
	case chaosRobotsTimeout:
		reqs = append(reqs, request{took: o.FetchTimeout, failed: true})
	}
	reqs = append(reqs, request{})
	settled := len(reqs)
	// Retries go after the host's other URLs, as a polite crawler spaces
	// them (the node queues a retry at its host's tail).
	var retries []request
	for _, p := range reach {
		switch p.does {
		case chaosPage429Once:
			reqs = append(reqs, request{failed: true, wait: p.wait}, request{})
		case chaosPageTimeout:
			reqs = append(reqs, request{took: o.FetchTimeout, failed: true})
			for range o.MaxRetries {
				retries = append(retries, request{took: o.FetchTimeout, failed: true})
			}
		case chaosPageReset:
			reqs = append(reqs, request{failed: true})
			for range o.MaxRetries {
				retries = append(retries, request{failed: true})
			}
		case chaosPageLying:
			reqs = append(reqs, request{failed: true})
		case chaosPageDrip:
			reqs = append(reqs, request{took: 900 * time.Millisecond})
		default:
			reqs = append(reqs, request{})
		}
	}
	reqs = append(reqs, retries...)
	g := max(o.Gap, c.crawlDelay)
	var backoff time.Duration
	for i, q := range reqs {
		took := q.took + h.latency
		var gap time.Duration
		if r := o.Rules; r == nil {
			// Start to start: one gap, or the answer's time if longer.
			gap = max(g-took, 0)
		} else {
			base := max(g, min(time.Duration(r.AdaptiveFactor)*took, r.MaxAdaptive))
			switch {
			case q.failed:
				backoff = min(max(2*backoff, 2*base), r.MaxDelay)
			case backoff > 0:
				if backoff /= 2; backoff <= base {
					backoff = 0
				}
			}
			gap = max(base, backoff)
		}
		gap = max(gap, q.wait-took)
		if i == settled-1 {
			robots = total + took + gap
		}
		total += took
		if i < len(reqs)-1 {
			total += gap
		}
	}
	return robots, total
}

// JudgeChaos judges a crawl of a chaos web from the server's request log
// and the waits its hosts asked for.
func JudgeChaos(srv *Server, o ChaosJudgeOptions) *ChaosVerdict {
	w := srv.Web()
	if w.chaos == nil {
		panic("testweb: JudgeChaos of a web Chaos did not make")
	}
	if o.Seeds == nil {
		o.Seeds = w.Seeds()
	}
	if o.MaxPerIP == 0 {
		o.MaxPerIP = 2
	}
	if o.Slack == 0 {
		o.Slack = 5 * time.Second
	}
	if o.TrapCap == 0 {
		o.TrapCap = 20
	}
	log := srv.Log()
	t := w.chaosTruth(o.Seeds, o.MaxDepth)
	v := &ChaosVerdict{Seed: w.chaos.seed, Hosts: len(w.hosts), Requests: len(log), Reachable: len(t.reach),
		Unreachable: len(t.unreach), Took: o.Took, Ended: o.Ended}
	drew := func(h *host) string { return strings.Join(h.chaos.draws, ", ") }
	fail := func(inv string, h *host, u, format string, args ...any) {
		f := ChaosFailure{Invariant: inv, URL: u, Detail: fmt.Sprintf(format, args...)}
		if h != nil {
			f.Host, f.Drew = h.name, drew(h)
		}
		v.Failures = append(v.Failures, f)
	}
	var t0 time.Time
	if len(log) > 0 {
		t0 = log[0].Start
	}
	at := func(q Request) string { return fmt.Sprintf("+%v", q.Start.Sub(t0).Round(time.Millisecond)) }

	// The critical path: each host's from its earliest discovery.
	perHost := map[*host][]*chaosPage{}
	for _, h := range w.hosts {
		for _, p := range h.chaos.order {
			if t.reach[w.urlOf(h, p.pq)] != nil {
				perHost[h] = append(perHost[h], p)
			}
		}
	}
	start := map[*host]time.Duration{}
	for _, s := range o.Seeds {
		if h, _, _, err := w.lookup(s); err == nil {
			start[h] = 0
		}
	}
	for range w.hosts { // relax along home-to-home links, at most once per host
		for _, h := range w.hosts {
			s, ok := start[h]
			if !ok || !h.chaos.open() {
				continue
			}
			robots, _ := chaosPath(h, perHost[h], o)
			for _, l := range h.chaos.pages["/"].links {
				if l.host != h && t.reach[w.urlOf(h, "/")] != nil {
					if ls, ok := start[l.host]; !ok || s+robots+h.latency < ls {
						start[l.host] = s + robots + h.latency
					}
				}
			}
		}
	}
	for _, h := range w.hosts {
		_, path := chaosPath(h, perHost[h], o)
		if d := start[h] + path; len(perHost[h]) > 0 && d > v.Critical {
			v.Critical, v.CriticalHost = d, h.name
		}
		naive := o
		naive.Rules = nil
		_, path = chaosPath(h, perHost[h], naive)
		if d := start[h] + path; len(perHost[h]) > 0 {
			v.Naive = max(v.Naive, d)
		}
	}
	v.Bound = time.Duration(1.3*float64(v.Critical)) + w.chaos.opts.Horizon + o.Slack
	if v.Critical > 0 {
		v.Ratio = o.Took.Seconds() / v.Critical.Seconds()
	}
	if !o.Ended {
		fail("ends", nil, "", "the crawl did not end by itself within %v (bound %v)", o.Took.Round(time.Millisecond), v.Bound.Round(time.Millisecond))
	} else if o.Took > v.Bound {
		fail("bound", w.byName[v.CriticalHost], "", "the crawl took %v, above its bound %v = 1.3 x critical path %v + horizon %v + slack %v",
			o.Took.Round(time.Millisecond), v.Bound.Round(time.Millisecond), v.Critical.Round(time.Millisecond), w.chaos.opts.Horizon, o.Slack)
	}

	// Per host: gaps, concurrency, robots, repeats, traps.
	byHost := map[*host][]Request{}
	byIP := map[string][]Request{}
	fetched := map[string]bool{}
	for _, q := range log {
		h := w.byName[q.Host]
		if h == nil || h.chaos == nil {
			fail("scope", nil, q.Host+q.Path, "a request for a host the web does not have")
			continue
		}
		byHost[h] = append(byHost[h], q)
		byIP[h.ip.String()] = append(byIP[h.ip.String()], q)
	}
	for _, h := range w.hosts {
		reqs := byHost[h]
		slices.SortStableFunc(reqs, func(a, b Request) int { return a.Start.Compare(b.Start) })
		c := h.chaos
		g := max(o.Gap, c.crawlDelay)
		for i := 1; i < len(reqs); i++ {
			if d := reqs[i].Start.Sub(reqs[i-1].Start); d < g {
				v.Gaps++
				fail("gap", h, w.urlOf(h, requestPQ(reqs[i])), "started %v after %s (at %s), want at least %v", d, requestPQ(reqs[i-1]), at(reqs[i-1]), g)
			}
		}
		if n, peak := maxConcurrency(reqs); n > 1 {
			v.Concurrency++
			fail("concurrency", h, "", "%d requests in flight at once, want 1:%s", n, inFlight(peak))
		}
		var robotsN int
		var ready time.Time // end of the robots answer that settled the rules
		counts := map[string]int{}
		calendar := 0
		for _, q := range reqs {
			pq := requestPQ(q)
			u := w.urlOf(h, pq)
			if pq == "/robots.txt" {
				robotsN++
				if c.open() && robotsN == c.settlingRobots() && !q.End.IsZero() {
					ready = q.End
				}
				allowed := c.settlingRobots() + o.Restarts
				if !c.open() {
					allowed = 1 + o.MaxRetries + 2 + o.Restarts // a crawler's own retries before it gives up
				}
				if robotsN == allowed+1 {
					v.Repeats++
					fail("repeat", h, u, "robots.txt requested %d times or more (at %s), want at most %d", robotsN, at(q), allowed)
				}
				continue
			}
			fetched[u] = true
			switch {
			case !c.open():
				v.Robots++
				fail("robots", h, u, "requested at %s although robots.txt never opened (%s)", at(q), c.robots)
			case ready.IsZero() || q.Start.Before(ready):
				v.Robots++
				fail("robots", h, u, "requested at %s before robots.txt was read", at(q))
			case c.disallowed(pq):
				v.Robots++
				fail("robots", h, u, "requested at %s: disallowed by robots.txt", at(q))
			}
			if isTrapPath(pq) {
				if calendar++; calendar == o.TrapCap+1 {
					v.Traps++
					fail("trap", h, u, "calendar fetched more than %d times (the %dth at %s)", o.TrapCap, calendar, at(q))
				}
			}
			counts[u]++
			allowed := 1
			if pq == "/sitemap.xml" {
				// A sitemap file read for one crawl is shared with another
				// in memory only: each restart may read it once more, as
				// robots.txt (a known limit, docs/design/overview.md,
				// "Nodes and jobs").
				allowed += o.Restarts
			}
			if p := c.pages[pq]; p != nil {
				switch p.does {
				case chaosPage429Once:
					allowed = 2
				case chaosPageTimeout, chaosPageReset, chaosPageLying:
					allowed = 1 + o.MaxRetries
				}
			}
			if counts[u] == allowed+1 {
				v.Repeats++
				p := c.pages[pq]
				does := "a page the web does not list"
				if p != nil {
					does = p.does
				}
				fail("repeat", h, u, "fetched a %dth time at %s (%s), after an answer; want at most %d", counts[u], at(q), does, allowed)
			}
		}
	}
	for ip, reqs := range byIP {
		if n, peak := maxConcurrency(reqs); n > o.MaxPerIP {
			v.Concurrency++
			fail("concurrency", nil, "", "IP %s: %d requests in flight at once, want at most %d:%s", ip, n, o.MaxPerIP, inFlight(peak))
		}
	}

	// Retry-After.
	for _, wt := range srv.ChaosWaits() {
		h := w.byName[wt.Host]
		for _, q := range byHost[h] {
			if !q.Start.After(wt.At) || !q.Start.Before(wt.Until) {
				continue
			}
			if !wt.HostWide && w.urlOf(h, requestPQ(q)) != wt.URL {
				continue
			}
			v.Waits++
			scope := "the URL"
			if wt.HostWide {
				scope = "the host"
			}
			fail("retry-after", h, w.urlOf(h, requestPQ(q)), "requested at %s, %v before %s's Retry-After (%s, answered at %s) let %s be asked again",
				at(q), wt.Until.Sub(q.Start).Round(time.Millisecond), wt.URL, wt.Behaviour, fmt.Sprintf("+%v", wt.At.Sub(t0).Round(time.Millisecond)), scope)
		}
	}

	// Coverage. A host that asked for a wait past the horizon has what
	// was not fetched of it given up, not missed.
	parked := map[*host]bool{}
	for _, wt := range srv.ChaosWaits() {
		if wt.Until.Sub(wt.At) > w.chaos.opts.Horizon {
			parked[w.byName[wt.Host]] = true
		}
	}
	var missing []string
	for u, p := range t.reach {
		switch {
		case fetched[u]:
			v.Fetched++
		case parked[p.host]:
			v.GivenUp++
		default:
			missing = append(missing, u)
		}
	}
	slices.Sort(missing)
	v.Coverage = 1
	if n := v.Reachable - v.GivenUp; n > 0 {
		v.Coverage = float64(v.Fetched) / float64(n)
	}
	for _, u := range missing {
		p := t.reach[u]
		fail("coverage", p.host, u, "reachable at depth %d (%s) but never requested", t.depth[u], p.does)
	}
	return v
}

func ratio(a, b time.Duration) float64 {
	if b <= 0 {
		return 0
	}
	return a.Seconds() / b.Seconds()
}
