package hardening

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/loadout-dev/loadout/controllers"
)

const (
	anthropicBaseURLEnv = "ANTHROPIC_BASE_URL"
	testGateway         = "https://llm-gateway.platform.svc:8443"
)

// baseURLs are the ANTHROPIC_BASE_URL entries of each container of pod but
// hostd, by container name: their values, or "valueFrom" for one taken from
// elsewhere.
func baseURLs(pod *corev1.Pod) map[string][]string {
	out := map[string][]string{}
	for _, c := range append(append([]corev1.Container(nil), pod.Spec.InitContainers...), pod.Spec.Containers...) {
		if c.Name == hostdContainer {
			continue
		}
		out[c.Name] = nil
		for _, e := range c.Env {
			if e.Name != anthropicBaseURLEnv {
				continue
			}
			v := e.Value
			if e.ValueFrom != nil {
				v = "valueFrom"
			}
			out[c.Name] = append(out[c.Name], v)
		}
	}
	return out
}

// A tenant whose Claude Code uses a credential of an organisation with
// server-managed settings would run without the managed hooks on
// Anthropic's own API (test/agents/claudecode
// TestClaudeCode_ServerManagedSettingsDisplaceTheManagedFile). With the
// platform's model gateway in the parameters (the manager's
// --claude-code-base-url), every agent container of a bound pod, init
// containers included, reaches the model through it: admission sets
// ANTHROPIC_BASE_URL, replacing the tenant's own value, and refuses one
// taken from a Secret. Without the parameter nothing is added.
func TestAgentPods_ClaudeCodeReachesTheModelThroughThePlatformsGateway(t *testing.T) {
	ctx := context.Background()
	ns, tenant, _ := boundTenant(t)
	hasGateway := func(want bool) error {
		pod := agentPod(ns, "probe-gateway", "dev")
		if err := k8sClient.Create(ctx, pod, client.DryRunAll); err != nil {
			return err
		}
		if got := baseURLs(pod)["agent"]; (len(got) == 1 && got[0] == testGateway) != want {
			return fmt.Errorf("the agent's %s is %q, want the gateway: %t (the parameters are not seen yet)", anthropicBaseURLEnv, got, want)
		}
		return nil
	}
	// Today's parameters name no gateway: the tenant's environment is its
	// own.
	if err := hasGateway(false); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		publishHostdParams(t)
		kit.Eventually(t, func() error { return hasGateway(false) })
	})
	hc := testMCPHeaders
	hc.Image, hc.Signer, hc.ClaudeCodeBaseURL = testHostdImage, contextSigner, testGateway
	if err := controllers.PublishHostdConfigWith(ctx, k8sClient, hostdParamsKey, hc); err != nil {
		t.Fatal(err)
	}
	kit.Eventually(t, func() error { return hasGateway(true) })

	// The tenant's own first-party URL, in a container and an init
	// container, is replaced; a container without one gets it.
	pod := agentPod(ns, "agent", "dev")
	pod.Spec.Containers[0].Env = append(pod.Spec.Containers[0].Env, corev1.EnvVar{Name: anthropicBaseURLEnv, Value: "https://api.anthropic.com"})
	pod.Spec.InitContainers = []corev1.Container{{Name: "setup", Image: "busybox",
		Env: []corev1.EnvVar{{Name: anthropicBaseURLEnv, Value: "https://api.anthropic.com"}}}}
	pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: "second", Image: "busybox"})
	if err := tenant.Create(ctx, pod); err != nil {
		t.Fatalf("a bound pod naming Anthropic's API: %v", err)
	}
	for name, got := range baseURLs(pod) {
		if len(got) != 1 || got[0] != testGateway {
			t.Errorf("container %s: %s %q, want only the gateway %s", name, anthropicBaseURLEnv, got, testGateway)
		}
	}

	// A value from a Secret the tenant writes is not the gateway: with the
	// gateway set beside it the pod is invalid (the API server's own
	// check; loadout-agent-pods would refuse it too).
	fromSecret := agentPod(ns, "from-secret", "dev")
	fromSecret.Spec.Containers[0].Env = append(fromSecret.Spec.Containers[0].Env, corev1.EnvVar{Name: anthropicBaseURLEnv,
		ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "model"}, Key: "url"}}})
	mustBeDenied(t, "the tenant takes ANTHROPIC_BASE_URL from a Secret", tenant.Create(ctx, fromSecret),
		"valueFrom", "may not be specified when `value` is not empty")
}
