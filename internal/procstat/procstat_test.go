package procstat

import (
	"os"
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
	before, err := ProcessCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	x := 0
	for start := time.Now(); time.Since(start) < 200*time.Millisecond; x++ {
	}
	after, err := ProcessCPU(os.Getpid())
	if err != nil || after-before < 100*time.Millisecond {
		t.Errorf("ProcessCPU after 200 ms of burning: %v -> %v, %v; want at least 100 ms more", before, after, err)
	}
	if _, err := ProcessCPU(-1); err == nil {
		t.Error("ProcessCPU(-1): no error")
	}
}
