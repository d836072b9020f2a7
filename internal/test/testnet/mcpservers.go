package testnet

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// EverythingServer is a running @modelcontextprotocol/server-everything
// (the MCP project's reference server, pinned by test/mcpservers's
// package-lock.json) on streamable HTTP.
type EverythingServer struct {
	// URL is its MCP endpoint (http://127.0.0.1:PORT/mcp).
	URL  string
	addr string
	cmd  *exec.Cmd
}

// StartEverything starts the pinned server-everything on a free loopback
// port and waits until it accepts connections; the test's cleanup stops it.
// The package comes from $LOADOUT_MCP_SERVERS (`make test` sets it to
// test/mcpservers/node_modules after `make mcp-servers`), else from that
// directory when installed; when the variable is set the package must be
// there, otherwise a missing install skips the test with the command that
// installs it.
func StartEverything(t testing.TB) *EverythingServer {
	t.Helper()
	dir := os.Getenv("LOADOUT_MCP_SERVERS")
	required := dir != ""
	if dir == "" {
		dir = filepath.Join(repoRoot(t), "test", "mcpservers", "node_modules")
	}
	entry := filepath.Join(dir, "@modelcontextprotocol", "server-everything", "dist", "index.js")
	if _, err := os.Stat(entry); err != nil {
		if required {
			t.Fatalf("server-everything is not installed in $LOADOUT_MCP_SERVERS=%s: run make mcp-servers", dir)
		}
		t.Skipf("server-everything is not installed (%v): run make mcp-servers", err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skipf("node is not installed: %v", err)
	}
	s := &EverythingServer{addr: FreeAddr(t)}
	s.URL = "http://" + s.addr + "/mcp"
	s.start(t, node, entry)
	t.Cleanup(s.Stop)
	return s
}

func (s *EverythingServer) start(t testing.TB, node, entry string) {
	t.Helper()
	_, port, _ := net.SplitHostPort(s.addr)
	cmd := exec.Command(node, entry, "streamableHttp")
	cmd.Env = append(os.Environ(), "PORT="+port)
	cmd.Stdout, cmd.Stderr = nil, nil
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start server-everything: %v", err)
	}
	s.cmd = cmd
	WaitListening(t, s.addr)
}

// Stop ends the server (a call to it then finds nobody listening).
func (s *EverythingServer) Stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	_ = s.cmd.Wait()
	s.cmd = nil
}

// WaitListening waits, for at most 30 seconds, until addr accepts a TCP
// connection.
func WaitListening(t testing.TB, addr string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			_ = c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing listens on %s after 30s", addr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func repoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal(fmt.Errorf("no go.mod above the test's directory"))
		}
		dir = parent
	}
}
