package node

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/crawllog"
	"github.com/trawl-crawler/trawl/internal/testkit/testweb"
)

// dupWeb is the web TestDuplicateVerdicts crawls: 200 hosts with the
// synthetic web's labelled exact and near copies and its lookalike pairs
// (one template, different text), pages of the default sizes (20 to 60
// KiB) and no latency.
var dupWeb = testweb.Options{Seed: 23, Hosts: 200, BigPages: 20, MaxPages: 8, Lookalikes: true, Latency: -1}

// dupFigures are the content gates' verdicts on a crawl, judged against
// the web's labels.
type dupFigures struct {
	exactPairs, exactCaught int // labelled exact copies both fetched; the later one a revisit of the other
	nearPairs, nearCaught   int // labelled near copies both fetched; the later one judged a duplicate of its family
	distinct, falsePos      int // fetched HTML pages in no family; judged a duplicate anyway
	lookalikes, lookFalse   int // of distinct, pages with a lookalike; judged a duplicate anyway
}

func (f dupFigures) String() string {
	return fmt.Sprintf("exact %d/%d, near recall %d/%d = %.3f, false positives %d/%d = %.4f (lookalikes %d/%d)",
		f.exactCaught, f.exactPairs, f.nearCaught, f.nearPairs, ratio(f.nearCaught, f.nearPairs),
		f.falsePos, f.distinct, ratio(f.falsePos, f.distinct), f.lookFalse, f.lookalikes)
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// judgeDuplicates compares the crawl log's verdicts with the web's labels.
// A family is an original and its labelled copies; of two members of a
// family, whichever was fetched later should be judged a duplicate (exact
// for byte copies, exact or near otherwise) of a member fetched before.
func judgeDuplicates(web *testweb.Web, entries []crawllog.Entry) (dupFigures, []string) {
	family := map[string]string{} // page → its family's original
	lookalike := map[string]bool{}
	kind := map[string]string{} // copy → "exact" or "near"
	trap := map[string]bool{}
	for _, p := range web.Pages() {
		switch {
		case p.DuplicateOf != "":
			family[p.URL], family[p.DuplicateOf], kind[p.URL] = p.DuplicateOf, p.DuplicateOf, "exact"
		case p.NearDuplicateOf != "":
			family[p.URL], family[p.NearDuplicateOf], kind[p.URL] = p.NearDuplicateOf, p.NearDuplicateOf, "near"
		}
		if p.LookalikeOf != "" {
			lookalike[p.URL] = true
		}
		if strings.Contains(p.Note, "trap") {
			trap[p.URL] = true
		}
	}
	known := map[string]bool{}
	for _, p := range web.Pages() {
		known[p.URL] = true
	}
	// The first fetch of each page with a 2xx HTML answer, in log order.
	type fetched struct {
		order           int
		dedup, original string
	}
	got := map[string]fetched{}
	for i, e := range entries {
		if e.Dropped != "" || e.Robots || e.Status < 200 || e.Status > 299 || e.MIME != "text/html" {
			continue
		}
		if _, ok := got[e.URL]; !ok {
			got[e.URL] = fetched{i, e.Dedup, e.Original}
		}
	}
	var f dupFigures
	var misses []string
	for u, orig := range family {
		if u == orig {
			continue
		}
		a, okA := got[u]
		b, okB := got[orig]
		if !okA || !okB {
			continue
		}
		later, other := a, orig
		if b.order > a.order {
			later, other = b, u
		}
		judged := later.original != "" && family[later.original] == orig
		if kind[u] == "exact" {
			f.exactPairs++
			if judged && later.dedup == crawllog.DedupExact && later.original == other {
				f.exactCaught++
			} else {
				misses = append(misses, fmt.Sprintf("exact copy %s of %s: later fetch judged %q of %q", u, orig, later.dedup, later.original))
			}
			continue
		}
		f.nearPairs++
		if judged && later.dedup != "" {
			f.nearCaught++
		} else {
			misses = append(misses, fmt.Sprintf("near copy %s of %s: later fetch judged %q of %q", u, orig, later.dedup, later.original))
		}
	}
	for u, g := range got {
		if _, inFamily := family[u]; inFamily || !known[u] || trap[u] {
			continue
		}
		f.distinct++
		if lookalike[u] {
			f.lookalikes++
		}
		if g.dedup != "" {
			f.falsePos++
			if lookalike[u] {
				f.lookFalse++
			}
			misses = append(misses, fmt.Sprintf("distinct page %s judged %q of %s", u, g.dedup, g.original))
		}
	}
	return f, misses
}

// TestDuplicateVerdicts crawls a web with labelled exact copies, near
// copies and lookalikes, and judges the content gates from the crawl log
// alone: every exact copy fetched after its original is a revisit of it;
// near copies are caught with recall at least 95%; at most 1% of the
// distinct pages are judged duplicates; coverage stays at least 99%.
func TestDuplicateVerdicts(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a crawl of a synthetic web; the full suite runs it")
	}
	t.Parallel()
	h := newHarness(t, dupWeb, 20*time.Millisecond)
	sum := h.run(t, t.Context())
	rep := h.analyze(0.99)
	if p := rep.Problems(); len(p) > 0 {
		t.Fatalf("the web's log shows %d problems:\n%s\n%s", len(p), strings.Join(p, "\n"), rep)
	}
	entries := checkCrawlLog(t, h, sum)
	f, misses := judgeDuplicates(h.srv.Web(), entries)
	for _, m := range misses {
		t.Log(m)
	}
	t.Logf("coverage %.3f; %s", rep.Coverage, f)
	if f.exactPairs == 0 || f.nearPairs < 20 || f.lookalikes < 20 {
		t.Fatalf("too few labelled pages fetched to judge: %s", f)
	}
	if f.exactCaught != f.exactPairs {
		t.Errorf("%d of %d exact copies not archived as revisits of their original", f.exactPairs-f.exactCaught, f.exactPairs)
	}
	if r := ratio(f.nearCaught, f.nearPairs); r < 0.95 {
		t.Errorf("near-duplicate recall %.3f, want at least 0.95", r)
	}
	if r := ratio(f.falsePos, f.distinct); r > 0.01 {
		t.Errorf("false-positive rate %.4f among distinct pages, want at most 0.01", r)
	}
}
