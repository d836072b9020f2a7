package controllers

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/agentcommands"
	"github.com/loadout-dev/loadout/internal/exthost"
	"github.com/loadout-dev/loadout/internal/resources"
	"github.com/loadout-dev/loadout/internal/workspace"
)

// setCondition sets a condition for the current generation. meta keeps
// lastTransitionTime when the status does not change.
func setCondition(ws *v1alpha1.Workspace, condType vocab.ConditionType, ok bool, reason vocab.ConditionReason, message string) {
	status := metav1.ConditionFalse
	if ok {
		status = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&ws.Status.Conditions, metav1.Condition{
		Type:               string(condType),
		Status:             status,
		Reason:             string(reason),
		Message:            truncate(message, maxConditionMessage),
		ObservedGeneration: ws.Generation,
	})
}

// keepLastGood records why the current input was not published. The
// published ConfigMap, status.context and the lists describing it stay as
// they were: they still describe what agents have.
func keepLastGood(ws *v1alpha1.Workspace, reason vocab.ConditionReason, message string) {
	if ws.Status.Context != nil && ws.Status.Context.Hash != "" {
		message = fmt.Sprintf("%s; the last good context %s stays published", message, ws.Status.Context.Hash)
	}
	setCondition(ws, vocab.ConditionContextPublished, false, reason, message)
}

// pipelineConditions are the conditions of a pass in pipeline order: the
// first that is not True explains a Workspace that is not Ready.
var pipelineConditions = []string{string(vocab.ConditionCatalogResolved), string(vocab.ConditionExtensionsLoaded), string(vocab.ConditionContextPublished)}

// summarize sets Ready, Reconciling, Stalled and observedGeneration after a
// pass, as kstatus reads them. transient is the error of a pass that did not
// complete (nil when it did).
//
// A completed pass observes its generation: Ready is True when the context
// was published, else Ready is False and Stalled True with the reason of the
// first failing condition. A pass that failed transiently does not observe
// its generation: Reconciling is True, Ready False, and the other conditions
// still describe the last completed pass. So a first pass that fails
// transiently reads as in progress, never as failed.
func summarize(ws *v1alpha1.Workspace, transient error) {
	if transient != nil {
		reason := vocab.ReasonRetrying
		if c := meta.FindStatusCondition(ws.Status.Conditions, string(vocab.ConditionContextPublished)); c != nil &&
			c.Reason == string(vocab.ReasonPublishFailed) && c.ObservedGeneration == ws.Generation {
			reason = vocab.ReasonPublishFailed
		}
		msg := "retrying after a transient error: " + transient.Error()
		setCondition(ws, vocab.ConditionReconciling, true, reason, msg)
		meta.RemoveStatusCondition(&ws.Status.Conditions, string(vocab.ConditionStalled))
		setCondition(ws, vocab.ConditionReady, false, reason, msg)
		return
	}
	ws.Status.ObservedGeneration = ws.Generation
	meta.RemoveStatusCondition(&ws.Status.Conditions, string(vocab.ConditionReconciling))
	for _, t := range pipelineConditions {
		c := meta.FindStatusCondition(ws.Status.Conditions, t)
		if c == nil || c.ObservedGeneration != ws.Generation || c.Status == metav1.ConditionTrue {
			continue // stale conditions of an earlier pass do not explain this one
		}
		setCondition(ws, vocab.ConditionStalled, true, vocab.ConditionReason(c.Reason), c.Message)
		setCondition(ws, vocab.ConditionReady, false, vocab.ConditionReason(c.Reason), c.Message)
		return
	}
	meta.RemoveStatusCondition(&ws.Status.Conditions, string(vocab.ConditionStalled))
	msg := "context published"
	if c := meta.FindStatusCondition(ws.Status.Conditions, string(vocab.ConditionContextPublished)); c != nil {
		msg = c.Message
	}
	setCondition(ws, vocab.ConditionReady, true, vocab.ReasonReconciled, msg)
}

