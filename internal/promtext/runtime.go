package promtext

import (
	"bufio"
	"bytes"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"time"
)

// GoCollector is the Go runtime's metrics as client_golang's default
// NewGoCollector names and describes them (go_gc_duration_seconds,
// go_goroutines, go_threads, go_info, go_memstats_*, and go_gc_gogc_percent,
// go_gc_gomemlimit_bytes and go_sched_gomaxprocs_threads), so dashboards
// and alerts over hostd read the same series.
type GoCollector struct{}

// memstat is one go_memstats_* gauge or counter.
type memstat struct {
	name, help string
	counter    bool
	v          func(*runtime.MemStats) float64
}

var memstats = []memstat{
	{"alloc_bytes", "Number of bytes allocated in heap and currently in use. Equals to /memory/classes/heap/objects:bytes.", false, func(m *runtime.MemStats) float64 { return float64(m.Alloc) }},
	{"alloc_bytes_total", "Total number of bytes allocated in heap until now, even if released already. Equals to /gc/heap/allocs:bytes.", true, func(m *runtime.MemStats) float64 { return float64(m.TotalAlloc) }},
	{"buck_hash_sys_bytes", "Number of bytes used by the profiling bucket hash table. Equals to /memory/classes/profiling/buckets:bytes.", false, func(m *runtime.MemStats) float64 { return float64(m.BuckHashSys) }},
	{"frees_total", "Total number of heap objects frees. Equals to /gc/heap/frees:objects + /gc/heap/tiny/allocs:objects.", true, func(m *runtime.MemStats) float64 { return float64(m.Frees) }},
	{"gc_sys_bytes", "Number of bytes used for garbage collection system metadata. Equals to /memory/classes/metadata/other:bytes.", false, func(m *runtime.MemStats) float64 { return float64(m.GCSys) }},
	{"heap_alloc_bytes", "Number of heap bytes allocated and currently in use, same as go_memstats_alloc_bytes. Equals to /memory/classes/heap/objects:bytes.", false, func(m *runtime.MemStats) float64 { return float64(m.HeapAlloc) }},
	{"heap_idle_bytes", "Number of heap bytes waiting to be used. Equals to /memory/classes/heap/released:bytes + /memory/classes/heap/free:bytes.", false, func(m *runtime.MemStats) float64 { return float64(m.HeapIdle) }},
	{"heap_inuse_bytes", "Number of heap bytes that are in use. Equals to /memory/classes/heap/objects:bytes + /memory/classes/heap/unused:bytes", false, func(m *runtime.MemStats) float64 { return float64(m.HeapInuse) }},
	{"heap_objects", "Number of currently allocated objects. Equals to /gc/heap/objects:objects.", false, func(m *runtime.MemStats) float64 { return float64(m.HeapObjects) }},
	{"heap_released_bytes", "Number of heap bytes released to OS. Equals to /memory/classes/heap/released:bytes.", false, func(m *runtime.MemStats) float64 { return float64(m.HeapReleased) }},
	{"heap_sys_bytes", "Number of heap bytes obtained from system. Equals to /memory/classes/heap/objects:bytes + /memory/classes/heap/unused:bytes + /memory/classes/heap/released:bytes + /memory/classes/heap/free:bytes.", false, func(m *runtime.MemStats) float64 { return float64(m.HeapSys) }},
	{"last_gc_time_seconds", "Number of seconds since 1970 of last garbage collection.", false, func(m *runtime.MemStats) float64 { return float64(m.LastGC) / 1e9 }},
	{"mallocs_total", "Total number of heap objects allocated, both live and gc-ed. Semantically a counter version for go_memstats_heap_objects gauge. Equals to /gc/heap/allocs:objects + /gc/heap/tiny/allocs:objects.", true, func(m *runtime.MemStats) float64 { return float64(m.Mallocs) }},
	{"mcache_inuse_bytes", "Number of bytes in use by mcache structures. Equals to /memory/classes/metadata/mcache/inuse:bytes.", false, func(m *runtime.MemStats) float64 { return float64(m.MCacheInuse) }},
	{"mcache_sys_bytes", "Number of bytes used for mcache structures obtained from system. Equals to /memory/classes/metadata/mcache/inuse:bytes + /memory/classes/metadata/mcache/free:bytes.", false, func(m *runtime.MemStats) float64 { return float64(m.MCacheSys) }},
	{"mspan_inuse_bytes", "Number of bytes in use by mspan structures. Equals to /memory/classes/metadata/mspan/inuse:bytes.", false, func(m *runtime.MemStats) float64 { return float64(m.MSpanInuse) }},
	{"mspan_sys_bytes", "Number of bytes used for mspan structures obtained from system. Equals to /memory/classes/metadata/mspan/inuse:bytes + /memory/classes/metadata/mspan/free:bytes.", false, func(m *runtime.MemStats) float64 { return float64(m.MSpanSys) }},
	{"next_gc_bytes", "Number of heap bytes when next garbage collection will take place. Equals to /gc/heap/goal:bytes.", false, func(m *runtime.MemStats) float64 { return float64(m.NextGC) }},
	{"other_sys_bytes", "Number of bytes used for other system allocations. Equals to /memory/classes/other:bytes.", false, func(m *runtime.MemStats) float64 { return float64(m.OtherSys) }},
	{"stack_inuse_bytes", "Number of bytes obtained from system for stack allocator in non-CGO environments. Equals to /memory/classes/heap/stacks:bytes.", false, func(m *runtime.MemStats) float64 { return float64(m.StackInuse) }},
	{"stack_sys_bytes", "Number of bytes obtained from system for stack allocator. Equals to /memory/classes/heap/stacks:bytes + /memory/classes/os-stacks:bytes.", false, func(m *runtime.MemStats) float64 { return float64(m.StackSys) }},
	{"sys_bytes", "Number of bytes obtained from system. Equals to /memory/classes/total:byte.", false, func(m *runtime.MemStats) float64 { return float64(m.Sys) }},
}

