package buildinfo_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/buildinfo"
	"github.com/loadout-dev/loadout/internal/test/testenv"
)

func TestGet_UnstampedBuildSaysDev(t *testing.T) {
	i := buildinfo.Get()
	if i.Version != "dev" || i.Commit != "unknown" || i.BuildDate != "unknown" {
		t.Errorf("Get() = %+v, want the unstamped defaults dev/unknown/unknown", i)
	}
	if !strings.HasPrefix(i.String(), "dev (commit unknown, built unknown, go") {
		t.Errorf("String() = %q", i.String())
	}
}

// The binaries print exactly what the Makefile's -ldflags stamp: this builds
// the manager, the CLI and the samples' review-notes with the Makefile's
// LDFLAGS variable names and runs their version commands.
func TestBinaries_PrintTheStampedVersionCommitAndDate(t *testing.T) {
	if testing.Short() {
		t.Skip("builds three binaries")
	}
	const pkg = "github.com/loadout-dev/loadout/internal/buildinfo"
	ldflags := "-X " + pkg + ".version=v9.8.7-test -X " + pkg + ".commit=0123456789abcdef -X " + pkg + ".date=2026-01-02T03:04:05Z"
	dir := t.TempDir()
	root := testenv.RepoRoot()
	for pkg, args := range map[string][]string{
		"./cmd/manager":          {"--version"},
		"./cmd/loadout":          {"version"},
		"./samples/review-notes": {"--version"},
	} {
		name := filepath.Base(pkg)
		bin := filepath.Join(dir, name)
		build := exec.Command("go", "build", "-ldflags", ldflags, "-o", bin, pkg)
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
		out, err := exec.Command(bin, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
		for _, want := range []string{"v9.8.7-test", "commit 0123456789abcdef", "built 2026-01-02T03:04:05Z"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("%s %v printed %q, want it to contain %q", name, args, out, want)
			}
		}
	}
}
