package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/internal/testkit/testweb"
	"github.com/trawl-crawler/trawl/internal/testkit/trawlbin"
)

// served is a `trawl serve` process.
type served struct {
	t      *testing.T
	cmd    *exec.Cmd
	addr   string
	token  string
	stderr *bytes.Buffer
	rest   chan string // its stdout after the address line, once it exits
}

// startServe runs `trawl serve` with args (its --data is data) and waits
// for its API address and for /readyz.
func startServe(t *testing.T, bin, data string, args ...string) *served {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--data", data, "--listen", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(environ(t), "TRAWL_TOKEN=", "TRAWL_TOKEN_FILE=", "TRAWL_LISTEN=")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &served{t: t, cmd: cmd, stderr: &bytes.Buffer{}, rest: make(chan string, 1)}
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(out)
	head := ""
	for s.addr == "" && lines.Scan() {
		head += lines.Text() + "\n"
		if a, ok := strings.CutPrefix(lines.Text(), "listening on "); ok {
			s.addr = a
		}
	}
	if s.addr == "" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("trawl serve printed %q, no \"listening on ADDR\"; stderr:\n%s", head, s.stderr)
	}
	go func() {
		var b strings.Builder
		for lines.Scan() {
			b.WriteString(lines.Text() + "\n")
		}
		s.rest <- head + b.String()
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, _ := s.call("GET", "/readyz", nil, nil)
		if code == 200 {
			break
		}
		if time.Now().After(deadline) {
			s.kill()
			t.Fatalf("trawl serve not ready after 30s (last /readyz %d); stderr:\n%s", code, s.stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	tok, err := os.ReadFile(filepath.Join(data, "api.token"))
	if err != nil {
		t.Fatal(err)
	}
	s.token = strings.TrimSpace(string(tok))
	return s
}

// call sends a request (with the token if the method changes anything)
// and decodes the JSON answer into out, if not nil.
func (s *served) call(method, path string, body, out any) (int, string) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, "http://"+s.addr+path, rd)
	if method != "GET" {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			s.t.Errorf("%s %s: answer %q: %v", method, path, raw, err)
		}
	}
	return resp.StatusCode, string(raw)
}

// must is call that fails the test unless the answer has status want.
func (s *served) must(want int, method, path string, body, out any) {
	s.t.Helper()
	if code, raw := s.call(method, path, body, out); code != want {
		s.t.Fatalf("%s %s = %d %s, want %d", method, path, code, raw, want)
	}
}

func (s *served) kill() {
	s.cmd.Process.Signal(syscall.SIGKILL)
	s.cmd.Wait()
}

// stop sends SIGTERM and checks the clean exit.
func (s *served) stop() string {
	s.t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		s.t.Fatal(err)
	}
	if err := s.cmd.Wait(); err != nil {
		s.t.Errorf("trawl serve after SIGTERM: %v; stderr:\n%s", err, s.stderr)
	}
	return <-s.rest
}

// crawlStats is the part of GET /v1/crawls/{id}/stats this test reads.
type crawlStats struct {
	State         string           `json:"state"`
	Fetched       int64            `json:"fetched"`
	Requests      int64            `json:"requests"`
	InFlight      int              `json:"in_flight"`
	RobotsFetches int64            `json:"robots_fetches"`
	Shared        int64            `json:"shared"`
	StatusByClass map[string]int64 `json:"status_by_class"`
}

