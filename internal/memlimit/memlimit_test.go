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
		live, floor, ceiling, want int64
	}{
		{100 * mib, 768 * mib, 16000 * mib, 768 * mib},     // small crawl: the floor
		{384 * mib, 768 * mib, 16000 * mib, 768 * mib},     // twice the live heap is the floor
		{1000 * mib, 768 * mib, 16000 * mib, 2000 * mib},   // past it: twice the live heap
		{12000 * mib, 768 * mib, 16000 * mib, 16000 * mib}, // at most the ceiling
		{12000 * mib, 768 * mib, 0, 24000 * mib},           // no ceiling known
		{100 * mib, 768 * mib, 512 * mib, 768 * mib},       // a ceiling below the floor is ignored
		{0, 768 * mib, 16000 * mib, 768 * mib},
	} {
		if got := Limit(tc.live, tc.floor, tc.ceiling); got != tc.want {
			t.Errorf("Limit(%d MiB live, floor %d MiB, ceiling %d MiB) = %d MiB, want %d MiB",
				tc.live/mib, tc.floor/mib, tc.ceiling/mib, got/mib, tc.want/mib)
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
	if got := debug.SetMemoryLimit(-1); got != Floor {
		t.Errorf("limit after Keep = %d, want the floor %d (this test's live heap is small)", got, Floor)
	}

	t.Setenv("GOMEMLIMIT", "1GiB")
	debug.SetMemoryLimit(12345 << 20)
	Keep(context.Background(), time.Hour) // returns at once
	if got := debug.SetMemoryLimit(-1); got != 12345<<20 {
		t.Errorf("with GOMEMLIMIT set, Keep changed the limit to %d", got)
	}
}
