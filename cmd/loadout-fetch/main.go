// Command loadout-fetch is the sidecar's fetch helper: loadout-hostd runs
// it once per fill of an external skill source, with a request as JSON on
// stdin (internal/fetchhelper), and it fetches the source from its
// registry or git host into the cache directory (internal/sources) and
// answers on stdout. It exists so that the sidecar, which runs for the
// pod's whole life, does not carry go-git and go-containerregistry in its
// memory: this process lives for one fetch. It verifies as it fetches, but
// the sidecar trusts none of it and verifies the cache itself.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/loadout-dev/loadout/internal/fetchhelper"
	"github.com/loadout-dev/loadout/internal/sources"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	err := fetchhelper.Serve(ctx, os.Stdin, os.Stdout, sources.LoadFiller)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		os.Exit(1)
	}
}
