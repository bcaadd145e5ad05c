package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/internal/bench/childout"
	"github.com/trawl-crawler/trawl/internal/cli/apiclient"
	"github.com/trawl-crawler/trawl/internal/cli/status"
	"github.com/trawl-crawler/trawl/internal/store/partition"
	"github.com/trawl-crawler/trawl/internal/testkit/clustertest"
	"github.com/trawl-crawler/trawl/internal/testkit/testweb"
	"github.com/trawl-crawler/trawl/internal/testkit/trawlbin"
)

// Settings of the fleet test's members, shared by their flags and the
// judgement of the web's log.
const (
	fleetGap = 100 * time.Millisecond
	// --fleet-checkpoint-every: longer than the test, so that a killed
	// member's work reaches its takers only through the replicated
	// progress (cluster/progress), as it would between two checkpoints
	// of a real fleet.
	fleetCkpt      = 10 * time.Minute
	fleetConc      = 16              // --concurrency: the bound on a kill's repeats
	fleetLag       = 5 * time.Second // how long before its kill a page's change may be unacknowledged
	fleetHeartbeat = 250 * time.Millisecond
	fleetTTL       = 3 * time.Second
	fleetHold      = 4 * time.Second // --fleet-takeover-hold
	fleetFetchTO   = 3 * time.Second // --fetch-timeout: below the hold less a gap
	fleetToken     = "fleet-test-token"
)

// fleetProc is one `trawl serve` process of the fleet test.
type fleetProc struct {
	name    string
	api     string // http://host:port
	cmd     *exec.Cmd
	out     childout.Buffer
	done    chan struct{}
	killAt  time.Time
	started time.Time
	data    string // --data
}

