package hardening

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/controllers"
	"github.com/loadout-dev/loadout/internal/contextsig"
	"github.com/loadout-dev/loadout/internal/mcpheaders"
	mcpendpoint "github.com/loadout-dev/loadout/internal/mcpheaders/endpoint"
	"github.com/loadout-dev/loadout/internal/test/testenv"
	"github.com/loadout-dev/loadout/internal/toolauth"
)

// What config/policy/agent_pod_policy.yaml injects into a pod labelled
// loadout.dev/workspace, and the parameter ConfigMap it reads (in the
// manager's namespace, platformNS here).
const (
	hostdContainer                    = "loadout-hostd"
	contextAnnotation                 = "loadout.dev/context-configmap"
	agentPodsDenial                   = "ValidatingAdmissionPolicy 'loadout-agent-pods'"
	agentUpdatesDenial                = "ValidatingAdmissionPolicy 'loadout-agent-pod-updates'"
	treePath                          = "/var/run/loadout/tree"
	testHostdImage                    = "registry.example.com/loadout:hostd-test"
	contextVolume                     = "loadout-context"
	policyVolume                      = "loadout-policy"
	treeVolume                        = "loadout-tree"
	sourceCacheVolume                 = "loadout-source-cache"
	sourceCredentialsVolume           = "loadout-source-credentials"
	serviceTokenVolume                = "loadout-service-token"
	keysEnv, bindingEnv, configMapEnv = "LOADOUT_CONTEXT_KEYS", "LOADOUT_WORKSPACE", "LOADOUT_CONTEXT_CONFIGMAP"
	mcpHeadersURLEnv, mcpHeadersCAEnv = "LOADOUT_MCP_HEADERS_URL", "LOADOUT_MCP_HEADERS_CA"
)

var hostdCommand = []string{"/loadout-hostd",
	"--context-dir=/var/run/loadout/context", "--policy-dir=/var/run/loadout/policy", "--addr=127.0.0.1:8181", "--materialize=/var/run/loadout/tree", "--managed-etc",
	"--probe-addr=:8182", "--source-cache=/var/run/loadout/source-cache",
	"--source-credentials=/var/run/loadout/source-credentials", "--service-token-file=/var/run/loadout/service-token/token",
	"--approvals-token-file=/var/run/loadout/service-token/api-token", "--approvals-ca-file=/var/run/loadout/service-token/ca.crt",
	"--mcp-headers-token-file=/var/run/loadout/service-token/mcp-headers-token"}

// testMCPHeaders is the manager's MCP headers endpoint as the suite's
// parameters publish it: its URL and a certificate made for it.
var testMCPHeaders = func() controllers.HostdConfig {
	host := mcpendpoint.DefaultService + "." + platformNS + ".svc"
	certPEM, _, err := mcpheaders.NewServingCert([]string{host}, time.Now())
	utilruntime.Must(err)
	return controllers.HostdConfig{MCPHeadersURL: "https://" + host + ":8444" + mcpheaders.Path, MCPHeadersCA: certPEM}
}()

// tenantAnchor is a trust anchor of the tenant's own: a fresh key.
func tenantAnchor(t *testing.T) string {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return contextsig.FormatPublicKey(pub) + "\n"
}

// hostdParamsKey is the parameter ConfigMap of the agent pod policies, in the
// manager's namespace (platformNS here).
var hostdParamsKey = types.NamespacedName{Namespace: platformNS, Name: controllers.DefaultHostdConfigMap}

// publishHostdParams writes the parameter ConfigMap as the manager does at
// start (the test manager does not): the hostd image, the public keys of
// the key set that signs the suite's contexts and the MCP headers endpoint.
// It returns its data.
func publishHostdParams(t *testing.T) map[string]string {
	t.Helper()
	hc := testMCPHeaders
	hc.Image, hc.Signer = testHostdImage, contextSigner
	if err := controllers.PublishHostdConfigWith(context.Background(), k8sClient, hostdParamsKey, hc); err != nil {
		t.Fatal(err)
	}
	got := kit.ConfigMap(t, hostdParamsKey.Namespace, hostdParamsKey.Name)
	if got.Data[controllers.HostdConfigImageKey] == "" || got.Data[controllers.HostdConfigContextKeys] == "" {
		t.Fatalf("ConfigMap %s lacks %s or %s: %v", hostdParamsKey, controllers.HostdConfigImageKey, controllers.HostdConfigContextKeys, got.Data)
	}
	return got.Data
}

// bindAgentPods installs the agent pod policies with their parameters and
// waits until the API server both injects hostd into a labelled pod and
// refuses one without it (dry runs in ns).
func bindAgentPods(t *testing.T, ns string) map[string]string {
	t.Helper()
	installPolicy(t, "agent_pod_policy.yaml")
	params := publishHostdParams(t)
	kit.Eventually(t, func() error {
		pod := agentPod(ns, "probe-injected", "dev")
		if err := k8sClient.Create(context.Background(), pod, client.DryRunAll); err != nil {
			return err
		}
		if hostd(pod) == nil {
			return errString("the MutatingAdmissionPolicy loadout-agent-pods does not inject hostd yet")
		}
		return nil
	})
	waitEnforced(t, "the ValidatingAdmissionPolicy loadout-agent-pods", func() error {
		pod := agentPod(ns, "probe-refused", "dev")
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: hostdContainer, Image: "example.com/not-hostd"})
		return k8sClient.Create(context.Background(), pod, client.DryRunAll)
	})
	return params
}

// boundTenant is a fresh namespace whose pods the agent pod policies bind,
// its namespace admin, and the policies' parameters (bindAgentPods).
func boundTenant(t *testing.T) (ns string, tenant client.Client, params map[string]string) {
	t.Helper()
	ns = kit.NewNamespace(t, "")
	params = bindAgentPods(t, ns)
	return ns, namespaceAdmin(t, ns), params
}

// namespaceAdmin returns a tenant with every right in ns and none elsewhere.
func namespaceAdmin(t *testing.T, ns string) client.Client {
	t.Helper()
	user := "tenant-admin-" + ns
	grantInNamespace(t, ns, user, rbacv1.PolicyRule{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}})
	return impersonate(t, user, "system:authenticated")
}

