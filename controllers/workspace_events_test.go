package controllers

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/test/testenv"
)

// An extension whose hook returns an outcome its event does not allow is
// rejected at reconcile, and the rejection is a Kubernetes Event on the
// Workspace naming the extension, the hook and the key.
func TestWorkspace_RejectedExtensionLoadIsAnEvent_RHK8(t *testing.T) {
	ns := kit.NewNamespace(t, vocab.TrustTrusted)
	kit.Create(t, testenv.Extension(ns, "redactor", nil, testenv.CELHook("redact", vocab.UserInput, "{'arguments': {'text': prompt.text}}")))
	kit.Create(t, &v1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "dev"}})
	got := kit.WaitFor(t, ns, "dev", testenv.Condition(vocab.ConditionExtensionsLoaded, metav1.ConditionFalse, vocab.ReasonExtensionRejected))
	if err := stateIs(got, ns+"/redactor", vocab.ExtensionRejected); err != nil {
		t.Fatal(err)
	}
	kit.Eventually(t, func() error {
		return warningEvent(ns, "Workspace", "dev", vocab.ReasonExtensionRejected,
			"extension "+ns+"/redactor was rejected", `hook "redact"`, `outcome key "arguments" is not allowed for UserInput`)
	})
}
