package node

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/fetch"
	"github.com/trawl-crawler/trawl/internal/store/urlstate"
	"github.com/trawl-crawler/trawl/internal/testkit/testweb"
	"github.com/trawl-crawler/trawl/job"
	"github.com/trawl-crawler/trawl/recrawl"
)

// TestValidatorChecks walks validatorChecks through one host's answers:
// pages last found unchanged are checked without validators, ever more
// rarely while full answers agree with their validators; the same strong
// ETag on changed content convicts the host (no validators from then
// on); a weak ETag is never judged; validators that move with a change
// make the checks the rarest.
func TestValidatorChecks(t *testing.T) {
	j := &job.Job{ID: 1}
	d1, d2 := [32]byte{1}, [32]byte{2}
	rec := func(status int, etag string, d [32]byte) urlstate.Record {
		return urlstate.Record{Job: 1, Status: status, ETag: etag, HasDigest: true, Digest: d}
	}
	obs := func(etag string, d [32]byte) urlstate.Observation {
		return urlstate.Observation{Status: 200, ETag: etag, HasDigest: true, Digest: d}
	}
	conditional := func(c *validatorChecks, host string, n int) (checks int) {
		for range n {
			if c.validators(j, host, rec(http.StatusNotModified, `"x"`, d1)) == (fetch.Validators{}) {
				checks++
			}
		}
		return checks
	}

	var c validatorChecks
	if got := conditional(&c, "a", 2); got != 1 {
		t.Errorf("a new host: %d checks in its first 2 conditional recrawls, want 1", got)
	}
	if v := c.validators(j, "a", rec(200, `"x"`, d1)); v.ETag != `"x"` {
		t.Errorf("a page last fetched in full is not checked: validators %+v", v)
	}
	c.observe("a", rec(http.StatusNotModified, `"x"`, d1), obs(`"x"`, d1)) // a check that agreed
	if got := conditional(&c, "a", 3); got != 1 {
		t.Errorf("after one check agreed: %d checks in 3, want 1 (one in 3)", got)
	}
	c.observe("a", rec(http.StatusNotModified, `"x"`, d1), obs(`"x"`, d2)) // same ETag, new content
	if !c.liar("a") || conditional(&c, "a", 5) != 5 {
		t.Errorf("a host whose ETag stayed on changed content is still sent validators")
	}

	c.observe("w", rec(200, `W/"x"`, d1), obs(`W/"x"`, d2))
	if c.liar("w") {
		t.Errorf("a weak ETag on changed content convicted its host")
	}
	c.observe("m", rec(200, `"x"`, d1), obs(`"y"`, d2)) // the ETag moved with the content
	if got := conditional(&c, "m", 1<<maxCheckDoubling); got != 0 {
		t.Errorf("a host whose ETag moved with a change: %d checks in %d, want none yet", got, 1<<maxCheckDoubling)
	}
	if got := conditional(&c, "m", 1); got != 1 {
		t.Errorf("a host whose ETag moved with a change: %d checks at the %dth, want 1", got, 1+1<<maxCheckDoubling)
	}

	lm := func(status int, lm string, d [32]byte) urlstate.Record {
		return urlstate.Record{Job: 1, Status: status, LastModified: lm, HasDigest: true, Digest: d}
	}
	date := "Mon, 01 Jun 2026 00:00:00 GMT"
	c.observe("l", lm(http.StatusNotModified, date, d1), urlstate.Observation{Status: 200, LastModified: date, HasDigest: true, Digest: d2})
	if !c.liar("l") {
		t.Errorf("a host whose Last-Modified stayed on changed content (and no ETag) was not convicted")
	}
	// Last-Modified is weak: new markup under the same visible text (a
	// token, a nonce) does not convict.
	p := lm(http.StatusNotModified, date, d1)
	p.SimHash = 0xabc
	c.observe("n", p, urlstate.Observation{Status: 200, LastModified: date, HasDigest: true, Digest: d2, SimHash: 0xabc})
	if c.liar("n") {
		t.Errorf("a Last-Modified host convicted on markup alone")
	}
	// An ETag too long for the record is compared as the record keeps it
	// (none), so a stuck Last-Modified beside it still convicts.
	long := `"` + strings.Repeat("e", urlstate.MaxValidatorLen) + `"`
	q := lm(http.StatusNotModified, date, d1)
	c.observe("g", q, urlstate.Observation{Status: 200, ETag: long, LastModified: date, HasDigest: true, Digest: d2})
	if !c.liar("g") {
		t.Errorf("a long ETag hid a stuck Last-Modified")
	}
}

