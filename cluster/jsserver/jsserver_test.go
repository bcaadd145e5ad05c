package jsserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/internal/testkit/clustertest"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
		want []string // substrings of the error, one per bad field
	}{
		{"ok alone", Options{Name: "a", Dir: "/d"}, nil},
		{"ok three", Options{Name: "a", Dir: "/d", ClusterAddr: "127.0.0.1:1", Peers: []string{"127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"}}, nil},
		{"empty", Options{}, []string{"Name: empty", "Dir: empty"}},
		{"bad name", Options{Name: "a.b", Dir: "/d"}, []string{`Name "a.b"`}},
		{"bad cluster name", Options{Name: "a", Dir: "/d", ClusterName: "crawl prod"}, []string{`ClusterName "crawl prod"`}},
		{"bad addrs", Options{Name: "a", Dir: "/d", ClientAddr: "x", ClusterAddr: "y:z", Peers: []string{"q"}}, []string{"ClientAddr", "ClusterAddr", "Peers: \"q\""}},
		{"peers without cluster addr", Options{Name: "a", Dir: "/d", Peers: []string{"127.0.0.1:2", "127.0.0.1:3"}}, []string{"ClusterAddr: empty"}},
		{"two", Options{Name: "a", Dir: "/d", ClusterAddr: "127.0.0.1:1", Peers: []string{"127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:2"}}, []string{"a fleet of 2 servers"}},
	} {
		err := tc.opts.Validate()
		if len(tc.want) == 0 {
			if err != nil {
				t.Errorf("%s: Validate() = %v, want nil", tc.name, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: Validate() = nil, want errors naming %q", tc.name, tc.want)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: Validate() = %v, want it to say %q", tc.name, err, w)
			}
		}
	}
}

func TestStandalone(t *testing.T) {
	var logged bytes.Buffer
	lg := slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelWarn}))
	s, err := Start(Options{Name: "solo", Dir: t.TempDir(), Logger: lg})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	defer func() {
		// A start on its own is quiet: no warning (a plain password in
		// the server's users was one).
		if logged.Len() > 0 {
			t.Errorf("a standalone server's start logged warnings:\n%s", logged.String())
		}
	}()
	if s.Replicas() != 1 || s.Fleet() != 1 {
		t.Errorf("fleet of one: Replicas %d, Fleet %d", s.Replicas(), s.Fleet())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.WaitJetStream(ctx); err != nil {
		t.Fatal(err)
	}
	nc, err := s.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "t", Replicas: s.Replicas()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	if ps, err := s.Peers(ctx); ps != nil || err != nil {
		t.Errorf("Peers of a server on its own = %v, %v; want none", ps, err)
	}
	if err := s.RemovePeer(ctx, "n2"); !errors.Is(err, ErrNoCluster) {
		t.Errorf("RemovePeer on a server on its own = %v, want ErrNoCluster", err)
	}
}

