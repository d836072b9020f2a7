package workspace

import (
	"slices"

	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/resources"
)

// OutcomeKind is what a pass of the pipeline publishes for a Workspace.
type OutcomeKind string

const (
	// OutcomePublish publishes the resolution's context.
	OutcomePublish OutcomeKind = "Publish"
	// OutcomeKeepLastGood publishes nothing: the platform's own policy does
	// not load (an imposed extension is rejected even alone), which is the platform's
	// to fix, so the last good context, with the last good policy, stays.
	OutcomeKeepLastGood OutcomeKind = "KeepLastGood"
	// OutcomeHeld publishes the tenant's last good content under the
	// platform's current policy: the tenant's own input is invalid.
	OutcomeHeld OutcomeKind = "Held"
	// OutcomePolicyOnly publishes the platform's current policy alone: the
	// tenant's input is invalid and there is no good content to keep.
	OutcomePolicyOnly OutcomeKind = "PolicyOnly"
	// OutcomeDenyAll publishes a context that refuses every tool call and
	// prompt: not even the platform's policy fits in a context.
	OutcomeDenyAll OutcomeKind = "DenyAll"
)

// HeldMaxBytes bounds a held, policy-only or deny-all context: the API's
// hard cap on any context. The tenant's current budget does not apply: it
// is part of the input that is invalid (a tenant may set 1 KiB precisely to
// keep a new policy out), and the held content fit the budget it had.
const HeldMaxBytes = vocab.MaxContextBytesLimit

// ContentFromAnnotation on a context ConfigMap that holds a tenant's last
// good content under the current policy names the context that content came
// from (status.heldContent.from). A good publish's apply removes it.
const ContentFromAnnotation = "loadout.dev/content-from"

// LastGood is the context a Workspace has published, as its ConfigMap holds
// it (the controller reads it live; `loadout preview --last-good` from a
// file). Only a ConfigMap the Workspace controls counts: its content is
// nobody else's to keep.
type LastGood struct {
	Data        map[string]string
	Annotations map[string]string
}

// Tenant is what a held context keeps of the tenant's own policy now
// (TenantPolicy).
type Tenant struct {
	// IDs are the ids of the extensions in the Workspace's namespace, if
	// that namespace loads extensions now.
	IDs []string
	// Deny is the tools they and the Workspace deny now.
	Deny []string
	// Sandboxes are the sandboxes they and the Workspace declare now: each
	// narrows the platform's.
	Sandboxes []*contract.Sandbox
	// SkillSigners are the signer requirements they and the Workspace
	// declare now: each adds to the platform's.
	SkillSigners []*contract.SignerRequirement
}

// Outcome is what a pass publishes: Kind, and for every kind but
// KeepLastGood the context (Result) and the ConfigMap that carries it (what
// the controller writes, signed, and preview prints). Held describes a held,
// policy-only or deny-all context for the Workspace's status
// (status.heldContent); its message is the whole failure, which the writer
// of the status bounds.
type Outcome struct {
	Kind      OutcomeKind
	Result    *resources.Result
	ConfigMap *corev1ac.ConfigMapApplyConfiguration
	Held      *v1alpha1.HeldContent
}

// publishing is the Outcome of kind publishing result, with the ConfigMap's
// extra annotations.
func publishing(ws *v1alpha1.Workspace, kind OutcomeKind, result *resources.Result, held *v1alpha1.HeldContent, annotations map[string]string) Outcome {
	cm := ContextConfigMap(ws, result)
	if len(annotations) > 0 {
		cm.WithAnnotations(annotations)
	}
	return Outcome{Kind: kind, Result: result, ConfigMap: cm, Held: held}
}

// NeedsLastGood reports whether Decide needs the tenant's policy and the
// last good context for this resolution: only when the tenant's own input is
// invalid and the platform's policy loads. The caller reads them only then.
//
// Where the platform's policy loads alone (Platform.Broken is empty), every
// failure of a pass is the tenant's, an imposed extension rejected in the
// pass included: it loaded alone, so what the tenant brought displaced it
// (a built-in tool of the Workspace, an offered extension its roots pull in
// ahead of it). Such a failure must not hold the platform's policy back, or
// a tenant could keep its namespace on the old policy by naming a tool like
// a new imposed one.
func NeedsLastGood(res *Resolution, platform *Platform) bool {
	return !res.Publishable() && platform.Broken == ""
}

