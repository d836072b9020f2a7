package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/utils/ptr"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/controllers"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/exthost"
	"github.com/loadout-dev/loadout/internal/hostd"
	"github.com/loadout-dev/loadout/internal/kubescheme"
	"github.com/loadout-dev/loadout/internal/test/manifests"
	"github.com/loadout-dev/loadout/samples/review-notes/notes"
)

// The sample Workspace the demo waits for and serves (config/samples), and
// the tool of its sample Extension that the demo calls through hostd.
var sampleWorkspace = types.NamespacedName{Namespace: "team-a", Name: "dev"}

const sampleTool = "review_note"

// PlatformNamespace is passed to the manager's --platform-namespace. The
// manager's ServiceAccount lives there too (config/rbac).
const PlatformNamespace = "loadout-system"

// ManagerUser is the user the manager authenticates as: the ServiceAccount
// config/rbac binds its roles to.
const ManagerUser = "system:serviceaccount:" + PlatformNamespace + ":loadout-manager"

// Options configure a demo run.
type Options struct {
	// RepoRoot locates config/crd/bases, config/policy and config/samples.
	RepoRoot string
	// Assets is the directory holding kube-apiserver and etcd (KUBEBUILDER_ASSETS).
	Assets string
	// Manager and Loadout are the paths of the built binaries.
	Manager, Loadout string
	// ReviewNotes is the path of the built samples/review-notes, the
	// Service of the samples' runnable review_note tool.
	ReviewNotes string
	// Out receives everything the demo shows.
	Out io.Writer
	// Keep keeps everything running after the hostd calls, with a kubeconfig
	// for kubectl, until ctx is cancelled.
	Keep bool
	// NoKubectl prints the `kubectl get loadout -A` table through client-go
	// even when kubectl is on PATH.
	NoKubectl bool
	// ReadyTimeout bounds the wait for the Workspace to be Ready (default 2m).
	ReadyTimeout time.Duration
	// Pi is the Pi package directory (integrations/pi) with its node_modules
	// installed; when set, the demo runs a Pi session (scripted model) on the
	// Workspace through it (demo.mjs). Empty skips that step.
	Pi string
}

// Result is what the demo observed.
type Result struct {
	// WorkDir held the kubeconfig, logs and the context volume; it is removed
	// when Run returns.
	WorkDir string
	// ContextHash is the published context's hash.
	ContextHash string
	// SystemPrompt is the ConfigMap's system-prompt.md.
	SystemPrompt string
	// Tools is the Workspace's status.tools.
	Tools []v1alpha1.ToolEntry
	// Allowed and Denied are hostd's answers to the ordinary and the SECRET
	// review_note call.
	Allowed, Denied hostd.BeforeResponse
	// AllowedCall and DeniedCall are the calls sent.
	AllowedCall, DeniedCall exthost.ToolCall
	// ToolRun and SecretToolRun are hostd's answers when it ran review_note
	// itself (POST /v1/tools/review_note) for ToolCall and SecretToolCall.
	ToolRun, SecretToolRun   hostd.ToolRunResponse
	ToolCall, SecretToolCall exthost.ToolCall
	// RecordedNotes is what review_note's Service recorded.
	RecordedNotes []notes.Note
	// LeaseHolder holds the manager's leader election Lease, which the
	// manager took with config/rbac's permissions.
	LeaseHolder string
	// ApprovalName is the Approval hostd created for the headless
	// terraform apply; RequesterRefused is what `loadout approve` printed
	// when the requester tried to decide it, Approved hostd's answer once
	// alice approved it.
	ApprovalName     string
	RequesterRefused string
	Approved         hostd.BeforeResponse
	// MCPCall and MCPDeniedCall are the calls of the analytics MCP
	// server's tool through hostd, MCPRun and MCPDeniedRun hostd's
	// answers, MCPServerSaw the SQL the server received.
	MCPCall, MCPDeniedCall exthost.ToolCall
	MCPRun, MCPDeniedRun   hostd.ToolRunResponse
	MCPServerSaw           []string
}

