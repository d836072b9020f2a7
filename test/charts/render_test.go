package charts

import (
	"fmt"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/loadout-dev/loadout/internal/test/manifests"
	"github.com/loadout-dev/loadout/internal/test/testenv"
)

// helmOnlyAnnotations are the annotations the charts add to config/'s.
var helmOnlyAnnotations = []string{"helm.sh/resource-policy"}

// render runs `helm template` of chart (a directory under charts/) into the
// loadout-system namespace and decodes the objects.
func render(t *testing.T, chart string, args ...string) []*unstructured.Unstructured {
	t.Helper()
	out := testenv.Helm(t, append([]string{"template", chart, "charts/" + chart, "--namespace", "loadout-system", "--kube-version", kubeVersion}, args...)...)
	return decodeRendered(t, "helm template "+chart, out)
}

// decodeRendered decodes the objects a helm template or kustomize build
// printed; t fails, naming what rendered them, when they do not decode.
func decodeRendered(t *testing.T, what string, out []byte) []*unstructured.Unstructured {
	t.Helper()
	objs, err := manifests.Decode(out)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return objs
}

func key(u *unstructured.Unstructured) string {
	return fmt.Sprintf("%s %s %s/%s", u.GetAPIVersion(), u.GetKind(), u.GetNamespace(), u.GetName())
}

// compareWithKustomize checks that chart renders exactly the objects of
// `kustomize build dir`, field for field, except that the chart may add
// labels (and Helm's own annotations).
func compareWithKustomize(t *testing.T, chart []*unstructured.Unstructured, dir string) {
	t.Helper()
	want := decodeRendered(t, "kustomize build "+dir, testenv.KustomizeBuild(t, dir))
	got := map[string]*unstructured.Unstructured{}
	for _, u := range chart {
		if _, dup := got[key(u)]; dup {
			t.Errorf("the charts render %s twice", key(u))
		}
		got[key(u)] = u
	}
	for _, w := range want {
		g, ok := got[key(w)]
		if !ok {
			t.Errorf("kustomize build %s has %s; the charts do not render it", dir, key(w))
			continue
		}
		delete(got, key(w))
		g = g.DeepCopy()
		labels := g.GetLabels()
		for k, v := range w.GetLabels() {
			if labels[k] != v {
				t.Errorf("%s: label %s=%q, want %q as in kustomize build %s", key(w), k, labels[k], v, dir)
			}
		}
		g.SetLabels(w.GetLabels())
		annotations := g.GetAnnotations()
		for _, a := range helmOnlyAnnotations {
			delete(annotations, a)
		}
		if len(annotations) == 0 {
			annotations = nil
		}
		g.SetAnnotations(annotations)
		if !reflect.DeepEqual(g.Object, w.Object) {
			gy, _ := yaml.Marshal(g.Object)
			wy, _ := yaml.Marshal(w.Object)
			t.Errorf("%s differs from kustomize build %s:\n%s", key(w), dir, lineDiff(string(wy), string(gy)))
		}
	}
	for k := range got {
		t.Errorf("the charts render %s, which kustomize build %s does not have", k, dir)
	}
}

// lineDiff lists the lines only in want (-) or only in got (+).
func lineDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for _, l := range wl {
		if !slices.Contains(gl, l) {
			fmt.Fprintf(&b, "- %s\n", l)
		}
	}
	for _, l := range gl {
		if !slices.Contains(wl, l) {
			fmt.Fprintf(&b, "+ %s\n", l)
		}
	}
	return b.String()
}

func TestCharts_LintCleanly(t *testing.T) {
	for _, tc := range []struct {
		chart string
		set   []string
	}{
		{"loadout-crds", nil},
		{"loadout", nil},
		{"loadout", []string{"rbac.scope=namespace", "rbac.watchNamespaces={team-a,team-b}"}},
		{"loadout", []string{"metrics.serviceMonitor.enabled=true", "podDisruptionBudget.enabled=true", "replicas=2", "namespace.create=true"}},
	} {
		args := []string{"lint", "--strict", "charts/" + tc.chart, "--namespace", "loadout-system", "--kube-version", kubeVersion}
		for _, s := range tc.set {
			args = append(args, "--set", s)
		}
		testenv.Helm(t, args...)
	}
}

// The charts are generated from config/ (hack/sync-charts.sh) and must render
// the same objects as `kustomize build config/default`, so a change to one
// that is not in the other fails here.
func TestCharts_RenderEqualsKustomizeBuildConfigDefault(t *testing.T) {
	objs := append(render(t, "loadout-crds"), render(t, "loadout", "--set", "namespace.create=true", "--set", "image.tag=dev")...)
	compareWithKustomize(t, objs, "config/default")
}

