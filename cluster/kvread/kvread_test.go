package kvread_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/trawl-crawler/trawl/cluster/jsserver"
	"github.com/trawl-crawler/trawl/cluster/kvread"
	"github.com/trawl-crawler/trawl/internal/testkit/clustertest"
	"github.com/trawl-crawler/trawl/internal/testkit/jstest"
)

// childEnv names the environment variable that makes this test binary a
// JetStream server of a cluster (name, dir, cluster address, the three
// peers, cluster name: comma-separated) that runs until it is killed.
const childEnv = "KVREAD_TEST_SERVER"

func TestMain(m *testing.M) {
	if spec := os.Getenv(childEnv); spec != "" {
		f := strings.Split(spec, ",")
		if _, err := jsserver.Start(jsserver.Options{Name: f[0], Dir: f[1], ClusterAddr: f[2], Peers: f[3:6], ClusterName: f[6]}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		select {}
	}
	os.Exit(m.Run())
}

// standalone starts a server of its own and makes bucket "b" on it; the
// context ends with the test.
func standalone(t *testing.T) (context.Context, jetstream.JetStream, jetstream.KeyValue) {
	t.Helper()
	js := jstest.JetStream(t, jstest.Start(t))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "b"})
	if err != nil {
		t.Fatal(err)
	}
	return ctx, js, kv
}

// Keys lists what the bucket holds, a deleted key's marker too, and
// nothing for an empty bucket.
func TestKeys(t *testing.T) {
	ctx, js, kv := standalone(t)
	if keys, err := kvread.Keys(ctx, js, kv); err != nil || len(keys) != 0 {
		t.Fatalf("Keys of an empty bucket = %q, %v; want none", keys, err)
	}
	for _, k := range []string{"n3", "n1", "p.7", "n2"} {
		if _, err := kv.Put(ctx, k, []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	kv.Put(ctx, "n1", []byte("again"))
	if err := kv.Delete(ctx, "n2"); err != nil {
		t.Fatal(err)
	}
	keys, err := kvread.Keys(ctx, js, kv)
	if want := []string{"n1", "n2", "n3", "p.7"}; err != nil || !slices.Equal(keys, want) {
		t.Fatalf("Keys = %q, %v; want %q", keys, err, want)
	}
	if _, err := kv.Get(ctx, "n2"); !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Fatalf("Get of the deleted key = %v, want ErrKeyNotFound", err)
	}
}

// A watch asked for while the bucket's stream is gone fails with the
// server's error, or ctx's, and leaves nothing running.
func TestWatchFails(t *testing.T) {
	ctx, js, kv := standalone(t)
	if err := js.DeleteKeyValue(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if w, err := kvread.Watch(ctx, kv, 50*time.Millisecond); err == nil {
		w.Stop()
		t.Fatal("Watch of a deleted bucket made a watch")
	}
	short, cancel2 := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel2()
	<-short.Done()
	if _, err := kvread.Watch(short, kv, 0); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Watch with an ended context = %v, want its deadline", err)
	}
}

// A cluster of three, one server a child process killed with SIGKILL (no
// shutdown notice reaches the others). In the seconds after, the meta
// leader may place a watch's consumer on the dead server, whose request
// is never answered: Watch must make every watch anyway, and Keys list.
func TestAfterAServerIsKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a cluster of three with a child process")
	}
	addrs := clustertest.FreeAddrs(t, 3)
	name := fmt.Sprintf("kvread-%d", os.Getpid())
	var srv []*jsserver.Server
	for i := range 2 {
		s, err := jsserver.Start(jsserver.Options{Name: fmt.Sprintf("s%d", i+1), Dir: t.TempDir(), ClusterAddr: addrs[i], Peers: addrs, ClusterName: name})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		srv = append(srv, s)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// The meta leader is elected by s1 and s2 before the child starts:
	// this test is about a lost stream peer, not a lost meta leader.
	for _, s := range srv {
		if err := s.WaitJetStream(ctx); err != nil {
			t.Fatal(err)
		}
	}
	child := exec.Command(os.Args[0], "-test.run", "^$")
	child.Env = append(os.Environ(), childEnv+"="+strings.Join(append([]string{"s3", t.TempDir(), addrs[2]}, append(addrs, name)...), ","))
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { child.Process.Kill(); child.Wait() })
	nc, err := srv[0].Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	var kv jetstream.KeyValue
	for {
		// R3 needs the child routed and known to the meta group.
		kv, err = js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "b", Replicas: 3})
		if err == nil || ctx.Err() != nil {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, "a", []byte("1")); err != nil {
		t.Fatal(err)
	}
	keepLeader(ctx, t, js, nc, "KV_b", "s3")
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	child.Wait()
	killed := time.Now()
	plainFailed, tries := 0, 0
	for time.Since(killed) < 5*time.Second {
		tries++
		// What nats.go alone does, for the record: some of these wait out
		// their whole context on the dead server.
		pctx, pcancel := context.WithTimeout(ctx, time.Second)
		if w, err := kv.WatchAll(pctx); err == nil {
			w.Stop()
		} else {
			plainFailed++
		}
		pcancel()
		wctx, wcancel := context.WithTimeout(ctx, 4*time.Second)
		w, err := kvread.Watch(wctx, kv, 100*time.Millisecond)
		if err != nil {
			wcancel()
			t.Fatalf("Watch %.1f s after the kill: %v", time.Since(killed).Seconds(), err)
		}
		select {
		case e := <-w.Updates():
			if e == nil || e.Key() != "a" || string(e.Value()) != "1" {
				t.Errorf("the watch's first entry = %v, want a=1", e)
			}
		case <-wctx.Done():
			t.Errorf("the watch made %.1f s after the kill delivered nothing", time.Since(killed).Seconds())
		}
		w.Stop()
		wcancel()
		kctx, kcancel := context.WithTimeout(ctx, 4*time.Second)
		if keys, err := kvread.Keys(kctx, js, kv); err != nil || !slices.Equal(keys, []string{"a"}) {
			t.Errorf("Keys %.1f s after the kill = %q, %v; want [a]", time.Since(killed).Seconds(), keys, err)
		}
		kcancel()
	}
	t.Logf("after the kill: %d of %d plain watches (1 s each) went unanswered; every hedged one was made", plainFailed, tries)
}