// setResolvedStatus records what the pipeline decided: the extensions'
// outcomes, whether the catalog resolved, and, for an invalid input, why the
// last good context is kept.
func setResolvedStatus(ws *v1alpha1.Workspace, res *workspace.Resolution) {
	if res.Plan != nil {
		setExtensionsStatus(ws, res.Plan.Extensions, res.Extensions)
	}
	setPlatformPolicyCondition(ws, res.Plan)
	f := res.Failure
	if f != nil && (f.Phase == workspace.PhaseGather || f.Phase == workspace.PhaseResolve) {
		setCondition(ws, vocab.ConditionCatalogResolved, false, f.Reason, f.Error())
	} else {
		msg := fmt.Sprintf("resolved from %d roots", len(res.Plan.Input.Roots))
		for _, ns := range res.Plan.UnlabelledPlatform {
			msg += fmt.Sprintf("; platform namespace %s is ignored: it has no valid %s label (a trust admin must label it)", ns, vocab.TrustLabel)
		}
		setCondition(ws, vocab.ConditionCatalogResolved, true, vocab.ReasonResolved, msg)
	}
	if f != nil {
		keepLastGood(ws, f.Reason, f.Error())
	}
}

// setExtensionsStatus records every extension's outcome, whether the
// platform imposes it and what it denies, and the ExtensionsLoaded
// condition. candidates and outcomes are in the same (load) order, one
// outcome per candidate; imposed platform extensions come first, so the
// bounded list always shows them.
func setExtensionsStatus(ws *v1alpha1.Workspace, candidates []workspace.Candidate, outcomes []exthost.Outcome) {
	ws.Status.Extensions = make([]v1alpha1.ExtensionState, 0, min(len(outcomes), vocab.MaxStatusListItems))
	var rejected []string
	enforced := 0
	for i, o := range outcomes {
		if o.State == vocab.ExtensionRejected {
			rejected = append(rejected, fmt.Sprintf("%s/%s: %s", o.Namespace, o.Extension, o.Message))
		}
		st := v1alpha1.ExtensionState{
			Name: o.Extension, Namespace: o.Namespace, State: o.State,
			Reason: o.Reason, Message: truncate(o.Message, maxStatusEntryText), Tools: o.Tools,
		}
		if i < len(candidates) {
			st.Enforced = candidates[i].Enforced
			for _, d := range candidates[i].Extension.Spec.DeniedTools {
				st.DeniedTools = append(st.DeniedTools, string(d))
			}
		}
		if st.Enforced {
			enforced++
		}
		if len(ws.Status.Extensions) < vocab.MaxStatusListItems {
			ws.Status.Extensions = append(ws.Status.Extensions, st)
		}
	}
	if len(rejected) > 0 {
		setCondition(ws, vocab.ConditionExtensionsLoaded, false, vocab.ReasonExtensionRejected, strings.Join(rejected, "; "))
		return
	}
	setCondition(ws, vocab.ConditionExtensionsLoaded, true, vocab.ReasonLoaded,
		fmt.Sprintf("%d extensions visible (%d enforced by the platform), none rejected", len(outcomes), enforced))
}

// setPublishedStatus describes the context just published. Counts are totals
// (every visible extension, every tool); the lists beside them are capped.
func setPublishedStatus(ws *v1alpha1.Workspace, resolution *workspace.Resolution) {
	res, registry := resolution.Result, resolution.Registry
	m := res.Manifest
	ws.Status.Context = &v1alpha1.ContextStatus{ConfigMapName: ws.ConfigMapName(), Hash: res.Hash, Bytes: res.Bytes}
	counts := &v1alpha1.CatalogCounts{
		Instructions: int32(len(m.Instructions)),
		ActiveSkills: int32(len(m.ActiveSkills)),
		Shadowed:     int32(len(m.Shadowed)),
		Extensions:   int32(len(resolution.Extensions)),
		Tools:        int32(len(registry.Tools)),
	}
	ws.Status.Winners = nil
	for _, e := range m.Catalog {
		switch e.Kind {
		case resources.KindSkill:
			counts.Skills++
		case resources.KindTemplate:
			counts.Templates++
		}
		if len(ws.Status.Winners) < vocab.MaxStatusListItems {
			ws.Status.Winners = append(ws.Status.Winners, v1alpha1.CatalogEntry{Kind: e.Kind, Name: e.Name, Origin: e.Origin})
		}
	}
	ws.Status.Catalog = counts
	ws.Status.Shadowed = nil
	for _, s := range m.Shadowed[:min(len(m.Shadowed), vocab.MaxStatusListItems)] {
		ws.Status.Shadowed = append(ws.Status.Shadowed, v1alpha1.ShadowedEntry{Kind: s.Kind, Name: s.Name, Origin: s.Origin, ShadowedBy: s.ShadowedBy})
	}
	setToolsStatus(ws, registry)
	setSkillSignaturesStatus(ws, res)
	setCommandsStatus(ws, res.Catalog)
	ws.Status.HeldContent = nil
	setCondition(ws, vocab.ConditionContextPublished, true, vocab.ReasonPublished,
		fmt.Sprintf("ConfigMap %s holds context %s (%d bytes)", ws.ConfigMapName(), res.Hash, res.Bytes))
}