// runtimeGauges are the runtime/metrics client_golang adds by default.
var runtimeGauges = []struct{ name, metric, help string }{
	{"go_gc_gogc_percent", "/gc/gogc:percent", "Heap size target percentage configured by the user, otherwise 100. This value is set by the GOGC environment variable, and the runtime/debug.SetGCPercent function. Sourced from /gc/gogc:percent."},
	{"go_gc_gomemlimit_bytes", "/gc/gomemlimit:bytes", "Go runtime memory limit configured by the user, otherwise math.MaxInt64. This value is set by the GOMEMLIMIT environment variable, and the runtime/debug.SetMemoryLimit function. Sourced from /gc/gomemlimit:bytes."},
	{"go_sched_gomaxprocs_threads", "/sched/gomaxprocs:threads", "The current runtime.GOMAXPROCS setting, or the number of operating system threads that can execute user-level Go code simultaneously. Sourced from /sched/gomaxprocs:threads."},
}

func (GoCollector) collect(add func(family)) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	for _, m := range memstats {
		name, v := "go_memstats_"+m.name, m.v(&ms)
		if m.counter {
			add(counterFamily(name, m.help, v))
		} else {
			add(gaugeFamily(name, m.help, v))
		}
	}
	samples := make([]metrics.Sample, len(runtimeGauges))
	for i, g := range runtimeGauges {
		samples[i].Name = g.metric
	}
	metrics.Read(samples)
	for i, g := range runtimeGauges {
		if samples[i].Value.Kind() == metrics.KindUint64 {
			add(gaugeFamily(g.name, g.help, float64(samples[i].Value.Uint64())))
		}
	}
	add(gaugeFamily("go_goroutines", "Number of goroutines that currently exist.", float64(runtime.NumGoroutine())))
	threads, _ := runtime.ThreadCreateProfile(nil)
	add(gaugeFamily("go_threads", "Number of OS threads created.", float64(threads)))
	add(family{name: "go_info", help: "Information about the Go environment.", typ: "gauge", write: func(w *bufio.Writer) {
		sample(w, "go_info", labelPairs([]string{"version"}, []string{runtime.Version()}), 1)
	}})
	// The pauses' quantiles, as client_golang reads them.
	var gc debug.GCStats
	gc.PauseQuantiles = make([]time.Duration, 5)
	debug.ReadGCStats(&gc)
	add(family{name: "go_gc_duration_seconds", help: "A summary of the wall-time pause (stop-the-world) duration in garbage collection cycles.", typ: "summary",
		write: func(w *bufio.Writer) {
			for i, q := range []string{"0", "0.25", "0.5", "0.75", "1"} {
				sample(w, "go_gc_duration_seconds", `quantile="`+q+`"`, gc.PauseQuantiles[i].Seconds())
			}
			sample(w, "go_gc_duration_seconds_sum", "", gc.PauseTotal.Seconds())
			sample(w, "go_gc_duration_seconds_count", "", float64(gc.NumGC))
		}})
}

