package demo

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/internal/exthost"
	"github.com/loadout-dev/loadout/internal/hostd"
	"github.com/loadout-dev/loadout/internal/ledger"
	"github.com/loadout-dev/loadout/internal/test/testenv"
)

// The tour's approval: a headless agent's `terraform apply` becomes an
// Approval (tour/prod-guard.yaml); the agent's own identity may not decide
// it, alice of platform:approvers approves it with `loadout approve`, and
// the waiting call runs exactly as asked.

//go:embed tour/prod-guard.yaml
var prodGuardYAML string

const (
	approverGroup = "platform:approvers"
	approverName  = "alice"
	agentPod      = "agent-0"
	// requester is the agent pod's ServiceAccount, hostd's identity.
	requester = "system:serviceaccount:team-a:agent"
)

// approvals is what hostd and the deciders need: hostd's flags (a token
// bound to the agent pod) and the kubeconfigs of the requester and alice.
type approvals struct {
	hostdArgs                  []string
	requesterKubeconfig, alice string
}

// applyProdGuard applies the approval gate and the bindings the chart grants.
func (d *demo) applyProdGuard(ctx context.Context) error {
	d.step("The platform sends terraform apply to a second person (internal/test/demo/tour/prod-guard.yaml)")
	return d.applyYAML(ctx, "tour/prod-guard.yaml", prodGuardYAML)
}

// setupApprovals creates the agent pod whose hostd asks, mints the token
// the kubelet would project for it, and the deciders' kubeconfigs.
func (d *demo) setupApprovals(ctx context.Context) (*approvals, error) {
	d.step("An agent pod of Workspace %s, whose hostd asks for Approvals as the pod's ServiceAccount", sampleWorkspace)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: sampleWorkspace.Namespace, Name: agentPod,
		Labels: map[string]string{"loadout.dev/workspace": sampleWorkspace.Name}},
		Spec: corev1.PodSpec{ServiceAccountName: "agent", AutomountServiceAccountToken: ptr.To(false),
			Containers: []corev1.Container{{Name: "agent", Image: "ghcr.io/loadout-dev/loadout-pi:dev"}}}}
	if err := d.createAgentPod(ctx, pod); err != nil {
		return nil, err
	}
	fmt.Fprintf(d.out, "created pod %s/%s (ServiceAccount agent, labelled loadout.dev/workspace=%s; admission injected %s);\n"+
		"  no kubelet runs it: the demo's hostd takes its identity, a token bound to the pod\n",
		pod.Namespace, pod.Name, sampleWorkspace.Name, initContainerNames(pod))
	cs, err := kubernetes.NewForConfig(d.cfg)
	if err != nil {
		return nil, err
	}
	token, err := testenv.MintToken(cs, pod.Namespace, "agent", pod)
	if err != nil {
		return nil, fmt.Errorf("minting the agent pod's token: %w", err)
	}
	tokenFile, caFile := filepath.Join(d.workDir, "api-token"), filepath.Join(d.workDir, "ca.crt")
	if err := os.WriteFile(tokenFile, []byte(token), 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(caFile, d.cfg.CAData, 0o600); err != nil {
		return nil, err
	}
	a := &approvals{hostdArgs: []string{"--approvals-token-file", tokenFile, "--approvals-ca-file", caFile,
		"--approvals-server", strings.TrimSuffix(d.cfg.Host, "/")}}
	if a.alice, err = d.userKubeconfig(envtest.User{Name: approverName, Groups: []string{approverGroup}}); err != nil {
		return nil, err
	}
	// The requester even in the approver group: admission, not RBAC, is
	// what keeps it from deciding its own ask.
	if a.requesterKubeconfig, err = d.userKubeconfig(envtest.User{Name: requester,
		Groups: []string{approverGroup, "system:serviceaccounts", "system:serviceaccounts:team-a", "system:authenticated"}}); err != nil {
		return nil, err
	}
	return a, nil
}

