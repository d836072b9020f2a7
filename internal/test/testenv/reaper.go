package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
)

// Assets is the directory of the envtest control plane a test runs:
// KUBEBUILDER_ASSETS, through withReaper's wrappers. envtest takes
// KUBEBUILDER_ASSETS over an Environment's BinaryAssetsDirectory, so Assets
// also points envtest's per-binary overrides (TEST_ASSET_KUBE_APISERVER,
// TEST_ASSET_ETCD) at the wrappers: every Environment the test process
// starts afterwards runs them.
func Assets() (string, error) {
	reaperOnce.Do(func() {
		assets := os.Getenv("KUBEBUILDER_ASSETS")
		if assets == "" {
			reaperErr = ErrNoAssets
			return
		}
		if _, err := os.Stat(filepath.Join(assets, "kube-apiserver")); err != nil {
			reaperErr = fmt.Errorf("KUBEBUILDER_ASSETS=%s has no kube-apiserver: %w; %w", assets, err, ErrNoAssets)
			return
		}
		if reaperDir, reaperErr = withReaper(assets); reaperErr != nil {
			return
		}
		for name, env := range map[string]string{"kube-apiserver": "TEST_ASSET_KUBE_APISERVER", "etcd": "TEST_ASSET_ETCD"} {
			if _, set := os.LookupEnv(env); !set {
				reaperErr = os.Setenv(env, filepath.Join(reaperDir, name))
			}
		}
	})
	return reaperDir, reaperErr
}

// One wrapper directory a test process: its wrappers name the same binaries.
var (
	reaperOnce sync.Once
	reaperDir  string
	reaperErr  error
)

// withReaper returns a directory of wrappers of the control plane's binaries that
// run them under `setpriv --pdeathsig KILL`: the kernel kills kube-apiserver
// and etcd when the test process dies, however it dies. A test binary that
// hits go test's -timeout panics and exits without running its cleanups,
// and one killed by an interrupt runs none either; without the wrappers
// their API server and etcd went on running, holding ports and memory, on
// a machine that runs the next suite. Where setpriv (util-linux) is missing
// the binaries run as they are.
func withReaper(assets string) (dir string, err error) {
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		return assets, nil
	}
	dir, err = os.MkdirTemp("", "loadout-envtest-bin-")
	if err != nil {
		return "", err
	}
	for _, name := range []string{"kube-apiserver", "etcd"} {
		script := fmt.Sprintf("#!/bin/sh\n# the test process's death kills it too (internal/test/testenv)\nexec %q --pdeathsig KILL -- %q \"$@\"\n",
			setpriv, filepath.Join(assets, name))
		if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil { //nolint:gosec // an executable wrapper
			_ = os.RemoveAll(dir)
			return "", err
		}
	}
	return dir, nil
}
