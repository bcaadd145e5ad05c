package testweb

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// trapWeb is a small web with every trap kind on at least one host (the
// kinds sit on small hosts 13, 23, 33 and 37 of every 40, the ?sid=
// session style on the second 40).
func trapWeb(seed int64) Options {
	o := small(seed)
	o.Hosts, o.Traps, o.Lookalikes = 60, true, true
	return o
}

// trapHost returns the first host carrying kind (and, for session IDs,
// writing them as sk).
func trapHost(t *testing.T, w *Web, kind string, sk sessionKind) *host {
	t.Helper()
	return hostWith(t, w, func(h *host) bool {
		return slices.Contains(h.traps(), kind) && (kind != TrapSessionID || h.session == sk)
	})
}

var hrefRE = regexp.MustCompile(`href="([^"]*)"`)

func hrefs(body string) []string {
	var out []string
	for _, m := range hrefRE.FindAllStringSubmatch(body, -1) {
		out = append(out, strings.ReplaceAll(m[1], "&amp;", "&"))
	}
	return out
}

func TestTrapsServe(t *testing.T) {
	srv := serve(t, trapWeb(21))
	w, c := srv.Web(), client(t, srv)
	at := func(h *host, pq string) string { return w.urlOf(h, pq) }
	for _, kind := range []string{TrapCalendar, TrapSessionID, TrapFacets, TrapGrowingPath, TrapSoft404} {
		n := 0
		for _, h := range w.Hosts() {
			if slices.Contains(h.Traps, kind) {
				n++
			}
		}
		if n == 0 {
			t.Errorf("no host carries trap %s", kind)
		}
	}

	for _, tc := range []struct {
		name string
		sk   sessionKind
		mark string // how the session appears in a link
	}{
		{"jsessionid", sessionPath, ";jsessionid="},
		{"sid", sessionQuery, "sid="},
	} {
		t.Run("session-id/"+tc.name, func(t *testing.T) {
			h := trapHost(t, w, TrapSessionID, tc.sk)
			page := h.regular[1]
			_, _, a := get(t, c, at(h, page.pq))
			_, _, b := get(t, c, at(h, page.pq))
			var sa, sb []string
			for _, l := range hrefs(a) {
				if strings.Contains(l, tc.mark) {
					sa = append(sa, l)
				}
			}
			sb = hrefs(b)
			if len(sa) == 0 {
				t.Fatalf("%s: no link carries %q:\n%s", at(h, page.pq), tc.mark, a)
			}
			if slices.Contains(sb, sa[0]) {
				t.Errorf("link %q came back in a second response: the session ID must change", sa[0])
			}
			// A link with a session ID leads to the same page.
			variant := withSession(page.pq, tc.sk, "00C0FFEE00C0FFEE")
			status, _, v := get(t, c, at(h, variant))
			if status != 200 || !strings.Contains(v, "<title>"+page.body.title+"</title>") {
				t.Errorf("GET %s = %d, want 200 with the page's title %q", variant, status, page.body.title)
			}
		})
	}

	t.Run("facets", func(t *testing.T) {
		h := trapHost(t, w, TrapFacets, 0)
		_, _, shop := get(t, c, at(h, "/shop/"))
		links := hrefs(shop)
		for _, want := range []string{"item-1.html", fmt.Sprintf("item-%d.html", shopItems), "?color=red", "?sort=price"} {
			if !slices.ContainsFunc(links, func(l string) bool {
				return strings.HasSuffix(strings.Split(strings.Split(l, "#")[0], "?")[0], want) || l == want
			}) {
				t.Errorf("/shop/ has no link ending in %q: %v", want, links)
			}
		}
		for _, tc := range []struct {
			pq     string
			status int
			link   string // a link the listing must carry, or ""
		}{
			{"/shop/?color=red", 200, "?color=red&size=s"},
			{"/shop/?color=red&size=m", 200, "?color=red&size=m&brand=acme"},
			{"/shop/?size=m&color=red", 200, "?size=m&color=red&brand=acme"}, // click order kept
			{"/shop/?color=red&size=m&brand=acme&sort=name", 200, ""},
			{"/shop/?color=purple", 404, ""},
			{"/shop/?color=red&color=blue", 404, ""},
			{"/shop/?page=2", 404, ""},
		} {
			status, _, body := get(t, c, at(h, tc.pq))
			if status != tc.status {
				t.Errorf("GET %s = %d, want %d", tc.pq, status, tc.status)
			}
			if tc.link != "" && !slices.Contains(hrefs(body), tc.link) {
				t.Errorf("GET %s: no link %q in %v", tc.pq, tc.link, hrefs(body))
			}
		}
		// Both orders list the same products.
		_, _, x := get(t, c, at(h, "/shop/?color=red&size=m"))
		_, _, y := get(t, c, at(h, "/shop/?size=m&color=red"))
		if px, py := productsOf(x), productsOf(y); !slices.Equal(px, py) {
			t.Errorf("filter orders list %v and %v, want the same products", px, py)
		}
	})

	t.Run("growing-path", func(t *testing.T) {
		h := trapHost(t, w, TrapGrowingPath, 0)
		for _, pq := range []string{"/grow/", "/grow/more/", "/grow/more/next/x/more/more/"} {
			status, _, body := get(t, c, at(h, pq))
			if status != 200 || !slices.Equal(hrefs(body)[:2], []string{"more/", "./next/x/"}) {
				t.Errorf("GET %s = %d with links %v, want 200 with more/ and ./next/x/", pq, status, hrefs(body))
			}
		}
	})

	t.Run("soft-404", func(t *testing.T) {
		h := trapHost(t, w, TrapSoft404, 0)
		_, _, home := get(t, c, at(h, "/"))
		broken := fmt.Sprintf("/gone/news-%d.html", h.idx)
		if !slices.Contains(hrefs(home), broken) {
			t.Fatalf("home page has no link to %s", broken)
		}
		for _, pq := range []string{broken, "/no/such/page.html"} {
			status, _, body := get(t, c, at(h, pq))
			if status != 200 || !strings.Contains(body, "Page not found") || !strings.Contains(body, pq) {
				t.Errorf("GET %s = %d, want 200 with a not-found page naming the path:\n%s", pq, status, body)
			}
			if n := len(hrefs(body)); n != soft404Links+1 {
				t.Errorf("GET %s: %d links, want %d further missing paths and home", pq, n, soft404Links)
			}
		}
		if status, _, _ := get(t, c, at(h, h.regular[0].pq)); status != 200 {
			t.Errorf("home of a soft-404 host = %d", status)
		}
	})
}

