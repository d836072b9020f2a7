// Command review-notes is the Service behind the samples' runnable
// review_note tool (config/samples/team-a_tool_review-notes.yaml): an example
// of a tool Service a platform team runs beside Loadout, not a part of it. It
// is its own binary, in its own image (ghcr.io/loadout-dev/loadout-samples,
// the Dockerfile's target samples), so that neither the loadout CLI nor the
// manager image carries a sample.
package main

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/loadout-dev/loadout/internal/buildinfo"
	"github.com/loadout-dev/loadout/internal/httpserve"
	"github.com/loadout-dev/loadout/internal/outbound"
	"github.com/loadout-dev/loadout/internal/toolauth"
	"github.com/loadout-dev/loadout/samples/review-notes/notes"
)

func main() {
	if err := newRootCommand().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		os.Exit(1)
	}
}

func newRootCommand() *cobra.Command {
	var (
		addr        string
		srv         notes.Server
		verifyToken bool
		tokenOpts   toolauth.Options
		version     bool
	)
	cmd := &cobra.Command{
		Use:   "review-notes",
		Short: "The Service behind the samples' review_note tool: records notes",
		Long: `review-notes is the Service behind the samples' review_note tool
(config/samples). hostd POSTs each allowed call to /notes as a ToolInvocation;
the server records the note and answers "note N recorded". GET /notes lists
the recorded notes. With --signing-key-file it refuses (401) any call that is
not signed the Standard Webhooks way with that key for review_note at --url
(the URL hostd calls, as the registry names it), whose timestamp is more than
--tolerance away, or that it already received. With --verify-token it refuses
any call without hostd's projected ServiceAccount token: 401 without a token or
with one the API server refuses for --token-audience (TokenReview), 403 for a
token of another namespace than --token-namespace (default: its own) or of a
pod not bound to a Workspace; it needs create on tokenreviews and get on pods
(config/samples/team-a_tool_review-notes.yaml). See docs/hostd.md (Runnable
tools; Knowing a call came through hostd).`,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if version {
				_, err := fmt.Fprintln(cmd.OutOrStdout(), "review-notes", buildinfo.Get())
				return err
			}
			if srv.SigningKeyFile != "" && srv.URL == "" {
				return errors.New("--signing-key-file needs --url, the URL hostd calls this Service at (e.g. http://review-notes.team-a.svc:8080/notes): signed calls are bound to it")
			}
			if verifyToken {
				cfg, err := ctrl.GetConfig()
				if err != nil {
					return fmt.Errorf("--verify-token needs the API server: %w", err)
				}
				cs, err := kubernetes.NewForConfig(cfg)
				if err != nil {
					return err
				}
				tokenOpts.Client = cs
				if srv.Tokens, err = toolauth.New(tokenOpts); err != nil {
					return fmt.Errorf("--verify-token: %w", err)
				}
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			l, err := (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "review-notes listening on %s\n", l.Addr())
			hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute}
			return httpserve.UntilDone(ctx, hs, func() error { return hs.Serve(l) })
		},
	}
	cmd.Flags().StringVar(&addr, "addr", ":8080", "address to listen on")
	cmd.Flags().StringVar(&srv.SigningKeyFile, "signing-key-file", "", "refuse calls not signed with this key file (the one hostd signs with: Standard Webhooks secrets, whsec_...)")
	cmd.Flags().StringVar(&srv.URL, "url", "", "this Service's URL as the registry names it (http://review-notes.team-a.svc:8080/notes); a signed call must be signed for it")
	cmd.Flags().BoolVar(&verifyToken, "verify-token", false,
		"refuse calls without hostd's projected ServiceAccount token, checked with a TokenReview (in a pod: its own ServiceAccount; else $KUBECONFIG)")
	cmd.Flags().StringVar(&tokenOpts.Audience, "token-audience", toolauth.Audience, "with --verify-token: the audience hostd's token must carry")
	cmd.Flags().StringSliceVar(&tokenOpts.Namespaces, "token-namespace", nil,
		"with --verify-token: namespaces whose agent pods may call (repeatable); default: this pod's own namespace")
	cmd.Flags().DurationVar(&srv.Tolerance, "tolerance", outbound.DefaultTolerance, "refuse signed calls whose timestamp is further than this from now, either way")
	cmd.Flags().BoolVar(&version, "version", false, "print the version, commit and build date, and exit")
	return cmd
}
