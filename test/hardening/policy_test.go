package hardening

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/controllers"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/resources"
	"github.com/loadout-dev/loadout/internal/test/demo"
	"github.com/loadout-dev/loadout/internal/test/testenv"
	"github.com/loadout-dev/loadout/internal/workspace"
)

// contextPolicyDenial starts the refusal of loadout-context-configmaps.
const contextPolicyDenial = "only the Loadout manager"

// stripHooks is the attack on a published context: drop every hook from
// manifest.json and recompute the hash, so that hostd would load the result
// as a well-formed context.
func stripHooks(t *testing.T, cm *corev1.ConfigMap) {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(cm.Data[contract.KeyManifest]), &m); err != nil {
		t.Fatal(err)
	}
	encode := func() string {
		b, err := json.MarshalIndent(m, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	m["hooks"], m["hash"] = []any{}, ""
	cm.Data[contract.KeyManifest] = encode()
	hash := resources.ContextHash(cm.Data)
	m["hash"] = hash
	cm.Data[contract.KeyManifest] = encode()
	cm.Annotations[vocab.ContextHashAnnotation] = hash
	if resources.ContextHash(cm.Data) != hash {
		t.Fatal("the forged context does not hash to its own hash: the attack is not well-formed")
	}
}

// TestTenancy_TenantCannotRewriteOrForgeItsPublishedContext: a tenant with
// every ConfigMap right in its namespace cannot strip the hooks from its
// published context (even with the hash recomputed), remove its label,
// delete it, or create another ConfigMap carrying the label; the context
// stays exactly what the manager published. ConfigMaps without the label are
// the tenant's as before.
func TestTenancy_TenantCannotRewriteOrForgeItsPublishedContext(t *testing.T) {
	ctx := context.Background()
	installPolicy(t, "context_configmap_policy.yaml")
	ns := kit.NewNamespace(t, vocab.TrustTrusted)
	kit.Create(t, testenv.Extension(ns, "guard", []v1alpha1.ExtensionTool{tool("guarded")},
		testenv.CELHook("no-secrets", vocab.BeforeToolCall, `!call.arguments.text.contains('SECRET')`)))
	kit.Create(t, devWorkspace(ns))
	ws, published := kit.Published(t, ns, "dev", "guarded")
	if !strings.Contains(published.Data[contract.KeyManifest], "no-secrets") {
		t.Fatal("the published context has no hook to strip")
	}

	tenant := "tenant-cm-" + ns
	grantInNamespace(t, ns, tenant, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"*"}})
	c := impersonate(t, tenant, "system:authenticated")
	key := client.ObjectKeyFromObject(published)
	waitEnforced(t, "the context ConfigMap policy", func() error {
		return c.Delete(ctx, published.DeepCopy(), client.DryRunAll)
	})

	for what, write := range map[string]func() error{
		"strip the hooks and recompute the hash": func() error {
			cm := &corev1.ConfigMap{}
			if err := c.Get(ctx, key, cm); err != nil {
				return err
			}
			stripHooks(t, cm)
			return c.Update(ctx, cm)
		},
		"remove the label": func() error {
			return c.Patch(ctx, published.DeepCopy(), client.RawPatch(types.MergePatchType,
				[]byte(`{"metadata":{"labels":{"loadout.dev/workspace":null}}}`)))
		},
		"delete it": func() error { return c.Delete(ctx, published.DeepCopy()) },
		"create a labelled ConfigMap": func() error {
			forged := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "forged-context",
				Labels: map[string]string{vocab.WorkspaceLabel: "dev"}}, Data: published.Data}
			return c.Create(ctx, forged)
		},
		"label an own ConfigMap": func() error {
			own := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "relabelled"}, Data: map[string]string{"a": "b"}}
			if err := c.Create(ctx, own); err != nil {
				return err
			}
			own.Labels = map[string]string{vocab.WorkspaceLabel: "dev"}
			return c.Update(ctx, own)
		},
	} {
		mustBeDenied(t, "the tenant tries to "+what, write(), contextPolicyDenial, ns)
	}

	// A copy of the signed context, unlabelled (the policy above does not
	// see it): kept, the tenant could delete its Workspace and re-create the
	// ConfigMap from it, and pods bound to the Workspace would load the old
	// policy under a genuine signature. No signed context is written but by
	// the manager.
	if _, ok := published.Data[contract.KeySignature]; !ok {
		t.Fatal("the published context is not signed")
	}
	waitEnforced(t, "the context signature policy", func() error {
		return c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "probe"}, Data: published.Data}, client.DryRunAll)
	})
	for name, cm := range map[string]*corev1.ConfigMap{
		"dev-context-copy": {Data: published.Data},
		"binary-copy":      {BinaryData: map[string][]byte{contract.KeySignature: []byte(published.Data[contract.KeySignature])}},
	} {
		cm.ObjectMeta = metav1.ObjectMeta{Namespace: ns, Name: name}
		mustBeDenied(t, "the tenant keeps an unlabelled copy of its signed context as "+name, c.Create(ctx, cm), "signature.json", ns+"/"+name)
	}

	after := kit.ConfigMap(t, ns, published.Name)
	if after.ResourceVersion != published.ResourceVersion {
		t.Errorf("the published ConfigMap changed (resourceVersion %s → %s)", published.ResourceVersion, after.ResourceVersion)
	}
	if err := testenv.Consistent(ws, after); err != nil {
		t.Error(err)
	}
	// Unlabelled ConfigMaps (instructions, the tenant's own) stay the tenant's.
	own := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "team-notes"}, Data: map[string]string{"AGENTS.md": "Be brief."}}
	if err := c.Create(ctx, own); err != nil {
		t.Fatalf("the tenant could not create an unlabelled ConfigMap: %v", err)
	}
	own.Data["AGENTS.md"] = "Be briefer."
	if err := c.Update(ctx, own); err != nil {
		t.Errorf("the tenant could not update an unlabelled ConfigMap: %v", err)
	}
	if err := c.Delete(ctx, own); err != nil {
		t.Errorf("the tenant could not delete an unlabelled ConfigMap: %v", err)
	}
}