// TestFleetProcesses is the fleet's judged test: three `trawl serve`
// processes with embedded NATS servers form a fleet on loopback and crawl
// the synthetic web, a crawl submitted to one member's API; one member is
// killed with SIGKILL mid-crawl and a fourth joins. The web's log shows no
// politeness gap broken and no robots.txt rule broken, coverage reaches
// 99%, and every repeated fetch is one the killed member made in the
// seconds before its kill, no more of them than its fetches at once (its
// checkpoints are minutes apart: its takers learn the rest from the
// replicated progress); GET /v1/nodes shows every partition owned exactly once at the
// end.
//
// Without t.Parallel on purpose, as TestServeEndToEnd, TestFleetProcesses
// and TestFleetRollingRestart are (docs/design/testing.md): run side by
// side, they loaded the machine enough that node's timing-bound tests,
// run beside e2e, failed.
func TestFleetProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("a multi-process crawl of minutes")
	}
	web, err := testweb.Serve(testweb.Generate(testweb.Options{Seed: 12, Hosts: 30, BigPages: 25, SharedIPHosts: 12}.SmallPages()), testweb.ServeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	r := newFleetRig(t, web)
	cluster := r.cluster
	start := func(i int, peers []string) *fleetProc { return r.start(t, i, peers, "") }
	var procs []*fleetProc
	for i := range 3 {
		procs = append(procs, start(i, cluster[:3]))
	}
	for _, p := range procs {
		waitReady(t, p, 90*time.Second)
	}
	c, err := apiclient.New(apiclient.Options{Server: procs[0].api, Token: fleetToken})
	if err != nil {
		t.Fatal(err)
	}
	domain := web.Web().Options().Domain
	seeds := web.Seeds()
	var req apiclient.CrawlRequest
	req.Name, req.Seeds = "fleet", seeds
	depth, giveUp := 12, 3.5
	req.Scope.Domains, req.Scope.MaxDepth = []string{domain}, &depth
	req.Limits.RobotsGiveUpS = &giveUp
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	created, err := c.CreateCrawl(ctx, req)
	cancel()
	if err != nil {
		t.Fatalf("POST /v1/crawls to %s: %v", procs[0].name, err)
	}
	// The crawl exists on every member, under the same ID.
	for _, p := range procs[1:] {
		pc, _ := apiclient.New(apiclient.Options{Server: p.api, Token: fleetToken})
		deadline := time.Now().Add(30 * time.Second)
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			cr, err := pc.Crawl(ctx, created.CrawlID)
			cancel()
			if err == nil && cr.Name == "fleet" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("crawl %d not on %s after 30 s: %v", created.CrawlID, p.name, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	analyze := func() *testweb.Report {
		return testweb.Analyze(web.Web(), web.Log(), testweb.AnalyzeOptions{
			Seeds: seeds, Agent: "trawl", Gap: fleetGap, MaxDepth: 12, Domain: domain,
			MaxParallel: 1, MaxParallelPerIP: 2, MinCoverage: 0.99, // per IP: 2 over the fleet (cluster/ipcap)
		})
	}
	deadline := time.Now().Add(3 * time.Minute)
	for analyze().Coverage < 0.33 {
		if time.Now().After(deadline) {
			t.Fatalf("the fleet did not crawl a third of the web in 3 minutes: %s", analyze())
		}
		time.Sleep(100 * time.Millisecond)
	}
	victim := procs[1]
	victim.killAt = time.Now()
	if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-victim.done
	t.Logf("killed %s at coverage %.3f", victim.name, analyze().Coverage)
	joiner := start(3, cluster) // it routes to every server, the dead one's too
	waitReady(t, joiner, 90*time.Second)
	live := []*fleetProc{procs[0], procs[2], joiner}
	all := append(slices.Clone(procs), joiner)

	// Coverage, then quiet: no request for a while.
	var rep *testweb.Report
	deadline = time.Now().Add(5 * time.Minute)
	for {
		rep = analyze()
		log := web.Log()
		quiet := len(log) > 0 && time.Since(log[len(log)-1].Start) > 5*time.Second
		if rep.Coverage >= 0.99 && quiet {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("coverage %.3f after 5 minutes: %s", rep.Coverage, rep)
			for _, p := range live { // a member whose view is stale has a stuck owner round
				if e := partitionTable(p, []string{"n1", "n3", "n4"}); e != "" {
					t.Logf("the partition table as %s tells it: %s", p.name, e)
				}
			}
			for _, p := range live { // a crawl ended too soon leaves its URLs queued
				pc, _ := apiclient.New(apiclient.Options{Server: p.api, Token: fleetToken})
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				cr, err := pc.Crawl(ctx, created.CrawlID)
				cancel()
				t.Logf("%s: crawl %d is %q (%s), %v", p.name, created.CrawlID, cr.State, cr.StopReason, err)
			}
			explainFleetMissing(t, web, rep, all)
			t.FailNow()
		}
		time.Sleep(250 * time.Millisecond)
	}

	if rep.Coverage < 1 {
		explainFleetMissing(t, web, rep, all) // within the bound, but worth a look
	}

	// Ownership at the end, as every live member's API tells it.
	var settleErr string
	for settleBy := time.Now().Add(90 * time.Second); ; time.Sleep(250 * time.Millisecond) {
		settleErr = ""
		for _, p := range live {
			if e := partitionTable(p, []string{"n1", "n3", "n4"}); e != "" {
				settleErr = p.name + ": " + e
				break
			}
		}
		if settleErr == "" || time.Now().After(settleBy) {
			break
		}
	}
	if settleErr != "" {
		t.Errorf("ownership not settled after 90 s: %s", settleErr)
	}

	// The crawl ends by itself, on every member: finished, nothing left
	// (cluster/finish), within a minute of the ownership settling (two
	// checks of every member's report, a heartbeat apart).
	for _, p := range live {
		cr, err := crawlEnd(p, created.CrawlID, time.Minute)
		if err != nil || cr.State != "finished" || cr.StopReason != "exhausted" {
			t.Errorf("%s: crawl %d a minute after the fleet settled: %+v, %v; want finished, exhausted", p.name, created.CrawlID, cr, err)
			var why []string // the coordinator's reasons, and what failed around them
			for _, l := range strings.Split(p.out.String(), "\n") {
				if strings.Contains(l, "finish:") || strings.Contains(l, "follow routed URLs") {
					why = append(why, l)
				}
			}
			t.Logf("%s's crawl-end lines (the last 15):\n%s", p.name, childout.LastLines(strings.Join(why, "\n"), 15))
		}
	}

	// trawl status on one member shows the fleet and sums the members'
	// shares of the crawl: more than the member's own, no more than the
	// page requests the live members made.
	code, sout, serr := trawl(t, "status", "--server", live[0].api, "--json")
	if code != 0 {
		t.Errorf("trawl status = %d: %s", code, serr)
	}
	var st status.Report
	if err := json.Unmarshal([]byte(sout), &st); err != nil || len(st.Crawls) != 1 || st.Crawls[0].Stats == nil {
		t.Errorf("trawl status --json: %v\n%s", err, sout)
	} else {
		own, _ := apiclient.New(apiclient.Options{Server: live[0].api})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		mine, err := own.Stats(ctx, created.CrawlID)
		cancel()
		liveRequests := 0
		for _, q := range web.Log() {
			if !isRobots(q.Path) && (strings.Contains(q.UserAgent, "fleet test n1;") || strings.Contains(q.UserAgent, "fleet test n3;") || strings.Contains(q.UserAgent, "fleet test n4;")) {
				liveRequests++
			}
		}
		names := []string{}
		for _, m := range st.Fleet {
			names = append(names, m.Name)
		}
		sum := st.Crawls[0].Stats.Fetched
		if err != nil || strings.Join(names, ",") != "n1,n3,n4" || sum <= mine.Fetched || sum > int64(liveRequests) {
			t.Errorf("trawl status: members %v, fleet pages %d, %s's own %d (%v), page requests of the live members %d", names, sum, live[0].name, mine.Fetched, err, liveRequests)
		}
		t.Logf("trawl status: %d pages over the fleet (%s's own %d; the live members requested %d)", sum, live[0].name, mine.Fetched, liveRequests)
	}
	checkFleetCommands(t, live[1], []string{"n1", "n3", "n4"}, []string{victim.name})
	checkFleetRemove(t, live[1], victim.name)
	checkFleetMetrics(t, live[0])

	// Repeats: each must be a fetch the killed member made just before
	// its kill (in flight, or done but its change not yet acknowledged
	// by JetStream), fetched again by a taker, and there are no more of
	// them than the member's fetches at once: everything it did before
	// reached its takers through the replicated progress.
	// A page fetched at the depth limit (its links cut) and then reached
	// by a shorter path is fetched again for its links, by design
	// (node.Fold; docs/design/fleet.md, "A shorter path is followed"): the members'
	// crawl logs show both fetches and their depths.
	var dirs []string
	for _, p := range append(slices.Clone(procs), joiner) {
		dirs = append(dirs, p.data)
	}
	shorter, err := clustertest.ShorterPathRefetches(dirs, 12)
	if err != nil {
		t.Errorf("the members' crawl logs: %v", err)
	}
	window := victim.killAt.Add(-fleetLag)
	var unexplained, problems []string
	repeats := 0
	for _, rp := range append(rep.Repeats, rep.RobotsRepeats...) {
		if shorter[rp.URL] {
			t.Logf("repeat of %s: fetched at the depth limit, then by a shorter path", rp.URL)
			continue
		}
		repeats++
		if !strings.Contains(rp.Settled.UserAgent, "fleet test "+victim.name+";") || rp.Settled.End.Before(window) {
			var then []string
			for _, q := range web.Log() {
				if q.Host == rp.Settled.Host && strings.HasSuffix(rp.URL, q.Path) && q.Start.After(rp.Settled.Start) {
					then = append(then, fmt.Sprintf("%s at %s", agentName(q.UserAgent), q.Start.Format("15:04:05.000")))
				}
			}
			unexplained = append(unexplained, fmt.Sprintf("%s x%d (kept answer by %s, ended %s; then %s)", rp.URL, rp.Count,
				agentName(rp.Settled.UserAgent), rp.Settled.End.Format("15:04:05.000"), strings.Join(then, ", ")))
		}
	}
	for _, p := range rep.Problems() {
		if !strings.HasPrefix(p, "repeat: ") && !strings.HasPrefix(p, "robots repeat: ") {
			problems = append(problems, p)
		}
	}
	if len(problems) > 0 {
		t.Errorf("the web's log shows %d problems:\n%s\n%s", len(problems), strings.Join(problems, "\n"), rep)
	}
	if len(unexplained) > 0 {
		t.Errorf("%d repeats not made by %s in the %v before its kill:\n%s", len(unexplained), victim.name, fleetLag, strings.Join(unexplained, "\n"))
	}
	if repeats > fleetConc {
		t.Errorf("%d pages fetched again after %s's kill, more than its %d fetches at once", repeats, victim.name, fleetConc)
	}
	inWindow := 0
	for _, q := range web.Log() {
		if strings.Contains(q.UserAgent, "fleet test "+victim.name+";") && !q.End.Before(window) && q.Start.Before(victim.killAt) {
			inWindow++
		}
	}
	// The per-IP cap (2 at once) holds over the fleet: hosts that share
	// an address sit in partitions of different members, which take
	// turns on the address's slots (cluster/ipcap). Analyze holds it to
	// 2; reported here with how many members fetched each address.
	for _, ip := range rep.SharedIPs {
		owners := map[string]bool{}
		for _, q := range web.Log() {
			if q.IP == ip.IP {
				owners[agentName(q.UserAgent)] = true
			}
		}
		t.Logf("shared address %s (%d hosts, fetched by %d members): at most %d requests at once", ip.IP, len(ip.Hosts), len(owners), ip.MaxConcurrency)
	}
	t.Logf("coverage %.3f, %d requests, %d repeats and %d robots.txt repeats, of the %d requests %s made in the %v before its kill",
		rep.Coverage, rep.Requests, len(rep.Repeats), len(rep.RobotsRepeats), inWindow, victim.name, victim.killAt.Sub(window))
	// No flood of errors after a member's loss: an error repeated (the
	// dead peer's route refused every second) is logged once, then once a
	// minute with a count.
	for _, p := range live {
		checkErrorRate(t, p, victim.killAt)
	}
}

// digits matches a run of digits.
var digits = regexp.MustCompile(`[0-9]+`)

// checkErrorRate holds p's ERROR lines logged since since to the rate of
// a repeated error: each message at most once, plus once a minute. Lines
// that differ only in their numbers (attempts, counts, connection ids and
// ports) are one kind of error; each distinct line of a kind may be logged
// at that rate (the route pool's connections to a killed peer each fail
// once, each with its own id and port), and a kind may have at most
// maxVariants distinct lines: more is a flood that varies its numbers.
func checkErrorRate(t *testing.T, p *fleetProc, since time.Time) {
	t.Helper()
	const maxVariants = 8
	count := map[string]int{}
	variants := map[string]map[string]bool{}
	for _, l := range strings.Split(p.out.String(), "\n") {
		if !strings.Contains(l, "level=ERROR") {
			continue
		}
		ts, _, _ := strings.Cut(strings.TrimPrefix(l, "time="), " ")
		at, err := time.Parse(time.RFC3339Nano, ts)
		if err != nil || at.Before(since) {
			continue
		}
		msg := l
		if _, m, ok := strings.Cut(l, "msg="); ok {
			msg = m
		}
		// The message without its varying parts (attempt numbers, counts).
		kind := digits.ReplaceAllString(msg, "#")
		count[kind]++
		if variants[kind] == nil {
			variants[kind] = map[string]bool{}
		}
		// A repeat's line ("... repeats=N") is the same error as its first.
		first, _, _ := strings.Cut(msg, " repeats=")
		variants[kind][first] = true
	}
	perLine := 1 + int(time.Since(since)/time.Minute)
	for kind, n := range count {
		v := len(variants[kind])
		t.Logf("%s: %d x ERROR (%d distinct) %s", p.name, n, v, kind)
		if v > maxVariants {
			t.Errorf("%s logged %d distinct errors of one kind in the %v since the kill: %s", p.name, v, time.Since(since).Round(time.Second), kind)
		}
		if n > perLine*v {
			t.Errorf("%s logged an error %d times (%d distinct) in the %v since the kill, more than once a minute each: %s", p.name, n, v, time.Since(since).Round(time.Second), kind)
		}
	}
}

// checkFleetCommands checks what trawl fleet members and partitions say
// through p: the members named (p marked as the one answering), each
// with its API, their partitions adding up to every partition, each
// partition given to one of them.
func checkFleetCommands(t *testing.T, p *fleetProc, names, gone []string) {
	t.Helper()
	code, out, errb := trawl(t, "fleet", "members", "--server", p.api)
	if code != 0 {
		t.Fatalf("trawl fleet members = %d: %s", code, errb)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	total := 0
	var got []string
	for _, l := range lines[1:] {
		if peers, ok := strings.CutPrefix(l, "JetStream peers that are no live member: "); ok {
			for _, g := range gone {
				if !strings.Contains(peers, g+" (") {
					t.Errorf("trawl fleet members: %s is not listed as a peer gone: %q", g, l)
				}
			}
			gone = nil
			continue
		}
		f := strings.Fields(l)
		if len(f) == 5 && f[1] == "*" { // the member answering
			if f[0] != p.name {
				t.Errorf("trawl fleet members through %s marks %s as the one answering", p.name, f[0])
			}
			f = append(f[:1], f[2:]...)
		}
		if len(f) != 4 {
			t.Errorf("trawl fleet members: line %q", l)
			continue
		}
		n, err := strconv.Atoi(f[2])
		if err != nil || !strings.HasPrefix(f[1], "http://127.") || f[3] != "serving" {
			t.Errorf("trawl fleet members: line %q", l)
		}
		got = append(got, f[0])
		total += n
	}
	if strings.Join(got, ",") != strings.Join(names, ",") || total != 256 {
		t.Errorf("trawl fleet members: %v owning %d partitions, want %v owning 256:\n%s", got, total, names, out)
	}
	code, out, errb = trawl(t, "fleet", "partitions", "--server", p.api)
	if code != 0 {
		t.Fatalf("trawl fleet partitions = %d: %s", code, errb)
	}
	lines = strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 257 {
		t.Fatalf("trawl fleet partitions: %d lines, want a header and 256", len(lines))
	}
	for i, l := range lines[1:] {
		f := strings.Fields(l)
		if len(f) != 2 || f[0] != strconv.Itoa(i) || !slices.Contains(names, f[1]) {
			t.Errorf("trawl fleet partitions: line %q", l)
			break
		}
	}
	if code, _, errb = trawl(t, "fleet", "partitions", "256", "--server", p.api); code != 2 || !strings.Contains(errb, "from 0 to 255") {
		t.Errorf("trawl fleet partitions 256 = %d, %q; want 2 and the range", code, errb)
	}
	if len(gone) > 0 {
		t.Errorf("trawl fleet members lists no JetStream peer gone, want %v:\n%s", gone, out)
	}
}

// checkFleetRemove removes the member gone (killed, not to come back)
// from the fleet's JetStream peers through p, after the refusals a user
// can meet: a live member (p itself), a name that is no peer, no token.
func checkFleetRemove(t *testing.T, p *fleetProc, gone string) {
	t.Helper()
	token := "TRAWL_TOKEN=" + fleetToken
	for _, c := range []struct {
		name, env, want string
		code            int
	}{
		{p.name, token, "still a live member", 1},
		{"nosuch", token, "not a server of the JetStream cluster", 1},
		{gone, "TRAWL_TOKEN=wrong", "Bearer", 1},
	} {
		setEnv(t, c.env)
		code, _, errb := trawl(t, "fleet", "remove", c.name, "--server", p.api)
		if code != c.code || !strings.Contains(errb, c.want) {
			t.Errorf("trawl fleet remove %s (%s) = %d, %q; want %d and %q", c.name, c.env, code, errb, c.code, c.want)
		}
	}
	setEnv(t, "TRAWL_TOKEN="+fleetToken)
	code, out, errb := trawl(t, "fleet", "remove", gone, "--server", p.api)
	if code != 0 || !strings.Contains(out, "removed "+gone) {
		t.Fatalf("trawl fleet remove %s = %d: %s%s", gone, code, out, errb)
	}
	// The meta group applies the removal; then the peer is no longer
	// listed.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		_, out, _ = trawl(t, "fleet", "members", "--server", p.api)
		if !strings.Contains(out, "JetStream peers") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("10 s after trawl fleet remove %s, trawl fleet members still says:\n%s", gone, out)
		}
	}
}

// fleetRig starts the fleet test's members: `trawl serve` processes with
// embedded NATS servers on loopback, crawling synthetic webs.
type fleetRig struct {
	bin           string
	hosts         string // the web's --hosts file
	cluster, apis []string
	name          string // the NATS cluster's
	gap           time.Duration
}

func newFleetRig(t *testing.T, web *testweb.Server, more ...*testweb.Server) *fleetRig {
	t.Helper()
	files, err := testweb.WriteFiles(t.TempDir(), web)
	if err != nil {
		t.Fatal(err)
	}
	if len(more) > 0 { // one --hosts file for every web
		all, err := os.ReadFile(files[0])
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range more {
			f, err := testweb.WriteFiles(t.TempDir(), w)
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(f[0])
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, b...)
		}
		files[0] = filepath.Join(t.TempDir(), "hosts")
		if err := os.WriteFile(files[0], all, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := trawlbin.Build(t)             // first: the ports below are free only now
	addrs := clustertest.FreeAddrs(t, 8) // 4 NATS cluster addresses, 4 APIs
	// A fleet name of its own: a server of another test taking a killed
	// member's port is refused, not routed into this fleet.
	return &fleetRig{bin: bin, hosts: files[0], cluster: addrs[:4], apis: addrs[4:],
		name: fmt.Sprintf("e2e-%d-%s", os.Getpid(), t.Name()), gap: fleetGap}
}

// start starts member i (n1, n2, ...) routing to peers, its data in data
// (a directory of its own if ""); it is killed at the end of the test.
func (r *fleetRig) start(t *testing.T, i int, peers []string, data string) *fleetProc {
	name := fmt.Sprintf("n%d", i+1)
	if data == "" {
		data = filepath.Join(t.TempDir(), name)
		if dir := os.Getenv("TRAWL_FLEET_LOGS"); dir != "" {
			data = filepath.Join(dir, name+".data") // kept, to be looked into
		}
	}
	p := &fleetProc{name: name, api: "http://" + r.apis[i], done: make(chan struct{}), data: data}
	p.cmd = exec.Command(r.bin, "serve", "--data", data, "--listen", r.apis[i],
		"--node-name", name, "--nats-embedded", "--nats-cluster-name", r.name, "--nats-cluster", r.cluster[i], "--nats-peers", strings.Join(peers, ","),
		"--hosts", r.hosts, "--allow-net", "127.0.0.0/8", "--min-delay", r.gap.String(), "--max-delay", "3s",
		"--concurrency", strconv.Itoa(fleetConc), "--max-adaptive-delay", "2s", "--fetch-timeout", fleetFetchTO.String(),
		"--user-agent", "trawl/0.1 (fleet test "+name+"; +https://github.com/trawl-crawler/trawl)",
		"--fleet-heartbeat", fleetHeartbeat.String(), "--fleet-member-ttl", fleetTTL.String(),
		"--fleet-checkpoint-every", fleetCkpt.String(), "--fleet-takeover-hold", fleetHold.String())
	p.cmd.Env = append(os.Environ(), "TRAWL_TOKEN="+fleetToken)
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.out
	p.started = time.Now()
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { defer close(p.done); _ = p.cmd.Wait() }()
	t.Cleanup(func() {
		if t.Failed() {
			// A goroutine dump of each member still running (Go's
			// runtime writes it on SIGQUIT), to see what is stuck.
			_ = p.cmd.Process.Signal(syscall.SIGQUIT)
			select {
			case <-p.done:
			case <-time.After(3 * time.Second):
			}
		}
		_ = p.cmd.Process.Kill()
		<-p.done
		if dir := os.Getenv("TRAWL_FLEET_LOGS"); dir != "" {
			// One file per process: a member started again keeps its
			// name, and its first run's log is the one a leave is read in.
			_ = os.WriteFile(filepath.Join(dir, name+"-"+p.started.Format("150405.000")+".log"), []byte(p.out.String()), 0o644)
		} else if t.Failed() {
			out := p.out.String()
			var stuck []string // the fleet's goroutines in the dump, if any
			for _, g := range strings.Split(out, "\n\n") {
				if strings.HasPrefix(g, "goroutine ") && strings.Contains(g, "trawl/cluster/") && len(stuck) < 40 {
					stuck = append(stuck, g)
				}
			}
			if len(stuck) > 0 {
				t.Logf("%s's goroutines in cluster/ packages at the end:\n%s", name, strings.Join(stuck, "\n\n"))
			}
			if i := strings.Index(out, "SIGQUIT: quit"); i >= 0 {
				out = out[:i] // the log before the dump
			}
			t.Logf("%s's output (all of it, and the members' data: TRAWL_FLEET_LOGS=DIR):\n%s", name, childout.LastLines(out, 40))
		}
	})
	return p
}

// crawlEnd polls p's API for crawl id until it is no longer running or
// within passes, and returns what it last said.
func crawlEnd(p *fleetProc, id uint32, within time.Duration) (apiclient.Crawl, error) {
	pc, _ := apiclient.New(apiclient.Options{Server: p.api, Token: fleetToken})
	for endBy := time.Now().Add(within); ; time.Sleep(250 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		cr, err := pc.Crawl(ctx, id)
		cancel()
		if (err == nil && cr.State != "running") || time.Now().After(endBy) {
			return cr, err
		}
	}
}

// waitReady waits until p's API says ready (it has joined the fleet).
func waitReady(t *testing.T, p *fleetProc, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		resp, err := http.Get(p.api + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				t.Logf("%s ready after %v", p.name, time.Since(p.started).Round(time.Millisecond))
				// Join's own account of its steps' times.
				for _, l := range strings.Split(p.out.String(), "\n") {
					if strings.Contains(l, "fleet: joined") {
						t.Logf("%s: %s", p.name, l)
					}
				}
				return
			}
		}
		select {
		case <-p.done:
			t.Fatalf("%s exited before it was ready:\n%s", p.name, childout.LastLines(p.out.String(), 30))
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not ready after %v:\n%s", p.name, within, childout.LastLines(p.out.String(), 30))
		}
	}
}

