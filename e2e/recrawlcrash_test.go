package e2e

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/internal/bench/childout"
	"github.com/trawl-crawler/trawl/internal/testkit/testweb"
)

// Recrawl bounds of the continuous crash test: long enough against the
// rig's gap that a page's recrawl is a scheduled event, short enough
// that a run sees several.
const (
	crashRecrawlMin = 3 * time.Second
	crashRecrawlMax = 6 * time.Second
)

// TestContinuousCrashResume runs `trawl crawl --continuous` over a small
// changing web, kills it with SIGKILL once every page has been fetched
// and recrawls are under way, restarts it with the same command, lets it
// run past the longest recrawl interval and stops it with SIGINT. From
// the web's log:
//   - polite throughout, the restart included (gaps, concurrency, robots);
//   - no recrawl storm: no page is fetched again sooner than its shortest
//     interval (less the second a due time is rounded to) after its
//     previous fetch, unless that fetch was in flight, or answered less
//     than ackSlack before, at the kill;
//   - no page forgotten: every page fetched before the kill is fetched
//     again after the restart.
//
// And the WARC files read cleanly with warcio, 304 revisits included.
func TestContinuousCrashResume(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the trawl binary on a crawl: the full suite runs it")
	}
	t.Parallel()
	seed := uint64(time.Now().UnixNano())
	t.Logf("crash moment from seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 5))
	g := newRig(t, testweb.Options{Seed: 29, Hosts: 10, BigHosts: -1, MaxPages: 8, Changing: true}, filepath.Join(t.TempDir(), "data"))
	g.args = append(g.args, "--continuous", "--recrawl-min", crashRecrawlMin.String(), "--recrawl-max", crashRecrawlMax.String())

	first := g.start()
	// Kill once recrawls have begun: every page was fetched and the
	// earliest are due again.
	g.crash(first, rng, 20, crashRecrawlMax, 2*time.Second)
	kill, dead := first.r.killAt, first.r.deadAt
	second := g.start()
	// Run until every page fetched before the kill has been fetched again
	// (a storm would show at once; a forgotten page never comes), at most
	// two of the longest intervals and some slack.
	for deadline := time.Now().Add(2*crashRecrawlMax + 5*time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if g.allRecrawledSince(kill, second.r.start) {
			break
		}
	}
	if err := second.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	g.wait(second, 30*time.Second)
	if second.r.code != 0 {
		t.Errorf("%s: want exit 0 after SIGINT\nstderr:\n%s", second.r, childout.LastLines(second.r.stderr.String(), 20))
	}

	log := g.srv.Log()
	rep := testweb.Analyze(g.srv.Web(), log, g.analyzeOptions())
	for _, p := range rep.Problems() {
		if !strings.HasPrefix(p, "repeat: ") && !strings.HasPrefix(p, "robots repeat: ") {
			t.Errorf("web log: %s", p)
		}
	}
	fetches := map[string][]testweb.Request{} // page → its answered requests, in order
	for _, q := range log {
		if q.Status != 0 && !isRobots(q.Path) && q.Path != "/sitemap.xml" { // pages only: sitemaps are read again a day later
			u := g.url(q)
			fetches[u] = append(fetches[u], q)
		}
	}
	restart := second.r.start
	var storm, forgotten []string
	recrawled, before := 0, 0
	for u, qs := range fetches {
		for i := 1; i < len(qs); i++ {
			prev, q := qs[i-1], qs[i]
			gap := q.Start.Sub(prev.Start)
			// In flight at the kill: sent before the process died (a
			// request can leave it while the signal lands), answered
			// after the kill or too shortly before it to be durable.
			excused := prev.Start.Before(dead) && (prev.End.IsZero() || prev.End.After(kill.Add(-ackSlack))) && !q.Start.Before(restart)
			if gap < crashRecrawlMin-time.Second-100*time.Millisecond && !excused {
				storm = append(storm, fmt.Sprintf("%s fetched at %s and again %v later", u, prev.Start.Format("15:04:05.000"), gap.Round(time.Millisecond)))
			}
		}
		if qs[0].Start.Before(kill) {
			before++
			if qs[len(qs)-1].Start.Before(restart) {
				forgotten = append(forgotten, u)
			} else {
				recrawled++
			}
		}
	}
	sort.Strings(storm)
	sort.Strings(forgotten)
	for i, s := range storm {
		if i < 10 {
			t.Errorf("recrawled too soon: %s", s)
		}
	}
	for i, u := range forgotten {
		if i < 10 {
			t.Errorf("forgotten: %s was fetched before the kill and never after the restart", u)
		}
	}
	t.Logf("%d pages fetched before the kill at +%v, %d of them again after the restart; %d requests in all; %s, %s",
		before, kill.Sub(first.r.start).Round(time.Millisecond), recrawled, len(log), first.r, second.r)
	if before == 0 {
		t.Fatal("nothing fetched before the kill")
	}
	g.checkWARC()
}

// allRecrawledSince says whether every page first fetched before kill
// was fetched again at or after restart, by the web's log so far.
func (g *rig) allRecrawledSince(kill, restart time.Time) bool {
	first, again := map[string]bool{}, map[string]bool{}
	for _, q := range g.srv.Log() {
		if q.Status == 0 || isRobots(q.Path) || q.Path == "/sitemap.xml" {
			continue
		}
		u := g.url(q)
		if q.Start.Before(kill) {
			first[u] = true
		}
		if !q.Start.Before(restart) {
			again[u] = true
		}
	}
	for u := range first {
		if !again[u] {
			return false
		}
	}
	return len(first) > 0
}
