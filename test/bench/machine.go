package main

import (
	"bufio"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// describeMachine says where and when the run starts: the date, the
// commit, Go's version, the CPU, the cores, the memory and the load
// average now. What cannot be read is "unknown".
func describeMachine(now time.Time) Machine {
	return Machine{
		Date:      now.UTC().Format(time.RFC3339),
		Commit:    gitDescribe(),
		GoVersion: runtime.Version(),
		CPU:       procField("/proc/cpuinfo", "model name"),
		Cores:     runtime.NumCPU(),
		MemGiB:    memGiB(),
		LoadStart: loadAverage(),
	}
}

// gitDescribe is `git describe --always --dirty` of the working tree.
func gitDescribe() string {
	out, err := exec.Command("git", "describe", "--always", "--dirty").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}

// loadAverage is the 1, 5 and 15 minute load averages of /proc/loadavg.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// memGiB is MemTotal of /proc/meminfo in GiB, rounded; 0 when unknown.
func memGiB() int {
	f := strings.Fields(procField("/proc/meminfo", "MemTotal")) // "24567890 kB"
	if len(f) == 0 {
		return 0
	}
	kib, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return 0
	}
	return int(kib/(1<<20) + 0.5)
}

// procField returns the value of the first "name: value" line of a /proc
// file, or "unknown".
func procField(path, name string) string {
	f, err := os.Open(path)
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == name {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}
