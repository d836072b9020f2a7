package approvals

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/internal/kubescheme"
	"github.com/loadout-dev/loadout/internal/ledger"
	"github.com/loadout-dev/loadout/internal/test/testenv"
	"github.com/loadout-dev/loadout/test/agents/agenttest"
)

const (
	ns        = "team-a"
	approvers = "platform:approvers"
	requester = "system:serviceaccount:team-a:agent"
)

// The platform's guard: terraform apply asks, and the ask goes to the
// cluster's approvers when the agent is headless; terraform destroy asks
// with an Approval that expires after 10 seconds.
// trustedNamespaces are the platform and tenant namespaces of this suite's
// manifests, both trusted.
const trustedNamespaces = `apiVersion: v1
kind: Namespace
metadata: {name: loadout-system, labels: {loadout.dev/trust: trusted}}
---
apiVersion: v1
kind: Namespace
metadata: {name: team-a, labels: {loadout.dev/trust: trusted}}
---
`

const manifests = trustedNamespaces + `apiVersion: loadout.dev/v1alpha1
kind: Extension
metadata: {name: prod-guard, namespace: loadout-system}
spec:
  hooks:
    - name: apply-needs-approval
      event: BeforeToolCall
      match: {tools: [shell]}
      cel:
        expression: "call.arguments.command.startsWith('terraform apply') ? {'ask': true, 'message': 'terraform apply in prod needs a second person'} : {}"
      approval: {approverGroups: ["platform:approvers"], route: Headless, waitSeconds: 2, expirySeconds: 600}
    - name: destroy-needs-approval
      event: BeforeToolCall
      match: {tools: [shell]}
      cel:
        expression: "call.arguments.command.startsWith('terraform destroy') ? {'ask': true, 'message': 'terraform destroy?'} : {}"
      approval: {approverGroups: ["platform:approvers"], route: Cluster, waitSeconds: 1, expirySeconds: 10}
---
apiVersion: loadout.dev/v1alpha1
kind: Workspace
metadata: {name: dev, namespace: team-a}
spec: {}
`

type cluster struct {
	cfg       *rest.Config
	env       *envtest.Environment
	admin     client.Client
	cs        *kubernetes.Clientset
	hostdArgs []string
	alice     string // alice's kubeconfig: in platform:approvers
	podUID    types.UID
}

