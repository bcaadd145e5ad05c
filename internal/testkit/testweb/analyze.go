package testweb

import (
	"cmp"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"
)

// AnalyzeOptions say what crawl a log is judged against.
type AnalyzeOptions struct {
	// Seeds are the crawl's entry URLs.
	Seeds []string
	// Agent is the crawler's robots product token, e.g. "trawl". If set,
	// every request's User-Agent must contain it.
	Agent string
	// Gap is the crawl's minimum delay between two requests to one host;
	// a host's Crawl-delay raises it for that host.
	Gap time.Duration
	// MaxDepth is the crawl's link depth limit; zero means unlimited.
	MaxDepth int
	// Domain limits the crawl to a domain and its subdomains. Empty means
	// the web's domain.
	Domain string
	// MaxParallel is the most requests one host may see at once. Zero means 1.
	MaxParallel int
	// MaxParallelPerIP is the most requests one shared IP may see at once.
	// Zero means it is not checked.
	MaxParallelPerIP int
	// MinCoverage, if set, makes a coverage below it a problem.
	MinCoverage float64
	// Sitemaps judges a crawler that reads sitemaps: Reachable then
	// holds sitemap-only pages (see ReachableWithSitemaps). Requests for
	// sitemap files (/sitemap.xml and the web's own sitemap paths) are
	// never Extra: a crawler may look for /sitemap.xml as it does for
	// robots.txt. Nor are requests for the other files a crawler may ask
	// every host for (isSiteFile: /.well-known/tdmrep.json); those are
	// held to robots.txt and to one request each, as pages are.
	Sitemaps bool
}

// Report is what Analyze found in a request log.
type Report struct {
	Hosts            []HostReport // one per host of the web that was requested or has crawlable URLs, web order
	SharedIPs        []IPReport   // one per shared address
	RobotsViolations []Violation  // requests robots.txt forbade (or came before it was read)
	Repeats          []Repeat     // URLs (canonical) requested more than once, robots files aside
	RobotsRepeats    []Repeat     // robots files requested again after an answer that needed no retry
	Reachable        map[string]bool
	Fetched          map[string]bool // canonical URLs requested, robots files aside
	Missing          []string        // reachable but not fetched, sorted
	Extra            []string        // fetched, allowed, not reachable, not trap, not on hostile hosts; sorted
	Coverage         float64         // |Reachable ∩ Fetched| / |Reachable|; 1 if nothing is reachable
	TrapFetches      map[string]int  // host → requests to trap pages of any kind
	// TrapsByKind counts trap fetches by kind (TrapCalendar, ...), then by
	// host. A session-ID host's page counts as fetched (Fetched holds it
	// without its session ID) by the first request for any variant of it;
	// each later one is a trap fetch.
	TrapsByKind map[string]map[string]int
	OutOfScope  []Request // requests for unknown hosts or hosts outside Domain
	WrongIP     []Request // requests that arrived on another host's address
	BadAgent    []Request // requests whose User-Agent lacks Agent
	Requests    int       // log entries analysed

	opts    AnalyzeOptions
	web     *Web
	perHost map[string]int     // host → reachable URLs
	first   map[string]Request // canonical URL → its first request
}

// HostReport is one host's share of the log.
type HostReport struct {
	Host           string
	IP             netip.Addr
	Requests       int // robots files included
	RobotsRequests int
	TrapFetches    int
	Reachable      int           // crawlable URLs on the host
	MinGap         time.Duration // least time between consecutive request starts; 0 with fewer than two requests
	ExpectedGap    time.Duration // max(Gap, the host's Crawl-delay)
	GapViolations  []GapViolation
	MaxConcurrency int       // most requests in flight at once
	Peak           []Request // requests in flight at once when MaxConcurrency was first reached
}

// GapViolation is two consecutive requests to one host started too close.
type GapViolation struct {
	Host          string
	First, Second Request
	Gap, Want     time.Duration
}

// IPReport is the concurrency one shared IP address saw.
type IPReport struct {
	IP             netip.Addr
	Hosts          []string
	MaxConcurrency int
	Peak           []Request // requests in flight at once when MaxConcurrency was first reached
}

// Violation is a request that should not have been made.
type Violation struct {
	Request Request
	URL     string
	Reason  string
}

