package hardening

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The injected sidecar is the platform's, whole (docs/security.md, "Agent pods bound at admission": reshaping the
// sidecar): a tenant with every right in its namespace cannot create a
// labelled pod whose loadout-hostd differs from the injected one in any
// field (a tenant sidecar before it, its resources, an exec probe or a
// lifecycle hook running a command in hostd's container, a tcp startup
// probe, a root, writable, SYS_PTRACE securityContext, an extra env var, its
// image, ...), and each refusal names the field. The pod as injected is
// admitted, spelled out or not.
func TestAgentPods_TenantCannotReshapeTheSidecar(t *testing.T) {
	ctx := context.Background()
	ns, tenant, _ := boundTenant(t)

	editHostd := func(edit func(*corev1.Container)) func(*corev1.Pod) {
		return func(p *corev1.Pod) { edit(hostd(p)) }
	}
	exec := func(argv ...string) corev1.ProbeHandler {
		return corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: argv}}
	}
	materialize := exec("/loadout", "materialize", "--context-dir", "/tmp/forged", "--out", treePath)
	unsigned := []string{"/loadout", "hostd", "--allow-unsigned-context", "--context-dir", "/tmp/forged", "--addr", "127.0.0.1:8181"}
	const reshaped = "spec.initContainers[loadout-hostd]"
	for i, tc := range []struct {
		what  string
		edit  func(*corev1.Pod)
		wants []string
	}{
		{"puts its own sidecar before loadout-hostd (to take 127.0.0.1:8181 first)", func(p *corev1.Pod) {
			p.Spec.InitContainers = append([]corev1.Container{{Name: "squatter", Image: "registry.example.com/tenant/listener",
				RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)}}, p.Spec.InitContainers...)
		}, []string{reshaped, "must be the first init container", "squatter", "127.0.0.1:8181"}},
		{"starves hostd (resources 4Mi)", editHostd(func(h *corev1.Container) {
			h.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("4Mi")}
			h.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("4Mi")}
		}), []string{reshaped + ".resources", "128Mi"}},
		{"lifts hostd's memory limit", editHostd(func(h *corev1.Container) {
			h.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("8Gi")}
		}), []string{reshaped + ".resources"}},
		{"runs /loadout materialize as hostd's readiness probe", editHostd(func(h *corev1.Container) {
			h.ReadinessProbe = &corev1.Probe{ProbeHandler: materialize, PeriodSeconds: 10}
		}), []string{reshaped + ".readinessProbe", "no exec"}},
		{"runs /loadout materialize as hostd's liveness probe", editHostd(func(h *corev1.Container) {
			h.LivenessProbe = &corev1.Probe{ProbeHandler: materialize, PeriodSeconds: 20}
		}), []string{reshaped + ".livenessProbe", "no exec"}},
		{"runs an unsigned hostd from a postStart hook", editHostd(func(h *corev1.Container) {
			h.Lifecycle = &corev1.Lifecycle{PostStart: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: unsigned}}}
		}), []string{reshaped + ".lifecycle", "no lifecycle hooks"}},
		{"runs a command from a preStop hook", editHostd(func(h *corev1.Container) {
			h.Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"/loadout", "version"}}}}
		}), []string{reshaped + ".lifecycle"}},
		{"replaces the startup probe with a tcp one (ready before a context is verified)", editHostd(func(h *corev1.Container) {
			h.StartupProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString("hostd-probes")}},
				PeriodSeconds: 2, FailureThreshold: 60}
		}), []string{reshaped + ".startupProbe", "no exec, tcpSocket or grpc"}},
		{"drops the liveness probe", editHostd(func(h *corev1.Container) { h.LivenessProbe = nil }),
			[]string{reshaped + ".livenessProbe"}},
		{"points the startup probe at /healthz", editHostd(func(h *corev1.Container) { h.StartupProbe.HTTPGet.Path = "/healthz" }),
			[]string{reshaped + ".startupProbe"}},
		{"runs hostd as root, writable, with SYS_PTRACE", editHostd(func(h *corev1.Container) {
			h.SecurityContext = &corev1.SecurityContext{RunAsUser: ptr.To[int64](0), RunAsNonRoot: ptr.To(false),
				ReadOnlyRootFilesystem: ptr.To(false), AllowPrivilegeEscalation: ptr.To(true),
				Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"SYS_PTRACE"}}}
		}), []string{reshaped + ".securityContext", "runAsNonRoot", "readOnlyRootFilesystem"}},
		{"adds SYS_PTRACE alone", editHostd(func(h *corev1.Container) {
			h.SecurityContext.Capabilities.Add = []corev1.Capability{"SYS_PTRACE"}
		}), []string{reshaped + ".securityContext"}},
		{"makes hostd's root filesystem writable", editHostd(func(h *corev1.Container) {
			h.SecurityContext.ReadOnlyRootFilesystem = ptr.To(false)
		}), []string{reshaped + ".securityContext"}},
		{"adds an env var to hostd", editHostd(func(h *corev1.Container) {
			h.Env = append(slices.Clone(h.Env), corev1.EnvVar{Name: "GODEBUG", Value: "madvdontneed=0"})
		}), []string{reshaped + ".env", "only LOADOUT_WORKSPACE, LOADOUT_CONTEXT_KEYS, LOADOUT_CONTEXT_CONFIGMAP, LOADOUT_MCP_HEADERS_URL and LOADOUT_MCP_HEADERS_CA"}},
		{"changes hostd's image", editHostd(func(h *corev1.Container) { h.Image = "registry.example.com/tenant/hostd:latest" }),
			[]string{reshaped + ".image", testHostdImage}},
		{"publishes hostd's probe port on the node", editHostd(func(h *corev1.Container) { h.Ports[0].HostPort = 8182 }),
			[]string{reshaped + ".ports"}},
		{"mounts the termination message over the context", editHostd(func(h *corev1.Container) {
			h.TerminationMessagePath = "/var/run/loadout/context/manifest.json"
		}), []string{reshaped + ".terminationMessagePath"}},
		{"gives hostd a terminal and stdin", editHostd(func(h *corev1.Container) { h.Stdin, h.TTY = true, true }),
			[]string{reshaped + ".stdin, tty"}},
		{"runs hostd in another working directory", editHostd(func(h *corev1.Container) { h.WorkingDir = "/var/run/loadout/tree" }),
			[]string{reshaped + ".workingDir"}},
		{"runs whatever image the node holds under hostd's name", editHostd(func(h *corev1.Container) { h.ImagePullPolicy = corev1.PullNever }),
			[]string{reshaped + ".imagePullPolicy"}},
		{"propagates mounts into hostd's tree", editHostd(func(h *corev1.Container) {
			h.VolumeMounts = slices.Clone(h.VolumeMounts)
			h.VolumeMounts[1].MountPropagation = ptr.To(corev1.MountPropagationHostToContainer)
		}), []string{reshaped + ".volumeMounts"}},
	} {
		pod := boundPod(t, k8sClient, ns, fmt.Sprintf("reshaped-%d", i), "dev")
		tc.edit(pod)
		mustBeDenied(t, "the tenant "+tc.what, tenant.Create(ctx, pod), append([]string{agentPodsDenial}, tc.wants...)...)
	}

	// As injected, spelled out or not, the pod is admitted; a tenant init
	// container after hostd is its own business.
	spelled := boundPod(t, k8sClient, ns, "spelled-out", "dev")
	spelled.Spec.InitContainers = append(spelled.Spec.InitContainers, corev1.Container{Name: "clone", Image: "example.com/git"})
	if err := tenant.Create(ctx, spelled); err != nil {
		t.Errorf("a labelled pod spelling out the injected sidecar, then an init container of its own: %v", err)
	}
	if err := tenant.Create(ctx, agentPod(ns, "injected", "dev")); err != nil {
		t.Errorf("a labelled pod the policies inject the sidecar into: %v", err)
	}
}