// agentPod is the sample's agent container alone: labelled, it reads the
// tree (whose volume the policies add); workspace "" leaves the label and
// the mount off.
func agentPod(ns, name, workspace string) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.PodSpec{
			AutomountServiceAccountToken: ptr.To(false),
			Containers: []corev1.Container{{
				Name: "agent", Image: "ghcr.io/loadout-dev/loadout-pi:dev",
				Env: []corev1.EnvVar{{Name: "LOADOUT_CONTEXT_DIR", Value: treePath}},
			}},
		},
	}
	if workspace != "" {
		pod.Labels = map[string]string{vocab.WorkspaceLabel: workspace}
		pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: treeVolume, MountPath: treePath, ReadOnly: true}}
	}
	return pod
}

// declaringTheTree declares the tree volume in pod, as a pod template that
// mounts it must (config/samples/agent-deployment.yaml): a pod the policies
// inject nothing into then still gets as far as their verdict.
func declaringTheTree(pod *corev1.Pod) *corev1.Pod {
	pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: treeVolume,
		VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	return pod
}

func hostd(pod *corev1.Pod) *corev1.Container {
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == hostdContainer {
			return &pod.Spec.InitContainers[i]
		}
	}
	return nil
}

// addTokenVolume adds a volume projecting a service account token for
// audience, as a tenant would to get a token of its own.
func addTokenVolume(p *corev1.Pod, name, audience string) {
	p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Audience: audience, Path: "t"}}}}}})
}

func volume(pod *corev1.Pod, name string) *corev1.Volume {
	for i := range pod.Spec.Volumes {
		if pod.Spec.Volumes[i].Name == name {
			return &pod.Spec.Volumes[i]
		}
	}
	return nil
}

// boundPod is what the policies make of agentPod: the sidecar and the
// volumes spelled out, as a dry-run create returns them.
func boundPod(t *testing.T, c client.Client, ns, name, workspace string) *corev1.Pod {
	t.Helper()
	pod := agentPod(ns, name, workspace)
	if err := c.Create(context.Background(), pod, client.DryRunAll); err != nil {
		t.Fatalf("dry-run create of a labelled pod: %v", err)
	}
	if hostd(pod) == nil {
		t.Fatal("the dry-run create returned no hostd sidecar")
	}
	out := agentPod(ns, name, workspace)
	out.Spec.InitContainers, out.Spec.Volumes = pod.Spec.InitContainers, pod.Spec.Volumes
	return out
}

// checkBound fails unless pod carries exactly the injected sidecar for
// namespace/workspace with params, and the volumes with contextConfigMap.
func checkBound(t *testing.T, pod *corev1.Pod, workspace, contextConfigMap string, params map[string]string) {
	t.Helper()
	h := hostd(pod)
	if h == nil {
		t.Fatalf("pod %s has no init container %s: %+v", pod.Name, hostdContainer, pod.Spec.InitContainers)
	}
	if h.Image != params[controllers.HostdConfigImageKey] {
		t.Errorf("hostd image %q, want %q (the parameter ConfigMap's)", h.Image, params[controllers.HostdConfigImageKey])
	}
	if h.RestartPolicy == nil || *h.RestartPolicy != corev1.ContainerRestartPolicyAlways {
		t.Errorf("hostd restartPolicy %v, want Always (a native sidecar)", h.RestartPolicy)
	}
	if !slices.Equal(h.Command, hostdCommand) || len(h.Args) != 0 {
		t.Errorf("hostd command %q args %q, want %q and none", h.Command, h.Args, hostdCommand)
	}
	wantEnv := []corev1.EnvVar{{Name: keysEnv, Value: params[controllers.HostdConfigContextKeys]}, {Name: bindingEnv, Value: pod.Namespace + "/" + workspace},
		{Name: configMapEnv, Value: contextConfigMap}}
	if url := params[controllers.HostdConfigMCPHeadersURL]; url != "" {
		wantEnv = append(wantEnv, corev1.EnvVar{Name: mcpHeadersURLEnv, Value: url},
			corev1.EnvVar{Name: mcpHeadersCAEnv, Value: params[controllers.HostdConfigMCPHeadersCA]})
	}
	if !reflect.DeepEqual(h.Env, wantEnv) || len(h.EnvFrom) != 0 {
		t.Errorf("hostd env %+v envFrom %+v, want %+v", h.Env, h.EnvFrom, wantEnv)
	}
	wantMounts := []corev1.VolumeMount{
		{Name: contextVolume, MountPath: "/var/run/loadout/context", ReadOnly: true},
		{Name: policyVolume, MountPath: "/var/run/loadout/policy", ReadOnly: true},
		{Name: treeVolume, MountPath: treePath},
		{Name: sourceCacheVolume, MountPath: "/var/run/loadout/source-cache"},
		{Name: sourceCredentialsVolume, MountPath: "/var/run/loadout/source-credentials", ReadOnly: true},
		{Name: serviceTokenVolume, MountPath: "/var/run/loadout/service-token", ReadOnly: true},
	}
	if !reflect.DeepEqual(h.VolumeMounts, wantMounts) {
		t.Errorf("hostd volumeMounts %+v, want %+v", h.VolumeMounts, wantMounts)
	}
	for what, probe := range map[string]*corev1.Probe{"startup": h.StartupProbe, "readiness": h.ReadinessProbe, "liveness": h.LivenessProbe} {
		if probe == nil || probe.HTTPGet == nil || probe.HTTPGet.Port.String() != "hostd-probes" {
			t.Errorf("hostd %s probe %+v, want an HTTP GET on port hostd-probes", what, probe)
		}
	}
	if len(h.Ports) != 1 || h.Ports[0].ContainerPort != 8182 {
		t.Errorf("hostd ports %+v, want hostd-probes 8182", h.Ports)
	}
	if h.Resources.Requests.Cpu().Cmp(resource.MustParse("10m")) != 0 || h.Resources.Requests.Memory().Cmp(resource.MustParse("32Mi")) != 0 ||
		h.Resources.Limits.Memory().Cmp(resource.MustParse("128Mi")) != 0 {
		t.Errorf("hostd resources %+v, want requests cpu 10m memory 32Mi, limit memory 128Mi", h.Resources)
	}
	sc := h.SecurityContext
	if sc == nil || !ptr.Deref(sc.ReadOnlyRootFilesystem, false) || ptr.Deref(sc.AllowPrivilegeEscalation, true) ||
		!ptr.Deref(sc.RunAsNonRoot, false) || sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
		t.Errorf("hostd securityContext %+v, want a read-only root, no privilege escalation, non-root, all capabilities dropped", sc)
	}
	if v := volume(pod, contextVolume); v == nil || v.ConfigMap == nil || v.ConfigMap.Name != contextConfigMap {
		t.Errorf("volume %s = %+v, want ConfigMap %s", contextVolume, v, contextConfigMap)
	}
	// The namespace's policy epoch, not optional: without it hostd serves
	// nothing, and the kubelet does not start the pod.
	if v := volume(pod, policyVolume); v == nil || v.ConfigMap == nil || v.ConfigMap.Name != "loadout-policy" || ptr.Deref(v.ConfigMap.Optional, false) {
		t.Errorf("volume %s = %+v, want the ConfigMap loadout-policy, not optional", policyVolume, v)
	}
	for _, name := range []string{treeVolume, sourceCacheVolume} {
		if v := volume(pod, name); v == nil || v.EmptyDir == nil {
			t.Errorf("volume %s = %+v, want an emptyDir", name, v)
		}
	}
	// The pod's own optional Secret: a pod starts whether or not it exists.
	if v := volume(pod, sourceCredentialsVolume); v == nil || v.Secret == nil || v.Secret.SecretName != sourceCredentialsVolume ||
		!ptr.Deref(v.Secret.Optional, false) {
		t.Errorf("volume %s = %+v, want the optional Secret %s", sourceCredentialsVolume, v, sourceCredentialsVolume)
	}
	// hostd's proof to tool Services: the kubelet's token for the Loadout
	// audience, at the minimum lifetime (toolauth).
	if v := volume(pod, serviceTokenVolume); v == nil || v.Projected == nil || len(v.Projected.Sources) != 4 ||
		v.Projected.Sources[0].ServiceAccountToken == nil || v.Projected.Sources[0].ServiceAccountToken.Audience != toolauth.Audience ||
		ptr.Deref(v.Projected.Sources[0].ServiceAccountToken.ExpirationSeconds, 0) != 600 || v.Projected.Sources[0].ServiceAccountToken.Path != "token" {
		t.Errorf("volume %s = %+v, want a projected ServiceAccount token for %s, 600 seconds, at token", serviceTokenVolume, v, toolauth.Audience)
	} else if api, ca := v.Projected.Sources[1].ServiceAccountToken, v.Projected.Sources[2].ConfigMap; api == nil || api.Audience != "" || api.Path != "api-token" ||
		ptr.Deref(api.ExpirationSeconds, 0) != 600 || ca == nil || ca.Name != "kube-root-ca.crt" || len(ca.Items) != 1 || ca.Items[0].Path != "ca.crt" {
		t.Errorf("volume %s = %+v, want hostd's API server token at api-token (600 seconds) and kube-root-ca.crt's ca.crt, for Approvals", serviceTokenVolume, v)
	} else if mh := v.Projected.Sources[3].ServiceAccountToken; mh == nil || mh.Audience != mcpheaders.Audience || mh.Path != "mcp-headers-token" ||
		ptr.Deref(mh.ExpirationSeconds, 0) != 600 {
		t.Errorf("volume %s = %+v, want hostd's token for the MCP headers endpoint (%s, 600 seconds) at mcp-headers-token", serviceTokenVolume, v, mcpheaders.Audience)
	}
}