// Repeat is a URL requested more than once.
type Repeat struct {
	URL   string
	Count int
	First Request // the URL's first request
	// Settled is the latest answer before the repeat that needed no retry:
	// the one a crawler that kept it would not have asked again for. For a
	// page it is First; for robots.txt it may come later (after a 429 or a
	// 5xx, say).
	Settled Request
}

// Analyze judges a crawl from the web's request log alone.
func Analyze(web *Web, log []Request, opts AnalyzeOptions) *Report {
	if opts.Domain == "" {
		opts.Domain = web.opts.Domain
	}
	opts.Domain = canonHost(opts.Domain)
	if opts.MaxParallel == 0 {
		opts.MaxParallel = 1
	}
	rep := &Report{
		Reachable:   web.reachable(opts.Seeds, opts.Agent, opts.MaxDepth, opts.Domain, opts.Sitemaps),
		Fetched:     make(map[string]bool),
		TrapFetches: make(map[string]int),
		TrapsByKind: make(map[string]map[string]int),
		Requests:    len(log),
		opts:        opts,
		web:         web,
		perHost:     make(map[string]int),
		first:       make(map[string]Request),
	}
	for _, h := range web.hosts {
		prefix := web.urlOf(h, "/")
		for k := range rep.Reachable {
			if strings.HasPrefix(k, prefix) {
				rep.perHost[h.name]++
			}
		}
	}

	byHost := make(map[*host][]Request)
	for _, q := range log {
		h := web.byName[q.Host]
		if h == nil || !inDomain(h.name, opts.Domain) {
			rep.OutOfScope = append(rep.OutOfScope, q)
			continue
		}
		byHost[h] = append(byHost[h], q)
		if q.IP.IsValid() && q.IP != h.ip {
			rep.WrongIP = append(rep.WrongIP, q)
		}
		if opts.Agent != "" && !strings.Contains(strings.ToLower(q.UserAgent), strings.ToLower(opts.Agent)) {
			rep.BadAgent = append(rep.BadAgent, q)
		}
	}

	counts := make(map[string]int)
	for _, h := range web.hosts {
		reqs := byHost[h]
		if len(reqs) == 0 && rep.perHost[h.name] == 0 {
			continue
		}
		slices.SortStableFunc(reqs, func(a, b Request) int { return a.Start.Compare(b.Start) })
		hr := HostReport{Host: h.name, IP: h.ip, Requests: len(reqs), Reachable: rep.perHost[h.name],
			ExpectedGap: max(opts.Gap, h.robots.crawlDelay())}
		for i := 1; i < len(reqs); i++ {
			gap := reqs[i].Start.Sub(reqs[i-1].Start)
			if i == 1 || gap < hr.MinGap {
				hr.MinGap = gap
			}
			if gap < hr.ExpectedGap {
				hr.GapViolations = append(hr.GapViolations, GapViolation{Host: h.name, First: reqs[i-1], Second: reqs[i], Gap: gap, Want: hr.ExpectedGap})
			}
		}
		hr.MaxConcurrency, hr.Peak = maxConcurrency(reqs)
		rep.analyzeRobots(h, reqs, &hr, counts)
		rep.Hosts = append(rep.Hosts, hr)
	}
	for _, k := range sortedKeys(countKeys(counts)) {
		if counts[k] > 1 {
			rep.Repeats = append(rep.Repeats, Repeat{URL: k, Count: counts[k], First: rep.first[k], Settled: rep.first[k]})
		}
	}

	// Shared IPs.
	ipHosts := make(map[netip.Addr][]*host)
	for _, h := range web.hosts {
		ipHosts[h.ip] = append(ipHosts[h.ip], h)
	}
	for _, h := range web.hosts {
		group := ipHosts[h.ip]
		if len(group) < 2 || group[0] != h {
			continue
		}
		ir := IPReport{IP: h.ip}
		var reqs []Request
		for _, g := range group {
			ir.Hosts = append(ir.Hosts, g.name)
			reqs = append(reqs, byHost[g]...)
		}
		ir.MaxConcurrency, ir.Peak = maxConcurrency(reqs)
		rep.SharedIPs = append(rep.SharedIPs, ir)
	}

	hit := 0
	for k := range rep.Reachable {
		if rep.Fetched[k] {
			hit++
		} else {
			rep.Missing = append(rep.Missing, k)
		}
	}
	slices.Sort(rep.Missing)
	rep.Coverage = 1
	if len(rep.Reachable) > 0 {
		rep.Coverage = float64(hit) / float64(len(rep.Reachable))
	}
	slices.Sort(rep.Extra)
	return rep
}

