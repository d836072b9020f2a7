package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/test/shellcorpus"
)

// The test binary doubles as the sandbox: `TEST sandbox-exec POLICY --
// COMMAND...` restricts itself to POLICY (JSON) with Exec, as `loadout
// sandbox` does, and execs COMMAND.
func TestMain(m *testing.M) {
	if len(os.Args) > 3 && os.Args[1] == "sandbox-exec" && os.Args[3] == "--" {
		var s contract.Sandbox
		if err := json.Unmarshal([]byte(os.Args[2]), &s); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(125)
		}
		err := Exec(&s, os.Args[4:], os.Environ())
		fmt.Fprintln(os.Stderr, "sandbox:", err)
		os.Exit(126)
	}
	os.Exit(m.Run())
}

// needLandlock skips where the kernel offers no Landlock ABI that can hold
// a filesystem and network sandbox, saying so.
func needLandlock(t *testing.T) {
	t.Helper()
	if abi := ABI(); abi < abiNetwork {
		t.Skipf("Landlock ABI %d: the kernel cannot hold the sandbox (ABI %d needed); Restrict fails closed there (TestCheck_FailsClosedOnAnOlderKernel)", abi, abiNetwork)
	}
}

// wrapIn wraps argv in the test binary's sandbox-exec with s.
func wrapIn(t *testing.T, s *contract.Sandbox, argv []string) []string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{self, "sandbox-exec", string(b), "--"}, argv...)
}

// editNeverDelete is the policy of the tests: the whole system readable and
// executable, the checkout dir editable (read, write, create, execute) but
// nothing in it removable, and home, a temporary directory and Go's build
// cache fully writable (commands make and remove temporary files there).
func editNeverDelete(t *testing.T, dir, home, tmp string, ports ...int) *contract.Sandbox {
	t.Helper()
	paths := []contract.SandboxPath{
		{Path: "/", Access: []string{"execute", "read"}},
		{Path: dir, Access: []string{"create", "execute", "read", "write"}},
		{Path: home, Access: []string{"create", "execute", "read", "remove", "write"}},
		{Path: tmp, Access: []string{"create", "execute", "read", "remove", "write"}},
	}
	if out, err := exec.Command("go", "env", "GOCACHE").Output(); err == nil && strings.TrimSpace(string(out)) != "" {
		paths = append(paths, contract.SandboxPath{Path: strings.TrimSpace(string(out)), Access: []string{"create", "read", "remove", "write"}})
	}
	if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
		// git replaces its index and writes objects by rename.
		paths = append(paths, contract.SandboxPath{Path: filepath.Join(dir, ".git"), Access: []string{"create", "read", "remove", "write"}})
	}
	return &contract.Sandbox{
		Filesystem:        &contract.SandboxFilesystem{Paths: paths},
		Network:           &contract.SandboxNetwork{ConnectPorts: append([]int{}, ports...)},
		UnsandboxedAgents: contract.UnsandboxedRefuse,
	}
}

// sandboxed wraps a scratch tree's bash line in editNeverDelete, with HOME
// and TMPDIR in their own writable directories.
func sandboxed(t *testing.T) shellcorpus.Wrap {
	t.Helper()
	return func(dir string, argv []string) []string {
		home, tmp := t.TempDir(), t.TempDir()
		env := []string{"env", "HOME=" + home, "TMPDIR=" + tmp, "GOTOOLCHAIN=local", "GOFLAGS=-mod=mod -buildvcs=false", "npm_config_cache=" + home + "/.npm"}
		return wrapIn(t, editNeverDelete(t, dir, home, tmp), append(env, argv...))
	}
}

func runnable(tc shellcorpus.Line) bool {
	return !slices.ContainsFunc(tc.Needs, func(p string) bool { _, err := exec.LookPath(p); return err != nil })
}

// Every line of the sandbox corpus (shellcorpus.Issue42) that deleted a tree past the guard, and every
// spelling of rm -r the guard's corpus holds, run by real bash under a
// sandbox that declares the tree editable but not removable: the tree
// survives all of them. Without the sandbox each one deletes it (the
// guard's own test proves that for its corpus; here for the sandbox corpus's).
func TestSandbox_NoLineDeletesATreeDeclaredNoRemove(t *testing.T) {
	needLandlock(t)
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	var lines []shellcorpus.Line
	for _, tc := range append(slices.Clone(shellcorpus.Issue42), shellcorpus.Guard...) {
		if tc.Deletes && !tc.Judged && runnable(tc) {
			lines = append(lines, tc)
		}
	}
	if len(lines) < 60 {
		t.Fatalf("%d deleting lines runnable here, want at least 60", len(lines))
	}
	for _, tc := range shellcorpus.Issue42 {
		if runnable(tc) && !shellcorpus.Run(t, bash, tc, nil).Gone {
			t.Errorf("%q deletes nothing unsandboxed: it proves nothing here", tc.Line)
		}
	}
	for _, tc := range lines {
		if r := shellcorpus.Run(t, bash, tc, sandboxed(t)); r.Gone {
			t.Errorf("%q deleted part of the tree under the sandbox (%v): %s", tc.Line, r.Err, r.Output)
		}
	}
}

// Under the same sandbox, edits in the tree succeed: overwrite, append,
// truncate, create a file and a directory.
func TestSandbox_EditsInTheTreeSucceed(t *testing.T) {
	needLandlock(t)
	bash, _ := exec.LookPath("bash")
	line := "echo new > x/e.txt && echo more >> x/a/d.txt && : > x/a/b/c.txt && mkdir x/n && echo f > x/n/f.txt && cat x/e.txt x/n/f.txt"
	r := shellcorpus.Run(t, bash, shellcorpus.Line{Line: line}, sandboxed(t))
	if r.Err != nil || r.Output != "new\nf" {
		t.Fatalf("edits failed under the sandbox: %v: %s", r.Err, r.Output)
	}
	if b, _ := os.ReadFile(filepath.Join(r.Dir, "x/a/d.txt")); !strings.HasSuffix(string(b), "more\n") {
		t.Errorf("append lost: %q", b)
	}
}

