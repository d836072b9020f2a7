package agenttest

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/resources/resourcestest"
	"github.com/loadout-dev/loadout/internal/test/shellcorpus"
)

// ProtectedTree is shellcorpus's scratch tree (x holds files two levels
// deep) outside /tmp, so a sandbox that makes /tmp removable does not
// reach it. It returns the tree and the paths under x, to compare with
// TreeIntact.
func ProtectedTree(t testing.TB) (dir string, x []string) {
	t.Helper()
	// Not t.TempDir: that is under /tmp, which the agents need removable.
	dir, err := os.MkdirTemp("/var/tmp", "loadout-protected-") //nolint:usetesting // see above
	if err != nil {
		t.Skipf("no /var/tmp for a tree outside /tmp: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	shellcorpus.WriteScratch(t, dir)
	return dir, shellcorpus.Tree(t, filepath.Join(dir, "x"))
}

// TreeIntact reports as errors of t every path under dir/x that is gone
// (x is what ProtectedTree returned), with detail (the agent's output).
func TreeIntact(t testing.TB, dir string, x []string, detail any) {
	t.Helper()
	now := shellcorpus.Tree(t, filepath.Join(dir, "x"))
	for _, p := range x {
		if !slices.Contains(now, p) {
			t.Errorf("%s is gone: the tree declared no-remove lost it\n%v", p, detail)
		}
	}
}

// Runnable are the deleting lines of shellcorpus whose programs are here.
func Runnable(lines []shellcorpus.Line) []shellcorpus.Line {
	var out []shellcorpus.Line
	for _, l := range lines {
		if !slices.ContainsFunc(l.Needs, func(p string) bool { _, err := exec.LookPath(p); return err != nil }) {
			out = append(out, l)
		}
	}
	return out
}

// SandboxedSamples is the samples' context with a platform extension that
// lets agents read and run everything, write and delete in /tmp (where
// agents keep their sessions), and edit protected but never delete in it;
// extra are more lines of its spec.sandbox (indented four spaces).
func SandboxedSamples(t testing.TB, protected string, extra ...string) map[string]string {
	t.Helper()
	ext := resourcestest.Tree(t, map[string]string{"sandbox.yaml": `apiVersion: loadout.dev/v1alpha1
kind: Extension
metadata: {name: sandbox, namespace: loadout-system}
spec:
  sandbox:
    filesystem:
      paths:
        - {path: /, access: [read, execute]}
        - {path: /tmp, access: [read, write, create, remove, execute]}
        - {path: ` + protected + `, access: [read, write, create, execute]}
` + strings.Join(extra, "")})
	return PreviewSamples(t, filepath.Join(RepoRoot(), "config", "samples"), ext)
}