func countKeys(m map[string]int) map[string]bool {
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}

// requestPQ returns the canonical path and query of a logged request.
func requestPQ(q Request) string {
	uri := q.Path
	if !strings.HasPrefix(uri, "/") {
		if u, err := url.Parse(uri); err == nil {
			uri = u.RequestURI()
		}
	}
	return canonRequestURI(uri)
}

// analyzeRobots walks one host's requests (sorted by start) for robots
// readiness, violations, repeats, fetched URLs and trap fetches.
func (rep *Report) analyzeRobots(h *host, reqs []Request, hr *HostReport, counts map[string]int) {
	var readyAt time.Time             // earliest end of a robots answer that settled the rules
	final := make(map[string]Request) // robots path → the latest answer that needed no retry
	robotsCount := make(map[string]int)
	pageCount := make(map[string]int) // on a session-ID host: page without session → requests
	for _, q := range reqs {
		if q.End.IsZero() {
			continue
		}
		pq := requestPQ(q)
		if isRobotsPath(pq) && settles(h, pq, q.Status) && (readyAt.IsZero() || q.End.Before(readyAt)) {
			readyAt = q.End
		}
	}
	for _, q := range reqs {
		pq := requestPQ(q)
		key := rep.web.urlOf(h, pq)
		if isRobotsPath(pq) {
			hr.RobotsRequests++
			robotsCount[key]++
			if robotsCount[key] == 1 {
				rep.first[key] = q
			}
			if settled, ok := final[key]; ok {
				rep.RobotsRepeats = append(rep.RobotsRepeats, Repeat{URL: key, Count: robotsCount[key], First: rep.first[key], Settled: settled})
			}
			if q.Status != http.StatusTooManyRequests && q.Status < 500 {
				final[key] = q
			}
			continue
		}
		counts[key]++
		if counts[key] == 1 {
			rep.first[key] = q
		}
		kind := h.trapKind(pq)
		page := key
		if h.session != noSession && kind == "" {
			page = rep.web.urlOf(h, stripSession(pq))
			if pageCount[page]++; pageCount[page] > 1 {
				kind = TrapSessionID
			}
		}
		rep.Fetched[page] = true
		if kind != "" {
			hr.TrapFetches++
			rep.TrapFetches[h.name]++
			if rep.TrapsByKind[kind] == nil {
				rep.TrapsByKind[kind] = make(map[string]int)
			}
			rep.TrapsByKind[kind][h.name]++
		}
		switch {
		case h.robots == robotsServerError:
			rep.RobotsViolations = append(rep.RobotsViolations, Violation{q, key, "robots.txt answers 500, so the host is off limits"})
		case readyAt.IsZero() || q.Start.Before(readyAt):
			rep.RobotsViolations = append(rep.RobotsViolations, Violation{q, key, "requested before robots.txt was read"})
		case h.robots.disallowed(pq, rep.opts.Agent):
			rep.RobotsViolations = append(rep.RobotsViolations, Violation{q, key, "disallowed by robots.txt"})
		case !rep.Reachable[page] && kind == "" && h.hostile == notHostile && counts[key] == 1 &&
			!isSitemapPath(pq) && !isSiteFile(pq):
			rep.Extra = append(rep.Extra, page)
		}
	}
}

// TrapStat is what a crawl spent on one kind of trap.
type TrapStat struct {
	Kind string
	// Hosts is how many hosts carrying the trap the crawl reached (it
	// fetched their home page).
	Hosts int
	// Fetches is the trap fetches on those hosts; Max the most on one.
	Fetches, Max int
}

// PerHost is Fetches per trapped host reached; 0 if none was.
func (t TrapStat) PerHost() float64 {
	if t.Hosts == 0 {
		return 0
	}
	return float64(t.Fetches) / float64(t.Hosts)
}

// TrapStats returns one TrapStat per trap kind the web carries, in the
// order of the kind constants.
func (r *Report) TrapStats() []TrapStat {
	var out []TrapStat
	for _, kind := range []string{TrapCalendar, TrapSessionID, TrapFacets, TrapGrowingPath, TrapSoft404, TrapEvents, TrapEndlessPages} {
		st := TrapStat{Kind: kind}
		carried := false
		for _, h := range r.web.hosts {
			if !slices.Contains(h.traps(), kind) {
				continue
			}
			carried = true
			if !r.Fetched[r.web.urlOf(h, "/")] {
				continue
			}
			n := r.TrapsByKind[kind][h.name]
			st.Hosts++
			st.Fetches += n
			st.Max = max(st.Max, n)
		}
		if carried {
			out = append(out, st)
		}
	}
	return out
}