// createAgentPod creates pod, retrying while admission refuses it for
// want of its parameters: the policy epoch ConfigMap the manager writes in
// team-a, and the hostd parameters, reach the API server's admission
// plugins some moments after the Workspace is Ready.
func (d *demo) createAgentPod(ctx context.Context, pod *corev1.Pod) error {
	start := time.Now()
	deadline := start.Add(90 * time.Second)
	for tries := 1; ; tries++ {
		err := d.client.Create(ctx, pod.DeepCopy())
		if err == nil {
			if tries > 1 {
				fmt.Fprintf(d.out, "(admission admitted it after %s, once the manager's parameters reached it)\n", time.Since(start).Round(100*time.Millisecond))
			}
			return d.client.Get(ctx, client.ObjectKeyFromObject(pod), pod)
		}
		// Refusals for want of a parameter ("no params found", "the hostd
		// parameters") pass; any other is the demo's failure.
		if !strings.Contains(err.Error(), "param") || time.Now().After(deadline) {
			return fmt.Errorf("creating the agent pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func initContainerNames(pod *corev1.Pod) string {
	var names []string
	for _, c := range pod.Spec.InitContainers {
		names = append(names, c.Name)
	}
	if len(names) == 0 {
		return "nothing"
	}
	return strings.Join(names, ", ")
}

// approveAsk runs the whole ask: the headless call waits, its Approval
// appears, the requester is refused, alice approves, the call is allowed.
func (d *demo) approveAsk(ctx context.Context, base string, a *approvals, res *Result) error {
	call := exthost.ToolCall{ID: "call-5", Name: "bash", Arguments: map[string]any{"command": "terraform apply -target=module.db"}}
	body, err := json.Marshal(hostd.CallRequest{Call: call, Headless: true})
	if err != nil {
		return err
	}
	d.step("A headless agent (no user to ask) calls bash: POST /v1/before %s", body)
	answers := make(chan beforeAnswer, 1)
	go func() { answers <- d.beforeQuiet(ctx, base, body) }()
	apv, err := d.waitApproval(ctx, ledger.Digest(call.Arguments), answers)
	if err != nil {
		return err
	}
	res.ApprovalName = apv.Name
	fmt.Fprintf(d.out, "the call waits; hostd created Approval %s/%s as the pod's ServiceAccount:\n", apv.Namespace, apv.Name)
	if err := d.printApprovals(ctx); err != nil {
		return err
	}

	d.step("The agent's own identity tries to approve it: loadout approve -n %s %s (as %s, even in %s)", apv.Namespace, apv.Name, requester, approverGroup)
	out, err := d.cli(ctx, "approve", "-n", apv.Namespace, apv.Name, "--kubeconfig", a.requesterKubeconfig)
	if err == nil {
		return fmt.Errorf("the requester approved its own ask; admission should refuse it:\n%s", out)
	}
	if !strings.Contains(out, "asked for it and may not decide it") {
		return fmt.Errorf("the requester's loadout approve failed, but not by admission's rule: %w\n%s", err, out)
	}
	res.RequesterRefused = out

	d.step("%s (%s) approves it: loadout approve -n %s %s", approverName, approverGroup, apv.Namespace, apv.Name)
	if out, err = d.cli(ctx, "approve", "-n", apv.Namespace, apv.Name, "--kubeconfig", a.alice); err != nil {
		return fmt.Errorf("loadout approve as %s: %w\n%s", approverName, err, out)
	}
	got, err := d.awaitDecision(ctx, base, body, answers)
	if err != nil {
		return err
	}
	res.Approved = got.resp
	d.step("hostd's answer to the waiting call")
	fmt.Fprintf(d.out, "200 OK %s\n", got.raw)
	if !got.resp.Allowed || got.resp.Arguments != nil {
		return fmt.Errorf("after the approval hostd answered %s, want allowed exactly as asked", got.raw)
	}
	fmt.Fprintf(d.out, "Allowed, exactly as asked and once: the same call again would ask again.\n")
	return d.printApprovals(ctx)
}

// beforeAnswer is hostd's answer to a call that may wait on an Approval.
type beforeAnswer struct {
	resp hostd.BeforeResponse
	raw  string
	err  error
}

// waiting says the call's wait ran out while its Approval is pending.
func (b beforeAnswer) waiting() bool {
	return b.err == nil && !b.resp.Allowed && b.resp.Result != nil && strings.Contains(textOf(*b.resp.Result), "waiting for approval")
}

func (d *demo) beforeQuiet(ctx context.Context, base string, body []byte) beforeAnswer {
	var b beforeAnswer
	raw, err := doJSON(ctx, base+"/v1/before", body, &b.resp)
	b.raw, b.err = strings.TrimSpace(string(raw)), err
	return b
}

// waitApproval returns the Approval for the call's arguments once hostd
// created it; the call's answer arriving first (a denial) fails the demo.
func (d *demo) waitApproval(ctx context.Context, digest string, answers <-chan beforeAnswer) (*v1alpha1.Approval, error) {
	deadline := time.Now().Add(15 * time.Second)
	for {
		var list v1alpha1.ApprovalList
		if err := d.client.List(ctx, &list, client.InNamespace(sampleWorkspace.Namespace)); err != nil {
			return nil, err
		}
		for i := range list.Items {
			if list.Items[i].Spec.Call.ArgumentsDigest == digest {
				return &list.Items[i], nil
			}
		}
		select {
		case got := <-answers:
			if got.err != nil {
				return nil, fmt.Errorf("asking hostd about terraform apply: %w", got.err)
			}
			return nil, fmt.Errorf("hostd answered before any Approval appeared: %s", got.raw)
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("no Approval appeared in %s for the terraform apply call (hostd log: %s)", sampleWorkspace.Namespace, filepath.Join(d.workDir, "hostd.log"))
		}
	}
}

// awaitDecision takes the waiting call's answer, asking again while its
// wait runs out, as an agent does.
func (d *demo) awaitDecision(ctx context.Context, base string, body []byte, answers chan beforeAnswer) (beforeAnswer, error) {
	for range 5 {
		got := <-answers
		if got.err != nil {
			return got, got.err
		}
		if !got.waiting() {
			return got, nil
		}
		go func() { answers <- d.beforeQuiet(ctx, base, body) }()
	}
	return beforeAnswer{}, fmt.Errorf("the approved call was still waiting after 5 asks")
}

// printApprovals prints the Approvals as kubectl get approvals does.
func (d *demo) printApprovals(ctx context.Context) error {
	fmt.Fprintln(d.out, "$ kubectl get approvals -A -o wide")
	return printResourceTable(ctx, d.cfg, d.out, v1alpha1.GroupVersion.String(), "approvals")
}
