package testweb

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
)

// A changing web (Options.Changing): regular HTML pages change at known
// random rates, and hosts send validators honestly, not at all, or lying.
// Nothing is stored: a page's changes are a Poisson process drawn from its
// seed, its version at time t is the number of changes in (epoch, t], and
// its content at t is rendered from (seed, version), so the server is
// stateless and Web.Version is the ground truth a freshness test needs.
// The draws use streams of their own, so a web generated with Changing
// has the same hosts, pages and links as one without.

// changeClass is how often a page changes: its mean interval.
type changeClass struct {
	name  string
	every time.Duration // mean time between changes; 0 for never
	share int           // percent of changing-eligible pages
}

// changeClasses is the skewed mix of change rates: most pages change
// rarely or never, a few often (shares in percent, summing to 100).
var changeClasses = []changeClass{
	{"hourly", time.Hour, 5},
	{"daily", 24 * time.Hour, 15},
	{"weekly", 7 * 24 * time.Hour, 20},
	{"monthly", 30 * 24 * time.Hour, 25},
	{"never", 0, 35},
}

// How a host of a changing web sends validators (HostInfo.Validators).
const (
	ValidatorsHonest    = "honest"              // strong ETag of the version, Last-Modified of the last change; 304 when they match
	ValidatorsOmitted   = "omitted"             // neither ETag nor Last-Modified; always 200
	ValidatorsLyingLM   = "lying-last-modified" // Last-Modified is always now, no ETag; always 200
	ValidatorsChurnETag = "changing-etag"       // an ETag that differs on every response; always 200
	ValidatorsStuckETag = "constant-etag"       // one ETag whatever the version, honoured: 304 even after a change
)

// ChangeRange is a changing web's mix of rates as a range
// (Options.ChangeRange): Never percent of pages never change, the others
// change with a mean interval log-uniform in [Min, Max].
type ChangeRange struct {
	Min, Max time.Duration
	Never    int
}

// changeStreamSeed seeds the streams of the changing web's draws ("change").
const changeStreamSeed = 0x6368_616e_6765

// validatorKinds is the mix of host behaviours (percent, summing to 100).
var validatorKinds = []validatorKind{
	{ValidatorsHonest, 70},
	{ValidatorsOmitted, 10},
	{ValidatorsLyingLM, 7},
	{ValidatorsChurnETag, 7},
	{ValidatorsStuckETag, 6},
}

type validatorKind struct {
	kind  string
	share int
}

// defaultChangeEpoch is when every page of a changing web is at version 0.
var defaultChangeEpoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// change is how one page changes.
type change struct {
	class changeClass
	seed  uint64
}

// pick draws an item of a share table with rng.
func pick(rng *rand.Rand, shares []int) int {
	n := rng.IntN(100)
	for i, s := range shares {
		if n < s {
			return i
		}
		n -= s
	}
	return len(shares) - 1
}

// makeChanging labels hosts and pages of w with their validator kind and
// change class, from a stream of their own. Pages that another page
// copies or resembles, and the copies, never change, so the duplicate
// labels hold at every time.
func (w *Web) makeChanging() {
	rng := rand.New(rand.NewPCG(uint64(w.opts.Seed), changeStreamSeed))
	kindShares := make([]int, len(validatorKinds))
	for i, k := range validatorKinds {
		kindShares[i] = k.share
	}
	classShares := make([]int, len(changeClasses))
	for i, c := range changeClasses {
		classShares[i] = c.share
	}
	fixed := make(map[*resource]bool)
	for _, h := range w.hosts {
		for _, r := range h.res {
			if r.dupOf != nil {
				fixed[r], fixed[r.dupOf] = true, true
			}
			if r.lookalike != nil {
				fixed[r], fixed[r.lookalike] = true, true
			}
		}
	}
	for _, h := range w.hosts {
		if h.hostile != notHostile {
			continue
		}
		h.validators = validatorKinds[pick(rng, kindShares)].kind
		if w.opts.Validators != "" {
			h.validators = w.opts.Validators
		}
		for _, r := range h.regular {
			if r.kind != kindHTML || r.body == nil || fixed[r] {
				continue
			}
			class := changeClasses[pick(rng, classShares)]
			if cr := w.opts.ChangeRange; cr.Max > 0 {
				class = changeClass{name: "never"}
				if u := rng.Float64(); rng.IntN(100) >= cr.Never {
					lo, hi := math.Log(float64(cr.Min)), math.Log(float64(cr.Max))
					class = changeClass{name: "range", every: time.Duration(math.Exp(lo + u*(hi-lo)))}
				}
			}
			r.change = &change{class: class, seed: rng.Uint64()}
		}
	}
}

// changeTimes calls f with the time of each change of c after epoch, in
// order, until f returns false.
func (c *change) changeTimes(epoch time.Time, f func(time.Time) bool) {
	if c == nil || c.class.every == 0 {
		return
	}
	rng := rand.New(rand.NewPCG(c.seed, changeStreamSeed))
	t := epoch
	for {
		t = t.Add(time.Duration(rng.ExpFloat64() * float64(c.class.every)))
		if !f(t) {
			return
		}
	}
}

// version returns the number of changes of c in (epoch, t] and the time
// of the last of them (epoch when none).
func (c *change) version(epoch, t time.Time) (v int, last time.Time) {
	last = epoch
	c.changeTimes(epoch, func(ct time.Time) bool {
		if ct.After(t) {
			return false
		}
		v, last = v+1, ct
		return true
	})
	return v, last
}

