package testweb

import (
	"fmt"
	"html"
	"math/rand/v2"
	"strconv"
	"strings"
)

// The paged host (Options.Pagination) has the structures real sites have
// most, whose pages link to pages of their own URL shape (digits aside)
// and end, beside two that never end:
//
//   - a blog: a listing of pagedBlogPages pages (/blog/, /blog/page/2/ …
//     /blog/page/30/), pagedPostsPerPage posts each, with "Newer posts"
//     and "Older posts" links and WordPress's page numbers (the first, the
//     last and two either side); the posts (/blog/2024/MM/slug-N/) link
//     to the blog and to the posts before and after;
//   - a forum: a thread of pagedThreadPages pages (/forum/thread/7,
//     then ?page=2 …), each with posts of its own by a few members whose
//     profiles every page links to: after the first page, a thread page
//     brings new text and no new link; two short threads;
//   - a catalogue: pagedCataloguePages listing pages (/catalogue/, then
//     ?page=N), each listing pagedProductsPerPage products by name in one
//     template: a catalogue page brings new links and little new text;
//   - a docs tree: pagedDocSections sections of pagedDocPages pages
//     (/docs/S/P/), each page with a sidebar of its own section and
//     "Previous" and "Next" links in reading order, the index linking the
//     first page only: a chain of one shape across the whole tree;
//   - an events calendar (TrapEvents): /events/ links to the months before
//     and after; each month (/events/YYYY/MM/) says that nothing is on
//     and links to the months before and after, forever;
//   - a store: pagedStorePages listing pages (/store/, then ?page=N,
//     with page numbers every tenth page besides the usual ones), each
//     listing pagedItemsPerPage items at /item/N.html, each item with
//     text of its own and links to the next two items: two families
//     of one scope.Pattern (host/store/? and host/item/#.html) longer
//     than the per-pattern budget's first 64 URLs;
//   - a journal: a blog of pagedJournalPages listing pages
//     (/journal/page/N/), pagedJournalPosts posts each at
//     /journal/2025/MM/post-N.html, all of one scope.Pattern, and an
//     archive page (/journal/archive/) linking every post at once;
//   - a news listing (/news/, then ?page=2 … ?page=pagedNewsPages) whose
//     "Older stories" link is always there: past the last page every
//     ?page=N answers the same empty listing, forever
//     (TrapEndlessPages).
//
// Everything but the two endless spaces is crawlable (in Reachable), at
// most 14 links below the host's home page; the host's home is linked
// from the first ordinary host's home page. The store and the journal are
// linked from the home page only (not from the navigation, which every
// other page has as it was). The host is made after every
// other, drawing nothing from Generate's random stream: the rest of a web
// is the same with Pagination as without.

// The endless spaces of the paged host, as HostInfo.Traps and
// Report.TrapsByKind name them.
const (
	TrapEvents       = "events"        // /events/YYYY/MM/: months without events, forever
	TrapEndlessPages = "endless-pages" // /news/?page=N past the last page: an empty listing, forever
)

// The paged host's sizes.
const (
	pagedBlogPages        = 30
	pagedPostsPerPage     = 5
	pagedThreadPages      = 25
	pagedThreadPosts      = 8 // posts per thread page
	pagedCataloguePages   = 12
	pagedProductsPerPage  = 8
	pagedDocSections      = 6
	pagedDocPages         = 6 // per section
	pagedNewsPages        = 4
	pagedStorePages       = 75
	pagedItemsPerPage     = 4
	pagedJournalPages     = 40
	pagedJournalPosts     = 5 // per listing page
	pagedStoriesPerPage   = 5
	pagedEventsYear       = 2025 // /events/ is June of this year
	pagedEventsMonth      = 6
	pagedThreadID         = 7
	pagedForumMemberCount = 6
)

