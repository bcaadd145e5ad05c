package testweb

// The chaos web: a web we did not tune to. Chaos draws, from a seed, for
// each host a site shape (a blog, a forum thread, a catalogue, a docs
// tree) and a combination of what real servers do (robots.txt answering
// 5xx, 429 or 503 with and without Retry-After, in seconds or as a date,
// up to hours; timeouts, resets, slow drips, huge and lying bodies,
// redirect chains and loops, shared IPs, exact and near duplicates,
// calendars, lying sitemaps, changing pages, declared charsets). The
// ground truth is built by construction: which URLs a polite, complete
// crawler fetches (reachable), which it must not or cannot (unreachable by
// design, with the reason), and each host's polite critical path.
// JudgeChaos (chaosjudge.go) holds a crawl to it from the request log.

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"time"
)

// ChaosOptions shape a chaos web. The zero value of every field means its
// default.
type ChaosOptions struct {
	// Hosts is the number of hosts. Default 8.
	Hosts int
	// Pages is the length of a host's pagination (listing pages of a
	// blog, pages of a forum thread or a catalogue) and about half the
	// size of a docs tree. Default 6.
	Pages int
	// Horizon is the crawl's wait horizon H: a wait a host forces beyond
	// it (a Retry-After of hours) makes what lies behind it unreachable
	// within the crawl. Default 3s.
	Horizon time.Duration
	// MaxRetryAfter is the longest Retry-After drawn for the waits a
	// crawl is meant to wait out (whole seconds, at least 1). Default 1s.
	MaxRetryAfter time.Duration
	// Long also draws the hour-long Retry-After cases (robots.txt and a
	// page answering 503 with Retry-After of one or two hours, as seconds
	// or as a date): their hosts' URLs, or that page's retry, lie beyond
	// the horizon.
	Long bool
	// HugeBytes is the size of a huge body. Default 2 MiB (above the
	// chaos crawls' 1 MiB body cap).
	HugeBytes int
	// Domain every host is a subdomain of. Default "chaos.test".
	Domain string
}

func (o ChaosOptions) withDefaults() ChaosOptions {
	if o.Hosts <= 0 {
		o.Hosts = 8
	}
	if o.Pages <= 0 {
		o.Pages = 6
	}
	if o.Horizon <= 0 {
		o.Horizon = 3 * time.Second
	}
	if o.MaxRetryAfter < time.Second {
		o.MaxRetryAfter = time.Second
	}
	if o.HugeBytes <= 0 {
		o.HugeBytes = 2 << 20
	}
	if o.Domain == "" {
		o.Domain = "chaos.test"
	}
	return o
}

// The robots.txt behaviours a chaos host draws, with their chance in 100
// (the Long ones only with ChaosOptions.Long, taking their share from
// robots-ok).
const (
	chaosRobotsOK         = "robots-ok"              // 35 (20 with Long): 200, Disallow: /private/
	chaosRobots404        = "robots-404"             // 15: no rules
	chaosRobotsDelay      = "robots-crawl-delay"     // 5: 200 with Crawl-delay: 1
	chaosRobots503Once    = "robots-503-once"        // 10: 503 without Retry-After, then 200
	chaosRobots503Retry   = "robots-503-retry-after" // 10: 503 with Retry-After seconds, then 200
	chaosRobots429Date    = "robots-429-date"        // 10: 429 with Retry-After as an HTTP date, then 200
	chaosRobots500Forever = "robots-500-forever"     // 5: the host is off limits
	chaosRobotsHours      = "robots-503-hours"       // 15 with Long: 503, Retry-After an hour or two, forever
	chaosRobotsTimeout    = "robots-timeout-once"    // 10: the first answer never comes, then 200
)

