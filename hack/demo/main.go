// Command demo runs Loadout end to end on a local control plane that it
// starts and stops itself; `make demo` builds what it needs and runs it.
//
//	go run ./hack/demo --assets "$(bash hack/envtest/build.sh)" [--keep]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	crzap "sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/loadout-dev/loadout/internal/test/demo"
)

func main() {
	os.Exit(run())
}

func run() int {
	o := demo.Options{Out: os.Stdout}
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: demo [flags]

Starts kube-apiserver and etcd (the envtest binaries in --assets), installs the
Loadout CRDs and the trust policy, starts the manager binary, applies
config/samples, waits for Workspace team-a/dev to be Ready, prints what it
published, and calls a hostd sidecar fed from the published ConfigMap with an
allowed and a denied tool call; with --pi, a real Pi session (scripted model)
through the Pi package then lists the Workspace's skills and shows a platform
hook denying its bash call. Then the tour: a headless agent's ask becomes an
Approval that alice approves with loadout approve (its requester may not),
an MCP server's tool runs through hostd behind a hook that denies one call,
the same Workspace is written for Claude Code and Codex, the decision ledger
is verified, loadout test catches a weakened guard, and next steps follow.
Every process and temporary directory it creates is removed when it ends,
also on Ctrl-C.

Flags:
`)
		fs.PrintDefaults()
	}
	fs.StringVar(&o.Assets, "assets", os.Getenv("KUBEBUILDER_ASSETS"), "directory with the kube-apiserver and etcd binaries (`make envtest` prints it)")
	fs.StringVar(&o.Manager, "manager", "bin/manager", "the manager binary")
	fs.StringVar(&o.Loadout, "loadout", "bin/loadout", "the loadout CLI binary (runs hostd)")
	fs.StringVar(&o.ReviewNotes, "review-notes", "bin/review-notes", "the samples' review-notes binary (the Service of the review_note tool)")
	fs.StringVar(&o.RepoRoot, "repo-root", ".", "the repository root (config/ is read from it)")
	fs.BoolVar(&o.Keep, "keep", false, "keep everything running after the demo, with a kubeconfig for kubectl, until Ctrl-C")
	fs.BoolVar(&o.NoKubectl, "no-kubectl", false, "print the `kubectl get loadout -A` table through client-go even if kubectl is installed")
	fs.StringVar(&o.Pi, "pi", "", "the Pi package directory (integrations/pi, npm-installed): also run a Pi session (scripted model) on the Workspace")
	fs.DurationVar(&o.ReadyTimeout, "ready-timeout", 2*time.Minute, "how long to wait for the Workspace to be Ready")
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if o.Assets == "" {
		fmt.Fprintln(os.Stderr, "demo: --assets (or KUBEBUILDER_ASSETS) is required: run `make demo`, which builds the control plane")
		return 2
	}
	// envtest logs its progress through controller-runtime; the demo prints
	// its own steps and returns every failure as an error.
	ctrllog.SetLogger(crzap.New(crzap.WriteTo(io.Discard)))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if _, err := demo.Run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		if ctx.Err() != nil {
			return 130
		}
		return 1
	}
	return 0
}
