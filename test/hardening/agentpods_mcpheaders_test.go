package hardening

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/loadout-dev/loadout/controllers"
	"github.com/loadout-dev/loadout/internal/mcpheaders"
	mcpendpoint "github.com/loadout-dev/loadout/internal/mcpheaders/endpoint"
	"github.com/loadout-dev/loadout/internal/test/testenv"
	"github.com/loadout-dev/loadout/internal/toolauth"
)

const mcpHeadersTokensDenial = "ValidatingAdmissionPolicy 'loadout-mcp-headers-tokens'"

// clientsetAs is a typed client acting as user in groups: TokenRequests
// are a subresource controller-runtime's client does not create.
func clientsetAs(t *testing.T, user string, groups ...string) kubernetes.Interface {
	t.Helper()
	c := rest.CopyConfig(cfg)
	c.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: groups}
	cs, err := kubernetes.NewForConfig(c)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// A tenant with every right in its namespace cannot mint hostd's token for
// the MCP headers endpoint (R-EXT-7; docs/security.md): `kubectl create
// token default --audience loadout.dev/mcp-headers --bound-object-kind Pod`
// for its own bound pod is refused, alone or next to another audience, and
// so is the same request from a ServiceAccount of its namespace given the
// right. The refusal is the policy's, not RBAC's: the same tenant mints a
// token of another audience for the same pod. The kubelet (a node's
// identity, group system:nodes) still gets one for the pod, and that token
// passes the endpoint's own checks (its audience, a live pod bound to a
// Workspace with loadout-hostd first): exactly what the tenant would
// otherwise have held. A cluster admin keeps the right.
func TestAgentPods_TenantCannotMintHostdsMCPHeadersToken(t *testing.T) {
	ctx := context.Background()
	ns := kit.NewNamespace(t, "")
	bindAgentPods(t, ns)
	tenantUser := "tenant-admin-" + ns
	tenant := namespaceAdmin(t, ns)
	tenantCS := clientsetAs(t, tenantUser, "system:authenticated")

	// The namespace's default ServiceAccount, which the kube-controller-manager
	// (not part of envtest) would have made.
	kit.Create(t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "default"}})
	pod := agentPod(ns, "bound", "dev")
	if err := tenant.Create(ctx, pod); err != nil {
		t.Fatalf("the tenant could not create its bound pod: %v", err)
	}
	if hostd(pod) == nil || pod.Spec.ServiceAccountName != "default" {
		t.Fatalf("the bound pod has no hostd or runs as %q, want the default ServiceAccount", pod.Spec.ServiceAccountName)
	}
	waitEnforced(t, "the ValidatingAdmissionPolicy loadout-mcp-headers-tokens", func() error {
		_, err := testenv.MintToken(tenantCS, ns, "default", pod, mcpheaders.Audience)
		return err
	})

	for what, audiences := range map[string][]string{
		"for loadout.dev/mcp-headers":                       {mcpheaders.Audience},
		"for loadout.dev/mcp-headers next to hostd's other": {toolauth.Audience, mcpheaders.Audience},
	} {
		_, err := testenv.MintToken(tenantCS, ns, "default", pod, audiences...)
		mustBeDenied(t, "the namespace admin mints a token "+what+" bound to its bound pod", err,
			mcpHeadersTokensDenial, "spec.audiences", "only by the kubelet (system:nodes)", tenantUser)
	}

	// A ServiceAccount of the tenant's, given serviceaccounts/token in its
	// namespace (what an agent's own identity could be granted).
	kit.Create(t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "minter"}})
	saUser := "system:serviceaccount:" + ns + ":minter"
	grantInNamespace(t, ns, saUser, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"serviceaccounts/token"}, Verbs: []string{"create"}})
	_, err := testenv.MintToken(clientsetAs(t, saUser, "system:serviceaccounts", "system:serviceaccounts:"+ns, "system:authenticated"), ns, "default", pod, mcpheaders.Audience)
	mustBeDenied(t, "a ServiceAccount of the tenant's mints the token", err, mcpHeadersTokensDenial, saUser)

	// RBAC let the tenant through: another audience is minted.
	if _, err := testenv.MintToken(tenantCS, ns, "default", pod, "example.com/tenant"); err != nil {
		t.Fatalf("the namespace admin could not mint a token of its own audience: %v", err)
	}

	// The kubelet projects the token as its node.
	node := "system:node:node-a"
	grant(t, node, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"serviceaccounts/token"}, Verbs: []string{"create"}})
	token, err := testenv.MintToken(clientsetAs(t, node, "system:nodes", "system:authenticated"), ns, "default", pod, mcpheaders.Audience)
	if err != nil {
		t.Fatalf("the kubelet's request for hostd's projected token was refused: %v", err)
	}
	admin, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	verifier, err := toolauth.New(toolauth.Options{Client: admin, Audience: mcpheaders.Audience,
		AllNamespaces: true, CheckPod: mcpendpoint.CheckBoundPod})
	if err != nil {
		t.Fatal(err)
	}
	caller, err := verifier.Verify(ctx, token)
	if err != nil || caller.Namespace != ns || caller.Pod != pod.Name || caller.Workspace != "dev" {
		t.Fatalf("the endpoint's verifier on the kubelet's token: %+v, %v; want pod %s/%s of Workspace dev", caller, err, ns, pod.Name)
	}

	if _, err := testenv.MintToken(clientsetAs(t, "cluster-admin-"+ns, "system:masters", "system:authenticated"), ns, "default", pod, mcpheaders.Audience); err != nil {
		t.Errorf("a cluster admin (system:masters) could not mint the token: %v", err)
	}
}

