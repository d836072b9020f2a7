package agenttest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BuildMarker makes dir/build/MARKER, which a recursive delete of build
// would remove, and returns its path.
func BuildMarker(t testing.TB, dir string) string {
	t.Helper()
	marker := filepath.Join(dir, "build", "MARKER")
	if err := os.MkdirAll(filepath.Dir(marker), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(marker, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	return marker
}

// FileLeft reports as an error of t, naming what and adding log (the
// agent's output) when there is one, that path is missing: a file a
// command the policy allowed had to write, or the marker a denied delete
// had to leave.
func FileLeft(t testing.TB, path, what, log string) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Errorf("%s: %v%s", what, err, logSuffix(log))
	}
}

// NoFileLeft reports as an error of t, as FileLeft does, that path exists:
// what a command the policy refused, or a hook that must not run, would
// have written.
func NoFileLeft(t testing.TB, path, what, log string) {
	t.Helper()
	if _, err := os.Stat(path); err == nil {
		t.Errorf("%s%s", what, logSuffix(log))
	}
}

func logSuffix(log string) string {
	if log == "" {
		return ""
	}
	return "\n" + log
}

// TerraformStandIn writes a stand-in terraform into a fresh directory and
// returns the directory, to put on PATH: it records its arguments in the
// working directory's TERRAFORM_ARGS and prints them, so a test sees what a
// rewriting hook made of the call.
func TerraformStandIn(t testing.TB) string {
	t.Helper()
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "terraform"), []byte("#!/bin/sh\necho \"$@\" > TERRAFORM_ARGS\necho \"terraform $@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// TerraformRanWith reports as an error of t, adding log when there is one,
// that the stand-in terraform did not run in work with the arguments want.
func TerraformRanWith(t testing.TB, work, want, log string) {
	t.Helper()
	args, err := os.ReadFile(filepath.Join(work, "TERRAFORM_ARGS"))
	if err != nil || strings.TrimSpace(string(args)) != want {
		t.Errorf("terraform ran with %q (%v), want %s%s", args, err, want, logSuffix(log))
	}
}
