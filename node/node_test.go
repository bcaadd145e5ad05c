package node

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/trawl-crawler/trawl/internal/testkit/testweb"
	"github.com/trawl-crawler/trawl/internal/testkit/warccheck"
	"github.com/trawl-crawler/trawl/job"
	"github.com/trawl-crawler/trawl/warc"
)

// testParallel is how many of the package's parallel tests run at once,
// unless -test.parallel says otherwise. Most of them wait on politeness
// gaps, Crawl-delays, retries and restarts rather than on the CPU (over
// the package, half of the tests' wall time is spent waiting, even under
// the race detector, whose crawls use small pages: newHarness), so the
// default (GOMAXPROCS) would leave a small machine idle through much of
// the run.
const testParallel = 4

func TestMain(m *testing.M) {
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit && runtime.GOMAXPROCS(0) < testParallel {
		flag.Set("test.parallel", strconv.Itoa(testParallel))
	}
	goleak.VerifyTestMain(m)
}

var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}

// harness is a node crawling one synthetic web with one job, as `trawl
// crawl` runs it.
type harness struct {
	srv  *testweb.Server
	opts Options
	spec job.Spec
	// ended, if set, is called by run once the job has ended, before the
	// node is closed.
	ended func(*Node, *job.Job)
}

func newHarness(t *testing.T, web testweb.Options, gap time.Duration) *harness {
	t.Helper()
	// What the node's crawl tests judge does not depend on a page's size;
	// the per-page work on full-sized pages is bench crawl's business,
	// bodies at and past the size limits the hostile web's.
	web = web.SmallPages()
	srv, err := testweb.Serve(testweb.Generate(web), testweb.ServeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return &harness{
		srv: srv,
		opts: Options{
			DataDir:     t.TempDir(),
			MinDelay:    gap,
			Concurrency: 32,
			AllowNets:   loopback,
			Hosts:       srv.Resolver(),
			// The gap's adaptive term is ten times the host's last response
			// time. On a loaded test machine (the race detector, tests in
			// parallel) a response takes tens of milliseconds or more, and
			// the default cap (30 s) would stretch every crawl's big hosts
			// far past what its test judges; the rule is the same with a
			// lower cap, and the gaps the web's log is judged by (MinDelay,
			// Crawl-delay) are untouched.
			MaxAdaptiveDelay: 100 * time.Millisecond,
		},
		spec: job.Spec{
			Name:     "crawl",
			Seeds:    srv.Seeds(),
			Domains:  []string{srv.Web().Options().Domain},
			MaxDepth: 12,
			// The web's 500-forever robots.txt hosts never open: give them
			// up after a few retries (after 1 s, then 2 s: RobotsRetry's
			// default at short gaps), while a host whose robots.txt answers
			// 429 once gets its second attempt.
			RobotsGiveUp: 3500 * time.Millisecond,
		},
	}
}

// start opens a node with the harness's options, submits its job and
// starts the node. The caller closes the node.
func (h *harness) start(t *testing.T) (*Node, *job.Job) {
	t.Helper()
	if h.srv != nil && len(h.srv.Log()) > 0 {
		// A node started again on the web: a fetch the last one cut may
		// still be answered (on a loaded machine, for seconds), and would
		// be logged in flight beside this one's first to its host.
		if err := h.srv.Settle(250*time.Millisecond, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	n, err := Open(h.opts)
	if err != nil {
		t.Fatal(err)
	}
	j, err := n.Submit(h.spec)
	if err != nil {
		n.Close()
		t.Fatal(err)
	}
	n.Start()
	return n, j
}

// run opens a node, runs the harness's job until it ends or ctx is
// cancelled, closes the node and returns the job's summary.
func (h *harness) run(t *testing.T, ctx context.Context) *Summary {
	t.Helper()
	n, j := h.start(t)
	select {
	case <-j.Ended():
	case <-ctx.Done():
	}
	if h.ended != nil {
		h.ended(n, j)
	}
	if err := n.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := j.Err(); err != nil {
		t.Fatalf("job: %v", err)
	}
	sum := n.Summary(j.ID)
	if err := n.WriteSummary(sum); err != nil {
		t.Fatal(err)
	}
	return sum
}

// explainMissing logs every request the web saw for the hosts of the first
// URLs rep found missing, so a coverage failure shows what the crawl did
// on those hosts (robots.txt answers, gaps, retries).
func explainMissing(t *testing.T, srv *testweb.Server, rep *testweb.Report) {
	t.Helper()
	hosts := map[string]bool{}
	for _, m := range rep.Missing {
		if u, err := url.Parse(m); err == nil && len(hosts) < 3 {
			hosts[u.Hostname()] = true
		}
	}
	if len(hosts) == 0 {
		return
	}
	var start time.Time
	for _, r := range srv.Log() {
		if start.IsZero() {
			start = r.Start
		}
		if hosts[r.Host] {
			t.Logf("  +%v %s %s%s -> %d", r.Start.Sub(start).Round(time.Millisecond), r.Method, r.Host, r.Path, r.Status)
		}
	}
}

func (h *harness) analyze(minCoverage float64) *testweb.Report {
	return testweb.Analyze(h.srv.Web(), h.srv.Log(), testweb.AnalyzeOptions{
		Seeds:            h.spec.Seeds,
		Agent:            "trawl",
		Gap:              h.opts.MinDelay,
		MaxDepth:         h.spec.MaxDepth,
		Domain:           h.spec.Domains[0],
		MaxParallel:      1,
		MaxParallelPerIP: 2,
		MinCoverage:      minCoverage,
	})
}

// TestCrawlIsPoliteAndComplete crawls a synthetic web with short gaps and
// judges the crawl from the web's own request log only.
func TestCrawlIsPoliteAndComplete(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a crawl of a synthetic web; the full suite runs it")
	}
	t.Parallel()
	h := newHarness(t, testweb.Options{Seed: 7, Hosts: 60, BigPages: 25, Hostile: true}, 40*time.Millisecond)
	sum := h.run(t, context.Background())
	rep := h.analyze(0.99)
	if p := rep.Problems(); len(p) > 0 {
		explainMissing(t, h.srv, rep)
		t.Fatalf("the web's log shows %d problems:\n%s\n%s", len(p), strings.Join(p, "\n"), rep)
	}
	if sum.StopReason != job.ReasonExhausted {
		t.Errorf("StopReason = %q, want exhausted", sum.StopReason)
	}
	if sum.Total.Revisits == 0 {
		t.Errorf("no revisit record; the web has exact copies of pages")
	}
	t.Logf("pages %d, revisits %d, near-duplicates %d, trap fetches %v", sum.Total.Pages, sum.Total.Revisits, sum.Total.NearDuplicates, rep.TrapFetches)
	if sum.Errors["too-large"] == 0 {
		t.Errorf("no too-large response counted; the web has an endless body: errors %v", sum.Errors)
	}
	if sum.RobotsGaveUpOn == 0 {
		t.Errorf("gave up on no host; the web has robots.txt that answer 500 forever")
	}
	// A calendar links forward and back, so the depth cap lets a crawl walk
	// at most MaxDepth months each way from where it entered.
	for host, n := range rep.TrapFetches {
		if n > 2*h.spec.MaxDepth {
			t.Errorf("%s: %d calendar-trap fetches, want at most 2 x MaxDepth = %d", host, n, 2*h.spec.MaxDepth)
		}
	}
	t.Logf("%s", rep)
	checkWARC(t, h, sum)
	checkCrawlLog(t, h, sum)
}

// checkWARC validates every WARC file with the independent reader and
// checks that every request the web answered has a response or a revisit
// record, and that every revisit refers to a response record (never a
// revisit) of its URI and date with the same payload digest, found
// through the WARC files' CDXJ indexes too.
func checkWARC(t *testing.T, h *harness, sum *Summary) {
	t.Helper()
	if len(sum.WARCFiles) == 0 {
		t.Fatal("no WARC files written")
	}
	// Every file of the data directory: earlier runs wrote some.
	files, err := filepath.Glob(filepath.Join(h.opts.DataDir, "warc", "*"))
	if err != nil {
		t.Fatal(err)
	}
	files = slices.DeleteFunc(files, func(f string) bool { return strings.HasSuffix(f, ".warc.gz.cdxj") })
	for _, f := range files {
		if !strings.HasSuffix(f, ".warc.gz") {
			t.Errorf("unfinished or foreign file in warc/: %s", f)
		}
	}
	rep, err := warccheck.Validate(files...)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Errors) > 0 {
		t.Fatalf("warcio found %d errors: %v", len(rep.Errors), rep.Errors)
	}
	if n := checkPayloads(t, h.srv.Web(), rep); n == 0 {
		t.Error("no record's payload checked against the web's bodies")
	}
	archived := rep.Archived()
	for _, r := range rep.Unresolved(warc.ProfileIdenticalPayload) {
		t.Errorf("revisit of %s refers to %s at %s (%s): no response record of that URI and date with its digest %s",
			r.URI, r.RefersToURI, r.RefersToDate, r.RefersTo, r.PayloadDigest)
	}
	// And as a replay tool finds the original: through the CDXJ indexes
	// written as the files closed.
	problems, err := warccheck.ResolveRevisits(loadIndexes(t, filepath.Join(h.opts.DataDir, "warc")), rep)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
	port := h.srv.Port()
	missing := 0
	for _, req := range h.srv.Log() {
		u := fmt.Sprintf("http://%s:%d%s", req.Host, port, req.Path)
		if req.Status == 0 || archived[u] {
			continue
		}
		// A hostile server's head that never came in time is a fetch
		// error, not a response; those hosts are listed by name. (A body
		// cut off mid-read is archived, WARC-Truncated.)
		if strings.HasPrefix(req.Host, "hostile") {
			continue
		}
		missing++
		if missing <= 10 {
			t.Errorf("fetched but not archived: %s (status %d)", u, req.Status)
		}
	}
	if missing > 0 {
		t.Errorf("%d fetched URLs have no response record", missing)
	}
	if n := int64(len(rep.Revisits)); n < sum.Total.Revisits {
		t.Errorf("%d revisit records; the crawl counted %d", n, sum.Total.Revisits)
	}
	t.Logf("WARC: %d responses, %d revisits", len(rep.Responses), len(rep.Revisits))
	if _, err := os.Stat(filepath.Join(h.opts.DataDir, "summary.json")); err != nil {
		t.Errorf("summary.json: %v", err)
	}
}

// TestPoliteAtOneSecond is the acceptance crawl: a few hundred
// hosts with the real 1 s gap. Its duration against the critical path is
// logged, not asserted (timing is for benchmarks); the politeness rules
// and coverage are asserted from the web's log.
func TestPoliteAtOneSecond(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the 1 s gap crawl takes about half a minute")
	}
	t.Parallel()
	h := newHarness(t, testweb.Options{Seed: 11, Hosts: 300, BigPages: 20, Hostile: true}, time.Second)
	h.opts.Concurrency = 64
	h.spec.RobotsGiveUp = 15 * time.Second // `trawl crawl`'s default
	start := time.Now()
	sum := h.run(t, context.Background())
	took := time.Since(start)
	rep := h.analyze(0.99)
	if p := rep.Problems(); len(p) > 0 {
		t.Fatalf("the web's log shows %d problems:\n%s\n%s", len(p), strings.Join(p, "\n"), rep)
	}
	if sum.StopReason != job.ReasonExhausted {
		t.Errorf("StopReason = %q, want exhausted", sum.StopReason)
	}
	crit := rep.CriticalPath(time.Second)
	t.Logf("%s\nduration %.1fs = %.2f x critical path %.1fs", rep, took.Seconds(), took.Seconds()/crit.Seconds(), crit.Seconds())
	checkWARC(t, h, sum)
}

