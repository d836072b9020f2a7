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

// ReleaseStartupMemory collects and returns the free heap to the OS at
// once: what package initialisation (compiled JSON meta-schemas, parsed
// fallback roots, CEL's and protobuf's registries) and the first context
// load allocated and dropped. hostd calls it once, after the first load
// (Options.AfterFirstLoad). Left to the background scavenger, which keeps
// about 10% over the heap goal, some 0.5-0.7 MiB of those freed pages stay
// resident in an idle sidecar (docs/benchmarks.md, "Idle resident memory").
// It is one collection at start-up, never on a call's path.
func ReleaseStartupMemory() { debug.FreeOSMemory() }

// hostd leaves the collector at Go's default pace (GOGC=100). It ran at
// GOGC=50 while a burst of maximal calls could hold 16 bodies at once; since
// the bodies held at once are bounded by bytes (4 MiB), 32 concurrent
// maximal calls peak at 58-62 MiB at the default pace, and the halved pace
// only doubled the collections of the small steady-state heap, which set the
// tail of every call: p99 1.2-1.4 ms at GOGC=50 against 0.7 ms at 100 over a
// process boundary (docs/benchmarks.md). GOGC=200 would peak over 80 MiB.