// TestRBAC_ManagerPublishesAsItsServiceAccountWithTheGeneratedRoleAndPolicies
// stops the in-process manager and runs the Workspace reconciler as the
// manager's ServiceAccount, bound to exactly config/rbac/role.yaml, with both
// policies of config/policy enforced: it creates the context, applies a
// change over it and patches status, so the trimmed role is enough and the
// ConfigMap policies admit the manager. That identity still cannot write a
// ConfigMap without the context label, though its ClusterRole reaches
// kube-system.
func TestRBAC_ManagerPublishesAsItsServiceAccountWithTheGeneratedRoleAndPolicies(t *testing.T) {
	ctx := context.Background()
	mgrMu.Lock()
	defer mgrMu.Unlock()
	installPolicy(t, "trust_label_policy.yaml")
	installPolicy(t, "context_configmap_policy.yaml")
	for _, file := range []string{"role.yaml", "role_binding.yaml"} {
		raw, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "rbac", file))
		if err != nil {
			t.Fatal(err)
		}
		var obj client.Object = &rbacv1.ClusterRole{}
		if file == "role_binding.yaml" {
			obj = &rbacv1.ClusterRoleBinding{}
		}
		if err := yaml.UnmarshalStrict(raw, obj); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if err := k8sClient.Create(ctx, obj); err != nil {
			t.Fatalf("creating %s: %v", file, err)
		}
		deleteWhenDone(t, obj)
	}
	sa := impersonate(t, demo.ManagerUser, "system:serviceaccounts", "system:serviceaccounts:"+demo.PlatformNamespace, "system:authenticated")

	ns := kit.NewNamespace(t, vocab.TrustRestricted)
	kit.Create(t, testenv.Skill(ns, "notes", "Notes.", "NOTES BODY ONE"))
	if err := current.Stop(); err != nil {
		t.Fatal(err)
	}
	defer restartManager(t)
	r := handReconciler(sa, managerPolicy)
	kit.Create(t, activatedNotes(ns))
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "dev"}}
	reconcile := func(want string) {
		t.Helper()
		ws := reconcileUntilSettled(t, r, req)
		if err := testenv.Ready(ws); err != nil {
			t.Fatalf("as %s: %v (conditions %+v)", demo.ManagerUser, err, ws.Status.Conditions)
		}
		cm := kit.ConfigMap(t, ns, ws.ConfigMapName())
		if err := testenv.Consistent(ws, cm); err != nil {
			t.Fatal(err)
		}
		testenv.MustContain(t, "published skills", cm.Data[contract.KeySkills], want)
	}
	reconcile("NOTES BODY ONE") // create, then the status patch
	testenv.Update(t, kit, &v1alpha1.Skill{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "notes"}}, func(s *v1alpha1.Skill) {
		s.Spec.Body = "NOTES BODY TWO"
	})
	reconcile("NOTES BODY TWO") // server-side apply over it

	victim := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "victim-" + ns}, Data: map[string]string{"k": "v"}}
	kit.Create(t, victim)
	overwrite := client.RawPatch(types.MergePatchType, []byte(`{"data":{"k":"overwritten"}}`))
	waitEnforced(t, "the manager's ConfigMap policy", func() error { return sa.Patch(ctx, victim.DeepCopy(), overwrite, client.DryRunAll) })

	// The namespace's policy epoch, written as the manager's ServiceAccount
	// under the same role and policies.
	epochs := &controllers.PolicyEpochReconciler{Client: sa, APIReader: sa, Policy: managerPolicy, Signer: contextSigner,
		Loader: workspace.HostLoader{Resolve: resolved.resolve}, Grace: controllers.DefaultPolicyGrace, Now: time.Now}
	if _, err := epochs.Reconcile(ctx, ctrl.Request{NamespacedName: types.NamespacedName{Name: ns}}); err != nil {
		t.Fatalf("as %s, the policy epoch: %v", demo.ManagerUser, err)
	}
	if epoch := kit.ConfigMap(t, ns, contract.EpochConfigMap); epoch.Labels[contract.EpochLabel] != "true" || epoch.Data[contract.KeyPolicy] == "" {
		t.Errorf("the policy epoch written as the manager: %+v", epoch)
	}

	mustBeDenied(t, "the manager patches an unlabelled ConfigMap in kube-system", sa.Patch(ctx, victim.DeepCopy(), overwrite),
		"may only create and change ConfigMaps labelled loadout.dev/workspace")
	mustBeDenied(t, "the manager creates an unlabelled ConfigMap",
		sa.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "unlabelled"}}),
		"may only create and change ConfigMaps labelled loadout.dev/workspace")
}