// partitionTable returns what is wrong with the fleet p's GET /v1/nodes
// shows: "" when the members are exactly names and every partition is
// owned by exactly one of them.
func partitionTable(p *fleetProc, names []string) string {
	c, err := apiclient.New(apiclient.Options{Server: p.api})
	if err != nil {
		return err.Error()
	}
	v, err := c.Nodes(context.Background())
	if err != nil || !v.Fleet {
		return fmt.Sprintf("GET /v1/nodes = %s (%v)", v.Raw, err)
	}
	var got []string
	owner := map[int]string{}
	for _, n := range v.Nodes {
		got = append(got, n.Name)
		for _, q := range n.Owns {
			if o, dup := owner[q]; dup {
				return fmt.Sprintf("partition %d owned by %s and %s", q, o, n.Name)
			}
			owner[q] = n.Name
		}
	}
	if strings.Join(got, ",") != strings.Join(names, ",") {
		return fmt.Sprintf("members %v, want %v", got, names)
	}
	if len(owner) != partition.Count {
		return fmt.Sprintf("%d partitions owned, want %d", len(owner), partition.Count)
	}
	return ""
}

// agentName is the member named in a fleet test User-Agent.
func agentName(ua string) string {
	_, rest, ok := strings.Cut(ua, "fleet test ")
	if !ok {
		return ua
	}
	name, _, _ := strings.Cut(rest, ";")
	return name
}

