package procstat

import (
	"os"
	"testing"
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
