package demo

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"
)

// process is a child process the demo started and must stop.
type process struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error // Wait's result, set before done closes
}

// startProcess starts bin with args, its output going to logPath.
func startProcess(name, logPath, bin string, args, env []string) (*process, error) {
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Env = append(os.Environ(), env...)
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting %s (%s): %w", name, bin, err)
	}
	p := &process{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// exited reports whether the process has ended, and how.
func (p *process) exited() (bool, error) {
	select {
	case <-p.done:
		if p.err == nil {
			return true, errExitedCleanly
		}
		return true, p.err
	default:
		return false, nil
	}
}

// errExitedCleanly is how exited reports a process that ended with status
// 0: for a server the demo waits on, that is a failure too.
var errExitedCleanly = errors.New("exit status 0")

// stop interrupts the process, waits for it, and kills it after grace.
func (p *process) stop(grace time.Duration) error {
	if done, _ := p.exited(); done {
		return nil
	}
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		_ = p.cmd.Process.Kill()
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("%s (pid %d) did not stop within %s and was killed", p.name, p.cmd.Process.Pid, grace)
	}
}

// logTail returns the last lines of the process's log, for error messages.
func (p *process) logTail(lines int) string {
	data, err := os.ReadFile(p.log)
	if err != nil {
		return ""
	}
	all := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}

// waitHTTP polls url until it answers 200, the process exits or timeout passes.
func (p *process) waitHTTP(url string, timeout time.Duration) error {
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(timeout)
	for {
		if done, err := p.exited(); done {
			return fmt.Errorf("%s exited before it was ready (%w); last log lines of %s:\n%s", p.name, err, p.log, p.logTail(20))
		}
		resp, err := client.Get(url)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: %s not ready after %s; last log lines of %s:\n%s", p.name, url, timeout, p.log, p.logTail(20))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// freeAddr returns a loopback address with a port free right now.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("finding a free port on 127.0.0.1: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}
