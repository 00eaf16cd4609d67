package gcpolicy

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
)

// memoryFiles are the files Available reads: the cgroup v2 and v1 memory limits of the
// process's cgroup (as a container sees its own at /sys/fs/cgroup) and the machine's memory.
type memoryFiles struct{ cgroupV2, cgroupV1, meminfo string }

// Available returns the memory available to the process in bytes: the machine's memory, or
// its cgroup's limit when that is lower (a container's). 0 when neither can be read (not
// Linux).
func Available() uint64 {
	return memoryFiles{
		cgroupV2: "/sys/fs/cgroup/memory.max",
		cgroupV1: "/sys/fs/cgroup/memory/memory.limit_in_bytes",
		meminfo:  "/proc/meminfo",
	}.available()
}

func (f memoryFiles) available() uint64 {
	total := memTotal(f.meminfo)
	for _, p := range []string{f.cgroupV2, f.cgroupV1} {
		if lim, ok := cgroupLimit(p); ok && (total == 0 || lim < total) {
			total = lim
		}
	}
	return total
}

// cgroupLimit reads a cgroup memory limit file: a number of bytes, or "max" (none). cgroup v1
// writes "no limit" as a huge number, which the caller's comparison with the machine's memory
// drops.
func cgroupLimit(path string) (uint64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseUint(string(bytes.TrimSpace(b)), 10, 64)
	if err != nil || n == 0 {
		return 0, false
	}
	return n, true
}

// memTotal reads MemTotal from /proc/meminfo ("MemTotal:  24683612 kB"); 0 if it cannot.
func memTotal(path string) uint64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) != 2 || fields[1] != "kB" {
			return 0
		}
		kb, err := strconv.ParseUint(fields[0], 10, 64)
		if err != nil {
			return 0
		}
		return kb << 10
	}
	return 0
}
