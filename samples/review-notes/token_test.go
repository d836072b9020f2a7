package main

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/loadout-dev/loadout/internal/agentcmd"
	"github.com/loadout-dev/loadout/internal/kubescheme"
	"github.com/loadout-dev/loadout/internal/sources"
	"github.com/loadout-dev/loadout/internal/test/manifests"
	"github.com/loadout-dev/loadout/internal/test/testenv"
	"github.com/loadout-dev/loadout/internal/test/testnet"
	"github.com/loadout-dev/loadout/internal/toolauth"
	"github.com/loadout-dev/loadout/samples/review-notes/notes"
)

// A real `loadout hostd --service-token-file` calls a real
// `review-notes --verify-token` running as the sample's
// ServiceAccount with the sample's RBAC (nothing more), on envtest: the
// call hostd makes with its pod's projected token (audience
// loadout.dev/hostd) is recorded and names the pod and Workspace; a call
// without a token is refused 401, one with a token of another audience 401,
// and one from another namespace's agent pod 403.
func TestReviewNotes_VerifiesHostdsTokenWithTheSamplesRBAC(t *testing.T) {
	cfg := testenv.StartFor(t)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: kubescheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	pods := testenv.AgentPods(t, cs, []string{"team-a", "team-b"}, map[string]map[string]string{"agent": {toolauth.WorkspaceLabel: "dev"}})
	// The sample's ServiceAccount and RBAC for review-notes, as shipped.
	all, err := manifests.Read(filepath.Join(testenv.RepoRoot(), "config", "samples"))
	if err != nil {
		t.Fatal(err)
	}
	var rbac []manifests.Manifest
	for _, m := range all {
		if m.Object.GetLabels()["app.kubernetes.io/name"] == "review-notes" && m.Object.GetKind() != "Service" && m.Object.GetKind() != "Deployment" {
			rbac = append(rbac, m)
		}
	}
	if len(rbac) < 5 {
		t.Fatalf("the sample has %d ServiceAccount and RBAC objects for review-notes, want 5", len(rbac))
	}
	if err := manifests.Apply(ctx, c, rbac); err != nil {
		t.Fatal(err)
	}

	// A token of ns/sa for aud ("" the API server's), bound to pod ns/pod
	// unless pod is "".
	token := func(ns, sa, pod, aud string) string {
		t.Helper()
		var bound *corev1.Pod
		if pod != "" {
			bound = pods[ns+"/"+pod]
		}
		var audiences []string
		if aud != "" {
			audiences = []string{aud}
		}
		return testenv.Token(t, cs, ns, sa, bound, audiences...)
	}

	// The Service's own credential: its ServiceAccount's token for the API
	// server, as a pod's would be.
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["review-notes"] = &clientcmdapi.AuthInfo{Token: token("team-a", "review-notes", "", "")}
	kc.Contexts["review-notes"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "review-notes"}
	kc.CurrentContext = "review-notes"
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, kubeconfig); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", kubeconfig)

	toolAddr := testnet.FreeAddr(t)
	testenv.StartCommand(t, newRootCommand(), "--addr", toolAddr, "--verify-token", "--token-namespace", "team-a")
	testnet.WaitStatus(t, "http://"+toolAddr+"/healthz", http.StatusOK)

	// hostd of team-a/agent, with the token the kubelet would project.
	tokenFile := testenv.TempFile(t, "token", []byte(token("team-a", "agent", "agent", toolauth.Audience)), 0o600)
	hostdAddr := testnet.FreeAddr(t)
	testenv.StartCommand(t, agentcmd.NewHostdCommand(sources.LoadFiller), "--allow-unsigned-context", "--context-dir", toolContextDir(t, "http://127.0.0.1:1/run"), "--addr", hostdAddr,
		"--service-token-file", tokenFile, "--service-address", "review-notes.team-a.svc:8080="+toolAddr)
	testnet.WaitStatus(t, "http://"+hostdAddr+"/readyz", http.StatusOK)
	if got := runHostdTool(t, hostdAddr, "review_note", "through hostd"); got != "note 1 recorded" {
		t.Fatalf("hostd's call: %q", got)
	}

	toolNotes := "http://" + toolAddr + "/notes"
	body := `{"apiVersion":"loadout.dev/v1alpha1","kind":"ToolInvocation","tool":"review_note","call":{"id":"forged","name":"review_note","arguments":{"text":"no hook saw this"}}}`
	for _, tc := range []struct {
		what, token string
		status      int
		reason      string
	}{
		{"without a token", "", http.StatusUnauthorized, "no bearer token"},
		{"with a token of another audience", token("team-a", "agent", "agent", "https://kubernetes.default.svc"), http.StatusUnauthorized, "audience loadout.dev/hostd"},
		{"from another namespace's agent pod", token("team-b", "agent", "agent", toolauth.Audience), http.StatusForbidden, "namespace team-b"},
	} {
		status, refusal := testnet.PostBearer(t, toolNotes, body, tc.token)
		if status != tc.status || !strings.Contains(refusal, tc.reason) {
			t.Errorf("a call %s: %d %q, want %d naming %q", tc.what, status, refusal, tc.status, tc.reason)
		}
	}

	_, listed := testnet.Get(t, toolNotes)
	var list notes.List
	if err := json.Unmarshal([]byte(listed), &list); err != nil || len(list.Notes) != 1 || list.Notes[0].Text != "through hostd" ||
		list.Notes[0].From != "team-a/agent (workspace dev)" {
		t.Fatalf("recorded notes %+v (%v), want only hostd's call, from team-a/agent", list.Notes, err)
	}
}