// Without the MCP headers endpoint in the parameters (the manager's
// endpoint off, or an older manager), hostd is injected without
// LOADOUT_MCP_HEADERS_URL and LOADOUT_MCP_HEADERS_CA, and a tenant cannot
// add them: they would send hostd's token wherever the tenant says
// (R-EXT-7). Its token projection and flag stay: nothing else changes.
func TestAgentPods_NoMCPHeadersEndpointNoMCPHeadersEnv(t *testing.T) {
	ctx := context.Background()
	ns, tenant, _ := boundTenant(t)
	injectsMCPEnv := func(want bool) error {
		pod := agentPod(ns, "probe-mcp-env", "dev")
		if err := k8sClient.Create(ctx, pod, client.DryRunAll); err != nil {
			return err
		}
		h := hostd(pod)
		if h == nil {
			return errString("no sidecar injected")
		}
		has := false
		for _, e := range h.Env {
			has = has || e.Name == mcpHeadersURLEnv
		}
		if has != want {
			return fmt.Errorf("hostd env has %s: %t, want %t (the parameters are not seen yet)", mcpHeadersURLEnv, has, want)
		}
		return nil
	}
	t.Cleanup(func() {
		publishHostdParams(t)
		kit.Eventually(t, func() error { return injectsMCPEnv(true) })
	})

	if err := controllers.PublishHostdConfig(ctx, k8sClient, hostdParamsKey, testHostdImage, contextSigner); err != nil {
		t.Fatal(err)
	}
	params := kit.ConfigMap(t, hostdParamsKey.Namespace, hostdParamsKey.Name).Data
	if _, ok := params[controllers.HostdConfigMCPHeadersURL]; ok {
		t.Fatalf("ConfigMap %s still has %s after publishing without the endpoint", hostdParamsKey, controllers.HostdConfigMCPHeadersURL)
	}
	kit.Eventually(t, func() error { return injectsMCPEnv(false) })

	pod := agentPod(ns, "agent", "dev")
	if err := tenant.Create(ctx, pod); err != nil {
		t.Fatalf("a labelled pod without the MCP headers endpoint: %v", err)
	}
	checkBound(t, pod, "dev", "dev-context", params)

	forged := boundPod(t, k8sClient, ns, "forged", "dev")
	h := hostd(forged)
	h.Env = append(h.Env, corev1.EnvVar{Name: mcpHeadersURLEnv, Value: "https://collector.tenant.svc/v1/mcp-headers"},
		corev1.EnvVar{Name: mcpHeadersCAEnv, Value: "-----BEGIN CERTIFICATE-----\nTENANT\n-----END CERTIFICATE-----\n"})
	mustBeDenied(t, "the tenant gives hostd an MCP headers endpoint of its own", tenant.Create(ctx, forged),
		agentPodsDenial, "env[LOADOUT_MCP_HEADERS_URL]", "must not be set", hostdParamsKey.String())
}
