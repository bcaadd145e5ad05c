package memlimit

import (
	"context"
	"math"
	"runtime/debug"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/internal/procstat"
)

func TestLimit(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		live                 int64
		gogc                 int
		floor, ceiling, want int64
	}{
		{100 * mib, 100, 768 * mib, 16000 * mib, 768 * mib},     // small crawl: the floor
		{384 * mib, 100, 768 * mib, 16000 * mib, 768 * mib},     // twice the live heap is the floor
		{1000 * mib, 100, 768 * mib, 16000 * mib, 2000 * mib},   // past it: twice the live heap
		{12000 * mib, 100, 768 * mib, 16000 * mib, 16000 * mib}, // at most the ceiling
		{12000 * mib, 100, 768 * mib, 0, 24000 * mib},           // no ceiling known
		{100 * mib, 100, 768 * mib, 512 * mib, 512 * mib},       // a small container: its ceiling, below the floor
		{1000 * mib, 300, 768 * mib, 16000 * mib, 4000 * mib},   // GOGC=300: four times the live heap
		{1000 * mib, 50, 768 * mib, 16000 * mib, 1500 * mib},    // GOGC=50
		{1000 * mib, -1, 768 * mib, 16000 * mib, 16000 * mib},   // GOGC=off: the ceiling alone
		{1000 * mib, -1, 768 * mib, 0, 768 * mib},               // GOGC=off, no ceiling: the floor
		{0, 100, 768 * mib, 16000 * mib, 768 * mib},
	} {
		if got := Limit(tc.live, tc.gogc, tc.floor, tc.ceiling); got != tc.want {
			t.Errorf("Limit(%d MiB live, GOGC %d, floor %d MiB, ceiling %d MiB) = %d MiB, want %d MiB",
				tc.live/mib, tc.gogc, tc.floor/mib, tc.ceiling/mib, got/mib, tc.want/mib)
		}
	}
}

// TestKeep: Keep sets the limit from the live heap at once, and leaves a
// GOMEMLIMIT set by the operator alone.
func TestKeep(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(old)
	if procstat.MachineMemory() <= 0 {
		t.Errorf("MachineMemory() = %d, want the machine's memory", procstat.MachineMemory())
	}

	t.Setenv("GOMEMLIMIT", "")
	t.Setenv("GOGC", "")
	debug.SetMemoryLimit(math.MaxInt64)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { Keep(ctx, time.Hour); close(done) }()
	deadline := time.Now().Add(10 * time.Second)
	for debug.SetMemoryLimit(-1) == math.MaxInt64 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	cancel()
	<-done
	ceiling := int64(float64(procstat.MachineMemory()) * CeilingShare)
	if got := debug.SetMemoryLimit(-1); got != min(Floor, ceiling) {
		t.Errorf("limit after Keep = %d, want the floor %d (this test's live heap is small) or the ceiling %d if lower", got, Floor, ceiling)
	}

	t.Setenv("GOMEMLIMIT", "1GiB")
	debug.SetMemoryLimit(12345 << 20)
	Keep(context.Background(), time.Hour) // returns at once
	if got := debug.SetMemoryLimit(-1); got != 12345<<20 {
		t.Errorf("with GOMEMLIMIT set, Keep changed the limit to %d", got)
	}
}