// Notes of the paged host's pages (Page.Note), one per kind.
const (
	notePagedHome      = "paged: home"
	notePagedBlogList  = "paged: blog listing"
	notePagedPost      = "paged: blog post"
	notePagedForum     = "paged: forum"
	notePagedThread    = "paged: thread page"
	notePagedMember    = "paged: forum member"
	notePagedCatalogue = "paged: catalogue listing"
	notePagedProduct   = "paged: product"
	notePagedDocs      = "paged: docs page"
	notePagedEvents    = "paged: events"
	notePagedNewsList  = "paged: news listing"
	notePagedStory     = "paged: news story"
	notePagedStoreList = "paged: store listing"
	notePagedItem      = "paged: store item"
	notePagedJournal   = "paged: journal listing"
	notePagedJPost     = "paged: journal post"
	notePagedArchive   = "paged: journal archive"
)

// pagedSpec is how a page of the paged host is rendered: its blocks in
// order, after the site's navigation (the first pagedNavLinks links of
// its body).
type pagedSpec struct {
	blocks []pagedBlock
}

// pagedBlock is a piece of a paged page: literal HTML, a link of the
// page's body (by index) with its text, or words of text drawn from seed.
type pagedBlock struct {
	html  string
	link  int    // 1 + the index of a link in the body's links; 0 for none
	label string // the link's text; "" for its target's title
	words int    // words of text from seed, in a paragraph (after the link, if any)
	seed  uint64
}

// pagedNav is the site navigation every page of the paged host starts
// with: its sections' entry pages.
var pagedNav = []struct{ label, pq string }{
	{"Home", "/"}, {"Blog", "/blog/"}, {"Forum", "/forum/"}, {"Catalogue", "/catalogue/"},
	{"Docs", "/docs/"}, {"Events", "/events/"}, {"News", "/news/"},
}

// pagedSidebar is the forum's rules, on every forum page.
const pagedSidebar = `<aside><h3>Forum rules</h3><p>Be kind to other members and stay on topic.
Search before you post a question, and give your thread a title that says what it is about.
No advertising, no spam, no personal details of others. Moderators may move or close threads.</p></aside>`

// pagedBuilder makes the paged host's pages.
type pagedBuilder struct {
	h    *host
	rng  *rand.Rand
	next uint64 // seed of the next page
}

// makePagedHost adds the paged host when Options.Pagination is set.
func (g *gen) makePagedHost() {
	if !g.o.Pagination {
		return
	}
	w := g.w
	i := len(w.hosts)
	h := &host{idx: i, name: "paged." + g.o.Domain, ip: hostIP(i), robots: robotsAllowAll,
		latency: g.o.Latency, paged: true, byPQ: make(map[string]*resource)}
	w.hosts = append(w.hosts, h)
	w.byName[h.name] = h
	seed := uint64(g.o.Seed) ^ 0x7061_6765_6400_0000
	p := &pagedBuilder{h: h, rng: rand.New(rand.NewPCG(seed, 9)), next: seed}
	home := p.page("/", "Paged site", notePagedHome)
	nav := make([]*resource, len(pagedNav))
	nav[0] = home
	for k, e := range pagedNav[1:] {
		note := map[string]string{"/blog/": notePagedBlogList, "/forum/": notePagedForum, "/catalogue/": notePagedCatalogue,
			"/docs/": notePagedDocs, "/events/": notePagedEvents, "/news/": notePagedNewsList}[e.pq]
		nav[k+1] = p.page(e.pq, e.label, note)
	}
	for _, r := range h.res { // the nav's pages; later ones copy home's
		for _, t := range nav {
			r.body.links = append(r.body.links, link{to: t, raw: t.pq, where: inAnchor})
		}
	}
	p.text(home, 80)
	p.makeBlog(nav[1])
	p.makeForum(nav[2])
	p.makeCatalogue(nav[3])
	p.makeDocs(nav[4])
	p.makeEvents(nav[5])
	p.makeNews(nav[6])
	p.makeStore(home)
	p.makeJournal(home)
	for _, r := range h.res {
		h.regular = append(h.regular, r) // home first
	}
	first := g.ordinary[0].regular[0]
	first.body.links = append(first.body.links, link{to: home, raw: "http://" + h.name + portToken + "/", where: inAnchor})
}

