package controllers

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/mcppin"
)

// pin applies e's pins to a fresh discovery (mcppin.Apply: a changed
// pinned tool keeps its last good definition, last, or is dropped) and
// reports it: the ToolsPinned condition, and a Warning Event on the
// Extension when the drift it names is new, so a resync every few minutes
// does not repeat it. Without pins the condition is removed.
func (d *mcpDiscoverer) pin(e *v1alpha1.Extension, found, last []v1alpha1.DiscoveredTool) []v1alpha1.DiscoveredTool {
	sel := e.Spec.MCPServer.Tools
	served, drifts := mcppin.Apply(found, last, sel)
	if len(sel.Pins) == 0 {
		meta.RemoveStatusCondition(&e.Status.Conditions, string(vocab.ConditionToolsPinned))
		return served
	}
	cond := metav1.Condition{Type: string(vocab.ConditionToolsPinned), Status: metav1.ConditionTrue,
		Reason: string(vocab.ReasonPinsMatch), ObservedGeneration: e.Generation,
		Message: fmt.Sprintf("%d pinned tools match their pins", len(sel.Pins))}
	if len(drifts) > 0 {
		says := make([]string, len(drifts))
		for i, dr := range drifts {
			says[i] = dr.String()
		}
		cond.Status, cond.Reason = metav1.ConditionFalse, string(vocab.ReasonPinDrift)
		cond.Message = truncate(strings.Join(says, "\n")+"\naccept a change by updating spec.mcpServer.tools.pins (loadout mcp pin)", maxConditionMessage)
	}
	was := meta.FindStatusCondition(e.Status.Conditions, cond.Type)
	isNew := was == nil || was.Message != cond.Message
	meta.SetStatusCondition(&e.Status.Conditions, cond)
	if len(drifts) > 0 && isNew && d.events != nil {
		d.events.Eventf(e, nil, corev1.EventTypeWarning, string(vocab.ReasonPinDrift), "DiscoverTools", "%s", truncate(cond.Message, maxEventMessage))
	}
	return served
}
