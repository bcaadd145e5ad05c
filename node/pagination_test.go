package node

import (
	"context"
	"fmt"
	"maps"
	"math/bits"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/internal/testkit/testweb"
	"github.com/trawl-crawler/trawl/job"
	"github.com/trawl-crawler/trawl/links"
)

// pagedWeb is two small hosts and the paged host (testweb's Pagination):
// a blog, a forum thread, a catalogue and a docs tree whose pages link to
// pages of their own URL shape, an endless events calendar and an endless
// news listing.
var pagedWeb = testweb.Options{Seed: 23, Hosts: 2, BigHosts: -1, MinPages: 2, MaxPages: 4,
	MinPageBytes: 2 << 10, MaxPageBytes: 4 << 10, Latency: -1, Pagination: true}

// pagedEndlessMost is the most fetches an endless space of the paged
// host may cost.
const pagedEndlessMost = 20

// TestPaginationCrawledWhole crawls the paged host with the defaults and
// trawl crawl's depth (20), in one run and stopped half-way then resumed
// on the same data (the run values travel in the stored queue items, the
// text each page is compared with in the stored URL records): every blog
// post and listing page, thread page, catalogue page, product and docs
// page is fetched, and every page of the store and the journal, families
// of one URL pattern longer than the per-pattern room's first 64 URLs
// (a cap there would stop at 64 of 300 items, 65 of 75 store listings,
// 64 of 200 posts), each endless space stops within pagedEndlessMost
// fetches over both runs, the crawl ends by itself and stays polite.
// (A shape-run rule that cut every run of one URL shape after 3 links
// would fetch 16 of 30 blog listing pages, 13 of 37 docs pages.)
func TestPaginationCrawledWhole(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: crawls of a paginated web, one stopped and resumed; the full suite runs it")
	}
	// Parallel beside the package's other tests: a test that is not waits
	// for its parallel subtests, and every parallel test of the package
	// waits for it (its two crawls took half a minute of the package's
	// wall time alone).
	t.Parallel()
	for _, tc := range []struct {
		name      string
		stopAfter int // requests after which a first run is stopped; 0: one run
	}{
		{"one run", 0},
		{"stopped and resumed", 120},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, pagedWeb, 10*time.Millisecond)
			h.spec.MaxDepth = 20
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			repeatsAllowed := 0
			if tc.stopAfter > 0 {
				first, stop := context.WithCancel(ctx)
				go func() {
					for first.Err() == nil && len(h.srv.Log()) < tc.stopAfter {
						time.Sleep(5 * time.Millisecond)
					}
					stop()
				}()
				sum := h.run(t, first)
				stop()
				if sum.StopReason != job.ReasonSignal {
					t.Fatalf("first run: StopReason %q, want it stopped", sum.StopReason)
				}
				repeatsAllowed = h.opts.Concurrency // what was in flight at the stop
			}
			sum := h.run(t, ctx)
			if sum.StopReason != job.ReasonExhausted {
				t.Errorf("StopReason = %q, want exhausted", sum.StopReason)
			}
			checkPagedCrawl(t, h, repeatsAllowed)
		})
	}
}

// checkPagedCrawl judges a crawl of pagedWeb from the web's log: polite,
// every crawlable page fetched, at most repeats fetched twice, each
// endless space within pagedEndlessMost fetches.
func checkPagedCrawl(t *testing.T, h *harness, repeats int) {
	t.Helper()
	rep := h.analyze(1)
	var problems []string
	for _, p := range rep.Problems() {
		if strings.HasPrefix(p, "repeat: ") && len(rep.Repeats) <= repeats {
			continue
		}
		problems = append(problems, p)
	}
	if len(problems) > 0 {
		t.Errorf("the web's log shows %d problems:\n%s", len(problems), strings.Join(problems[:min(len(problems), 30)], "\n"))
	}
	var paged string
	for _, hi := range h.srv.Web().Hosts() {
		if slices.Contains(hi.Traps, testweb.TrapEvents) {
			paged = hi.Name
		}
	}
	// Fetched of each kind of the paged host's pages.
	total, fetched := map[string]int{}, map[string]int{}
	var missing []string
	for _, p := range h.srv.Web().Pages() {
		if !strings.Contains(p.URL, "//"+paged+":") {
			continue
		}
		total[p.Note]++
		if rep.Fetched[p.URL] {
			fetched[p.Note]++
		} else {
			missing = append(missing, p.URL)
		}
	}
	var b strings.Builder
	for _, note := range slices.Sorted(maps.Keys(total)) {
		fmt.Fprintf(&b, "  %-26s %3d of %3d\n", note, fetched[note], total[note])
	}
	t.Logf("paged host %s, fetched:\n%s", paged, b.String())
	if len(missing) > 0 {
		t.Errorf("%d pages of the paged host not fetched, e.g. %v", len(missing), missing[:min(10, len(missing))])
	}
	for _, kind := range []string{testweb.TrapEvents, testweb.TrapEndlessPages} {
		n := rep.TrapsByKind[kind][paged]
		t.Logf("%s: %d fetches", kind, n)
		if n == 0 || n > pagedEndlessMost {
			t.Errorf("%s: %d fetches, want 1 to %d", kind, n, pagedEndlessMost)
		}
	}
}