// TestApprovals_HeadlessAskWaitsForAnApproverAndRunsExactlyAsAsked is the
// whole path of an ask the platform sends to the cluster (rule R-APV-1 to
// R-APV-4, docs/rules.md).
func TestApprovals_HeadlessAskWaitsForAnApproverAndRunsExactlyAsAsked(t *testing.T) {
	c := startCluster(t)
	ledgerFile := filepath.Join(t.TempDir(), "ledger.jsonl")
	data := agenttest.PreviewSamples(t, writeManifests(t))
	h := agenttest.StartHostd(t, data, append(c.hostdArgs, "--ledger-file", ledgerFile)...)
	apply := call("1", "terraform apply -target=module.db")

	// A headless agent's call waits; hostd names its Approval as the pod's
	// identity.
	pending := make(chan beforeAnswer, 1)
	go func() { pending <- before(t, h.URL, apply, true) }()
	a := c.waitApproval(t, func(a *v1alpha1.Approval) bool { return a.Spec.Call.ArgumentsDigest == ledger.Digest(apply.Arguments) })
	if a.Spec.Call.Tool != "bash" || a.Spec.Hook.Name != "apply-needs-approval" || a.Spec.Hook.Question != "terraform apply in prod needs a second person" ||
		a.Spec.Requester.Pod != "agent-0" || a.Spec.Requester.ServiceAccount != "agent" || a.Spec.Requester.User != requester ||
		a.Spec.Workspace != "team-a/dev" || strings.Join(a.Spec.ApproverGroups, ",") != approvers || a.Status.Decision != v1alpha1.ApprovalPending {
		t.Fatalf("Approval = %+v", a)
	}
	// Owned by the pod: the garbage collector deletes a pod's Approvals
	// with it (hostd may not delete them).
	if refs := a.OwnerReferences; len(refs) != 1 || refs[0].Kind != "Pod" || refs[0].Name != "agent-0" || refs[0].UID != c.podUID {
		t.Errorf("the Approval's owners = %+v, want the pod agent-0 (%s)", refs, c.podUID)
	}
	var args map[string]any
	if err := json.Unmarshal(a.Spec.Call.Arguments.Raw, &args); err != nil || args["command"] != "terraform apply -target=module.db" {
		t.Errorf("the Approval's arguments = %s, want the call's", a.Spec.Call.Arguments.Raw)
	}

	// R-APV-2: the requester cannot decide, even in the approver group; a
	// non-member cannot; nobody changes the request.
	asRequester := c.impersonate(t, requester, approvers, "system:serviceaccounts", "system:serviceaccounts:team-a")
	mustBeRefused(t, "the requester approves", decideAs(asRequester, a, v1alpha1.ApprovalApproved, requester), "asked for it and may not decide it")
	asBob := c.impersonate(t, "bob", "devs")
	mustBeRefused(t, "a non-member approves", decideAs(asBob, a, v1alpha1.ApprovalApproved, "bob"), "only members of platform:approvers decide it")
	asAlice := c.impersonate(t, "alice", approvers)
	mustBeRefused(t, "an approver writes someone else's name", decideAs(asAlice, a, v1alpha1.ApprovalApproved, "carol"), "status.decidedBy must be the deciding identity")
	changed := a.DeepCopy()
	changed.Spec.Call.Arguments.Raw = []byte(`{"command":"terraform apply -auto-approve"}`)
	mustBeRefused(t, "the request is changed", c.admin.Update(context.Background(), changed), "spec is the request and never changes")
	mustBeRefused(t, "an Approval forged by someone else", c.admin.Create(context.Background(), forged()), "only a pod's hostd asks, as itself")

	// Still waiting: nothing decided it.
	select {
	case got := <-pending:
		if got.Allowed {
			t.Fatalf("the call was allowed before any decision: %+v", got)
		}
		// The wait (2 s) ran out: the same call asked again waits on the
		// same Approval.
		testenv.MustContain(t, "a wait that ran out", got.text(), "waiting for approval "+a.Name)
		go func() { pending <- before(t, h.URL, apply, true) }()
	default:
	}

	// R-APV-3: an approver approves with `loadout approve`; the call runs
	// exactly as asked.
	out := c.loadout(t, c.alice, "approve", "-n", ns, a.Name)
	testenv.MustContain(t, "loadout approve", out, "Approved by alice", "terraform apply -target=module.db")
	got := waitAllowed(t, h.URL, apply, pending)
	if !got.Allowed || got.Arguments != nil {
		t.Fatalf("after the approval: %+v, want allowed as asked", got)
	}

	// R-APV-4: the Approval is spent; the same call asks again.
	again := before(t, h.URL, apply, true)
	if again.Allowed {
		t.Fatal("a spent Approval allowed a second call")
	}
	second := c.waitApproval(t, func(x *v1alpha1.Approval) bool {
		return x.Name != a.Name && x.Spec.Call.ArgumentsDigest == a.Spec.Call.ArgumentsDigest
	})
	testenv.MustContain(t, "the second call", again.text(), "waiting for approval "+second.Name)
	out = c.loadout(t, c.alice, "deny", "-n", ns, second.Name, "--reason", "not during the freeze")
	testenv.MustContain(t, "loadout deny", out, "Denied by alice")
	denied := before(t, h.URL, apply, true)
	testenv.MustContain(t, "a denied call", denied.text(), "approval "+second.Name+" was denied by alice: not during the freeze")
	if denied.Allowed {
		t.Fatal("a denied Approval allowed the call")
	}
	if _, err := exec.Command(agenttest.Loadout(t), "approve", "--kubeconfig", c.alice, "-n", ns, second.Name).CombinedOutput(); err == nil {
		t.Error("loadout approve changed a decided Approval")
	}

	// A changed call is not the approved one: approving the call with
	// other arguments leaves this one waiting.
	other := call("2", "terraform apply -auto-approve")
	pendingOther := before(t, h.URL, other, true)
	otherApproval := c.waitApproval(t, func(x *v1alpha1.Approval) bool { return x.Spec.Call.ArgumentsDigest == ledger.Digest(other.Arguments) })
	c.loadout(t, c.alice, "approve", "-n", ns, otherApproval.Name)
	if pendingOther.Allowed {
		t.Fatal("a call with other arguments was allowed before its own approval")
	}
	changedCall := call("3", "terraform apply -auto-approve -replace=db")
	if got := before(t, h.URL, changedCall, true); got.Allowed {
		t.Fatalf("a changed call ran on another call's approval: %+v", got)
	}

	// R-APV-4: an Approval decided after it expired is never honoured.
	destroy := call("4", "terraform destroy")
	first := before(t, h.URL, destroy, false) // route Cluster: asked even with a user
	expiring := c.waitApproval(t, func(x *v1alpha1.Approval) bool {
		return x.Spec.Call.ArgumentsDigest == ledger.Digest(destroy.Arguments)
	})
	testenv.MustContain(t, "terraform destroy", first.text(), "waiting for approval "+expiring.Name)
	time.Sleep(time.Until(expiring.Spec.ExpiresAt.Time) + time.Second)
	if err := decideAs(asAlice, expiring, v1alpha1.ApprovalApproved, "alice"); err != nil {
		t.Fatal(err)
	}
	late := before(t, h.URL, destroy, false)
	if late.Allowed || strings.Contains(late.text(), expiring.Name) {
		t.Fatalf("after an expired Approval was approved: %+v, want a new Approval", late)
	}

	// R-APV-4: a hostd restarted while it waits blocks; its successor does
	// not honour its predecessor's Approval.
	restart := call("5", "terraform apply -target=module.cache")
	cut := make(chan beforeAnswer, 1)
	go func() { cut <- beforeOrError(h.URL, restart, true) }()
	orphan := c.waitApproval(t, func(x *v1alpha1.Approval) bool {
		return x.Spec.Call.ArgumentsDigest == ledger.Digest(restart.Arguments)
	})
	h.Stop()
	if got := <-cut; got.Allowed {
		t.Fatalf("the call of a stopped hostd was allowed: %+v", got)
	}
	c.loadout(t, c.alice, "approve", "-n", ns, orphan.Name)
	h2 := agenttest.StartHostd(t, data, append(c.hostdArgs, "--ledger-file", ledgerFile)...)
	after := before(t, h2.URL, restart, true)
	if after.Allowed || strings.Contains(after.text(), orphan.Name) {
		t.Fatalf("a restarted hostd honoured its predecessor's Approval: %+v", after)
	}

	// The ledger holds every verdict with its Approval.
	raw, err := os.ReadFile(ledgerFile)
	if err != nil {
		t.Fatal(err)
	}
	testenv.MustContain(t, "the ledger", string(raw), `"approval":{"name":"`+a.Name+`","decision":"Approved","decidedBy":"alice"}`,
		`"approval":{"name":"`+second.Name+`","decision":"Denied","decidedBy":"alice"}`)
	if _, brk, err := ledger.Verify(bytes.NewReader(raw)); err != nil || brk != nil {
		t.Fatalf("ledger: %v %v", brk, err)
	}
}

