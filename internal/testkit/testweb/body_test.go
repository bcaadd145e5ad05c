package testweb

import "testing"

// TestBodyIsWhatIsServed fetches every URL of a web with every kind of
// page and compares the body with Web.Body: the same bytes wherever Body
// knows them, and Body knows every PDF, PNG and redirect and the HTML
// pages of ordinary hosts.
func TestBodyIsWhatIsServed(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: every body of a big web; the full suite runs it")
	}
	srv := serve(t, Options{Seed: 5, Hosts: 20, BigPages: 5, MaxPages: 12, Hostile: true, Traps: true})
	w := srv.Web()
	c := client(t, srv)
	known := map[resKind]int{}
	for _, p := range w.Pages() {
		want, ok := w.Body(p.URL)
		h, r, _, err := w.lookup(p.URL)
		if err != nil || r == nil {
			t.Fatalf("%s: a page the web lists does not look up: %v", p.URL, err)
		}
		if !ok {
			if r.kind == kindPDF || r.kind == kindPNG || r.kind == kindRedirect && h.hostile == notHostile {
				t.Errorf("%s: Body does not know a %v of an ordinary host", p.URL, r.kind)
			}
			continue
		}
		known[r.kind]++
		if _, _, got := get(t, c, p.URL); got != string(want) {
			t.Errorf("%s: served %d bytes, Body says %d", p.URL, len(got), len(want))
		}
	}
	for _, k := range []resKind{kindHTML, kindPDF, kindPNG, kindRedirect} {
		if known[k] == 0 {
			t.Errorf("Body knew no URL of kind %v; the web has some", k)
		}
	}
	if _, ok := w.Body(w.urlOf(w.hosts[0], "/robots.txt")); ok {
		t.Error("Body knows a robots.txt; it serves pages only")
	}
}