// page adds an HTML page at pq; every page but the nav's own gets the
// nav's links (added to those first by makePagedHost).
func (p *pagedBuilder) page(pq, title, note string) *resource {
	p.next++
	r := &resource{host: p.h, pq: pq, kind: kindHTML, status: 200, note: note, seed: p.next,
		body: &bodySpec{seed: p.next, title: title, paged: &pagedSpec{}}}
	if p.h.byPQ[pq] != nil {
		panic("testweb: paged host made " + pq + " twice")
	}
	p.h.res = append(p.h.res, r)
	p.h.byPQ[pq] = r
	if home := p.h.byPQ["/"]; home != nil && len(home.body.links) > 0 {
		r.body.links = append(r.body.links, home.body.links[:len(pagedNav)]...)
	}
	return r
}

// link adds a link from r to t (or to raw, if t is nil: a page made on
// demand) with the text label ("" for t's title) and returns its block.
func (p *pagedBuilder) link(r, t *resource, raw, label string) pagedBlock {
	if t != nil {
		raw = t.pq
	}
	r.body.links = append(r.body.links, link{to: t, raw: raw, where: inAnchor})
	return pagedBlock{link: len(r.body.links), label: label}
}

func (p *pagedBuilder) add(r *resource, bs ...pagedBlock) {
	r.body.paged.blocks = append(r.body.paged.blocks, bs...)
}

func (p *pagedBuilder) html(r *resource, s string) { p.add(r, pagedBlock{html: s}) }

// text adds n words of r's own text, in paragraphs of 40.
func (p *pagedBuilder) text(r *resource, n int) {
	for k := 0; n > 0; k++ {
		p.add(r, pagedBlock{words: min(n, 40), seed: r.seed<<8 + uint64(k)})
		n -= 40
	}
}

// slug is a URL slug of two words and n.
func (p *pagedBuilder) slug(n int) string {
	return fmt.Sprintf("%s-%s-%d", vocabulary[p.rng.IntN(len(vocabulary))], vocabulary[p.rng.IntN(len(vocabulary))], n)
}

// pager adds a pagination bar to listing page k of pages (1-based) whose
// page j is at url(j): newer and older (or previous and next), then
// WordPress's numbers: the first, two either side of k, the last.
func (p *pagedBuilder) pager(r *resource, k, pages int, url func(int) (*resource, string), prev, next string) {
	p.pagerEvery(r, k, pages, 0, url, prev, next)
}

// pagerEvery is pager with the number of every every-th page as well
// (none if every is 0), as long listings have.
func (p *pagedBuilder) pagerEvery(r *resource, k, pages, every int, url func(int) (*resource, string), prev, next string) {
	p.html(r, `<nav class="pagination">`)
	to := func(j int, label string) {
		t, raw := url(j)
		p.add(r, p.link(r, t, raw, label), pagedBlock{html: " "})
	}
	if k > 1 {
		to(k-1, prev)
	}
	for j := 1; j <= pages; j++ {
		switch {
		case j == k:
			p.html(r, "<span>"+strconv.Itoa(j)+"</span> ")
		case j == 1 || j == pages || j >= k-2 && j <= k+2 || every > 0 && j%every == 0:
			to(j, strconv.Itoa(j))
		case j == 2 && k > 4 || j == pages-1 && k < pages-3:
			p.html(r, "<span>…</span> ")
		}
	}
	if k < pages {
		to(k+1, next)
	}
	p.html(r, "</nav>")
}

