package hostd

import (
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
)

// TestSetMemoryLimitFromCgroup_TakesEightyPercentOfTheContainerLimit: with a
// 128Mi cgroup limit the runtime's soft limit becomes 80% of it; "max" and a
// missing file change nothing; GOMEMLIMIT wins.
func TestSetMemoryLimitFromCgroup_TakesEightyPercentOfTheContainerLimit(t *testing.T) {
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
	if got := SetMemoryLimitFromCgroup(write("134217728\n")); got != 107374182 || debug.SetMemoryLimit(-1) != got {
		t.Fatalf("128Mi limit: set %d, runtime %d, want 107374182", got, debug.SetMemoryLimit(-1))
	}
	debug.SetMemoryLimit(math.MaxInt64)
	for name, path := range map[string]string{"max": write("max\n"), "missing": filepath.Join(dir, "absent")} {
		if got := SetMemoryLimitFromCgroup(path); got != 0 || debug.SetMemoryLimit(-1) != math.MaxInt64 {
			t.Errorf("%s: set %d", name, got)
		}
	}
	t.Setenv("GOMEMLIMIT", "64MiB")
	if got := SetMemoryLimitFromCgroup(write("134217728\n")); got != 0 {
		t.Errorf("with GOMEMLIMIT set: set %d, want the runtime's own", got)
	}
}
