package hostd

import (
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"
)

// TestSetMemoryLimitFromCgroup_SidecarSoftLimitOrEightyPercentOfTheContainer:
// the runtime's soft limit is SidecarSoftLimit (32 MiB) with a 128Mi cgroup
// limit, with "max" and with no cgroup file (the 48 MiB peak target, docs/benchmarks.md);
// 80% of a container limit lower than that; GOMEMLIMIT wins.
func TestSetMemoryLimitFromCgroup_SidecarSoftLimitOrEightyPercentOfTheContainer(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	dir := t.TempDir()
	write := func(content string) string {
		p := filepath.Join(dir, "memory.max")
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	t.Setenv("GOMEMLIMIT", "")
	for name, c := range map[string]struct {
		path string
		want int64
	}{
		"128Mi":   {write("134217728\n"), SidecarSoftLimit},
		"max":     {write("max\n"), SidecarSoftLimit},
		"missing": {filepath.Join(dir, "absent"), SidecarSoftLimit},
	} {
		debug.SetMemoryLimit(math.MaxInt64)
		if got := SetMemoryLimitFromCgroup(c.path); got != c.want || debug.SetMemoryLimit(-1) != c.want {
			t.Errorf("%s: set %d, runtime %d, want %d", name, got, debug.SetMemoryLimit(-1), c.want)
		}
	}
	if got := SetMemoryLimitFromCgroup(write("33554432\n")); got != 26843545 || debug.SetMemoryLimit(-1) != got {
		t.Errorf("32Mi limit: set %d, runtime %d, want 80%%: 26843545", got, debug.SetMemoryLimit(-1))
	}
	t.Setenv("GOMEMLIMIT", "64MiB")
	debug.SetMemoryLimit(math.MaxInt64)
	if got := SetMemoryLimitFromCgroup(write("134217728\n")); got != 0 || debug.SetMemoryLimit(-1) != math.MaxInt64 {
		t.Errorf("with GOMEMLIMIT set: set %d, want the runtime's own", got)
	}
	if got := RaiseMemoryLimitOverContext(); got != 0 || debug.SetMemoryLimit(-1) != math.MaxInt64 {
		t.Errorf("with GOMEMLIMIT set, the raise set %d", got)
	}
}

// TestRaiseMemoryLimitOverContext_LargeContextKeepsDefaultPace: a context
// whose live heap nearly fills SidecarSoftLimit would have the collector
// running all the time; after the load the limit becomes twice the
// runtime's memory in use, within 80% of the container's limit.
func TestRaiseMemoryLimitOverContext_LargeContextKeepsDefaultPace(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	t.Setenv("GOMEMLIMIT", "")
	cgroup := filepath.Join(t.TempDir(), "memory.max")
	if err := os.WriteFile(cgroup, []byte("268435456\n"), 0o644); err != nil { // 256Mi
		t.Fatal(err)
	}
	if got := SetMemoryLimitFromCgroup(cgroup); got != SidecarSoftLimit {
		t.Fatalf("set %d", got)
	}
	context := make([]byte, 40<<20) // a loaded context of 40 MiB
	for i := range context {
		context[i] = 1
	}
	got := RaiseMemoryLimitOverContext()
	if got < 80<<20 || got > 214748364 || debug.SetMemoryLimit(-1) != got {
		t.Errorf("raised to %d (runtime %d), want twice the 40 MiB in use, at most 80%% of 256Mi", got, debug.SetMemoryLimit(-1))
	}
	runtime.KeepAlive(context)
	// Within the container's share: a 64Mi container caps it at 80%.
	if err := os.WriteFile(cgroup, []byte("67108864\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	SetMemoryLimitFromCgroup(cgroup)
	if got := RaiseMemoryLimitOverContext(); got != 53687091 {
		t.Errorf("64Mi container: raised to %d, want 80%%: 53687091", got)
	}
	runtime.KeepAlive(context)
}