// demo holds what one run started, so that cleanup stops all of it.
type demo struct {
	o       Options
	out     io.Writer
	workDir string
	env     *envtest.Environment
	procs   []*process
	// stops close what the demo serves in process (the MCP server).
	stops []func()
	// The admin's client, REST config and kubeconfig file, once the control
	// plane runs.
	client     client.Client
	cfg        *rest.Config
	kubeconfig string
}

// Run runs the demo and cleans up every process and temporary directory it
// created before returning, also when ctx is cancelled.
func Run(ctx context.Context, o Options) (res *Result, err error) {
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.ReadyTimeout == 0 {
		o.ReadyTimeout = 2 * time.Minute
	}
	for name, p := range map[string]string{"kube-apiserver": filepath.Join(o.Assets, "kube-apiserver"), "etcd": filepath.Join(o.Assets, "etcd"), "manager": o.Manager, "loadout": o.Loadout, "review-notes": o.ReviewNotes} {
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("%s binary: %w (run `make demo`, which builds it)", name, err)
		}
	}
	d := &demo{o: o, out: o.Out}
	defer func() {
		if cerr := d.cleanup(); cerr != nil {
			err = errors.Join(err, cerr)
		}
	}()
	res, err = d.run(ctx)
	if err != nil && ctx.Err() != nil {
		return res, fmt.Errorf("interrupted: %w", ctx.Err())
	}
	return res, err
}

func (d *demo) step(format string, args ...any) {
	fmt.Fprintf(d.out, "\n==> "+format+"\n", args...)
}

func (d *demo) run(ctx context.Context) (*Result, error) {
	var err error
	if d.workDir, err = os.MkdirTemp("", "loadout-demo-"); err != nil {
		return nil, err
	}
	res := &Result{WorkDir: d.workDir}
	if err := d.startControlPlane(); err != nil {
		return nil, err
	}
	managerKubeconfig, err := d.installPolicyAndRBAC(ctx)
	if err != nil {
		return nil, err
	}
	mgr, err := d.startManager(managerKubeconfig)
	if err != nil {
		return nil, err
	}
	if err := d.applySamples(ctx); err != nil {
		return nil, err
	}
	t, err := d.applyTour(ctx)
	if err != nil {
		return nil, err
	}
	ws, cm, err := d.showWorkspace(ctx, mgr, res)
	if err != nil {
		return nil, err
	}
	if t.approvals, err = d.setupApprovals(ctx); err != nil {
		return nil, err
	}
	hd, err := d.startHostd(ctx, cm, t.approvals.hostdArgs)
	if err != nil {
		return nil, err
	}
	base := hd.base

	res.AllowedCall = exthost.ToolCall{ID: "call-1", Name: sampleTool, Arguments: map[string]any{"text": "parser.go:42 drops the error from Close"}}
	res.DeniedCall = exthost.ToolCall{ID: "call-2", Name: sampleTool, Arguments: map[string]any{"text": "the staging password is SECRET-hunter2"}}
	if res.Allowed, err = d.before(ctx, base, res.AllowedCall); err != nil {
		return nil, err
	}
	if res.Denied, err = d.before(ctx, base, res.DeniedCall); err != nil {
		return nil, err
	}
	if err := checkVerdicts(res); err != nil {
		return res, err
	}
	fmt.Fprintf(d.out, "\nThe ordinary note is allowed: the agent runs review_note. The SECRET note is denied by\n"+
		"review-extension's CEL hook before the tool runs; the agent returns the paired result to the model.\n")
	if err := d.runTools(ctx, base, hd.tools, res); err != nil {
		return res, err
	}

	if d.o.Pi != "" {
		if err := d.runPi(ctx, base, hd.tree); err != nil {
			return res, err
		}
	}

	if err := d.runTour(ctx, hd, t, res); err != nil {
		return res, err
	}

	if d.o.Keep {
		return res, d.keep(ctx, d.client, ws, hd.volume, d.kubeconfig, base)
	}
	d.step("Done; stopping the demo")
	return res, nil
}

