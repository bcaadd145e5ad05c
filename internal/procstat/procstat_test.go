package procstat

import (
	"os"
	"syscall"
	"testing"
	"testing/fstest"
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

// TestMachineMemory: the machine's memory, or the lowest cgroup limit on
// the process's cgroup path and its parents, v1 or v2, with or without a
// cgroup namespace; "no limit" values are not limits.
func TestMachineMemory(t *testing.T) {
	const gib = 1 << 30
	meminfo := &fstest.MapFile{Data: []byte("MemTotal:       25165824 kB\nMemFree:        1000 kB\n")}
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  int64
	}{
		{"no cgroup", map[string]string{}, 24 * gib},
		{"v2, namespaced: its own limit at the root", map[string]string{
			"proc/self/cgroup":         "0::/\n",
			"sys/fs/cgroup/memory.max": "4294967296\n",
		}, 4 * gib},
		{"v2, a unit's limit under its path", map[string]string{
			"proc/self/cgroup":                                    "0::/system.slice/trawl.service\n",
			"sys/fs/cgroup/memory.max":                            "max\n",
			"sys/fs/cgroup/system.slice/memory.max":               "max\n",
			"sys/fs/cgroup/system.slice/trawl.service/memory.max": "2147483648\n",
		}, 2 * gib},
		{"v2, a parent's limit is lower", map[string]string{
			"proc/self/cgroup":             "0::/a/b\n",
			"sys/fs/cgroup/a/memory.max":   "1073741824\n",
			"sys/fs/cgroup/a/b/memory.max": "max\n",
		}, 1 * gib},
		{"v1, under its path", map[string]string{
			"proc/self/cgroup":                                           "9:pids:/\n4:memory:/process_api/abc\n0::/\n",
			"sys/fs/cgroup/memory/memory.limit_in_bytes":                 "9223372036854771712\n",
			"sys/fs/cgroup/memory/process_api/abc/memory.limit_in_bytes": "3221225472\n",
		}, 3 * gib},
		{"v1, unlimited", map[string]string{
			"proc/self/cgroup":                             "4:cpu,memory:/x\n",
			"sys/fs/cgroup/memory/memory.limit_in_bytes":   "9223372036854771712\n",
			"sys/fs/cgroup/memory/x/memory.limit_in_bytes": "9223372036854771712\n",
		}, 24 * gib},
		{"a limit above the machine's memory", map[string]string{
			"proc/self/cgroup":         "0::/\n",
			"sys/fs/cgroup/memory.max": "107374182400\n",
		}, 24 * gib},
	} {
		fsys := fstest.MapFS{"proc/meminfo": meminfo}
		for name, data := range tc.files {
			fsys[name] = &fstest.MapFile{Data: []byte(data)}
		}
		if got := machineMemory(fsys); got != tc.want {
			t.Errorf("%s: machineMemory = %d, want %d", tc.name, got, tc.want)
		}
	}
	if got := MachineMemory(); got <= 0 {
		t.Errorf("MachineMemory() = %d on this machine, want > 0", got)
	}
}