// explainFleetMissing logs, for the hosts of the URLs rep found missing
// (the first three), what each member says of the host now (GET
// /v1/hosts/{host}), what each member's log says of its partition (every
// move), and the host's requests (the last 12): the most telling lines
// first, as a CI log keeps only the head of a long failure.
func explainFleetMissing(t *testing.T, web *testweb.Server, rep *testweb.Report, procs []*fleetProc) {
	t.Helper()
	byHost := map[string][]string{}
	var hosts []string
	for _, u := range rep.Missing {
		host := u
		if pu, err := url.Parse(u); err == nil {
			host = pu.Hostname()
		}
		if byHost[host] == nil {
			hosts = append(hosts, host)
		}
		byHost[host] = append(byHost[host], u)
	}
	for i, host := range hosts {
		if i == 3 {
			t.Logf("... and %d more hosts", len(hosts)-i)
			break
		}
		p := partition.Of(host)
		var b strings.Builder
		fmt.Fprintf(&b, "missing on %s (partition %d): %s\n", host, p, strings.Join(byHost[host], " "))
		for _, m := range procs {
			select {
			case <-m.done:
				fmt.Fprintf(&b, "%s: not running\n", m.name)
				continue
			default:
			}
			c, _ := apiclient.New(apiclient.Options{Server: m.api, Token: fleetToken})
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			d, err := c.HostStatus(ctx, host)
			cancel()
			if err != nil {
				fmt.Fprintf(&b, "%s: GET /v1/hosts/%s: %v\n", m.name, host, err)
				continue
			}
			raw, _ := json.Marshal(d)
			fmt.Fprintf(&b, "%s: GET /v1/hosts/%s = %s\n", m.name, host, raw)
		}
		mark := fmt.Sprintf("partition=%d ", p)
		for _, m := range procs {
			for _, l := range strings.Split(m.out.String(), "\n") {
				if strings.Contains(l+" ", mark) {
					fmt.Fprintf(&b, "%s log: %s\n", m.name, l)
				}
			}
		}
		var reqs []string
		for _, q := range web.Log() {
			if q.Host == host {
				reqs = append(reqs, fmt.Sprintf("%s %s %s", q.Start.Format("15:04:05.000"), agentName(q.UserAgent), q.Path))
			}
		}
		fmt.Fprintf(&b, "its %d requests, the last 12:\n  %s", len(reqs), strings.Join(reqs[max(0, len(reqs)-12):], "\n  "))
		t.Log(b.String())
	}
}