// A labelled pod gets hostd (first among its init containers), its
// Workspace's context and the tree; the tenant's containers are kept as they
// were. The pod the policies produced, created again as it is, comes back
// unchanged (nothing is injected twice). A Workspace with a custom output
// name gets that ConfigMap through the annotation. An unlabelled pod is
// untouched.
func TestAgentPods_LabelledPodGetsHostdItsContextAndTheTree(t *testing.T) {
	ctx := context.Background()
	ns, tenant, params := boundTenant(t)

	pod := agentPod(ns, "agent", "dev")
	pod.Spec.InitContainers = []corev1.Container{{Name: "clone", Image: "example.com/git", Command: []string{"git", "clone"}}}
	submitted := pod.Spec.Containers[0].DeepCopy()
	if err := tenant.Create(ctx, pod); err != nil {
		t.Fatalf("the tenant could not create a labelled agent pod: %v", err)
	}
	checkBound(t, pod, "dev", "dev-context", params)
	if names := containerNames(pod.Spec.InitContainers); !slices.Equal(names, []string{hostdContainer, "clone"}) {
		t.Errorf("init containers %v, want hostd first, then the pod's own", names)
	}
	// Every container but hostd gets the tree where the stock agents read
	// their organisation's policy, and nothing else changes.
	policyMounts := []corev1.VolumeMount{{Name: treeVolume, MountPath: "/etc/claude-code", ReadOnly: true}, {Name: treeVolume, MountPath: "/etc/codex", ReadOnly: true}}
	if got := pod.Spec.Containers; len(got) != 1 || got[0].Image != submitted.Image ||
		!reflect.DeepEqual(got[0].VolumeMounts, append(submitted.VolumeMounts, policyMounts...)) || !reflect.DeepEqual(got[0].Env, submitted.Env) {
		t.Errorf("the agent container changed but for the policy mounts: %+v, submitted %+v", got, submitted)
	}
	if got := pod.Spec.InitContainers[1].VolumeMounts; !reflect.DeepEqual(got, policyMounts) {
		t.Errorf("the init container clone mounts %+v, want %+v", got, policyMounts)
	}

	again := agentPod(ns, "agent-again", "dev")
	again.Spec.InitContainers, again.Spec.Volumes = pod.Spec.InitContainers, pod.Spec.Volumes
	if err := tenant.Create(ctx, again); err != nil {
		t.Fatalf("the tenant could not create a pod spelling out the injected sidecar: %v", err)
	}
	if !apiequality.Semantic.DeepEqual(again.Spec.InitContainers, pod.Spec.InitContainers) || !apiequality.Semantic.DeepEqual(again.Spec.Volumes, pod.Spec.Volumes) {
		t.Errorf("a pod spelling out the sidecar was changed:\ninit containers %+v\nvolumes %+v", again.Spec.InitContainers, again.Spec.Volumes)
	}

	custom := agentPod(ns, "agent-custom", "review")
	custom.Annotations = map[string]string{contextAnnotation: "review-published"}
	if err := tenant.Create(ctx, custom); err != nil {
		t.Fatalf("the tenant could not create a pod naming its Workspace's custom context: %v", err)
	}
	checkBound(t, custom, "review", "review-published", params)

	plain := agentPod(ns, "plain", "")
	if err := tenant.Create(ctx, plain); err != nil {
		t.Fatalf("the tenant could not create an unlabelled pod: %v", err)
	}
	if len(plain.Spec.InitContainers) != 0 || len(plain.Spec.Volumes) != 0 {
		t.Errorf("an unlabelled pod was changed: init containers %+v, volumes %+v", plain.Spec.InitContainers, plain.Spec.Volumes)
	}
}

