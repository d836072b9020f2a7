package testenv

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A test binary that dies mid-test (go test's -timeout panics and exits
// without running cleanups) takes its control plane with it: the kernel
// kills kube-apiserver and etcd through the wrappers' parent-death signal.
func TestStart_ControlPlaneDiesWithATestThatTimesOut(t *testing.T) {
	if os.Getenv("LOADOUT_REAPER_CHILD") != "" {
		// The child: start a control plane, say where it is, then hang
		// until go test's -timeout panics.
		env, _, err := Start()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(os.Getenv("LOADOUT_REAPER_CHILD"), []byte(env.ControlPlane.APIServer.CertDir), 0o600); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Hour)
		return
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("setpriv (util-linux) is not installed: the control plane runs without its parent-death signal")
	}
	if _, err := Assets(); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(t.TempDir(), "certdir")
	child := exec.Command(os.Args[0], "-test.run=^TestStart_ControlPlaneDiesWithATestThatTimesOut$", "-test.timeout=40s")
	child.Env = append(os.Environ(), "LOADOUT_REAPER_CHILD="+marker)
	out, err := child.CombinedOutput()
	if err == nil || !bytes.Contains(out, []byte("test timed out")) {
		t.Fatalf("the child did not time out: %v\n%s", err, out)
	}
	certDir, err := os.ReadFile(marker)
	if err != nil || len(certDir) == 0 {
		t.Fatalf("the child never started its control plane: %v\n%s", err, out)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		left := processesNaming(t, string(certDir))
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes of the dead test's control plane still run: %v", left)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// processesNaming lists the command lines of the processes whose arguments
// contain s.
func processesNaming(t *testing.T, s string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	var found []string
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(cmdline, []byte(s)) {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if strings.Contains(string(stat), ") Z ") {
			continue // a zombie has exited; init reaps it
		}
		found = append(found, e.Name()+": "+strings.ReplaceAll(string(cmdline), "\x00", " "))
	}
	return found
}