// Decide chooses what a pass publishes, from the resolution, the platform's
// policy for the namespace and, when NeedsLastGood, the tenant's current
// policy and the last good context (nil when there is none). It reads
// nothing: the controller and `loadout preview --last-good` call it with
// what they read, so both print the same bytes. "Keep the last good
// context" keeps tenant content only; it never holds the platform's policy
// back (docs/concepts.md, "Policy apart from content").
func Decide(ws *v1alpha1.Workspace, res *Resolution, platform *Platform, tenant Tenant, last *LastGood) (Outcome, error) {
	switch {
	case res.Publishable():
		return publishing(ws, OutcomePublish, res.Result, nil, nil), nil
	case !NeedsLastGood(res, platform):
		return Outcome{Kind: OutcomeKeepLastGood}, nil
	}
	f := res.Failure
	held := &v1alpha1.HeldContent{Mode: v1alpha1.HeldContentContent, Reason: string(f.Reason), Message: f.Error()}
	if last != nil {
		held.From = last.Annotations[vocab.ContextHashAnnotation]
		if from := last.Annotations[ContentFromAnnotation]; from != "" {
			held.From = from // already held: the content is still that of the last good context
		}
		result, err := resources.Repolicy(last.Data, func(reg contract.Registry) contract.Registry {
			return HeldRegistry(reg, platform, tenant)
		}, platform.Digest(), HeldMaxBytes)
		if err == nil && !onlyPolicy(result.Manifest, platform) && heldPassesContent(result.Data, platform) {
			// Under an unchanged policy the held context is the last good
			// one itself: nothing to name, and nothing to write.
			var annotations map[string]string
			if held.From != "" && held.From != result.Hash {
				annotations = map[string]string{ContentFromAnnotation: held.From}
			}
			return publishing(ws, OutcomeHeld, result, held, annotations), nil
		}
	}
	held.Mode, held.From = v1alpha1.HeldContentPolicyOnly, ""
	result, err := resources.Render(resources.Input{
		Workspace:       contract.WorkspaceRef{Name: ws.Name, Namespace: ws.Namespace},
		Registry:        HeldRegistry(contract.Registry{}, platform, Tenant{Deny: tenant.Deny, Sandboxes: tenant.Sandboxes, SkillSigners: tenant.SkillSigners}),
		PlatformPolicy:  platform.Digest(),
		MaxContextBytes: HeldMaxBytes,
	})
	if err != nil {
		// Not even the platform's policy fits: nothing it cannot judge may run.
		if result, err = DenyAllContext(ws, "the platform's policy cannot be published: "+err.Error()); err != nil {
			return Outcome{}, err
		}
		return publishing(ws, OutcomeDenyAll, result, held, nil), nil
	}
	return publishing(ws, OutcomePolicyOnly, result, held, nil), nil
}

// onlyPolicy reports whether a held context carries no tenant content at
// all: it is then the policy-only context, whatever the ConfigMap held.
func onlyPolicy(m contract.Manifest, platform *Platform) bool {
	if len(m.Instructions) > 0 || len(m.Catalog) > 0 || len(m.ActiveSkills) > 0 || len(m.Templates) > 0 {
		return false
	}
	for _, t := range m.Tools {
		if t.Builtin {
			return false
		}
	}
	for _, id := range m.Extensions {
		if !slices.Contains(platform.IDs, id) {
			return false
		}
	}
	return true
}

// DenyAllContext renders the context that denies every tool call and
// prompt: published for a Workspace being deleted, and where not even the
// platform's policy fits.
func DenyAllContext(ws *v1alpha1.Workspace, reason string) (*resources.Result, error) {
	return resources.Render(resources.Input{
		Workspace:       contract.WorkspaceRef{Name: ws.Name, Namespace: ws.Namespace},
		Registry:        DenyAllRegistry(reason),
		MaxContextBytes: HeldMaxBytes,
	})
}
