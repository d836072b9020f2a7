package hardening

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contextsig"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/test/testenv"
)

// TestTenancy_TenantCannotPublishAContextWithoutThePlatformsPolicy: a
// platform guard (a hook and a denied tool) selects the tenant's namespace.
// The tenant, with full rights on Workspaces in its own namespace only,
// creates Workspaces with every field that could leave the guard out: roots
// without the platform, a platform root selecting nothing, its own deny list
// and built-in tools, another output name. Every context it gets published
// carries the guard's hook and denied tool, and the status lists the guard as
// enforced. Before platform policy was imposed, the first two published
// contexts without the guard.
func TestTenancy_TenantCannotPublishAContextWithoutThePlatformsPolicy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := kit.NewNamespace(t, vocab.TrustRestricted)
	// Selected by a label only the API server sets (tenants cannot edit
	// their Namespace), so the guard stays out of the suite's other tests.
	guard := testenv.Extension(platformNS, "guard-"+ns, nil, testenv.CELHook("no-rm", vocab.BeforeToolCall, `!(string(call.arguments.command).contains('rm '))`))
	guard.Spec.DeniedTools = []v1alpha1.ToolName{"curl"}
	guard.Spec.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}}
	kit.Create(t, guard)

	tenant := "tenant-ws-" + ns
	grantInNamespace(t, ns, tenant, rbacv1.PolicyRule{APIGroups: []string{v1alpha1.GroupVersion.Group}, Resources: []string{"*"}, Verbs: []string{"*"}})
	c := impersonate(t, tenant, "system:authenticated")

	nothing := &metav1.LabelSelector{MatchLabels: map[string]string{"selects": "nothing"}}
	specs := []v1alpha1.WorkspaceSpec{
		{Roots: []v1alpha1.WorkspaceRoot{{Name: "project"}}},
		{Roots: []v1alpha1.WorkspaceRoot{{Name: "project"}, {Name: "platform", Namespace: platformNS, Selector: nothing}}},
		{Tools: &v1alpha1.WorkspaceTools{Builtin: []v1alpha1.ToolName{"bash", "curl"}, Deny: []v1alpha1.ToolName{"wget"}}},
		{Roots: []v1alpha1.WorkspaceRoot{{Name: "project"}}, Output: &v1alpha1.WorkspaceOutput{ConfigMapName: "elsewhere"}},
	}
	for i, spec := range specs {
		name := fmt.Sprintf("ws-%d", i)
		if err := c.Create(ctx, &v1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: spec}); err != nil {
			t.Fatalf("the tenant could not create Workspace %s: %v", name, err)
		}
	}
	for i := range specs {
		name := fmt.Sprintf("ws-%d", i)
		ws, cm := kit.Published(t, ns, name)
		m := testenv.ManifestOf(t, cm)
		if !slices.ContainsFunc(m.Hooks, func(h contract.Hook) bool { return h.Extension == guard.Name && h.Name == "no-rm" }) {
			t.Errorf("Workspace %s (%+v): the published context lacks the platform hook: %+v", name, specs[i], m.Hooks)
		}
		if !slices.Contains(m.Deny, "curl") {
			t.Errorf("Workspace %s (%+v): the published deny list %v lacks the platform's curl", name, specs[i], m.Deny)
		}
		if !slices.ContainsFunc(ws.Status.Extensions, func(e v1alpha1.ExtensionState) bool {
			return e.Name == guard.Name && e.Enforced && e.State == vocab.ExtensionLoaded && slices.Equal(e.DeniedTools, []string{"curl"})
		}) {
			t.Errorf("Workspace %s: status.extensions %+v does not list the guard as enforced", name, ws.Status.Extensions)
		}
	}

	// Nor can the tenant move a context elsewhere after the fact: the
	// output name is immutable, so agents admitted with it keep updating.
	ws := &v1alpha1.Workspace{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "ws-3"}, ws); err != nil {
		t.Fatal(err)
	}
	ws.Spec.Output.ConfigMapName = "somewhere-else"
	mustBeDenied(t, "renaming the output", c.Update(ctx, ws), "immutable")
	testenv.MustContain(t, "the guard's own message", testenv.ConditionMessage(kit.WaitFor(t, ns, "ws-0", testenv.Ready), vocab.ConditionExtensionsLoaded), "1 enforced by the platform")
}

// TestTenancy_ConfigMapNameConflicts: a tenant creates Workspace "squat"
// whose output is the default name of Workspace "dev" before "dev" exists
// (or while it is re-created). The older Workspace keeps the name: "dev"
// says ConfigMapNameConflict naming "squat", the ConfigMap stays squat's and
// is signed for squat only, so hostd admitted for dev refuses it
// (internal/hostd TestVerify_ForgedUnsignedOrCrossWorkspaceContextsAreRefused).
// An older Workspace that finds its name held by a younger one (created
// while the cache had not seen the older) takes it over:
// controllers TestPublish_OlderWorkspaceTakesItsNameOverFromAYoungerOne.
func TestTenancy_ConfigMapNameConflicts(t *testing.T) {
	t.Parallel()
	ns := kit.NewNamespace(t, vocab.TrustRestricted)
	kit.Create(t, testenv.Skill(ns, "notes", "Notes.", "NOTES"))
	squat := devWorkspace(ns)
	squat.Name = "squat"
	squat.Spec.Output = &v1alpha1.WorkspaceOutput{ConfigMapName: "dev-context"}
	kit.Create(t, squat)
	_, cm := kit.Published(t, ns, "squat")
	// Creation timestamps have one-second resolution; within one second the
	// Workspace whose default name it is would count as the older.
	time.Sleep(1100 * time.Millisecond)
	kit.Create(t, devWorkspace(ns))
	dev := kit.WaitFor(t, ns, "dev", testenv.Condition(vocab.ConditionContextPublished, metav1.ConditionFalse, vocab.ReasonConfigMapNameConflict))
	testenv.MustContain(t, "ContextPublished message", testenv.ConditionMessage(dev, vocab.ConditionContextPublished),
		"ConfigMap "+ns+"/dev-context is the output of Workspace squat")
	now := kit.ConfigMap(t, ns, "dev-context")
	if ref := metav1.GetControllerOf(now); ref == nil || ref.Name != "squat" || now.ResourceVersion != cm.ResourceVersion {
		t.Fatalf("the younger Workspace touched the older one's ConfigMap: controller %+v, resourceVersion %s → %s", ref, cm.ResourceVersion, now.ResourceVersion)
	}
	hash := now.Annotations[vocab.ContextHashAnnotation]
	if err := contextAnchor.Verify([]byte(now.Data[contract.KeySignature]), hash, contextsig.Subject{Namespace: ns, Name: "squat"}); err != nil {
		t.Errorf("the owner's context does not verify for its owner: %v", err)
	}
	if err := contextAnchor.Verify([]byte(now.Data[contract.KeySignature]), hash, contextsig.Subject{Namespace: ns, Name: "dev"}); err == nil {
		t.Error("squat's context verifies for dev: an agent admitted for dev would load it")
	}

}