// The page behaviours a chaos host draws, each independently, with its
// chance in 100. Each is a URL linked from the host's home page.
const (
	chaosPage429Once   = "page-429-once"       // 20: 429 with Retry-After seconds, then 200
	chaosPage503Hours  = "page-503-hours"      // 25 with Long: 503 with Retry-After of hours, forever
	chaosPageTimeout   = "page-timeout"        // 10: never answers
	chaosPageReset     = "page-reset"          // 10: the connection is reset mid-body
	chaosPageDrip      = "page-slow-drip"      // 15: the body comes a few bytes at a time (about 1 s)
	chaosPageHuge      = "page-huge-body"      // 10: a body above the crawl's size cap
	chaosPageLying     = "page-lying-length"   // 10: Content-Length promises more than comes
	chaosPageChain     = "redirect-chain"      // 20: three redirects to a page
	chaosPageLoop      = "redirect-loop"       // 10: two URLs redirecting to each other
	chaosPageCrossHost = "redirect-cross-host" // 15: a redirect to another host's page
	chaosPageExactDup  = "exact-duplicate"     // 20: a copy byte for byte
	chaosPageNearDup   = "near-duplicate"      // 20: a copy with a few words changed
	chaosPageCalendar  = "calendar-trap"       // 20: an endless calendar
	chaosPageSitemap   = "sitemap-lies"        // 25: robots.txt points at a sitemap listing 404s and disallowed URLs
	chaosPageChanging  = "changing-page"       // 20: a page whose text changes with each request
	chaosPageCharset   = "declared-charset"    // 30: a page in another charset, the only one linking to a page
	chaosPageMissing   = "missing-link"        // 20: a link to a 404
)

// The site shapes, with their chance in 100.
const (
	chaosShapeBlog      = "blog"      // 30: /blog/page/N/ listing pages, "older posts", 3 posts each
	chaosShapeForum     = "forum"     // 25: /forum/thread?page=N, 2 profiles each
	chaosShapeCatalogue = "catalogue" // 25: /catalog?page=N, 3 items each
	chaosShapeDocs      = "docs"      // 20: a /docs/ tree of fan-out 2
)

// chaosCharsets are the declared charsets a charset page draws.
var chaosCharsets = []string{"windows-1252", "shift_jis", "utf-16le-bom", "utf-16be-header", "iso-8859-1-meta"}

// chaosHost is what a chaos host drew, and its pages.
type chaosHost struct {
	robots     string        // a chaosRobots* behaviour
	robotsWait time.Duration // the Retry-After its robots.txt answer carries; 0 if none
	robotsDate bool          // Retry-After written as an HTTP date
	crawlDelay time.Duration
	shape      string
	draws      []string // every behaviour drawn, robots and shape first
	charset    string   // of its declared-charset page
	pages      map[string]*chaosPage
	order      []*chaosPage // in generation order, home first
	sitemap    []string     // the paths its lying sitemap lists
}

// chaosPage is one URL of a chaos host.
type chaosPage struct {
	host  *host
	pq    string
	does  string // "page" for an ordinary page, else a chaosPage* behaviour or "redirect"
	links []*chaosPage
	to    *chaosPage // a redirect's target
	wait  time.Duration
	date  bool // Retry-After as an HTTP date
	seed  uint64
	dupOf *chaosPage
	words int // text length
}

// terminal reports whether a crawler gets no links from p: its answer is
// no page, or no whole one.
func (p *chaosPage) terminal() bool {
	switch p.does {
	case chaosPage503Hours, chaosPageTimeout, chaosPageReset, chaosPageDrip, chaosPageHuge,
		chaosPageLying, chaosPageMissing, chaosPageCalendar:
		return true
	}
	return false
}

// chaosWeb is a chaos web's own state.
type chaosWeb struct {
	seed int64
	opts ChaosOptions
}

// Chaos builds the chaos web of seed. It is pure: equal seeds and options
// give equal webs.
func Chaos(seed int64, opts ChaosOptions) *Web {
	o := opts.withDefaults()
	w := &Web{opts: Options{Seed: seed, Domain: o.Domain}.withDefaults(), byName: make(map[string]*host),
		chaos: &chaosWeb{seed: seed, opts: o}}
	w.opts.Domain = o.Domain
	rng := rand.New(rand.NewPCG(uint64(seed), 0x6368_616f_735f_7765))
	for i := range o.Hosts {
		h := &host{idx: i, name: fmt.Sprintf("h%02d.s%d.%s", i, seed, o.Domain), byPQ: make(map[string]*resource),
			ip: netip.AddrFrom4([4]byte{127, 78, byte(i / 250), byte(i%250 + 1)})}
		h.latency = time.Duration(rng.IntN(21)) * time.Millisecond
		if i > 0 && rng.IntN(100) < 30 { // several hosts on one IP
			h.ip, h.shared = w.hosts[i-1].ip, true
			w.hosts[i-1].shared = true
		}
		h.chaos = drawChaosHost(rng, o)
		home := &chaosPage{host: h, pq: "/", does: "page", seed: rng.Uint64(), words: 60 + rng.IntN(60)}
		h.chaos.pages["/"], h.chaos.order = home, []*chaosPage{home}
		w.hosts = append(w.hosts, h)
		w.byName[h.name] = h
	}
	for _, h := range w.hosts {
		buildChaosHost(w, h, rng, o)
	}
	return w
}