var productRE = regexp.MustCompile(`>Product (\d+)<`)

func productsOf(body string) []string {
	var out []string
	for _, m := range productRE.FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestTrapsAnalyze requests a few URLs of each trap and checks how
// Analyze counts them: trap fetches by kind, pages of a session-ID host
// fetched through any variant, nothing counted as extra.
func TestTrapsAnalyze(t *testing.T) {
	srv := serve(t, trapWeb(22))
	w, c := srv.Web(), client(t, srv)
	want := map[string]int{}
	fetch := func(h *host, pq, kind string) {
		get(t, c, w.urlOf(h, "/robots.txt"))
		get(t, c, w.urlOf(h, pq))
		if kind != "" {
			want[kind]++
		}
	}
	sess := trapHost(t, w, TrapSessionID, sessionPath)
	page := sess.regular[1]
	fetch(sess, withSession(page.pq, sessionPath, "0000000000000001"), "") // the page's first fetch
	fetch(sess, withSession(page.pq, sessionPath, "0000000000000002"), TrapSessionID)
	fetch(sess, page.pq, TrapSessionID)
	shop := trapHost(t, w, TrapFacets, 0)
	fetch(shop, "/shop/", "")
	fetch(shop, "/shop/item-1.html", "")
	fetch(shop, "/shop/?color=red", TrapFacets)
	fetch(shop, "/shop/?size=l&color=red", TrapFacets)
	grow := trapHost(t, w, TrapGrowingPath, 0)
	fetch(grow, "/grow/", TrapGrowingPath)
	fetch(grow, "/grow/more/", TrapGrowingPath)
	soft := trapHost(t, w, TrapSoft404, 0)
	fetch(soft, "/", "")
	fetch(soft, fmt.Sprintf("/gone/news-%d.html", soft.idx), TrapSoft404)
	cal := hostWith(t, w, func(h *host) bool { return h.trap })
	fetch(cal, "/calendar/2025/06", TrapCalendar)

	rep := Analyze(w, srv.Log(), AnalyzeOptions{Seeds: srv.Seeds(), Agent: "trawl"})
	for _, kind := range []string{TrapCalendar, TrapSessionID, TrapFacets, TrapGrowingPath, TrapSoft404} {
		got := 0
		for _, n := range rep.TrapsByKind[kind] {
			got += n
		}
		if got != want[kind] {
			t.Errorf("TrapsByKind[%s] = %v, want %d fetches", kind, rep.TrapsByKind[kind], want[kind])
		}
	}
	if u := page.url(w); !rep.Fetched[u] || !rep.Reachable[u] {
		t.Errorf("session-ID page %s: fetched %v, reachable %v; want both", u, rep.Fetched[u], rep.Reachable[u])
	}
	if len(rep.Extra) > 0 || len(rep.Repeats) > 0 {
		t.Errorf("extra %v, repeats %v; want none", rep.Extra, rep.Repeats)
	}
	for _, st := range rep.TrapStats() {
		if st.Kind == TrapSoft404 && (st.Hosts != 1 || st.Fetches != 1) {
			t.Errorf("TrapStats soft-404 = %+v, want 1 host reached with 1 fetch", st)
		}
	}
}

// TestTrapPagesNotReachable checks that no trap page is in the ground
// truth and that the shop's products are.
func TestTrapPagesNotReachable(t *testing.T) {
	w := Generate(trapWeb(23))
	reach := w.Reachable(w.Seeds(), "trawl", 0)
	items := 0
	for u := range reach {
		for _, bad := range []string{"/calendar/", "/grow/", "/shop/?", "jsessionid", "sid=", "/gone/", "/archive/"} {
			if strings.Contains(u, bad) {
				t.Errorf("Reachable contains trap URL %s", u)
			}
		}
		if strings.Contains(u, "/shop/item-") {
			items++
		}
	}
	if items == 0 {
		t.Errorf("no shop product is reachable")
	}
}