// ProcessCollector is the process's metrics as client_golang's
// NewProcessCollector names them, read from /proc; a metric that cannot be
// read (not Linux) is left out, as there.
type ProcessCollector struct{}

// userHZ is the unit of /proc's CPU times and start time.
const userHZ = 100

func (ProcessCollector) collect(add func(family)) {
	if stat, err := os.ReadFile("/proc/self/stat"); err == nil {
		// The fields after the command, which may hold spaces: field 3 on.
		if i := bytes.LastIndexByte(stat, ')'); i > 0 {
			f := strings.Fields(string(stat[i+1:]))
			num := func(n int) float64 { // field n of stat(5)
				v, _ := strconv.ParseFloat(f[n-3], 64)
				return v
			}
			if len(f) >= 22 {
				add(counterFamily("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", (num(14)+num(15))/userHZ))
				add(gaugeFamily("process_virtual_memory_bytes", "Virtual memory size in bytes.", num(23)))
				add(gaugeFamily("process_resident_memory_bytes", "Resident memory size in bytes.", num(24)*float64(os.Getpagesize())))
				if boot, ok := bootTime(); ok {
					add(gaugeFamily("process_start_time_seconds", "Start time of the process since unix epoch in seconds.", boot+num(22)/userHZ))
				}
			}
		}
	}
	if fds, err := os.ReadDir("/proc/self/fd"); err == nil {
		add(gaugeFamily("process_open_fds", "Number of open file descriptors.", float64(len(fds))))
	}
	if limits, err := os.ReadFile("/proc/self/limits"); err == nil {
		if v, ok := softLimit(string(limits), "Max open files"); ok {
			add(gaugeFamily("process_max_fds", "Maximum number of open file descriptors.", v))
		}
		if v, ok := softLimit(string(limits), "Max address space"); ok {
			add(gaugeFamily("process_virtual_memory_max_bytes", "Maximum amount of virtual memory available in bytes.", v))
		}
	}
	if rx, tx, ok := netBytes(); ok {
		add(counterFamily("process_network_receive_bytes_total", "Number of bytes received by the process over the network.", rx))
		add(counterFamily("process_network_transmit_bytes_total", "Number of bytes sent by the process over the network.", tx))
	}
}

// bootTime is the system's boot time (/proc/stat btime), in seconds.
func bootTime() (float64, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, false
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return f, err == nil
		}
	}
	return 0, false
}

// softLimit reads a soft limit of /proc/self/limits; "unlimited" is the
// largest value, as procfs reads it.
func softLimit(limits, name string) (float64, bool) {
	for line := range strings.SplitSeq(limits, "\n") {
		if rest, ok := strings.CutPrefix(line, name); ok {
			f := strings.Fields(rest)
			if len(f) == 0 {
				return 0, false
			}
			if f[0] == "unlimited" {
				return math.MaxUint64, true
			}
			v, err := strconv.ParseFloat(f[0], 64)
			return v, err == nil
		}
	}
	return 0, false
}

// netBytes sums the received and sent bytes of every interface of the
// process's network namespace (/proc/self/net/dev), as procfs does.
func netBytes() (rx, tx float64, ok bool) {
	b, err := os.ReadFile("/proc/self/net/dev")
	if err != nil {
		return 0, 0, false
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		_, counters, found := strings.Cut(line, ":")
		f := strings.Fields(counters)
		if !found || len(f) < 9 {
			continue
		}
		r, err1 := strconv.ParseFloat(f[0], 64)
		t, err2 := strconv.ParseFloat(f[8], 64)
		if err1 == nil && err2 == nil {
			rx, tx, ok = rx+r, tx+t, true
		}
	}
	return rx, tx, ok
}
