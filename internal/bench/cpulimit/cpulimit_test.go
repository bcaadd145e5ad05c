package cpulimit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/trawl-crawler/trawl/internal/procstat"
)

// TestMain makes the test binary a CPU burner when asked: the child the
// quota test limits.
func TestMain(m *testing.M) {
	if os.Getenv("CPULIMIT_TEST_BURN") == "1" {
		for range runtime.NumCPU() - 1 {
			go burn()
		}
		burn()
	}
	os.Exit(m.Run())
}

func burn() {
	x := 0
	for {
		x++
	}
}

// TestCPULimitQuota runs a child burning every core under a quota of 0.25
// of one core and checks that its CPU rate over two seconds is near 0.25
// (loosely: the machine is shared and noisy).
func TestCPULimitQuota(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make a cgroup")
	}
	g, err := New(fmt.Sprintf("trawl-cpulimit-test-%d", os.Getpid()), 0.25)
	if err != nil {
		t.Skipf("no writable CPU cgroup here: %v", err)
	}
	t.Logf("%s at %s", g.Kind(), g.Dir())
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run", "^$")
	cmd.Env = append(os.Environ(), "CPULIMIT_TEST_BURN=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	defer func() {
		cmd.Process.Kill()
		<-done
		if err := g.Close(); err != nil {
			t.Error(err)
		}
		if _, err := os.Stat(g.Dir()); !os.IsNotExist(err) {
			t.Errorf("%s still there after Close: %v", g.Dir(), err)
		}
	}()
	if err := g.Add(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // past the moment before Add
	c0, err := procstat.ProcessCPU(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	time.Sleep(2 * time.Second)
	c1, err := procstat.ProcessCPU(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	rate := (c1 - c0).Seconds() / time.Since(t0).Seconds()
	th, err := g.Throttling()
	t.Logf("CPU rate %.3f of a core under a 0.25 quota; throttled in %d of %d periods (%v), %v", rate, th.Throttled, th.Periods, th.Time, err)
	if rate < 0.12 || rate > 0.40 {
		t.Errorf("CPU rate %.3f of a core, want near the 0.25 quota (0.12 to 0.40)", rate)
	}
	if err == nil && th.Throttled == 0 {
		t.Errorf("cpu.stat shows no throttled period for a child burning %d cores under 0.25", runtime.NumCPU())
	}
}

// TestCPULimitNoCgroup: where neither hierarchy can be written (here two
// directories that are not cgroup mounts), New fails naming both places.
func TestCPULimitNoCgroup(t *testing.T) {
	v1, v2 := filepath.Join(t.TempDir(), "cpu"), t.TempDir()
	_, err := newAt(v1, v2, "trawl-test", 0.25)
	if err == nil {
		t.Fatal("newAt on plain directories: no error")
	}
	for _, want := range []string{v1, v2, "cgroup v1", "cgroup v2", "no writable CPU cgroup"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	for _, bad := range []struct {
		name string
		cpus float64
	}{{"", 0.5}, {"a/b", 0.5}, {"..", 0.5}, {"x", 0}, {"x", -1}} {
		if _, err := newAt(v1, v2, bad.name, bad.cpus); err == nil {
			t.Errorf("newAt(%q, %v): no error", bad.name, bad.cpus)
		}
	}
}
