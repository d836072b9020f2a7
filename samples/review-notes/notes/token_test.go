package notes

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/loadout-dev/loadout/internal/exthost"
	"github.com/loadout-dev/loadout/internal/outbound"
	"github.com/loadout-dev/loadout/internal/test/testenv"
	"github.com/loadout-dev/loadout/internal/test/testnet"
	"github.com/loadout-dev/loadout/internal/toolauth"
)

// tokenCluster is an envtest API server with, in each of team-a and team-b,
// the ServiceAccount agent and its pods: "agent" bound to Workspace dev (the
// loadout.dev/workspace label) and "plain", which no hostd governs.
type tokenCluster struct {
	cs   kubernetes.Interface
	pods map[string]*corev1.Pod // "ns/name"
}

func startTokenCluster(t *testing.T) *tokenCluster {
	t.Helper()
	cs, err := kubernetes.NewForConfig(testenv.StartFor(t))
	if err != nil {
		t.Fatal(err)
	}
	return &tokenCluster{cs: cs, pods: testenv.AgentPods(t, cs, []string{"team-a", "team-b"},
		map[string]map[string]string{"agent": {toolauth.WorkspaceLabel: "dev"}, "plain": nil})}
}

// token is what the kubelet projects for pod ns/pod (bound to the pod) with
// audience aud; pod "" requests an unbound token of the ServiceAccount.
func (c *tokenCluster) token(t *testing.T, ns, pod, aud string) string {
	t.Helper()
	var bound *corev1.Pod
	if pod != "" {
		bound = c.pods[ns+"/"+pod]
	}
	return testenv.Token(t, c.cs, ns, "agent", bound, aud)
}

// TestServer_HostdTokenOnEnvtest: with Tokens set, review-notes records a
// call hostd made with its projected token (audience loadout.dev/hostd, its
// bound pod in team-a) and names the pod and Workspace; it refuses a call
// without a token, with a token of another audience, from another namespace,
// from a pod no hostd governs, and with a token bound to no pod, each with a
// reason. Tokens are the API server's (TokenRequest), checked with a
// TokenReview.
func TestServer_HostdTokenOnEnvtest(t *testing.T) {
	c := startTokenCluster(t)
	v, err := toolauth.New(toolauth.Options{Client: c.cs, Namespaces: []string{"team-a"}})
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Tokens: v}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	body := invocation(t, "looks good", outbound.Audience{Kind: outbound.AudienceTool, Name: ToolName, URL: testURL})

	// hostd: the token file its container mounts, presented by its client.
	tokenFile := testenv.TempFile(t, "token", []byte(c.token(t, "team-a", "agent", toolauth.Audience)), 0o600)
	hostdClient := outbound.New(outbound.Options{ServiceTokenFile: tokenFile})
	resp, err := hostdClient.Do(context.Background(), outbound.Request{Target: outbound.Target{URL: ts.URL + "/notes"}, Body: body,
		Header: http.Header{"Content-Type": {"application/json"}}})
	if err != nil {
		t.Fatalf("hostd's call: %v", err)
	}
	var a exthost.ToolAnswer
	if err := json.Unmarshal(resp.Body, &a); err != nil || a.IsError || a.Content[0].Text != "note 1 recorded" {
		t.Fatalf("hostd's call: %s", resp.Body)
	}
	if n := s.Notes(); len(n) != 1 || n[0].From != "team-a/agent (workspace dev)" {
		t.Fatalf("notes %+v", n)
	}

	refused := []struct {
		name, token string
		status      int
		reason      string
	}{
		{"no token", "", http.StatusUnauthorized, "no bearer token"},
		{"not a token", "not-a-token", http.StatusUnauthorized, "does not accept the token"},
		{"another audience", c.token(t, "team-a", "agent", "https://kubernetes.default.svc"), http.StatusUnauthorized, "audience loadout.dev/hostd"},
		{"another namespace", c.token(t, "team-b", "agent", toolauth.Audience), http.StatusForbidden, "a call from namespace team-b; this Service serves team-a"},
		{"a pod no hostd governs", c.token(t, "team-a", "plain", toolauth.Audience), http.StatusForbidden, "not bound to a Workspace"},
		{"a token bound to no pod", c.token(t, "team-a", "", toolauth.Audience), http.StatusForbidden, "not bound to a pod"},
	}
	for _, tc := range refused {
		status, refusal := testnet.PostBearer(t, ts.URL+"/notes", string(body), tc.token)
		if status != tc.status || !strings.Contains(refusal, tc.reason) {
			t.Errorf("%s: %d %q, want %d and %q", tc.name, status, refusal, tc.status, tc.reason)
		}
		if tc.token != "" && strings.Contains(refusal, tc.token) {
			t.Errorf("%s: the refusal repeats the token", tc.name)
		}
	}
	if n := s.Notes(); len(n) != 1 {
		t.Fatalf("a refused call was recorded: %+v", n)
	}

	// A pod deleted revokes its token at once (the API server checks the
	// bound object), for a verifier that has not cached it.
	fresh, err := toolauth.New(toolauth.Options{Client: c.cs, Namespaces: []string{"team-a"}})
	if err != nil {
		t.Fatal(err)
	}
	tok := c.token(t, "team-a", "agent", toolauth.Audience)
	if err := c.cs.CoreV1().Pods("team-a").Delete(context.Background(), "agent", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := fresh.Verify(context.Background(), tok)
		var te *toolauth.Error
		if errors.As(err, &te) && te.Status == http.StatusUnauthorized {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("token of a deleted pod: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
