package e2e

import (
	"context"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/internal/cli/apiclient"
	"github.com/trawl-crawler/trawl/internal/testkit/clustertest"
	"github.com/trawl-crawler/trawl/internal/testkit/testweb"
)

// TestFleetRollingRestart: a fleet of three is restarted one member at a
// time mid-crawl, as an upgrade would be (SIGTERM, wait for the exit,
// start again on the same data). A member leaving hands its partitions on,
// each checkpointed with everything it did; coming back, it takes its share
// again from the others' checkpoints. So no page and no robots.txt is
// fetched twice, no politeness gap is broken, and the crawl ends by itself
// with every partition owned once. Two crawls run at once, of two webs,
// created through different members: each is judged on its own web, and
// each ends by itself.
//
// Without t.Parallel on purpose, as TestServeEndToEnd, TestFleetProcesses
// and TestFleetRollingRestart are (docs/design/testing.md): run side by
// side, they loaded the machine enough that node's timing-bound tests,
// run beside e2e, failed.
func TestFleetRollingRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("a multi-process crawl of minutes")
	}
	web, err := testweb.Serve(testweb.Generate(testweb.Options{Seed: 21, Hosts: 12, BigPages: 30}.SmallPages()), testweb.ServeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	web2, err := testweb.Serve(testweb.Generate(testweb.Options{Seed: 23, Hosts: 6, Domain: "second.test"}.SmallPages()), testweb.ServeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer web2.Close()
	r := newFleetRig(t, web, web2)
	r.gap = time.Second // big hosts of 30 pages: a crawl long enough for three restarts
	peers := r.cluster[:3]
	var procs []*fleetProc
	for i := range 3 {
		procs = append(procs, r.start(t, i, peers, ""))
	}
	for _, p := range procs {
		waitReady(t, p, 90*time.Second)
	}
	c, err := apiclient.New(apiclient.Options{Server: procs[0].api, Token: fleetToken})
	if err != nil {
		t.Fatal(err)
	}
	domain := web.Web().Options().Domain
	var req apiclient.CrawlRequest
	req.Name, req.Seeds = "rolling", web.Seeds()
	depth, giveUp := 12, 3.5
	req.Scope.Domains, req.Scope.MaxDepth = []string{domain}, &depth
	req.Limits.RobotsGiveUpS = &giveUp
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	created, err := c.CreateCrawl(ctx, req)
	cancel()
	if err != nil {
		t.Fatalf("POST /v1/crawls to %s: %v", procs[0].name, err)
	}
	c2, err := apiclient.New(apiclient.Options{Server: procs[1].api, Token: fleetToken})
	if err != nil {
		t.Fatal(err)
	}
	req2 := req
	req2.Name, req2.Seeds = "second", web2.Seeds()
	req2.Scope.Domains = []string{web2.Web().Options().Domain}
	ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
	created2, err := c2.CreateCrawl(ctx, req2)
	cancel()
	if err != nil {
		t.Fatalf("POST /v1/crawls to %s: %v", procs[1].name, err)
	}
	analyzeWeb := func(w *testweb.Server, seeds []string) *testweb.Report {
		// The per-IP cap holds over both webs (their hosts share
		// addresses); each web's log sees its own share of it.
		return testweb.Analyze(w.Web(), w.Log(), testweb.AnalyzeOptions{
			Seeds: seeds, Agent: "trawl", Gap: r.gap, MaxDepth: depth, Domain: w.Web().Options().Domain,
			MaxParallel: 1, MaxParallelPerIP: 2, MinCoverage: 0.99,
		})
	}
	analyze := func() *testweb.Report { return analyzeWeb(web, req.Seeds) }
	deadline := time.Now().Add(3 * time.Minute)
	for analyze().Coverage < 0.05 {
		if time.Now().After(deadline) {
			t.Fatalf("the fleet did not crawl 5%% of the web in 3 minutes: %s", analyze())
		}
		time.Sleep(100 * time.Millisecond)
	}
	all := slices.Clone(procs)
	for i, p := range procs {
		stopAt := time.Now()
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		select {
		case <-p.done:
		case <-time.After(90 * time.Second):
			t.Fatalf("%s still running 90 s after SIGTERM", p.name)
		}
		if code := p.cmd.ProcessState.ExitCode(); code != 0 {
			t.Errorf("%s exited %d after SIGTERM", p.name, code)
		}
		left := time.Since(stopAt)
		procs[i] = r.start(t, i, peers, p.data)
		waitReady(t, procs[i], 90*time.Second)
		all = append(all, procs[i])
		t.Logf("%s restarted (left in %v) at coverage %.3f", p.name, left.Round(time.Millisecond), analyze().Coverage)
		// Its share back before the next one leaves, as an operator's
		// rolling restart waits for a member to be ready and settled.
		names := []string{"n1", "n2", "n3"}
		for settleBy := time.Now().Add(60 * time.Second); partitionTable(procs[i], names) != "" && time.Now().Before(settleBy); {
			time.Sleep(200 * time.Millisecond)
		}
	}

	var rep *testweb.Report
	deadline = time.Now().Add(5 * time.Minute)
	for {
		rep = analyze()
		log := web.Log()
		if rep.Coverage >= 0.99 && len(log) > 0 && time.Since(log[len(log)-1].Start) > 5*time.Second {
			break
		}
		if time.Now().After(deadline) {
			explainFleetMissing(t, web, rep, all)
			t.Fatalf("coverage %.3f after 5 minutes: %s", rep.Coverage, rep)
		}
		time.Sleep(250 * time.Millisecond)
	}
	var rep2 *testweb.Report
	for deadline = time.Now().Add(2 * time.Minute); ; time.Sleep(250 * time.Millisecond) {
		rep2 = analyzeWeb(web2, req2.Seeds)
		log := web2.Log()
		if rep2.Coverage >= 0.99 && len(log) > 0 && time.Since(log[len(log)-1].Start) > 5*time.Second {
			break
		}
		if time.Now().After(deadline) {
			explainFleetMissing(t, web2, rep2, all)
			t.Fatalf("the second crawl: coverage %.3f: %s", rep2.Coverage, rep2)
		}
	}
	for _, p := range procs {
		for _, id := range []uint32{created.CrawlID, created2.CrawlID} {
			cr, err := crawlEnd(p, id, time.Minute)
			if err != nil || cr.State != "finished" || cr.StopReason != "exhausted" {
				t.Errorf("%s: crawl %d: %+v, %v; want finished, exhausted", p.name, id, cr, err)
			}
		}
	}
	if e := partitionTable(procs[0], []string{"n1", "n2", "n3"}); e != "" {
		t.Errorf("ownership at the end: %s", e)
	}

	var dirs []string
	for _, p := range procs {
		dirs = append(dirs, p.data)
	}
	shorter, err := clustertest.ShorterPathRefetches(dirs, depth)
	if err != nil {
		t.Errorf("the members' crawl logs: %v", err)
	}
	var repeats, problems []string
	for _, rp := range slices.Concat(rep.Repeats, rep.RobotsRepeats, rep2.Repeats, rep2.RobotsRepeats) {
		if !shorter[rp.URL] {
			repeats = append(repeats, rp.URL+" (first by "+agentName(rp.Settled.UserAgent)+")")
		}
	}
	for _, p := range slices.Concat(rep.Problems(), rep2.Problems()) {
		if !strings.HasPrefix(p, "repeat: ") && !strings.HasPrefix(p, "robots repeat: ") {
			problems = append(problems, p)
		}
	}
	if len(problems) > 0 {
		t.Errorf("the web's log shows %d problems:\n%s", len(problems), strings.Join(problems, "\n"))
	}
	if len(repeats) > 0 {
		t.Errorf("%d fetched again across the rolling restart:\n%s", len(repeats), strings.Join(repeats, "\n"))
	}
	t.Logf("coverage %.3f and %.3f (second crawl), %d and %d requests, %d repeats (%d of them a shorter path)", rep.Coverage, rep2.Coverage, rep.Requests, rep2.Requests,
		len(rep.Repeats)+len(rep.RobotsRepeats)+len(rep2.Repeats)+len(rep2.RobotsRepeats), len(rep.Repeats)+len(rep.RobotsRepeats)+len(rep2.Repeats)+len(rep2.RobotsRepeats)-len(repeats))
}
