// Package jstest starts embedded JetStream servers (cluster/jsserver) for
// tests: a standalone server, or a cluster of several routed on loopback,
// each in its own temporary directory. Every server is ready to serve
// JetStream when a function returns it, and is closed when the test ends
// (a test may close one earlier: closing twice is harmless). Clients
// connect in-process. For tests only; safe for concurrent use.
package jstest

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/trawl-crawler/trawl/cluster/jsserver"
	"github.com/trawl-crawler/trawl/internal/testkit/clustertest"
)

// ReadyTimeout bounds the wait for a server's JetStream to serve: long,
// since a loaded machine running the race detector elects a cluster's meta
// leader slowly.
const ReadyTimeout = 60 * time.Second

// Start starts a standalone server (a fleet of one) named "s1", with its
// files in a temporary directory, and waits until its JetStream serves.
// tune, if given, changes the options before the start (a fixed
// ClientAddr, another Name).
func Start(t testing.TB, tune ...func(*jsserver.Options)) *jsserver.Server {
	t.Helper()
	o := jsserver.Options{Name: "s1", Dir: t.TempDir()}
	for _, f := range tune {
		f(&o)
	}
	s := start(t, o)
	wait(t, s)
	return s
}

// Cluster starts n servers named s1…sn. One is standalone; more are routed
// into one cluster on loopback addresses. It waits until the first ready
// of them serve JetStream (a cluster's meta group needs a majority, so a
// test keeping a server for later passes fewer than n).
func Cluster(t testing.TB, n, ready int) []*jsserver.Server {
	t.Helper()
	if n < 1 || ready < 0 || ready > n {
		t.Fatalf("jstest.Cluster(%d, %d): want 0 ≤ ready ≤ n, n ≥ 1", n, ready)
	}
	var addrs []string
	if n > 1 {
		addrs = clustertest.FreeAddrs(t, n)
	}
	servers := make([]*jsserver.Server, 0, n)
	// A cluster name of its own: a killed server's port, taken by a
	// server of another test (another package's, run beside), would
	// otherwise route the survivors into that test's cluster.
	name := fmt.Sprintf("test-%d-%d", os.Getpid(), clusters.Add(1))
	for i := range n {
		o := jsserver.Options{Name: fmt.Sprintf("s%d", i+1), Dir: t.TempDir()}
		if n > 1 {
			o.ClusterAddr, o.Peers, o.ClusterName = addrs[i], addrs, name
		}
		servers = append(servers, start(t, o))
	}
	for _, s := range servers[:ready] {
		wait(t, s)
	}
	return servers
}

// clusters numbers the clusters Cluster starts in this process.
var clusters atomic.Int64

// JetStream connects to s in-process and returns a JetStream client on
// that connection, which is closed when the test ends.
func JetStream(t testing.TB, s *jsserver.Server) jetstream.JetStream {
	t.Helper()
	nc, err := s.Connect()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

func start(t testing.TB, o jsserver.Options) *jsserver.Server {
	t.Helper()
	s, err := jsserver.Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func wait(t testing.TB, s *jsserver.Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), ReadyTimeout)
	defer cancel()
	if err := s.WaitJetStream(ctx); err != nil {
		t.Fatal(err)
	}
}