func containerNames(cs []corev1.Container) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return out
}

// A tenant with every right in its namespace cannot create a labelled pod
// whose hostd is not the injected one (image, command, args, restart
// policy, env, mounts, volumes), that runs hostd as a regular container or
// another container under its name, or whose other containers reach hostd's
// binding, cache, tree or process. Each refusal names the field.
func TestAgentPods_TenantCannotCreateALabelledPodWithAnAlteredOrMissingSidecar(t *testing.T) {
	ctx := context.Background()
	ns, tenant, _ := boundTenant(t)
	kit.Create(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tenant-keys"},
		Data: map[string]string{"keys": tenantAnchor(t)}})

	editHostd := func(edit func(*corev1.Container)) func(*corev1.Pod) {
		return func(p *corev1.Pod) { edit(hostd(p)) }
	}
	editEnv := func(name, value string) func(*corev1.Pod) {
		return editHostd(func(h *corev1.Container) {
			for i := range h.Env {
				if h.Env[i].Name == name {
					h.Env[i].Value = value
				}
			}
		})
	}
	// editEnvFromTenant reads hostd's variable name from the tenant's own
	// ConfigMap instead of the value the policy injects.
	editEnvFromTenant := func(name string) func(*corev1.Pod) {
		return editHostd(func(h *corev1.Container) {
			for i := range h.Env {
				if h.Env[i].Name == name {
					h.Env[i] = corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
						LocalObjectReference: corev1.LocalObjectReference{Name: "tenant-keys"}, Key: "keys"}}}
				}
			}
		})
	}
	for i, tc := range []struct {
		what  string
		edit  func(*corev1.Pod)
		wants []string
	}{
		{"runs its own hostd image", editHostd(func(h *corev1.Container) { h.Image = "registry.example.com/tenant/hostd:latest" }),
			[]string{"spec.initContainers[loadout-hostd].image", testHostdImage}},
		{"points hostd at another context directory", editHostd(func(h *corev1.Container) {
			h.Command = slices.Clone(h.Command)
			h.Command[2] = "--context-dir=/var/run/tenant"
		}), []string{"spec.initContainers[loadout-hostd].command"}},
		{"adds flags through args", editHostd(func(h *corev1.Container) { h.Args = []string{"--context-dir=/var/run/tenant"} }),
			[]string{"spec.initContainers[loadout-hostd].args"}},
		{"makes hostd an init container that exits", editHostd(func(h *corev1.Container) {
			h.RestartPolicy = nil
			h.StartupProbe = nil
			h.ReadinessProbe = nil
			h.LivenessProbe = nil
		}),
			[]string{"spec.initContainers[loadout-hostd].restartPolicy"}},
		{"binds hostd to another Workspace", editEnv(bindingEnv, ns+"/prod"),
			[]string{"spec.initContainers[loadout-hostd].env[LOADOUT_WORKSPACE]", ns + "/dev"}},
		{"points hostd at another ConfigMap name", editEnv(configMapEnv, "old-copy"),
			[]string{"spec.initContainers[loadout-hostd].env[LOADOUT_CONTEXT_CONFIGMAP]", "dev-context"}},
		{"sets LOADOUT_WORKSPACE twice (the last wins)", editHostd(func(h *corev1.Container) {
			h.Env = append(slices.Clone(h.Env), corev1.EnvVar{Name: bindingEnv, Value: ns + "/prod"})
		}), []string{"spec.initContainers[loadout-hostd].env[LOADOUT_WORKSPACE]"}},
		{"gives hostd its own keys", editEnv(keysEnv, tenantAnchor(t)),
			[]string{"spec.initContainers[loadout-hostd].env[LOADOUT_CONTEXT_KEYS]", hostdParamsKey.String()}},
		{"reads the keys from its own ConfigMap", editEnvFromTenant(keysEnv),
			[]string{"spec.initContainers[loadout-hostd].env[LOADOUT_CONTEXT_KEYS]"}},
		{"adds envFrom to hostd", editHostd(func(h *corev1.Container) {
			h.EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "tenant-keys"}}}}
		}), []string{"spec.initContainers[loadout-hostd].env, envFrom"}},
		{"mounts its own directory over the context", func(p *corev1.Pod) {
			p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "forged", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
			h := hostd(p)
			h.VolumeMounts = append(slices.Clone(h.VolumeMounts), corev1.VolumeMount{Name: "forged", MountPath: "/var/run/loadout/context/manifest.json", SubPath: "manifest.json"})
		}, []string{"spec.initContainers[loadout-hostd].volumeMounts"}},
		{"fills loadout-context itself", func(p *corev1.Pod) {
			volume(p, contextVolume).VolumeSource = corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}
		}, []string{"spec.volumes[loadout-context]", "dev-context"}},
		{"mounts an epoch of its own", func(p *corev1.Pod) {
			volume(p, policyVolume).VolumeSource = corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}
		}, []string{"spec.volumes[loadout-policy]", "ConfigMap loadout-policy"}},
		{"makes the epoch optional", func(p *corev1.Pod) {
			volume(p, policyVolume).ConfigMap.Optional = ptr.To(true)
		}, []string{"spec.volumes[loadout-policy]", "not optional"}},
		{"drops hostd's policy directory", editHostd(func(h *corev1.Container) {
			h.Command = slices.DeleteFunc(slices.Clone(h.Command), func(a string) bool { return strings.HasPrefix(a, "--policy-dir") })
		}), []string{"spec.initContainers[loadout-hostd].command"}},
		{"shares the tree with other pods", func(p *corev1.Pod) {
			volume(p, treeVolume).VolumeSource = corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/var/tmp/tree"}}
		}, []string{"spec.volumes[loadout-tree]"}},
		{"feeds hostd node files as source credentials", func(p *corev1.Pod) {
			volume(p, sourceCredentialsVolume).VolumeSource = corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/etc/kubernetes"}}
		}, []string{"spec.volumes[loadout-source-credentials]", "Secret loadout-source-credentials"}},
		{"feeds hostd another Secret as source credentials", func(p *corev1.Pod) {
			volume(p, sourceCredentialsVolume).Secret.SecretName = "someone-elses"
		}, []string{"spec.volumes[loadout-source-credentials]"}},
		{"runs hostd as a regular container", func(p *corev1.Pod) {
			h := *hostd(p)
			h.RestartPolicy, h.StartupProbe = nil, nil
			p.Spec.InitContainers = nil
			p.Spec.Containers = append(p.Spec.Containers, h)
		}, []string{"spec.initContainers", "not in spec.containers"}},
		{"adds a container named like hostd", func(p *corev1.Pod) {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "loadout-hostd-proxy", Image: "registry.example.com/tenant/proxy"})
		}, []string{"names starting with loadout-hostd", "loadout-hostd-proxy"}},
		{"lets the agent write the tree", func(p *corev1.Pod) { p.Spec.Containers[0].VolumeMounts[0].ReadOnly = false },
			[]string{"volumeMounts of container agent", "loadout-tree"}},
		{"lets the agent write hostd's source cache", func(p *corev1.Pod) {
			p.Spec.Containers[0].VolumeMounts = append(p.Spec.Containers[0].VolumeMounts, corev1.VolumeMount{Name: sourceCacheVolume, MountPath: "/cache"})
		}, []string{"volumeMounts of container agent", "loadout-source-cache"}},
		{"sets the binding env on the agent", func(p *corev1.Pod) {
			p.Spec.Containers[0].Env = append(p.Spec.Containers[0].Env, corev1.EnvVar{Name: bindingEnv, Value: ns + "/prod"})
		}, []string{"env of container agent", "LOADOUT_WORKSPACE"}},
		{"shares the process namespace with hostd", func(p *corev1.Pod) { p.Spec.ShareProcessNamespace = ptr.To(true) },
			[]string{"spec.shareProcessNamespace"}},
		// A tenant signs calls no hook saw with a key mounted in its pod:
		// hostd's token is its alone.
		{"lets the agent read hostd's service token", func(p *corev1.Pod) {
			p.Spec.Containers[0].VolumeMounts = append(p.Spec.Containers[0].VolumeMounts, corev1.VolumeMount{Name: serviceTokenVolume, MountPath: "/token", ReadOnly: true})
		}, []string{"volumeMounts of container agent", "only loadout-hostd mounts loadout-service-token"}},
		{"projects a Loadout-audience token for the agent", func(p *corev1.Pod) {
			addTokenVolume(p, "mine", toolauth.Audience)
			p.Spec.Containers[0].VolumeMounts = append(p.Spec.Containers[0].VolumeMounts, corev1.VolumeMount{Name: "mine", MountPath: "/token"})
		}, []string{"spec.volumes[mine]", "hostd's alone"}},
		{"gives hostd a token of another audience", func(p *corev1.Pod) {
			volume(p, serviceTokenVolume).Projected.Sources[0].ServiceAccountToken.Audience = "https://kubernetes.default.svc"
		}, []string{"spec.volumes[loadout-service-token]", "audience loadout.dev/hostd"}},
		{"gives hostd a day-long token", func(p *corev1.Pod) {
			volume(p, serviceTokenVolume).Projected.Sources[0].ServiceAccountToken.ExpirationSeconds = ptr.To[int64](86400)
		}, []string{"spec.volumes[loadout-service-token]", "expirationSeconds 600"}},
		{"gives hostd's Approvals token a day's life", func(p *corev1.Pod) {
			volume(p, serviceTokenVolume).Projected.Sources[1].ServiceAccountToken.ExpirationSeconds = ptr.To[int64](86400)
		}, []string{"spec.volumes[loadout-service-token]", "path api-token"}},
		{"swaps the API server's CA hostd trusts for Approvals", func(p *corev1.Pod) {
			volume(p, serviceTokenVolume).Projected.Sources[2].ConfigMap.Name = "my-ca"
		}, []string{"spec.volumes[loadout-service-token]", "kube-root-ca.crt"}},
		{"drops hostd's service token", editHostd(func(h *corev1.Container) {
			h.Command = slices.DeleteFunc(slices.Clone(h.Command), func(a string) bool { return strings.HasPrefix(a, "--service-token-file") })
		}), []string{"spec.initContainers[loadout-hostd].command"}},
		// R-EXT-7: hostd's token for the MCP headers endpoint reaches the
		// manager alone, and no container but hostd holds one.
		{"points hostd at its own MCP headers endpoint (to collect hostd's token)", editEnv(mcpHeadersURLEnv, "https://collector.tenant.svc:8444/v1/mcp-headers"),
			[]string{"spec.initContainers[loadout-hostd].env[LOADOUT_MCP_HEADERS_URL]", "data.mcpHeadersURL", hostdParamsKey.String()}},
		{"makes hostd trust its own certificate for the endpoint", editEnv(mcpHeadersCAEnv, "-----BEGIN CERTIFICATE-----\nTENANT\n-----END CERTIFICATE-----\n"),
			[]string{"env[LOADOUT_MCP_HEADERS_CA]", "data.mcpHeadersCA"}},
		{"sets LOADOUT_MCP_HEADERS_URL twice (the last wins)", editHostd(func(h *corev1.Container) {
			h.Env = append(slices.Clone(h.Env), corev1.EnvVar{Name: mcpHeadersURLEnv, Value: "https://collector.tenant.svc/v1/mcp-headers"})
		}), []string{"env[LOADOUT_MCP_HEADERS_URL]", "set once each"}},
		{"reads the MCP headers endpoint from its own ConfigMap", editEnvFromTenant(mcpHeadersURLEnv),
			[]string{"env[LOADOUT_MCP_HEADERS_URL]"}},
		{"drops hostd's MCP headers token flag", editHostd(func(h *corev1.Container) {
			h.Command = slices.DeleteFunc(slices.Clone(h.Command), func(a string) bool { return strings.HasPrefix(a, "--mcp-headers-token-file") })
		}), []string{"spec.initContainers[loadout-hostd].command", "--mcp-headers-token-file"}},
		{"projects an MCP-headers token for the agent", func(p *corev1.Pod) {
			addTokenVolume(p, "keys", mcpheaders.Audience)
			p.Spec.Containers[0].VolumeMounts = append(p.Spec.Containers[0].VolumeMounts, corev1.VolumeMount{Name: "keys", MountPath: "/keys"})
		}, []string{"spec.volumes[keys]", "loadout.dev/mcp-headers is hostd's alone"}},
		{"projects it in an init container's volume", func(p *corev1.Pod) {
			addTokenVolume(p, "early", mcpheaders.Audience)
			p.Spec.InitContainers = append(p.Spec.InitContainers, corev1.Container{Name: "fetch", Image: "example.com/curl",
				VolumeMounts: []corev1.VolumeMount{{Name: "early", MountPath: "/keys"}, {Name: treeVolume, MountPath: "/etc/claude-code", ReadOnly: true},
					{Name: treeVolume, MountPath: "/etc/codex", ReadOnly: true}}})
		}, []string{"spec.volumes[early]", "hostd's alone"}},
		{"gives hostd's MCP headers token a day's life", func(p *corev1.Pod) {
			volume(p, serviceTokenVolume).Projected.Sources[3].ServiceAccountToken.ExpirationSeconds = ptr.To[int64](86400)
		}, []string{"spec.volumes[loadout-service-token]", "path mcp-headers-token"}},
		{"drops the MCP headers token from hostd's volume", func(p *corev1.Pod) {
			v := volume(p, serviceTokenVolume)
			v.Projected.Sources = v.Projected.Sources[:3]
		}, []string{"spec.volumes[loadout-service-token]", "loadout.dev/mcp-headers"}},
	} {
		pod := boundPod(t, k8sClient, ns, fmt.Sprintf("altered-%d", i), "dev")
		tc.edit(pod)
		mustBeDenied(t, "the tenant "+tc.what, tenant.Create(ctx, pod), append([]string{agentPodsDenial}, tc.wants...)...)
	}

	bad := declaringTheTree(agentPod(ns, "bad-label", "Dev_1"))
	mustBeDenied(t, "the tenant labels a pod with no Workspace name", tenant.Create(ctx, bad),
		agentPodsDenial, "metadata.labels[loadout.dev/workspace]", `"Dev_1" is not a Workspace name`)
}

