package route

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/trawl-crawler/trawl/cluster/jsserver"
	"github.com/trawl-crawler/trawl/frontier"
	"github.com/trawl-crawler/trawl/internal/store/partition"
	"github.com/trawl-crawler/trawl/internal/testkit/clustertest"
	"github.com/trawl-crawler/trawl/internal/testkit/jstest"
)

// TestFollowEndsDuringRecovery: a Follow whose consumer cannot be made
// again (its server came back without the stream, so nats.go's ordered
// consumer retries its recovery) still returns when its context ends. A
// fleet member once waited 5 minutes on such a Follow to release a
// partition, and no one took the partitions of a dead member meanwhile.
func TestFollowEndsDuringRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out a recovery: the full suite runs it")
	}
	addr := clustertest.FreeAddrs(t, 1)[0]
	srv := jstest.Start(t, func(o *jsserver.Options) { o.Name, o.ClientAddr = "r", addr })
	reconnected := make(chan struct{}, 1)
	nc, err := nats.Connect("nats://"+addr, nats.MaxReconnects(-1), nats.ReconnectWait(20*time.Millisecond),
		nats.ReconnectHandler(func(*nats.Conn) {
			select {
			case reconnected <- struct{}{}:
			default:
			}
		}))
	if err != nil {
		srv.Close()
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := EnsureStream(ctx, js, StreamOptions{}); err != nil {
		srv.Close()
		t.Fatal(err)
	}
	const p = partition.ID(9)
	if _, err := js.Publish(ctx, Subject(p), AppendMessage(nil, itemsFor(p, 2, "a"))); err != nil {
		srv.Close()
		t.Fatal(err)
	}

	fctx, fcancel := context.WithCancel(context.Background())
	defer fcancel()
	folded := make(chan uint64, 1)
	done := make(chan error, 1)
	go func() {
		done <- Follow(fctx, js, p, 0, FollowOptions{}, func(seq uint64, _ []frontier.Item) error {
			folded <- seq
			return nil
		})
	}()
	select {
	case <-folded:
	case err := <-done:
		srv.Close()
		t.Fatalf("Follow ended before folding: %v", err)
	case <-ctx.Done():
		srv.Close()
		t.Fatal("nothing folded in 10 s")
	}

	// The server goes, and one without the stream takes its address: the
	// client reconnects, and every recreation of the consumer fails.
	srv.Close()
	srv2 := jstest.Start(t, func(o *jsserver.Options) { o.Name, o.ClientAddr = "r", addr })
	defer srv2.Close()
	select {
	case <-reconnected:
	case <-ctx.Done():
		t.Fatal("the client did not reconnect in 10 s")
	}
	time.Sleep(500 * time.Millisecond) // the consumer is recovering now

	fcancel()
	select {
	case err := <-done:
		if err != context.Canceled {
			t.Errorf("Follow after its context ended: %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Follow still running 5 s after its context ended")
	}
	// The reader left behind ends by itself once nats.go's recovery has
	// given up (3 attempts, a few seconds here), and stops the iterator:
	// no pull subscription of it is left either.
	for end := time.Now().Add(40 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		buf := make([]byte, 1<<20)
		stacks := string(buf[:runtime.Stack(buf, true)])
		if !strings.Contains(stacks, "route.read.func") && !strings.Contains(stacks, "pullSubscription).pullMessages") {
			break
		}
		if time.Now().After(end) {
			t.Fatal("the consumer's reader or its subscription still running 40 s after Follow returned")
		}
	}
}
