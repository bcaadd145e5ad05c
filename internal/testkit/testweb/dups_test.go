package testweb

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/trawl-crawler/trawl/simhash"
)

// TestDuplicateLabels checks the web's duplicate labels against the pages
// it serves: an exact duplicate renders byte for byte as its original, a
// near duplicate within SimHash distance 3 of it (a label the text does
// not bear out would be a bad label), and it reports how far apart the
// lookalike pairs (distinct pages on one template) and unrelated pages
// are.
func TestDuplicateLabels(t *testing.T) {
	w := Generate(Options{Seed: 31, Lookalikes: true, Traps: true})
	byURL := map[string]*resource{}
	for _, h := range w.hosts {
		for _, r := range h.res {
			byURL[r.url(w)] = r
		}
	}
	sim := func(r *resource) uint64 { return simhash.HTML(w.renderHTML(r)) }
	exact, near, look := 0, 0, 0
	nearDist := map[string][]int{} // variant → distances
	var lookDist []int
	for _, p := range w.Pages() {
		r := byURL[p.URL]
		switch {
		case p.DuplicateOf != "":
			exact++
			if o := byURL[p.DuplicateOf]; !bytes.Equal(w.renderHTML(r), w.renderHTML(o)) {
				t.Errorf("%s is labelled an exact duplicate of %s but renders differently", p.URL, p.DuplicateOf)
			}
		case p.NearDuplicateOf != "":
			near++
			o := byURL[p.NearDuplicateOf]
			d := simhash.Distance(sim(r), sim(o))
			v := []string{"", "words", "counter", "links"}[r.body.variant]
			nearDist[v] = append(nearDist[v], d)
			if d > 3 {
				t.Errorf("%s (%s) is labelled a near duplicate of %s but its SimHash is %d bits away, want <= 3", p.URL, v, p.NearDuplicateOf, d)
			}
			if bytes.Equal(w.renderHTML(r), w.renderHTML(o)) {
				t.Errorf("%s is labelled a near duplicate of %s but renders byte for byte the same", p.URL, p.NearDuplicateOf)
			}
		case p.LookalikeOf != "" && p.URL < p.LookalikeOf:
			look++
			lookDist = append(lookDist, simhash.Distance(sim(r), sim(byURL[p.LookalikeOf])))
		}
	}
	if exact < 60 || near < 60 || look < 40 {
		t.Errorf("%d exact, %d near duplicates and %d lookalike pairs; want at least 60, 60 and 40 in a 300-host web", exact, near, look)
	}
	for _, v := range slices.Sorted(func(yield func(string) bool) {
		for k := range nearDist {
			if !yield(k) {
				return
			}
		}
	}) {
		t.Logf("near duplicates (%s): %d, SimHash distances %s", v, len(nearDist[v]), histogram(nearDist[v]))
	}
	t.Logf("lookalike pairs (distinct): %d, SimHash distances %s", look, histogram(lookDist))
	close := 0
	for _, d := range lookDist {
		if d <= 3 {
			close++
		}
	}
	if close*10 > len(lookDist) {
		t.Errorf("%d of %d lookalike pairs within distance 3: the pairs are meant to be distinct pages", close, len(lookDist))
	}
}

// histogram writes distances as "d:count" pairs in order, with the
// minimum, e.g. "min 9 [9:1 12:3]".
func histogram(ds []int) string {
	if len(ds) == 0 {
		return "none"
	}
	counts := map[int]int{}
	for _, d := range ds {
		counts[d]++
	}
	var parts []string
	for d := 0; d <= 64; d++ {
		if counts[d] > 0 {
			parts = append(parts, fmt.Sprintf("%d:%d", d, counts[d]))
		}
	}
	return fmt.Sprintf("min %d [%s]", slices.Min(ds), strings.Join(parts, " "))
}