// A write outside the declared paths fails with EACCES, and so does a
// write to a file the declaration makes read-only.
func TestSandbox_WriteOutsideDeclaredPathsFails(t *testing.T) {
	needLandlock(t)
	bash, _ := exec.LookPath("bash")
	outside := t.TempDir()
	for _, line := range []string{
		"echo x > " + outside + "/escape",
		"cp README " + outside + "/",
		"mkdir " + outside + "/d",
		"echo x >> /etc/hostname",
	} {
		r := shellcorpus.Run(t, bash, shellcorpus.Line{Line: line}, sandboxed(t))
		if r.Err == nil || !strings.Contains(r.Output, "Permission denied") {
			t.Errorf("%q: %v %s; want Permission denied", line, r.Err, r.Output)
		}
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("written outside the declared paths: %v", entries)
	}
}

// A TCP connect to a declared port succeeds, one to any other port fails;
// declared "no network", nothing connects.
func TestSandbox_ConnectOnlyToDeclaredPorts(t *testing.T) {
	needLandlock(t)
	listen := func() (net.Listener, int) {
		l, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
		return l, l.Addr().(*net.TCPAddr).Port
	}
	_, allowed := listen()
	_, other := listen()
	connect := func(s *contract.Sandbox, port int) error {
		line := fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d", port)
		out, err := exec.Command(wrapIn(t, s, []string{"bash", "-c", line})[0], wrapIn(t, s, []string{"bash", "-c", line})[1:]...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("%v: %s", err, out)
		}
		return nil
	}
	dir, home, tmp := t.TempDir(), t.TempDir(), t.TempDir()
	if err := connect(editNeverDelete(t, dir, home, tmp, allowed), allowed); err != nil {
		t.Errorf("connect to the declared port %d: %v", allowed, err)
	}
	if err := connect(editNeverDelete(t, dir, home, tmp, allowed), other); err == nil || !strings.Contains(err.Error(), "Permission denied") {
		t.Errorf("connect to the undeclared port %d: %v; want Permission denied", other, err)
	}
	if err := connect(editNeverDelete(t, dir, home, tmp), allowed); err == nil {
		t.Errorf("no network declared, connect to %d succeeded", allowed)
	}
	if err := connect(&contract.Sandbox{Filesystem: editNeverDelete(t, dir, home, tmp).Filesystem, UnsandboxedAgents: "Refuse"}, other); err != nil {
		t.Errorf("network not restricted, connect to %d: %v", other, err)
	}
}

// At least 95% of the everyday corpus runs unchanged under the sandbox
// (and every line runs without it).
func TestSandbox_EverydayCommandsRun(t *testing.T) {
	needLandlock(t)
	bash, _ := exec.LookPath("bash")
	var ran, failed []string
	for _, tc := range shellcorpus.Everyday {
		if !runnable(tc) {
			t.Logf("%q: skipped (needs %v)", tc.Line, tc.Needs)
			continue
		}
		ran = append(ran, tc.Line)
		if r := shellcorpus.Run(t, bash, tc, sandboxed(t)); r.Err != nil {
			failed = append(failed, tc.Line)
			t.Logf("%q failed under the sandbox: %v: %s", tc.Line, r.Err, r.Output)
			if plain := shellcorpus.Run(t, bash, tc, nil); plain.Err != nil {
				t.Errorf("%q fails without the sandbox too: %v: %s", tc.Line, plain.Err, plain.Output)
			}
		}
	}
	if len(ran) < 40 {
		t.Fatalf("only %d everyday lines runnable here, want at least 40", len(ran))
	}
	ok := len(ran) - len(failed)
	t.Logf("everyday corpus: %d of %d lines ran under the sandbox (%.1f%%)", ok, len(ran), 100*float64(ok)/float64(len(ran)))
	if ok*100 < 95*len(ran) {
		t.Errorf("%d of %d everyday lines ran under the sandbox, want at least 95%%: failed %q", ok, len(ran), failed)
	}
}

// Where the kernel cannot hold what is declared, Check names why, and
// Restrict would fail closed rather than enforce less.
func TestCheck_FailsClosedOnAnOlderKernel(t *testing.T) {
	fs := &contract.Sandbox{Filesystem: &contract.SandboxFilesystem{Paths: []contract.SandboxPath{{Path: "/", Access: []string{"read"}}}}}
	netOnly := &contract.Sandbox{Network: &contract.SandboxNetwork{}}
	for _, tc := range []struct {
		s    *contract.Sandbox
		abi  int
		want string
	}{
		{fs, 0, "filesystem rights need Landlock ABI 3 or later (file truncation); this kernel offers no Landlock"},
		{fs, 2, "this kernel offers ABI 2"},
		{netOnly, 3, "network egress by port needs Landlock ABI 4 or later"},
	} {
		err := Check(tc.s, tc.abi)
		var u *UnenforceableError
		if !errors.As(err, &u) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ABI %d: %v; want an UnenforceableError saying %q", tc.abi, err, tc.want)
		}
	}
	if err := Check(fs, 3); err != nil {
		t.Errorf("ABI 3 holds a filesystem sandbox: %v", err)
	}
	if err := Check(nil, 0); err != nil {
		t.Errorf("nothing declared needs nothing: %v", err)
	}
}
