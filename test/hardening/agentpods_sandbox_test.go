package hardening

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/test/testenv"
)

// sandboxedCommand is the only way a container of a bound pod starts where
// the platform runs agents under loadout sandbox.
var sandboxedCommand = []string{"/etc/claude-code/bin/loadout", "sandbox", "--from", "/var/run/loadout/context", "--"}

// underLoadoutSandbox wraps every container but hostd of pod in the tree's
// `loadout sandbox` and mounts the context it reads.
func underLoadoutSandbox(pod *corev1.Pod, argv ...string) *corev1.Pod {
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		c.Command = append(append([]string{}, sandboxedCommand...), argv...)
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "loadout-context", MountPath: "/var/run/loadout/context", ReadOnly: true})
	}
	return pod
}

// epochSaysUnderSandbox waits until ns's policy epoch says whether the
// platform runs agents under loadout sandbox.
func epochSaysUnderSandbox(t *testing.T, ns string, want bool) {
	t.Helper()
	kit.Eventually(t, func() error {
		ep, err := kit.GetConfigMap(ns, contract.EpochConfigMap)
		if err != nil {
			return err
		}
		if got := ep.Annotations[contract.AgentsUnderSandboxAnnotation]; got != fmt.Sprint(want) {
			return fmt.Errorf("epoch %s/%s: %s=%q, want %v", ns, contract.EpochConfigMap, contract.AgentsUnderSandboxAnnotation, got, want)
		}
		return nil
	})
}