func TestCrawlStopsAtMaxPages(t *testing.T) {
	t.Parallel()
	h := newHarness(t, testweb.Options{Seed: 3, Hosts: 20}, 20*time.Millisecond)
	h.spec.MaxPages = 25
	sum := h.run(t, context.Background())
	if sum.StopReason != job.ReasonMaxPages {
		t.Errorf("StopReason = %q, want max-pages", sum.StopReason)
	}
	pages := 0
	for _, r := range h.srv.Log() {
		if !strings.HasPrefix(r.Path, "/robots") && r.Path != "/sitemap.xml" { // robots.txt and sitemaps are no pages
			pages++
		}
	}
	if pages > 25 {
		t.Errorf("the web served %d pages, want at most 25", pages)
	}
	if p := h.analyze(0).Problems(); len(p) > 0 {
		t.Errorf("problems: %s", strings.Join(p, "\n"))
	}
}

func TestCrawlStopsOnCancel(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a crawl of a synthetic web; the full suite runs it")
	}
	t.Parallel()
	h := newHarness(t, testweb.Options{Seed: 5, Hosts: 30}, 50*time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Cancel once the web has answered some pages, however slow the machine.
	go func() {
		deadline := time.Now().Add(time.Minute)
		for ctx.Err() == nil && time.Now().Before(deadline) {
			pages := 0
			for _, r := range h.srv.Log() {
				if r.Status == 200 && !strings.HasPrefix(r.Path, "/robots") {
					pages++
				}
			}
			if pages >= 10 {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
	}()
	sum := h.run(t, ctx)
	if sum.StopReason != job.ReasonSignal {
		t.Errorf("StopReason = %q, want signal", sum.StopReason)
	}
	if sum.Pages == 0 || sum.Queued == 0 {
		t.Errorf("after cancel: %d pages, %d queued; want some of each", sum.Pages, sum.Queued)
	}
	for _, f := range sum.WARCFiles {
		if strings.HasSuffix(f, ".open") {
			t.Errorf("WARC file left open: %s", f)
		}
	}
	rep, err := warccheck.Validate(sum.WARCFiles...)
	if err != nil || len(rep.Errors) > 0 {
		t.Fatalf("WARC after cancel: %v %v", err, rep)
	}
}

// TestOpenRejectsBadOptions checks that every option, the parts' included,
// is checked before the data directory is touched.
func TestOpenRejectsBadOptions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	_, err := Open(Options{DataDir: dir, Concurrency: -2, UserAgent: "/1.0", MaxBodyBytes: -1, MaxDecodedBytes: -1, FetchTimeout: -time.Second})
	if err == nil {
		t.Fatal("Open accepted bad options")
	}
	for _, field := range []string{"Concurrency", "UserAgent", "MaxBodyBytes", "MaxDecodedBytes", "FetchTimeout"} {
		if !strings.Contains(err.Error(), field) {
			t.Errorf("error %q does not name %s", err, field)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("Open with bad options touched the data directory: %v", err)
	}

	// A fresh start with a bad fetcher option must not delete the state.
	state := filepath.Join(dir, "state")
	if err := os.MkdirAll(state, 0o755); err != nil {
		t.Fatal(err)
	}
	keep := filepath.Join(state, "KEEP")
	os.WriteFile(keep, nil, 0o644)
	if _, err := Open(Options{DataDir: dir, Fresh: true, AllowNets: []netip.Prefix{{}}}); err == nil {
		t.Error("Open accepted an invalid --allow-net prefix")
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("Fresh with a bad option deleted the state: %v", err)
	}
}

func TestSubmitRejectsBadSpec(t *testing.T) {
	n, err := Open(Options{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if _, err := n.Submit(job.Spec{Seeds: []string{"mailto:x@y.test"}}); err == nil || !strings.Contains(err.Error(), "mailto") {
		t.Errorf("Submit with a mailto seed: %v", err)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		v    string
		want time.Duration
	}{
		{"", 0},
		{"120", 2 * time.Minute},
		{"-5", 0},
		{"soon", 0},
		{now.Add(90 * time.Second).UTC().Format(http.TimeFormat), 90 * time.Second},
		{now.Add(-time.Hour).UTC().Format(http.TimeFormat), 0},
	} {
		h := map[string][]string{"Retry-After": {c.v}}
		if got := retryAfter(h, now); got != c.want {
			t.Errorf("retryAfter(%q) = %v, want %v", c.v, got, c.want)
		}
	}
}

// TestResumeAfterStop stops a crawl half-way, starts it again on the same
// data directory, and checks from the web's log that the second run went
// on where the first stopped: nothing fetched twice except what was in
// flight at the stop, no gap broken across the restart, full coverage.
func TestResumeAfterStop(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a crawl of a synthetic web; the full suite runs it")
	}
	t.Parallel()
	h := newHarness(t, testweb.Options{Seed: 9, Hosts: 30, BigPages: 20}, 40*time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for ctx.Err() == nil && len(h.srv.Log()) < 150 {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	first := h.run(t, ctx)
	cancel()
	if first.StopReason != job.ReasonSignal {
		t.Fatalf("first run: StopReason %q", first.StopReason)
	}
	n1 := len(h.srv.Log())
	second := h.run(t, context.Background())
	if second.StopReason != job.ReasonExhausted {
		t.Errorf("second run: StopReason %q", second.StopReason)
	}
	if second.Job != first.Job {
		t.Errorf("second run is job %d, want the first run's job %d resumed", second.Job, first.Job)
	}
	log := h.srv.Log()
	// A page fetched in the first run and again in the second must have
	// been in flight when the first stopped (fetches in flight at a stop
	// get a grace period to finish, so there should be none).
	firstRun := map[string]bool{}
	for _, r := range log[:n1] {
		firstRun[r.Host+r.Path] = true
	}
	repeats := 0
	for _, r := range log[n1:] {
		if firstRun[r.Host+r.Path] && !strings.HasPrefix(r.Path, "/robots") {
			repeats++
		}
	}
	if repeats > h.opts.Concurrency {
		t.Errorf("%d pages fetched again after the restart, more than could have been in flight (%d)", repeats, h.opts.Concurrency)
	}
	rep := h.analyze(0.99)
	for _, p := range rep.Problems() {
		if strings.HasPrefix(p, "repeat") {
			continue // judged above
		}
		t.Errorf("problem across the restart: %s", p)
	}
	if second.Discovered >= first.Discovered+second.Pages {
		t.Errorf("second run rediscovered everything: %d discovered", second.Discovered)
	}
	t.Logf("first run %d requests, second %d, %d pages again", n1, len(log)-n1, repeats)
	checkWARC(t, h, second)
}

// TestTallyAcrossRestart: a crawl stopped mid-way and resumed to its end
// counts, over both runs, exactly the requests the web's log shows, and
// its pages and robots.txt fetches add up to the responses.
func TestTallyAcrossRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a crawl of a synthetic web; the full suite runs it")
	}
	t.Parallel()
	h := newHarness(t, testweb.Options{Seed: 13, Hosts: 20}, 20*time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for ctx.Err() == nil && len(h.srv.Log()) < 60 {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	first := h.run(t, ctx)
	cancel()
	second := h.run(t, context.Background())
	log := h.srv.Log()
	tot := second.Total
	if tot.Requests != int64(len(log)) {
		t.Errorf("total requests %d over two runs (%d + %d), the web saw %d", tot.Requests, first.Requests, second.Requests, len(log))
	}
	if tot.Requests != first.Requests+second.Requests || tot.Pages != first.Pages+second.Pages || tot.Bytes != first.Bytes+second.Bytes {
		t.Errorf("total %+v is not the sum of the runs' counts", tot)
	}
	var responses int64
	for _, r := range log {
		if r.Status != 0 {
			responses++
		}
	}
	var statuses int64
	for _, v := range tot.Status {
		statuses += v
	}
	if statuses+tot.RobotsFetches+tot.Sitemaps != responses {
		t.Errorf("%d page statuses + %d robots.txt answers + %d sitemap answers counted; the web answered %d requests", statuses, tot.RobotsFetches, tot.Sitemaps, responses)
	}
	t.Logf("first run %d requests, second %d; web %d", first.Requests, second.Requests, len(log))
}

// TestFenceStopsLeasing: a node past its fence (a fleet member whose
// membership may have lapsed) starts no fetch, and goes on once the fence
// moves on.
func TestFenceStopsLeasing(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a crawl of a synthetic web; the full suite runs it")
	}
	t.Parallel()
	h := newHarness(t, testweb.Options{Seed: 5, Hosts: 4}, 20*time.Millisecond)
	n, err := Open(h.opts)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	var fence atomic.Int64
	fence.Store(time.Now().Add(-time.Second).UnixNano()) // passed
	n.SetFence(func() time.Time { return time.Unix(0, fence.Load()) })
	j, err := n.Submit(h.spec)
	if err != nil {
		t.Fatal(err)
	}
	n.Start()
	time.Sleep(500 * time.Millisecond)
	if got := len(h.srv.Log()); got != 0 {
		t.Fatalf("a fenced node made %d requests, want none", got)
	}
	fence.Store(time.Now().Add(time.Hour).UnixNano()) // renewed
	select {
	case <-j.Ended():
	case <-time.After(2 * time.Minute):
		t.Fatal("the job did not end after the fence moved on")
	}
	if rep := h.analyze(1); len(rep.Problems()) > 0 {
		t.Errorf("problems: %s", strings.Join(rep.Problems(), "\n"))
	}
}
