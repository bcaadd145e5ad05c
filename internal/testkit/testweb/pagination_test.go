package testweb

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var digitsRE = regexp.MustCompile(`[0-9]+`)

func pagedWeb(seed int64) Options {
	o := small(seed)
	o.Pagination = true
	return o
}

// pagedHost returns the paged host of w.
func pagedHost(t *testing.T, w *Web) *host {
	t.Helper()
	return hostWith(t, w, func(h *host) bool { return h.paged })
}

// TestPagedGroundTruth checks the paged host's pages: as many of each
// kind as the package comment says, every one crawlable within 20 links
// of the seeds (the depth a crawl must reach for the whole host is at
// most 14 below its home), no page of the endless spaces crawlable, and
// the rest of the web unchanged.
func TestPagedGroundTruth(t *testing.T) {
	w := Generate(pagedWeb(31))
	h := pagedHost(t, w)
	want := map[string]int{
		notePagedHome:      1,
		notePagedBlogList:  pagedBlogPages,
		notePagedPost:      pagedBlogPages * pagedPostsPerPage,
		notePagedForum:     1,
		notePagedThread:    pagedThreadPages + 3 + 1,
		notePagedMember:    pagedForumMemberCount,
		notePagedCatalogue: pagedCataloguePages,
		notePagedProduct:   pagedCataloguePages * pagedProductsPerPage,
		notePagedDocs:      1 + pagedDocSections*pagedDocPages,
		notePagedEvents:    1,
		notePagedNewsList:  pagedNewsPages,
		notePagedStory:     pagedNewsPages * pagedStoriesPerPage,
		notePagedStoreList: pagedStorePages,
		notePagedItem:      pagedStorePages * pagedItemsPerPage,
		notePagedJournal:   pagedJournalPages,
		notePagedJPost:     pagedJournalPages * pagedJournalPosts,
		notePagedArchive:   1,
	}
	got := map[string]int{}
	for _, r := range h.res {
		got[r.note]++
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("pages by note = %v, want %v", got, want)
	}
	reach := w.Reachable(w.Seeds(), "trawl", 20)
	home := w.urlOf(h, "/")
	if !reach[home] {
		t.Fatalf("the paged host's home %s is not reachable", home)
	}
	// Depth of each page below the paged host's home.
	below := w.Reachable([]string{home}, "trawl", 0)
	deepest := 0
	for _, r := range h.res {
		u := r.url(w)
		if !reach[u] {
			t.Errorf("%s (%s) is not reachable within 20 links of the seeds", u, r.note)
		}
		if !below[u] {
			t.Errorf("%s (%s) is not reachable from the host's home", u, r.note)
		}
	}
	for d := 1; d <= 20; d++ {
		if len(w.Reachable([]string{home}, "trawl", d)) == len(below) {
			deepest = d
			break
		}
	}
	if deepest == 0 || deepest > 14 {
		t.Errorf("the deepest page is %d links below the paged host's home, want at most 14", deepest)
	}
	for u := range reach {
		if strings.Contains(u, "/events/20") || strings.Contains(u, fmt.Sprintf("/news/?page=%d", pagedNewsPages+1)) {
			t.Errorf("Reachable contains the endless space's page %s", u)
		}
	}
	// The rest of the web is as without Pagination, but for the link to
	// the paged host from the first host's home page.
	o := pagedWeb(31)
	o.Pagination = false
	plain := Generate(o)
	if pp, pw := plain.Pages(), w.Pages(); !reflect.DeepEqual(pp, pw[:len(pp)]) {
		t.Errorf("Pagination changed the pages of the other hosts")
	}
	if !reflect.DeepEqual(plain.Hosts(), w.Hosts()[:len(plain.Hosts())]) {
		t.Errorf("Pagination changed the other hosts")
	}
	if got := w.Hosts()[len(w.Hosts())-1].Traps; !slices.Equal(got, []string{TrapEvents, TrapEndlessPages}) {
		t.Errorf("the paged host's Traps = %v", got)
	}
}