// keepLeader asks the stream's leader to step down until it is not the
// server named not.
func keepLeader(ctx context.Context, t *testing.T, js jetstream.JetStream, nc *nats.Conn, stream, not string) {
	t.Helper()
	for {
		s, err := js.Stream(ctx, stream)
		if err != nil {
			t.Fatal(err)
		}
		info := s.CachedInfo()
		if info.Cluster != nil && info.Cluster.Leader != "" && info.Cluster.Leader != not {
			return
		}
		nc.RequestWithContext(ctx, "$JS.API.STREAM.LEADER.STEPDOWN."+stream, nil)
		select {
		case <-ctx.Done():
			t.Fatalf("stream %s's leader stays %s", stream, not)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// A watch stopped while its updates channel is full (the reader left
// without reading: a resync, a shutdown) leaves nothing running. nats.go's
// delivery goroutine blocks sending to that channel, holding the lock its
// close needs, so Stop must let it finish.
func TestStopUnread(t *testing.T) {
	ctx, _, kv := standalone(t)
	const keys = 600 // well over nats.go's 256-entry channel
	for i := range keys {
		if _, err := kv.Put(ctx, fmt.Sprintf("k%d", i), []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	w, err := kvread.Watch(ctx, kv, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Wait until delivery is blocked on the full channel.
	deadline := time.Now().Add(10 * time.Second)
	for len(w.Updates()) < cap(w.Updates()) {
		if time.Now().After(deadline) {
			t.Fatalf("the channel holds %d of %d after 10 s", len(w.Updates()), cap(w.Updates()))
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := w.Stop(); err != nil {
		t.Fatal(err)
	}
	// Nobody reads the channel now; nats.go's delivery must end anyway.
	deadline = time.Now().Add(10 * time.Second)
	for stuck := ""; ; {
		buf := make([]byte, 1<<20)
		all := string(buf[:runtime.Stack(buf, true)])
		if stuck = delivering(all); stuck == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("10 s after Stop, the watch's delivery goroutine is still running:\n%s", stuck)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// delivering returns the stack, among all of them, of a goroutine inside
// nats.go's KV watch callback, or "".
func delivering(all string) string {
	for g := range strings.SplitSeq(all, "\n\n") {
		if strings.Contains(g, "jetstream.(*kvs).WatchFiltered") {
			return g
		}
	}
	return ""
}