// TestShapeRunTextDistances measures what newText judges, on the pages
// of the synthetic web as trawl reads them (links.ExtractWith's
// fingerprint, weak bits and words): each page against the page before it
// in its run. Pages that differ by a date or a number (calendar months,
// empty listing pages) must have fewer than newTextWords new words by
// newWords's estimate; pages that bring text of their own (thread pages,
// docs pages, blog listings with excerpts) at least as many. Catalogue
// pages, which bring new links (their products) and little text, are
// only reported.
func TestShapeRunTextDistances(t *testing.T) {
	web := pagedWeb
	web.Hosts = 8 // small host 3 carries the calendar trap
	srv, err := testweb.Serve(testweb.Generate(web), testweb.ServeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	var cal, paged string
	for _, hi := range srv.Web().Hosts() {
		switch {
		case hi.Trap:
			cal = hi.Name
		case slices.Contains(hi.Traps, testweb.TrapEvents):
			paged = hi.Name
		}
	}
	port := srv.Web().Port()
	seq := func(host string, n int, pq func(k int) string) []string {
		var out []string
		for k := range n {
			out = append(out, fmt.Sprintf("http://%s:%d%s", host, port, pq(k)))
		}
		return out
	}
	month := func(root string) func(int) string {
		return func(k int) string { return fmt.Sprintf("%s/%04d/%02d", root, 2024+k/12, 1+k%12) }
	}
	for _, tc := range []struct {
		name string
		urls []string
		new  int // 1: each page's text must count as new; -1: none may; 0: reported only
	}{
		{"calendar months", seq(cal, 48, month("/calendar")), -1},
		{"events months", seq(paged, 48, func(k int) string { return month("/events")(k) + "/" }), -1},
		{"empty news pages", seq(paged, 30, func(k int) string { return fmt.Sprintf("/news/?page=%d", 5+k) }), -1},
		{"thread pages", seq(paged, 24, func(k int) string { return fmt.Sprintf("/forum/thread/7?page=%d", 2+k) }), 1},
		{"docs pages", seq(paged, 6, func(k int) string { return fmt.Sprintf("/docs/3/%d/", 1+k) }), 1},
		{"blog listing pages", seq(paged, 28, func(k int) string { return fmt.Sprintf("/blog/page/%d/", 2+k) }), 1},
		{"catalogue pages", seq(paged, 11, func(k int) string { return fmt.Sprintf("/catalogue/?page=%d", 2+k) }), 0},
	} {
		got := fetchDirect(t, srv, tc.urls)
		var dists, news []int
		for k := 1; k < len(tc.urls); k++ {
			prev := links.ExtractWith(got[tc.urls[k-1]].body, links.Options{SimHash: true})
			cur := links.ExtractWith(got[tc.urls[k]].body, links.Options{SimHash: true})
			d, n := bits.OnesCount64(prev.SimHash^cur.SimHash), newWords(prev.SimHash, cur.SimHash, cur.Content.Words())
			dists, news = append(dists, d), append(news, n)
			if tc.new != 0 && (n >= newTextWords) != (tc.new > 0) {
				t.Errorf("%s: %s has about %d new words (%d words, %d bits from the page before), want new text %v (%d words or more)",
					tc.name, tc.urls[k], n, cur.Content.Words(), d, tc.new > 0, newTextWords)
			}
		}
		t.Logf("%-20s %2d to %2d bits, %3d to %3d new words", tc.name, slices.Min(dists), slices.Max(dists), slices.Min(news), slices.Max(news))
	}
}
