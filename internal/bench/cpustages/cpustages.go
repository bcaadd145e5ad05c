// Package cpustages splits a CPU profile of a crawl into the stages a page
// goes through (fetch and decode, WARC and gzip, digests, link extraction,
// URL work, seen gate, store commits, frontier, GC), so that a benchmark
// can say where each millisecond of a page's CPU goes.
//
// A sample belongs to the stage of the deepest frame of its stack that a
// rule claims: SHA-256 inside the fetch path counts as digests, URL parsing
// inside link extraction counts as URL work. A sample no rule claims counts
// as "other" (the scheduler, the node's own bookkeeping). The stages'
// durations add up to the profile's total.
package cpustages

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/google/pprof/profile"
)

// Stage names, in the order Split reports them.
const (
	Fetch    = "fetch and decode"
	WARC     = "WARC and gzip"
	Digests  = "digests (SHA-256, SimHash)"
	Links    = "link extraction"
	URLs     = "URL parsing and normalisation"
	Seen     = "seen gate"
	Store    = "store commits"
	Frontier = "frontier"
	GC       = "GC"
	Other    = "other"
)

// Order lists every stage in report order.
var Order = []string{Fetch, WARC, Digests, Links, URLs, Seen, Store, Frontier, GC, Other}

// rule claims a frame for a stage when the frame's function name has the
// prefix.
type rule struct {
	prefix string
	stage  string
}

// rules are matched against each frame's function name. The module path is
// written out so that a rule for trawl's own packages never claims a
// dependency's function of the same name.
var rules = func() []rule {
	const m = "github.com/trawl-crawler/trawl/"
	return []rule{
		{m + "fetch.", Fetch},
		// The HTTP transport's own goroutines. Socket reads and writes
		// (net., internal/poll.) are left unclaimed: file writes go
		// through internal/poll too, and belong to their caller's stage.
		{"net/http.", Fetch},
		{"compress/gzip.", Fetch}, // response decoding (deflate, zlib)
		{"compress/flate.", Fetch},
		{"compress/zlib.", Fetch},
		// Response decoding through klauspost's readers (gzip, zstd), before
		// the rule that gives the rest of klauspost's package, the WARC's
		// compression, to the WARC.
		{"github.com/klauspost/compress/gzip.(*Reader)", Fetch},
		{"github.com/klauspost/compress/flate.(*decompressor)", Fetch},
		{"github.com/klauspost/compress/flate.(*dictDecoder)", Fetch},
		{"github.com/klauspost/compress/zstd.", Fetch},
		{"github.com/klauspost/compress/huff0.", Fetch},
		{"github.com/klauspost/compress/fse.", Fetch},
		{m + "warc.", WARC},
		{"github.com/nlnwa/gowarc/", WARC},
		{"github.com/klauspost/compress/", WARC},
		// SHA-256 is left unclaimed: its caller says whose it is, the
		// WARC writer's block digests or the node's payload digest (which
		// the writer reuses as the WARC-Payload-Digest).
		{"crypto/sha1.", WARC}, // WARC digests of files recovered
		{m + "node.(*Node).archive", WARC},
		{m + "node.payloadSum", Digests},
		{m + "simhash.", Digests},
		{m + "links.", Links},
		{"golang.org/x/net/html.", Links},
		{m + "urlnorm.", URLs},
		{"github.com/nlnwa/whatwg-url/", URLs},
		{"golang.org/x/net/idna.", URLs},
		{"net/url.", URLs},
		{m + "scope.", URLs},
		{m + "internal/store/urlseen.", Seen},
		{m + "internal/store.", Store},
		{m + "internal/frontierdb.", Store},
		{"github.com/cockroachdb/pebble/", Store},
		{m + "frontier.", Frontier},
		{"runtime.gcBgMarkWorker", GC},
		{"runtime.bgsweep", GC},
		{"runtime.bgscavenge", GC},
		{"runtime.gcAssistAlloc", GC},
		{"runtime.gcDrain", GC},
		{"runtime.markroot", GC},
	}
}()

// stageOf is the stage of the function named fn, or "".
func stageOf(fn string) string {
	for _, r := range rules {
		if strings.HasPrefix(fn, r.prefix) {
			return r.stage
		}
	}
	return ""
}

// Split reads a CPU profile (pprof's protobuf format, as runtime/pprof
// writes it) and returns the CPU time of each stage; every stage of Order
// is present, with zero if no sample fell in it.
func Split(r io.Reader) (map[string]time.Duration, error) {
	p, err := profile.Parse(r)
	if err != nil {
		return nil, fmt.Errorf("cpustages: %w", err)
	}
	vi := -1
	for i, st := range p.SampleType {
		if st.Type == "cpu" && st.Unit == "nanoseconds" {
			vi = i
		}
	}
	if vi < 0 {
		return nil, fmt.Errorf("cpustages: not a CPU profile (no cpu/nanoseconds sample type)")
	}
	out := make(map[string]time.Duration, len(Order))
	for _, s := range Order {
		out[s] = 0
	}
	cache := map[uint64]string{} // location ID -> stage of its deepest claimed line
	for _, s := range p.Sample {
		stage := Other
	stack:
		// Location[0] is the leaf; inlined calls list the innermost line
		// first within a location.
		for _, loc := range s.Location {
			st, ok := cache[loc.ID]
			if !ok {
				for _, ln := range loc.Line {
					if ln.Function == nil {
						continue
					}
					if st = stageOf(ln.Function.Name); st != "" {
						break
					}
				}
				cache[loc.ID] = st
			}
			if st != "" {
				stage = st
				break stack
			}
		}
		out[stage] += time.Duration(s.Value[vi])
	}
	return out, nil
}
