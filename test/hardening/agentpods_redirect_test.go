package hardening

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/exthost"
	"github.com/loadout-dev/loadout/internal/test/testenv"
)

// A tenant cannot shape a bound pod so that a call hostd makes to a
// platform Service (https://guard.loadout-system.svc/...) reaches the
// agent instead: hostd shares the pod's /etc/hosts, resolver and network
// namespace. Each shape was admitted, with hostd injected, before the
// agent-pod policy refused it. What the pod may still set
// (dnsConfig options, the safe sysctl ping_group_range) is admitted.
func TestAgentPods_TenantCannotRedirectAPlatformEndpointToTheAgent(t *testing.T) {
	ctx := context.Background()
	ns, tenant, _ := boundTenant(t)
	for i, tc := range []struct {
		what  string
		edit  func(*corev1.Pod)
		wants []string
	}{
		{"points the platform's guard at 127.0.0.1 with hostAliases", func(p *corev1.Pod) {
			p.Spec.HostAliases = []corev1.HostAlias{{IP: "127.0.0.1", Hostnames: []string{"guard." + platformNS + ".svc"}}}
		}, []string{"spec.hostAliases[127.0.0.1 guard." + platformNS + ".svc]"}},
		{"names its own nameserver with dnsPolicy None", func(p *corev1.Pod) {
			p.Spec.DNSPolicy = corev1.DNSNone
			p.Spec.DNSConfig = &corev1.PodDNSConfig{Nameservers: []string{"127.0.0.1"}, Searches: []string{ns + ".svc.cluster.local"}}
		}, []string{"spec.dnsPolicy, spec.dnsConfig", "the cluster's DNS"}},
		{"adds its own nameserver to the cluster's", func(p *corev1.Pod) {
			p.Spec.DNSConfig = &corev1.PodDNSConfig{Nameservers: []string{"10.0.0.53"}}
		}, []string{"spec.dnsPolicy, spec.dnsConfig"}},
		{"lets the agent bind port 443 (net.ipv4.ip_unprivileged_port_start=0)", func(p *corev1.Pod) {
			p.Spec.SecurityContext = &corev1.PodSecurityContext{Sysctls: []corev1.Sysctl{{Name: "net.ipv4.ip_unprivileged_port_start", Value: "0"}}}
		}, []string{"spec.securityContext.sysctls[net.ipv4.ip_unprivileged_port_start]"}},
		{"spells the sysctl with slashes", func(p *corev1.Pod) {
			p.Spec.SecurityContext = &corev1.PodSecurityContext{Sysctls: []corev1.Sysctl{{Name: "net/ipv4/ip_unprivileged_port_start", Value: "0"}}}
		}, []string{"spec.securityContext.sysctls[net/ipv4/ip_unprivileged_port_start]"}},
		{"gives the agent NET_ADMIN (iptables in the pod's network)", func(p *corev1.Pod) {
			p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_ADMIN"}}}
		}, []string{"securityContext of container agent", "NET_ADMIN"}},
		{"runs the agent privileged", func(p *corev1.Pod) {
			p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
		}, []string{"securityContext of container agent"}},
	} {
		pod := agentPod(ns, fmt.Sprintf("redirect-%d", i), "dev")
		tc.edit(pod)
		mustBeDenied(t, "the tenant "+tc.what, tenant.Create(ctx, pod), append([]string{agentPodsDenial}, tc.wants...)...)
	}

	ok := agentPod(ns, "resolver-options", "dev")
	ok.Spec.DNSConfig = &corev1.PodDNSConfig{Options: []corev1.PodDNSConfigOption{{Name: "ndots", Value: ptr.To("2")}}}
	ok.Spec.SecurityContext = &corev1.PodSecurityContext{Sysctls: []corev1.Sysctl{{Name: "net.ipv4.ping_group_range", Value: "0 2147483647"}}}
	if err := tenant.Create(ctx, ok); err != nil {
		t.Errorf("a bound pod with dnsConfig options and the safe sysctl ping_group_range: %v", err)
	}
}