func (p *pagedBuilder) makeBlog(blog *resource) {
	lists := []*resource{blog}
	for k := 2; k <= pagedBlogPages; k++ {
		lists = append(lists, p.page(fmt.Sprintf("/blog/page/%d/", k), fmt.Sprintf("Blog, page %d", k), notePagedBlogList))
	}
	var posts []*resource
	for i := range pagedBlogPages * pagedPostsPerPage {
		month := 12 - i*12/(pagedBlogPages*pagedPostsPerPage)
		r := p.page(fmt.Sprintf("/blog/2024/%02d/%s/", month, p.slug(i+1)), "", notePagedPost)
		r.body.title = titleWords(r.seed)
		posts = append(posts, r)
	}
	for i, r := range posts {
		p.text(r, 150)
		p.html(r, "<p>")
		p.add(r, p.link(r, blog, "", "Back to the blog"))
		if i > 0 {
			p.add(r, pagedBlock{html: " | Newer: "}, p.link(r, posts[i-1], "", ""))
		}
		if i+1 < len(posts) {
			p.add(r, pagedBlock{html: " | Older: "}, p.link(r, posts[i+1], "", ""))
		}
		p.html(r, "</p>")
	}
	for k, r := range lists {
		for _, post := range posts[k*pagedPostsPerPage : (k+1)*pagedPostsPerPage] {
			p.html(r, "<article><h2>")
			b := p.link(r, post, "", "")
			b.words, b.seed = 30, post.seed<<8 // the post's first words
			p.add(r, b, pagedBlock{html: "</article>"})
		}
		p.pager(r, k+1, len(lists), func(j int) (*resource, string) { return lists[j-1], "" }, "« Newer posts", "Older posts »")
	}
}

func (p *pagedBuilder) makeForum(forum *resource) {
	p.text(forum, 40)
	var members []*resource
	for m := range pagedForumMemberCount {
		name := vocabulary[(m*37+11)%len(vocabulary)]
		r := p.page("/forum/member/"+name+"/", "Member "+name, notePagedMember)
		p.text(r, 40)
		members = append(members, r)
	}
	for _, th := range []struct{ id, pages int }{{pagedThreadID, pagedThreadPages}, {pagedThreadID + 1, 3}, {pagedThreadID + 2, 1}} {
		title := titleWords(uint64(th.id) ^ p.next)
		var pages []*resource
		for k := 1; k <= th.pages; k++ {
			pq := fmt.Sprintf("/forum/thread/%d", th.id)
			if k > 1 {
				pq += "?page=" + strconv.Itoa(k)
			}
			pages = append(pages, p.page(pq, fmt.Sprintf("%s, page %d", title, k), notePagedThread))
		}
		p.html(forum, "<h2>")
		p.add(forum, p.link(forum, pages[0], "", title), pagedBlock{html: "</h2>"})
		for k, r := range pages {
			p.html(r, pagedSidebar)
			for q := range pagedThreadPosts {
				p.html(r, `<div class="post"><p class="author">Posted by `)
				p.add(r, p.link(r, members[(k*pagedThreadPosts+q)%len(members)], "", ""), pagedBlock{html: "</p>"})
				p.add(r, pagedBlock{words: 45, seed: r.seed<<8 + uint64(q)}, pagedBlock{html: "</div>"})
			}
			if th.pages > 1 {
				p.pager(r, k+1, len(pages), func(j int) (*resource, string) { return pages[j-1], "" }, "‹ Previous", "Next ›")
			}
		}
	}
}

func (p *pagedBuilder) makeCatalogue(cat *resource) {
	lists := []*resource{cat}
	for k := 2; k <= pagedCataloguePages; k++ {
		lists = append(lists, p.page(fmt.Sprintf("/catalogue/?page=%d", k), fmt.Sprintf("Catalogue, page %d", k), notePagedCatalogue))
	}
	for k, r := range lists {
		p.html(r, `<p>Free delivery on orders over 50 euros. Every product ships within two working days
and may be returned within thirty days. Prices include VAT.</p><ul class="products">`)
		for q := range pagedProductsPerPage {
			n := k*pagedProductsPerPage + q + 1
			prod := p.page("/products/"+p.slug(n)+"/", "", notePagedProduct)
			prod.body.title = titleWords(prod.seed)
			p.text(prod, 100)
			p.html(prod, "<p>")
			p.add(prod, p.link(prod, cat, "", "Back to the catalogue"), pagedBlock{html: "</p>"})
			p.html(r, "<li>")
			p.add(r, p.link(r, prod, "", ""), pagedBlock{html: fmt.Sprintf(" %d.%02d EUR</li>", 5+n%40, n*7%100)})
		}
		p.html(r, "</ul>")
		p.pager(r, k+1, len(lists), func(j int) (*resource, string) { return lists[j-1], "" }, "Previous", "Next")
	}
}