func pickShare(rng *rand.Rand, names []string, shares []int) string {
	return names[pick(rng, shares)]
}

func drawChaosHost(rng *rand.Rand, o ChaosOptions) *chaosHost {
	c := &chaosHost{pages: make(map[string]*chaosPage)}
	names := []string{chaosRobotsOK, chaosRobots404, chaosRobotsDelay, chaosRobots503Once, chaosRobots503Retry,
		chaosRobots429Date, chaosRobots500Forever, chaosRobotsTimeout, chaosRobotsHours}
	shares := []int{35, 15, 5, 10, 10, 10, 5, 10, 0}
	if o.Long {
		shares[0], shares[8] = 20, 15
	}
	c.robots = pickShare(rng, names, shares)
	retry := func() time.Duration {
		return time.Duration(1+rng.IntN(int(o.MaxRetryAfter/time.Second))) * time.Second
	}
	switch c.robots {
	case chaosRobotsDelay:
		c.crawlDelay = time.Second
	case chaosRobots503Retry:
		c.robotsWait = retry()
	case chaosRobots429Date:
		c.robotsWait, c.robotsDate = retry()+time.Second, true // a date counts whole seconds: one more
	case chaosRobotsHours:
		c.robotsWait = time.Duration(1+rng.IntN(2)) * time.Hour
		c.robotsDate = rng.IntN(2) == 0
	}
	c.shape = pickShare(rng, []string{chaosShapeBlog, chaosShapeForum, chaosShapeCatalogue, chaosShapeDocs}, []int{30, 25, 25, 20})
	c.draws = []string{c.robots, "shape " + c.shape}
	for _, b := range []struct {
		name   string
		chance int
	}{
		{chaosPage429Once, 20}, {chaosPage503Hours, 25}, {chaosPageTimeout, 10}, {chaosPageReset, 10},
		{chaosPageDrip, 15}, {chaosPageHuge, 10}, {chaosPageLying, 10}, {chaosPageChain, 20},
		{chaosPageLoop, 10}, {chaosPageCrossHost, 15}, {chaosPageExactDup, 20}, {chaosPageNearDup, 20},
		{chaosPageCalendar, 20}, {chaosPageSitemap, 25}, {chaosPageChanging, 20}, {chaosPageCharset, 30},
		{chaosPageMissing, 20},
	} {
		hit := rng.IntN(100) < b.chance // drawn always, so that Long changes no other draw
		if b.name == chaosPage503Hours && !o.Long {
			hit = false
		}
		if hit {
			c.draws = append(c.draws, b.name)
		}
	}
	if c.drew(chaosPageCharset) {
		c.charset = chaosCharsets[rng.IntN(len(chaosCharsets))]
		c.draws = append(c.draws, "charset "+c.charset)
	}
	return c
}

func (c *chaosHost) drew(b string) bool { return slices.Contains(c.draws, b) }