// maxCommandNames bounds the commands CommandsOffered names per reason; the
// rest are counted.
const maxCommandNames = 16

// setCommandsStatus says which commands an agent is not offered, and why
// (package agentcommands).
func setCommandsStatus(ws *v1alpha1.Workspace, cat *resources.Catalog) {
	var cmds []agentcommands.Command
	if cat != nil {
		for _, t := range cat.Templates() {
			cmds = append(cmds, agentcommands.Command{Name: t.Name, Steps: t.Steps})
		}
	}
	all, msg := agentcommands.Summary(cmds, maxCommandNames)
	reason := vocab.ReasonCommandsOffered
	if !all {
		reason = vocab.ReasonCommandsNotOffered
	}
	setCondition(ws, vocab.ConditionCommandsOffered, all, reason, msg)
}

// recordTransitions emits Events for transitions a user should see: Ready
// turning False (with its reason), an extension's load becoming rejected
// (one Event per extension, naming what is wrong), and the context becoming
// published again (first publication or recovery). A routine republish after an input change
// is not a transition: status.context.hash records it without an Event, so a
// change costs one ConfigMap apply and one status patch, no more.
func (r *WorkspaceReconciler) recordTransitions(before, ws *v1alpha1.Workspace) {
	if r.Recorder == nil {
		return
	}
	old := meta.FindStatusCondition(before.Status.Conditions, string(vocab.ConditionReady))
	now := meta.FindStatusCondition(ws.Status.Conditions, string(vocab.ConditionReady))
	if now != nil && (old == nil || old.Status != now.Status || old.Reason != now.Reason) && now.Status != metav1.ConditionTrue {
		r.Recorder.Eventf(ws, nil, corev1.EventTypeWarning, now.Reason, "Reconcile", "%s", truncate(now.Message, maxEventMessage))
	}
	r.recordHeld(before, ws)
	for _, e := range newlyRejected(before.Status.Extensions, ws.Status.Extensions) {
		r.Recorder.Eventf(ws, nil, corev1.EventTypeWarning, string(vocab.ReasonExtensionRejected), "LoadExtension",
			"extension %s/%s was rejected (%s): %s", e.Namespace, e.Name, e.Reason, truncate(e.Message, maxEventMessage))
	}
	wasPublished := meta.IsStatusConditionTrue(before.Status.Conditions, string(vocab.ConditionContextPublished))
	if !wasPublished && meta.IsStatusConditionTrue(ws.Status.Conditions, string(vocab.ConditionContextPublished)) {
		r.Recorder.Eventf(ws, nil, corev1.EventTypeNormal, string(vocab.ReasonPublished), "Publish",
			"Published context %s to ConfigMap %s (%d bytes)", ws.Status.Context.Hash, ws.Status.Context.ConfigMapName, ws.Status.Context.Bytes)
	}
}

// newlyRejected lists the extensions rejected now that were not rejected, for
// the same reason and message, before: a fix-and-break-again is a new
// transition, a reconcile that changes nothing is not.
func newlyRejected(before, now []v1alpha1.ExtensionState) []v1alpha1.ExtensionState {
	type key struct{ namespace, name, reason, message string }
	was := map[key]bool{}
	for _, e := range before {
		if e.State == vocab.ExtensionRejected {
			was[key{e.Namespace, e.Name, e.Reason, e.Message}] = true
		}
	}
	var out []v1alpha1.ExtensionState
	for _, e := range now {
		if e.State == vocab.ExtensionRejected && !was[key{e.Namespace, e.Name, e.Reason, e.Message}] {
			out = append(out, e)
		}
	}
	return out
}

// Bounds of the text the controllers write into the API: each is the API's
// limit for the field, or a readable length where it has none, so a long
// error never makes a status update or an Event fail.
const (
	maxConditionMessage = 32768 // metav1.Condition's message limit
	maxHeldMessage      = 4096  // status.heldContent.message's limit
	maxEventMessage     = 1024  // an Event's note, kept to a readable line
	maxStatusEntryText  = 1024  // status.extensions[].message, status.tools[].description
)

// truncate cuts s to at most n bytes of valid UTF-8, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n-3], "") + "..."
}
