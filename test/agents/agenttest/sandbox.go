package agenttest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/loadout-dev/loadout/internal/resources/resourcestest"
)

// protectedFiles are the files of ProtectedTree, relative to it.
var protectedFiles = []string{"x/a/b/c.txt", "x/a/d.txt", "x/e.txt"}

// ProtectedTree is a scratch tree x (files two levels deep, each "keep\n")
// outside /tmp, so a sandbox that makes /tmp removable does not reach it.
func ProtectedTree(t testing.TB) string {
	t.Helper()
	// Not t.TempDir: that is under /tmp, which the agents need removable.
	dir, err := os.MkdirTemp("/var/tmp", "loadout-protected-") //nolint:usetesting // see above
	if err != nil {
		t.Skipf("no /var/tmp for a tree outside /tmp: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	for _, f := range protectedFiles {
		resourcestest.WriteTree(t, dir, map[string]string{f: "keep\n"})
	}
	return dir
}

// TreeIntact reports as errors of t every file of ProtectedTree dir that is
// gone or changed, with detail (the agent's output).
func TreeIntact(t testing.TB, dir string, detail any) {
	t.Helper()
	for _, f := range protectedFiles {
		if b, err := os.ReadFile(filepath.Join(dir, f)); err != nil || string(b) != "keep\n" {
			t.Errorf("%s: %q, %v: the tree declared no-remove lost it\n%v", f, b, err, detail)
		}
	}
}

// SandboxedSamples is the samples' context with a platform extension that
// lets agents read and run everything, write and delete in /tmp (where
// agents keep their sessions), and edit protected but never delete in it.
func SandboxedSamples(t testing.TB, protected string) map[string]string {
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
`})
	return PreviewSamples(t, filepath.Join(RepoRoot(), "config", "samples"), ext)
}
