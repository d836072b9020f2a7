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
// refused context keeps the last good one serving, like any failed load,
// while /readyz answers 503 naming why, and the log and
// loadout_hostd_context_refusals_total say so too.
//
// Without a trust anchor (Options.ContextKeys nil) every context loads: the
// `loadout hostd` command allows that only with --allow-unsigned-context.
func (s *Server) verifyContext(pc *published.Context) error {
	err := VerifyContext(s.opts.ContextKeys, s.opts.Workspace, s.opts.ContextConfigMap, pc)
	var ve *contextsig.VerifyError
	switch {
	case errors.As(err, &ve):
		s.metrics.refusals.WithLabelValues(ve.Reason).Inc()
	case errors.Is(err, errWrongWorkspace):
		s.metrics.refusals.WithLabelValues(contextsig.ReasonWrongWorkspace).Inc()
	}
	if err != nil {
		return err
	}
	// Signed for this Workspace, and carrying the platform's current
	// policy for its namespace (Options.PolicyDir).
	return s.checkPolicy(pc.Hash, pc.Manifest())
}

// errWrongWorkspace marks a context that names another Workspace than the
// one served.
var errWrongWorkspace = errors.New("wrong Workspace")

// VerifyContext checks pc as hostd does before it serves it: signed by one
// of keys for workspace ("namespace/name") and the ConfigMap configMap
// (empty: "<name>-context"). Keys without a workspace are an error, never
// "any Workspace": a host that does not know whom it serves would load a
// context signed for anyone. Nil keys verify nothing (unsigned contexts
// allowed, which callers must have asked for). `loadout materialize` uses it
// too.
func VerifyContext(keys *contextsig.Verifier, workspace, configMap string, pc *published.Context) error {
	if keys == nil {
		return nil
	}
	want, err := servedWorkspace(workspace, configMap, pc)
	if err != nil {
		return fmt.Errorf("context %s refused: %w", pc.Hash, err)
	}
	if err := keys.Verify(pc.Signature, pc.Hash, want); err != nil {
		return fmt.Errorf("context %s refused: %w", pc.Hash, err)
	}
	return nil
}

// CheckWorkspace accepts "namespace/name", the form of a served Workspace.
func CheckWorkspace(workspace string) error {
	ns, name, ok := strings.Cut(workspace, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return fmt.Errorf("workspace %q: want NAMESPACE/NAME", workspace)
	}
	return nil
}

// servedWorkspace is the Workspace a host serves: workspace (the admission
// policy injects it from the pod's loadout.dev/workspace label) and the
// ConfigMap it mounts (configMap, by default the Workspace's default name).
// The context must name the same Workspace.
func servedWorkspace(workspace, configMap string, pc *published.Context) (contextsig.Subject, error) {
	if workspace == "" {
		return contextsig.Subject{}, errors.New("this host was given trust keys but no Workspace to serve (--workspace): " +
			"a context signed for any Workspace would load")
	}
	if err := CheckWorkspace(workspace); err != nil {
		return contextsig.Subject{}, err
	}
	ns, name, _ := strings.Cut(workspace, "/")
	want := contextsig.Subject{Namespace: ns, Name: name, ConfigMap: cmp.Or(configMap, name+"-context")}
	ref := pc.Manifest().Workspace
	if ref.Namespace != want.Namespace || ref.Name != want.Name {
		return want, fmt.Errorf("%w: it is Workspace %s/%s's, this host serves Workspace %s", errWrongWorkspace, ref.Namespace, ref.Name, want)
	}
	return want, nil
}
