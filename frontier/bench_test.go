package frontier

import (
	"strconv"
	"testing"
	"time"
)

// BenchmarkLeaseComplete leases and completes items queued beforehand over
// 1000 hosts on a MemStore, without politeness gaps: every 16th lease of a
// host refills its window from the store.
func BenchmarkLeaseComplete(b *testing.B) {
	const hosts = 1000
	f, err := New(Options{MinDelay: -1, MaxParallel: 1 << 30, IPMaxParallel: 1 << 30})
	if err != nil {
		b.Fatal(err)
	}
	items := make([]Item, 0, 1000)
	for i := 0; i < b.N; i += len(items) {
		items = items[:0]
		for j := i; j < min(b.N, i+1000); j++ {
			h := "h" + strconv.Itoa(j%hosts) + ".bench.test"
			items = append(items, Item{URL: "http://" + h + "/p/" + strconv.Itoa(j), Host: h, Job: uint32(j % 3)})
		}
		<-f.Add(nil, items...)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; {
		l, _ := f.Lease()
		if l == nil {
			select {
			case <-f.Changed():
			case <-time.After(10 * time.Second):
				b.Fatalf("no lease after %d with %+v", n, f.Stats())
			}
			continue
		}
		if _, err := f.Complete(l, Outcome{Status: 200}, nil); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.StopTimer()
	if !f.Done() {
		b.Fatalf("not done after %d completions: %+v", b.N, f.Stats())
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "leases/s")
}

// BenchmarkStats: Stats with 100,000 hosts known, 1000 of them ready.
func BenchmarkStats(b *testing.B) {
	c := &clock{t: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)}
	f, err := New(Options{MinDelay: time.Second, Now: c.now})
	if err != nil {
		b.Fatal(err)
	}
	for h := range 100_000 {
		host := "h" + strconv.Itoa(h) + ".bench.test"
		<-f.Add(nil, Item{URL: "http://" + host + "/", Host: host}, Item{URL: "http://" + host + "/2", Host: host})
	}
	for range 99_000 {
		l, _ := f.Lease()
		f.Complete(l, Outcome{Status: 200}, nil)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if s := f.Stats(); s.Ready != 1000 {
			b.Fatalf("Stats() = %+v, want 1000 ready", s)
		}
	}
}

// BenchmarkStatsMillionReady: Stats with 1,000,000 hosts known, every one
// due (a start-up, or a backlog larger than the workers), and the clock
// moving on between calls. Walking the due hosts took 47 ms a call here.
func BenchmarkStatsMillionReady(b *testing.B) {
	c := &clock{t: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)}
	f, err := New(Options{MinDelay: time.Second, Now: c.now})
	if err != nil {
		b.Fatal(err)
	}
	const hosts = 1_000_000
	items := make([]Item, 0, 1000)
	for h := range hosts {
		host := "h" + strconv.Itoa(h) + ".bench.test"
		items = append(items, Item{URL: "http://" + host + "/", Host: host})
		if len(items) == cap(items) {
			<-f.Add(nil, items...)
			items = items[:0]
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		c.advance(time.Millisecond)
		if s := f.Stats(); s.Ready != hosts {
			b.Fatalf("Stats() = %+v, want %d ready", s, hosts)
		}
	}
}