func (p *pagedBuilder) makeDocs(docs *resource) {
	var order []*resource // reading order
	for s := 1; s <= pagedDocSections; s++ {
		for q := 1; q <= pagedDocPages; q++ {
			r := p.page(fmt.Sprintf("/docs/%d/%d/", s, q), "", notePagedDocs)
			r.body.title = fmt.Sprintf("%d.%d %s", s, q, titleWords(r.seed))
			order = append(order, r)
		}
	}
	p.text(docs, 40)
	p.html(docs, "<p>")
	p.add(docs, p.link(docs, order[0], "", "Start reading"), pagedBlock{html: "</p>"})
	for i, r := range order {
		s := i / pagedDocPages
		p.html(r, "<aside><ul>")
		for _, t := range order[s*pagedDocPages : (s+1)*pagedDocPages] {
			p.html(r, "<li>")
			p.add(r, p.link(r, t, "", ""), pagedBlock{html: "</li>"})
		}
		p.html(r, "</ul></aside>")
		p.text(r, 120)
		p.html(r, "<p>")
		if i > 0 {
			p.add(r, pagedBlock{html: "Previous: "}, p.link(r, order[i-1], "", ""), pagedBlock{html: " "})
		}
		if i+1 < len(order) {
			p.add(r, pagedBlock{html: "Next: "}, p.link(r, order[i+1], "", ""))
		}
		p.html(r, "</p>")
	}
}

func (p *pagedBuilder) makeEvents(ev *resource) {
	p.html(ev, fmt.Sprintf("<h2>%s %d</h2><p>Nothing is planned this month.</p><p>", monthNames[pagedEventsMonth-1], pagedEventsYear))
	p.add(ev, p.link(ev, nil, eventsPQ(pagedEventsYear, pagedEventsMonth-1), "‹ "+monthNames[pagedEventsMonth-2]),
		pagedBlock{html: " | "}, p.link(ev, nil, eventsPQ(pagedEventsYear, pagedEventsMonth+1), monthNames[pagedEventsMonth]+" ›"),
		pagedBlock{html: "</p>"})
}

func (p *pagedBuilder) makeNews(news *resource) {
	lists := []*resource{news}
	for k := 2; k <= pagedNewsPages; k++ {
		lists = append(lists, p.page(newsPQ(k), fmt.Sprintf("News, page %d", k), notePagedNewsList))
	}
	for k, r := range lists {
		for q := range pagedStoriesPerPage {
			st := p.page("/news/"+p.slug(k*pagedStoriesPerPage+q+1)+"/", "", notePagedStory)
			st.body.title = titleWords(st.seed)
			p.text(st, 90)
			p.html(r, "<article><h2>")
			b := p.link(r, st, "", "")
			b.words, b.seed = 20, st.seed<<8
			p.add(r, b, pagedBlock{html: "</article>"})
		}
		p.html(r, "<p>")
		if k > 0 {
			p.add(r, p.link(r, lists[k-1], "", "Newer stories"), pagedBlock{html: " | "})
		}
		var older *resource
		if k+1 < len(lists) {
			older = lists[k+1]
		}
		p.add(r, p.link(r, older, newsPQ(k+2), "Older stories"), pagedBlock{html: "</p>"})
	}
}