// TestPagedServe requests pages of each structure and of the endless
// spaces, and checks their links and how Analyze counts them.
func TestPagedServe(t *testing.T) {
	srv := serve(t, pagedWeb(32))
	w, c := srv.Web(), client(t, srv)
	h := pagedHost(t, w)
	at := func(pq string) string { return w.urlOf(h, pq) }
	has := func(links []string, pred func(string) bool) int {
		n := 0
		for _, l := range links {
			if pred(l) {
				n++
			}
		}
		return n
	}
	for _, tc := range []struct {
		pq    string
		links []string // links the page must carry
		posts int      // links to blog posts, products or stories it must carry
		kind  string   // the prefix those have
	}{
		{"/blog/page/7/", []string{"/blog/page/6/", "/blog/page/8/", "/blog/", "/blog/page/30/", "/blog/page/5/", "/blog/page/9/"}, pagedPostsPerPage, "/blog/2024/"},
		{"/blog/page/30/", []string{"/blog/page/29/", "/blog/"}, pagedPostsPerPage, "/blog/2024/"},
		{"/forum/thread/7?page=12", []string{"/forum/thread/7", "/forum/thread/7?page=11", "/forum/thread/7?page=13", "/forum/thread/7?page=25"}, 0, ""},
		{"/catalogue/?page=3", []string{"/catalogue/", "/catalogue/?page=2", "/catalogue/?page=4", "/catalogue/?page=12"}, pagedProductsPerPage, "/products/"},
		{"/docs/1/6/", []string{"/docs/1/5/", "/docs/2/1/", "/docs/1/1/"}, 0, ""},
		{"/news/?page=4", []string{"/news/?page=3", "/news/?page=5"}, pagedStoriesPerPage, "/news/"},
		{"/store/?page=33", []string{"/store/", "/store/?page=32", "/store/?page=35", "/store/?page=10", "/store/?page=70", "/store/?page=75"}, pagedItemsPerPage, "/item/"},
		{"/journal/page/40/", []string{"/journal/page/39/", "/journal/"}, pagedJournalPosts, "/journal/2025/"},
		{"/journal/archive/", nil, pagedJournalPages * pagedJournalPosts, "/journal/2025/"},
		{"/events/", []string{"/events/2025/05/", "/events/2025/07/"}, 0, ""},
		{"/events/2025/01/", []string{"/events/2024/12/", "/events/2025/02/"}, 0, ""},
		{"/events/2031/12/", []string{"/events/2031/11/", "/events/2032/01/"}, 0, ""},
		{"/news/?page=40", []string{"/news/?page=39", "/news/?page=41"}, 0, ""},
	} {
		status, _, body := get(t, c, at(tc.pq))
		links := hrefs(body)
		if status != 200 {
			t.Errorf("GET %s = %d, want 200", tc.pq, status)
			continue
		}
		for _, l := range tc.links {
			if !slices.Contains(links, l) {
				t.Errorf("GET %s: no link %s in %v", tc.pq, l, links)
			}
		}
		if n := has(links, func(l string) bool {
			return tc.kind != "" && strings.HasPrefix(l, tc.kind) && l != tc.kind && !strings.Contains(l, "?")
		}); n != tc.posts {
			t.Errorf("GET %s: %d links to %s…, want %d", tc.pq, n, tc.kind, tc.posts)
		}
	}
	// A thread page's posts are its own; its members are every page's.
	_, _, p3 := get(t, c, at("/forum/thread/7?page=3"))
	_, _, p4 := get(t, c, at("/forum/thread/7?page=4"))
	members := map[string]bool{}
	for _, l := range hrefs(p3) {
		if strings.HasPrefix(l, "/forum/member/") {
			members[l] = true
		}
	}
	if len(members) != pagedForumMemberCount {
		t.Errorf("thread page 3 links %d members, want %d", len(members), pagedForumMemberCount)
	}
	if p3 == p4 {
		t.Errorf("thread pages 3 and 4 are the same")
	}
	// Months of the calendar, and empty pages of the listing, differ only
	// by their dates and numbers.
	undated := func(s string) string {
		for _, m := range monthNames {
			s = strings.ReplaceAll(s, m, "M")
		}
		return digitsRE.ReplaceAllString(s, "#")
	}
	for _, pair := range [][2]string{{"/events/2026/03/", "/events/2031/09/"}, {"/news/?page=9", "/news/?page=10"}} {
		_, _, a := get(t, c, at(pair[0]))
		_, _, b := get(t, c, at(pair[1]))
		if a == b || undated(a) != undated(b) {
			t.Errorf("%s and %s differ in more than dates and numbers (or not at all):\n%s\n%s", pair[0], pair[1], a, b)
		}
	}
	for _, pq := range []string{"/events/2025/13/", "/events/2025/6/", "/news/?page=05", "/news/?page=0x9"} {
		if status, _, _ := get(t, c, at(pq)); status != 404 {
			t.Errorf("GET %s = %d, want 404", pq, status)
		}
	}

	rep := Analyze(w, srv.Log(), AnalyzeOptions{Seeds: srv.Seeds(), Agent: "trawl", MaxDepth: 20})
	wantTraps := map[string]int{TrapEvents: 4, TrapEndlessPages: 3}
	for kind, n := range wantTraps {
		if got := rep.TrapsByKind[kind][h.name]; got != n {
			t.Errorf("TrapsByKind[%s] = %d, want %d", kind, got, n)
		}
	}
	if len(rep.Extra) > 0 {
		t.Errorf("extra %v; want none", rep.Extra)
	}
}
