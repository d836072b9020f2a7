package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/agentcmd"
	"github.com/loadout-dev/loadout/internal/resources/resourcestest"
	"github.com/loadout-dev/loadout/internal/sandbox"
)

// TestMain lets a test run the real CLI as a child process (the test
// binary with LOADOUT_TEST_MAIN=1 is `loadout`): `loadout sandbox` execs,
// which a test cannot do in its own process.
func TestMain(m *testing.M) {
	if os.Getenv("LOADOUT_TEST_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// loadoutCmd is the CLI as a child process.
func loadoutCmd(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, args...)
	cmd.Env = append(os.Environ(), "LOADOUT_TEST_MAIN=1")
	return cmd
}

// sandboxContext writes the context `loadout preview` publishes for a
// platform extension that lets agents edit tree but never delete in it
// into a directory, as the context volume mounts it.
func sandboxContext(t *testing.T, tree string) string {
	t.Helper()
	return sandboxContextWith(t, tree, "{connectPorts: []}")
}

// sandboxContextWith is sandboxContext with the given network declaration.
func sandboxContextWith(t *testing.T, tree, network string) string {
	t.Helper()
	manifests := resourcestest.Tree(t, map[string]string{"all.yaml": `apiVersion: v1
kind: Namespace
metadata: {name: loadout-system, labels: {loadout.dev/trust: trusted}}
---
apiVersion: loadout.dev/v1alpha1
kind: Workspace
metadata: {name: dev, namespace: team-a}
---
apiVersion: loadout.dev/v1alpha1
kind: Extension
metadata: {name: sandbox, namespace: loadout-system}
spec:
  sandbox:
    filesystem:
      paths:
        - {path: /, access: [read, execute]}
        - {path: ` + tree + `, access: [read, write, create]}
    network: ` + network + `
`})
	dir := t.TempDir()
	for k, v := range previewData(t, "-f", manifests) {
		if err := os.WriteFile(filepath.Join(dir, k), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// `loadout sandbox` holds the command and everything it starts to the
// context's sandbox: rm -rf in a child bash leaves the tree intact while
// an edit in it succeeds.
func TestSandboxCommand_RmRfLeavesATreeDeclaredNoRemove(t *testing.T) {
	if abi := sandbox.ABI(); abi < 4 {
		t.Skipf("Landlock ABI %d: `loadout sandbox` refuses to run here (fail closed)", abi)
	}
	tree := t.TempDir()
	if err := os.WriteFile(filepath.Join(tree, "keep.txt"), []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := sandboxContext(t, tree)
	cmd := loadoutCmd(t, "sandbox", "--from", ctx, "--", "bash", "-c", `echo edited > keep.txt; rm -rf "$PWD"/*; bash -c 'rm -f keep.txt'; echo "sandboxed=$LOADOUT_SANDBOXED"`)
	cmd.Dir = tree
	out, _ := cmd.CombinedOutput()
	b, err := os.ReadFile(filepath.Join(tree, "keep.txt"))
	if err != nil || string(b) != "edited\n" {
		t.Fatalf("keep.txt %q, %v; want it edited and kept\n%s", b, err, out)
	}
	if !strings.Contains(string(out), "Permission denied") || !strings.Contains(string(out), "sandboxed=sha256:") {
		t.Errorf("want the denial and LOADOUT_SANDBOXED in the output:\n%s", out)
	}

	check := loadoutCmd(t, "sandbox", "--from", ctx, "--check")
	out, err = check.Output()
	var c agentcmd.SandboxCheck
	if err != nil || json.Unmarshal(out, &c) != nil || !c.Declared || !c.Enforceable || !c.Runs || c.Sandbox.Network == nil {
		t.Errorf("--check: %v %+v\n%s", err, c, out)
	}
}
