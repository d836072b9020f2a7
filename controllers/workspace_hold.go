package controllers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/resources"
	"github.com/loadout-dev/loadout/internal/sandboxpolicy"
	"github.com/loadout-dev/loadout/internal/signerpolicy"
	"github.com/loadout-dev/loadout/internal/workspace"
)

// lastGood reads what Decide needs when the Workspace's own input is invalid
// (workspace.NeedsLastGood): the tenant's policy now, and the last good
// context from the published ConfigMap. What is held is read from the
// published ConfigMap alone, never from the Workspace's status: a status
// patch may still be deferred behind other Workspaces' contexts when the next
// pass runs.
func (r *WorkspaceReconciler) lastGood(ctx context.Context, ws *v1alpha1.Workspace) (workspace.Tenant, *workspace.LastGood, error) {
	tenant, err := workspace.TenantPolicy(ctx, ws, cachedObjects{cache: r.Client, reader: r.APIReader}, r.Policy)
	if err != nil {
		return workspace.Tenant{}, nil, err
	}
	cm, err := r.publishedData(ctx, ws)
	if err != nil || cm == nil {
		return tenant, nil, err
	}
	return tenant, &workspace.LastGood{Data: cm.Data, Annotations: cm.Annotations}, nil
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

// setHeldStatus describes a held context just published (held, bounded). The catalog lists
// keep describing the content agents have; the tools are the held registry's.
func setHeldStatus(ws *v1alpha1.Workspace, res *resources.Result, held *v1alpha1.HeldContent) {
	ws.Status.Context = &v1alpha1.ContextStatus{ConfigMapName: ws.ConfigMapName(), Hash: res.Hash, Bytes: res.Bytes}
	ws.Status.HeldContent = held
	setToolsStatus(ws, res.Manifest.Registry)
	setSkillSignaturesStatus(ws, res)
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
	res, err := workspace.DenyAllContext(ws, fmt.Sprintf("Workspace %s/%s is being deleted: every tool call and prompt is refused", ws.Namespace, ws.Name))
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
	ws.Status.SkillSigners = signerpolicy.ToAPI(registry.SkillSigners)
	ws.Status.Tools = nil
	for _, t := range registry.Tools[:min(len(registry.Tools), vocab.MaxStatusListItems)] {
		ws.Status.Tools = append(ws.Status.Tools, v1alpha1.ToolEntry{
			Name: t.Name, Extension: t.Extension, Builtin: t.Builtin,
			Description: truncate(t.Description, maxStatusEntryText), ReadOnly: t.ReadOnly, Runnable: t.Runnable(),
		})
	}
}

// setSkillSignaturesStatus says what the published context requires of its
// skills' signatures, and names the skills no agent will load for want of
// one (signerpolicy.Condition).
func setSkillSignaturesStatus(ws *v1alpha1.Workspace, res *resources.Result) {
	var skills contract.Skills
	if len(res.Manifest.SkillSigners) > 0 { // only a requirement reads the skills: most passes skip the parse
		_ = json.Unmarshal([]byte(res.Data[contract.KeySkills]), &skills) // rendered here: it parses
	}
	ok, reason, msg := signerpolicy.Condition(res.Manifest.SkillSigners, skills.Skills)
	setCondition(ws, vocab.ConditionSkillSignatures, ok, reason, truncate(msg, maxConditionMessage))
}
