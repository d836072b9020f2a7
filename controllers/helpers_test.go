package controllers

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/test/testenv"
)

// workspaceWithRoots is a Workspace reading its own namespace and then the
// given platform namespace.
func workspaceWithRoots(ns, name, platform string) *v1alpha1.Workspace {
	return &v1alpha1.Workspace{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.WorkspaceSpec{Roots: []v1alpha1.WorkspaceRoot{
			{Name: "project"}, {Name: "platform", Namespace: platform},
		}},
	}
}

// reviewExtension is the fixed example (docs/rules.md)'s extension: tool review_note, a before hook
// denying SECRET and an after hook that observes.
func reviewExtension(ns string) *v1alpha1.Extension {
	ext := testenv.Extension(ns, "review-extension", []v1alpha1.ExtensionTool{{
		Name: "review_note", Description: "Adds a review note.",
		InputSchema: &runtime.RawExtension{Raw: []byte(`{"type":"object","properties":{"text":{"type":"string"}}}`)},
	}},
		v1alpha1.ExtensionHook{Name: "deny-secret", Event: vocab.BeforeToolCall, TimeoutSeconds: 10,
			Match: &v1alpha1.HookMatch{Tools: []v1alpha1.ToolName{"review_note"}},
			CEL:   &v1alpha1.CELHook{Expression: "!string(call.arguments.text).contains('SECRET')", Message: "notes must not contain secrets"}},
		v1alpha1.ExtensionHook{Name: "observe", Event: vocab.AfterToolResult, TimeoutSeconds: 10, CEL: &v1alpha1.CELHook{Expression: "true"}},
	)
	ext.Spec.PromptGuide = "Use review_note to record findings."
	ext.Spec.MessageTypes = []v1alpha1.MessageType{{Type: "review/note", InContext: true}}
	return ext
}

func extensionStatesOf(ws *v1alpha1.Workspace) map[string]vocab.ExtensionLoadState {
	out := map[string]vocab.ExtensionLoadState{}
	for _, e := range ws.Status.Extensions {
		out[e.Namespace+"/"+e.Name] = e.State
	}
	return out
}

type namespaceT = corev1.Namespace

func namespaceObject(name string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

// warningEvent is nil once the manager has recorded, in ns (every namespace
// when empty), a Warning Event with reason regarding kind/name whose note
// holds every part; otherwise an error listing the events there are.
func warningEvent(ns, kind, name string, reason vocab.ConditionReason, parts ...string) error {
	var list eventsv1.EventList
	if err := k8sClient.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
		return err
	}
	var seen []string
	for _, e := range list.Items {
		if e.Regarding.Kind == kind && e.Regarding.Name == name && e.Type == corev1.EventTypeWarning && e.Reason == string(reason) &&
			!slices.ContainsFunc(parts, func(p string) bool { return !strings.Contains(e.Note, p) }) {
			return nil
		}
		seen = append(seen, e.Regarding.Kind+"/"+e.Regarding.Name+" "+e.Reason+": "+e.Note)
	}
	return fmt.Errorf("no %s Warning Event on %s %s with %q; events: %q", reason, kind, name, parts, seen)
}
