// Package procstat reads this process's memory figures from Linux's
// /proc/self/status, its CPU time from getrusage, and another process's
// CPU time from /proc/PID/stat, for the benchmarks. Elsewhere every
// figure is 0 or an error.
package procstat

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Bytes returns the "kB" field named field of /proc/self/status (VmRSS,
// VmHWM, ...) in bytes, or 0 if it cannot be read.
func Bytes(field string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || name != field {
			continue
		}
		return kiloBytes(rest)
	}
	return 0
}

// ProcessCPU returns the user+system CPU time of process pid (its threads,
// not its children's) from /proc/PID/stat, in clock ticks of 10 ms (the
// USER_HZ of every Linux port Go supports but alpha and ia64).
func ProcessCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// The command name, field 2, is in parentheses and may hold spaces:
	// the fields are counted from the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no ')'", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f)+2)
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: utime %q, stime %q", pid, f[11], f[12])
	}
	return time.Duration(ut+st) * 10 * time.Millisecond, nil
}

// SelfCPU returns the user+system CPU time this process has used
// (getrusage), or 0 if it cannot be read.
func SelfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// kiloBytes is a "  123 kB" figure of /proc in bytes; 0 if unreadable.
func kiloBytes(s string) int64 {
	kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(s), " kB"), 10, 64)
	if err != nil {
		return 0
	}
	return kb << 10
}

// MachineMemory is the memory this process may use, in bytes: the
// machine's (MemTotal of /proc/meminfo), or the lowest memory limit of its
// cgroup and the cgroup's parents if lower (cgroup v2 memory.max, v1
// memory.limit_in_bytes; under /sys/fs/cgroup, at the path
// /proc/self/cgroup names, or at the mount's root when a cgroup namespace
// shows the process's own cgroup there). 0 if none can be read.
func MachineMemory() int64 { return machineMemory(os.DirFS("/")) }

// machineMemory is MachineMemory over the file system root.
func machineMemory(root fs.FS) int64 {
	var total int64
	if b, err := fs.ReadFile(root, "proc/meminfo"); err == nil {
		for line := range strings.Lines(string(b)) {
			if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				total = kiloBytes(rest)
				break
			}
		}
	}
	lower := func(limit int64) {
		if limit > 0 && (total == 0 || limit < total) {
			total = limit
		}
	}
	b, err := fs.ReadFile(root, "proc/self/cgroup")
	if err != nil {
		return total
	}
	for line := range strings.Lines(string(b)) {
		parts := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "": // cgroup v2
			lower(cgroupLimit(root, "sys/fs/cgroup", parts[2], "memory.max"))
		case slices.Contains(strings.Split(parts[1], ","), "memory"): // cgroup v1
			lower(cgroupLimit(root, "sys/fs/cgroup/memory", parts[2], "memory.limit_in_bytes"))
		}
	}
	return total
}

// cgroupLimit is the lowest limit in file of the cgroup at path under
// mount and of its parents, the mount's root included; 0 if none is set.
// A v1 "no limit" (a page-rounded 2^63-1) and v2 "max" count as none.
func cgroupLimit(root fs.FS, mount, path, file string) int64 {
	var lowest int64
	dir := strings.Trim(path, "/")
	for {
		p := mount + "/" + file
		if dir != "" {
			p = mount + "/" + dir + "/" + file
		}
		if b, err := fs.ReadFile(root, p); err == nil {
			if v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && v > 0 && v < 1<<62 && (lowest == 0 || v < lowest) {
				lowest = v
			}
		}
		if dir == "" {
			return lowest
		}
		if i := strings.LastIndexByte(dir, '/'); i >= 0 {
			dir = dir[:i]
		} else {
			dir = ""
		}
	}
}