// rbac.scope=namespace renders config/namespaced: Roles in the platform
// namespace and each watched namespace, and a ClusterRole for Namespaces only.
func TestCharts_NamespaceScopeEqualsKustomizeBuildConfigNamespaced(t *testing.T) {
	objs := append(render(t, "loadout-crds"), render(t, "loadout", "--set", "namespace.create=true", "--set", "image.tag=dev",
		"--set", "rbac.scope=namespace", "--set", "rbac.watchNamespaces={team-a}")...)
	compareWithKustomize(t, objs, "config/namespaced")
	for _, u := range objs {
		if u.GetKind() == "ClusterRole" && u.GetName() == "loadout-manager" {
			t.Errorf("namespace scope renders the cluster-wide ClusterRole loadout-manager")
		}
	}
}

func find(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, u := range objs {
		if u.GetKind() == kind && u.GetName() == name {
			return u
		}
	}
	return nil
}

func managerArgs(t *testing.T, objs []*unstructured.Unstructured) []string {
	t.Helper()
	dep := find(objs, "Deployment", "loadout-manager")
	if dep == nil {
		t.Fatal("no Deployment loadout-manager")
	}
	containers, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
	args, _, _ := unstructured.NestedStringSlice(containers[0].(map[string]any), "args")
	return args
}

func TestCharts_ValuesReachTheObjects(t *testing.T) {
	objs := render(t, "loadout",
		"--set", "image.repository=registry.example.com/loadout", "--set", "image.tag=v1.2.3",
		"--set", "replicas=3", "--set", "resources.limits.memory=1Gi",
		"--set", "platformNamespaces={platform-a,platform-b}", "--set", "defaultTrust=untrusted",
		"--set", "trustAdminGroups={corp:platform-admins}",
		"--set", "leaderElection.enabled=false",
		"--set", "metrics.secure=false", "--set", "metrics.port=9090", "--set", "metrics.perWorkspace=true",
		"--set", "metrics.serviceMonitor.enabled=true", "--set", "podDisruptionBudget.enabled=true",
		"--set", "extraArgs={--max-concurrent-reconciles=8}",
		"--set", "claudeCodeBaseURL=https://llm-gateway.platform.svc:8443")
	args := managerArgs(t, objs)
	for _, want := range []string{"--platform-namespace=platform-a,platform-b", "--default-trust=untrusted",
		"--claude-code-base-url=https://llm-gateway.platform.svc:8443",
		"--metrics-bind-address=:9090", "--metrics-secure=false", "--metrics-per-workspace", "--max-concurrent-reconciles=8"} {
		if !slices.Contains(args, want) {
			t.Errorf("manager args %v lack %s", args, want)
		}
	}
	if slices.Contains(args, "--leader-elect") || find(objs, "Role", "loadout-leader-election") != nil {
		t.Errorf("leaderElection.enabled=false still elects a leader (args %v) or grants its Role", args)
	}
	if find(objs, "ClusterRole", "loadout-metrics-auth") != nil {
		t.Error("metrics.secure=false still renders the metrics auth ClusterRole")
	}
	dep := find(objs, "Deployment", "loadout-manager")
	// Decoded from YAML through JSON, numbers are float64.
	if n, _, _ := unstructured.NestedFieldNoCopy(dep.Object, "spec", "replicas"); n != float64(3) {
		t.Errorf("replicas = %v, want 3", n)
	}
	containers, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
	c := containers[0].(map[string]any)
	if img := c["image"]; img != "registry.example.com/loadout:v1.2.3" {
		t.Errorf("image = %v", img)
	}
	if mem, _, _ := unstructured.NestedString(c, "resources", "limits", "memory"); mem != "1Gi" {
		t.Errorf("memory limit = %q, want 1Gi", mem)
	}
	vap := find(objs, "ValidatingAdmissionPolicy", "loadout-trust-label")
	vars, _, _ := unstructured.NestedSlice(vap.Object, "spec", "variables")
	found := false
	for _, v := range vars {
		if m := v.(map[string]any); m["name"] == "adminGroups" {
			found = true
			if m["expression"] != "['corp:platform-admins']" {
				t.Errorf("adminGroups expression = %v, want ['corp:platform-admins']", m["expression"])
			}
		}
	}
	if !found {
		t.Error("the trust policy has no adminGroups variable")
	}
	if find(objs, "ServiceMonitor", "loadout-manager-metrics") == nil || find(objs, "PodDisruptionBudget", "loadout-manager") == nil {
		t.Error("serviceMonitor.enabled and podDisruptionBudget.enabled render no ServiceMonitor or PodDisruptionBudget")
	}
	if svc := find(objs, "Service", "loadout-manager-metrics"); svc != nil {
		ports, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports")
		if p := ports[0].(map[string]any); p["name"] != "http" || p["port"] != float64(9090) {
			t.Errorf("metrics Service port = %v, want http 9090", p)
		}
	}
}

// kubeVersion is the Kubernetes version the tests render the charts for:
// the test control plane's (hack/envtest/build.sh). The loadout chart
// requires 1.36 or later (its kubeVersion), and `helm template` assumes
// v1.20 unless told, as Argo CD and Flux tell it the cluster's.
const kubeVersion = "1.37.2"