// makeStore adds the store, linked from home: pagedStorePages listing
// pages of pagedItemsPerPage items each, the items at /item/N.html.
func (p *pagedBuilder) makeStore(home *resource) {
	store := p.page("/store/", "Store", notePagedStoreList)
	p.html(home, "<p>")
	p.add(home, p.link(home, store, "", "Our store"), pagedBlock{html: "</p>"})
	lists := []*resource{store}
	for k := 2; k <= pagedStorePages; k++ {
		lists = append(lists, p.page(fmt.Sprintf("/store/?page=%d", k), fmt.Sprintf("Store, page %d", k), notePagedStoreList))
	}
	var items []*resource
	for n := 1; n <= pagedStorePages*pagedItemsPerPage; n++ {
		it := p.page(fmt.Sprintf("/item/%d.html", n), "", notePagedItem)
		it.body.title = titleWords(it.seed)
		items = append(items, it)
	}
	for n, it := range items {
		p.text(it, 60)
		p.html(it, "<p>")
		p.add(it, p.link(it, lists[n/pagedItemsPerPage], "", "Back to the store"), pagedBlock{html: "</p><p>Customers also bought: "})
		for _, rel := range items[n+1 : min(n+3, len(items))] {
			p.add(it, p.link(it, rel, "", ""), pagedBlock{html: " "})
		}
		p.html(it, "</p>")
	}
	for k, r := range lists {
		p.html(r, `<p>Every item ships within two working days. Prices include VAT.</p><ul class="items">`)
		for q, it := range items[k*pagedItemsPerPage : (k+1)*pagedItemsPerPage] {
			p.html(r, "<li>")
			p.add(r, p.link(r, it, "", ""), pagedBlock{html: fmt.Sprintf(" %d.%02d EUR</li>", 3+(k+q)%50, (k*7+q)%100)})
		}
		p.html(r, "</ul>")
		p.pagerEvery(r, k+1, len(lists), 10, func(j int) (*resource, string) { return lists[j-1], "" }, "Previous", "Next")
	}
}

// makeJournal adds the journal, linked from home: a blog of
// pagedJournalPages listing pages of pagedJournalPosts posts each, the
// posts at /journal/2025/MM/post-N.html.
func (p *pagedBuilder) makeJournal(home *resource) {
	journal := p.page("/journal/", "Journal", notePagedJournal)
	p.html(home, "<p>")
	p.add(home, p.link(home, journal, "", "Our journal"), pagedBlock{html: "</p>"})
	lists := []*resource{journal}
	for k := 2; k <= pagedJournalPages; k++ {
		lists = append(lists, p.page(fmt.Sprintf("/journal/page/%d/", k), fmt.Sprintf("Journal, page %d", k), notePagedJournal))
	}
	var posts []*resource
	for i := range pagedJournalPages * pagedJournalPosts {
		month := 12 - i*12/(pagedJournalPages*pagedJournalPosts)
		r := p.page(fmt.Sprintf("/journal/2025/%02d/post-%d.html", month, pagedJournalPages*pagedJournalPosts-i), "", notePagedJPost)
		r.body.title = titleWords(r.seed)
		posts = append(posts, r)
	}
	for i, r := range posts {
		p.text(r, 100)
		p.html(r, "<p>")
		p.add(r, p.link(r, journal, "", "Back to the journal"))
		if i > 0 {
			p.add(r, pagedBlock{html: " | Newer: "}, p.link(r, posts[i-1], "", ""))
		}
		if i+1 < len(posts) {
			p.add(r, pagedBlock{html: " | Older: "}, p.link(r, posts[i+1], "", ""))
		}
		p.html(r, "</p>")
	}
	archive := p.page("/journal/archive/", "Journal archive", notePagedArchive)
	p.html(journal, "<p>")
	p.add(journal, p.link(journal, archive, "", "Every post"), pagedBlock{html: "</p>"})
	p.html(archive, "<ul>")
	for _, post := range posts {
		p.html(archive, "<li>")
		p.add(archive, p.link(archive, post, "", ""), pagedBlock{html: "</li>"})
	}
	p.html(archive, "</ul>")
	for k, r := range lists {
		for _, post := range posts[k*pagedJournalPosts : (k+1)*pagedJournalPosts] {
			p.html(r, "<article><h2>")
			b := p.link(r, post, "", "")
			b.words, b.seed = 20, post.seed<<8 // the post's first words
			p.add(r, b, pagedBlock{html: "</article>"})
		}
		p.pager(r, k+1, len(lists), func(j int) (*resource, string) { return lists[j-1], "" }, "« Newer posts", "Older posts »")
	}
}

var monthNames = [...]string{"January", "February", "March", "April", "May", "June", "July",
	"August", "September", "October", "November", "December"}

// eventsPQ is the events page of month m of year y (m may be 0 or 13).
func eventsPQ(y, m int) string {
	y, m = y+(m-1+1200)/12-100, (m-1+1200)%12+1
	return fmt.Sprintf("/events/%04d/%02d/", y, m)
}

