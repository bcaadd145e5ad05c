// Package cpulimit puts processes in a Linux CPU cgroup of their own with a
// quota of a fraction of one core, for the benchmarks that judge how a
// fleet scales (trawl bench fleet): each member gets its own CPU share
// whatever the machine's core count, which taskset cannot give three
// members on two cores.
//
// It uses cgroup v1's cpu controller (cpu.cfs_quota_us over
// cpu.cfs_period_us) when it is mounted and writable, else cgroup v2's
// cpu.max, and fails naming both places when neither can be written (not
// root, a read-only /sys/fs/cgroup in a container, no cpu controller).
package cpulimit

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Default mount points of the two cgroup hierarchies.
const (
	V1CPU = "/sys/fs/cgroup/cpu" // cgroup v1's cpu controller
	V2    = "/sys/fs/cgroup"     // the cgroup v2 unified hierarchy
)

// Group is one cgroup with a CPU quota. Close removes it.
type Group struct {
	dir   string
	v2    bool
	cpus  float64
	added []int
}

// New makes the cgroup name (a single path element; a leftover group of
// that name is reused) limited to cpus of one core (0.25: a quarter of
// one core's time in each period), under cgroup v1's cpu controller at
// V1CPU or else cgroup v2 at V2.
func New(name string, cpus float64) (*Group, error) {
	return newAt(V1CPU, V2, name, cpus)
}

func newAt(v1, v2, name string, cpus float64) (*Group, error) {
	if name == "" || strings.ContainsAny(name, "/\x00") || name == "." || name == ".." {
		return nil, fmt.Errorf("cpulimit: group name %q: want one path element", name)
	}
	if !(cpus > 0) || cpus > 1024 {
		return nil, fmt.Errorf("cpulimit: %v CPUs: want a positive fraction or number of cores", cpus)
	}
	g1, err1 := newV1(v1, name, cpus)
	if err1 == nil {
		return g1, nil
	}
	g2, err2 := newV2(v2, name, cpus)
	if err2 == nil {
		return g2, nil
	}
	return nil, fmt.Errorf("cpulimit: no writable CPU cgroup to limit a process to %v of a core (run as root with cgroup v1's cpu controller at %s or cgroup v2 with the cpu controller at %s): %w",
		cpus, v1, v2, errors.Join(fmt.Errorf("cgroup v1: %w", err1), fmt.Errorf("cgroup v2: %w", err2)))
}

func newV1(root, name string, cpus float64) (*Group, error) {
	b, err := os.ReadFile(filepath.Join(root, "cpu.cfs_period_us"))
	if err != nil {
		return nil, fmt.Errorf("no cpu controller: %w", err)
	}
	period, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || period <= 0 {
		return nil, fmt.Errorf("%s: %q is not a period", filepath.Join(root, "cpu.cfs_period_us"), b)
	}
	dir := filepath.Join(root, name)
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, err
	}
	g := &Group{dir: dir, cpus: cpus}
	quota := int64(cpus * float64(period))
	err = errors.Join(
		os.WriteFile(filepath.Join(dir, "cpu.cfs_period_us"), []byte(strconv.FormatInt(period, 10)), 0o644),
		os.WriteFile(filepath.Join(dir, "cpu.cfs_quota_us"), []byte(strconv.FormatInt(max(quota, 1000), 10)), 0o644))
	if err != nil {
		os.Remove(dir)
		return nil, err
	}
	return g, nil
}

func newV2(root, name string, cpus float64) (*Group, error) {
	b, err := os.ReadFile(filepath.Join(root, "cgroup.controllers"))
	if err != nil {
		return nil, fmt.Errorf("not a cgroup v2 hierarchy: %w", err)
	}
	if !hasWord(string(b), "cpu") {
		return nil, fmt.Errorf("%s has no cpu controller (%q)", filepath.Join(root, "cgroup.controllers"), strings.TrimSpace(string(b)))
	}
	sub := filepath.Join(root, "cgroup.subtree_control")
	if b, err := os.ReadFile(sub); err != nil || !hasWord(string(b), "cpu") {
		if err := os.WriteFile(sub, []byte("+cpu"), 0o644); err != nil {
			return nil, fmt.Errorf("enable the cpu controller for child groups: %w", err)
		}
	}
	dir := filepath.Join(root, name)
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, err
	}
	const period = 100000
	quota := max(int64(cpus*period), 1000)
	if err := os.WriteFile(filepath.Join(dir, "cpu.max"), fmt.Appendf(nil, "%d %d", quota, period), 0o644); err != nil {
		os.Remove(dir)
		return nil, err
	}
	return &Group{dir: dir, v2: true, cpus: cpus}, nil
}

func hasWord(s, w string) bool {
	for _, f := range strings.Fields(s) {
		if f == w {
			return true
		}
	}
	return false
}

// Dir is the group's directory.
func (g *Group) Dir() string { return g.dir }

// Kind is "cgroup v1" or "cgroup v2".
func (g *Group) Kind() string {
	if g.v2 {
		return "cgroup v2"
	}
	return "cgroup v1"
}

// CPUs is the group's quota in cores.
func (g *Group) CPUs() float64 { return g.cpus }

// Add moves the process pid (all its threads) into the group. A child
// started before Add may run a moment unlimited: move it early.
func (g *Group) Add(pid int) error {
	if err := os.WriteFile(filepath.Join(g.dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
		return fmt.Errorf("cpulimit: add pid %d to %s: %w", pid, g.dir, err)
	}
	g.added = append(g.added, pid)
	return nil
}

// Throttling is the group's cpu.stat: how often the quota held it back.
type Throttling struct {
	Periods   int64         // enforcement periods with a runnable task
	Throttled int64         // of them, periods in which the quota ran out
	Time      time.Duration // total time its tasks waited for the next period
}

// Throttling reads the group's cpu.stat.
func (g *Group) Throttling() (Throttling, error) {
	b, err := os.ReadFile(filepath.Join(g.dir, "cpu.stat"))
	if err != nil {
		return Throttling{}, err
	}
	var t Throttling
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		switch k {
		case "nr_periods":
			t.Periods = n
		case "nr_throttled":
			t.Throttled = n
		case "throttled_time": // v1, ns
			t.Time = time.Duration(n)
		case "throttled_usec": // v2
			t.Time = time.Duration(n) * time.Microsecond
		}
	}
	return t, nil
}

// Close removes the group. Its processes must have exited (or moved):
// a group with a process in it cannot be removed, so Close retries for a
// few seconds while an exiting process leaves, then gives up with an error
// naming the group.
func (g *Group) Close() error {
	var err error
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if err = os.Remove(g.dir); err == nil || errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("cpulimit: remove %s (a process still in it?): %w", g.dir, err)
		}
	}
}
