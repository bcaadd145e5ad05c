package testweb

import (
	"bytes"
	"html"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var (
	tagRE      = regexp.MustCompile(`<[^>]*>`)
	nearHrefRE = regexp.MustCompile(`href="([^"]*)"`)
)

// textWords is the words of an HTML fragment's text, lower case, without
// punctuation.
func textWords(frag string) []string {
	var out []string
	for _, w := range strings.Fields(html.UnescapeString(tagRE.ReplaceAllString(frag, " "))) {
		if w = strings.ToLower(strings.Trim(w, ".,:|")); w != "" {
			out = append(out, w)
		}
	}
	return out
}

// bodyWords is the words of a page's visible text (its body).
func bodyWords(page []byte) []string {
	_, body, _ := strings.Cut(string(page), "<body>")
	return textWords(body)
}

// articleOf cuts the article element (title and text) out of a page of
// the near-duplicate web, as its host writes it, and returns its title's
// and its text's words.
func articleOf(t *testing.T, r *resource, page []byte) (title, text []string) {
	t.Helper()
	st := r.host.near.style
	_, rest, ok := strings.Cut(string(page), st.open("article"))
	art, _, ok2 := strings.Cut(rest, st.close("article"))
	if !ok || !ok2 {
		t.Fatalf("%s: no %s ... %s in the page", r.pq, st.open("article"), st.close("article"))
	}
	_, h1, _ := strings.Cut(art, "<h1>")
	h1, text0, _ := strings.Cut(h1, "</h1>")
	return textWords(h1), textWords(text0)
}

func nearWebByURL(w *Web) map[string]*resource {
	out := map[string]*resource{}
	for _, h := range w.hosts {
		for _, r := range h.res {
			out[r.url(w)] = r
		}
	}
	return out
}

// TestNearDupDeterministic: equal options give the same pages, labels and
// bytes; another seed another web.
func TestNearDupDeterministic(t *testing.T) {
	o := Options{Seed: 5, Hosts: 12, NearDup: true, Port: 8080}
	a, b := Generate(o), Generate(o)
	if !slices.Equal(a.Pages(), b.Pages()) {
		t.Fatal("two webs of equal options list different pages")
	}
	byB := nearWebByURL(b)
	for u, r := range nearWebByURL(a) {
		if !bytes.Equal(a.renderHTML(r), b.renderHTML(byB[u])) {
			t.Fatalf("%s renders differently in two webs of equal options", u)
		}
	}
	o.Latency, o.MaxLatency = -1, 0
	if !slices.Equal(a.Pages(), Generate(o).Pages()) {
		t.Error("the latency changes the pages")
	}
	o.Seed = 6
	if slices.Equal(a.Pages(), Generate(o).Pages()) {
		t.Error("seeds 5 and 6 give the same pages")
	}
	if err := (Options{NearDup: true, Traps: true, Sitemaps: true}).Validate(); err == nil ||
		!strings.Contains(err.Error(), "Traps: not with NearDup") || !strings.Contains(err.Error(), "Sitemaps: not with NearDup") {
		t.Errorf("Validate(NearDup with Traps and Sitemaps) = %v, want both named", err)
	}
}

// TestNearDupLabels holds every label of the near-duplicate web to the
// pages it serves: a near copy's share of article words changed,
// measured from the two rendered pages, is its EditSize; its other change
// is there; an exact copy is byte for byte its original; a templated
// page has about 100 words of its own in a template of about 2,200 that
// its host's pages share; articles are 250 to 800 words.
func TestNearDupLabels(t *testing.T) {
	w := Generate(Options{Seed: 3, Hosts: 30, NearDup: true, Port: 8080})
	byURL := nearWebByURL(w)
	bySize := map[float64]int{}
	var cross, exact, templated, ordinary int
	templates := map[*host][]string{}
	for _, p := range w.Pages() {
		r := byURL[p.URL]
		page := w.renderHTML(r)
		switch {
		case p.DuplicateOf != "":
			exact++
			if o := byURL[p.DuplicateOf]; !bytes.Equal(page, w.renderHTML(o)) || o.dupOf != nil {
				t.Errorf("%s: labelled an exact copy of %s, which renders otherwise or is a copy itself", p.URL, p.DuplicateOf)
			}
		case p.NearDuplicateOf != "":
			o := byURL[p.NearDuplicateOf]
			if o.dupOf != nil {
				t.Errorf("%s: labelled a copy of %s, itself a copy", p.URL, p.NearDuplicateOf)
			}
			orig := w.renderHTML(o)
			t1, a1 := articleOf(t, o, orig)
			t2, a2 := articleOf(t, r, page)
			if !slices.Equal(t1, t2) || len(a1) != len(a2) {
				t.Fatalf("%s: title %q and %d words, its original %s %q and %d", p.URL, t2, len(a2), p.NearDuplicateOf, t1, len(a1))
			}
			changed := 0
			for i := range a1 {
				if a1[i] != a2[i] {
					changed++
				}
			}
			if got := float64(changed) / float64(len(a1)); got < p.EditSize-0.5/float64(len(a1))-1e-9 || got > p.EditSize+0.5/float64(len(a1))+1e-9 {
				t.Errorf("%s: %d of %d article words changed (%.4f), labelled %.2f", p.URL, changed, len(a1), got, p.EditSize)
			}
			switch p.NearChange {
			case NearChangeCrossHost:
				cross++
				if r.host == o.host || p.EditSize != 0 {
					t.Errorf("%s: a cross-host copy of %s on its host, or edited (%.2f)", p.URL, p.NearDuplicateOf, p.EditSize)
				}
			case NearChangeAd, NearChangePopular:
				bySize[p.EditSize]++
				if r.host != o.host {
					t.Errorf("%s: a same-host copy of %s on another host", p.URL, p.NearDuplicateOf)
				}
				st := r.host.near.style
				ad := func(b []byte) string {
					_, s, _ := strings.Cut(string(b), st.open("ad"))
					s, _, _ = strings.Cut(s, "</div>")
					return s
				}
				pop := func(b []byte) []string {
					_, s, _ := strings.Cut(string(b), "<h3>Popular</h3>")
					s, _, _ = strings.Cut(s, "</ul>")
					return nearHrefRE.FindAllString(s, -1)
				}
				adSame, popSame := ad(page) == ad(orig), slices.Equal(pop(page), pop(orig))
				if p.NearChange == NearChangeAd && (adSame || !popSame) || p.NearChange == NearChangePopular && (!adSame || popSame) ||
					!slices.Equal(slices.Sorted(slices.Values(pop(page))), slices.Sorted(slices.Values(pop(orig)))) {
					t.Errorf("%s (%s): ad the same %v, popular order the same %v, against %s", p.URL, p.NearChange, adSame, popSame, p.NearDuplicateOf)
				}
			default:
				t.Errorf("%s: near copy with change %q", p.URL, p.NearChange)
			}
		case p.Templated:
			templated++
			_, own := articleOf(t, r, page)
			if len(own) < templatedMinBody || len(own) > templatedMaxBody {
				t.Errorf("%s: %d words of its own, want %d to %d", p.URL, len(own), templatedMinBody, templatedMaxBody)
			}
			if r.pq == "/" {
				break // its lists are a home page's
			}
			// The template: the page's text without its article and its
			// links onward (title, own words, "Read next" list).
			st := r.host.near.style
			s := string(page)
			i := strings.Index(s, st.open("article"))
			j := i + strings.Index(s[i:], st.close("article")) + len(st.close("article"))
			if rest, ok := strings.CutPrefix(s[j:], "\n<div class=\"related\">"); ok {
				j = len(s) - len(rest) + strings.Index(rest, "</div>")
			}
			tmpl := bodyWords([]byte(s[:i] + s[j:]))
			if len(tmpl) < 2000 || len(tmpl) > 2400 {
				t.Errorf("%s: template of %d words, want about 2,200", p.URL, len(tmpl))
			}
			if prev, ok := templates[r.host]; ok && !slices.Equal(prev, tmpl) {
				t.Errorf("%s: template differs from its host's other pages'", p.URL)
			}
			if _, ok := templates[r.host]; !ok {
				t.Logf("%s: template of %d words", r.host.name, len(tmpl))
			}
			templates[r.host] = tmpl
		default:
			ordinary++
			if r.pq != "/" {
				if _, words := articleOf(t, r, page); len(words) < nearMinWords || len(words) > nearMaxWords {
					t.Errorf("%s: article of %d words, want %d to %d", p.URL, len(words), nearMinWords, nearMaxWords)
				}
			}
		}
	}
	// Templated pages of a host are distinct: their own texts differ in
	// most places.
	for _, h := range w.hosts {
		if !h.near.templated {
			continue
		}
		var prev []string
		for _, r := range h.res {
			_, own := articleOf(t, r, w.renderHTML(r))
			if prev != nil {
				same := 0
				for i := range min(len(own), len(prev)) {
					if own[i] == prev[i] {
						same++
					}
				}
				if same*3 > len(own) {
					t.Errorf("%s: %d of its %d words in the place its host's page before has them", r.pq, same, len(own))
				}
			}
			prev = own
		}
	}
	t.Logf("near copies by edit size %v, %d cross-host, %d exact, %d templated pages, %d ordinary", bySize, cross, exact, templated, ordinary)
	for _, e := range NearEditSizes {
		if bySize[e] < 20 {
			t.Errorf("%d near copies at edit size %.2f, want at least 20 in a 30-host web", bySize[e], e)
		}
	}
	if cross < 20 || exact < 40 || templated < 6*nearMinTemplated || ordinary < 24*nearMinArticles {
		t.Errorf("%d cross-host copies, %d exact, %d templated pages, %d ordinary: too few for a 30-host web", cross, exact, templated, ordinary)
	}
}

// TestNearDupReachable: every page of the near-duplicate web is reachable
// from its seeds, and the links each page renders are the links its
// label lists (those Reachable walks).
func TestNearDupReachable(t *testing.T) {
	w := Generate(Options{Seed: 9, Hosts: 15, NearDup: true, Port: 8080})
	reach := w.Reachable(w.Seeds(), "trawl", 0)
	pages := w.Pages()
	for _, p := range pages {
		if !reach[p.URL] {
			t.Errorf("%s is not reachable from the seeds", p.URL)
		}
	}
	if len(reach) != len(pages) {
		t.Errorf("%d URLs reachable, %d pages", len(reach), len(pages))
	}
	for u, r := range nearWebByURL(w) {
		var want []string
		for _, l := range r.body.links {
			want = append(want, w.withPort(l.raw))
		}
		var got []string
		for _, m := range nearHrefRE.FindAllStringSubmatch(string(w.renderHTML(r)), -1) {
			if h := html.UnescapeString(m[1]); !strings.Contains(h, ".example/") {
				got = append(got, h)
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s renders links\n%q\nits label lists\n%q", u, got, want)
		}
	}
}

// BenchmarkNearDupRender: what a page of the near-duplicate web costs the
// server.
func BenchmarkNearDupRender(b *testing.B) {
	w := Generate(Options{Seed: 1, Hosts: 10, NearDup: true, Port: 8080})
	var rs []*resource
	for _, h := range w.hosts {
		rs = append(rs, h.res...)
	}
	b.ResetTimer()
	for i := range b.N {
		w.renderHTML(rs[i%len(rs)])
	}
}