func startCluster(t *testing.T) *cluster {
	t.Helper()
	env, cfg, err := testenv.Start()
	if errors.Is(err, testenv.ErrNoAssets) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	c := &cluster{cfg: cfg, env: env}
	if c.admin, err = client.New(cfg, client.Options{Scheme: kubescheme.New()}); err != nil {
		t.Fatal(err)
	}
	if c.cs, err = kubernetes.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, f := range []string{"config/rbac/approvals_roles.yaml", "config/policy/approval_policy.yaml"} {
		c.applyFile(t, filepath.Join(testenv.RepoRoot(), f))
	}
	c.create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	c.create(t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "agent"}})
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "agent-0", Labels: map[string]string{"loadout.dev/workspace": "dev"}},
		Spec: corev1.PodSpec{ServiceAccountName: "agent", AutomountServiceAccountToken: ptr.To(false),
			Containers: []corev1.Container{{Name: "agent", Image: "agent:dev"}}}}
	c.create(t, pod)
	c.podUID = pod.UID
	// What the chart grants: hostd's role in team-a; the approver role to
	// the approver group, and to bob (RBAC lets him, admission does not).
	c.create(t, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "loadout-hostd-approvals"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "loadout-hostd-approvals"},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "Group", Name: "system:serviceaccounts:" + ns}}})
	c.create(t, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "loadout-approver"},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "loadout-approver"},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "Group", Name: approvers}, {APIGroup: rbacv1.GroupName, Kind: "User", Name: "bob"},
			{APIGroup: rbacv1.GroupName, Kind: "User", Name: requester}}})

	// hostd's identity: the token the kubelet projects for the API server,
	// bound to the pod.
	dir := t.TempDir()
	token, ca := filepath.Join(dir, "api-token"), filepath.Join(dir, "ca.crt")
	if err := os.WriteFile(token, []byte(testenv.Token(t, c.cs, ns, "agent", pod)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ca, cfg.CAData, 0o600); err != nil {
		t.Fatal(err)
	}
	c.hostdArgs = []string{"--approvals-token-file", token, "--approvals-ca-file", ca, "--approvals-server", strings.TrimSuffix(cfg.Host, "/")}
	alice, err := env.AddUser(envtest.User{Name: "alice", Groups: []string{approvers}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.alice = testenv.WriteKubeconfig(t, alice)
	// The policy applies once the API server has loaded it.
	testenv.Eventually(t, 30*time.Second, func() error {
		err := c.admin.Create(ctx, forged(), client.DryRunAll)
		if apierrors.IsForbidden(err) || apierrors.IsInvalid(err) {
			return nil
		}
		return fmt.Errorf("loadout-approvals is not enforced yet: %v", err)
	})
	return c
}

func (c *cluster) create(t *testing.T, o client.Object) {
	t.Helper()
	if err := c.admin.Create(context.Background(), o); err != nil {
		t.Fatal(err)
	}
}

func (c *cluster) applyFile(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec := utilyaml.NewYAMLOrJSONDecoder(f, 4096)
	for {
		var u unstructured.Unstructured
		if err := dec.Decode(&u.Object); err != nil {
			if err.Error() == "EOF" {
				return
			}
			t.Fatalf("%s: %v", path, err)
		}
		if len(u.Object) == 0 {
			continue
		}
		c.create(t, &u)
	}
}

func (c *cluster) impersonate(t *testing.T, user string, groups ...string) client.Client {
	t.Helper()
	cfg := rest.CopyConfig(c.cfg)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: append(groups, "system:authenticated")}
	cl, err := client.New(cfg, client.Options{Scheme: kubescheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// waitApproval returns the Approval of team-a that match accepts, once one exists.
func (c *cluster) waitApproval(t *testing.T, match func(*v1alpha1.Approval) bool) *v1alpha1.Approval {
	t.Helper()
	var found *v1alpha1.Approval
	testenv.Eventually(t, 30*time.Second, func() error {
		var list v1alpha1.ApprovalList
		if err := c.admin.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
			return err
		}
		for i := range list.Items {
			if match(&list.Items[i]) {
				found = &list.Items[i]
				return nil
			}
		}
		return fmt.Errorf("no matching Approval among %d", len(list.Items))
	})
	return found
}

// loadout runs the CLI with kubeconfig and returns its output.
func (c *cluster) loadout(t *testing.T, kubeconfig string, args ...string) string {
	t.Helper()
	cmd := exec.Command(agenttest.Loadout(t), append(args, "--kubeconfig", kubeconfig)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("loadout %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func decideAs(cl client.Client, a *v1alpha1.Approval, d v1alpha1.ApprovalDecision, decidedBy string) error {
	patch, _ := json.Marshal(map[string]any{"status": map[string]any{"decision": d, "decidedBy": decidedBy}})
	return cl.Status().Patch(context.Background(), a.DeepCopy(), client.RawPatch(types.MergePatchType, patch))
}

// forged is an Approval someone other than a pod's hostd creates in its name.
func forged() *v1alpha1.Approval {
	return &v1alpha1.Approval{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "forged-"}, Spec: v1alpha1.ApprovalSpec{
		Workspace: "team-a/dev", Call: v1alpha1.ApprovalCall{Tool: "bash", ArgumentsDigest: ledger.Digest(nil)},
		Hook:           v1alpha1.ApprovalHook{Extension: "prod-guard", Name: "apply-needs-approval"},
		Requester:      v1alpha1.ApprovalRequester{Pod: "agent-0", ServiceAccount: "agent", User: requester},
		ApproverGroups: []string{approvers}, ExpiresAt: metav1.NewTime(time.Now().Add(time.Hour))}}
}

// mustBeRefused fails unless err is admission's refusal naming the wants.
var mustBeRefused = testenv.MustBeRefusedByAdmission

func writeManifests(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "m.yaml"), []byte(manifests), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

type toolCall struct {
	ID        string         `json:"id"`
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments"`
}

func call(id, command string) toolCall {
	return toolCall{ID: id, Name: "bash", Arguments: map[string]any{"command": command}}
}

type beforeAnswer struct {
	Allowed   bool           `json:"allowed"`
	Arguments map[string]any `json:"arguments"`
	Result    *struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	} `json:"result"`
	err error
}

func (b beforeAnswer) text() string {
	if b.err != nil {
		return b.err.Error()
	}
	if b.Result == nil || len(b.Result.Content) == 0 {
		return ""
	}
	return b.Result.Content[0].Text
}

func beforeOrError(url string, c toolCall, headless bool) beforeAnswer {
	body, _ := json.Marshal(map[string]any{"call": c, "headless": headless, "acceptArguments": true})
	resp, err := http.Post(url+"/v1/before", "application/json", bytes.NewReader(body))
	if err != nil {
		return beforeAnswer{err: err}
	}
	defer resp.Body.Close()
	var out beforeAnswer
	if resp.StatusCode != http.StatusOK {
		return beforeAnswer{err: fmt.Errorf("status %d", resp.StatusCode)}
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return beforeAnswer{err: err}
	}
	return out
}

func before(t *testing.T, url string, c toolCall, headless bool) beforeAnswer {
	t.Helper()
	out := beforeOrError(url, c, headless)
	if out.err != nil {
		t.Fatalf("POST /v1/before %s: %v", c.ID, out.err)
	}
	return out
}

// waitAllowed takes the pending answer, asking again while the wait runs
// out, until the decision arrives.
func waitAllowed(t *testing.T, url string, c toolCall, pending chan beforeAnswer) beforeAnswer {
	t.Helper()
	for i := 0; i < 30; i++ {
		got := <-pending
		if got.Allowed || !strings.Contains(got.text(), "waiting for approval") {
			return got
		}
		go func() { pending <- beforeOrError(url, c, true) }()
	}
	t.Fatal("the call never got its decision")
	return beforeAnswer{}
}