// handReconciler is a WorkspaceReconciler reading and writing through c, for
// the tests that drive one by hand with the manager stopped.
func handReconciler(c client.Client, policy workspace.Policy) *controllers.WorkspaceReconciler {
	return &controllers.WorkspaceReconciler{
		Client: c, APIReader: c,
		Policy:           policy,
		Loader:           workspace.HostLoader{Resolve: resolved.resolve},
		ReconcileTimeout: reconcileTimeout,
	}
}

// reconcileUntilSettled runs r on req as the work queue would with the
// manager stopped: a pass that wrote the context requeues itself to patch
// the status afterwards, so it runs again until a pass asks for nothing. It
// returns the Workspace as the last pass left it.
func reconcileUntilSettled(t *testing.T, r *controllers.WorkspaceReconciler, req ctrl.Request) *v1alpha1.Workspace {
	t.Helper()
	for pass := 1; ; pass++ {
		res, err := r.Reconcile(context.Background(), req)
		if err != nil {
			t.Fatalf("reconcile %s (pass %d): %v", req, pass, err)
		}
		if res.IsZero() {
			ws := &v1alpha1.Workspace{}
			if err := k8sClient.Get(context.Background(), req.NamespacedName, ws); err != nil {
				t.Fatal(err)
			}
			return ws
		}
		if pass == 5 {
			t.Fatalf("reconcile %s still requeues after %d passes (%+v)", req, pass, res)
		}
	}
}
