package agenttest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var (
	privateEtcOnce sync.Once
	privateEtc     bool
)

// PrivateEtcAllowed reports whether this machine can give a process its own
// /etc/<name> through WithPrivateEtc (mount namespaces: root, and a
// container that allows them). $LOADOUT_AGENT_INSTALL=workstation says no,
// to test the agents' fallback installs.
func PrivateEtcAllowed() bool {
	privateEtcOnce.Do(func() {
		privateEtc = os.Getenv("LOADOUT_AGENT_INSTALL") != "workstation" &&
			exec.Command("unshare", "--mount", "--", "true").Run() == nil
	})
	return privateEtc
}

// WithPrivateEtc returns argv run so that it sees dir as /etc/<name>, where
// agents read what a platform manages (/etc/codex, /etc/claude-code): in a
// private mount namespace, /etc is an overlay whose upper layer holds only
// the link <name> -> dir, so the test installs managed files without
// touching the machine's /etc and whether or not /etc/<name> exists. Call
// it only when PrivateEtcAllowed.
func WithPrivateEtc(t testing.TB, name, dir string, argv []string) []string {
	t.Helper()
	overlay := t.TempDir()
	for _, d := range []string{"upper", "work"} {
		if err := os.Mkdir(filepath.Join(overlay, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(dir, filepath.Join(overlay, "upper", name)); err != nil {
		t.Fatal(err)
	}
	mount := fmt.Sprintf(`mount -t overlay overlay -o lowerdir=/etc,upperdir=%s/upper,workdir=%s/work /etc && exec "$0" "$@"`, overlay, overlay)
	return append([]string{"unshare", "--mount", "--", "sh", "-c", mount}, argv...)
}
