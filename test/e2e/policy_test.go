package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/loadout-dev/loadout/internal/test/manifests"
	"github.com/loadout-dev/loadout/internal/test/testenv"
)

const (
	trustLabel = "loadout.dev/trust"
	// adminGroup is the group config/policy lets set the trust label.
	adminGroup = "loadout:trust-admins"
	// policyDenial starts the policy's message.
	policyDenial = "only members of"
)

// applyTrustPolicy applies config/policy and waits until the API server
// enforces it: admission policies take effect asynchronously.
func applyTrustPolicy(t *testing.T, admin client.Client, tenant client.Client) {
	t.Helper()
	ctx := context.Background()
	policy, err := manifests.Read(filepath.Join(testenv.RepoRoot(), "config", "policy"))
	if err != nil {
		t.Fatal(err)
	}
	if err := manifests.Apply(ctx, admin, policy); err != nil {
		t.Fatal(err)
	}
	probe := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "policy-probe", Labels: map[string]string{trustLabel: "trusted"}}}
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := tenant.Create(ctx, probe.DeepCopy(), client.DryRunAll)
		if err != nil && strings.Contains(err.Error(), policyDenial) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("ValidatingAdmissionPolicy loadout-trust-label not enforced after 30s: a tenant's dry-run create of a trusted Namespace returned %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// userClient is a client authenticated as a user of the given groups, who may
// create, update and patch Namespaces (RBAC granted by admin).
func userClient(t *testing.T, env *envtest.Environment, admin client.Client, name string, groups ...string) client.Client {
	t.Helper()
	ctx := context.Background()
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-namespace-editor-" + name},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch"}}},
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: name}},
	}
	for _, o := range []client.Object{role, binding} {
		if err := admin.Create(ctx, o); err != nil {
			t.Fatalf("creating %s %s: %v", o.GetObjectKind().GroupVersionKind().Kind, o.GetName(), err)
		}
		// Cluster-scoped, so another run of the test in this API server
		// (go test -count=N) finds the name free.
		t.Cleanup(func() { _ = admin.Delete(context.Background(), o) })
	}
	u, err := env.AddUser(envtest.User{Name: name, Groups: groups}, nil)
	if err != nil {
		t.Fatalf("adding user %s: %v", name, err)
	}
	return newClient(t, u.Config())
}

// setTrust reads Namespace name as c and sets its trust label to value
// ("" removes it), keeping every other label.
func setTrust(c client.Client, name, value string) error {
	ctx := context.Background()
	ns := &corev1.Namespace{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, ns); err != nil {
		return err
	}
	if ns.Labels == nil {
		ns.Labels = map[string]string{}
	}
	if value == "" {
		delete(ns.Labels, trustLabel)
	} else {
		ns.Labels[trustLabel] = value
	}
	return c.Update(ctx, ns)
}

func namespace(name string, labels map[string]string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

var trustPolicyRuns atomic.Int32

func TestTrustPolicy_TenantCannotSetOwnTrustAdminGroupCan(t *testing.T) { // docs/security.md, trust levels
	env, cfg := apiServer(t)
	ctx := context.Background()
	admin := newClient(t, cfg) // system:masters
	tenant := userClient(t, env, admin, "tenant-alice", "team-b:developers")
	trustAdmin := userClient(t, env, admin, "platform-bob", adminGroup)
	applyTrustPolicy(t, admin, tenant)
	// Namespaces are never deleted in envtest (no namespace controller), so
	// each run of the test (go test -count=N) names its own.
	run := fmt.Sprint(trustPolicyRuns.Add(1))
	tenantTrusted, tenantOwn := "e2e-tenant-trusted-"+run, "e2e-tenant-own-"+run
	adminTrusted, mastersTrusted := "e2e-admin-trusted-"+run, "e2e-masters-trusted-"+run

	denied := func(t *testing.T, what string, err error) {
		t.Helper()
		if err == nil {
			t.Fatalf("%s: allowed, want the trust policy to deny it", what)
		}
		if !strings.Contains(err.Error(), policyDenial) || !strings.Contains(err.Error(), trustLabel) {
			t.Fatalf("%s: %v, want the trust policy's denial", what, err)
		}
	}
	allowed := func(t *testing.T, what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v, want it allowed", what, err)
		}
	}

	t.Run("tenant", func(t *testing.T) {
		denied(t, "tenant creates a trusted Namespace",
			tenant.Create(ctx, namespace(tenantTrusted, map[string]string{trustLabel: "trusted"})))
		allowed(t, "tenant creates a Namespace without the trust label",
			tenant.Create(ctx, namespace(tenantOwn, map[string]string{"team": "b"})))
		denied(t, "tenant labels its Namespace trusted", setTrust(tenant, tenantOwn, "trusted"))
		denied(t, "tenant patches the label onto its Namespace",
			tenant.Patch(ctx, namespace(tenantOwn, nil), client.RawPatch("application/merge-patch+json",
				[]byte(`{"metadata":{"labels":{"loadout.dev/trust":"trusted"}}}`))))

		allowed(t, "trust admin sets restricted", setTrust(trustAdmin, tenantOwn, "restricted"))
		ns := &corev1.Namespace{}
		allowed(t, "tenant reads its Namespace", tenant.Get(ctx, client.ObjectKey{Name: tenantOwn}, ns))
		ns.Labels["team"] = "b2"
		allowed(t, "tenant changes another label, trust unchanged", tenant.Update(ctx, ns))
		denied(t, "tenant raises restricted to trusted", setTrust(tenant, tenantOwn, "trusted"))
		denied(t, "tenant removes the trust label", setTrust(tenant, tenantOwn, ""))

		got := &corev1.Namespace{}
		allowed(t, "reading the Namespace back", admin.Get(ctx, client.ObjectKey{Name: tenantOwn}, got))
		if got.Labels[trustLabel] != "restricted" || got.Labels["team"] != "b2" {
			t.Errorf("labels = %v, want trust restricted (the admin's) and team b2 (the tenant's)", got.Labels)
		}
	})

	t.Run("tenant label", func(t *testing.T) { // docs/operations.md, fair to tenants
		err := tenant.Patch(ctx, namespace(tenantOwn, nil), client.RawPatch("application/merge-patch+json",
			[]byte(`{"metadata":{"labels":{"loadout.dev/tenant":"someone-else"}}}`)))
		if err == nil || !strings.Contains(err.Error(), "loadout.dev/tenant") {
			t.Fatalf("tenant sets its own tenant label: %v, want the policy's denial", err)
		}
		allowed(t, "trust admin sets the tenant label", trustAdmin.Patch(ctx, namespace(tenantOwn, nil), client.RawPatch("application/merge-patch+json",
			[]byte(`{"metadata":{"labels":{"loadout.dev/tenant":"team-b"}}}`))))
	})

	t.Run("trust admin group", func(t *testing.T) {
		allowed(t, "trust admin creates a trusted Namespace",
			trustAdmin.Create(ctx, namespace(adminTrusted, map[string]string{trustLabel: "trusted"})))
		allowed(t, "trust admin lowers trusted to untrusted", setTrust(trustAdmin, adminTrusted, "untrusted"))
		allowed(t, "trust admin removes the label", setTrust(trustAdmin, adminTrusted, ""))
	})

	t.Run("system:masters", func(t *testing.T) {
		allowed(t, "cluster admin creates a trusted Namespace",
			admin.Create(ctx, namespace(mastersTrusted, map[string]string{trustLabel: "trusted"})))
		allowed(t, "cluster admin changes it", setTrust(admin, mastersTrusted, "restricted"))
	})
}