// checkFleetMetrics reads p's /metrics: its fleet figures are there, and
// its content-fingerprint shard asked other members (each page's digest
// is looked up in its partition, two in three of them another's).
func checkFleetMetrics(t *testing.T, p *fleetProc) {
	t.Helper()
	resp, err := http.Get(p.api + "/metrics")
	if err != nil {
		t.Errorf("GET %s/metrics: %v", p.name, err)
		return
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("GET %s/metrics = %d, %v", p.name, resp.StatusCode, err)
		return
	}
	values := map[string]float64{}
	for _, line := range strings.Split(string(body), "\n") {
		name, v, ok := strings.Cut(line, " ")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		f, err := strconv.ParseFloat(v, 64)
		if err == nil {
			values[name] = f
		}
	}
	for _, c := range []struct {
		series string
		least  float64
	}{
		{"trawl_fleet_members", 3},
		{"trawl_fleet_partitions_served", 1},
		{`trawl_fleet_fingerprint_lookups_total{where="remote"}`, 1},
		{`trawl_fleet_fingerprint_lookups_served_total`, 1},
	} {
		if v, ok := values[c.series]; !ok || v < c.least {
			t.Errorf("%s's /metrics: %s = %v (present %v), want at least %v", p.name, c.series, v, ok, c.least)
		}
	}
	t.Logf("%s's /metrics: fingerprint lookups local %v, remote %v (%v unanswered), served for others %v", p.name,
		values[`trawl_fleet_fingerprint_lookups_total{where="local"}`], values[`trawl_fleet_fingerprint_lookups_total{where="remote"}`],
		values["trawl_fleet_fingerprint_lookup_misses_total"], values["trawl_fleet_fingerprint_lookups_served_total"])
}
