// Package memlimit keeps the Go heap's soft limit (debug.SetMemoryLimit)
// above what the process must keep live.
//
// A fixed limit keeps a small crawl's process small: the collector works
// harder instead of letting the heap double before each cycle. But a
// crawl's live heap grows with the hosts it knows (about 260 bytes a host)
// and its seen filters (about 1.3 bytes a URL each), and once the live
// heap passes a fixed limit the collector runs back to back, taking up to
// half the CPU, for no memory it can free. So the limit follows the live
// heap: Limit is twice the live heap (what GOGC=100 allows anyway), never
// below the floor (the small crawl's limit) nor above the ceiling (a share
// of the machine's memory, so that the heap's growth stops short of it).
//
// Keep applies Limit every few seconds; a GOMEMLIMIT set by the operator
// is left alone. Limit is pure; Keep reads runtime/metrics and the
// machine's memory.
package memlimit

import (
	"context"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"time"

	"github.com/trawl-crawler/trawl/internal/procstat"
)

// Floor is the limit while the live heap is small: with Pebble's block
// cache and memtables (outside the Go heap) a node then stays under 1 GiB.
const Floor = 768 << 20

// CeilingShare is the share of the machine's memory the limit may reach.
const CeilingShare = 0.8

// Limit is the soft limit for a live heap of live bytes: 2 x live, at
// least floor, at most ceiling (if ceiling > floor; a ceiling of 0 or
// below the floor means none is known).
func Limit(live, floor, ceiling int64) int64 {
	l := max(floor, 2*live)
	if ceiling > floor {
		l = min(l, ceiling)
	}
	return l
}

// Keep sets the limit at once and then every interval until ctx ends,
// unless GOMEMLIMIT is set. It blocks; run it on its own goroutine.
func Keep(ctx context.Context, interval time.Duration) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	ceiling := int64(float64(procstat.MachineMemory()) * CeilingShare)
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	apply := func() {
		metrics.Read(sample)
		var live int64
		if sample[0].Value.Kind() == metrics.KindUint64 {
			live = int64(sample[0].Value.Uint64())
		}
		debug.SetMemoryLimit(Limit(live, Floor, ceiling))
	}
	apply()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			apply()
		}
	}
}
