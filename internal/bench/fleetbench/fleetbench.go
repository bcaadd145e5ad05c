// Package fleetbench is `trawl bench fleet`: it judges how a fleet
// scales. For each fleet size it starts that many `trawl serve` child
// processes (Options.Exe), each in a CPU cgroup of its own (package
// cpulimit) on its own loopback address, joined by a NATS JetStream
// server in this process and crawling the synthetic web served by
// another child (package benchweb); it measures pages/s and each node's
// CPU over a window and reports the efficiency against linear scaling.
// Every child is stopped and every cgroup removed before Main returns.
package fleetbench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/trawl-crawler/trawl/cluster/jsserver"
	"github.com/trawl-crawler/trawl/internal/bench/benchweb"
	"github.com/trawl-crawler/trawl/internal/bench/childout"
	"github.com/trawl-crawler/trawl/internal/bench/cpulimit"
	"github.com/trawl-crawler/trawl/internal/cli/apiclient"
	"github.com/trawl-crawler/trawl/internal/procstat"
	"github.com/trawl-crawler/trawl/internal/store/partition"
)

// Help is `trawl bench fleet --help`.
const Help = `usage: trawl bench fleet [flags]

Judges how a fleet scales: for each size in --nodes it starts that many
'trawl serve' processes (this binary) joined by one NATS JetStream server,
each node in a CPU cgroup of its own limited to --cpu of a core, listening
on and fetching from its own loopback address (127.0.0.11, .12, ...), and
crawls the synthetic web (served by a child process, no gap between fetches
to a host) with one crawl submitted to the first node. After --warmup it
counts the pages the fleet fetches in --window (the nodes' stats) and each
node's CPU, and prints pages/s, pages/s per node, the efficiency against
linear scaling (pages/s / (N x pages/s of one node)), CPU-ms per page and
each node's CPU against its quota, with what limited a node that was well
under it. Needs root (or a delegated cgroup) for the CPU cgroups.

The NATS server runs inside this process (an external server from the
nodes' point of view, so its CPU is not charged to them), fresh for each
fleet size.

Examples:
  trawl bench fleet
  trawl bench fleet --nodes 1,2 --window 10s --json`

// Options are `trawl bench fleet`'s flags, and the trawl binary run as
// the web and as each node.
type Options struct {
	Exe                     string // the trawl binary
	Nodes                   string // fleet sizes, comma-separated
	CPU                     float64
	Hosts, Concurrency      int
	Latency, Warmup, Window time.Duration
	MaxAdaptiveDelay        time.Duration
	Seed                    int64
	JSON                    bool   // one JSON Result instead of a table
	Logs                    string // directory for each node's output, if set
}

// NodeResult is one node's figures in a fleet size's window.
type NodeResult struct {
	Name       string  `json:"name"`
	Addr       string  `json:"addr"`
	Partitions int     `json:"partitions"`
	Pages      int64   `json:"pages"`
	CPUSeconds float64 `json:"cpu_s"`
	CPUOfQuota float64 `json:"cpu_of_quota"` // CPU s per window s over --cpu
	// ThrottledFrac is the share of the cgroup's enforcement periods in
	// the window in which the quota ran out.
	ThrottledFrac float64 `json:"throttled_frac"`
	Queued        int     `json:"queued"`
	HostsActive   int     `json:"hosts_active"`
	HostsWaiting  int     `json:"hosts_waiting"`
}

// SizeResult is one fleet size's figures.
type SizeResult struct {
	Nodes           int          `json:"nodes"`
	Pages           int64        `json:"pages"`
	Seconds         float64      `json:"seconds"`
	PagesPerSec     float64      `json:"pages_per_s"`
	PagesPerSecNode float64      `json:"pages_per_s_per_node"`
	Efficiency      float64      `json:"efficiency"`
	CPUMsPerPage    float64      `json:"cpu_ms_per_page"` // the nodes' CPU only
	WebCPUs         float64      `json:"web_cpus"`        // the web's process, CPU s per s
	NATSCPUs        float64      `json:"nats_cpus"`       // this process (the NATS server, and the polling), CPU s per s
	PerNode         []NodeResult `json:"per_node"`
	Limit           string       `json:"limit"` // what limited the run, when a node was well under its quota
}