// The agent's containers hold no ServiceAccount token: the API server
// cannot tell one from hostd's (the same ServiceAccount, bound to the same
// pod), so with one the agent could file an Approval in hostd's name and
// watch the namespace's Approvals. The pod as the ServiceAccount
// admission plugin leaves it (kube-api-access-*, mounted in every
// container) is refused naming automountServiceAccountToken, and so is a
// token the tenant projects itself, of any audience, in any container; the
// admitted pod's only token is hostd's.
func TestAgentPods_AgentContainersHoldNoServiceAccountToken(t *testing.T) {
	ctx := context.Background()
	ns, tenant, _ := boundTenant(t)
	automounted := func(p *corev1.Pod) {
		// What the ServiceAccount admission plugin adds to a pod that does
		// not set automountServiceAccountToken: false.
		p.Spec.AutomountServiceAccountToken = nil
		p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "kube-api-access-x7k2p", VolumeSource: corev1.VolumeSource{
			Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{ExpirationSeconds: ptr.To[int64](3607), Path: "token"}},
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
					Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
			}}}})
		p.Spec.Containers[0].VolumeMounts = append(p.Spec.Containers[0].VolumeMounts, corev1.VolumeMount{
			Name: "kube-api-access-x7k2p", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true})
	}
	for i, tc := range []struct {
		what  string
		edit  func(*corev1.Pod)
		wants []string
	}{
		{"leaves the automounted API token in the agent", automounted,
			[]string{"spec.volumes[kube-api-access-x7k2p]", "automountServiceAccountToken: false"}},
		{"projects an API token for the agent", func(p *corev1.Pod) {
			addTokenVolume(p, "api", "")
			p.Spec.Containers[0].VolumeMounts = append(p.Spec.Containers[0].VolumeMounts, corev1.VolumeMount{Name: "api", MountPath: "/api"})
		}, []string{"spec.volumes[api]", "no ServiceAccount token but hostd's"}},
		{"projects a token of its own audience (the API server's issuer, spelled out)", func(p *corev1.Pod) {
			addTokenVolume(p, "issuer", "https://kubernetes.default.svc.cluster.local")
			p.Spec.Containers[0].VolumeMounts = append(p.Spec.Containers[0].VolumeMounts, corev1.VolumeMount{Name: "issuer", MountPath: "/issuer"})
		}, []string{"spec.volumes[issuer]"}},
		{"projects one for an init container", func(p *corev1.Pod) {
			addTokenVolume(p, "early", "")
			p.Spec.InitContainers = append(p.Spec.InitContainers, corev1.Container{Name: "fetch", Image: "example.com/curl",
				VolumeMounts: []corev1.VolumeMount{{Name: "early", MountPath: "/t"}, {Name: treeVolume, MountPath: "/etc/claude-code", ReadOnly: true},
					{Name: treeVolume, MountPath: "/etc/codex", ReadOnly: true}}})
		}, []string{"spec.volumes[early]"}},
	} {
		pod := agentPod(ns, fmt.Sprintf("token-%d", i), "dev")
		tc.edit(pod)
		mustBeDenied(t, "the tenant "+tc.what, tenant.Create(ctx, pod), append([]string{agentPodsDenial}, tc.wants...)...)
	}

	// The namespace's default ServiceAccount, which the kube-controller-manager
	// (not part of envtest) would have made: the bound pod runs as it.
	kit.Create(t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "default"}})
	pod := agentPod(ns, "no-token", "dev")
	if err := tenant.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	for _, v := range pod.Spec.Volumes {
		if v.Projected == nil || v.Name == serviceTokenVolume {
			continue
		}
		for _, s := range v.Projected.Sources {
			if s.ServiceAccountToken != nil {
				t.Errorf("the admitted bound pod has a ServiceAccount token outside hostd's volume: %s", v.Name)
			}
		}
	}
	for _, c := range append(pod.Spec.InitContainers, pod.Spec.Containers...) {
		for _, m := range c.VolumeMounts {
			if m.Name == serviceTokenVolume && c.Name != hostdContainer {
				t.Errorf("container %s mounts hostd's token volume", c.Name)
			}
		}
	}

	// hostd's own identity (the API token the kubelet projects into
	// loadout-service-token, bound to the pod) still files its Approval,
	// under loadout-approvals and the RBAC the chart grants.
	installPolicy(t, "approval_policy.yaml")
	sa := "system:serviceaccount:" + ns + ":default"
	grantInNamespace(t, ns, sa, rbacv1.PolicyRule{APIGroups: []string{v1alpha1.GroupVersion.Group}, Resources: []string{"approvals"}, Verbs: []string{"create", "get", "watch"}})
	approval := func() *v1alpha1.Approval {
		return &v1alpha1.Approval{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "bash-"}, Spec: v1alpha1.ApprovalSpec{
			Workspace: ns + "/dev", Call: v1alpha1.ApprovalCall{Tool: "bash", ArgumentsDigest: "sha256:" + strings.Repeat("0", 64)},
			Hook:           v1alpha1.ApprovalHook{Extension: "prod-guard", Name: "apply-needs-approval"},
			Requester:      v1alpha1.ApprovalRequester{Pod: pod.Name, ServiceAccount: "default", User: sa},
			ApproverGroups: []string{"platform:approvers"}, ExpiresAt: metav1.NewTime(time.Now().Add(time.Hour))}}
	}
	waitEnforced(t, "the ValidatingAdmissionPolicy loadout-approvals", func() error {
		return k8sClient.Create(ctx, approval(), client.DryRunAll) // an admin filing in the pod's name
	})
	// Minted as the kubelet's projection is (envtest runs no node
	// authorizer: a cluster admin stands in for the node).
	hostdToken := testenv.Token(t, clientsetAs(t, "kubelet-stand-in", "system:masters"), ns, "default", pod)
	asHostd := rest.AnonymousClientConfig(cfg)
	asHostd.BearerToken = hostdToken
	hostdClient, err := client.New(asHostd, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	if err := hostdClient.Create(ctx, approval()); err != nil {
		t.Errorf("hostd's own token filing its Approval: %v", err)
	}
}