// A tenant cannot give a labelled pod another Workspace's context: not as
// hostd's context volume, not as another volume or projected source, not
// through env or envFrom, and not by naming it in the annotation. Its own
// context and ConfigMaps that are no context stay mountable.
func TestAgentPods_TenantCannotMountAnotherWorkspacesContext(t *testing.T) {
	ctx := context.Background()
	ns, tenant, _ := boundTenant(t)
	for _, name := range []string{"dev-context", "prod-context", "team-notes"} {
		kit.Create(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string]string{"k": "v"}})
	}
	configMapVolume := func(volume, configMap string) corev1.Volume {
		return corev1.Volume{Name: volume, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: configMap}}}}
	}
	mount := func(p *corev1.Pod, v corev1.Volume) {
		p.Spec.Volumes = append(p.Spec.Volumes, v)
		p.Spec.Containers[0].VolumeMounts = append(p.Spec.Containers[0].VolumeMounts, corev1.VolumeMount{Name: v.Name, MountPath: "/mnt/" + v.Name, ReadOnly: true})
	}
	for i, tc := range []struct {
		what  string
		edit  func(*corev1.Pod)
		wants []string
	}{
		{"points hostd's context volume at prod's", func(p *corev1.Pod) {
			volume(p, contextVolume).ConfigMap.Name = "prod-context"
		}, []string{"spec.volumes[loadout-context]", "must be the whole ConfigMap dev-context"}},
		{"mounts prod's context in the agent", func(p *corev1.Pod) { mount(p, configMapVolume("prod", "prod-context")) },
			[]string{"spec.volumes[prod]", "may name only dev-context"}},
		{"projects prod's context", func(p *corev1.Pod) {
			mount(p, corev1.Volume{Name: "bundle", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				Sources: []corev1.VolumeProjection{{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "prod-context"}}}}}}})
		}, []string{"spec.volumes[bundle]"}},
		{"reads prod's manifest into the agent's env", func(p *corev1.Pod) {
			p.Spec.Containers[0].Env = append(p.Spec.Containers[0].Env, corev1.EnvVar{Name: "MANIFEST", ValueFrom: &corev1.EnvVarSource{
				ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "prod-context"}, Key: "manifest.json"}}})
		}, []string{"env, envFrom of container agent", "may name only dev-context"}},
		{"loads prod's context with envFrom", func(p *corev1.Pod) {
			p.Spec.Containers[0].EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "prod-context"}}}}
		}, []string{"env, envFrom of container agent"}},
	} {
		pod := boundPod(t, k8sClient, ns, fmt.Sprintf("foreign-%d", i), "dev")
		tc.edit(pod)
		mustBeDenied(t, "the tenant "+tc.what, tenant.Create(ctx, pod), append([]string{agentPodsDenial}, tc.wants...)...)
	}
	annotated := agentPod(ns, "annotated", "dev")
	annotated.Annotations = map[string]string{contextAnnotation: "prod-context"}
	mustBeDenied(t, "the tenant names prod's context in the annotation", tenant.Create(ctx, annotated),
		agentPodsDenial, "metadata.annotations[loadout.dev/context-configmap]", "context name of Workspace prod, not of dev")

	own := agentPod(ns, "own", "dev")
	mount(own, configMapVolume("context-again", "dev-context"))
	mount(own, configMapVolume("notes", "team-notes"))
	if err := tenant.Create(ctx, own); err != nil {
		t.Errorf("a labelled pod mounting its own context again and a ConfigMap that is no context: %v", err)
	}
}