// TestConstantETagHostsAreRecrawled runs a continuous crawl of a changing
// web whose every host sends one ETag for all versions of a page and
// honours it (304 even after a change). Believed, it would keep the first
// copy of every page for ever. The node's checks must convict the hosts
// and the crawl keep its copies as fresh as uniform recrawl would at the
// budget it spent, judged by the web's own versions.
func TestConstantETagHostsAreRecrawled(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: half a minute of live recrawls; the full suite runs it")
	}
	t.Parallel()
	web := testweb.Options{Seed: 3, Hosts: 6, BigHosts: -1, MinPages: 8, MaxPages: 12, Latency: -1,
		ChangeEpoch: time.Date(2026, 5, 31, 23, 58, 0, 0, time.UTC),
		ChangeRange: testweb.ChangeRange{Min: 2 * time.Second, Max: 20 * time.Second, Never: 20},
		Validators:  testweb.ValidatorsStuckETag}
	minIv, maxIv, run := time.Second, 6*time.Second, 30*time.Second
	h, webTime := changingHarness(t, web, 1, 100*time.Millisecond)
	h.spec.Continuous = true
	h.spec.RecrawlMin, h.spec.RecrawlMax = minIv, maxIv
	h.opts.RecrawlTick, h.opts.FreshnessEvery = 50*time.Millisecond, time.Second
	start := time.Now()
	n, j := h.start(t)
	time.Sleep(run)
	convicted := 0
	for _, hi := range h.srv.Web().Hosts() {
		if hi.Validators == testweb.ValidatorsStuckETag && n.checks.liar(hi.Name) {
			convicted++
		}
	}
	if err := n.Cancel(j.ID); err != nil {
		t.Fatal(err)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	from, to := start.Add(run/2), start.Add(run)
	rep := h.srv.Freshness(from, to, 250*time.Millisecond, webTime)
	pol, err := recrawl.New(recrawl.Options{MinInterval: minIv, MaxInterval: maxIv})
	if err != nil {
		t.Fatal(err)
	}
	jd := rep.Judge(pol)
	t.Logf("%d hosts convicted; %s\n%s", convicted, rep, jd)
	if hosts := len(h.srv.Web().Hosts()); convicted < (hosts+1)/2 {
		t.Errorf("%d of %d constant-ETag hosts convicted, want most", convicted, hosts)
	}
	// Believed, the copies stay at their first version: on this web
	// freshness 0.32 where uniform recrawl keeps 0.77. Checked, the
	// crawl is behind uniform only by what its schedule learnt from the
	// 304s before the hosts were convicted (0.73 and 0.77 in two runs,
	// uniform 0.76-0.77). On a loaded machine the crawl fetches less in
	// the same time (0.64 against uniform's 0.75 seen, beside other
	// packages' tests): the bound sits between that and stuck copies'
	// 0.32, at 0.2 below uniform.
	if rep.Fetches == 0 || rep.Freshness < jd.Uniform-0.2 {
		t.Errorf("freshness %.3f against uniform's %.3f at the same budget: the copies are stuck", rep.Freshness, jd.Uniform)
	}
	if r := h.analyze(0.99); len(problemsBut(r)) > 0 {
		t.Errorf("the web's log shows problems:\n%s", strings.Join(problemsBut(r), "\n"))
	}
}