// TestServeEndToEnd is the server's judged run. `trawl serve` runs as a
// separate process on loopback; two crawls over overlapping hosts of the
// synthetic web are created through the API; one host gets a slower
// policy; one crawl is paused (its counts stand still) and resumed; the
// server is killed with SIGKILL mid-crawl and started again on the same
// data directory; both crawls finish by themselves. Then the web's own
// request log must show politeness held over both crawls and the restart
// (gaps, one request per host at a time, the per-IP cap, robots.txt), the
// policy held from its setting on, across the restart, and the API's
// counts must add up to what the web served, short by at most the
// requests the kill cut off.
//
// Without t.Parallel on purpose, as TestServeEndToEnd, TestFleetProcesses
// and TestFleetRollingRestart are (docs/design/testing.md): run side by
// side, they loaded the machine enough that node's timing-bound tests,
// run beside e2e, failed.
func TestServeEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the trawl binary on a crawl: the full suite runs it")
	}
	const (
		gap         = 60 * time.Millisecond
		slow        = 300 * time.Millisecond
		concurrency = 16
		domain      = "trawl.test"
		maxDepth    = 12
	)
	bin := trawlbin.Build(t)
	srv, err := testweb.Serve(testweb.Generate(testweb.Options{Seed: 23, Hosts: 24, BigPages: 20}.SmallPages()), testweb.ServeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	files, err := testweb.WriteFiles(t.TempDir(), srv)
	if err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	args := []string{"--allow-net", "127.0.0.0/8", "--hosts", files[0], "--min-delay", gap.String(),
		"--max-delay", "3s", "--concurrency", fmt.Sprint(concurrency)}
	s := startServe(t, bin, data, args...)

	seeds := srv.Seeds()
	half := len(seeds)/2 + 1
	var a, b struct {
		ID int `json:"crawl_id"`
	}
	s.must(202, "POST", "/v1/crawls", map[string]any{"name": "a", "seeds": seeds[:half],
		"scope": map[string]any{"domains": []string{domain}, "max_depth": maxDepth}, "limits": map[string]any{"robots_give_up_s": 4}}, &a)
	s.must(202, "POST", "/v1/crawls", map[string]any{"name": "b", "seeds": seeds[half-1:],
		"scope": map[string]any{"domains": []string{domain}, "max_depth": maxDepth}, "limits": map[string]any{"robots_give_up_s": 4}}, &b)
	crawlPath := func(id int) string { return fmt.Sprintf("/v1/crawls/%d", id) }
	waitLog := func(n int) {
		deadline := time.Now().Add(60 * time.Second)
		for len(srv.Log()) < n {
			if time.Now().After(deadline) {
				t.Fatalf("the web saw %d requests after 60s, waiting for %d", len(srv.Log()), n)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitLog(40)

	// One host, the one with most queued, gets a slower policy.
	var hosts struct {
		Hosts []struct {
			Host   string `json:"host"`
			Queued int    `json:"queued"`
		} `json:"hosts"`
	}
	s.must(200, "GET", "/v1/hosts?limit=1000", nil, &hosts)
	sort.Slice(hosts.Hosts, func(i, j int) bool { return hosts.Hosts[i].Queued > hosts.Hosts[j].Queued })
	if len(hosts.Hosts) == 0 || hosts.Hosts[0].Queued < 3 {
		t.Fatalf("no host with queued work: %+v", hosts)
	}
	slowHost := hosts.Hosts[0].Host
	s.must(200, "PUT", "/v1/hosts/"+slowHost+"/policy", map[string]any{"min_delay_ms": slow.Milliseconds()}, nil)
	policySet := time.Now()

	// Crawl a, paused, stands still; resumed, it goes on.
	var st crawlStats
	s.must(200, "POST", crawlPath(a.ID)+"/pause", nil, nil)
	// What was in flight ends (its request counted before it leaves the
	// frontier), however slowly on a loaded machine.
	for inFlight := time.Now().Add(30 * time.Second); ; time.Sleep(2 * gap) {
		s.must(200, "GET", crawlPath(a.ID)+"/stats", nil, &st)
		if st.InFlight == 0 {
			break
		}
		if time.Now().After(inFlight) {
			t.Fatalf("paused crawl a: %d requests still in flight after 30 s", st.InFlight)
		}
	}
	pausedAt := st.Requests
	time.Sleep(500 * time.Millisecond)
	s.must(200, "GET", crawlPath(a.ID)+"/stats", nil, &st)
	if st.State != "paused" || st.Requests != pausedAt {
		t.Errorf("paused crawl a: state %s, requests %d -> %d while paused", st.State, pausedAt, st.Requests)
	}
	s.must(200, "POST", crawlPath(a.ID)+"/resume", nil, nil)

	// SIGKILL mid-crawl, and a restart on the same data directory.
	waitLog(len(srv.Log()) + 80)
	killTime := time.Now()
	s.kill()
	killedAt := len(srv.Log())
	s = startServe(t, bin, data, args...)
	var hs struct {
		Policy struct {
			MinDelayMS *int64 `json:"min_delay_ms"`
		} `json:"policy"`
	}
	s.must(200, "GET", "/v1/hosts/"+slowHost, nil, &hs)
	if hs.Policy.MinDelayMS == nil || *hs.Policy.MinDelayMS != slow.Milliseconds() {
		t.Errorf("after the restart, %s's policy is %+v; want min_delay_ms %d", slowHost, hs.Policy, slow.Milliseconds())
	}
	deadline := time.Now().Add(3 * time.Minute)
	for _, id := range []int{a.ID, b.ID} {
		for {
			s.must(200, "GET", crawlPath(id)+"/stats", nil, &st)
			if st.State == "finished" {
				break
			}
			if st.State != "running" || time.Now().After(deadline) {
				t.Fatalf("crawl %d: state %s, want it to finish by itself", id, st.State)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	var stats [2]crawlStats
	s.must(200, "GET", crawlPath(a.ID)+"/stats", nil, &stats[0])
	s.must(200, "GET", crawlPath(b.ID)+"/stats", nil, &stats[1])
	if out := s.stop(); !strings.Contains(out, "stopped") {
		t.Errorf("second server's output %q, want \"stopped\"", out)
	}

	// Politeness, from the web's log alone, over both crawls and the restart.
	log := srv.Log()
	rep := testweb.Analyze(srv.Web(), log, testweb.AnalyzeOptions{Seeds: seeds, Agent: "trawl", Gap: gap,
		MaxDepth: maxDepth, Domain: domain, MaxParallel: 1, MaxParallelPerIP: 2})
	// A robots.txt answered less than a second before the kill may have
	// been lost with it (its record commits with the lease's completion):
	// asked again once after the restart, it is no repeat.
	lostRobots := map[string]bool{}
	for _, rp := range rep.RobotsRepeats {
		before, after, late := 0, 0, false
		for i, r := range log {
			if fmt.Sprintf("http://%s:%d%s", r.Host, srv.Port(), r.Path) != rp.URL {
				continue
			}
			if i < killedAt {
				before++
				late = r.End.IsZero() || r.End.After(killTime.Add(-time.Second))
			} else {
				after++
			}
		}
		lostRobots[rp.URL] = before == 1 && late && after >= 1
	}
	for _, p := range rep.Problems() {
		if strings.HasPrefix(p, "repeat:") {
			continue // two crawls fetch a page each (unless shared), and a kill repeats what was in flight
		}
		if u, ok := strings.CutPrefix(p, "robots repeat: "); ok && lostRobots[strings.Fields(u)[0]] {
			continue // the answer before the kill was lost with it: asked again once after the restart
		}
		t.Errorf("politeness: %s", p)
	}
	var last time.Time
	slowSeen := 0
	for _, r := range log {
		if r.Host != slowHost || r.Start.Before(policySet) {
			continue
		}
		if !last.IsZero() && r.Start.Sub(last) < slow {
			t.Errorf("%s: %v between requests after its policy asked for %v", slowHost, r.Start.Sub(last).Round(time.Millisecond), slow)
		}
		last = r.Start
		slowSeen++
	}
	if slowSeen < 3 {
		t.Errorf("only %d requests to %s after its policy: nothing judged", slowSeen, slowHost)
	}

	// The counts add up to what the web served, short by at most what
	// the kill cut off: one request per worker.
	var requests, answered int64
	for _, c := range stats {
		requests += c.Requests
		answered += c.RobotsFetches - c.Shared
		for _, v := range c.StatusByClass {
			answered += v
		}
	}
	var webAnswered int64
	for _, r := range log {
		if r.Status != 0 && r.Path != "/sitemap.xml" { // the crawls' stats count sitemap answers apart (not in the API)
			webAnswered++
		}
	}
	if web := int64(len(log)); requests > web || requests < web-concurrency {
		t.Errorf("the crawls counted %d requests; the web saw %d (at most %d may be lost to the kill)", requests, web, concurrency)
	}
	if answered > webAnswered || answered < webAnswered-concurrency {
		t.Errorf("the crawls counted %d answers (statuses + robots.txt - shared); the web answered %d", answered, webAnswered)
	}
	t.Logf("web: %d requests (%d before the kill), %d answered; crawls: a %+v, b %+v; coverage %.3f; %s: %d requests after its policy",
		len(log), killedAt, webAnswered, stats[0], stats[1], rep.Coverage, slowHost, slowSeen)
}