func buildChaosHost(w *Web, h *host, rng *rand.Rand, o ChaosOptions) {
	c := h.chaos
	add := func(pq, does string) *chaosPage {
		if c.pages[pq] != nil {
			panic("testweb: chaos made " + pq + " twice on " + h.name)
		}
		p := &chaosPage{host: h, pq: pq, does: does, seed: rng.Uint64(), words: 60 + rng.IntN(60)}
		c.pages[pq] = p
		c.order = append(c.order, p)
		return p
	}
	home := c.pages["/"]
	link := func(from, to *chaosPage) { from.links = append(from.links, to) }

	// The shape; a Crawl-delay host's is short, or its one-second gap
	// alone would set a critical path of half a minute.
	pages := o.Pages
	if c.crawlDelay > 0 {
		pages = max(2, pages/3)
	}
	var entry *chaosPage
	switch c.shape {
	case chaosShapeBlog:
		var prev *chaosPage
		for n := 1; n <= pages; n++ {
			pq := fmt.Sprintf("/blog/page/%d/", n)
			if n == 1 {
				pq = "/blog/"
			}
			l := add(pq, "page")
			for k := 1; k <= 3; k++ {
				post := add(fmt.Sprintf("/blog/2025/%02d/post-%d-%d.html", 1+(n*3+k)%12, n, k), "page")
				link(l, post)
				link(post, home)
			}
			if prev != nil {
				link(prev, l) // "Older posts"
				link(l, prev) // "Newer posts"
			} else {
				entry = l
			}
			prev = l
		}
	case chaosShapeForum, chaosShapeCatalogue:
		base, item, per := "/forum/thread-7", "/forum/user/%d-%d", 2
		if c.shape == chaosShapeCatalogue {
			base, item, per = "/catalog", "/item/%d%d.html", 3
		}
		var prev *chaosPage
		for n := 1; n <= pages; n++ {
			l := add(fmt.Sprintf("%s?page=%d", base, n), "page")
			for k := 1; k <= per; k++ {
				link(l, add(fmt.Sprintf(item, n, k), "page"))
			}
			if prev != nil {
				link(prev, l)
				link(l, prev)
			} else {
				entry = l
			}
			prev = l
		}
	case chaosShapeDocs:
		var grow func(dir string, depth int) *chaosPage
		grow = func(dir string, depth int) *chaosPage {
			p := add(dir, "page")
			if depth < 3 && len(c.order) < 2*pages+2 {
				for k := range 2 {
					child := grow(fmt.Sprintf("%s%s/", dir, []string{"intro", "reference", "howto", "api"}[(depth+k)%4]), depth+1)
					link(p, child)
					link(child, p)
				}
			}
			return p
		}
		entry = grow("/docs/", 0)
	}
	link(home, entry)

	// The behaviours.
	retry := func() time.Duration {
		return time.Duration(1+rng.IntN(int(o.MaxRetryAfter/time.Second))) * time.Second
	}
	for _, b := range c.draws[2:] {
		switch b {
		case chaosPage429Once:
			p := add("/busy.html", b)
			p.wait = retry()
			link(home, p)
		case chaosPage503Hours:
			p := add("/maintenance.html", b)
			p.wait, p.date = time.Duration(1+rng.IntN(2))*time.Hour, rng.IntN(2) == 0
			link(home, p)
		case chaosPageTimeout:
			link(home, add("/never.html", b))
		case chaosPageReset:
			link(home, add("/cut.html", b))
		case chaosPageDrip:
			link(home, add("/drip.html", b))
		case chaosPageHuge:
			link(home, add("/huge.html", b))
		case chaosPageLying:
			link(home, add("/lying.html", b))
		case chaosPageChain:
			end := add("/landed.html", "page")
			link(end, home)
			r3 := add("/go/3", "redirect")
			r3.to = end
			r2 := add("/go/2", "redirect")
			r2.to = r3
			r1 := add("/go/1", "redirect")
			r1.to = r2
			link(home, r1)
		case chaosPageLoop:
			a, z := add("/loop/a", "redirect"), add("/loop/b", "redirect")
			a.to, z.to = z, a
			link(home, a)
		case chaosPageCrossHost:
			p := add("/out", chaosPageCrossHost)
			p.to = w.hosts[(h.idx+len(w.hosts)-1)%len(w.hosts)].chaos.pages["/"]
			link(home, p)
		case chaosPageExactDup, chaosPageNearDup:
			orig := c.pages["/original.html"]
			if orig == nil {
				orig = add("/original.html", "page")
				link(orig, home)
				link(home, orig)
			}
			pq := "/copy.html"
			if b == chaosPageNearDup {
				pq = "/near-copy.html"
			}
			p := add(pq, b)
			p.dupOf, p.seed, p.words, p.links = orig, orig.seed, orig.words, orig.links
			link(home, p)
		case chaosPageCalendar:
			h.trap = true
			link(home, add("/calendar/2025/06", b))
		case chaosPageSitemap:
			c.sitemap = []string{"/gone/listed-1.html", "/gone/listed-2.html", "/private/listed.html", entry.pq}
		case chaosPageChanging:
			p := add("/news.html", b)
			link(p, home)
			link(home, p)
		case chaosPageCharset:
			p := add("/intl.html", b)
			only := add("/intl-only.html", "page")
			link(only, home)
			link(p, only)
			link(home, p)
		case chaosPageMissing:
			link(home, add("/gone/missing.html", b))
		}
	}
	if c.robots == chaosRobotsOK || c.drew(chaosPageSitemap) {
		p := add("/private/secret.html", "page") // disallowed by its robots.txt, where it has rules
		link(home, p)
	}
	// One link on to the next host's home.
	if next := w.hosts[(h.idx+1)%len(w.hosts)]; next != h {
		link(home, next.chaos.pages["/"])
	}
}
