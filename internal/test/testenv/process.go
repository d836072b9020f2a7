package testenv

import (
	"os"
	"os/exec"
	"time"
)

// Interrupt asks cmd's process to stop with an interrupt and waits for it as
// WaitOrKill does.
func Interrupt(cmd *exec.Cmd, grace time.Duration) {
	_ = cmd.Process.Signal(os.Interrupt)
	WaitOrKill(cmd, grace)
}

// WaitOrKill waits for cmd, which was asked to stop, to exit; a process still
// running after grace is killed, so that a stuck one cannot hang the test.
func WaitOrKill(cmd *exec.Cmd, grace time.Duration) {
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(grace):
		_ = cmd.Process.Kill()
		<-done
	}
}
