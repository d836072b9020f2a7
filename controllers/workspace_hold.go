package controllers

import (
	"context"
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/resources"
	"github.com/loadout-dev/loadout/internal/sandboxpolicy"
	"github.com/loadout-dev/loadout/internal/workspace"
)

// heldMaxBytes bounds a held, policy-only or deny-all context: the API's
// hard cap on any context. The tenant's current budget does not apply: it
// is part of the input that is invalid (a tenant may set 1 KiB precisely to
// keep a new policy out), and the held content fit the budget it had.
const heldMaxBytes = vocab.MaxContextBytesLimit

// heldContext builds the context of a Workspace whose own input is invalid
// (res.TenantFailure): the platform's current policy with the tenant's last
// good content, taken from the published ConfigMap, or with none. "Keep the
// last good context" keeps tenant content only; it never holds the
// platform's policy back (docs/concepts.md, "Policy apart from content").
//
// It returns nil when the platform's own policy does not load: that is the
// platform's to fix, and the last good context, with the last good policy,
// stays. The error is transient only.
func (r *WorkspaceReconciler) heldContext(ctx context.Context, ws *v1alpha1.Workspace, res *workspace.Resolution) (*resources.Result, *v1alpha1.HeldContent, error) {
	objs := cachedObjects{cache: r.Client, reader: r.APIReader}
	imp, err := workspace.ImposedPolicy(ctx, ws, objs, r.Policy, r.Loader)
	if err != nil {
		return nil, nil, err
	}
	if imp.Broken != "" {
		return nil, nil, nil
	}
	tenant, err := workspace.TenantPolicy(ctx, ws, objs, r.Policy)
	if err != nil {
		return nil, nil, err
	}
	f := res.Failure
	held := &v1alpha1.HeldContent{Mode: v1alpha1.HeldContentContent, Reason: string(f.Reason), Message: truncate(f.Error(), maxHeldMessage)}
	// What is held is read from the published ConfigMap alone, never from
	// the Workspace's status: a status patch may still be deferred behind
	// other Workspaces' contexts when the next pass runs.
	old, err := r.publishedData(ctx, ws)
	if err != nil {
		return nil, nil, err
	}
	if old != nil {
		held.From = old.Annotations[vocab.ContextHashAnnotation]
		if from := old.Annotations[ContentFromAnnotation]; from != "" {
			held.From = from // already held: the content is still that of the last good context
		}
		result, err := resources.Repolicy(old.Data, func(reg contract.Registry) contract.Registry {
			return workspace.HeldRegistry(reg, imp, tenant)
		}, imp.Digest(), heldMaxBytes)
		if err == nil && !onlyPolicy(result.Manifest, imp) {
			return result, held, nil
		}
	}
	held.Mode, held.From = v1alpha1.HeldContentPolicyOnly, ""
	result, err := resources.Render(resources.Input{
		Workspace:       contract.WorkspaceRef{Name: ws.Name, Namespace: ws.Namespace},
		Registry:        workspace.HeldRegistry(contract.Registry{}, imp, &workspace.Tenant{Deny: tenant.Deny, Sandboxes: tenant.Sandboxes}),
		PlatformPolicy:  imp.Digest(),
		MaxContextBytes: heldMaxBytes,
	})
	if err != nil {
		// Not even the platform's policy fits: nothing it cannot judge may run.
		result, err = denyAllContext(ws, "the platform's policy cannot be published: "+err.Error())
	}
	return result, held, err
}

// ContentFromAnnotation on a context ConfigMap that holds a tenant's last
// good content under the current policy names the context that content came
// from (status.heldContent.from). A good publish's apply removes it.
const ContentFromAnnotation = "loadout.dev/content-from"

// onlyPolicy reports whether a held context carries no tenant content at
// all: it is then the policy-only context, whatever the ConfigMap held.
func onlyPolicy(m contract.Manifest, imp *workspace.Imposed) bool {
	if len(m.Instructions) > 0 || len(m.Catalog) > 0 || len(m.ActiveSkills) > 0 || len(m.Templates) > 0 {
		return false
	}
	for _, t := range m.Tools {
		if t.Builtin {
			return false
		}
	}
	for _, id := range m.Extensions {
		if !slices.Contains(imp.IDs, id) {
			return false
		}
	}
	return true
}

// heldAnnotations are the annotations a held context is published with.
func heldAnnotations(held *v1alpha1.HeldContent) map[string]string {
	if held == nil || held.Mode != v1alpha1.HeldContentContent || held.From == "" {
		return nil
	}
	return map[string]string{ContentFromAnnotation: held.From}
}

// denyAllContext renders the context that denies every tool call and prompt.
func denyAllContext(ws *v1alpha1.Workspace, reason string) (*resources.Result, error) {
	return resources.Render(resources.Input{
		Workspace:       contract.WorkspaceRef{Name: ws.Name, Namespace: ws.Namespace},
		Registry:        workspace.DenyAllRegistry(reason),
		MaxContextBytes: heldMaxBytes,
	})
}

