package node

import (
	"errors"
	"fmt"
	"runtime/pprof"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/frontier"
	"github.com/trawl-crawler/trawl/hostpolicy"
	"github.com/trawl-crawler/trawl/internal/testkit/testweb"
	"github.com/trawl-crawler/trawl/job"
)

// TestHostPolicyAcrossRestart: one host is given a longer gap and another
// is paused before a crawl starts. The web's log shows the gap held and
// the paused host untouched; the crawl waits for it (not exhausted); after
// a restart both policies are still in force, the paused host is listed
// as paused with its queued URLs counted for the job, and once resumed the
// crawl ends by itself.
func TestHostPolicyAcrossRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a crawl of a synthetic web; the full suite runs it")
	}
	t.Parallel()
	const gap, slow = 20 * time.Millisecond, 150 * time.Millisecond
	h := newHarness(t, testweb.Options{Seed: 5, Hosts: 8}, gap)
	// The two hosts with the most pages a crawl reaches.
	pages := map[string]int{}
	for u := range h.srv.Web().Reachable(h.spec.Seeds, "trawl", h.spec.MaxDepth) {
		pages[hostOf(t, u)]++
	}
	var hosts []string
	for name := range pages {
		hosts = append(hosts, name)
	}
	sort.Slice(hosts, func(a, b int) bool {
		if pages[hosts[a]] != pages[hosts[b]] {
			return pages[hosts[a]] > pages[hosts[b]]
		}
		return hosts[a] < hosts[b]
	})
	if len(hosts) < 2 || pages[hosts[1]] < 4 {
		t.Fatalf("the web has too few hosts with pages: %v", pages)
	}
	slowHost, pausedHost := hosts[0], hosts[1]
	t.Logf("slow host %s (%d pages), paused host %s (%d pages)", slowHost, pages[slowHost], pausedHost, pages[pausedHost])

	n, err := Open(h.opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.SetHostPolicy(slowHost, hostpolicy.Policy{MinDelay: slow, HasMinDelay: true}); err != nil {
		t.Fatal(err)
	}
	if got, err := n.SetHostPolicy(" "+pausedHost, hostpolicy.Policy{Paused: true}); err == nil || !errors.Is(err, ErrBadHost) {
		t.Fatalf("SetHostPolicy with a space: %q, %v; want ErrBadHost", got, err)
	}
	if _, err := n.SetHostPolicy(pausedHost, hostpolicy.Policy{Paused: true, MaxParallel: -1}); err == nil {
		t.Fatal("SetHostPolicy accepted MaxParallel -1")
	}
	if _, err := n.SetHostPolicy(pausedHost, hostpolicy.Policy{Paused: true}); err != nil {
		t.Fatal(err)
	}
	j, err := n.Submit(h.spec)
	if err != nil {
		t.Fatal(err)
	}
	n.Start()
	// Run until only the paused host has work left.
	waitFor(t, 20*time.Second, "every host but the paused one to be done", func() bool {
		st := n.FrontierStats()
		return st.Active == 1 && st.InFlight == 0 && st.Paused == 1
	})
	if st, _ := j.State(); st != job.Running {
		t.Fatalf("job %s while a paused host holds its URLs", st)
	}
	hs, known, err := n.HostStatus(pausedHost)
	if err != nil || !known {
		t.Fatalf("HostStatus(%s) = %v, %v", pausedHost, known, err)
	}
	if hs.State != frontier.HostPaused || !hs.Policy.Paused || hs.QueuedByJob[j.ID] == 0 || hs.Queued != hs.QueuedByJob[j.ID] {
		t.Errorf("paused host status: %+v", hs)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	before := len(h.srv.Log())

	// Restart: the policies are back.
	n, err = Open(h.opts)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	page, next, err := n.Hosts(HostFilter{State: frontier.HostPaused, Limit: 10})
	if err != nil || len(page) != 1 || page[0].Host != pausedHost || next != -1 {
		t.Fatalf("paused hosts after a restart: %+v, %d, %v", page, next, err)
	}
	// The frontier knows, after a restart, the hosts with work or a
	// stored clock: the paused one among them.
	if page, _, err := n.Hosts(HostFilter{Job: j.ID, Limit: MaxHostsPage}); err != nil || !slices.ContainsFunc(page, func(hi frontier.HostInfo) bool { return hi.Host == pausedHost }) {
		t.Errorf("hosts of job %d: %+v, %v; want %s among them", j.ID, page, err, pausedHost)
	}
	if page, _, err := n.Hosts(HostFilter{Job: j.ID + 1, Limit: 10}); err != nil || len(page) != 0 {
		t.Errorf("hosts of a job that does not exist: %+v, %v", page, err)
	}
	if hs, _, _ := n.HostStatus(slowHost); hs.Policy.MinDelay != slow {
		t.Errorf("slow host's policy after a restart: %+v", hs.Policy)
	}
	if _, err := n.SetHostPolicy(pausedHost, hostpolicy.Policy{}); err != nil {
		t.Fatal(err)
	}
	j = n.Job(j.ID)
	n.Start()
	select {
	case <-j.Ended():
	case <-time.After(90 * time.Second): // patience, not a timing check: a loaded machine stretches every gap
		t.Fatalf("job did not end once the paused host was resumed: %+v\n%s", n.FrontierStats(), stuckHosts(n))
	}

	log := h.srv.Log()
	var last time.Time
	slowN := 0
	for i, r := range log {
		switch r.Host {
		case pausedHost:
			if i < before {
				t.Errorf("paused host requested before its resumption: %s", r.Path)
			}
		case slowHost:
			if slowN > 0 && r.Start.Sub(last) < slow {
				t.Errorf("slow host: %v between requests, its policy says %v", r.Start.Sub(last), slow)
			}
			last = r.Start
			slowN++
		}
	}
	if slowN < 3 || len(log) == before {
		t.Fatalf("slow host got %d requests, the paused one %d after resuming: nothing judged", slowN, len(log)-before)
	}
}

// TestNodePauseAcrossRestart: a paused node leases nothing, and a restart
// stays paused until ResumeNode.
func TestNodePauseAcrossRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a crawl of a synthetic web; the full suite runs it")
	}
	t.Parallel()
	h := newHarness(t, testweb.Options{Seed: 2, Hosts: 4}, 10*time.Millisecond)
	n, err := Open(h.opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := n.PauseNode(); err != nil {
		t.Fatal(err)
	}
	j, err := n.Submit(h.spec)
	if err != nil {
		t.Fatal(err)
	}
	n.Start()
	time.Sleep(200 * time.Millisecond) // long enough for many leases, were any made
	if got := len(h.srv.Log()); got != 0 {
		t.Fatalf("%d requests while the node was paused", got)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	n, err = Open(h.opts)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if !n.NodePaused() {
		t.Fatal("a restart forgot the node was paused")
	}
	n.Start()
	time.Sleep(100 * time.Millisecond)
	if got := len(h.srv.Log()); got != 0 {
		t.Fatalf("%d requests after a restart of a paused node", got)
	}
	if err := n.ResumeNode(); err != nil {
		t.Fatal(err)
	}
	j = n.Job(j.ID)
	select {
	case <-j.Ended():
	case <-time.After(90 * time.Second): // patience, not a timing check: a loaded machine stretches every gap
		t.Fatalf("job did not end after the node was resumed: %+v\n%s", n.FrontierStats(), stuckHosts(n))
	}
	if len(h.srv.Log()) == 0 {
		t.Fatal("no request after resuming")
	}
}

func TestCanonicalHost(t *testing.T) {
	for in, want := range map[string]string{
		"Example.COM": "example.com",
		"a.test":      "a.test",
		"[::1]":       "[::1]",
		"bücher.de":   "xn--bcher-kva.de",
	} {
		if got, err := CanonicalHost(in); err != nil || got != want {
			t.Errorf("CanonicalHost(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "a.test:80", "a.test/x", "a b", "user@a.test", "a.test?q"} {
		if got, err := CanonicalHost(in); !errors.Is(err, ErrBadHost) {
			t.Errorf("CanonicalHost(%q) = %q, %v; want ErrBadHost", in, got, err)
		}
	}
}

// stuckHosts describes the hosts that still have work, for a test whose
// crawl did not end.
func stuckHosts(n *Node) string {
	page, _, err := n.Hosts(HostFilter{Limit: MaxHostsPage})
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, hi := range page {
		if hi.Queued > 0 || hi.InFlight > 0 {
			fmt.Fprintf(&b, "%+v\n", hi)
		}
	}
	fmt.Fprintf(&b, "node paused %v, now %v\n", n.NodePaused(), time.Now())
	// Where the dispatcher and the workers are.
	var stacks strings.Builder
	pprof.Lookup("goroutine").WriteTo(&stacks, 1)
	for _, g := range strings.Split(stacks.String(), "\n\n") {
		if strings.Contains(g, "node.(*Node)") {
			b.WriteString(g + "\n\n")
		}
	}
	return b.String()
}