// A running pod cannot be re-bound or have its hostd swapped: adding the
// label to a pod created without it (through the pod or its status), changing
// the label's value, changing hostd's image, and an ephemeral container that
// targets hostd's process are refused. A plain debug container, other
// label changes and status updates go through; removing the label is
// allowed (the pod keeps its sidecar).
func TestAgentPods_TenantCannotRebindARunningPodOrSwapItsHostd(t *testing.T) {
	ctx := context.Background()
	ns, tenant, _ := boundTenant(t)

	plain := agentPod(ns, "plain", "")
	if err := tenant.Create(ctx, plain); err != nil {
		t.Fatal(err)
	}
	addLabel := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"loadout.dev/workspace":"dev"}}}`))
	waitEnforced(t, "the ValidatingAdmissionPolicy loadout-agent-pod-updates", func() error {
		return tenant.Patch(ctx, plain.DeepCopy(), addLabel, client.DryRunAll)
	})
	mustBeDenied(t, "the tenant labels a pod that has no sidecar", tenant.Patch(ctx, plain.DeepCopy(), addLabel),
		agentUpdatesDenial, "metadata.labels[loadout.dev/workspace]", "cannot be added to a running pod")
	mustBeDenied(t, "the tenant labels it through pods/status", tenant.Status().Patch(ctx, plain.DeepCopy(), addLabel),
		agentUpdatesDenial, "metadata.labels[loadout.dev/workspace]")

	bound := agentPod(ns, "bound", "dev")
	if err := tenant.Create(ctx, bound); err != nil {
		t.Fatal(err)
	}
	if hostd(bound) == nil {
		t.Fatal("the labelled pod got no sidecar")
	}
	mustBeDenied(t, "the tenant re-labels the pod for another Workspace",
		tenant.Patch(ctx, bound.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"loadout.dev/workspace":"prod"}}}`))),
		agentUpdatesDenial, "metadata.labels[loadout.dev/workspace]", `was "dev"`)
	swap := &corev1.Pod{}
	if err := tenant.Get(ctx, client.ObjectKeyFromObject(bound), swap); err != nil {
		t.Fatal(err)
	}
	hostd(swap).Image = "registry.example.com/tenant/hostd:latest"
	mustBeDenied(t, "the tenant swaps hostd's image", tenant.Update(ctx, swap),
		agentUpdatesDenial, "spec.initContainers[loadout-hostd].image", "cannot change on a running pod")

	debug := func(name, target string) error {
		p := &corev1.Pod{}
		if err := tenant.Get(ctx, client.ObjectKeyFromObject(bound), p); err != nil {
			return err
		}
		p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, corev1.EphemeralContainer{
			EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: name, Image: "busybox", TerminationMessagePolicy: corev1.TerminationMessageReadFile, ImagePullPolicy: corev1.PullIfNotPresent},
			TargetContainerName:      target})
		return tenant.SubResource("ephemeralcontainers").Update(ctx, p)
	}
	mustBeDenied(t, "the tenant attaches a debug container to hostd's process", debug("peek", hostdContainer),
		agentUpdatesDenial, "spec.ephemeralContainers[peek]", "target loadout-hostd")
	if err := debug("debugger", "agent"); err != nil {
		t.Errorf("a debug container targeting the agent: %v", err)
	}
	// hostd's token for tool Services stays hostd's.
	thief := &corev1.Pod{}
	if err := tenant.Get(ctx, client.ObjectKeyFromObject(bound), thief); err != nil {
		t.Fatal(err)
	}
	thief.Spec.EphemeralContainers = append(thief.Spec.EphemeralContainers, corev1.EphemeralContainer{
		EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "token-thief", Image: "busybox", TerminationMessagePolicy: corev1.TerminationMessageReadFile,
			ImagePullPolicy: corev1.PullIfNotPresent, VolumeMounts: []corev1.VolumeMount{{Name: serviceTokenVolume, MountPath: "/token", ReadOnly: true}}}})
	mustBeDenied(t, "the tenant mounts hostd's service token into a debug container", tenant.SubResource("ephemeralcontainers").Update(ctx, thief),
		agentUpdatesDenial, "spec.ephemeralContainers[token-thief]", "loadout-service-token")

	if err := tenant.Patch(ctx, bound.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"team":"a"}}}`))); err != nil {
		t.Errorf("another label on a bound pod: %v", err)
	}
	status := client.RawPatch(types.MergePatchType, []byte(`{"status":{"conditions":[{"type":"loadout.dev/Probe","status":"True"}]}}`))
	if err := tenant.Status().Patch(ctx, bound.DeepCopy(), status); err != nil {
		t.Errorf("a status update of a bound pod: %v", err)
	}
	if err := tenant.Patch(ctx, bound.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"loadout.dev/workspace":null}}}`))); err != nil {
		t.Fatalf("removing the label: %v", err)
	}
	after := &corev1.Pod{}
	if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(bound), after); err != nil {
		t.Fatal(err)
	}
	if hostd(after) == nil || hostd(after).Image != hostd(bound).Image {
		t.Errorf("the unlabelled pod lost its sidecar: %+v", after.Spec.InitContainers)
	}
}

