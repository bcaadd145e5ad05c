package fleet

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/internal/store/partition"
	"github.com/trawl-crawler/trawl/job"
	"github.com/trawl-crawler/trawl/node"
)

// TestJoinOptionsValidate: every bad field is named, all at once; the
// zero timings are the defaults and valid.
func TestJoinOptionsValidate(t *testing.T) {
	ok := JoinOptions{Name: "n1", Embedded: true}
	if err := ok.Validate(); err != nil {
		t.Errorf("Validate(%+v) = %v, want nil", ok, err)
	}
	for _, c := range []struct {
		o    JoinOptions
		want []string
	}{
		{JoinOptions{}, []string{"Name: empty", "no NATS to join through"}},
		{JoinOptions{Name: "n", NATSURL: "nats://x:4222", Embedded: true}, []string{"NATSURL and Embedded"}},
		{JoinOptions{Name: "n", NATSURL: "nats://x:4222", Peers: []string{"a:1"}}, []string{"with Embedded only", "Peers without ClusterAddr"}},
		{JoinOptions{Name: "n", Embedded: true, Heartbeat: time.Second, MemberTTL: 3 * time.Second}, []string{"at least 4 x Heartbeat"}},
		{JoinOptions{Name: "n", Embedded: true, Heartbeat: 5 * time.Second}, []string{"at least 4 x Heartbeat"}}, // the 15 s default TTL
		{JoinOptions{Name: "n", Embedded: true, CheckpointEvery: -1, TakeoverHold: -1}, []string{"CheckpointEvery", "TakeoverHold"}},
	} {
		err := c.o.Validate()
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("Validate(%+v) = %v, want it to say %q", c.o, err, w)
			}
		}
	}
}

// openPartitioned opens a partitioned node in a new directory.
func openPartitioned(t *testing.T) (*node.Node, string) {
	t.Helper()
	dir := t.TempDir()
	n, err := node.Open(node.Options{DataDir: dir, Partitioned: true, AllowNets: loopback, Logger: logger(t, "n1")})
	if err != nil {
		t.Fatal(err)
	}
	return n, dir
}

// TestJoinFleetOfOne: Join with an embedded server and no peers makes a
// fleet of one, which comes to own every partition; the member's parts
// are all there, a crawl submitted to the catalog's view runs on the
// node, and Close leaves the fleet and stops everything Join started
// (TestMain checks no goroutine is left).
func TestJoinFleetOfOne(t *testing.T) {
	if testing.Short() {
		t.Skip("a JetStream server and a fleet's start-up")
	}
	n, dir := openPartitioned(t)
	defer n.Close()
	n.Start()
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	m, err := Join(ctx, JoinOptions{Name: "n1", Embedded: true, Heartbeat: 250 * time.Millisecond, MemberTTL: time.Second,
		DataDir: dir, APIURL: "http://127.0.0.1:1", Stdout: &out, Logger: logger(t, "n1")}, n)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "nats: server n1, clients at nats://") {
		t.Errorf("Join's output %q, want the embedded server's line", out.String())
	}
	if m.Fleet() == nil || m.Catalog() == nil || m.IPCap() == nil || m.Fingerprints() == nil {
		t.Fatalf("member %+v lacks a part", m)
	}
	owned := func() (string, int) {
		for _, mi := range m.Fleet().Members() {
			return mi.Name + " " + string(mi.Info), len(mi.Owns)
		}
		return "", 0
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		who, k := owned()
		if k == partition.Count {
			if who != `n1 {"api":"http://127.0.0.1:1"}` {
				t.Errorf("member %s, want n1 with its API address", who)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s the fleet of one owns %d partitions, want %d", k, partition.Count)
		}
	}
	spec := job.Defaults()
	spec.Name, spec.Seeds = "fleet", []string{"http://127.0.0.1:9/"}
	j, err := m.Catalog().Node().Submit(spec)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); len(n.Jobs()) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("crawl %d submitted to the fleet is not on the node", j.ID)
		}
	}
	if err := m.Close(ctx); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// TestJoinRefusesForeignCrawls: a node holding a crawl of its own from
// before is refused at the catalog, the first step after NATS, before it
// serves any partition; what Join started is stopped again.
func TestJoinRefusesForeignCrawls(t *testing.T) {
	if testing.Short() {
		t.Skip("a JetStream server")
	}
	n, dir := openPartitioned(t)
	defer n.Close()
	spec := job.Defaults()
	spec.Name, spec.Seeds = "local", []string{"http://127.0.0.1:9/"}
	if _, err := n.Submit(spec); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	m, err := Join(ctx, JoinOptions{Name: "n1", Embedded: true, DataDir: dir, Logger: logger(t, "n1")}, n)
	if err == nil {
		m.Close(ctx)
		t.Fatal("Join with a crawl of the node's own: no error")
	}
	if !strings.Contains(err.Error(), "holds crawls the fleet does not know") || !strings.Contains(err.Error(), dir) {
		t.Errorf("Join = %v, want it to name the foreign crawl's data directory", err)
	}
}
