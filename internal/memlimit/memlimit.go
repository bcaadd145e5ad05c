// Package memlimit keeps the Go heap's soft limit (debug.SetMemoryLimit)
// above what the process must keep live.
//
// A fixed limit keeps a small crawl's process small: the collector works
// harder instead of letting the heap double before each cycle. But a
// crawl's live heap grows with the hosts it knows (about 275 bytes a host)
// and its seen filters (about 1.3 bytes a URL each), and once the live
// heap passes a fixed limit the collector runs back to back, taking up to
// half the CPU, for no memory it can free. So the limit follows the live
// heap, up and down: Limit is what GOGC lets the heap reach anyway (twice
// the live heap at the default GOGC=100), never below the floor (the
// small crawl's limit), and never above the ceiling, a share of the
// memory the process may use (the machine's or its cgroup's: procstat.
// MachineMemory), so that the heap stops short of it, even below the
// floor in a small container.
//
// Keep applies Limit every second; a GOMEMLIMIT set by the operator is
// left alone. Limit is pure; Keep reads runtime/metrics, GOGC and the
// machine's memory.
package memlimit

import (
	"context"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"time"

	"github.com/trawl-crawler/trawl/internal/procstat"
)

// Floor is the limit while the live heap is small: with Pebble's block
// cache and memtables (outside the Go heap) a node then stays under 1 GiB.
const Floor = 768 << 20

// CeilingShare is the share of the memory the process may use that the
// limit may reach (Pebble's cache and memtables, outside the Go heap,
// take part of the rest).
const CeilingShare = 0.8

// Limit is the soft limit for a live heap of live bytes with GOGC gogc
// (negative: off): live x (1 + gogc/100), at least floor, and at most
// ceiling if one is known (> 0), even below the floor. With the collector
// off only the ceiling limits the heap (no ceiling: the floor).
func Limit(live int64, gogc int, floor, ceiling int64) int64 {
	l := floor
	switch {
	case gogc < 0 && ceiling > 0:
		l = ceiling
	case gogc >= 0:
		l = max(floor, live+live*int64(gogc)/100)
	}
	if ceiling > 0 {
		l = min(l, ceiling)
	}
	return l
}

// gogc is the GOGC setting: 100 if unset or unreadable, -1 for "off".
func gogc() int {
	v := os.Getenv("GOGC")
	if v == "off" {
		return -1
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return n
	}
	return 100
}

// Keep sets the limit at once and then every interval until ctx ends,
// unless GOMEMLIMIT is set. It blocks; run it on its own goroutine.
func Keep(ctx context.Context, interval time.Duration) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	ceiling := int64(float64(procstat.MachineMemory()) * CeilingShare)
	percent := gogc()
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	apply := func() {
		metrics.Read(sample)
		var live int64
		if sample[0].Value.Kind() == metrics.KindUint64 {
			live = int64(sample[0].Value.Uint64())
		}
		debug.SetMemoryLimit(Limit(live, percent, Floor, ceiling))
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
