package e2e

// The crash rig: the trawl binary built once per test run, the synthetic web
// served in the test process (so its request log spans every crawler run),
// and the crawler run as a child process that the test kills with SIGKILL,
// lets fail, or lets finish. The web's log is then cut into runs by the
// runs' start times and judged as a whole and run by run.

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/cdxj"
	"github.com/trawl-crawler/trawl/internal/bench/childout"
	"github.com/trawl-crawler/trawl/internal/testkit/testweb"
	"github.com/trawl-crawler/trawl/internal/testkit/trawlbin"
	"github.com/trawl-crawler/trawl/internal/testkit/warccheck"
	"github.com/trawl-crawler/trawl/warc"
)

// Crawl settings shared by the crawler's flags and the log analysis.
const (
	// rigGap is the --min-delay. It is longer than a restart takes (about
	// 100-200 ms from the kill to the new process's first request), so a
	// restarted crawler that forgets the fetches in flight at the crash
	// breaks the gap of every host it hits at once; at 50 ms only the
	// Crawl-delay host would show it, now and then.
	rigGap = 250 * time.Millisecond
	// rigMaxDelay is the --max-delay: above the web's longest Crawl-delay
	// (2 s). A host whose robots.txt answer a crash lost is left alone this
	// long after the lost request, since its Crawl-delay is not known.
	rigMaxDelay = 3 * time.Second
	rigMaxDepth = 12
	rigDomain   = "trawl.test"
	// ackSlack is how long after the web finished answering a page the
	// crawler may take to make its completion durable (WARC record, then
	// one group commit). A page answered longer than this before a kill
	// and fetched again after it is acknowledged work the crash lost.
	// It is generous: the commit path takes milliseconds.
	ackSlack = time.Second
)

// rig is one synthetic web and one data directory crawled by a sequence of
// trawl processes, all started with the same command.
type rig struct {
	t    *testing.T
	bin  string
	srv  *testweb.Server
	data string
	args []string
	runs []*crawlRun
	// fsize, if set, caps every file the next runs write at that many
	// bytes (RLIMIT_FSIZE, via prlimit): the fallback for a full disk
	// where a tmpfs cannot be mounted.
	fsize int64
}

// crawlRun is one trawl process.
type crawlRun struct {
	n      int       // 1-based
	start  time.Time // just before the process was started
	killAt time.Time // just before SIGKILL; zero if not killed
	// deadAt is when the killed process was reaped: a request can still
	// leave it between killAt and then, while the signal lands.
	deadAt time.Time
	code   int // exit code; -1 if killed by a signal
	stdout bytes.Buffer
	stderr bytes.Buffer
}

// interrupted reports whether the run ended without finishing its crawl:
// killed, or stopped by an error. Only such a run may leave work that a
// later run legitimately does again.
func (r *crawlRun) interrupted() bool { return !r.killAt.IsZero() || r.code != 0 }

func (r *crawlRun) String() string {
	how := fmt.Sprintf("exit %d", r.code)
	if !r.killAt.IsZero() {
		how = fmt.Sprintf("SIGKILL after %v", r.killAt.Sub(r.start).Round(time.Millisecond))
	}
	return fmt.Sprintf("run %d (started %s, %s)", r.n, r.start.Format("15:04:05.000"), how)
}

// proc is a running trawl process.
type proc struct {
	r    *crawlRun
	cmd  *exec.Cmd
	done chan struct{} // closed when Wait returned
}