// startControlPlane starts kube-apiserver and etcd with the CRDs installed,
// and an admin user whose kubeconfig the later steps use.
func (d *demo) startControlPlane() error {
	d.step("Starting a local control plane (kube-apiserver and etcd from %s)", d.o.Assets)
	d.env = &envtest.Environment{
		BinaryAssetsDirectory: d.o.Assets,
		CRDDirectoryPaths:     []string{filepath.Join(d.o.RepoRoot, "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	// As hardened clusters do: setting blockOwnerDeletion on the context
	// ConfigMap then needs the RBAC that config/rbac grants.
	d.env.ControlPlane.GetAPIServer().Configure().Append("enable-admission-plugins", "OwnerReferencesPermissionEnforcement")
	if _, err := d.env.Start(); err != nil {
		return fmt.Errorf("starting the control plane: %w", err)
	}
	admin, err := d.env.AddUser(envtest.User{Name: "loadout-demo-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return fmt.Errorf("creating the demo admin user: %w", err)
	}
	d.cfg = admin.Config()
	d.kubeconfig = filepath.Join(d.workDir, "kubeconfig")
	if err := writeKubeconfig(admin, d.kubeconfig); err != nil {
		return err
	}
	if d.client, err = newClient(d.cfg); err != nil {
		return err
	}
	fmt.Fprintf(d.out, "API server %s; CRDs installed from config/crd/bases\n", d.cfg.Host)
	return nil
}

// installPolicyAndRBAC applies the trust policy and the manager's identity
// and permissions, and returns the kubeconfig of the manager's
// ServiceAccount: the manager runs with exactly the permissions an
// installation gives it.
func (d *demo) installPolicyAndRBAC(ctx context.Context) (string, error) {
	for _, dir := range []string{"policy", "rbac"} {
		objs, err := manifests.Read(filepath.Join(d.o.RepoRoot, "config", dir))
		if err != nil {
			return "", err
		}
		if dir == "rbac" {
			objs = append([]manifests.Manifest{manifests.Namespace(PlatformNamespace)}, objs...)
		}
		if err := manifests.Apply(ctx, d.client, objs); err != nil {
			return "", err
		}
		fmt.Fprintf(d.out, "Applied config/%s: %s\n", dir, manifests.Kinds(objs))
	}
	return d.userKubeconfig(envtest.User{Name: ManagerUser,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + PlatformNamespace, "system:authenticated"}})
}

// startManager starts the manager binary as its ServiceAccount and waits
// until it is ready.
func (d *demo) startManager(kubeconfig string) (*process, error) {
	d.step("Starting the manager (%s)", d.o.Manager)
	metricsAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	probeAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	// Not the default :8444: a test's manager may run beside another.
	mcpHeadersAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	mgr, err := d.start("manager", d.o.Manager, []string{
		"--metrics-bind-address=" + metricsAddr,
		"--health-probe-bind-address=" + probeAddr,
		"--mcp-headers-bind-address=" + mcpHeadersAddr,
		"--platform-namespace=" + PlatformNamespace,
		"--leader-elect",
		"--leader-election-namespace=" + PlatformNamespace,
	}, []string{"KUBECONFIG=" + kubeconfig})
	if err != nil {
		return nil, err
	}
	if err := mgr.waitHTTP("http://"+probeAddr+"/readyz", time.Minute); err != nil {
		return nil, err
	}
	fmt.Fprintf(d.out, "manager ready as %s (config/rbac), leader election on; probes http://%s/readyz, metrics https://%s/metrics (authenticated), log %s\n",
		ManagerUser, probeAddr, metricsAddr, mgr.log)
	return mgr, nil
}

// applySamples applies config/samples as kubectl apply -k would, without
// their Deployments: no Pod runs on this control plane, so the demo plays
// their parts as local processes.
func (d *demo) applySamples(ctx context.Context) error {
	d.step("Applying config/samples (the files its kustomization lists, as kubectl apply -k config/samples does)")
	samples, err := manifests.Read(filepath.Join(d.o.RepoRoot, "config", "samples"))
	if err != nil {
		return err
	}
	var apply []manifests.Manifest
	for _, m := range samples {
		if m.Object.GetKind() == "Deployment" {
			part := "the sidecar's part below: it mounts the ConfigMap into a directory and runs hostd on it"
			if m.Object.GetName() == "review-notes" {
				part = "its part below: it runs the same command as a local process"
			}
			fmt.Fprintf(d.out, "skipped %s: this control plane has no kubelet and no controller-manager, so no Pod would ever run;\n"+
				"  the demo plays %s\n", m, part)
			continue
		}
		apply = append(apply, m)
	}
	if err := manifests.Apply(ctx, d.client, apply); err != nil {
		return err
	}
	for _, m := range apply {
		fmt.Fprintf(d.out, "applied %s\n", m)
	}
	return nil
}

// showWorkspace waits for the sample Workspace to be Ready and shows what
// the manager published: the leader election Lease, kubectl get loadout, the
// system prompt and the tool registry.
func (d *demo) showWorkspace(ctx context.Context, mgr *process, res *Result) (*v1alpha1.Workspace, *corev1.ConfigMap, error) {
	d.step("Waiting for Workspace %s to be Ready", sampleWorkspace)
	ws, err := d.waitReady(ctx, d.client, mgr)
	if err != nil {
		return nil, nil, err
	}
	res.Tools = ws.Status.Tools
	if ws.Status.Context != nil {
		res.ContextHash = ws.Status.Context.Hash
	}
	cm := &corev1.ConfigMap{}
	cmName := ws.Status.Context.ConfigMapName
	if err := d.client.Get(ctx, types.NamespacedName{Namespace: ws.Namespace, Name: cmName}, cm); err != nil {
		return nil, nil, fmt.Errorf("reading ConfigMap %s/%s: %w", ws.Namespace, cmName, err)
	}
	res.SystemPrompt = cm.Data[contract.KeySystemPrompt]
	lease := &coordinationv1.Lease{}
	if err := d.client.Get(ctx, types.NamespacedName{Namespace: PlatformNamespace, Name: controllers.LeaderElectionID}, lease); err != nil {
		return nil, nil, fmt.Errorf("reading the manager's leader election Lease: %w", err)
	}
	res.LeaseHolder = ptr.Deref(lease.Spec.HolderIdentity, "")
	fmt.Fprintf(d.out, "leader election Lease %s/%s held by %s\n", PlatformNamespace, controllers.LeaderElectionID, res.LeaseHolder)

	d.step("kubectl get loadout -A")
	if err := d.getLoadout(ctx, d.cfg, d.kubeconfig); err != nil {
		return nil, nil, err
	}

	d.step("System prompt published in ConfigMap %s/%s (key system-prompt.md, %s)", ws.Namespace, cmName, res.ContextHash)
	fmt.Fprint(d.out, res.SystemPrompt)

	d.step("Tool registry (Workspace %s status.tools)", sampleWorkspace)
	printTools(d.out, res.Tools)
	return ws, cm, nil
}

// sidecar is hostd as the demo runs it: its base URL, the tree it
// materializes, the mounted context volume and the sample tool Service.
type sidecar struct {
	base, tree, volume, ledger string
	tools                      *toolServer
}

// startHostd runs hostd on the published ConfigMap, mounted as the kubelet
// would, with the trust anchor the agent-pod admission policy injects, and
// the sample tool Service beside it.
func (d *demo) startHostd(ctx context.Context, cm *corev1.ConfigMap, approvalArgs []string) (*sidecar, error) {
	volume := filepath.Join(d.workDir, "context")
	if err := writeConfigMapVolume(volume, cm.Data); err != nil {
		return nil, err
	}
	hostdAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	tools, err := d.startToolServer(cm.Data["manifest.json"])
	if err != nil {
		return nil, err
	}
	// The trust anchor and the Workspace, as the agent-pod admission policy
	// injects them: hostd loads only a context the manager signed for it.
	hostdConfig := &corev1.ConfigMap{}
	if err := d.client.Get(ctx, types.NamespacedName{Namespace: PlatformNamespace, Name: controllers.DefaultHostdConfigMap}, hostdConfig); err != nil {
		return nil, fmt.Errorf("reading the hostd configuration the manager publishes: %w", err)
	}
	hostdEnv := []string{"LOADOUT_CONTEXT_KEYS=" + hostdConfig.Data[controllers.HostdConfigContextKeys], "LOADOUT_WORKSPACE=" + sampleWorkspace.String()}
	fmt.Fprintf(d.out, "trust anchor (ConfigMap %s/%s, key %s): %s", PlatformNamespace, controllers.DefaultHostdConfigMap,
		controllers.HostdConfigContextKeys, hostdConfig.Data[controllers.HostdConfigContextKeys])
	tree := filepath.Join(d.workDir, "tree")
	ledger := filepath.Join(d.workDir, "ledger.jsonl")
	hostdArgs := append([]string{"hostd", "--context-dir", volume, "--addr", hostdAddr, "--materialize", tree, "--ledger-file", ledger}, tools.hostdArgs()...)
	hostdArgs = append(hostdArgs, approvalArgs...)
	d.step("Starting the hostd sidecar: LOADOUT_WORKSPACE=%s LOADOUT_CONTEXT_KEYS=… loadout %s", sampleWorkspace, strings.Join(hostdArgs, " "))
	hd, err := d.start("hostd", d.o.Loadout, hostdArgs, hostdEnv)
	if err != nil {
		return nil, err
	}
	if err := hd.waitHTTP("http://"+hostdAddr+"/readyz", 30*time.Second); err != nil {
		return nil, err
	}
	return &sidecar{base: "http://" + hostdAddr, tree: tree, volume: volume, ledger: ledger, tools: tools}, nil
}

// runPi runs a real Pi session through the Pi package (integrations/pi
// demo.mjs) against hostd and the tree it materialized. The model is scripted;
// demo.mjs fails unless Pi lists the Workspace's skills and shows the
// platform hook's denial.
func (d *demo) runPi(ctx context.Context, hostdURL, tree string) error {
	d.step("Pi on the Workspace: node %s (Pi package integrations/pi, scripted model)", filepath.Join(d.o.Pi, "demo.mjs"))
	cmd := exec.CommandContext(ctx, "node", "demo.mjs")
	cmd.Dir = d.o.Pi
	cmd.Env = append(os.Environ(), "LOADOUT_HOSTD_URL="+hostdURL, "LOADOUT_CONTEXT_DIR="+tree)
	cmd.Stdout, cmd.Stderr = d.out, d.out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("the Pi session (%s/demo.mjs): %w", d.o.Pi, err)
	}
	return nil
}

// userKubeconfig writes a kubeconfig for a new user of the control plane
// into the work directory and returns its path.
func (d *demo) userKubeconfig(u envtest.User) (string, error) {
	user, err := d.env.AddUser(u, nil)
	if err != nil {
		return "", fmt.Errorf("creating user %s: %w", u.Name, err)
	}
	path := filepath.Join(d.workDir, "kubeconfig-"+strings.NewReplacer(":", "-").Replace(u.Name))
	return path, writeKubeconfig(user, path)
}

func writeKubeconfig(u *envtest.AuthenticatedUser, path string) error {
	kc, err := u.KubeConfig()
	if err != nil {
		return err
	}
	return os.WriteFile(path, kc, 0o600)
}

// start starts a child process logging into the work directory.
func (d *demo) start(name, bin string, args, env []string) (*process, error) {
	p, err := startProcess(name, filepath.Join(d.workDir, name+".log"), bin, args, env)
	if err != nil {
		return nil, err
	}
	d.procs = append(d.procs, p)
	return p, nil
}

// cleanup stops the processes in reverse order, then the control plane, then
// removes the work directory.
func (d *demo) cleanup() error {
	var errs []error
	for i := len(d.procs) - 1; i >= 0; i-- {
		if err := d.procs[i].stop(15 * time.Second); err != nil {
			errs = append(errs, err)
		}
	}
	for _, stop := range d.stops {
		stop()
	}
	if d.env != nil {
		if err := d.env.Stop(); err != nil {
			errs = append(errs, fmt.Errorf("stopping the control plane: %w", err))
		}
	}
	if d.workDir != "" {
		if err := os.RemoveAll(d.workDir); err != nil {
			errs = append(errs, fmt.Errorf("removing %s: %w", d.workDir, err))
		}
	}
	if len(errs) == 0 {
		fmt.Fprintln(d.out, "Stopped hostd, the manager and the control plane; removed", d.workDir)
	}
	return errors.Join(errs...)
}

func newClient(cfg *rest.Config) (client.Client, error) {
	return client.New(cfg, client.Options{Scheme: kubescheme.New()})
}

// waitReady waits until the sample Workspace is Ready for its generation and
// its registry holds the sample tool and the tour's MCP tool. Ready alone
// can describe a pass that ran before the manager's cache received the
// Extensions applied beside it, or before it discovered the MCP server.
func (d *demo) waitReady(ctx context.Context, c client.Client, mgr *process) (*v1alpha1.Workspace, error) {
	deadline := time.Now().Add(d.o.ReadyTimeout)
	ws := &v1alpha1.Workspace{}
	for {
		err := c.Get(ctx, sampleWorkspace, ws)
		if err == nil {
			ready := meta.FindStatusCondition(ws.Status.Conditions, string(vocab.ConditionReady))
			if ready != nil && ready.Status == "True" && ws.Status.ObservedGeneration == ws.Generation && ws.Status.Context != nil &&
				hasTools(ws.Status.Tools, sampleTool, mcpTool) {
				fmt.Fprintf(d.out, "Workspace %s Ready: %s\n", sampleWorkspace, ready.Message)
				return ws, nil
			}
		}
		if done, perr := mgr.exited(); done {
			return nil, fmt.Errorf("the manager exited (%w) before Workspace %s was Ready; last log lines of %s:\n%s", perr, sampleWorkspace, mgr.log, mgr.logTail(20))
		}
		if time.Now().After(deadline) {
			conds, _ := json.Marshal(ws.Status.Conditions)
			got := "the last get succeeded"
			if err != nil {
				got = "the last get failed: " + err.Error()
			}
			return nil, fmt.Errorf("the Workspace %s is not Ready after %s (%s; conditions %s); last log lines of %s:\n%s",
				sampleWorkspace, d.o.ReadyTimeout, got, conds, mgr.log, mgr.logTail(20))
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// getLoadout prints `kubectl get loadout -A`: kubectl's own output when it is
// installed, else the same table rendered by the API server through client-go.
func (d *demo) getLoadout(ctx context.Context, cfg *rest.Config, kubeconfig string) error {
	if !d.o.NoKubectl {
		if kubectl, err := exec.LookPath("kubectl"); err == nil {
			cmd := exec.CommandContext(ctx, kubectl, "--kubeconfig", kubeconfig, "get", "loadout", "-A")
			var buf bytes.Buffer
			cmd.Stdout, cmd.Stderr = &buf, &buf
			if err := cmd.Run(); err == nil {
				_, werr := d.out.Write(buf.Bytes())
				return werr
			}
			fmt.Fprintf(d.out, "(%s failed: %s; the same table through client-go:)\n", kubectl, strings.TrimSpace(buf.String()))
		} else {
			fmt.Fprintln(d.out, "(kubectl is not installed; the same table, rendered by the API server, through client-go:)")
		}
	}
	return printCategoryTable(ctx, cfg, "loadout", d.out)
}

func hasTools(tools []v1alpha1.ToolEntry, names ...string) bool {
	for _, n := range names {
		if !slices.ContainsFunc(tools, func(t v1alpha1.ToolEntry) bool { return t.Name == n }) {
			return false
		}
	}
	return true
}

func printTools(w io.Writer, tools []v1alpha1.ToolEntry) {
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	fmt.Fprintln(tw, "NAME\tFROM\tREAD-ONLY\tRUNNABLE\tDESCRIPTION")
	for _, t := range tools {
		from := "extension " + t.Extension
		if t.Builtin {
			from = "built-in"
		}
		fmt.Fprintf(tw, "%s\t%s\t%t\t%t\t%s\n", t.Name, from, t.ReadOnly, t.Runnable, t.Description)
	}
	tw.Flush()
}

// before sends one call to hostd's POST /v1/before and prints both sides.
func (d *demo) before(ctx context.Context, base string, call exthost.ToolCall) (hostd.BeforeResponse, error) {
	var resp hostd.BeforeResponse
	body, err := json.Marshal(hostd.CallRequest{Call: call})
	if err != nil {
		return resp, err
	}
	return resp, d.postJSON(ctx, base+"/v1/before", body, &resp)
}

// checkVerdicts fails the demo unless the ordinary call is allowed and the
// SECRET call is denied with a result paired to it.
func checkVerdicts(res *Result) error {
	if !res.Allowed.Allowed {
		return fmt.Errorf("hostd denied the ordinary call %s: %+v", res.AllowedCall.ID, res.Allowed.Result)
	}
	r := res.Denied.Result
	switch {
	case res.Denied.Allowed:
		return fmt.Errorf("hostd allowed the SECRET call %s", res.DeniedCall.ID)
	case r == nil:
		return fmt.Errorf("hostd denied the SECRET call %s without a paired result", res.DeniedCall.ID)
	case r.ToolCallID != res.DeniedCall.ID || r.ToolName != res.DeniedCall.Name || !r.IsError:
		return fmt.Errorf("hostd's result for the SECRET call is not paired with it: %+v", r)
	}
	return nil
}

// keep leaves everything running until ctx ends, keeping the context volume
// in sync with the ConfigMap as the kubelet would, so that a change made with
// kubectl reaches hostd.
func (d *demo) keep(ctx context.Context, c client.Client, ws *v1alpha1.Workspace, volume, kubeconfig, hostdURL string) error {
	d.step("Running until Ctrl-C (--keep)")
	fmt.Fprintf(d.out, `Explore with kubectl:
  export KUBECONFIG=%s
  kubectl get loadout -A
  kubectl -n team-a get workspace dev -o yaml
  kubectl -n team-a get configmap %s -o yaml
Ask hostd (it reloads when the ConfigMap changes; the demo syncs %s like a kubelet):
  curl -s %s/v1/registry
  curl -s %s/v1/before --json '{"call":{"id":"c3","name":"review_note","arguments":{"text":"a SECRET"}}}'
Ask for an Approval (the call waits 20 s; ask again to keep waiting) and decide it as alice:
  curl -s %s/v1/before --json '{"call":{"id":"c4","name":"bash","arguments":{"command":"terraform apply"}},"headless":true}'
  kubectl get approvals -A; loadout approve -n team-a NAME --kubeconfig %s
Logs: %s/manager.log, %s/hostd.log
Press Ctrl-C to stop everything and remove %s.
`, kubeconfig, ws.Status.Context.ConfigMapName, volume, hostdURL, hostdURL, hostdURL, filepath.Join(d.workDir, "kubeconfig-"+approverName),
		d.workDir, d.workDir, d.workDir)
	key := types.NamespacedName{Namespace: ws.Namespace, Name: ws.Status.Context.ConfigMapName}
	last := ws.Status.Context.Hash
	for {
		select {
		case <-ctx.Done():
			fmt.Fprintln(d.out, "\nInterrupted; cleaning up")
			return nil
		case <-time.After(2 * time.Second):
		}
		cm := &corev1.ConfigMap{}
		if err := c.Get(ctx, key, cm); err != nil {
			continue
		}
		if h := cm.Annotations["loadout.dev/context-hash"]; h != "" && h != last {
			if err := writeConfigMapVolume(volume, cm.Data); err != nil {
				fmt.Fprintf(d.out, "syncing %s: %v\n", volume, err)
				continue
			}
			fmt.Fprintf(d.out, "ConfigMap %s changed (%s); updated %s, hostd reloads it\n", key, h, volume)
			last = h
		}
	}
}
