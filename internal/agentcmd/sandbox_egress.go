package agentcmd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/egress"
)

// egressProxyFlag runs `loadout sandbox` as the egress proxy of a sandboxed
// command (hidden: only startEgressProxy starts it).
const egressProxyFlag = "egress-proxy"

// startEgressProxy starts the proxy that lets a command under s reach
// s.Network.Hosts by name, before the sandbox is applied: the proxy is a
// child of this process, unrestricted, listening on loopback. It returns
// the sandbox to apply (s with the proxy's port allowed) and the command's
// environment. The proxy lives as long as the command or anything it
// started holds the lifeline: a pipe end this process passes on through
// exec; when the last holder exits, the proxy reads EOF and exits too.
func startEgressProxy(ctx context.Context, s *contract.Sandbox, env []string) (*contract.Sandbox, []string, error) {
	if s == nil || s.Network == nil || len(s.Network.Hosts) == 0 {
		return s, env, nil
	}
	self, err := os.Executable()
	if err != nil {
		return nil, nil, fmt.Errorf("starting the egress proxy: %w", err)
	}
	lifeRead, lifeWrite, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	defer lifeRead.Close()
	cmd := exec.CommandContext(ctx, self, "sandbox", "--"+egressProxyFlag, strings.Join(s.Network.Hosts, ","))
	cmd.Stdin, cmd.Stderr = lifeRead, os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("starting the egress proxy: %w", err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	port, perr := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || perr != nil {
		_ = cmd.Process.Kill()
		return nil, nil, fmt.Errorf("the egress proxy did not start (it said %q): %w", line, errors.Join(err, perr))
	}
	// Kept open across exec (no close-on-exec): the command holds it.
	if _, err := unix.FcntlInt(lifeWrite.Fd(), unix.F_SETFD, 0); err != nil {
		return nil, nil, err
	}
	held := *s
	n := *s.Network
	n.ConnectPorts = slices.Sorted(slices.Values(append(slices.Clone(n.ConnectPorts), port)))
	held.Network = &n
	url := "http://127.0.0.1:" + strconv.Itoa(port)
	env = withEnv(env, map[string]string{
		"HTTPS_PROXY": url, "https_proxy": url, "HTTP_PROXY": url, "http_proxy": url,
		"NO_PROXY": "localhost,127.0.0.1,::1", "no_proxy": "localhost,127.0.0.1,::1",
	})
	return &held, env, nil
}

// withEnv is env with set's variables replaced or added.
func withEnv(env []string, set map[string]string) []string {
	out := slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		_, ok := set[k]
		return ok
	})
	for _, k := range slices.Sorted(maps.Keys(set)) {
		out = append(out, k+"="+set[k])
	}
	return out
}

// serveEgressProxy is the proxy process: it listens on loopback, tells its
// parent the port on stdout, and serves until stdin (the lifeline) ends.
func serveEgressProxy(ctx context.Context, rules string, stdin io.Reader, stdout, stderr io.Writer) error {
	l, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	p := &egress.Proxy{Rules: egress.Normal(strings.Split(rules, ",")), Refused: func(t string) {
		fmt.Fprintf(stderr, "%s to %s refused: not in the sandbox's network.hosts\n", egress.RefusalPrefix, t)
	}}
	if _, err := fmt.Fprintln(stdout, l.Addr().(*net.TCPAddr).Port); err != nil {
		return err
	}
	go func() {
		_, _ = io.Copy(io.Discard, stdin)
		l.Close()
	}()
	return p.Serve(l)
}