// Fail closed: without the parameter ConfigMap (or with its keys empty) no
// labelled pod is created, since it would run without hostd or without the
// platform's keys. Unlabelled pods are not affected.
func TestAgentPods_NoHostdParametersNoLabelledPod(t *testing.T) {
	ctx := context.Background()
	ns, tenant, params := boundTenant(t)
	key := hostdParamsKey
	t.Cleanup(func() {
		// Put the parameters back for the other tests, and wait until a
		// labelled pod is bound again.
		publishHostdParams(t)
		kit.Eventually(t, func() error {
			pod := agentPod(ns, "restored", "dev")
			if err := k8sClient.Create(ctx, pod, client.DryRunAll); err != nil {
				return err
			}
			if hostd(pod) == nil {
				return errString("no sidecar after restoring the parameters")
			}
			return nil
		})
	})

	if err := k8sClient.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}); err != nil {
		t.Fatal(err)
	}
	kit.Eventually(t, func() error {
		if err := tenant.Create(ctx, agentPod(ns, "unparameterised", "dev"), client.DryRunAll); !apierrors.IsForbidden(err) && !apierrors.IsInvalid(err) {
			return fmt.Errorf("a labelled pod without the parameter ConfigMap: %v, want it refused", err)
		}
		return nil
	})
	mustBeDenied(t, "the tenant creates a labelled pod without the parameter ConfigMap",
		tenant.Create(ctx, agentPod(ns, "unparameterised", "dev")), "loadout-agent-pods", "no params found")
	if err := tenant.Create(ctx, agentPod(ns, "plain", "")); err != nil {
		t.Errorf("an unlabelled pod without the parameter ConfigMap: %v", err)
	}

	kit.Create(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name},
		Data: map[string]string{controllers.HostdConfigImageKey: params[controllers.HostdConfigImageKey], controllers.HostdConfigContextKeys: " \n"}})
	kit.Eventually(t, func() error {
		err := tenant.Create(ctx, declaringTheTree(agentPod(ns, "keyless", "dev")), client.DryRunAll)
		if err == nil || !apierrors.IsForbidden(err) && !apierrors.IsInvalid(err) {
			return fmt.Errorf("a labelled pod with empty contextKeys: %v, want it refused", err)
		}
		if strings.Contains(err.Error(), "no params found") {
			return errString("the parameter ConfigMap is not seen yet")
		}
		return nil
	})
	mustBeDenied(t, "the tenant creates a labelled pod while the parameters have no keys",
		tenant.Create(ctx, declaringTheTree(agentPod(ns, "keyless", "dev"))),
		agentPodsDenial, "ConfigMap "+hostdParamsKey.String(), "data.contextKeys")
}