// newRig builds trawl, serves web and writes the hosts and seeds files the
// crawler reads. data is the crawler's data directory.
func newRig(t *testing.T, web testweb.Options, data string) *rig {
	t.Helper()
	bin := trawlbin.Build(t)
	srv, err := testweb.Serve(testweb.Generate(web), testweb.ServeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	files, err := testweb.WriteFiles(t.TempDir(), srv)
	if err != nil {
		t.Fatal(err)
	}
	return &rig{t: t, bin: bin, srv: srv, data: data, args: []string{
		"crawl", "--seeds", files[1], "--hosts", files[0], "--allow-net", "127.0.0.0/8",
		"--domain", rigDomain, "--min-delay", rigGap.String(), "--max-delay", rigMaxDelay.String(), "--max-depth", fmt.Sprint(rigMaxDepth),
		"--data", data, "--progress", "1s",
	}}
}

// start starts trawl with the rig's command and extra flags. The process
// is killed and reaped at the end of the test if it is still running then.
func (g *rig) start(extra ...string) *proc {
	g.t.Helper()
	r := &crawlRun{n: len(g.runs) + 1}
	cmd := exec.Command(g.bin, append(slices.Clone(g.args), extra...)...)
	if g.fsize > 0 {
		cmd = exec.Command("prlimit", append([]string{fmt.Sprintf("--fsize=%d", g.fsize), "--", g.bin}, append(slices.Clone(g.args), extra...)...)...)
	}
	cmd.Stdout, cmd.Stderr = &r.stdout, &r.stderr
	r.start = time.Now()
	if err := cmd.Start(); err != nil {
		g.t.Fatalf("start trawl: %v", err)
	}
	g.runs = append(g.runs, r)
	p := &proc{r: r, cmd: cmd, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		_ = cmd.Wait() // the exit status is read from ProcessState
		r.code = cmd.ProcessState.ExitCode()
	}()
	g.t.Cleanup(func() {
		_ = cmd.Process.Kill() // fails harmlessly once the process is gone
		<-p.done
	})
	return p
}

// pagesSince counts the page requests (robots files aside) the web has
// finished answering that started at or after t.
func (g *rig) pagesSince(t time.Time) int {
	n := 0
	for _, q := range g.srv.Log() {
		if !q.Start.Before(t) && !q.End.IsZero() && !isRobots(q.Path) {
			n++
		}
	}
	return n
}

func isRobots(path string) bool { return path == "/robots.txt" || path == "/robots-real.txt" }

// crash waits until the run has had at least minPages pages answered,
// then a random further moment in [least, least+spread), and kills the
// process with SIGKILL. It fails the test if the crawl ends by itself
// first. With least >= ackSlack the run's first pages were answered more
// than ackSlack before the kill, so a restart that forgot them is caught
// by checkLog.
func (g *rig) crash(p *proc, rng *rand.Rand, minPages int, least, spread time.Duration) {
	g.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for g.pagesSince(p.r.start) < minPages {
		select {
		case <-p.done:
			g.t.Fatalf("%s ended by itself before it was killed, having fetched %d pages\nstdout:\n%s\nstderr:\n%s",
				p.r, g.pagesSince(p.r.start), p.r.stdout.String(), childout.LastLines(p.r.stderr.String(), 20))
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			g.t.Fatalf("%s: fewer than %d pages fetched in 30s\nstderr:\n%s", p.r, minPages, childout.LastLines(p.r.stderr.String(), 20))
		}
	}
	// The random moment is the point of the test, not a wait for something.
	timer := time.NewTimer(least + time.Duration(rng.Int64N(int64(spread))))
	defer timer.Stop()
	select {
	case <-p.done:
		g.t.Fatalf("%s ended by itself before it was killed\nstdout:\n%s\nstderr:\n%s",
			p.r, p.r.stdout.String(), childout.LastLines(p.r.stderr.String(), 20))
	case <-timer.C:
	}
	p.r.killAt = time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		g.t.Fatalf("kill %s: %v", p.r, err)
	}
	<-p.done
	p.r.deadAt = time.Now()
	if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		g.t.Fatalf("%s: exited (%v) before SIGKILL landed\nstderr:\n%s", p.r, p.cmd.ProcessState, childout.LastLines(p.r.stderr.String(), 20))
	}
	g.settle()
}

// settle waits until the web has read and answered every request the
// stopped process sent, so that they are complete in the log before the
// next process starts (and its handlers cannot overlap the next run's):
// no handler running and no connection open, for settleQuiet in a row. A
// request written just before a SIGKILL can sit in a socket for a while
// on a loaded machine before the web reads it; its connection stays open
// until then, and the quiet period covers one still in the listen
// backlog.
func (g *rig) settle() {
	g.t.Helper()
	if err := g.srv.Settle(250*time.Millisecond, 10*time.Second); err != nil {
		g.t.Fatalf("%v after the crawler stopped", err)
	}
}

// wait waits for the process to exit by itself within d, and kills it and
// fails the test otherwise.
func (g *rig) wait(p *proc, d time.Duration) {
	g.t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-p.done:
	case <-timer.C:
		_ = p.cmd.Process.Kill()
		<-p.done
		g.t.Fatalf("%s did not finish within %v\nstderr:\n%s", p.r, d, childout.LastLines(p.r.stderr.String(), 20))
	}
	g.settle()
}

// runOf returns the index in g.runs of the run a request came from: the
// last run started at or before it. The runs never overlap: each is reaped
// and the web settled before the next starts.
func (g *rig) runOf(q testweb.Request) int {
	i := 0
	for j, r := range g.runs {
		if !q.Start.Before(r.start) {
			i = j
		}
	}
	return i
}

func (g *rig) analyzeOptions() testweb.AnalyzeOptions {
	return testweb.AnalyzeOptions{
		Seeds:            g.srv.Seeds(),
		Agent:            "trawl",
		Gap:              rigGap,
		MaxDepth:         rigMaxDepth,
		Domain:           rigDomain,
		MaxParallel:      1,
		MaxParallelPerIP: 2,
	}
}

// url is the absolute URL of a logged request, as the WARC names it.
func (g *rig) url(q testweb.Request) string {
	return fmt.Sprintf("http://%s:%d%s", q.Host, g.srv.Port(), q.Path)
}

