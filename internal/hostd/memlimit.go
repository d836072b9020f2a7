package hostd

import (
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// CgroupMemoryMax is where cgroup v2 exposes the container's memory limit.
const CgroupMemoryMax = "/sys/fs/cgroup/memory.max"

// memoryLimitShare is the part of the container limit given to the Go
// runtime as its soft limit; the rest covers stacks, the binary and what
// the runtime cannot return at once.
const memoryLimitShare = 0.8

// SetMemoryLimitFromCgroup gives the Go runtime a soft memory limit of 80%
// of the container's (read from path, normally CgroupMemoryMax), so the
// garbage collector works harder before the kernel kills hostd, instead of
// letting the heap double between collections. An explicit GOMEMLIMIT wins;
// no limit (`max`) or no cgroup v2 file leaves the runtime as it is. It
// returns the limit it set, or 0.
func SetMemoryLimitFromCgroup(path string) int64 {
	if os.Getenv("GOMEMLIMIT") != "" {
		return 0
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	limit, err := strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64)
	if err != nil || limit <= 0 {
		return 0 // "max": no limit
	}
	soft := int64(float64(limit) * memoryLimitShare)
	debug.SetMemoryLimit(soft)
	return soft
}

// DefaultGCPercent is the garbage collector's target hostd runs with unless
// GOGC says otherwise: the heap grows by half its live size between
// collections instead of doubling. hostd's live heap is small and its
// garbage comes in bursts (a 1 MiB call allocates ~20 MiB while decoded), so
// the Go default let a burst of maximal calls double the heap to the
// container's limit; the extra collections cost little CPU next to decoding.
const DefaultGCPercent = 50

// SetGCPercent sets DefaultGCPercent unless GOGC is set; it returns the
// percentage it set, or 0.
func SetGCPercent() int {
	if os.Getenv("GOGC") != "" {
		return 0
	}
	debug.SetGCPercent(DefaultGCPercent)
	return DefaultGCPercent
}