// pods/resize cannot change hostd's resources on a running pod, up or down;
// the agent's own container is the tenant's to resize.
func TestAgentPods_TenantCannotResizeHostd(t *testing.T) {
	ctx := context.Background()
	ns, tenant, _ := boundTenant(t)
	pod := agentPod(ns, "bound", "dev")
	pod.Spec.Containers[0].Resources = corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")}}
	if err := tenant.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	resizeOpts := func(edit func(*corev1.Pod), opts ...client.SubResourceUpdateOption) error {
		p := &corev1.Pod{}
		if err := tenant.Get(ctx, client.ObjectKeyFromObject(pod), p); err != nil {
			return err
		}
		edit(p)
		return tenant.SubResource("resize").Update(ctx, p, opts...)
	}
	resize := func(edit func(*corev1.Pod)) error { return resizeOpts(edit) }
	waitEnforced(t, "the ValidatingAdmissionPolicy loadout-agent-pod-updates on pods/resize", func() error {
		return resizeOpts(func(p *corev1.Pod) {
			hostd(p).Resources.Requests[corev1.ResourceCPU] = resource.MustParse("20m")
		}, &client.SubResourceUpdateOptions{UpdateOptions: client.UpdateOptions{DryRun: []string{metav1.DryRunAll}}})
	})
	for what, edit := range map[string]func(*corev1.Pod){
		"raises hostd's memory limit": func(p *corev1.Pod) {
			hostd(p).Resources.Limits[corev1.ResourceMemory] = resource.MustParse("8Gi")
		},
		"raises hostd's cpu request": func(p *corev1.Pod) {
			hostd(p).Resources.Requests[corev1.ResourceCPU] = resource.MustParse("2")
		},
	} {
		mustBeDenied(t, "the tenant "+what+" through pods/resize", resize(edit),
			agentUpdatesDenial, "spec.initContainers[loadout-hostd].resources", "pods/resize")
	}
	// Down to 4Mi: refused, by the policy or by the API server's own rules.
	if err := resize(func(p *corev1.Pod) {
		h := hostd(p)
		h.Resources.Requests[corev1.ResourceMemory] = resource.MustParse("4Mi")
		h.Resources.Limits[corev1.ResourceMemory] = resource.MustParse("4Mi")
	}); err == nil {
		t.Error("the tenant shrank hostd to 4Mi through pods/resize")
	}
	after := &corev1.Pod{}
	if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), after); err != nil {
		t.Fatal(err)
	}
	if got := hostd(after).Resources.Limits.Memory(); got.Cmp(resource.MustParse("128Mi")) != 0 {
		t.Errorf("hostd's memory limit is %s after the resizes, want 128Mi", got)
	}
	if err := resize(func(p *corev1.Pod) {
		p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("200m")
	}); err != nil {
		t.Errorf("the tenant resizing its agent container: %v", err)
	}
}