// A platform webhook hook over plain HTTP (the hook of docs/security.md, at
// http://guard.loadout-system.svc/...) is refused at reconcile: the
// Extension is not Valid, and the Workspace it is imposed on names it
// Rejected, Invalid, with the field and the rule; no context carries the
// hook's URL. Over HTTPS with a caBundle the same hook is published.
func TestTenancy_PlatformWebhookOverPlainHTTPIsRefusedAtReconcile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := kit.NewNamespace(t, vocab.TrustRestricted)
	guard := testenv.Extension(platformNS, "plain-guard-"+ns, nil)
	guard.Spec.Hooks = []v1alpha1.ExtensionHook{webhookHook(v1alpha1.ServiceReference{Name: "guard", Port: 80, Path: "/check", Scheme: v1alpha1.SchemeHTTP})}
	guard.Spec.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}}
	kit.Create(t, guard)
	kit.Create(t, &v1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "dev"}})

	const why = "must be scheme HTTPS with a caBundle"
	kit.Eventually(t, func() error {
		e := &v1alpha1.Extension{}
		if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(guard), e); err != nil {
			return err
		}
		c := meta.FindStatusCondition(e.Status.Conditions, string(vocab.ConditionValid))
		if c == nil || c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, "spec.hooks[0].webhook.service.scheme") || !strings.Contains(c.Message, why) {
			return fmt.Errorf("the Extension's Valid condition is %+v, want False naming spec.hooks[0].webhook.service.scheme", c)
		}
		return nil
	})
	kit.WaitFor(t, ns, "dev", func(ws *v1alpha1.Workspace) error {
		for _, s := range ws.Status.Extensions {
			if s.Name == guard.Name && s.State == vocab.ExtensionRejected && s.Reason == string(exthost.ReasonInvalid) && strings.Contains(s.Message, why) {
				return nil
			}
		}
		return fmt.Errorf("status.extensions %+v does not name %s Rejected, Invalid: %s", ws.Status.Extensions, guard.Name, why)
	})
	if cm, err := kit.GetConfigMap(ns, "dev-context"); err == nil {
		testenv.MustNotContain(t, "the published context", allData(cm), "http://guard."+platformNS+".svc")
	}

	// The platform's fix: HTTPS with its CA.
	fixed := &v1alpha1.Extension{}
	if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(guard), fixed); err != nil {
		t.Fatal(err)
	}
	fixed.Spec.Hooks[0].Webhook.Service = v1alpha1.ServiceReference{Name: "guard", Port: 443, Path: "/check", CABundle: []byte("-----BEGIN CERTIFICATE-----\n")}
	if err := k8sClient.Update(ctx, fixed); err != nil {
		t.Fatal(err)
	}
	_, cm := kit.Published(t, ns, "dev")
	testenv.MustContain(t, "the published context", allData(cm), "https://guard."+platformNS+".svc:443/check")
}