// The loadout chart refuses a cluster older than 1.36, where its agent-pod
// policies (MutatingAdmissionPolicy) are not served: an install there would
// admit agent pods without hostd.
func TestCharts_LoadoutNeedsKubernetes136(t *testing.T) {
	for version, ok := range map[string]bool{"1.35.4": false, "1.36.0": true, "v1.36.2-eks-1234": true, kubeVersion: true} {
		cmd := exec.Command(testenv.HelmBinary(t), "template", "loadout", "charts/loadout", "--kube-version", version)
		cmd.Dir = testenv.RepoRoot()
		out, err := cmd.CombinedOutput()
		if (err == nil) != ok || (!ok && !strings.Contains(string(out), ">= 1.36.0-0")) {
			t.Errorf("helm template --kube-version %s: err %v, want ok %v\n%.300s", version, err, ok, out)
		}
	}
}

func TestCharts_RefuseBadValuesWithAMessage(t *testing.T) {
	for _, tc := range []struct {
		set  []string
		want string
	}{
		{[]string{"rbac.scope=tenant"}, `rbac.scope="tenant": must be cluster or namespace`},
		{[]string{"rbac.scope=namespace"}, "rbac.scope=namespace needs rbac.watchNamespaces"},
	} {
		args := []string{"template", "loadout", "charts/loadout", "--kube-version", kubeVersion}
		for _, s := range tc.set {
			args = append(args, "--set", s)
		}
		cmd := exec.Command(testenv.HelmBinary(t), args...)
		cmd.Dir = testenv.RepoRoot()
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), tc.want) {
			t.Errorf("helm template --set %v: err %v, output %q; want a failure saying %q", tc.set, err, out, tc.want)
		}
	}
}

// The ConfigMap policies name the manager by its ServiceAccount: rendered
// into another release namespace, they name the manager there (and never
// loadout-system), and trustAdminGroups reaches their adminGroups as it
// reaches the trust policy's.
func TestCharts_ConfigMapPoliciesNameTheReleaseNamespacesManager(t *testing.T) {
	objs := decodeRendered(t, "helm template loadout", testenv.Helm(t, "template", "loadout", "charts/loadout", "--namespace", "platform-x", "--kube-version", kubeVersion,
		"--set", "trustAdminGroups={corp:platform-admins}"))
	for _, name := range []string{"loadout-context-configmaps", "loadout-manager-configmaps", "loadout-policy-epochs"} {
		vap := find(objs, "ValidatingAdmissionPolicy", name)
		if vap == nil || find(objs, "ValidatingAdmissionPolicyBinding", name) == nil {
			t.Fatalf("the chart renders no policy and binding %s", name)
		}
		b, _ := yaml.Marshal(vap.Object)
		if !strings.Contains(string(b), "system:serviceaccount:platform-x:loadout-manager") || strings.Contains(string(b), "loadout-system") {
			t.Errorf("policy %s does not name the release namespace's manager only:\n%s", name, b)
		}
	}
	vars, _, _ := unstructured.NestedSlice(find(objs, "ValidatingAdmissionPolicy", "loadout-context-configmaps").Object, "spec", "variables")
	for _, v := range vars {
		if m := v.(map[string]any); m["name"] == "adminGroups" && m["expression"] != "['corp:platform-admins']" {
			t.Errorf("adminGroups expression = %v, want ['corp:platform-admins']", m["expression"])
		}
	}
}

// The agent pod bindings read the hostd parameters (ConfigMap loadout-hostd,
// written by the manager) from the manager's namespace: rendered into
// another release namespace, they read them there.
func TestCharts_AgentPodPoliciesReadTheReleaseNamespacesHostdParameters(t *testing.T) {
	objs := decodeRendered(t, "helm template loadout", testenv.Helm(t, "template", "loadout", "charts/loadout", "--namespace", "platform-x", "--kube-version", kubeVersion))
	for _, kind := range []string{"MutatingAdmissionPolicyBinding", "ValidatingAdmissionPolicyBinding"} {
		b := find(objs, kind, "loadout-agent-pods")
		if b == nil {
			t.Fatalf("the chart renders no %s loadout-agent-pods", kind)
		}
		ref, _, _ := unstructured.NestedStringMap(b.Object, "spec", "paramRef")
		if want := map[string]string{"name": "loadout-hostd", "namespace": "platform-x", "parameterNotFoundAction": "Deny"}; !reflect.DeepEqual(ref, want) {
			t.Errorf("%s loadout-agent-pods paramRef = %v, want %v", kind, ref, want)
		}
	}
	if find(objs, "MutatingAdmissionPolicy", "loadout-agent-pods") == nil || find(objs, "ValidatingAdmissionPolicy", "loadout-agent-pod-updates") == nil {
		t.Error("the chart renders no agent pod policies")
	}
	// Only the kubelet mints hostd's MCP headers token (R-EXT-7).
	if find(objs, "ValidatingAdmissionPolicy", "loadout-mcp-headers-tokens") == nil || find(objs, "ValidatingAdmissionPolicyBinding", "loadout-mcp-headers-tokens") == nil {
		t.Error("the chart renders no policy and binding loadout-mcp-headers-tokens")
	}
}