// Where the platform declares agentsUnderLoadoutSandbox, a tenant with every
// right in its namespace cannot start an agent beside the sandbox: a bound
// pod whose container starts anything but the tree's `loadout sandbox`
// (its own image's binary, other flags, another --from), or that does not
// mount the context the sandbox reads, or that runs an exec probe or
// lifecycle hook (which the runtime starts beside the sandbox), is refused
// naming the container;
// an ephemeral container is held the same way. The wrapped pod is
// admitted; once the platform drops the declaration, so is the plain one.
// The platform's word, which relaxes the shell guard for every
// agent, is enforced by the cluster rather than trusted.
func TestAgentPods_PlatformRunsAgentsUnderLoadoutSandbox_Issue42(t *testing.T) {
	ctx := context.Background()
	ns, _, _ := publishedNotes(t, vocab.TrustTrusted)
	bindAgentPods(t, ns)
	// Removed when the test ends: its binding refuses a labelled pod in a
	// namespace without a policy epoch, which the other agent pod tests
	// create; the test ends once the API server no longer applies it.
	noEpoch := kit.NewNamespace(t, "")
	t.Cleanup(func() {
		kit.Eventually(t, func() error {
			err := k8sClient.Create(ctx, agentPod(noEpoch, "after", "dev"), client.DryRunAll)
			if err != nil && (strings.Contains(err.Error(), "loadout-agent-pods-sandboxed") || strings.Contains(err.Error(), "no params found")) {
				return err
			}
			return nil
		})
	})
	for _, o := range installPolicy(t, "agent_sandbox_policy.yaml") {
		deleteWhenDone(t, o)
	}
	tenant := namespaceAdmin(t, ns)

	e := testenv.Extension(platformNS, "sandbox-"+ns, nil)
	e.Spec.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}}
	e.Spec.Sandbox = &v1alpha1.Sandbox{
		Filesystem: &v1alpha1.SandboxFilesystem{Paths: []v1alpha1.SandboxPath{
			{Path: "/", Access: []v1alpha1.SandboxAccess{v1alpha1.SandboxRead, v1alpha1.SandboxExecute}},
			{Path: "/workspace", Access: []v1alpha1.SandboxAccess{v1alpha1.SandboxRead, v1alpha1.SandboxWrite, v1alpha1.SandboxCreate}},
		}},
		AgentsUnderLoadoutSandbox: true,
	}
	kit.Create(t, e)
	deleteWhenDone(t, e)
	epochSaysUnderSandbox(t, ns, true)

	plain := func(name string) *corev1.Pod { return agentPod(ns, name, "dev") }
	waitEnforced(t, "the ValidatingAdmissionPolicy loadout-agent-pods-sandboxed", func() error {
		return tenant.Create(ctx, plain("probe"), client.DryRunAll)
	})
	const denial = "ValidatingAdmissionPolicy 'loadout-agent-pods-sandboxed'"
	mustBeDenied(t, "an agent container started as its image says", tenant.Create(ctx, plain("plain"), client.DryRunAll),
		denial, "container agent of pod "+ns+"/plain", "agentsUnderLoadoutSandbox", "/etc/claude-code/bin/loadout")

	for _, tc := range []struct {
		what  string
		edit  func(*corev1.Container)
		wants string
	}{
		{"the image's own loadout", func(c *corev1.Container) { c.Command[0] = "/usr/local/bin/loadout" }, "command: [/etc/claude-code/bin/loadout"},
		{"another context", func(c *corev1.Container) { c.Command[3] = "/tmp/mine" }, "command: [/etc/claude-code/bin/loadout"},
		{"--check, which runs nothing sandboxed", func(c *corev1.Container) { c.Command = []string{sandboxedCommand[0], "sandbox", "--check"} }, "command: [/etc/claude-code/bin/loadout"},
		{"no agent after --", func(c *corev1.Container) { c.Command, c.Args = sandboxedCommand, nil }, "command: [/etc/claude-code/bin/loadout"},
		{"the context not mounted", func(c *corev1.Container) { c.VolumeMounts = c.VolumeMounts[:len(c.VolumeMounts)-1] }, "mount volume loadout-context"},
		{"the context mounted in part", func(c *corev1.Container) { c.VolumeMounts[len(c.VolumeMounts)-1].SubPath = "manifest.json" }, "mount volume loadout-context"},
		{"an agent started by an exec lifecycle hook, beside the sandbox", func(c *corev1.Container) {
			c.Lifecycle = &corev1.Lifecycle{PostStart: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"claude", "-p", "clean up"}}}}
		}, "an exec probe or lifecycle hook runs beside loadout sandbox"},
		{"an exec probe", func(c *corev1.Container) {
			c.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"sh", "-c", "rm -rf /workspace"}}}}
		}, "an exec probe or lifecycle hook runs beside loadout sandbox"},
	} {
		pod := underLoadoutSandbox(plain("edited"), "pi")
		tc.edit(&pod.Spec.Containers[0])
		mustBeDenied(t, tc.what, tenant.Create(ctx, pod, client.DryRunAll), denial, "container agent", tc.wants)
	}
	second := underLoadoutSandbox(plain("two"), "pi")
	second.Spec.Containers = append(second.Spec.Containers, corev1.Container{Name: "helper", Image: "busybox", Command: []string{"sleep", "1d"},
		VolumeMounts: []corev1.VolumeMount{{Name: treeVolume, MountPath: treePath, ReadOnly: true}}})
	mustBeDenied(t, "a second container beside the wrapped agent", tenant.Create(ctx, second, client.DryRunAll), denial, "container helper")

	wrapped := underLoadoutSandbox(plain("wrapped"))
	wrapped.Spec.Containers[0].Args = []string{"pi", "--print"}
	if err := tenant.Create(ctx, wrapped); err != nil {
		t.Fatalf("the agent started under the tree's loadout sandbox was refused: %v", err)
	}
	debug := &corev1.Pod{}
	if err := tenant.Get(ctx, client.ObjectKeyFromObject(wrapped), debug); err != nil {
		t.Fatal(err)
	}
	debug.Spec.EphemeralContainers = append(debug.Spec.EphemeralContainers, corev1.EphemeralContainer{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
		Name: "debug", Image: "busybox", Command: []string{"sh"},
		VolumeMounts: []corev1.VolumeMount{{Name: treeVolume, MountPath: treePath, ReadOnly: true}}}})
	mustBeDenied(t, "an ephemeral container beside the sandbox", tenant.SubResource("ephemeralcontainers").Update(ctx, debug), denial, "container debug")

	// The platform drops the declaration: the plain pod is admitted again.
	if err := k8sClient.Delete(ctx, e); err != nil {
		t.Fatal(err)
	}
	epochSaysUnderSandbox(t, ns, false)
	kit.Eventually(t, func() error {
		err := tenant.Create(ctx, plain("plain-again"), client.DryRunAll)
		if err != nil {
			return errors.Join(errors.New("the plain pod is still refused"), err)
		}
		return nil
	})
}
