package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/loadout-dev/loadout/internal/test/manifests"
	"github.com/loadout-dev/loadout/internal/test/testenv"
)

func TestInstall_KustomizeDefaultIsAcceptedByTheAPIServer(t *testing.T) {
	_, cfg := apiServer(t)
	ctx := context.Background()
	out := testenv.KustomizeBuild(t, "config/default")
	objs, err := manifests.Decode(out)
	if err != nil {
		t.Fatalf("kustomize build config/default: %v", err)
	}
	var applied []manifests.Manifest
	count := map[string]int{}
	for _, o := range objs {
		applied = append(applied, manifests.Manifest{File: "kustomize build config/default", Object: o})
		count[o.GetKind()]++
		if ns := o.GetNamespace(); ns != "" && ns != "loadout-system" {
			t.Errorf("%s %s is in namespace %s, want loadout-system", o.GetKind(), o.GetName(), ns)
		}
	}
	want := map[string]int{
		// loadout-manager, loadout-metrics-auth, loadout-metrics-reader, loadout-hostd-approvals, loadout-approver
		"Namespace": 1, "CustomResourceDefinition": 5, "ServiceAccount": 1, "ClusterRole": 5, "ClusterRoleBinding": 2,
		// loadout-leader-election, loadout-signing; Services loadout-manager-metrics, loadout-mcp-headers
		"Role": 2, "RoleBinding": 2, "Deployment": 1, "Service": 2,
		// loadout-trust-label, loadout-context-configmaps, loadout-policy-epochs, loadout-manager-configmaps,
		// loadout-context-signatures, loadout-agent-pods, loadout-agent-pod-updates, loadout-hostd-exec,
		// loadout-mcp-headers-tokens, loadout-workspace-deletion, loadout-agent-pod-workspace, loadout-approvals,
		// loadout-agent-pods-sandboxed; the mutating loadout-agent-pods
		"ValidatingAdmissionPolicy": 13, "ValidatingAdmissionPolicyBinding": 13,
		"MutatingAdmissionPolicy": 1, "MutatingAdmissionPolicyBinding": 1,
	}
	for kind, n := range want {
		if count[kind] != n {
			t.Errorf("kustomize build config/default has %d %s, want %d", count[kind], kind, n)
		}
	}

	c := newClient(t, cfg)
	// Applied for real (Namespace and CRDs first), then once more as a
	// server-side dry-run: a second apply of the same objects must be clean.
	if err := manifests.Apply(ctx, c, applied); err != nil {
		t.Fatal(err)
	}
	if err := manifests.Apply(ctx, c, applied, client.DryRunAll); err != nil {
		t.Fatalf("re-applying (dry-run) the installed objects: %v", err)
	}

	for _, name := range []string{"skills.loadout.dev", "templates.loadout.dev", "extensions.loadout.dev", "workspaces.loadout.dev"} {
		if err := waitEstablished(ctx, c, name); err != nil {
			t.Error(err)
		}
	}

	dep := &appsv1.Deployment{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "loadout-system", Name: "loadout-manager"}, dep); err != nil {
		t.Fatal(err)
	}
	checkManagerDeployment(t, dep)
	// The manager honours its platform namespace only with the trust label.
	ns := &corev1.Namespace{}
	if err := c.Get(ctx, client.ObjectKey{Name: "loadout-system"}, ns); err != nil || ns.Labels["loadout.dev/trust"] != "trusted" {
		t.Errorf("Namespace loadout-system labels %v (%v), want loadout.dev/trust=trusted", ns.Labels, err)
	}
}

func waitEstablished(ctx context.Context, c client.Client, name string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		crd := &unstructured.Unstructured{}
		crd.SetAPIVersion("apiextensions.k8s.io/v1")
		crd.SetKind("CustomResourceDefinition")
		if err := c.Get(ctx, client.ObjectKey{Name: name}, crd); err == nil {
			conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
			for _, cond := range conds {
				if m, ok := cond.(map[string]any); ok && m["type"] == "Established" && m["status"] == "True" {
					return nil
				}
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("CRD %s not Established after 30s", name)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// checkManagerDeployment asserts the manager Deployment docs/operations.md describes.
func checkManagerDeployment(t *testing.T, dep *appsv1.Deployment) {
	t.Helper()
	spec := dep.Spec.Template.Spec
	if spec.ServiceAccountName != "loadout-manager" {
		t.Errorf("serviceAccountName = %q", spec.ServiceAccountName)
	}
	if psc := spec.SecurityContext; psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot ||
		psc.SeccompProfile == nil || psc.SeccompProfile.Type != "RuntimeDefault" {
		t.Errorf("pod securityContext = %+v, want runAsNonRoot and seccomp RuntimeDefault", psc)
	}
	if len(spec.Containers) != 1 {
		t.Fatalf("%d containers, want the manager only", len(spec.Containers))
	}
	m := spec.Containers[0]
	for _, arg := range []string{"--leader-elect", "--platform-namespace=loadout-system", "--health-probe-bind-address=:8081"} {
		if !slices.Contains(m.Args, arg) {
			t.Errorf("manager args %v lack %s", m.Args, arg)
		}
	}
	for probe, path := range map[string]string{"liveness": "/healthz", "readiness": "/readyz"} {
		p := m.LivenessProbe
		if probe == "readiness" {
			p = m.ReadinessProbe
		}
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != path || p.HTTPGet.Port.String() != "probes" {
			t.Errorf("%s probe = %+v, want GET %s on the probes port", probe, p, path)
		}
	}
	if port := m.Ports[slices.IndexFunc(m.Ports, func(p corev1.ContainerPort) bool { return p.Name == "probes" })]; port.ContainerPort != 8081 {
		t.Errorf("probes port = %d, want 8081", port.ContainerPort)
	}
	if m.Resources.Requests.Cpu().IsZero() || m.Resources.Requests.Memory().IsZero() || m.Resources.Limits.Memory().IsZero() {
		t.Errorf("resources = %+v, want CPU and memory requests and a memory limit", m.Resources)
	}
	sc := m.SecurityContext
	if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
		sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") {
		t.Errorf("container securityContext = %+v, want a read-only root, no privilege escalation, ALL capabilities dropped", sc)
	}
}

func TestInstall_KubectlApplyKustomizeDryRun(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl is not installed; TestInstall_KustomizeDefaultIsAcceptedByTheAPIServer covers the same objects")
	}
	env, _ := apiServer(t)
	u, err := env.AddUser(envtest.User{Name: "e2e-kubectl", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := testenv.WriteKubeconfig(t, u)
	// The Namespace first, so that the namespaced objects can be dry-run.
	for _, args := range [][]string{
		{"apply", "--server-side", "-f", "config/manager/namespace.yaml"},
		// Other tests applied the same objects with another field manager.
		{"apply", "--server-side", "--force-conflicts", "--dry-run=server", "-k", "config/default"},
	} {
		cmd := exec.Command(kubectl, append([]string{"--kubeconfig", kubeconfig}, args...)...)
		cmd.Dir = testenv.RepoRoot()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("kubectl %v: %v\n%s", args, err, out)
		}
	}
}