// Result is what `trawl bench fleet --json` prints.
type Result struct {
	CPUPerNode  float64      `json:"cpu_per_node"`
	Cgroup      string       `json:"cgroup"`
	Hosts       int          `json:"hosts"`
	Latency     string       `json:"latency"`
	Concurrency int          `json:"concurrency"`
	Warmup      string       `json:"warmup"`
	Window      string       `json:"window"`
	MachineCPUs int          `json:"machine_cpus"`
	NATS        string       `json:"nats"`
	Baseline    string       `json:"baseline"` // what efficiency is against
	Sizes       []SizeResult `json:"sizes"`
}

// Main runs the bench, writes its report to stdout and its progress and
// messages to stderr, and returns the exit code: 2 for bad options, 1 for
// a failure.
func Main(o Options, stdout, stderr io.Writer) int {
	var sizes []int
	for _, s := range strings.Split(o.Nodes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 || n > 200 {
			fmt.Fprintf(stderr, "trawl bench fleet: --nodes %q: want sizes from 1 to 200, comma-separated\n", o.Nodes)
			return 2
		}
		sizes = append(sizes, n)
	}
	switch {
	case !(o.CPU > 0):
		fmt.Fprintf(stderr, "trawl bench fleet: --cpu %v: want a positive number of cores\n", o.CPU)
		return 2
	case o.Window <= 0 || o.Warmup < 0:
		fmt.Fprintf(stderr, "trawl bench fleet: --window %v must be positive and --warmup %v not negative\n", o.Window, o.Warmup)
		return 2
	case o.Hosts < 1 || o.Concurrency < 1:
		fmt.Fprintf(stderr, "trawl bench fleet: --hosts and --concurrency must be at least 1\n")
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "trawl bench fleet: %v\n", err)
		return 1
	}
	// The cgroups first: without them there is nothing to judge.
	probe, err := cpulimit.New(fmt.Sprintf("trawl-bench-fleet-%d-probe", os.Getpid()), o.CPU)
	if err != nil {
		return fail(err)
	}
	kind := probe.Kind()
	if err := probe.Close(); err != nil {
		return fail(err)
	}
	dir, err := os.MkdirTemp("", "trawl-bench-fleet-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(dir)

	web, err := benchweb.Start(benchweb.Options{Exe: o.Exe, Dir: dir, Seed: o.Seed, Hosts: o.Hosts,
		Latency: o.Latency, Lifetime: 2 * time.Hour, Stderr: stderr})
	if err != nil {
		return fail(err)
	}
	defer web.Stop()

	res := Result{CPUPerNode: o.CPU, Cgroup: kind, Hosts: o.Hosts, Latency: o.Latency.String(),
		Concurrency: o.Concurrency, Warmup: o.Warmup.String(), Window: o.Window.String(), MachineCPUs: runtime.NumCPU(),
		NATS: "one JetStream server in the bench's process, fresh for each size"}
	for _, n := range sizes {
		fmt.Fprintf(stderr, "bench fleet: %d node(s)...\n", n)
		r, err := runSize(o.Exe, dir, web, &o, n, stderr)
		if err != nil {
			return fail(fmt.Errorf("%d node(s): %w", n, err))
		}
		res.Sizes = append(res.Sizes, r)
	}
	// Efficiency against one node's rate: the size 1 run's, else the
	// smallest size's per node.
	base, baseN := 0.0, 0
	for _, r := range res.Sizes {
		if baseN == 0 || r.Nodes < baseN {
			base, baseN = r.PagesPerSecNode, r.Nodes
		}
	}
	res.Baseline = fmt.Sprintf("pages/s per node of the %d-node run", baseN)
	for i := range res.Sizes {
		if base > 0 {
			res.Sizes[i].Efficiency = res.Sizes[i].PagesPerSecNode / base
		}
	}
	if o.JSON {
		json.NewEncoder(stdout).Encode(res)
		return 0
	}
	res.Print(stdout)
	return 0
}