// publishedData reads the Workspace's published ConfigMap live (the cache
// holds ConfigMap metadata only). It returns nil when there is none, or when
// the one there is not the Workspace's: its content is nobody's to keep.
func (r *WorkspaceReconciler) publishedData(ctx context.Context, ws *v1alpha1.Workspace) (*corev1.ConfigMap, error) {
	cm := &corev1.ConfigMap{}
	err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: ws.Namespace, Name: ws.ConfigMapName()}, cm)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading ConfigMap %s/%s: %w", ws.Namespace, ws.ConfigMapName(), err)
	}
	if !metav1.IsControlledBy(cm, ws) {
		return nil, nil
	}
	return cm, nil
}

// setHeldStatus describes a held context just published. The catalog lists
// keep describing the content agents have; the tools are the held registry's.
func setHeldStatus(ws *v1alpha1.Workspace, res *resources.Result, held *v1alpha1.HeldContent) {
	ws.Status.Context = &v1alpha1.ContextStatus{ConfigMapName: ws.ConfigMapName(), Hash: res.Hash, Bytes: res.Bytes}
	ws.Status.HeldContent = held
	setToolsStatus(ws, res.Manifest.Registry)
	if ws.Status.Catalog != nil {
		ws.Status.Catalog.Tools = int32(len(res.Manifest.Registry.Tools))
	}
	msg := fmt.Sprintf("%s; the last good context %s stays published, its content under the platform's current policy (ConfigMap %s, context %s)",
		held.Message, held.From, ws.ConfigMapName(), res.Hash)
	if held.Mode == v1alpha1.HeldContentPolicyOnly {
		msg = fmt.Sprintf("%s; no good content of the Workspace could be kept: ConfigMap %s holds the platform's current policy alone (context %s)",
			held.Message, ws.ConfigMapName(), res.Hash)
		ws.Status.Winners, ws.Status.Shadowed, ws.Status.Catalog = nil, nil, nil
	}
	setCondition(ws, vocab.ConditionContextPublished, false, vocab.ConditionReason(held.Reason), msg)
}

// recordHeld emits a Warning Event when a Workspace starts holding content,
// or holds other content, or for another reason.
func (r *WorkspaceReconciler) recordHeld(before, ws *v1alpha1.Workspace) {
	now, was := ws.Status.HeldContent, before.Status.HeldContent
	if r.Recorder == nil || now == nil || (was != nil && *was == *now) {
		return
	}
	reason := vocab.ReasonContentHeld
	if now.Mode == v1alpha1.HeldContentPolicyOnly {
		reason = vocab.ReasonPolicyOnly
	}
	r.Recorder.Eventf(ws, nil, corev1.EventTypeWarning, string(reason), "Publish",
		"Published the platform's current policy with %s tenant content (%s): %s", heldWhat(now), now.Reason, truncate(now.Message, maxEventMessage))
}

func heldWhat(h *v1alpha1.HeldContent) string {
	if h.Mode == v1alpha1.HeldContentPolicyOnly {
		return "no"
	}
	return "the last good context's (" + h.From + ")"
}

// publishDenyAll replaces the context of a Workspace being deleted with one
// that denies every tool call and prompt, at once: a Workspace a tenant keeps
// Terminating (a finalizer of its own, an orphaning delete) must not keep
// serving the policy of the moment it was deleted. A ConfigMap that is gone
// or not the Workspace's is left alone.
func (r *WorkspaceReconciler) publishDenyAll(ctx context.Context, ws *v1alpha1.Workspace) error {
	existing := configMapMetadata()
	err := r.Get(ctx, types.NamespacedName{Namespace: ws.Namespace, Name: ws.ConfigMapName()}, existing)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if !metav1.IsControlledBy(existing, ws) {
		return nil
	}
	res, err := denyAllContext(ws, fmt.Sprintf("Workspace %s/%s is being deleted: every tool call and prompt is refused", ws.Namespace, ws.Name))
	if err != nil {
		return err
	}
	if _, err := r.publish(ctx, ws, res); err != nil {
		var notOwned *notOwnedError
		if errors.As(err, &notOwned) || apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return nil // orphaned or gone meanwhile: nothing of ours to deny in
		}
		return err
	}
	return nil
}

// setToolsStatus lists a registry's tools, capped, and the sandbox its
// agents run under.
func setToolsStatus(ws *v1alpha1.Workspace, registry contract.Registry) {
	ws.Status.Sandbox = sandboxpolicy.ToAPI(registry.Sandbox)
	ws.Status.Tools = nil
	for _, t := range registry.Tools[:min(len(registry.Tools), vocab.MaxStatusListItems)] {
		ws.Status.Tools = append(ws.Status.Tools, v1alpha1.ToolEntry{
			Name: t.Name, Extension: t.Extension, Builtin: t.Builtin,
			Description: truncate(t.Description, maxStatusEntryText), ReadOnly: t.ReadOnly, Runnable: t.Runnable(),
		})
	}
}
