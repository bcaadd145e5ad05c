package frontierdb

import (
	"strconv"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/frontier"
	"github.com/trawl-crawler/trawl/internal/store"
	"github.com/trawl-crawler/trawl/internal/store/urlseen"
	"github.com/trawl-crawler/trawl/internal/testkit/storetest"
)

// benchInflight is how many changes a benchmark leaves uncommitted before
// it waits for the oldest: the committer then groups them.
const benchInflight = 64

// benchHosts spreads the benchmarks' URLs over this many hosts.
const benchHosts = 1000

// benchSetup opens a store on the real file system with the seen gate and
// a frontier without politeness gaps on it, as `trawl bench frontier` does.
func benchSetup(b *testing.B) (*store.DB, *Store, *urlseen.Durable, *frontier.Frontier) {
	db := storetest.OpenDir(b, b.TempDir(), store.Options{})
	seen, err := urlseen.NewDurable(db, urlseen.DurableOptions{ExpectedURLs: 1 << 20})
	if err != nil {
		b.Fatal(err)
	}
	s := New(db, Options{})
	f, err := frontier.New(frontier.Options{Store: s, MinDelay: -1, MaxParallel: 1 << 30})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := s.Close(); err != nil {
			b.Error(err)
		}
		db.Close()
	})
	return db, s, seen, f
}

// enqueue seen-checks URLs [lo, hi) and queues them in batches of 1000, the
// seen keys committed with the queue items, and waits until all are durable.
func enqueue(b *testing.B, db *store.DB, seen *urlseen.Durable, f *frontier.Frontier, lo, hi int) {
	const batch = 1000
	var pending []<-chan error
	wait := func(ch <-chan error) {
		if err := <-ch; err != nil {
			b.Fatal(err)
		}
	}
	urls := make([]string, 0, batch)
	for i := lo; i < hi; i += batch {
		urls = urls[:0]
		for j := i; j < min(hi, i+batch); j++ {
			urls = append(urls, "http://h"+strconv.Itoa(j%benchHosts)+".bench.test/p/"+strconv.Itoa(j))
		}
		bt := db.NewBatch()
		isNew, err := seen.AddBatch(bt, 0, urls)
		if err != nil {
			b.Fatal(err)
		}
		items := make([]frontier.Item, 0, len(urls))
		for k, n := range isNew {
			if !n {
				b.Fatalf("new URL %q reported known", urls[k])
			}
			items = append(items, frontier.Item{URL: urls[k], Host: urls[k][len("http://") : len(urls[k])-len("/p/")-len(strconv.Itoa(i+k))]})
		}
		pending = append(pending, f.Add(bt, items...))
		if len(pending) >= benchInflight {
			wait(pending[0])
			pending = pending[1:]
		}
	}
	for _, ch := range pending {
		wait(ch)
	}
}

// BenchmarkEnqueue: new URLs over 1000 hosts through the seen gate into the
// frontier, 1000 to a batch, each batch's seen keys, queue items and host
// states committed together (group commit, synced); timed until durable.
func BenchmarkEnqueue(b *testing.B) {
	db, _, seen, f := benchSetup(b)
	b.ReportAllocs()
	b.ResetTimer()
	enqueue(b, db, seen, f, 0, b.N)
	b.StopTimer()
	if q := f.Stats().Queued; q != b.N {
		b.Fatalf("frontier holds %d URLs, want %d", q, b.N)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "urls/s")
}

// BenchmarkLeaseComplete: lease and complete (status 200, nothing
// discovered) URLs queued beforehand, completions pipelined; timed until
// the last completion is durable.
func BenchmarkLeaseComplete(b *testing.B) {
	db, _, seen, f := benchSetup(b)
	enqueue(b, db, seen, f, 0, b.N)
	var pending []<-chan error
	wait := func(ch <-chan error) {
		if err := <-ch; err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; {
		l, _ := f.Lease()
		if l == nil {
			// Windows are read off the frontier's lock: wait for one.
			select {
			case <-f.Changed():
			case <-time.After(10 * time.Second):
				b.Fatalf("no lease with %+v", f.Stats())
			}
			continue
		}
		n++
		ch, err := f.Complete(l, frontier.Outcome{Status: 200}, nil)
		if err != nil {
			b.Fatal(err)
		}
		pending = append(pending, ch)
		if len(pending) >= benchInflight {
			wait(pending[0])
			pending = pending[1:]
		}
	}
	for _, ch := range pending {
		wait(ch)
	}
	b.StopTimer()
	if !f.Done() {
		b.Fatalf("frontier not done after %d completions: %+v", b.N, f.Stats())
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "leases/s")
}
