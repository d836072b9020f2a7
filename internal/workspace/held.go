package workspace

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/sandboxpolicy"
	"github.com/loadout-dev/loadout/internal/signerpolicy"
	"github.com/loadout-dev/loadout/internal/toolclass"
)

// Policy apart from content (docs/concepts.md): what the platform imposes on
// a Workspace (Platform) always publishes at its current version. When the
// tenant's own input is invalid, the tenant's last good content is published
// under this policy (HeldRegistry and resources.Repolicy), or, with no good
// content to keep, the policy alone (Decide).

// HeldRegistry is the registry of a context that keeps a tenant's last good
// content under the platform's current policy: the built-in tools and the
// tenant's own extensions (tenant.IDs, the ids of the extensions in the
// Workspace's namespace now) as the last good context had them, and the
// imposed extensions as they are now. Entries of any other extension (a
// platform extension removed or changed since) are dropped: the old policy
// never outlives the new one. tenant.Deny is the Workspace's and its
// extensions' current deny list, added to the platform's, and
// tenant.Sandboxes narrow the platform's sandbox, and tenant.SkillSigners
// add to the platform's signer requirements.
func HeldRegistry(old contract.Registry, imp *Platform, tenant Tenant) contract.Registry {
	keep := func(id string) bool {
		return id != "" && slices.Contains(tenant.IDs, id) && !slices.Contains(imp.IDs, id)
	}
	out := contract.Registry{
		Extensions:   slices.Clone(imp.IDs),
		Deny:         slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(imp.Registry.Deny), tenant.Deny...)))),
		Sandbox:      sandboxpolicy.Effective([]*contract.Sandbox{imp.Sandbox}, tenant.Sandboxes),
		SkillSigners: signerpolicy.Effective(imp.SkillSigners, tenant.SkillSigners),
	}
	for _, id := range old.Extensions {
		if keep(id) {
			out.Extensions = append(out.Extensions, id)
		}
	}
	denied := toolclass.NewMatcher(out.Deny)
	for _, t := range old.Tools {
		if t.Builtin && !denied.Match(t.Name) {
			out.Tools = append(out.Tools, t)
		}
	}
	for _, list := range [][]contract.Tool{imp.Registry.Tools, old.Tools} {
		for _, t := range list {
			if !t.Builtin && (slices.Contains(imp.IDs, t.Extension) || keep(t.Extension)) && !denied.Match(t.Name) &&
				!slices.ContainsFunc(out.Tools, func(o contract.Tool) bool { return o.Name == t.Name }) {
				out.Tools = append(out.Tools, t)
			}
		}
	}
	out.Hooks = heldEntries(imp.Registry.Hooks, old.Hooks, keep, func(h contract.Hook) string { return h.Extension })
	out.MessageTypes = heldEntries(imp.Registry.MessageTypes, old.MessageTypes, keep, func(m contract.MessageType) string { return m.Extension })
	out.PromptGuides = heldEntries(imp.Registry.PromptGuides, old.PromptGuides, keep, func(g contract.PromptGuide) string { return g.Extension })
	return out
}

// heldEntries is the platform's current entries, then the old entries of the
// extensions kept.
func heldEntries[T any](platform, old []T, keep func(string) bool, extensionOf func(T) string) []T {
	out := slices.Clone(platform)
	for _, e := range old {
		if keep(extensionOf(e)) {
			out = append(out, e)
		}
	}
	return out
}

// DenyAllExtension is the id of the hooks of a deny-all context.
const DenyAllExtension = contract.DenyAllExtension

// DenyAllRegistry is the registry of a context that lets the agent do
// nothing: every tool is denied and every prompt refused, with reason. It is
// published for a Workspace being deleted and where the platform's policy
// cannot be built.
func DenyAllRegistry(reason string) contract.Registry {
	reg := contract.Registry{Extensions: []string{DenyAllExtension}, Deny: []string{toolclass.All}}
	for _, ev := range []string{contract.EventSessionStart, contract.EventUserInput, contract.EventBeforeAgentStart} {
		reg.Hooks = append(reg.Hooks, contract.Hook{Extension: DenyAllExtension, Name: "deny-" + strings.ToLower(ev), Event: ev,
			TimeoutSeconds: 1, CEL: &contract.CELHook{Expression: "false", Message: reason}})
	}
	return reg
}

// TenantPolicy reads the tenant's own policy (Tenant) as it is now.
func TenantPolicy(ctx context.Context, ws *v1alpha1.Workspace, objs Objects, pol Policy) (Tenant, error) {
	t := Tenant{Sandboxes: []*contract.Sandbox{sandboxpolicy.FromAPI(ws.Spec.Sandbox)}}
	// A declaration that does not parse is kept as one no artifact meets
	// (signerpolicy.FromAPI): held content never loses a requirement.
	t.SkillSigners, _ = tenantSkillSigners(ws, nil)
	if tools := ws.Spec.Tools; tools != nil {
		for _, d := range tools.Deny {
			t.Deny = append(t.Deny, string(d))
		}
	}
	labels, err := objs.NamespaceLabels(ctx, ws.Namespace)
	if err != nil {
		return Tenant{}, fmt.Errorf("reading namespace %s: %w", ws.Namespace, err)
	}
	if !LoadsExtensions(pol.TrustOf(ws.Namespace, labels)) {
		return t, nil
	}
	exts, err := objs.Extensions(ctx, ws.Namespace)
	if err != nil {
		return Tenant{}, err
	}
	own := make([]*v1alpha1.Extension, len(exts))
	for i := range exts {
		own[i] = &exts[i]
	}
	t.SkillSigners, _ = tenantSkillSigners(ws, own)
	for i := range exts {
		t.IDs = append(t.IDs, exts[i].LogicalName())
		for _, d := range exts[i].Spec.DeniedTools {
			t.Deny = append(t.Deny, string(d))
		}
		t.Sandboxes = append(t.Sandboxes, sandboxpolicy.FromAPI(exts[i].Spec.Sandbox))
	}
	return t, nil
}