// TestFleetOfThree forms a cluster of three embedded servers on loopback,
// writes a replicated KV entry through one, reads it through another, stops
// one server and writes again: a majority keeps JetStream serving.
func TestFleetOfThree(t *testing.T) {
	cluster := clustertest.FreeAddrs(t, 3)
	var servers []*Server
	defer func() {
		for _, s := range servers {
			if s != nil {
				s.Close()
			}
		}
	}()
	for i := range cluster {
		s, err := Start(Options{Name: fmt.Sprintf("n%d", i+1), Dir: t.TempDir(), ClusterAddr: cluster[i], Peers: cluster})
		if err != nil {
			t.Fatal(err)
		}
		servers = append(servers, s)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, s := range servers {
		if err := s.WaitJetStream(ctx); err != nil {
			t.Fatal(err)
		}
		if s.Replicas() != 3 || s.Fleet() != 3 {
			t.Fatalf("%s: Replicas %d, Fleet %d, want 3 and 3", s.Name(), s.Replicas(), s.Fleet())
		}
	}
	kvOn := func(s *Server) jetstream.KeyValue {
		nc, err := s.Connect()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		js, _ := jetstream.New(nc)
		var kv jetstream.KeyValue
		// The bucket's Raft group may take a moment to elect a leader.
		for {
			kv, err = js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "owners", Replicas: 3})
			if err == nil {
				return kv
			}
			if ctx.Err() != nil {
				t.Fatalf("%s: KV bucket: %v", s.Name(), err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	kv1 := kvOn(servers[0])
	if _, err := kv1.Put(ctx, "p.7", []byte("n1")); err != nil {
		t.Fatal(err)
	}
	kv3 := kvOn(servers[2])
	e, err := kv3.Get(ctx, "p.7")
	if err != nil || string(e.Value()) != "n1" {
		t.Fatalf("read through n3: %v %v, want n1", e, err)
	}
	info, err := kv3.Status(ctx)
	if err != nil || info.(*jetstream.KeyValueBucketStatus).StreamInfo().Config.Replicas != 3 {
		t.Fatalf("bucket status %v %v, want 3 replicas", info, err)
	}

	// n2 leads the meta group as it goes, so the peers are asked for
	// (below) just after the leadership moved: a request only the leader
	// answers is dropped while there is none (askLeader sends it again).
	leadMeta(ctx, t, servers[1])
	servers[1].Close()
	servers[1] = nil
	// With one of three gone, writes go on (after a new leader, if n2 led).
	for {
		_, err := kv3.Update(ctx, "p.7", []byte("n3"), e.Revision())
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("update with n2 stopped: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	e, err = kv1.Get(ctx, "p.7")
	if err != nil || string(e.Value()) != "n3" {
		t.Fatalf("read through n1 after n2 stopped: %v %v, want n3", e, err)
	}

	// n2 gone for good: JetStream still counts it until it is removed.
	names := func(s *Server) []string {
		ps, err := s.Peers(ctx)
		if err != nil {
			t.Fatalf("%s: Peers: %v", s.Name(), err)
		}
		var out []string
		for _, p := range ps {
			out = append(out, p.Name)
		}
		slices.Sort(out)
		return out
	}
	if got := names(servers[2]); !slices.Equal(got, []string{"n1", "n2", "n3"}) {
		t.Errorf("peers before the removal: %v, want n1 n2 n3", got)
	}
	if err := servers[2].RemovePeer(ctx, "n9"); !errors.Is(err, ErrNotPeer) {
		t.Errorf("RemovePeer(n9) = %v, want ErrNotPeer", err)
	}
	if err := servers[0].RemovePeer(ctx, "n2"); err != nil {
		t.Fatalf("RemovePeer(n2): %v", err)
	}
	for {
		got := names(servers[2])
		if slices.Equal(got, []string{"n1", "n3"}) {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("peers after removing n2: %v, want n1 n3", got)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The two left still write.
	if _, err := kv1.Put(ctx, "p.8", []byte("n1")); err != nil {
		t.Fatalf("write after n2's removal: %v", err)
	}
}

// TestClusterNamesKeepFleetsApart: a server whose peers include a server
// of another cluster name is not routed to it (two fleets whose addresses
// meet stay two), while one of the same name is.
func TestClusterNamesKeepFleetsApart(t *testing.T) {
	addrs := clustertest.FreeAddrs(t, 3)
	start := func(name, cluster, addr string) *Server {
		s, err := Start(Options{Name: name, Dir: t.TempDir(), ClusterName: cluster, ClusterAddr: addr, Peers: addrs})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		return s
	}
	a1 := start("a1", "fleet-a", addrs[0])
	b1 := start("b1", "fleet-b", addrs[1])
	a2 := start("a2", "fleet-a", addrs[2])
	deadline := time.Now().Add(20 * time.Second)
	for a1.s.NumRoutes() == 0 || a2.s.NumRoutes() == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("a1 and a2 (one cluster name) not routed in 20 s: %d and %d routes", a1.s.NumRoutes(), a2.s.NumRoutes())
		}
		time.Sleep(50 * time.Millisecond)
	}
	// b1 has tried a1 and a2 by now (routes are dialled at once, again
	// every second): had a name been ignored, b1 would hold a route.
	time.Sleep(2 * time.Second)
	if n := b1.s.NumRoutes(); n != 0 {
		t.Errorf("b1 (cluster fleet-b) holds %d routes to fleet-a's servers, want 0", n)
	}
	for _, s := range []*Server{a1, a2} {
		if rz, _ := s.s.Routez(&server.RoutezOptions{}); rz != nil {
			for _, r := range rz.Routes {
				if r.RemoteName == "b1" {
					t.Errorf("%s is routed to b1, a server of another cluster", s.Name())
				}
			}
		}
	}
}

// leadMeta makes s the meta group's leader, asking the leader to step
// down in its favour until it is.
func leadMeta(ctx context.Context, t *testing.T, s *Server) {
	t.Helper()
	nc, err := s.adminConn()
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	req, _ := json.Marshal(map[string]any{"placement": map[string]any{"preferred": s.s.Name()}})
	for !s.s.JetStreamIsLeader() {
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		nc.RequestWithContext(rctx, "$JS.API.META.LEADER.STEPDOWN", req)
		cancel()
		if ctx.Err() != nil {
			t.Fatalf("%s did not become the meta leader", s.s.Name())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// A request only a leader answers is dropped while there is none: askLeader
// sends it again until it is answered. Here the first two go unanswered.
func TestAskLeaderSendsAgain(t *testing.T) {
	s, err := Start(Options{Name: "solo", Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	nc, err := s.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	var asked atomic.Int32
	sub, err := nc.Subscribe("leader.only", func(m *nats.Msg) {
		if asked.Add(1) > 2 {
			m.Respond([]byte("answered"))
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	nc.Flush()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	msg, err := askLeader(ctx, nc, "leader.only", nil, 200*time.Millisecond)
	if err != nil || string(msg.Data) != "answered" || asked.Load() != 3 {
		t.Fatalf("askLeader = %v, %v after %d requests; want the third answered", msg, err, asked.Load())
	}
	short, cancel2 := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel2()
	if _, err := askLeader(short, nc, "nobody.answers", nil, askEvery); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("askLeader with none to answer = %v, want its context's deadline", err)
	}
}
