package node

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/trawl-crawler/trawl/simhash"
)

// templatedPage is a page of host-wide frame text (a plain div, which the
// markup does not mark as frame) around n words of its own.
func templatedPage(own string, n int) *simhash.Content {
	frame := strings.Repeat("this site is run by a small team of volunteers who write about birds ", 10)
	var b strings.Builder
	b.WriteString("<title>" + own + "</title><div class=box><p>" + frame + "</p></div><p>")
	for i := range n {
		fmt.Fprintf(&b, "%s%d ", own, i)
	}
	b.WriteString("</p>")
	return simhash.HTMLContent([]byte(b.String()))
}

// TestTemplatesReprint: the pages a host's gate entered before its template
// was learned are handed back once it is, printed without it; not before,
// and not again.
func TestTemplatesReprint(t *testing.T) {
	var ts templates
	for i := range simhash.TemplateMinPages - 1 {
		if r := ts.add("a.test", templatedPage(fmt.Sprint("p", i), 40), true, fmt.Sprint("u", i), 1, nearMinWords); r != nil {
			t.Fatalf("page %d: reprints %v before the template is learned", i, r)
		}
	}
	r := ts.add("a.test", templatedPage("last", 40), true, "u-last", 1, nearMinWords)
	if len(r) != simhash.TemplateMinPages-1 {
		t.Fatalf("%d reprints once the template is learned, want the %d pages entered before", len(r), simhash.TemplateMinPages-1)
	}
	for i, p := range r {
		if p.url != fmt.Sprint("u", i) || p.print.Words != 40+1 { // its own words and its title
			t.Errorf("reprint %d: %s with %d words, want u%d without the frame (41 words)", i, p.url, p.print.Words, i)
		}
	}
	if r := ts.add("a.test", templatedPage("more", 40), true, "u-more", 1, nearMinWords); r != nil {
		t.Errorf("reprints again: %v", r)
	}
	if ts.earlyBytes != 0 {
		t.Errorf("%d bytes of early pages kept after the reprint, want 0", ts.earlyBytes)
	}
}

// TestTemplatesBounded: many hosts of few pages keep at most
// maxTemplateHosts templates and maxEarlyBytes of early pages.
func TestTemplatesBounded(t *testing.T) {
	t.Parallel()
	var ts templates
	// Every host gets the same two pages, read once: add takes the page
	// it is given, so each host is given a copy.
	pages := [2]*simhash.Content{templatedPage("p0", 3000), templatedPage("p1", 3000)}
	for h := range maxTemplateHosts + 100 {
		for _, page := range pages {
			ts.add(fmt.Sprintf("h%d.test", h), page.Clone(), true, "u", 1, nearMinWords)
		}
		if ts.earlyBytes > maxEarlyBytes {
			t.Fatalf("after %d hosts, %d bytes of early pages, want at most %d", h+1, ts.earlyBytes, maxEarlyBytes)
		}
	}
	if ts.lru.Len() != maxTemplateHosts || len(ts.hosts) != maxTemplateHosts {
		t.Errorf("%d templates kept (%d in the map), want %d", ts.lru.Len(), len(ts.hosts), maxTemplateHosts)
	}
	sum := 0
	for e := ts.lru.Front(); e != nil; e = e.Next() {
		for _, p := range e.Value.(*hostTemplate).early {
			sum += p.content.Size()
		}
	}
	if sum != ts.earlyBytes {
		t.Errorf("early pages hold %d bytes, the count says %d", sum, ts.earlyBytes)
	}
	// withEarly lists the hosts holding early pages, in lru's order.
	var want []*hostTemplate
	for e := ts.lru.Front(); e != nil; e = e.Next() {
		if ht := e.Value.(*hostTemplate); len(ht.early) > 0 {
			want = append(want, ht)
		}
	}
	var got []*hostTemplate
	for e := ts.withEarly.Front(); e != nil; e = e.Next() {
		got = append(got, e.Value.(*hostTemplate))
	}
	if !slices.Equal(got, want) || len(want) == 0 {
		t.Errorf("%d hosts listed with early pages, want the %d that hold some, in lru order", len(got), len(want))
	}
}

// BenchmarkTemplatesAdd: a broad crawl's first page of each of 1,000 new
// hosts, read after 1,048 hosts whose templates are learned (they hold no
// early pages): past the first 250 or so, each add lets an early page go
// to stay under maxEarlyBytes.
func BenchmarkTemplatesAdd(b *testing.B) {
	big := templatedPage("p", 16000) // its Size is 1/256 of maxEarlyBytes
	small := templatedPage("s", 50)
	const fresh = 1000
	var ts *templates
	i := 0
	for b.Loop() {
		if i%fresh == 0 {
			b.StopTimer()
			ts = &templates{}
			for h := range maxTemplateHosts - fresh {
				for range simhash.TemplateMinPages {
					ts.add(fmt.Sprintf("t%d.test", h), small.Clone(), true, "u", 1, nearMinWords)
				}
			}
			b.StartTimer()
		}
		ts.add(fmt.Sprintf("n%d.test", i%fresh), big.Clone(), true, "u", 1, nearMinWords)
		i++
	}
}