// settles reports whether a robots answer fixes the host's rules: a 2xx at
// the final robots location, or a 4xx other than 429 (no restrictions).
func settles(h *host, pq string, status int) bool {
	if h.robots == robotsRedirect && pq == "/robots.txt" && status/100 == 3 {
		return false // the rules are at the redirect's target
	}
	return status/100 == 2 || status/100 == 4 && status != http.StatusTooManyRequests
}

// maxConcurrency is the most requests whose [Start, End] intervals overlap;
// a request with no End yet counts as still running.
func maxConcurrency(reqs []Request) (most int, peak []Request) {
	type ev struct {
		t     time.Time
		delta int
		i     int // index in reqs
	}
	evs := make([]ev, 0, 2*len(reqs))
	for i, q := range reqs {
		evs = append(evs, ev{q.Start, +1, i})
		if !q.End.IsZero() {
			evs = append(evs, ev{q.End, -1, i})
		}
	}
	// Ends sort before starts at the same instant: touching is not overlapping.
	slices.SortFunc(evs, func(a, b ev) int {
		if c := a.t.Compare(b.t); c != 0 {
			return c
		}
		return cmp.Compare(a.delta, b.delta)
	})
	open := map[int]bool{}
	for _, e := range evs {
		if e.delta > 0 {
			open[e.i] = true
		} else {
			delete(open, e.i)
		}
		if len(open) > most {
			most = len(open)
			peak = peak[:0]
			for i := range open {
				peak = append(peak, reqs[i])
			}
		}
	}
	slices.SortFunc(peak, func(a, b Request) int { return a.Start.Compare(b.Start) })
	return most, peak
}

// inFlight describes requests in flight at once, for a problem's message.
func inFlight(reqs []Request) string {
	var b strings.Builder
	for _, q := range reqs {
		end := "not ended"
		if !q.End.IsZero() {
			end = "ended " + q.End.Format("15:04:05.000")
		}
		fmt.Fprintf(&b, "\n    %s %s%s started %s, %s, status %d, %d bytes, %q",
			q.Method, q.Host, q.Path, q.Start.Format("15:04:05.000"), end, q.Status, q.Bytes, q.UserAgent)
	}
	return b.String()
}

// Bound is a lower bound on how long a polite crawl that fetches every
// crawlable URL of one host must take, from its first request to that host
// to the start of its last.
type Bound struct {
	Host string
	// Requests are those the crawl cannot do without: the host's
	// robots.txt answers up to the one that settles its rules (one; two
	// where /robots.txt redirects to /robots-real.txt, or where it answers
	// 429 first), then each of the host's crawlable URLs once.
	Requests int
	// Gap is the least time between two of them: max(the crawl's gap, the
	// host's Crawl-delay), the gap Analyze holds every pair of consecutive
	// requests to.
	Gap time.Duration
	// Duration is (Requests-1) x Gap: that many gaps separate the first
	// request from the last.
	Duration time.Duration
}

// Bounds returns the Bound of every host with crawlable URLs, in web
// order. They hold for a crawl from scratch (no robots.txt known
// beforehand) against a freshly served web (whose 429-then-200 hosts
// answer 429 first), and a crawl that omits some crawlable URL can beat
// them, as can an impolite one: check Missing and Problems. They count
// from the web's ground truth (the crawlable set), never from the log.
func (r *Report) Bounds(gap time.Duration) []Bound {
	var out []Bound
	for _, h := range r.web.hosts {
		n := r.perHost[h.name]
		if n == 0 {
			continue
		}
		b := Bound{Host: h.name, Requests: h.robots.settlingRequests() + n, Gap: max(gap, h.robots.crawlDelay(), 0)}
		b.Duration = time.Duration(b.Requests-1) * b.Gap
		out = append(out, b)
	}
	return out
}

// Critical returns the largest of Bounds: a lower bound on the whole
// crawl's duration, and the host that sets it. Its Duration is zero if no
// URL is crawlable.
func (r *Report) Critical(gap time.Duration) Bound {
	var most Bound
	for _, b := range r.Bounds(gap) {
		if b.Duration > most.Duration {
			most = b
		}
	}
	return most
}