// Print writes r as a table.
func (r *Result) Print(w io.Writer) {
	fmt.Fprintf(w, "fleet scaling: %d hosts (%s latency, no gap), %d workers per node, each node limited to %.2f CPU (%s); warm-up %s, window %s; %d CPUs; NATS: %s\n",
		r.Hosts, r.Latency, r.Concurrency, r.CPUPerNode, r.Cgroup, r.Warmup, r.Window, r.MachineCPUs, r.NATS)
	fmt.Fprintf(w, "%5s %9s %10s %10s %11s %8s %8s  %s\n", "nodes", "pages/s", "per node", "efficiency", "CPU-ms/page", "web CPU", "NATS CPU", "each node's CPU of its quota (throttled periods)")
	for _, s := range r.Sizes {
		var per []string
		for _, n := range s.PerNode {
			per = append(per, fmt.Sprintf("%s %.2f (%.0f%%)", n.Name, n.CPUOfQuota, 100*n.ThrottledFrac))
		}
		fmt.Fprintf(w, "%5d %9.0f %10.0f %10.2f %11.3f %8.2f %8.2f  %s\n", s.Nodes, s.PagesPerSec, s.PagesPerSecNode, s.Efficiency,
			s.CPUMsPerPage, s.WebCPUs, s.NATSCPUs, strings.Join(per, ", "))
	}
	fmt.Fprintf(w, "efficiency: pages/s / (N x %s); target >= 0.80\n", r.Baseline)
	for _, s := range r.Sizes {
		if s.Limit != "" {
			fmt.Fprintf(w, "%d node(s): %s\n", s.Nodes, s.Limit)
		}
	}
}

// member is one `trawl serve` child of a fleet size's run.
type member struct {
	name, addr, api string
	cmd             *exec.Cmd
	group           *cpulimit.Group
	out             childout.Buffer
	done            chan struct{}
	client          *apiclient.Client
}

const token = "bench-fleet-token"

