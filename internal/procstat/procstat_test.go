package procstat

import (
	"os"
	"syscall"
	"testing"
	"time"
)

func TestBytes(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	rss, peak := Bytes("VmRSS"), Bytes("VmHWM")
	if rss <= 0 || peak < rss {
		t.Errorf("VmRSS %d, VmHWM %d: want 0 < VmRSS <= VmHWM", rss, peak)
	}
	if rss%1024 != 0 {
		t.Errorf("VmRSS %d is not whole kB converted to bytes", rss)
	}
	if v := Bytes("NoSuchField"); v != 0 {
		t.Errorf("Bytes(NoSuchField) = %d, want 0", v)
	}
}

func TestProcessCPU(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skipf("no /proc/self/stat: %v", err)
	}
	// The kernel's own account (getrusage) is the reference: burn until
	// it says 150 ms more were spent, however loaded the machine (a wall
	// clock says nothing of the CPU the process got), then compare.
	rusage := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			t.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	before, err := ProcessCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	r0 := rusage()
	x := 0
	for deadline := time.Now().Add(time.Minute); rusage()-r0 < 150*time.Millisecond && time.Now().Before(deadline); x++ {
	}
	spent := rusage() - r0
	after, err := ProcessCPU(os.Getpid())
	// /proc counts clock ticks (10 ms): allow two.
	if err != nil || after-before < spent-20*time.Millisecond {
		t.Errorf("ProcessCPU across %v of CPU (getrusage): %v -> %v, %v; want at least %v more", spent, before, after, err, spent-20*time.Millisecond)
	}
	if _, err := ProcessCPU(-1); err == nil {
		t.Error("ProcessCPU(-1): no error")
	}
}