// CriticalPath is Critical's Duration: a lower bound on a polite and
// complete crawl's duration. It counts the gaps that separate a
// host's first request from its last (one fewer than its requests), and
// the robots.txt requests of the 301 and 429 hosts, which are needed: so
// the bound stays a bound.
func (r *Report) CriticalPath(gap time.Duration) time.Duration {
	return r.Critical(gap).Duration
}

// Problems lists every violation the report found, one sentence each; an
// empty list means the crawl was polite (and covered enough, if
// MinCoverage is set).
func (r *Report) Problems() []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	for _, h := range r.Hosts {
		for _, v := range h.GapViolations {
			add("host %s: %s at %s then %s %s after it, want a gap of at least %v",
				v.Host, v.First.Path, v.First.Start.Format("15:04:05.000"), v.Second.Path, v.Gap, v.Want)
		}
		if h.MaxConcurrency > r.opts.MaxParallel {
			add("host %s: %d requests in flight at once, want at most %d:%s", h.Host, h.MaxConcurrency, r.opts.MaxParallel, inFlight(h.Peak))
		}
	}
	if r.opts.MaxParallelPerIP > 0 {
		for _, ip := range r.SharedIPs {
			if ip.MaxConcurrency > r.opts.MaxParallelPerIP {
				add("IP %s (%s): %d requests in flight at once, want at most %d:%s",
					ip.IP, strings.Join(ip.Hosts, ", "), ip.MaxConcurrency, r.opts.MaxParallelPerIP, inFlight(ip.Peak))
			}
		}
	}
	for _, v := range r.RobotsViolations {
		add("robots: %s %s: %s", v.Request.Method, v.URL, v.Reason)
	}
	for _, rp := range r.Repeats {
		add("repeat: %s requested %d times", rp.URL, rp.Count)
	}
	for _, rp := range r.RobotsRepeats {
		add("robots repeat: %s requested again (request %d) after an answer that needed no retry", rp.URL, rp.Count)
	}
	for _, q := range r.OutOfScope {
		add("out of scope: %s %s on host %q", q.Method, q.Path, q.Host)
	}
	for _, q := range r.WrongIP {
		add("wrong address: %s %s for host %s arrived on %s", q.Method, q.Path, q.Host, q.IP)
	}
	for _, q := range r.BadAgent {
		add("user agent: %s %s on %s sent User-Agent %q without %q", q.Method, q.Path, q.Host, q.UserAgent, r.opts.Agent)
	}
	for _, u := range r.Extra {
		add("not crawlable: %s was fetched but no followable link leads to it", u)
	}
	if r.opts.MinCoverage > 0 && r.Coverage < r.opts.MinCoverage {
		first := r.Missing[:min(10, len(r.Missing))]
		add("coverage %.3f below %.3f: %d of %d crawlable URLs not fetched, e.g. %s",
			r.Coverage, r.opts.MinCoverage, len(r.Missing), len(r.Reachable), strings.Join(first, " "))
	}
	return out
}

// String summarises the report in a few lines.
func (r *Report) String() string {
	var b strings.Builder
	gapv, conc := 0, 0
	var minGap time.Duration = -1
	for _, h := range r.Hosts {
		gapv += len(h.GapViolations)
		conc = max(conc, h.MaxConcurrency)
		if h.Requests > 1 && (minGap < 0 || h.MinGap < minGap) {
			minGap = h.MinGap
		}
	}
	trap := 0
	for _, n := range r.TrapFetches {
		trap += n
	}
	fmt.Fprintf(&b, "requests %d on %d hosts; reachable %d, fetched %d, coverage %.3f, missing %d, extra %d\n",
		r.Requests, len(r.Hosts), len(r.Reachable), len(r.Fetched), r.Coverage, len(r.Missing), len(r.Extra))
	fmt.Fprintf(&b, "gap violations %d (least gap %v), max concurrency per host %d\n", gapv, max(minGap, 0), conc)
	fmt.Fprintf(&b, "robots violations %d, repeats %d, robots repeats %d, trap fetches %d, out of scope %d, wrong IP %d, bad agent %d\n",
		len(r.RobotsViolations), len(r.Repeats), len(r.RobotsRepeats), trap, len(r.OutOfScope), len(r.WrongIP), len(r.BadAgent))
	return b.String()
}