// newsPQ is news listing page k.
func newsPQ(k int) string {
	if k <= 1 {
		return "/news/"
	}
	return "/news/?page=" + strconv.Itoa(k)
}

// pagedTrapKind is the endless space of the paged host pq (canonical)
// is in: TrapEvents, TrapEndlessPages or "".
func pagedTrapKind(pq string) string {
	if _, _, ok := eventsMonth(pq); ok {
		return TrapEvents
	}
	if k, ok := strings.CutPrefix(pq, "/news/?page="); ok {
		if n, err := strconv.Atoi(k); err == nil && n > pagedNewsPages && strconv.Itoa(n) == k {
			return TrapEndlessPages
		}
	}
	return ""
}

// eventsMonth parses an events month page's path.
func eventsMonth(pq string) (y, m int, ok bool) {
	if n, _ := fmt.Sscanf(pq, "/events/%4d/%2d/", &y, &m); n != 2 || y < 1 || m < 1 || m > 12 || pq != eventsPQ(y, m) {
		return 0, 0, false
	}
	return y, m, true
}

// renderPagedTrap renders a page of the paged host's endless spaces, or
// returns nil if pq is none.
func (w *Web) renderPagedTrap(h *host, pq string) []byte {
	var title string
	var body strings.Builder
	a := func(href, text string) string {
		return fmt.Sprintf(`<a href="%s">%s</a>`, html.EscapeString(href), html.EscapeString(text))
	}
	switch pagedTrapKind(pq) {
	case TrapEvents:
		y, m, _ := eventsMonth(pq)
		title = fmt.Sprintf("Events: %s %d", monthNames[m-1], y)
		fmt.Fprintf(&body, "<h2>%s %d</h2><p>Nothing is planned this month.</p><p>%s | %s</p>\n", monthNames[m-1], y,
			a(eventsPQ(y, m-1), "‹ "+monthNames[(m+10)%12]), a(eventsPQ(y, m+1), monthNames[m%12]+" ›"))
	case TrapEndlessPages:
		k, _ := strconv.Atoi(strings.TrimPrefix(pq, "/news/?page="))
		title = fmt.Sprintf("News, page %d", k)
		fmt.Fprintf(&body, "<p>No stories here yet.</p><p>%s | %s</p>\n", a(newsPQ(k-1), "Newer stories"), a(newsPQ(k+1), "Older stories"))
	default:
		return nil
	}
	return w.pagedDocument(h, title, body.String())
}

// pagedDocument wraps main, a page's content, in the paged host's
// template: title, navigation, footer.
func (w *Web) pagedDocument(h *host, title, main string) []byte {
	var sb strings.Builder
	fmt.Fprintf(&sb, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>%s</title>\n</head>\n<body>\n<header><nav>", html.EscapeString(title))
	for _, e := range pagedNav {
		fmt.Fprintf(&sb, `<a href="%s">%s</a> `, e.pq, e.label)
	}
	fmt.Fprintf(&sb, "</nav></header>\n<main>\n<h1>%s</h1>\n%s</main>\n<footer><p>&copy; 2025 %s</p></footer>\n</body>\n</html>\n",
		html.EscapeString(title), main, h.name)
	return []byte(sb.String())
}

// renderPaged renders a page of the paged host from its pagedSpec.
func (w *Web) renderPaged(r *resource) []byte {
	b := r.body
	var sb strings.Builder
	for _, bl := range b.paged.blocks {
		sb.WriteString(bl.html)
		if bl.link > 0 {
			l := b.links[bl.link-1]
			text := bl.label
			if text == "" && l.to != nil {
				text = l.to.body.title
			}
			fmt.Fprintf(&sb, `<a href="%s">%s</a>`, html.EscapeString(w.withPort(l.raw)), html.EscapeString(text))
		}
		if bl.words > 0 {
			ws := sentenceWords(rand.New(rand.NewPCG(bl.seed, 3)), bl.words)
			ws[0] = capitalise(ws[0])
			sb.WriteString("\n<p>" + strings.Join(ws, " ") + ".</p>\n")
		}
	}
	return w.pagedDocument(r.host, b.title, sb.String())
}
