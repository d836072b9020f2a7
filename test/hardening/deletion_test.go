package hardening

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	hostdserver "github.com/loadout-dev/loadout/internal/hostd"
	"github.com/loadout-dev/loadout/internal/test/testnet"
	"github.com/loadout-dev/loadout/internal/workspace"
)

// TestTenancy_WorkspaceDeletionCannotFreezePolicy: a tenant with every right
// in its namespace tries to keep a Workspace's context (and its policy of
// the moment) alive by deleting the Workspace: an orphaning delete and a
// finalizer of its own are refused at admission. A Workspace kept
// Terminating anyway (an admin's finalizer) publishes, at once, a signed
// context that a real hostd serves as deny-all; new pods bound to it are
// refused. The garbage collector may still drop the ConfigMap's owner
// reference (an admin's orphaning delete does not hang), but not change
// its data.
func TestTenancy_WorkspaceDeletionCannotFreezePolicy(t *testing.T) {
	ctx := context.Background()
	// Removed when the test ends: loadout-agent-pod-workspace refuses a
	// labelled pod in a namespace without Workspaces, which the agent pod
	// tests of a later run (go test -count=N) create.
	for _, o := range installPolicy(t, "workspace_deletion_policy.yaml") {
		deleteWhenDone(t, o)
	}
	installPolicy(t, "context_configmap_policy.yaml")
	ns, _, _ := publishedNotes(t, vocab.TrustTrusted)
	bindAgentPods(t, ns)
	tenant := namespaceAdmin(t, ns)
	ws := &v1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "dev"}}

	waitEnforced(t, "the Workspace deletion policy", func() error {
		return tenant.Delete(ctx, ws, client.PropagationPolicy(metav1.DeletePropagationOrphan), client.DryRunAll)
	})
	mustBeDenied(t, "an orphaning delete", tenant.Delete(ctx, ws, client.PropagationPolicy(metav1.DeletePropagationOrphan)),
		"Workspace "+ns+"/dev", "propagationPolicy: Orphan")
	// The deprecated field is the attack: the API server still honours it.
	orphan := &metav1.DeleteOptions{OrphanDependents: ptr.To(true)} //nolint:staticcheck // see above
	mustBeDenied(t, "a delete with orphanDependents", tenant.Delete(ctx, ws, &client.DeleteOptions{Raw: orphan}),
		"propagationPolicy: Orphan")
	withFinalizer := func(c client.Client, f string) error {
		got := &v1alpha1.Workspace{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(ws), got); err != nil {
			return err
		}
		got.Finalizers = append(got.Finalizers, f)
		return c.Update(ctx, got)
	}
	mustBeDenied(t, "a tenant's finalizer", withFinalizer(tenant, "tenant.example/keep"), "only the admin groups may add finalizers", "tenant.example/keep")
	squat := devWorkspace(ns)
	squat.Name, squat.Finalizers = "squat", []string{"tenant.example/keep"}
	mustBeDenied(t, "a Workspace created with a finalizer", tenant.Create(ctx, squat), "tenant.example/keep")

	// An admin's finalizer keeps it Terminating; the tenant deletes it.
	if err := withFinalizer(k8sClient, "admin.example/hold"); err != nil {
		t.Fatalf("an admin could not add a finalizer: %v", err)
	}
	t.Cleanup(func() {
		got := &v1alpha1.Workspace{}
		if k8sClient.Get(ctx, client.ObjectKeyFromObject(ws), got) == nil {
			got.Finalizers = nil
			_ = k8sClient.Update(ctx, got)
		}
	})
	if err := tenant.Delete(ctx, ws); err != nil {
		t.Fatalf("the tenant could not delete its Workspace: %v", err)
	}
	var cm *corev1.ConfigMap
	kit.Eventually(t, func() error {
		got, err := kit.GetConfigMap(ns, "dev-context")
		if err != nil {
			return err
		}
		if !strings.Contains(got.Data["manifest.json"], workspace.DenyAllExtension) {
			return fmt.Errorf("the context of the Terminating Workspace does not deny everything yet")
		}
		cm = got
		return nil
	})
	if strings.Contains(allData(cm), "NOTES BODY") {
		t.Error("the deny-all context still carries the Workspace's content")
	}
	url := startHostdOn(t, ns, cm.Data)
	for _, call := range []struct {
		tool string
		args map[string]any
	}{{"bash", map[string]any{"command": "ls"}}, {"read", map[string]any{"path": "README.md"}}, {"review_note", map[string]any{}}} {
		if v := before(t, url, call.tool, call.args); v.allowed || !strings.Contains(v.reason, "denied") {
			t.Errorf("%s through hostd on a Terminating Workspace's context: %+v, want denied", call.tool, v)
		}
	}
	var answer hostdserver.EventResponse
	testnet.PostJSON(t, url+"/v1/events/UserInput", `{"prompt":{"text":"hello"}}`, &answer)
	if answer.Allowed || !strings.Contains(answer.Message, "is being deleted") {
		t.Errorf("a prompt on a Terminating Workspace's context: %+v, want refused naming the deletion", answer)
	}

	waitEnforced(t, "the agent pod Workspace policy", func() error {
		return tenant.Create(ctx, agentPod(ns, "late-probe", "dev"), client.DryRunAll)
	})
	mustBeDenied(t, "a pod bound to a Workspace being deleted", tenant.Create(ctx, agentPod(ns, "late", "dev")),
		"Workspace "+ns+"/dev", "being deleted")

	// The garbage collector's orphaning write (owner references only) passes
	// the signature policy; the same identity changing the data does not.
	gc := impersonate(t, "system:serviceaccount:kube-system:generic-garbage-collector", "system:serviceaccounts", "system:authenticated")
	grant(t, "system:serviceaccount:kube-system:generic-garbage-collector", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "update", "patch"}})
	edited := cm.DeepCopy()
	edited.Data["system-prompt.md"] = "edited"
	// Admission policies take effect asynchronously, and so does the grant:
	// wait for the signature policy's own refusal (RBAC's would not prove it
	// is loaded) before an allowed write can mean anything.
	kit.Eventually(t, func() error {
		if err := gc.Update(ctx, edited, client.DryRunAll); err == nil || !strings.Contains(err.Error(), "signature.json") {
			return fmt.Errorf("loadout-context-signatures is not enforced yet: %v", err)
		}
		return nil
	})
	orphaned := cm.DeepCopy()
	orphaned.OwnerReferences = nil
	if err := gc.Update(ctx, orphaned, client.DryRunAll); err != nil {
		t.Errorf("the garbage collector's owner-reference-only update was refused: %v", err)
	}
	mustBeDenied(t, "the garbage collector's identity editing a signed context", gc.Update(ctx, edited, client.DryRunAll), "signature.json")
}
