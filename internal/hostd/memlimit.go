package hostd

import (
	"math"
	"os"
	"runtime/debug"
	runtimemetrics "runtime/metrics"
	"strconv"
	"strings"
	"sync"
)

// CgroupMemoryMax is where cgroup v2 exposes the container's memory limit.
const CgroupMemoryMax = "/sys/fs/cgroup/memory.max"

// memoryLimitShare is the part of the container limit given to the Go
// runtime as its soft limit; the rest covers stacks, the binary and what
// the runtime cannot return at once.
const memoryLimitShare = 0.8

// SidecarSoftLimit is the Go runtime's soft memory limit in the sidecar
// unless the container's is lower. Under a burst of maximal calls the live
// heap reaches about 17 MiB (one call decoded and its hooks' copy, the next
// body, the context), and at Go's default pace the heap then doubles before
// a collection: 57-66 MiB resident against the 48 MiB target (docs/benchmarks.md). With the binary's
// ~16 MiB of pages, 32 MiB of runtime memory is a resident peak of about 48
// MiB. It binds only in such a burst: idle, and in ordinary calls, the heap
// stays far below it, so the collector keeps its default pace there (a
// lower GOGC cost every call's tail, see below).
const SidecarSoftLimit = 32 << 20

// memLimit is what SetMemoryLimitFromCgroup set: its ceiling (the
// container's share) for RaiseMemoryLimitOverContext. Zero when the
// runtime's limit is someone else's (GOMEMLIMIT).
var memLimit struct {
	sync.Mutex
	set, ceiling int64
}

// SetMemoryLimitFromCgroup gives the Go runtime a soft memory limit, so the
// garbage collector works harder instead of letting the heap double between
// collections: SidecarSoftLimit, or 80% of the container's limit (read from
// path, normally CgroupMemoryMax) when that is lower. Without a container
// limit (`max`, no cgroup v2 file) SidecarSoftLimit still holds: a pod
// without limits is still expected to stay small. An explicit GOMEMLIMIT
// wins. It returns the limit it set, or 0.
func SetMemoryLimitFromCgroup(path string) int64 {
	memLimit.Lock()
	defer memLimit.Unlock()
	memLimit.set = 0
	if os.Getenv("GOMEMLIMIT") != "" {
		return 0
	}
	soft, ceiling := int64(SidecarSoftLimit), int64(math.MaxInt64)
	if raw, err := os.ReadFile(path); err == nil {
		if limit, err := strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64); err == nil && limit > 0 {
			ceiling = int64(float64(limit) * memoryLimitShare)
			soft = min(soft, ceiling)
		}
	}
	memLimit.set, memLimit.ceiling = soft, ceiling
	debug.SetMemoryLimit(soft)
	return soft
}

// RaiseMemoryLimitOverContext keeps the soft limit from binding on a large
// context: a collector held under a limit the live heap nearly fills runs
// all the time. Once a context is loaded, the limit becomes at least twice
// the runtime's memory in use (Go's default pace at that size), within the
// container's share. It returns the limit, or 0 when GOMEMLIMIT set it.
func RaiseMemoryLimitOverContext() int64 {
	memLimit.Lock()
	defer memLimit.Unlock()
	if memLimit.set == 0 {
		return 0
	}
	sample := []runtimemetrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	runtimemetrics.Read(sample)
	inUse := int64(sample[0].Value.Uint64() - sample[1].Value.Uint64())
	if want := min(2*inUse, memLimit.ceiling); want > memLimit.set {
		memLimit.set = want
		debug.SetMemoryLimit(want)
	}
	return memLimit.set
}

// ReleaseStartupMemory collects and returns the free heap to the OS at
// once: what package initialisation (compiled JSON meta-schemas, parsed
// fallback roots, CEL's and protobuf's registries) and the first context
// load allocated and dropped. hostd calls it once, after the first load
// (Options.AfterFirstLoad). Left to the background scavenger, which keeps
// about 10% over the heap goal, some 0.5-0.7 MiB of those freed pages stay
// resident in an idle sidecar (docs/benchmarks.md, "Idle resident memory").
// It is one collection at start-up, never on a call's path. It then lets
// the soft limit make room for the loaded context
// (RaiseMemoryLimitOverContext).
func ReleaseStartupMemory() {
	debug.FreeOSMemory()
	RaiseMemoryLimitOverContext()
}

// hostd leaves the collector at Go's default pace (GOGC=100). It ran at
// GOGC=50 while a burst of maximal calls could hold 16 bodies at once; since
// the bodies held at once are bounded by bytes (4 MiB), 32 concurrent
// maximal calls peak at 58-62 MiB at the default pace, and the halved pace
// only doubled the collections of the small steady-state heap, which set the
// tail of every call: p99 1.2-1.4 ms at GOGC=50 against 0.7 ms at 100 over a
// process boundary (docs/benchmarks.md). GOGC=200 would peak over 80 MiB.
// The burst is bounded by SidecarSoftLimit instead, which leaves the
// steady-state pace alone.