// checkLog judges every run together from the web's request log:
//
//   - Over the whole log (all runs as one crawl): every crawlable page
//     fetched (coverage 1), no gap between two requests to a host shorter
//     than its gap (so a restart that hits a host too soon is caught), no
//     host or shared IP over its concurrency cap, no robots violation, no
//     out-of-scope request, wrong address, bad agent or uncrawlable fetch.
//   - Run by run: no URL requested twice within one run, and no robots
//     file requested again after an answer that needed no retry (a new
//     process may read robots.txt again, once).
//   - Across runs, the repeat rule: a URL may be requested again in a
//     later run only if every run that requested it before ended
//     interrupted (killed or failed). The crawler acknowledges a page only
//     once its completion is durable, and from outside we cannot see when
//     that happened, so the sound bound on "crashes the URL was in flight
//     for" is "interrupted runs that requested it". It follows that no URL
//     is requested more than 1 + crashes times.
//   - Lost acknowledgements: the rule above would pass a crawler that
//     forgets everything at each crash, so a URL the web finished
//     answering more than ackSlack before a kill counts as no longer in
//     flight at that kill; fetching it again afterwards is an error.
//     (A run stopped by an error has no kill moment, only the rule above.)
//
// It returns a one-line account of the re-fetches for the test log.
func (g *rig) checkLog() string {
	t := g.t
	t.Helper()
	log := g.srv.Log()
	web := g.srv.Web()

	opts := g.analyzeOptions()
	opts.MinCoverage = 1
	whole := testweb.Analyze(web, log, opts)
	// Repeats across runs are judged by the per-run rule below.
	whole.Repeats, whole.RobotsRepeats = nil, nil
	if p := whole.Problems(); len(p) > 0 {
		t.Errorf("the web's log over all %d runs shows %d problems:\n%s\n%s", len(g.runs), len(p), strings.Join(p[:min(len(p), 40)], "\n"), whole)
	}

	perRun := make([][]testweb.Request, len(g.runs))
	for _, q := range log {
		i := g.runOf(q)
		perRun[i] = append(perRun[i], q)
	}
	for i, reqs := range perRun {
		rep := testweb.Analyze(web, reqs, g.analyzeOptions())
		for _, rp := range rep.Repeats {
			t.Errorf("%s requested %s %d times", g.runs[i], rp.URL, rp.Count)
		}
		for _, rp := range rep.RobotsRepeats {
			t.Errorf("%s requested %s again (request %d) after an answer that needed no retry", g.runs[i], rp.URL, rp.Count)
		}
	}

	// The cross-run rule works on the URLs as requested; check that the
	// crawler spelled each canonical URL one way only, so that no repeat
	// hides behind a second spelling.
	byURL := make(map[string][]testweb.Request) // in log order, so in run order
	for _, q := range log {
		if !isRobots(q.Path) {
			byURL[g.url(q)] = append(byURL[g.url(q)], q)
		}
	}
	if len(byURL) != len(whole.Fetched) {
		t.Errorf("%d URLs requested as spelled, %d canonical URLs: some URL was requested under two spellings", len(byURL), len(whole.Fetched))
	}
	crashes := 0
	for _, r := range g.runs {
		if r.interrupted() {
			crashes++
		}
	}
	var again, inFlight, answered int
	var oldest time.Duration // longest time from a re-fetched request's end to the kill that lost it
	var oldestURL string
	for u, reqs := range byURL {
		if len(reqs) > 1+crashes {
			t.Errorf("%s requested %d times in %d runs with %d interruptions", u, len(reqs), len(g.runs), crashes)
		}
		for i := 0; i+1 < len(reqs); i++ {
			r := g.runs[g.runOf(reqs[i])]
			if !r.interrupted() {
				t.Errorf("%s requested at %s in %s, which ended cleanly, and again at %s in run %d",
					u, reqs[i].Start.Format("15:04:05.000"), r, reqs[i+1].Start.Format("15:04:05.000"), g.runOf(reqs[i+1])+1)
				continue
			}
			again++
			if r.killAt.IsZero() {
				continue // a failed run: no kill time to measure against
			}
			if reqs[i].End.After(r.killAt) {
				inFlight++ // the web was still answering at the kill
				continue
			}
			answered++ // answered, but perhaps not yet durable for the crawler
			d := r.killAt.Sub(reqs[i].End)
			if d > oldest {
				oldest, oldestURL = d, u
			}
			if d > ackSlack {
				t.Errorf("%s answered at %s in %s, %v before the kill, and requested again at %s in run %d: a completed page was lost (want it durable within %v)",
					u, reqs[i].End.Format("15:04:05.000"), r, d.Round(time.Millisecond), reqs[i+1].Start.Format("15:04:05.000"), g.runOf(reqs[i+1])+1, ackSlack)
			}
		}
	}
	return fmt.Sprintf("%s\nre-fetched after an interruption: %d (%d still being answered at the kill, %d answered before it; the longest from answer to kill %v, %s)\n%s",
		whole, again, inFlight, answered, oldest.Round(time.Millisecond), oldestURL, g.restartGaps(log, whole))
}

