package hardening

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// A bound pod's agent containers read the tree where the stock agents read
// their organisation's policy (/etc/claude-code, /etc/codex). A tenant with
// every right in its namespace cannot shadow those paths with a volume of its
// own (at them, under them, or spelled differently), mount them writable or by
// subPath (which stops following the tree's updates), or set the environment
// that turns Claude Code's managed skills off.
// docs/agents.md#every-agent-in-a-bound-pod lists these checks.
func TestAgentPods_TenantCannotShadowTheAgentsPolicyPaths(t *testing.T) {
	ctx := context.Background()
	ns, tenant, _ := boundTenant(t)
	own := corev1.Volume{Name: "own", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
	mount := func(m corev1.VolumeMount) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			p.Spec.Volumes = append(p.Spec.Volumes, own)
			p.Spec.Containers[0].VolumeMounts = append(p.Spec.Containers[0].VolumeMounts, m)
		}
	}
	policyMount := func(path string, edit func(*corev1.VolumeMount)) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			m := corev1.VolumeMount{Name: treeVolume, MountPath: path, ReadOnly: true}
			edit(&m)
			p.Spec.Containers[0].VolumeMounts = append(p.Spec.Containers[0].VolumeMounts, m)
		}
	}
	for i, tc := range []struct {
		what  string
		edit  func(*corev1.Pod)
		wants []string
	}{
		{"mounts its own volume at /etc/codex", mount(corev1.VolumeMount{Name: "own", MountPath: "/etc/codex"}),
			[]string{"volumeMounts of container agent", "/etc/codex"}},
		{"mounts its own managed settings under /etc/claude-code",
			mount(corev1.VolumeMount{Name: "own", MountPath: "/etc/claude-code/managed-settings.json", SubPath: "settings.json"}),
			[]string{"volumeMounts of container agent", "/etc/claude-code"}},
		{"spells /etc/codex with a double slash", mount(corev1.VolumeMount{Name: "own", MountPath: "/etc//codex"}),
			[]string{"volumeMounts of container agent", "no //, . or .."}},
		{"spells /etc/claude-code with a dot segment", mount(corev1.VolumeMount{Name: "own", MountPath: "/etc/./claude-code"}),
			[]string{"volumeMounts of container agent"}},
		{"mounts the tree writable at /etc/codex", policyMount("/etc/codex", func(m *corev1.VolumeMount) { m.ReadOnly = false }),
			[]string{"volumeMounts of container agent"}},
		{"mounts one generation of the tree by subPath", policyMount("/etc/claude-code", func(m *corev1.VolumeMount) { m.SubPath = "..data" }),
			[]string{"volumeMounts of container agent", "no subPath"}},
		{"turns Claude Code's managed skills off", func(p *corev1.Pod) {
			p.Spec.Containers[0].Env = append(p.Spec.Containers[0].Env, corev1.EnvVar{Name: "CLAUDE_CODE_DISABLE_POLICY_SKILLS", Value: "1"})
		}, []string{"env of container agent", "CLAUDE_CODE_DISABLE_POLICY_SKILLS"}},
		{"turns managed skills off in an init container", func(p *corev1.Pod) {
			p.Spec.InitContainers = append(p.Spec.InitContainers, corev1.Container{Name: "setup", Image: "example.com/setup",
				Env: []corev1.EnvVar{{Name: "CLAUDE_CODE_DISABLE_POLICY_SKILLS", Value: "true"}}})
		}, []string{"env of container setup", "CLAUDE_CODE_DISABLE_POLICY_SKILLS"}},
	} {
		pod := boundPod(t, k8sClient, ns, fmt.Sprintf("shadow-%d", i), "dev")
		tc.edit(pod)
		mustBeDenied(t, "the tenant "+tc.what, tenant.Create(ctx, pod), append([]string{agentPodsDenial}, tc.wants...)...)
	}

	// A path that only starts like a policy path is the tenant's own.
	pod := boundPod(t, k8sClient, ns, "codex-tools", "dev")
	mount(corev1.VolumeMount{Name: "own", MountPath: "/etc/codex-tools"})(pod)
	if err := tenant.Create(ctx, pod); err != nil {
		t.Errorf("a pod mounting /etc/codex-tools was refused: %v", err)
	}
}