func (w *Web) epoch() time.Time {
	if w.opts.ChangeEpoch.IsZero() {
		return defaultChangeEpoch
	}
	return w.opts.ChangeEpoch
}

// changeOf returns the change of the page at rawURL; nil if it does not
// change (or the web is not changing, or the URL is unknown).
func (w *Web) changeOf(rawURL string) *change {
	if !w.opts.Changing {
		return nil
	}
	_, r, _, err := w.lookup(rawURL)
	if err != nil || r == nil {
		return nil
	}
	return r.change
}

// Version returns the version of the page at rawURL at time t: the number
// of times it changed after the web's epoch (Options.ChangeEpoch) up to t.
// It is 0 for a page that never changes, an unknown URL, or any page of a
// web that is not changing.
func (w *Web) Version(rawURL string, t time.Time) int {
	v, _ := w.changeOf(rawURL).version(w.epoch(), t)
	return v
}

// Changes returns how many times the page at rawURL changed in (from, to].
func (w *Web) Changes(rawURL string, from, to time.Time) int {
	if !to.After(from) {
		return 0
	}
	return w.Version(rawURL, to) - w.Version(rawURL, from)
}

// Versioned reports whether the page at rawURL is one of a changing web's
// versioned pages: served with its host's validators (ETag,
// Last-Modified, 304) whatever its change class, "never" included. Other
// URLs (non-HTML resources, copies, redirects) are served as in a web that
// does not change.
func (w *Web) Versioned(rawURL string) bool { return w.changeOf(rawURL) != nil }

// ChangeEvery returns the mean time between changes of the page at rawURL
// and its class name (hourly, daily, weekly or monthly; "range" on a
// ChangeRange web); 0 and "never" for a page that does not change (and
// for any page of a web that is not changing).
func (w *Web) ChangeEvery(rawURL string) (time.Duration, string) {
	c := w.changeOf(rawURL)
	if c == nil {
		return 0, "never"
	}
	return c.class.every, c.class.name
}

// renderVersion appends to page, before </body>, the text of version v
// (v > 0), drawn from seed and v.
func renderVersion(page []byte, seed uint64, v int) []byte {
	if v == 0 {
		return page
	}
	rng := rand.New(rand.NewPCG(seed, uint64(v)))
	add := fmt.Sprintf("<div class=\"update\"><p>Update %d: %s.</p></div>\n", v, sentence(rng, 12))
	i := bytes.LastIndex(page, []byte("</body>"))
	if i < 0 {
		return append(page, add...)
	}
	out := make([]byte, 0, len(page)+len(add))
	out = append(out, page[:i]...)
	out = append(out, add...)
	return append(out, page[i:]...)
}

// sentence is n words drawn with rng.
func sentence(rng *rand.Rand, n int) string {
	words := strings.Fields("crawl page archive update revision news item price stock weather result score table note entry list")
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[rng.IntN(len(words))])
	}
	return b.String()
}

// etagCounter makes the changing-etag hosts' ETags differ on every response.
var etagCounter atomic.Uint64

// serveChanging answers a GET of a regular page of a changing web at time
// now, with the validators of its host's kind.
func (s *Server) serveChanging(w http.ResponseWriter, r *http.Request, h *host, res *resource, sid string, now time.Time) {
	v, last := res.change.version(s.web.epoch(), now)
	etag := fmt.Sprintf("\"%x-%d\"", res.seed, v)
	lastModified := last.UTC().Format(http.TimeFormat)
	hd := w.Header()
	honour := false
	switch h.validators {
	case ValidatorsHonest:
		hd.Set("ETag", etag)
		hd.Set("Last-Modified", lastModified)
		honour = true
	case ValidatorsLyingLM:
		hd.Set("Last-Modified", now.UTC().Format(http.TimeFormat))
	case ValidatorsChurnETag:
		hd.Set("ETag", fmt.Sprintf("\"%x-%d\"", res.seed, etagCounter.Add(1)))
	case ValidatorsStuckETag:
		etag = fmt.Sprintf("\"%x\"", res.seed)
		hd.Set("ETag", etag)
		honour = true
	}
	if honour && notModified(r, etag, last) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	s.sendPage(w, r, res.contentType(), renderVersion(s.web.renderPage(res, sid), res.change.seed, v))
}

// notModified reports whether r's conditional headers say its copy is
// current (RFC 9110 section 13.2.2): If-None-Match, when present, decides
// alone (weak comparison); otherwise If-Modified-Since, when it parses,
// is not before the last change (compared to the second).
func notModified(r *http.Request, etag string, last time.Time) bool {
	if inm := r.Header.Get("If-None-Match"); inm != "" {
		for _, t := range strings.Split(inm, ",") {
			t = strings.TrimSpace(t)
			if t == "*" || strings.TrimPrefix(t, "W/") == strings.TrimPrefix(etag, "W/") {
				return true
			}
		}
		return false
	}
	if ims, err := http.ParseTime(r.Header.Get("If-Modified-Since")); err == nil {
		return !last.Truncate(time.Second).After(ims)
	}
	return false
}

// FastClock returns a clock that reads start when FastClock is called and
// runs scale times faster than real, which it reads from real (time.Now
// if nil): for ServeOptions.Now, so that a changing web changes during a
// test without waiting days.
func FastClock(start time.Time, scale float64, real func() time.Time) func() time.Time {
	if real == nil {
		real = time.Now
	}
	origin := real()
	return func() time.Time {
		return start.Add(time.Duration(float64(real().Sub(origin)) * scale))
	}
}