// restartGaps describes the gaps that span a restart (a host's last
// request in one run and its first in the next), which the whole-log
// analysis has judged: how many there were and the tightest against the
// host's expected gap, to show what the politeness check saw.
func (g *rig) restartGaps(log []testweb.Request, whole *testweb.Report) string {
	want := make(map[string]time.Duration)
	for _, h := range whole.Hosts {
		want[h.Host] = h.ExpectedGap
	}
	last := make(map[string]testweb.Request)
	n := 0
	var tightest, tightWant time.Duration
	var tightHost string
	ratio := -1.0 // tightest gap / its host's expected gap
	byStart := slices.Clone(log)
	slices.SortStableFunc(byStart, func(a, b testweb.Request) int { return a.Start.Compare(b.Start) })
	for _, q := range byStart {
		prev, ok := last[q.Host]
		last[q.Host] = q
		if !ok || g.runOf(prev) == g.runOf(q) || want[q.Host] == 0 {
			continue
		}
		n++
		gap := q.Start.Sub(prev.Start)
		if r := float64(gap) / float64(want[q.Host]); ratio < 0 || r < ratio {
			ratio, tightest, tightWant, tightHost = r, gap, want[q.Host], q.Host
		}
	}
	if n == 0 {
		return "no host was requested on both sides of a restart"
	}
	return fmt.Sprintf("gaps across a restart: %d, the tightest %v on %s (want at least %v)",
		n, tightest.Round(time.Millisecond), tightHost, tightWant)
}

// checkWARC validates every file under DATA/warc with warcio and checks
// that every URL the web answered (hostile hosts aside, whose bodies are
// broken on purpose) has a response record: an exchange a crash cut off
// was fetched again, so its URL is still archived.
func (g *rig) checkWARC() {
	t := g.t
	t.Helper()
	dir := filepath.Join(g.data, "warc")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("read WARC directory: %v", err)
	}
	var files []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), warc.OpenSuffix) {
			t.Errorf("WARC file left open after a clean finish: %s", e.Name())
		}
		if strings.HasSuffix(e.Name(), cdxj.IndexSuffix) {
			continue // a WARC file's CDXJ index
		}
		files = append(files, filepath.Join(dir, e.Name()))
	}
	if len(files) == 0 {
		t.Fatal("no WARC files written")
	}
	rep, err := warccheck.Validate(files...)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Errors) > 0 {
		t.Errorf("warcio found %d errors in %d files: %s", len(rep.Errors), len(files), strings.Join(rep.Errors[:min(20, len(rep.Errors))], "\n"))
	}
	archived := rep.Archived()
	for _, r := range rep.Unresolved(warc.ProfileIdenticalPayload) {
		if r.Profile == warc.ProfileServerNotModified {
			continue // a 304's: checked by the tests of recrawls
		}
		t.Errorf("revisit of %s refers to %s at %s, which is no response record with its digest", r.URI, r.RefersToURI, r.RefersToDate)
	}
	var missing []string
	for _, q := range g.srv.Log() {
		u := g.url(q)
		if archived[u] || strings.HasPrefix(q.Host, "hostile") || slices.Contains(missing, u) {
			continue
		}
		missing = append(missing, u)
		if len(missing) <= 10 {
			t.Errorf("%s fetched in run %d at %s (status %d) is in no response record", u, g.runOf(q)+1, q.Start.Format("15:04:05.000"), q.Status)
		}
	}
	if len(missing) > 0 {
		t.Errorf("%d fetched URLs have no response record in %d WARC files", len(missing), len(files))
	}
}

// logRuns logs each run's share of the web's log, its last progress line
// and the data directory's size.
func (g *rig) logRuns() {
	g.t.Helper()
	reqs := make([]int, len(g.runs))
	pages := make([]int, len(g.runs))
	for _, q := range g.srv.Log() {
		i := g.runOf(q)
		reqs[i]++
		if !isRobots(q.Path) {
			pages[i]++
		}
	}
	for i, r := range g.runs {
		g.t.Logf("%s: %d requests, %d of them pages; last stderr line: %s", r, reqs[i], pages[i], childout.LastLines(r.stderr.String(), 1))
	}
	size, err := treeSize(g.data)
	g.t.Logf("data directory: %d bytes (err %v)", size, err)
}

// treeSize is the total size of the regular files under dir.
func treeSize(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			n += info.Size()
		}
		return nil
	})
	return n, err
}
