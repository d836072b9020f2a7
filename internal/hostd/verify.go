package hostd

import (
	"cmp"
	"errors"
	"fmt"
	"strings"

	"github.com/loadout-dev/loadout/internal/contextsig"
	"github.com/loadout-dev/loadout/internal/published"
)

// verifyContext refuses a context the manager did not sign for the Workspace
// this host serves (docs/security.md): a ConfigMap a tenant created or
// edited, one signed for another Workspace, or one signed by a key outside
// the trust anchor. It runs before anything of the context is used, so a
// refused context keeps the last good one, like any failed load, and says
// why in /readyz, the log and loadout_hostd_context_refusals_total.
//
// Without a trust anchor (Options.ContextKeys nil) every context loads: the
// `loadout hostd` command allows that only with --allow-unsigned-context.
func (s *Server) verifyContext(pc *published.Context) error {
	if s.opts.ContextKeys == nil {
		return nil
	}
	want, err := s.servedWorkspace(pc)
	if err != nil {
		return err
	}
	if err := s.opts.ContextKeys.Verify(pc.Signature, pc.Hash, want); err != nil {
		var ve *contextsig.VerifyError
		if errors.As(err, &ve) {
			s.metrics.refusals.WithLabelValues(ve.Reason).Inc()
		}
		return fmt.Errorf("context %s refused: %w", pc.Hash, err)
	}
	return nil
}

// servedWorkspace is the Workspace this host serves: Options.Workspace (the
// admission policy injects it from the pod's loadout.dev/workspace label)
// and the ConfigMap it mounts (Options.ContextConfigMap, by default the
// Workspace's default name), or else the one the context names, in any
// ConfigMap. The context must name the same Workspace.
func (s *Server) servedWorkspace(pc *published.Context) (contextsig.Subject, error) {
	ref := pc.Manifest().Workspace
	named := contextsig.Subject{Namespace: ref.Namespace, Name: ref.Name}
	if s.opts.Workspace == "" {
		return named, nil
	}
	ns, name, ok := strings.Cut(s.opts.Workspace, "/")
	want := contextsig.Subject{Namespace: ns, Name: name, ConfigMap: cmp.Or(s.opts.ContextConfigMap, name+"-context")}
	if !ok || ns == "" || name == "" {
		return want, fmt.Errorf("workspace %q: want NAMESPACE/NAME", s.opts.Workspace)
	}
	if named.Namespace != want.Namespace || named.Name != want.Name {
		s.metrics.refusals.WithLabelValues(contextsig.ReasonWrongWorkspace).Inc()
		return want, fmt.Errorf("context %s refused: it is Workspace %s's, this host serves Workspace %s", pc.Hash, named, want)
	}
	return want, nil
}
