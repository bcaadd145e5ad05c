package store

import (
	"fmt"
	"sync/atomic"
	"testing"
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
