package testenv

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// StartCommand runs a cobra command in process (its real listeners) with
// args until the test ends, then cancels it and reports an error it
// returns, or that it did not stop within 10 seconds.
func StartCommand(t testing.TB, cmd *cobra.Command, args ...string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd.SetArgs(args)
	cmd.SetErr(io.Discard)
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("%s %v after its context ended: %v", cmd.Name(), args, err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("%s %v did not stop", cmd.Name(), args)
		}
	})
}
