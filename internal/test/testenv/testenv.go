package testenv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// ErrNoAssets says where the control plane comes from when it is missing.
var ErrNoAssets = errors.New("KUBEBUILDER_ASSETS is not set: the envtest control plane is built from Go modules " +
	"by `make envtest` (which prints its directory); run the tests with `make test`, or " +
	"`KUBEBUILDER_ASSETS=$(make -s envtest) go test ./...`")

// RepoRoot returns the repository root, found from this source file so that
// tests in any package can locate config/.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..") // internal/test/testenv
}

// Start starts kube-apiserver and etcd with the Loadout CRDs installed; build
// clients with kubescheme.New(). Options adjust the
// environment before it starts (test/hardening pins the API server's
// certificate directory so it can stop and restart it). Call Stop on the
// returned environment when done.
func Start(options ...func(*envtest.Environment)) (*envtest.Environment, *rest.Config, error) {
	bin, err := Assets()
	if err != nil {
		return nil, nil, err
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(RepoRoot(), "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		BinaryAssetsDirectory: bin,
	}
	for _, o := range options {
		o(env)
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, nil, fmt.Errorf("starting envtest from %s: %w", os.Getenv("KUBEBUILDER_ASSETS"), err)
	}
	return env, cfg, nil
}

// StartFor is Start for one test: it fails t when the control plane does
// not start, and stops it when the test ends.
func StartFor(t testing.TB, options ...func(*envtest.Environment)) *rest.Config {
	t.Helper()
	env, cfg, err := Start(options...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	return cfg
}

// WriteKubeconfig writes u's kubeconfig to a fresh file and returns its path,
// for the tests that run kubectl or helm against the control plane.
func WriteKubeconfig(t testing.TB, u *envtest.AuthenticatedUser) string {
	t.Helper()
	kc, err := u.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	return TempFile(t, "kubeconfig", kc, 0o600)
}

// TempFile writes data with perm to name in a fresh temporary directory of
// t and returns its path.
func TempFile(t testing.TB, name string, data []byte, perm os.FileMode) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, perm); err != nil {
		t.Fatal(err)
	}
	return path
}
