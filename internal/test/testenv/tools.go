package testenv

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
)

// makefilePin is the version the Makefile pins in `NAME ?= version`.
func makefilePin(t testing.TB, name string) string {
	t.Helper()
	makefile, err := os.ReadFile(filepath.Join(RepoRoot(), "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^` + name + ` \?= (\S+)$`).FindSubmatch(makefile)
	if m == nil {
		t.Fatalf("Makefile: no %s pin", name)
	}
	return string(m[1])
}

// run runs cmd in the repository root and returns its stdout; a failure
// fails the test with stderr.
func run(t testing.TB, cmd *exec.Cmd) []byte {
	t.Helper()
	cmd.Dir = RepoRoot()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s%s", cmd, err, out, stderr.String())
	}
	return out
}

// KustomizeBuild runs `kustomize build dir` (dir relative to the repository)
// with $KUSTOMIZE, the Makefile's ./bin/kustomize-<version>, or `go run` of
// the version the Makefile pins.
func KustomizeBuild(t testing.TB, dir string) []byte {
	t.Helper()
	version := makefilePin(t, "KUSTOMIZE_VERSION")
	switch bin := filepath.Join(RepoRoot(), "bin", "kustomize-"+version); {
	case os.Getenv("KUSTOMIZE") != "":
		return run(t, exec.Command(os.Getenv("KUSTOMIZE"), "build", dir))
	case fileExists(bin):
		return run(t, exec.Command(bin, "build", dir))
	default:
		return run(t, exec.Command("go", "run", "sigs.k8s.io/kustomize/kustomize/v5@"+version, "build", dir))
	}
}

// HelmBinary is $HELM or the Makefile's ./bin/helm-<version> (`make helm`
// builds it from Go modules; `make test` does so first). Without either the
// test fails saying so: building Helm takes minutes, too long to hide in a
// test.
func HelmBinary(t testing.TB) string {
	t.Helper()
	if h := os.Getenv("HELM"); h != "" {
		return h
	}
	bin := filepath.Join(RepoRoot(), "bin", "helm-"+makefilePin(t, "HELM_VERSION"))
	if !fileExists(bin) {
		t.Fatalf("%s is missing: run `make helm` (or `make test`, which builds it), or set $HELM", bin)
	}
	return bin
}

// Helm runs helm with args in the repository root and returns its stdout.
func Helm(t testing.TB, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(HelmBinary(t), args...)
	// Keep helm's caches and config out of $HOME.
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+filepath.Join(home, "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(home, "config"), "HELM_DATA_HOME="+filepath.Join(home, "data"))
	return run(t, cmd)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