// runSize runs one fleet size: a fresh NATS server, n nodes in their
// cgroups, one crawl; it measures the window and stops everything.
func runSize(exe, dir string, web *benchweb.Web, o *Options, n int, stderr io.Writer) (r SizeResult, err error) {
	r.Nodes = n
	sizeDir := filepath.Join(dir, fmt.Sprintf("size%d", n))
	js, err := jsserver.Start(jsserver.Options{Name: "bench-nats", Dir: filepath.Join(sizeDir, "nats"), ClientAddr: "127.0.0.1:0"})
	if err != nil {
		return r, fmt.Errorf("NATS server: %w", err)
	}
	defer js.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	err = js.WaitJetStream(ctx)
	cancel()
	if err != nil {
		return r, fmt.Errorf("NATS server: %w", err)
	}
	var members []*member
	defer func() {
		// Stop every node, then remove its cgroup (a group with a process
		// in it cannot be removed).
		for _, m := range members {
			m.cmd.Process.Signal(syscall.SIGTERM)
		}
		for _, m := range members {
			select {
			case <-m.done:
			case <-time.After(20 * time.Second):
				m.cmd.Process.Kill()
				<-m.done
			}
			if m.group != nil {
				if cerr := m.group.Close(); cerr != nil {
					err = errors.Join(err, cerr)
				}
			}
			if o.Logs != "" {
				os.MkdirAll(o.Logs, 0o755)
				os.WriteFile(filepath.Join(o.Logs, fmt.Sprintf("N%d-%s.log", n, m.name)), []byte(m.out.String()), 0o644)
			} else if err != nil {
				fmt.Fprintf(stderr, "%s's output, the end:\n%s\n", m.name, childout.LastLines(m.out.String(), 20))
			}
		}
	}()
	for k := range n {
		m := &member{name: fmt.Sprintf("n%d", k+1), addr: fmt.Sprintf("127.0.0.%d", 11+k), done: make(chan struct{})}
		port, err := freePort(m.addr)
		if err != nil {
			return r, err
		}
		m.api = "http://" + net.JoinHostPort(m.addr, strconv.Itoa(port))
		m.cmd = exec.Command(exe, "serve", "--data", filepath.Join(sizeDir, m.name), "--listen", net.JoinHostPort(m.addr, strconv.Itoa(port)),
			"--node-name", m.name, "--nats", js.ClientURL(), "--source-addr", m.addr,
			"--hosts", web.HostsFile, "--allow-net", "127.0.0.0/8", "--min-delay", "0",
			"--max-adaptive-delay", o.MaxAdaptiveDelay.String(), "--concurrency", strconv.Itoa(o.Concurrency),
			"--user-agent", "trawl/0.1 (bench fleet "+m.name+"; +https://github.com/trawl-crawler/trawl)")
		m.cmd.Env = append(os.Environ(), "TRAWL_TOKEN="+token, "TRAWL_CONFIG=")
		m.cmd.Stdout, m.cmd.Stderr = &m.out, &m.out
		if err := m.cmd.Start(); err != nil {
			return r, err
		}
		go func() { defer close(m.done); m.cmd.Wait() }()
		members = append(members, m)
		if m.group, err = cpulimit.New(fmt.Sprintf("trawl-bench-fleet-%d-%s", os.Getpid(), m.name), o.CPU); err != nil {
			return r, err
		}
		if err := m.group.Add(m.cmd.Process.Pid); err != nil {
			return r, err
		}
		if m.client, err = apiclient.New(apiclient.Options{Server: m.api, Token: token}); err != nil {
			return r, err
		}
	}
	t0 := time.Now()
	for _, m := range members {
		if err := waitMember(m, 90*time.Second); err != nil {
			return r, err
		}
	}
	fmt.Fprintf(stderr, "bench fleet: %d node(s) ready after %v\n", n, time.Since(t0).Round(time.Millisecond))
	// The partitions are balanced before the crawl starts (a fleet that
	// starts at once takes a while to settle its owner table), so that
	// the crawl does not run through the web meanwhile.
	owns, err := waitFleetServing(members, 0, 3*time.Minute)
	if err != nil {
		return r, err
	}
	fmt.Fprintf(stderr, "bench fleet: every node owns its share of the partitions (%v) after %v\n", owns, time.Since(t0).Round(time.Millisecond))
	var req apiclient.CrawlRequest
	req.Name, req.Seeds = "bench-fleet", web.Seeds
	depth, giveUp := 20, 4.0
	req.Scope.Domains, req.Scope.MaxDepth = []string{"trawl.test"}, &depth
	req.Limits.RobotsGiveUpS = &giveUp
	ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
	created, err := members[0].client.CreateCrawl(ctx, req)
	cancel()
	if err != nil {
		return r, fmt.Errorf("POST /v1/crawls to %s: %w", members[0].name, err)
	}
	if owns, err = waitFleetServing(members, created.CrawlID, 90*time.Second); err != nil {
		return r, err
	}
	fmt.Fprintf(stderr, "bench fleet: crawl %d running on every node after %v; warm-up %v, window %v\n",
		created.CrawlID, time.Since(t0).Round(time.Millisecond), o.Warmup, o.Window)
	time.Sleep(o.Warmup)

	type snap struct {
		pages []int64
		cpu   []time.Duration
		thr   []cpulimit.Throttling
		web   time.Duration
		self  time.Duration
		at    time.Time
	}
	take := func() (s snap, err error) {
		s.at = time.Now()
		s.self = procstat.SelfCPU()
		s.web, _ = procstat.ProcessCPU(web.Cmd.Process.Pid)
		for _, m := range members {
			c, err := procstat.ProcessCPU(m.cmd.Process.Pid)
			if err != nil {
				return s, fmt.Errorf("%s's CPU: %w", m.name, err)
			}
			th, _ := m.group.Throttling()
			s.cpu, s.thr = append(s.cpu, c), append(s.thr, th)
		}
		for _, m := range members {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			st, err := m.client.Stats(ctx, created.CrawlID)
			cancel()
			if err != nil {
				return s, fmt.Errorf("%s's stats: %w", m.name, err)
			}
			s.pages = append(s.pages, st.Fetched)
		}
		return s, nil
	}
	s0, err := take()
	if err != nil {
		return r, err
	}
	time.Sleep(o.Window)
	s1, err := take()
	if err != nil {
		return r, err
	}
	secs := s1.at.Sub(s0.at).Seconds()
	r.Seconds = secs
	var nodeCPU float64
	var under []string
	var queuedOut bool
	for k, m := range members {
		nr := NodeResult{Name: m.name, Addr: m.addr, Partitions: owns[m.name], Pages: s1.pages[k] - s0.pages[k],
			CPUSeconds: (s1.cpu[k] - s0.cpu[k]).Seconds()}
		nr.CPUOfQuota = nr.CPUSeconds / secs / o.CPU
		if p := s1.thr[k].Periods - s0.thr[k].Periods; p > 0 {
			nr.ThrottledFrac = float64(s1.thr[k].Throttled-s0.thr[k].Throttled) / float64(p)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		st, err := m.client.Stats(ctx, created.CrawlID)
		cancel()
		if err == nil {
			nr.Queued, nr.HostsActive, nr.HostsWaiting = st.Queued, st.HostsActive, st.HostsWaiting
			if st.Queued == 0 || st.State != "running" {
				queuedOut = true
			}
		}
		r.Pages += nr.Pages
		nodeCPU += nr.CPUSeconds
		if nr.CPUOfQuota < 0.8 {
			under = append(under, fmt.Sprintf("%s at %.2f", m.name, nr.CPUOfQuota))
		}
		r.PerNode = append(r.PerNode, nr)
	}
	r.PagesPerSec = float64(r.Pages) / secs
	r.PagesPerSecNode = r.PagesPerSec / float64(n)
	if r.Pages > 0 {
		r.CPUMsPerPage = nodeCPU * 1000 / float64(r.Pages)
	}
	r.WebCPUs = (s1.web - s0.web).Seconds() / secs
	r.NATSCPUs = (s1.self - s0.self).Seconds() / secs
	if len(under) > 0 {
		busy := nodeCPU/secs + r.WebCPUs + r.NATSCPUs
		var why []string
		if queuedOut {
			why = append(why, "a node's queue ran dry (the web too small for the window, or politeness: hosts waiting for their gap)")
		}
		if busy > 0.9*float64(runtime.NumCPU()) {
			why = append(why, fmt.Sprintf("the machine was saturated (%.2f of %d CPUs busy: nodes, the web at %.2f, NATS at %.2f)", busy, runtime.NumCPU(), r.WebCPUs, r.NATSCPUs))
		}
		if r.WebCPUs > 0.9 {
			why = append(why, fmt.Sprintf("the web (%.2f CPUs)", r.WebCPUs))
		}
		if len(why) == 0 {
			why = append(why, fmt.Sprintf("neither the machine (%.2f of %d CPUs busy), the web (%.2f CPUs) nor NATS (%.2f CPUs) was saturated and queues were not empty: the nodes waited on something else (NATS round trips, fetch latency with too few workers, politeness)",
				busy, runtime.NumCPU(), r.WebCPUs, r.NATSCPUs))
		}
		r.Limit = fmt.Sprintf("%s under 0.8 of the CPU quota: limited by %s", strings.Join(under, ", "), strings.Join(why, "; "))
	}
	return r, nil
}

// waitMember waits until m's API says ready.
func waitMember(m *member, within time.Duration) error {
	for deadline := time.Now().Add(within); ; {
		resp, err := http.Get(m.api + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
		}
		select {
		case <-m.done:
			return fmt.Errorf("%s exited before it was ready:\n%s", m.name, childout.LastLines(m.out.String(), 20))
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready after %v:\n%s", m.name, within, childout.LastLines(m.out.String(), 20))
		}
	}
}

// waitFleetServing waits until the first member's GET /v1/nodes lists
// every member owning its share of the partitions and every member has
// crawl id (if not 0), and
// returns how many partitions each owns.
func waitFleetServing(members []*member, id uint32, within time.Duration) (map[string]int, error) {
	deadline := time.Now().Add(within)
	var last string
	for ; ; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the fleet was not serving after %v: %s", within, last)
		}
		owns, err := fleetOwners(members[0].api)
		if err != nil {
			last = err.Error()
			continue
		}
		// Balanced: each member owns its share (give or take one), so
		// that the window does not see partitions still moving.
		missing, total := "", 0
		for _, c := range owns {
			total += c
		}
		for _, m := range members {
			if owns[m.name] < partition.Count/len(members)-1 {
				missing = m.name
				break
			}
		}
		if missing != "" || total != partition.Count {
			last = fmt.Sprintf("%s owns less than its share, or not every partition is owned (owners %v)", missing, owns)
			continue
		}
		ok := true
		for _, m := range members {
			if id == 0 {
				break
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_, err := m.client.Stats(ctx, id)
			cancel()
			if err != nil {
				last, ok = fmt.Sprintf("%s has no crawl %d yet: %v", m.name, id, err), false
				break
			}
		}
		if ok {
			return owns, nil
		}
	}
}

// fleetOwners reads GET /v1/nodes: the partitions each member owns.
func fleetOwners(api string) (map[string]int, error) {
	c, err := apiclient.New(apiclient.Options{Server: api})
	if err != nil {
		return nil, err
	}
	v, err := c.Nodes(context.Background())
	if err != nil {
		return nil, err
	}
	if !v.Fleet {
		return nil, fmt.Errorf("GET /v1/nodes: %s is not a member of a fleet", api)
	}
	owns := map[string]int{}
	for _, n := range v.Nodes {
		owns[n.Name] = len(n.Owns)
	}
	return owns, nil
}

// freePort returns a TCP port free on addr at the moment.
func freePort(addr string) (int, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(addr, "0"))
	if err != nil {
		return 0, fmt.Errorf("listen on %s (each node has its own loopback address): %w", addr, err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