// The sample agent Deployment spells out no hostd: its pod template, created
// as a Pod by a tenant, is bound by the policies and admitted as it is, in a
// namespace that enforces Pod Security's restricted level.
func TestAgentPods_SampleAgentDeploymentIsBoundByThePolicies(t *testing.T) {
	ctx := context.Background()
	ns, tenant, params := boundTenant(t)
	testenv.Update(t, kit, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, func(n *corev1.Namespace) {
		n.Labels["pod-security.kubernetes.io/enforce"] = "restricted"
	})
	waitEnforced(t, "Pod Security restricted", func() error {
		root := agentPod(ns, "root", "")
		root.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
		return k8sClient.Create(ctx, root, client.DryRunAll)
	})
	raw, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "samples", "agent-deployment.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dep := &appsv1.Deployment{}
	if err := yaml.UnmarshalStrict(raw, dep); err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(dep.Spec.Template.Spec.InitContainers, func(c corev1.Container) bool { return c.Name == hostdContainer }) {
		t.Error("the sample Deployment spells out the hostd sidecar; the policies inject it")
	}
	pod := &corev1.Pod{ObjectMeta: dep.Spec.Template.ObjectMeta, Spec: dep.Spec.Template.Spec}
	pod.Namespace, pod.Name = ns, "sample-agent"
	workspace := pod.Labels[vocab.WorkspaceLabel]
	if err := tenant.Create(ctx, pod); err != nil {
		t.Fatalf("the sample agent pod: %v", err)
	}
	checkBound(t, pod, workspace, workspace+"-context", params)
}

// Re-invocation: a second mutating policy that changes every pod it sees
// makes the API server invoke loadout-agent-pods again (reinvocationPolicy
// IfNeeded) on a pod that already carries the sidecar and the volumes; the
// pod is admitted with each exactly once.
func TestAgentPods_ReinvokedInjectionAddsNothingTwice(t *testing.T) {
	ctx := context.Background()
	ns := kit.NewNamespace(t, "")
	params := bindAgentPods(t, ns)
	const counter = "loadout.dev/test-invocations"
	touch := &admissionregistrationv1.MutatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "test-touch-" + ns},
		Spec: admissionregistrationv1.MutatingAdmissionPolicySpec{
			FailurePolicy:      ptr.To(admissionregistrationv1.Fail),
			ReinvocationPolicy: admissionregistrationv1.IfNeededReinvocationPolicy,
			MatchConstraints: &admissionregistrationv1.MatchResources{
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}},
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}}}}},
			},
			// Counts its invocations in an annotation: every invocation
			// changes the pod, so every other policy is invoked again.
			Mutations: []admissionregistrationv1.Mutation{{PatchType: admissionregistrationv1.PatchTypeJSONPatch, JSONPatch: &admissionregistrationv1.JSONPatch{Expression: `
				(has(object.metadata.annotations) ? [] : [JSONPatch{op: 'add', path: '/metadata/annotations', value: {}}]) +
				[JSONPatch{op: 'add', path: '/metadata/annotations/' + jsonpatch.escapeKey('` + counter + `'),
					value: has(object.metadata.annotations) && '` + counter + `' in object.metadata.annotations
						? string(int(object.metadata.annotations['` + counter + `']) + 1) : '1'}]`}}},
		},
	}
	kit.Create(t, touch)
	kit.Create(t, &admissionregistrationv1.MutatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: touch.Name},
		Spec: admissionregistrationv1.MutatingAdmissionPolicyBindingSpec{PolicyName: touch.Name}})
	t.Cleanup(func() {
		_ = k8sClient.Delete(ctx, &admissionregistrationv1.MutatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: touch.Name}})
		_ = k8sClient.Delete(ctx, touch)
	})

	var pod *corev1.Pod
	kit.Eventually(t, func() error {
		pod = agentPod(ns, "agent", "dev")
		if err := k8sClient.Create(ctx, pod, client.DryRunAll); err != nil {
			return err
		}
		if n := pod.Annotations[counter]; n < "2" {
			return fmt.Errorf("the test policy ran %q times, want at least 2 (a re-invocation)", n)
		}
		return nil
	})
	hostds := 0
	for _, c := range pod.Spec.InitContainers {
		if c.Name == hostdContainer {
			hostds++
		}
	}
	if hostds != 1 || len(pod.Spec.Volumes) != 6 {
		t.Errorf("after re-invocation: %d hostd sidecars and volumes %v, want 1 and the six injected", hostds, pod.Spec.Volumes)
	}
	checkBound(t, pod, "dev", "dev-context", params)
}
