package store

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/trawl-crawler/trawl/internal/store/partition"
)

// BenchmarkCommit measures synced commits per second on the real file
// system with 1 and 32 concurrent committers. Pebble's group commit shares
// one fsync among all committers waiting, so 32 committers reach many more
// commits per second than one (see DB.Commit).
func BenchmarkCommit(b *testing.B) {
	for _, n := range []int{1, 32} {
		b.Run(fmt.Sprintf("committers=%d", n), func(b *testing.B) {
			db := mustOpen(b, b.TempDir(), Options{Logger: quiet})
			defer db.Close()
			var seq atomic.Uint64
			value := make([]byte, 100)
			b.SetParallelism((n + 1) / 2) // RunParallel starts GOMAXPROCS × this
			if n == 1 {
				b.SetParallelism(1)
			}
			b.ResetTimer()
			if n == 1 {
				for i := 0; i < b.N; i++ {
					bt := db.NewBatch()
					bt.Set(QueueKey("a.test", 0, seq.Add(1)), value)
					if err := db.Commit(bt); err != nil {
						b.Fatal(err)
					}
				}
			} else {
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						bt := db.NewBatch()
						bt.Set(QueueKey("a.test", 0, seq.Add(1)), value)
						if err := db.Commit(bt); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commits/s")
		})
	}
}

// BenchmarkApplyGroup measures ApplyGroup on groups shaped as the
// frontier's enqueue makes them: 16 changes of 1,000 URLs over 100,000
// hosts (1,000 hosts a change), each a seen key and a queue item a URL and
// a job counter a partition touched, into an in-memory store that grows
// to several memtables. ns/op is per write; "sorted=false" applies the
// writes in the group's order, as ApplyGroup did before sorted.go.
func BenchmarkApplyGroup(b *testing.B) {
	for _, sorted := range []bool{false, true} {
		b.Run(fmt.Sprintf("sorted=%v", sorted), func(b *testing.B) {
			defer func(old bool) { sortGroups = old }(sortGroups)
			sortGroups = sorted
			db := mustOpen(b, "", Options{FS: vfs.NewMem(), Logger: quiet})
			defer db.Close()
			const change, changes, hosts = 1000, 16, 100_000
			val := make([]byte, 14)
			writes, url := 0, 0
			b.ResetTimer()
			for writes < b.N {
				b.StopTimer()
				group := make([]*Batch, changes)
				for c := range group {
					bt := db.NewBatch()
					parts := map[partition.ID]bool{}
					for range change {
						host := fmt.Sprintf("h%07d.bench.test", url%hosts)
						u := fmt.Sprintf("http://%s/p/%d", host, url)
						bt.Set(SeenKey(0, host, u), nil)
						bt.Set(QueueKey(host, 0, uint64(url)), val)
						parts[partition.Of(host)] = true
						url++
					}
					for p := range parts {
						bt.Set(JobPartKey(p, 0), val[:4])
					}
					writes += int(bt.Count())
					group[c] = bt
				}
				b.StartTimer()
				if err := db.ApplyGroup(group); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(writes), "ns/write")
		})
	}
}