// A command run in hostd's container (kubectl exec or attach) could write
// the tree agents read: refused for the container loadout-hostd, whatever
// the command; exec into the agent's container is not the policy's business
// (here it fails later, for want of a node).
func TestAgentPods_TenantCannotExecIntoHostd(t *testing.T) {
	ctx := context.Background()
	ns := kit.NewNamespace(t, "")
	bindAgentPods(t, ns)
	user := "tenant-admin-" + ns
	namespaceAdmin(t, ns)
	tenantCfg := rest.CopyConfig(cfg)
	tenantCfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:authenticated"}}
	tenant, err := kubernetes.NewForConfig(tenantCfg)
	if err != nil {
		t.Fatal(err)
	}
	pod := agentPod(ns, "bound", "dev")
	if err := k8sClient.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	connect := func(subresource, container string) error {
		req := tenant.CoreV1().RESTClient().Post().Namespace(ns).Resource("pods").Name(pod.Name).SubResource(subresource)
		if subresource == "exec" {
			req = req.VersionedParams(&corev1.PodExecOptions{Container: container, Stdout: true, Stderr: true,
				Command: []string{"/loadout-hostd", "--allow-unsigned-context", "--context-dir=/var/run/loadout/source-credentials",
					"--materialize=" + treePath, "--addr=127.0.0.1:9999"}}, clientgoscheme.ParameterCodec)
		} else {
			req = req.VersionedParams(&corev1.PodAttachOptions{Container: container, Stdout: true}, clientgoscheme.ParameterCodec)
		}
		return req.Do(ctx).Error()
	}
	waitEnforced(t, "the ValidatingAdmissionPolicy loadout-hostd-exec", func() error { return connect("exec", hostdContainer) })
	for _, sub := range []string{"exec", "attach"} {
		mustBeDenied(t, "the tenant runs a command in hostd's container through pods/"+sub, connect(sub, hostdContainer),
			"ValidatingAdmissionPolicy 'loadout-hostd-exec'", sub+" into container loadout-hostd")
	}
	if err := connect("exec", "agent"); err != nil && strings.Contains(err.Error(), "loadout-hostd-exec") {
		t.Errorf("exec into the agent container: %v, want it past the policy", err)
	}
}
